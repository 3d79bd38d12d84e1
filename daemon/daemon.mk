# SPDX-License-Identifier: GPL-2.0-or-later
# rtplaced (DESIGN §8, §10): its convenience libraries (each unit tested or
# benchmarked on its own), the daemon, its units, example configuration and
# manual pages. Daemon sources see daemon/ and bpf/tracker-abi.h
# (DAEMON_CPPFLAGS); only the tracker loader sees the generated skeleton.

# The BPF loader, the skeleton's only includer, the seeding from /proc, and
# the map sampled from /proc where BPF cannot run (one reader for both).
noinst_LTLIBRARIES += daemon/libtracker.la
daemon_libtracker_la_SOURCES = \
	daemon/tracker.h daemon/tracker.c \
	daemon/seed.h daemon/seed.c \
	daemon/sampler.h daemon/sampler.c
nodist_daemon_libtracker_la_SOURCES = bpf/tracker.skel.h
daemon_libtracker_la_CPPFLAGS = $(DAEMON_CPPFLAGS) -I$(top_builddir)/bpf
daemon_libtracker_la_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
daemon_libtracker_la_LIBADD = common/libfile.la $(LIBBPF_LIBS)

# The claims table and its state file, the log, the one reader of /proc
# and the sealed regions of local reads (the tracker's copy of its map is
# one), which every other daemon library uses: link it after them.
noinst_LTLIBRARIES += daemon/libdaemoncore.la
daemon_libdaemoncore_la_SOURCES = \
	daemon/claims.h daemon/claims.c \
	daemon/quota.h daemon/quota.c \
	daemon/rate.h daemon/rate.c \
	daemon/acceptor.h daemon/acceptor.c \
	daemon/claims-state.h daemon/claims-state.c \
	daemon/log.h daemon/log.c \
	daemon/clocks.h daemon/clocks.c \
	daemon/histogram.h daemon/histogram.c \
	daemon/procfs.h daemon/procfs.c \
	daemon/irqnoise.h daemon/irqnoise.c \
	daemon/kernel-env.h daemon/kernel-env.c \
	daemon/snapshot.h daemon/snapshot.c
daemon_libdaemoncore_la_CPPFLAGS = $(DAEMON_CPPFLAGS)
# claims.c watches owners and leases on the daemon's libevent loop.
daemon_libdaemoncore_la_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)

# The daemon's side of moves and records (DESIGN §7): rings and doorbells,
# authorisation, applying moves.
noinst_LTLIBRARIES += daemon/libmoves.la
daemon_libmoves_la_SOURCES = \
	daemon/notify.h daemon/notify.c \
	daemon/auth.h daemon/auth.c \
	daemon/thread-sched.h daemon/thread-sched.c
daemon_libmoves_la_CPPFLAGS = $(DAEMON_CPPFLAGS)

sbin_PROGRAMS += daemon/rtplaced
daemon_rtplaced_SOURCES = \
	daemon/main.c \
	daemon/loop.h daemon/loop.c \
	daemon/server.h daemon/server.c \
	daemon/levels-source.h daemon/levels-source.c \
	daemon/engine.h daemon/engine.c \
	daemon/actors.h daemon/actors.c \
	daemon/dispatch.h daemon/dispatch.c daemon/dispatch-handlers.h \
	daemon/dispatch-claims.c daemon/dispatch-views.c daemon/dispatch-threads.c daemon/dispatch-explain.c \
	daemon/systemd.h daemon/systemd.c \
	daemon/metrics.h daemon/metrics.c
daemon_rtplaced_CPPFLAGS = $(DAEMON_CPPFLAGS)
daemon_rtplaced_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(LIBEVENT_EXTRA_CFLAGS) $(LIBSYSTEMD_CFLAGS)
daemon_rtplaced_LDADD = \
	daemon/libtracker.la daemon/libmoves.la common/libconfig.la daemon/libdaemoncore.la \
	common/libtopohwloc.la common/libcommon.la \
	$(LIBEVENT_EXTRA_LIBS) $(LIBEVENT_LIBS) $(LIBSYSTEMD_LIBS) $(HWLOC_LIBS) $(LIBBPF_LIBS) $(INIH_LIBS) \
	$(PTHREAD_LIBS)

EXTRA_DIST += man/rtplaced.8 man/rtplaced.conf.5

