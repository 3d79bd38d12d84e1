# The clients (DESIGN §8): librtplace (shared, exporting only rtplace_*
# through a version script), rtplacectl and rtplace-run, their man pages and
# their integration tests against a real rtplaced on a private socket.
#
# librtplace compiles the few core files it needs itself (codec, CPU sets,
# level names, the record ring's consumer) with its own flags, so its objects are its own whatever
# libcommon holds, and nothing of the core leaks into its ABI.
lib_LTLIBRARIES += client/librtplace.la
include_HEADERS += client/rtplace.h
client_librtplace_la_SOURCES = \
	client/rtplace.h client/librtplace.c \
	common/protocol.h common/protocol.c \
	common/cpuset.h common/cpuset.c \
	common/levels.h common/levels.c \
	common/record.h common/ring.h common/ring.c
client_librtplace_la_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
client_librtplace_la_LIBADD = $(PTHREAD_LIBS)
# current:revision:age, libtool's rules: bump on every release that changes
# the interface (see librtplace.sym).
client_librtplace_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0 -no-undefined \
	-Wl,--version-script=$(top_srcdir)/client/librtplace.sym
EXTRA_client_librtplace_la_DEPENDENCIES = client/librtplace.sym

bin_PROGRAMS += client/rtplacectl client/rtplace-run
client_rtplacectl_SOURCES = client/rtplacectl.c client/cli.h client/cli.c
client_rtplacectl_LDADD = client/librtplace.la common/libcommon.la
# rtplace-run falls back to the same placement as the daemon, over the live
# topology, when no daemon answers.
client_rtplace_run_SOURCES = client/rtplace-run.c client/cli.h client/cli.c
client_rtplace_run_LDADD = client/librtplace.la common/libtopohwloc.la common/libcommon.la $(HWLOC_LIBS)

# Move latency through rtplaced against bare sched_setaffinity (root, a
# live daemon): not installed, not a test.
noinst_PROGRAMS += bench/move-latency
bench_move_latency_SOURCES = bench/move-latency.c
bench_move_latency_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_move_latency_LDADD = client/librtplace.la $(PTHREAD_LIBS)

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = client/rtplace.pc
client/rtplace.pc: $(top_srcdir)/client/rtplace.pc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) client && sed \
		-e 's|@prefix[@]|$(prefix)|g' \
		-e 's|@exec_prefix[@]|$(exec_prefix)|g' \
		-e 's|@libdir[@]|$(libdir)|g' \
		-e 's|@includedir[@]|$(includedir)|g' \
		-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
		$(top_srcdir)/client/rtplace.pc.in > $@
CLEANFILES += client/rtplace.pc

EXTRA_DIST += man/librtplace.3 man/rtplacectl.1 man/rtplace-run.1
EXTRA_DIST += client/librtplace.sym client/rtplace.pc.in \
	bench/run-overhead.sh bench/ffmpeg-instances.sh

# Integration tests: each starts its own rtplaced on a private socket and
# stops it on every exit path: in simulation mode over a shared topology
# (no root), or, for moves, records and managed threads, on the live
# machine (root and BPF, skipped otherwise).
check_PROGRAMS += tests/integration/test-client-lib
tests_integration_test_client_lib_SOURCES = tests/integration/test-client-lib.c
tests_integration_test_client_lib_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_client_lib_LDADD = client/librtplace.la tests/lib/libharness.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-client-lib

check_PROGRAMS += tests/integration/test-client-sub
tests_integration_test_client_sub_SOURCES = tests/integration/test-client-sub.c
tests_integration_test_client_sub_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_client_sub_LDADD = client/librtplace.la tests/lib/libharness.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-client-sub

check_PROGRAMS += tests/integration/test-client-spin
tests_integration_test_client_spin_SOURCES = tests/integration/test-client-spin.c

EXTRA_DIST += tests/integration/test-client-common.sh
TESTS += tests/integration/test-client-cli.sh tests/integration/test-client-run.sh \
	tests/integration/test-client-ffmpeg.sh tests/integration/test-client-watch.sh
EXTRA_DIST += tests/integration/test-client-cli.sh tests/integration/test-client-run.sh \
	tests/integration/test-client-ffmpeg.sh tests/integration/test-client-watch.sh

# librtplace(3)'s example builds with the flags of rtplace.pc alone.
TESTS += tests/integration/test-client-example.sh
EXTRA_DIST += tests/integration/test-client-example.sh
