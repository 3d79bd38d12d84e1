# SPDX-License-Identifier: GPL-2.0-or-later
# The shared core: pure code linked into the daemon, the clients and the
# tests (the map header is also compiled by the BPF programs). No syscalls.
# Everything here includes only common/ headers (scripts/check-layout.sh).
noinst_LTLIBRARIES += common/libcommon.la
common_libcommon_la_SOURCES = \
	common/cpuset.h common/cpuset.c \
	common/idmap.h common/idmap.c \
	common/decimal.h common/decimal.c \
	common/levels.h common/levels.c \
	common/cpupri.h common/cpupri.c \
	common/topo.h common/topo.c \
	common/placement.h common/placement.c common/placement-core.h \
	common/placement-fast.c common/placement-scan.c common/placement-claim-cache.c common/placement-ctx.c \
	common/snap.h common/snap.c \
	common/rtplace-levels.h common/rtplace-proto.h common/protocol.h common/protocol.c \
	common/record.h common/ring.h common/ring.c \
	common/kenv.h common/kenv.c

# The wire contract (DESIGN §8), installed for clients beside rtplace.h.
include_HEADERS += common/rtplace-proto.h common/rtplace-levels.h

# The topology loader, the only hwloc user, as its own convenience library:
# the daemon and the clients that need a live topology link it beside
# common/libcommon.la (which it needs for topo_new/topo_finish), while the
# pure code and its tests stay free of hwloc.
noinst_LTLIBRARIES += common/libtopohwloc.la
common_libtopohwloc_la_SOURCES = common/topo-hwloc.c
common_libtopohwloc_la_CFLAGS = $(AM_CFLAGS) $(HWLOC_CFLAGS)
common_libtopohwloc_la_LIBADD = $(HWLOC_LIBS)

# Input files read whole and without blocking (common/file.h): I/O, so not
# in the pure libcommon; its users link it before common/libcommon.la (for
# reason_set). The configuration parser and the topology loader carry it.
noinst_LTLIBRARIES += common/libfile.la
common_libfile_la_SOURCES = common/file.h common/file.c
# The sysfs reader (common/sysfs.h): I/O as well, shared by the daemon and
# rtplace-run's fallback.
common_libfile_la_SOURCES += common/sysfs.h common/sysfs.c
# Why an RT policy was refused (common/rtbudget.h): reads cgroup files,
# shared by the daemon's moves and the clients that set a policy.
common_libfile_la_SOURCES += common/rtbudget.h common/rtbudget.c
common_libtopohwloc_la_LIBADD += common/libfile.la
# libxml2 checks XML before hwloc reads it.
common_libtopohwloc_la_CFLAGS += $(LIBXML2_CFLAGS)
common_libtopohwloc_la_LIBADD += $(LIBXML2_LIBS)

# The type in which failures are explained (common/reason.h).
common_libcommon_la_SOURCES += common/reason.h common/reason.c

# Why an answer is what it is (EXPLAIN): placement's answer classified.
common_libcommon_la_SOURCES += common/explain.h common/explain.c

# The configuration parser (common/conf.h), pure but for reading its file:
# the daemon and rtplace-run's fallback share it. Users also link
# common/libcommon.la (cpuset_parse).
noinst_LTLIBRARIES += common/libconfig.la
common_libconfig_la_SOURCES = common/conf.h common/conf.c
common_libconfig_la_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS)
common_libconfig_la_LIBADD = common/libfile.la $(INIH_LIBS)
