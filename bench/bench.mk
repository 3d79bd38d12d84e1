# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmarks (DESIGN §11): built with the rest, run by hand, never by
# `make check` (timings are not assertions); bench/README.md has the
# commands and the tables they printed.
EXTRA_DIST += bench/README.md
dist_noinst_SCRIPTS += bench/tracker-overhead.sh bench/run-overhead.sh bench/ffmpeg-instances.sh bench/soak.sh
# The claimed CPU's noise with and without --isolate (root, live machine).
dist_noinst_SCRIPTS += bench/isolation-noise.sh
# Root's latency under a connection storm against a storm that misses the
# daemon (root).
dist_noinst_SCRIPTS += bench/storm-latency.sh
EXTRA_DIST += bench/benchlib.sh

# Clock, percentiles, medians and a private rtplaced, for every bench; the
# clocks are the daemon's (daemon/clocks.c reads them for everyone).
noinst_LTLIBRARIES += bench/libbench.la
bench_libbench_la_SOURCES = bench/benchlib.h bench/benchlib.c daemon/clocks.h daemon/clocks.c
bench_libbench_la_CPPFLAGS = $(DAEMON_CPPFLAGS)

# cpupri map layouts, writer and reader cost.
noinst_PROGRAMS += bench/map-layouts
bench_map_layouts_SOURCES = bench/map-layouts.c
bench_map_layouts_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_map_layouts_LDADD = bench/libbench.la common/libcommon.la $(PTHREAD_LIBS)

# Query round trip against a bare SEQPACKET echo, on raw epoll and on libevent.
noinst_PROGRAMS += bench/query-latency
bench_query_latency_SOURCES = bench/query-latency.c
bench_query_latency_CPPFLAGS = $(DAEMON_CPPFLAGS)
bench_query_latency_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS) $(LIBEVENT_CFLAGS)
bench_query_latency_LDADD = bench/libbench.la daemon/libdaemoncore.la common/libcommon.la $(LIBEVENT_LIBS) $(PTHREAD_LIBS)

# Placement throughput and quality in simulation: 60 instances x 4 CPUs at
# rt99 on the 480-CPU topology, read from the shared XML.
noinst_PROGRAMS += bench/placement-throughput
bench_placement_throughput_SOURCES = bench/placement-throughput.c
bench_placement_throughput_CPPFLAGS = $(AM_CPPFLAGS) \
	-DBENCH_TOPOLOGY='"$(abs_top_srcdir)/../shared/topologies/2s-240c-480t.xml"'
bench_placement_throughput_LDADD = bench/libbench.la common/libtopohwloc.la common/libcommon.la $(HWLOC_LIBS)

# Holds the tracker loaded for tracker-overhead.sh (root).
noinst_PROGRAMS += bench/tracker-hold
bench_tracker_hold_SOURCES = bench/tracker-hold.c
bench_tracker_hold_CPPFLAGS = $(DAEMON_CPPFLAGS)
bench_tracker_hold_LDADD = daemon/libtracker.la daemon/libdaemoncore.la common/libtopohwloc.la common/libcommon.la

# Records per second to 1 and 16 subscribers, doorbells per record.
noinst_PROGRAMS += bench/records
bench_records_SOURCES = bench/records.c
bench_records_CPPFLAGS = $(DAEMON_CPPFLAGS)
bench_records_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_records_LDADD = bench/libbench.la daemon/libmoves.la daemon/libdaemoncore.la common/libcommon.la $(PTHREAD_LIBS)

# Move latency through rtplaced against bare sched_setaffinity (root, a
# live daemon).
noinst_PROGRAMS += bench/move-latency
bench_move_latency_SOURCES = bench/move-latency.c
bench_move_latency_CPPFLAGS = $(CLIENT_CPPFLAGS)
bench_move_latency_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_move_latency_LDADD = bench/libbench.la client/librtplace.la $(PTHREAD_LIBS)

# BPF programs' run time per event and share of busy CPU time while a
# command runs, through a BPF_ENABLE_STATS descriptor (tracker-overhead.sh).
noinst_PROGRAMS += bench/bpf-stats
bench_bpf_stats_SOURCES = bench/bpf-stats.c
bench_bpf_stats_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
bench_bpf_stats_LDADD = $(LIBBPF_LIBS)

# Claims at scale: one claiming query and every owner's exit with 10 and
# with 10,000 claims (DESIGN §14: neither may grow with the claim count).
noinst_PROGRAMS += bench/claims-scale
bench_claims_scale_SOURCES = bench/claims-scale.c
bench_claims_scale_CPPFLAGS = $(DAEMON_CPPFLAGS)
bench_claims_scale_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
bench_claims_scale_LDADD = bench/libbench.la daemon/libdaemoncore.la common/libcommon.la $(LIBEVENT_LIBS)

# Root's query latency while nobody claims and releases in a loop, two
# daemons side by side (the claims state file's cost).
noinst_PROGRAMS += bench/claims-journal
bench_claims_journal_SOURCES = bench/claims-journal.c
bench_claims_journal_CPPFLAGS = $(DAEMON_CPPFLAGS)
bench_claims_journal_LDADD = bench/libbench.la common/libcommon.la

