# rtplaced's configuration: the parser (a convenience library the daemon,
# its tests and the fuzz harness link; users also link common/libcommon.la
# for cpuset_parse), the commented example and rtplaced.conf(5).
noinst_LTLIBRARIES += daemon/libconfig.la
daemon_libconfig_la_SOURCES = daemon/config.h daemon/config.c
daemon_libconfig_la_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS)
daemon_libconfig_la_LIBADD = $(INIH_LIBS)

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

EXTRA_DIST += man/rtplaced.conf.5

check_PROGRAMS += tests/unit/test-config
tests_unit_test_config_SOURCES = tests/unit/test-config.c
tests_unit_test_config_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_config_LDADD = daemon/libconfig.la $(UNIT_LDADD)
TESTS += tests/unit/test-config

include $(top_srcdir)/tests/fuzz/config-fuzz.mk
