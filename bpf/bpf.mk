# The BPF tracker (DESIGN §3): bpf/tracker.bpf.c compiled by clang for the
# BPF target, turned by bpftool into a skeleton header in the build tree
# (never committed), and the loader library, the skeleton's only includer.
# The kernel types come from the hand-written bpf/kernel-types.h (CO-RE), so
# nothing depends on the build host's kernel.
TRACKER_BPF_CFLAGS = -O2 -g -target bpf -mcpu=v3 -Wall -Wextra -Wno-unused-parameter \
	-I$(top_srcdir)/common -I$(top_srcdir)/bpf
TRACKER_BPF_DEPS = $(srcdir)/bpf/tracker.bpf.c $(srcdir)/bpf/tracker.h $(srcdir)/bpf/kernel-types.h \
	$(srcdir)/common/cpupri.h $(srcdir)/common/levels.h

bpf/tracker.bpf.o: $(TRACKER_BPF_DEPS)
	$(AM_V_at)$(MKDIR_P) bpf
	$(AM_V_GEN)$(CLANG) $(TRACKER_BPF_CFLAGS) -c $(srcdir)/bpf/tracker.bpf.c -o $@

bpf/tracker.skel.h: bpf/tracker.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bpf/tracker.bpf.o name tracker_bpf > $@.tmp && mv $@.tmp $@

BUILT_SOURCES += bpf/tracker.skel.h
CLEANFILES += bpf/tracker.bpf.o bpf/tracker.skel.h bpf/tracker.skel.h.tmp
EXTRA_DIST += bpf/tracker.bpf.c bpf/tracker.h bpf/kernel-types.h

# Linked by its users beside common/libcommon.la (and common/libtopohwloc.la
# for a live topology).
noinst_LTLIBRARIES += daemon/libtracker.la
daemon_libtracker_la_SOURCES = \
	daemon/tracker.h daemon/tracker.c \
	daemon/seed.h daemon/seed.c
nodist_daemon_libtracker_la_SOURCES = bpf/tracker.skel.h
daemon_libtracker_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
daemon_libtracker_la_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
daemon_libtracker_la_LIBADD = $(LIBBPF_LIBS)

# Real kernel, root: skipped (77) otherwise.
check_PROGRAMS += tests/integration/test-tracker
tests_integration_test_tracker_SOURCES = tests/integration/test-tracker.c
tests_integration_test_tracker_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon -I$(top_srcdir)/tests/lib
tests_integration_test_tracker_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_tracker_LDADD = daemon/libtracker.la common/libtopohwloc.la common/libcommon.la \
	tests/lib/libtest.la $(PTHREAD_LIBS)
TESTS += tests/integration/test-tracker

# Tracking overhead (DESIGN §11): run by hand as root, never by make check.
noinst_PROGRAMS += bench/tracker-hold
bench_tracker_hold_SOURCES = bench/tracker-hold.c
bench_tracker_hold_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
bench_tracker_hold_LDADD = daemon/libtracker.la common/libtopohwloc.la common/libcommon.la
dist_noinst_SCRIPTS += bench/tracker-overhead.sh

# CPU hotplug (daemon/hotplug.h): the online list the seed reads and the
# uevents the daemon follows; pure parts unit tested without root.
daemon_libtracker_la_SOURCES += daemon/hotplug.h daemon/hotplug.c

check_PROGRAMS += tests/unit/test-hotplug
tests_unit_test_hotplug_SOURCES = tests/unit/test-hotplug.c
tests_unit_test_hotplug_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
tests_unit_test_hotplug_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hotplug_LDADD = daemon/libtracker.la $(UNIT_LDADD)
TESTS += tests/unit/test-hotplug
