# The topology loader, the only hwloc user, as its own convenience library:
# the daemon and the clients that need a live topology link it beside
# common/libcommon.la (which it needs for topo_new/topo_finish), while the
# pure code and its tests stay free of hwloc.
noinst_LTLIBRARIES += common/libtopohwloc.la
common_libtopohwloc_la_SOURCES = common/topo-hwloc.c
common_libtopohwloc_la_CFLAGS = $(AM_CFLAGS) $(HWLOC_CFLAGS)
common_libtopohwloc_la_LIBADD = $(HWLOC_LIBS)

check_PROGRAMS += tests/unit/test-topology
tests_unit_test_topology_SOURCES = tests/unit/test-topology.c
tests_unit_test_topology_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_topology_LDADD = common/libtopohwloc.la $(UNIT_LDADD)
TESTS += tests/unit/test-topology
