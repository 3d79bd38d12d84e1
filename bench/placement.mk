# Placement throughput and quality in simulation (DESIGN §11): 60 instances
# x 4 CPUs at rt99 on the 480-CPU topology, read from the shared XML.
noinst_PROGRAMS += bench/placement-throughput
bench_placement_throughput_SOURCES = bench/placement-throughput.c
bench_placement_throughput_CPPFLAGS = $(AM_CPPFLAGS) \
	-DBENCH_TOPOLOGY='"$(abs_top_srcdir)/../shared/topologies/2s-240c-480t.xml"'
bench_placement_throughput_LDADD = common/libtopohwloc.la common/libcommon.la $(HWLOC_LIBS)