# CPU time of one sample of the /proc-sampled map, by threads on the
# machine and topology size.
noinst_PROGRAMS += bench/sampler-cost
bench_sampler_cost_SOURCES = bench/sampler-cost.c
bench_sampler_cost_CPPFLAGS = $(DAEMON_CPPFLAGS)
bench_sampler_cost_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_sampler_cost_LDADD = bench/libbench.la daemon/libtracker.la daemon/libdaemoncore.la common/libtopohwloc.la \
	common/libcommon.la $(HWLOC_LIBS) $(PTHREAD_LIBS)

# What reading the kernel's RT environment costs the loop, by CPUs.
noinst_PROGRAMS += bench/kernel-env-cost
bench_kernel_env_cost_SOURCES = bench/kernel-env-cost.c
bench_kernel_env_cost_CPPFLAGS = $(DAEMON_CPPFLAGS)
bench_kernel_env_cost_LDADD = bench/libbench.la daemon/libdaemoncore.la common/libcommon.la

# MakeThreadRealtimeWithPID through rtplaced against Debian's rtkit-daemon,
# each on a private system bus (bench/rtkit-roundtrip.sh, root).
noinst_PROGRAMS += bench/rtkit-roundtrip
bench_rtkit_roundtrip_SOURCES = bench/rtkit-roundtrip.c
bench_rtkit_roundtrip_CFLAGS = $(AM_CFLAGS) $(LIBSYSTEMD_CFLAGS)
bench_rtkit_roundtrip_LDADD = bench/libbench.la $(LIBSYSTEMD_LIBS)
dist_noinst_SCRIPTS += bench/rtkit-roundtrip.sh

# The interrupt shares' sample (/proc/stat read, parse, update) at this
# host's, 480 and 8,192 CPUs.
noinst_PROGRAMS += bench/irqnoise-cost
bench_irqnoise_cost_SOURCES = bench/irqnoise-cost.c
bench_irqnoise_cost_CPPFLAGS = $(DAEMON_CPPFLAGS)
bench_irqnoise_cost_LDADD = bench/libbench.la daemon/libdaemoncore.la common/libcommon.la

# The same interrupt time from the irq and softirq tracepoints, for
# bench/irqnoise-cost.sh to weigh against /proc/stat: a bench-only BPF
# object and its holder (the daemon reads /proc/stat, bench/README.md).
bench/irqtime.bpf.o: $(srcdir)/bench/irqtime.bpf.c $(srcdir)/bench/irqtime-abi.h $(srcdir)/bpf/kernel-types.h
	$(AM_V_at)$(MKDIR_P) bench
	$(AM_V_GEN)$(CLANG) $(TRACKER_BPF_CFLAGS) -I$(top_srcdir)/bench -c $(srcdir)/bench/irqtime.bpf.c -o $@

bench/irqtime.skel.h: bench/irqtime.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bench/irqtime.bpf.o name irqtime_bpf > $@.tmp && mv $@.tmp $@

noinst_PROGRAMS += bench/irqtime-hold
bench_irqtime_hold_SOURCES = bench/irqtime-hold.c bench/irqtime-abi.h
nodist_bench_irqtime_hold_SOURCES = bench/irqtime.skel.h
bench_irqtime_hold_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/bench
bench_irqtime_hold_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
bench_irqtime_hold_LDADD = $(LIBBPF_LIBS)
BUILT_SOURCES += bench/irqtime.skel.h
CLEANFILES += bench/irqtime.bpf.o bench/irqtime.skel.h bench/irqtime.skel.h.tmp
EXTRA_DIST += bench/irqtime.bpf.c bench/irqnoise-cost.sh

# Local reads (rtplace_local_open()) against the socket query, and 32
# threads querying locally at once.
noinst_PROGRAMS += bench/local-query
bench_local_query_SOURCES = bench/local-query.c
bench_local_query_CPPFLAGS = $(CLIENT_CPPFLAGS)
bench_local_query_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_local_query_LDADD = bench/libbench.la client/librtplace.la $(PTHREAD_LIBS)

# A process of many sleeping threads that asks a MANAGE claim for itself
# and times the reply (bench/soak.sh's manage floods).
noinst_PROGRAMS += bench/soak-manage
bench_soak_manage_SOURCES = bench/soak-manage.c
bench_soak_manage_CPPFLAGS = $(CLIENT_CPPFLAGS)
bench_soak_manage_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_soak_manage_LDADD = bench/libbench.la client/librtplace.la $(PTHREAD_LIBS)

# Root's query latency, paced, one line per window (bench/soak.sh's p99
# against its idle baseline).
noinst_PROGRAMS += bench/soak-latency
bench_soak_latency_SOURCES = bench/soak-latency.c
bench_soak_latency_CPPFLAGS = $(CLIENT_CPPFLAGS)
bench_soak_latency_LDADD = bench/libbench.la client/librtplace.la

# Per-CPU RT kernel threads (PREEMPT_RT's ktimers, rcuc, irq threads) in
# the map and in rt40 answers, with their bursts from schedstat (root, a
# live daemon; bench/rt-kthreads.sh runs it in the VM test bed's guests).
noinst_PROGRAMS += bench/rt-kthreads
bench_rt_kthreads_SOURCES = bench/rt-kthreads.c
bench_rt_kthreads_CPPFLAGS = $(CLIENT_CPPFLAGS)
bench_rt_kthreads_LDADD = bench/libbench.la client/librtplace.la
dist_noinst_SCRIPTS += bench/rt-kthreads.sh
