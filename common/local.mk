# The shared core: pure code linked into the daemon, the clients and the
# tests (the map header is also compiled by the BPF programs). No syscalls.
noinst_LTLIBRARIES += common/libcommon.la
common_libcommon_la_SOURCES = \
	common/cpuset.h common/cpuset.c \
	common/levels.h common/levels.c \
	common/cpupri.h common/cpupri.c \
	common/topo.h common/topo.c
