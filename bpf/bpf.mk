# SPDX-License-Identifier: GPL-2.0-or-later
# The BPF tracker (DESIGN §3): bpf/tracker.bpf.c compiled by clang for the
# BPF target and turned by bpftool into a skeleton header in the build tree
# (never committed); daemon/tracker.c, the loader, is its only includer.
# bpf/tracker-abi.h is what the programs and the loader share. The kernel
# types come from the hand-written bpf/kernel-types.h (CO-RE), so nothing
# depends on the build host's kernel; only the BPF programs include it.
TRACKER_BPF_CFLAGS = -O2 -g -target bpf -mcpu=v3 -Wall -Wextra -Wno-unused-parameter \
	-I$(top_srcdir)/common -I$(top_srcdir)/bpf
TRACKER_BPF_DEPS = $(srcdir)/bpf/tracker.bpf.c $(srcdir)/bpf/tracker-abi.h $(srcdir)/bpf/kernel-types.h \
	$(srcdir)/common/cpupri.h $(srcdir)/common/cpuset.h $(srcdir)/common/levels.h \
	$(srcdir)/common/rtplace-levels.h

bpf/tracker.bpf.o: $(TRACKER_BPF_DEPS)
	$(AM_V_at)$(MKDIR_P) bpf
	$(AM_V_GEN)$(CLANG) $(TRACKER_BPF_CFLAGS) -c $(srcdir)/bpf/tracker.bpf.c -o $@

bpf/tracker.skel.h: bpf/tracker.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bpf/tracker.bpf.o name tracker_bpf > $@.tmp && mv $@.tmp $@

BUILT_SOURCES += bpf/tracker.skel.h
CLEANFILES += bpf/tracker.bpf.o bpf/tracker.skel.h bpf/tracker.skel.h.tmp
EXTRA_DIST += bpf/tracker.bpf.c bpf/tracker-abi.h bpf/kernel-types.h
