# Placement (DESIGN §5): pure code, part of the shared core. Its tests check
# it and the cpupri map against the naive models in tests/unit/refmodel.c,
# on the shared topologies (loaded through the hwloc loader when
# ../shared is there, built in the same shapes otherwise).
common_libcommon_la_SOURCES += common/placement.h common/placement.c

check_PROGRAMS += tests/unit/test-cpupri tests/unit/test-placement
tests_unit_test_cpupri_SOURCES = tests/unit/test-cpupri.c tests/unit/refmodel.h tests/unit/refmodel.c
tests_unit_test_cpupri_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_unit_test_cpupri_LDADD = common/libtopohwloc.la $(HWLOC_LIBS) $(UNIT_LDADD) $(PTHREAD_LIBS)
tests_unit_test_placement_SOURCES = tests/unit/test-placement.c tests/unit/refmodel.h tests/unit/refmodel.c
tests_unit_test_placement_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_placement_LDADD = common/libtopohwloc.la $(HWLOC_LIBS) $(UNIT_LDADD)
TESTS += tests/unit/test-cpupri tests/unit/test-placement
