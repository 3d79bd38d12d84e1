# rtplaced itself: the daemon's files, the units and its manual page.
sbin_PROGRAMS += daemon/rtplaced
daemon_rtplaced_SOURCES = \
	daemon/main.c \
	daemon/loop.h daemon/loop.c \
	daemon/server.h daemon/server.c \
	daemon/service.h daemon/service.c \
	daemon/sdnotify.h daemon/sdnotify.c \
	daemon/moves.h daemon/moves.c
daemon_rtplaced_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
daemon_rtplaced_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(LIBSYSTEMD_CFLAGS)
daemon_rtplaced_LDADD = \
	daemon/libtracker.la daemon/libmoves.la daemon/libconfig.la daemon/libdaemoncore.la \
	common/libtopohwloc.la common/libcommon.la \
	$(LIBEVENT_LIBS) $(LIBSYSTEMD_LIBS) $(HWLOC_LIBS) $(LIBBPF_LIBS) $(INIH_LIBS)

EXTRA_DIST += man/rtplaced.8

systemdsystemunit_DATA = systemd/rtplaced.service systemd/rtplaced.socket
sysusers_DATA = systemd/rtplace.conf
EXTRA_DIST += systemd/rtplaced.service.in systemd/rtplaced.socket systemd/rtplace.sysusers
CLEANFILES += systemd/rtplaced.service systemd/rtplace.conf
systemd/rtplaced.service: systemd/rtplaced.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && sed -e 's|@sbindir[@]|$(sbindir)|g' $(srcdir)/systemd/rtplaced.service.in > $@
systemd/rtplace.conf: systemd/rtplace.sysusers
	$(AM_V_GEN)$(MKDIR_P) systemd && cp $(srcdir)/systemd/rtplace.sysusers $@

# Integration tests against the real daemon (tests/lib/harness.c runs it).
check_LTLIBRARIES += tests/lib/libharness.la
tests_lib_libharness_la_SOURCES = tests/lib/harness.h tests/lib/harness.c

check_PROGRAMS += tests/integration/test-daemon
tests_integration_test_daemon_SOURCES = tests/integration/test-daemon.c
tests_integration_test_daemon_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_daemon_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-daemon

TESTS += tests/integration/test-units.sh
EXTRA_DIST += tests/integration/test-units.sh

check_PROGRAMS += tests/integration/test-daemon-live
tests_integration_test_daemon_live_SOURCES = tests/integration/test-daemon-live.c
tests_integration_test_daemon_live_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_daemon_live_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-daemon-live

TESTS += tests/integration/test-rtplaced-cli.sh
EXTRA_DIST += tests/integration/test-rtplaced-cli.sh

check_PROGRAMS += tests/integration/test-moves-live
tests_integration_test_moves_live_SOURCES = tests/integration/test-moves-live.c
tests_integration_test_moves_live_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_moves_live_LDADD = tests/lib/libharness.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-moves-live

check_PROGRAMS += tests/integration/test-manage-rules
tests_integration_test_manage_rules_SOURCES = tests/integration/test-manage-rules.c
tests_integration_test_manage_rules_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_manage_rules_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-manage-rules

# Log lines carry the journal's "<N>" level prefixes only on the journal.
TESTS += tests/integration/test-rtplaced-log.sh
EXTRA_DIST += tests/integration/test-rtplaced-log.sh

# rtplaced --help and the man pages name the configured configuration path.
TESTS += tests/integration/test-paths.sh
EXTRA_DIST += tests/integration/test-paths.sh
