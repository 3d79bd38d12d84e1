# rtplaced's pure parts that are unit tested on their own (claims), and the
# thin edges (log, sdnotify) shared by the daemon and its integration tests.
noinst_LTLIBRARIES += daemon/libdaemoncore.la
daemon_libdaemoncore_la_SOURCES = \
	daemon/claims.h daemon/claims.c \
	daemon/log.h daemon/log.c
daemon_libdaemoncore_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
daemon_libdaemoncore_la_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)

check_PROGRAMS += tests/unit/test-claims
tests_unit_test_claims_SOURCES = tests/unit/test-claims.c
tests_unit_test_claims_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
tests_unit_test_claims_CFLAGS = $(UNIT_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_claims_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD) $(LIBEVENT_LIBS)
TESTS += tests/unit/test-claims