# The example shows every key commented out at its built-in default. It is
# installed beside the real file's place as rtplaced.conf.example, never as
# rtplaced.conf itself, so `make install` cannot overwrite an edited file;
# with no rtplaced.conf at all the daemon runs on the same defaults.
rtplaceconfdir = $(sysconfdir)/rtplace
rtplaceconf_DATA = conf/rtplaced.conf.example
conf/rtplaced.conf.example: conf/rtplaced.conf
	$(AM_V_GEN)$(MKDIR_P) conf && cp $(srcdir)/conf/rtplaced.conf $@
CLEANFILES += conf/rtplaced.conf.example
EXTRA_DIST += conf/rtplaced.conf

systemdsystemunit_DATA = systemd/rtplaced.service systemd/rtplaced.socket
sysusers_DATA = systemd/rtplace.conf
EXTRA_DIST += systemd/rtplaced.service.in systemd/rtplaced.socket systemd/rtplace.sysusers
CLEANFILES += systemd/rtplaced.service systemd/rtplace.conf
systemd/rtplaced.service: systemd/rtplaced.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && sed -e 's|@sbindir[@]|$(sbindir)|g' -e 's|@bindir[@]|$(bindir)|g' \
		$(srcdir)/systemd/rtplaced.service.in > $@
systemd/rtplace.conf: systemd/rtplace.sysusers
	$(AM_V_GEN)$(MKDIR_P) systemd && cp $(srcdir)/systemd/rtplace.sysusers $@
# Makes rtplaced the RealtimeKit service when [rtkit] enable = yes
# (rtplaced.conf(5), [rtkit]).
rtkitdropindir = $(systemdsystemunitdir)/rtkit-daemon.service.d
rtkitdropin_DATA = systemd/rtkit-daemon.service.d/rtplace.conf
EXTRA_DIST += systemd/rtkit-daemon-rtplace.conf.in
CLEANFILES += systemd/rtkit-daemon.service.d/rtplace.conf
systemd/rtkit-daemon.service.d/rtplace.conf: systemd/rtkit-daemon-rtplace.conf.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd/rtkit-daemon.service.d && \
		sed -e 's|@sbindir[@]|$(sbindir)|g' $(srcdir)/systemd/rtkit-daemon-rtplace.conf.in > $@

# CPU hotplug (daemon/hotplug.h): the online list the seed reads and the
# uevents the daemon follows.
daemon_libtracker_la_SOURCES += daemon/hotplug.h daemon/hotplug.c

# MOVE requests (daemon/moves.c), the push policy and the managed
# processes act over the engine, whose choice of a CPU (engine_pick(),
# placement_ctx_pick()) has its unit test in common/. A move refused RT
# names the cpu cgroup without a budget (common/rtbudget.h).
daemon_libmoves_la_LIBADD = common/libfile.la
daemon_rtplaced_SOURCES += \
	daemon/moves.h daemon/moves.c \
	daemon/push.h daemon/push.c \
	daemon/manage.h daemon/manage.c

# Pids a client names, as the daemon's (DESIGN §15): pidfds and PID
# namespaces, read through the one reader of /proc.
daemon_libdaemoncore_la_SOURCES += daemon/pidmap.h daemon/pidmap.c

# org.freedesktop.RealtimeKit1 (DESIGN §18): the rules, pure, in libmoves
# for their unit test; the bus edge (sd-bus on the daemon's loop) in the
# daemon; the system bus policy that lets root own the name (named for
# rtplace: rtkit's package ships org.freedesktop.RealtimeKit1.conf).
daemon_libmoves_la_SOURCES += daemon/rtkit-rules.h daemon/rtkit-rules.c daemon/rtkit-admit.h daemon/rtkit-admit.c
daemon_rtplaced_SOURCES += \
	daemon/rtkit.h daemon/rtkit.c daemon/rtkit-internal.h \
	daemon/rtkit-bus.c daemon/rtkit-caller.c daemon/rtkit-grant.c daemon/rtkit-threads.c daemon/rtkit-watchdog.c
dbussystemddir = $(datadir)/dbus-1/system.d
dbussystemd_DATA = dbus/rtplace-realtimekit.conf
EXTRA_DIST += dbus/rtplace-realtimekit.conf

# Isolation of claimed CPUs: the planner (pure, daemon/isoplan.h) and the
# edge that writes the kernel's files and journals what it changed
# (daemon/isolation.h).
daemon_libdaemoncore_la_SOURCES += daemon/isoplan.h daemon/isoplan.c daemon/isolation.h daemon/isolation.c \
	daemon/irqbalance.h daemon/irqbalance.c
# Under systemd, partitions are transient scopes its manager makes over
# the system bus (sd-bus, in the daemon with libsystemd's other user).
daemon_rtplaced_SOURCES += daemon/isolation-systemd.h daemon/isolation-systemd.c
