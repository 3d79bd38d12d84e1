# SPDX-License-Identifier: GPL-2.0-or-later
# The clients (DESIGN §8): librtplace (shared, exporting only rtplace_*
# through a version script), rtplacectl and rtplace-run, and their man pages.
# Client sources see client/ (CLIENT_CPPFLAGS).
#
# librtplace compiles the few core files it needs itself (codec, CPU sets,
# level names, the record ring's consumer) with its own flags, so its
# objects are its own whatever libcommon holds, and nothing of the core
# leaks into its ABI.
lib_LTLIBRARIES += client/librtplace.la
include_HEADERS += client/rtplace.h
client_librtplace_la_SOURCES = \
	client/rtplace.h client/librtplace.c \
	client/local-read.h client/local-read.c \
	common/cpupri.h common/cpupri.c \
	common/topo.h common/topo.c \
	common/placement.h common/placement.c common/placement-core.h \
	common/placement-fast.c common/placement-scan.c common/placement-claim-cache.c common/placement-ctx.c \
	common/snap.h common/snap.c \
	common/rtplace-levels.h common/rtplace-proto.h common/protocol.h common/protocol.c \
	common/cpuset.h common/cpuset.c \
	common/levels.h common/levels.c \
	common/record.h common/ring.h common/ring.c
# The codec explains refusals in the reason type.
client_librtplace_la_SOURCES += common/reason.h common/reason.c
client_librtplace_la_CPPFLAGS = $(CLIENT_CPPFLAGS)
client_librtplace_la_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
client_librtplace_la_LIBADD = $(PTHREAD_LIBS)
# current:revision:age, libtool's rules: bump on every release that changes
# the interface (see librtplace.sym).
client_librtplace_la_LDFLAGS = $(AM_LDFLAGS) -version-info 1:0:1 -no-undefined \
	-Wl,--version-script=$(top_srcdir)/client/librtplace.sym
EXTRA_client_librtplace_la_DEPENDENCIES = client/librtplace.sym

# The CLIs speak the protocol only through librtplace; libcommon (a static
# convenience archive) gives them CPU-list parsing and, for rtplace-run's
# fallback, placement over the live topology, never a second codec.
bin_PROGRAMS += client/rtplacectl client/rtplace-run
client_rtplacectl_SOURCES = client/rtplacectl.c client/ctl.h client/ctl-help.c client/ctl-top.c client/ctl-svg.c client/ctl-owner.c client/ctl-explain.c client/cli.h client/cli.c \
	client/holders.h client/holders.c
client_rtplacectl_CPPFLAGS = $(CLIENT_CPPFLAGS)
client_rtplacectl_LDADD = client/librtplace.la common/libfile.la common/libcommon.la
client_rtplace_run_SOURCES = client/rtplace-run.c client/cli.h client/cli.c client/holders.h client/holders.c
# Without a daemon it follows the daemon's configuration, read with the
# same parser (common/libconfig.la).
client_rtplace_run_CPPFLAGS = $(CLIENT_CPPFLAGS)
client_rtplace_run_LDADD = client/librtplace.la common/libconfig.la common/libtopohwloc.la common/libfile.la \
	common/libcommon.la \
	$(HWLOC_LIBS)

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
EXTRA_DIST += client/librtplace.sym client/rtplace.pc.in

# The OCI runtime hook (DESIGN §15). Installed in $(pkglibexecdir), not on
# PATH: container runtimes run it with a container's state on stdin, a
# person never does. The hooks.d file (podman, CRI-O) names it by its
# installed path, so it is generated.
pkglibexec_PROGRAMS = client/rtplace-oci-hook
client_rtplace_oci_hook_SOURCES = client/rtplace-oci-hook.c client/cli.h client/cli.c \
	client/oci-rights.h client/oci-rights.c client/oci-spec.h client/oci-spec.c
client_rtplace_oci_hook_CPPFLAGS = $(CLIENT_CPPFLAGS)
client_rtplace_oci_hook_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
# The node's [containers] policy is read with the daemon's own parser.
client_rtplace_oci_hook_LDADD = client/librtplace.la common/libconfig.la common/libfile.la common/libcommon.la \
	$(JSONC_LIBS)

ocihooksdir = $(datadir)/containers/oci/hooks.d
ocihooks_DATA = client/rtplace-oci-hook.json
client/rtplace-oci-hook.json: $(top_srcdir)/client/rtplace-oci-hook.json.in Makefile
	$(AM_V_GEN)$(MKDIR_P) client && sed -e 's|@pkglibexecdir[@]|$(pkglibexecdir)|g' \
		$(top_srcdir)/client/rtplace-oci-hook.json.in > $@
CLEANFILES += client/rtplace-oci-hook.json
EXTRA_DIST += client/rtplace-oci-hook.json.in
EXTRA_DIST += man/rtplace-oci-hook.8

# Where bash-completion looks (its pkg-config completionsdir, else
# $(datadir)/bash-completion/completions), named after the command.
dist_bashcompletion_DATA = contrib/bash-completion/rtplacectl
