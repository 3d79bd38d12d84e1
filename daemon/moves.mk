# Moves and notification records (DESIGN §7). The record format and the
# ring logic are pure and shared with clients (libcommon); the daemon's
# side (rings and doorbells, authorisation, applying moves) is a
# convenience library the daemon and its tests link.
common_libcommon_la_SOURCES += common/record.h common/ring.h common/ring.c

noinst_LTLIBRARIES += daemon/libmoves.la
daemon_libmoves_la_SOURCES = \
	daemon/notify.h daemon/notify.c \
	daemon/auth.h daemon/auth.c \
	daemon/mover.h daemon/mover.c

MOVES_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
MOVES_TEST_LDADD = daemon/libmoves.la $(UNIT_LDADD) $(PTHREAD_LIBS)

check_PROGRAMS += tests/unit/test-ring tests/unit/test-auth
tests_unit_test_ring_SOURCES = tests/unit/test-ring.c
tests_unit_test_ring_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_unit_test_ring_LDADD = $(UNIT_LDADD) $(PTHREAD_LIBS)
tests_unit_test_auth_SOURCES = tests/unit/test-auth.c
tests_unit_test_auth_CPPFLAGS = $(MOVES_TEST_CPPFLAGS)
tests_unit_test_auth_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_auth_LDADD = $(MOVES_TEST_LDADD)
TESTS += tests/unit/test-ring tests/unit/test-auth

# Real kernel: test-mover needs root (RT policies, other uids);
# test-notify runs as any user (memfd, eventfd, a consumer process).
check_PROGRAMS += tests/integration/test-mover tests/integration/test-notify
tests_integration_test_mover_SOURCES = tests/integration/test-mover.c
tests_integration_test_mover_CPPFLAGS = $(MOVES_TEST_CPPFLAGS)
tests_integration_test_mover_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_mover_LDADD = $(MOVES_TEST_LDADD)
tests_integration_test_notify_SOURCES = tests/integration/test-notify.c
tests_integration_test_notify_CPPFLAGS = $(MOVES_TEST_CPPFLAGS)
tests_integration_test_notify_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_notify_LDADD = $(MOVES_TEST_LDADD)
TESTS += tests/integration/test-mover tests/integration/test-notify

# Records per second to 1 and 16 subscribers, doorbells per record under
# bursty load, and move latency against a bare sched_setaffinity.
noinst_PROGRAMS += bench/records
bench_records_SOURCES = bench/records.c
bench_records_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
bench_records_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_records_LDADD = daemon/libmoves.la common/libcommon.la $(PTHREAD_LIBS)
