# Unit tests (cmocka, no root), integration tests (real kernel, root) and
# fuzz corpora replays. Each test is a program run by automake's parallel
# harness; 77 means skipped, 99 a hard error.
check_LTLIBRARIES = tests/lib/libtest.la
# Topologies generated when ../shared is absent (tests/lib/testlib.c).
CLEANFILES += tests/topology-*.xml
tests_lib_libtest_la_SOURCES = tests/lib/testlib.h tests/lib/testlib.c

UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -I$(top_srcdir)/tests/lib
UNIT_LDADD = tests/lib/libtest.la common/libcommon.la $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-basics
tests_unit_test_basics_SOURCES = tests/unit/test-basics.c
tests_unit_test_basics_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_basics_LDADD = $(UNIT_LDADD)
TESTS += tests/unit/test-basics
