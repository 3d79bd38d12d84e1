# SPDX-License-Identifier: GPL-2.0-or-later
# The parsers' fuzz harnesses. `make check` runs them without libFuzzer:
# replay.c feeds each harness every file of its committed corpus.
#
# Protocol decoder (fuzz-protocol.c, corpus tests/fuzz/corpus/protocol):
# make-corpus checks that the corpus is still exactly what the encoder
# writes, so the committed files pin the version 1 and 2 wire formats.
#   make fuzz-protocol [FUZZ_SECONDS=60]
#       builds tests/fuzz/fuzz-protocol-libfuzzer with clang's libFuzzer,
#       ASan and UBSan, and fuzzes for FUZZ_SECONDS starting from the
#       committed corpus. New inputs land in tests/fuzz/corpus-protocol-found
#       (build tree); copy those worth keeping into the committed corpus.
#   tests/fuzz/make-corpus --write $(srcdir)/tests/fuzz/corpus/protocol
#       regenerates the committed corpus; only together with a protocol
#       version bump.
#
# Config parser (fuzz-config.c, corpus tests/fuzz/corpus/config: valid-*
# and invalid-* files; test-config checks that each loads or fails as its
# name says).
#   make fuzz-config [FUZZ_CONFIG_SECONDS=60]
#       the same with config.dict; new inputs in tests/fuzz/corpus-config-found.
check_PROGRAMS += tests/fuzz/replay-protocol tests/fuzz/make-corpus
tests_fuzz_replay_protocol_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz-protocol.c
tests_fuzz_replay_protocol_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus/protocol"'
tests_fuzz_replay_protocol_LDADD = common/libcommon.la
tests_fuzz_make_corpus_SOURCES = tests/fuzz/make-corpus.c tests/fuzz/proto-samples.h tests/fuzz/proto-samples.c
tests_fuzz_make_corpus_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_fuzz_make_corpus_LDADD = tests/lib/libtest.la common/libcommon.la
TESTS += tests/fuzz/replay-protocol tests/fuzz/make-corpus
EXTRA_DIST += tests/fuzz/corpus/protocol

check_PROGRAMS += tests/fuzz/replay-config
tests_fuzz_replay_config_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz-config.c
tests_fuzz_replay_config_CPPFLAGS = $(DAEMON_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus/config"'
tests_fuzz_replay_config_LDADD = common/libconfig.la common/libcommon.la
TESTS += tests/fuzz/replay-config
EXTRA_DIST += tests/fuzz/corpus/config tests/fuzz/config.dict

# Claims state file (fuzz-claims-state.c, corpus tests/fuzz/corpus/claims-state).
#   make fuzz-claims-state [FUZZ_CLAIMS_STATE_SECONDS=60]
#       the same; new inputs in tests/fuzz/corpus-claims-state-found.
check_PROGRAMS += tests/fuzz/replay-claims-state
tests_fuzz_replay_claims_state_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz-claims-state.c
tests_fuzz_replay_claims_state_CPPFLAGS = $(DAEMON_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus/claims-state"'
tests_fuzz_replay_claims_state_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_fuzz_replay_claims_state_LDADD = daemon/libdaemoncore.la common/libcommon.la $(LIBEVENT_LIBS)
TESTS += tests/fuzz/replay-claims-state
EXTRA_DIST += tests/fuzz/corpus/claims-state

# Isolation journal (fuzz-isolation.c, corpus tests/fuzz/corpus/isolation).
#   make fuzz-isolation [FUZZ_ISOLATION_SECONDS=60]
#       the same; new inputs in tests/fuzz/corpus-isolation-found.
check_PROGRAMS += tests/fuzz/replay-isolation
tests_fuzz_replay_isolation_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz-isolation.c
tests_fuzz_replay_isolation_CPPFLAGS = $(DAEMON_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus/isolation"'
tests_fuzz_replay_isolation_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_fuzz_replay_isolation_LDADD = daemon/libdaemoncore.la common/libcommon.la $(LIBEVENT_LIBS)
TESTS += tests/fuzz/replay-isolation
EXTRA_DIST += tests/fuzz/corpus/isolation

# Uevent messages (fuzz-uevent.c, corpus tests/fuzz/corpus/uevent: valid-*
# as the kernel sends them, truncated-*, garbage-*, and what else reaches
# the socket).
#   make fuzz-uevent [FUZZ_UEVENT_SECONDS=60]
#       the same; new inputs in tests/fuzz/corpus-uevent-found.
check_PROGRAMS += tests/fuzz/replay-uevent
tests_fuzz_replay_uevent_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz-uevent.c
tests_fuzz_replay_uevent_CPPFLAGS = $(DAEMON_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus/uevent"'
tests_fuzz_replay_uevent_LDADD = daemon/libtracker.la daemon/libdaemoncore.la common/libcommon.la
TESTS += tests/fuzz/replay-uevent
EXTRA_DIST += tests/fuzz/corpus/uevent

# Topology XML (fuzz-topology.c, corpus tests/fuzz/corpus/topology), as
# --topology hands it to hwloc through topo_load_xml().
#   make fuzz-topology [FUZZ_TOPOLOGY_SECONDS=60]
#       the same; new inputs in tests/fuzz/corpus-topology-found.
check_PROGRAMS += tests/fuzz/replay-topology
tests_fuzz_replay_topology_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz-topology.c
tests_fuzz_replay_topology_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus/topology"'
tests_fuzz_replay_topology_LDADD = common/libtopohwloc.la common/libcommon.la
TESTS += tests/fuzz/replay-topology
EXTRA_DIST += tests/fuzz/corpus/topology
# What rtplaced says of the corpus' unsafe files (hwloc crashed on some).
TESTS += tests/fuzz/test-topology-refused.sh
EXTRA_DIST += tests/fuzz/test-topology-refused.sh

FUZZ_SECONDS = 60
FUZZ_PROTOCOL_SRC = $(srcdir)/tests/fuzz/fuzz-protocol.c $(srcdir)/common/protocol.c $(srcdir)/common/reason.c \
	$(srcdir)/common/cpuset.c

fuzz-protocol: $(FUZZ_PROTOCOL_SRC)
	@echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
		$(CLANG) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null || \
		{ echo "fuzz-protocol: $(CLANG) cannot link libFuzzer (apt-get install libclang-rt-dev)"; exit 1; }
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(FUZZ_PROTOCOL_SRC) \
		-o tests/fuzz/fuzz-protocol-libfuzzer
	$(MKDIR_P) tests/fuzz/corpus-protocol-found
	tests/fuzz/fuzz-protocol-libfuzzer -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
		tests/fuzz/corpus-protocol-found $(srcdir)/tests/fuzz/corpus/protocol

FUZZ_CONFIG_SECONDS = 60
FUZZ_CONFIG_SRC = $(srcdir)/tests/fuzz/fuzz-config.c $(srcdir)/common/conf.c $(srcdir)/common/cpuset.c \
	$(srcdir)/common/file.c $(srcdir)/common/reason.c

fuzz-config: $(FUZZ_CONFIG_SRC)
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEFS) $(DEFAULT_INCLUDES) $(DAEMON_CPPFLAGS) $(CPPFLAGS) $(INIH_CFLAGS) $(FUZZ_CONFIG_SRC) \
		$(INIH_LIBS) -o tests/fuzz/fuzz-config-libfuzzer
	$(MKDIR_P) tests/fuzz/corpus-config-found
	tests/fuzz/fuzz-config-libfuzzer -max_total_time=$(FUZZ_CONFIG_SECONDS) -max_len=4096 \
		-dict=$(srcdir)/tests/fuzz/config.dict \
		tests/fuzz/corpus-config-found $(srcdir)/tests/fuzz/corpus/config

FUZZ_CLAIMS_STATE_SECONDS = 60
FUZZ_CLAIMS_STATE_SRC = $(srcdir)/tests/fuzz/fuzz-claims-state.c $(srcdir)/daemon/claims-state.c \
	$(srcdir)/daemon/claims.c $(srcdir)/daemon/procfs.c $(srcdir)/common/cpuset.c $(srcdir)/common/reason.c \
	$(srcdir)/common/idmap.c $(srcdir)/common/decimal.c $(srcdir)/daemon/quota.c

fuzz-claims-state: $(FUZZ_CLAIMS_STATE_SRC)
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEFS) $(DEFAULT_INCLUDES) $(DAEMON_CPPFLAGS) $(CPPFLAGS) $(LIBEVENT_CFLAGS) $(FUZZ_CLAIMS_STATE_SRC) \
		$(LIBEVENT_LIBS) -o tests/fuzz/fuzz-claims-state-libfuzzer
	$(MKDIR_P) tests/fuzz/corpus-claims-state-found
	tests/fuzz/fuzz-claims-state-libfuzzer -max_total_time=$(FUZZ_CLAIMS_STATE_SECONDS) -max_len=4096 \
		tests/fuzz/corpus-claims-state-found $(srcdir)/tests/fuzz/corpus/claims-state

FUZZ_ISOLATION_SECONDS = 60
FUZZ_ISOLATION_SRC = $(srcdir)/tests/fuzz/fuzz-isolation.c $(srcdir)/daemon/isolation.c $(srcdir)/daemon/isoplan.c $(srcdir)/daemon/irqbalance.c \
	$(srcdir)/daemon/claims-state.c $(srcdir)/daemon/claims.c $(srcdir)/daemon/procfs.c $(srcdir)/common/cpuset.c \
	$(srcdir)/common/reason.c $(srcdir)/common/idmap.c $(srcdir)/common/decimal.c $(srcdir)/daemon/quota.c

fuzz-isolation: $(FUZZ_ISOLATION_SRC)
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEFS) $(DEFAULT_INCLUDES) $(DAEMON_CPPFLAGS) $(CPPFLAGS) $(LIBEVENT_CFLAGS) $(FUZZ_ISOLATION_SRC) \
		$(LIBEVENT_LIBS) -o tests/fuzz/fuzz-isolation-libfuzzer
	$(MKDIR_P) tests/fuzz/corpus-isolation-found
	tests/fuzz/fuzz-isolation-libfuzzer -max_total_time=$(FUZZ_ISOLATION_SECONDS) -max_len=4096 \
		tests/fuzz/corpus-isolation-found $(srcdir)/tests/fuzz/corpus/isolation

FUZZ_UEVENT_SECONDS = 60
FUZZ_UEVENT_SRC = $(srcdir)/tests/fuzz/fuzz-uevent.c $(srcdir)/daemon/hotplug.c $(srcdir)/common/sysfs.c $(srcdir)/common/file.c \
	$(srcdir)/common/cpuset.c $(srcdir)/common/reason.c

fuzz-uevent: $(FUZZ_UEVENT_SRC)
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEFS) $(DEFAULT_INCLUDES) $(DAEMON_CPPFLAGS) $(CPPFLAGS) $(FUZZ_UEVENT_SRC) \
		-o tests/fuzz/fuzz-uevent-libfuzzer
	$(MKDIR_P) tests/fuzz/corpus-uevent-found
	tests/fuzz/fuzz-uevent-libfuzzer -max_total_time=$(FUZZ_UEVENT_SECONDS) -max_len=8192 \
		tests/fuzz/corpus-uevent-found $(srcdir)/tests/fuzz/corpus/uevent

FUZZ_TOPOLOGY_SECONDS = 60
FUZZ_TOPOLOGY_SRC = $(srcdir)/tests/fuzz/fuzz-topology.c $(srcdir)/common/topo-hwloc.c $(srcdir)/common/topo.c \
	$(srcdir)/common/file.c $(srcdir)/common/cpuset.c $(srcdir)/common/reason.c

fuzz-topology: $(FUZZ_TOPOLOGY_SRC)
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(HWLOC_CFLAGS) $(LIBXML2_CFLAGS) $(FUZZ_TOPOLOGY_SRC) \
		$(HWLOC_LIBS) $(LIBXML2_LIBS) -o tests/fuzz/fuzz-topology-libfuzzer
	$(MKDIR_P) tests/fuzz/corpus-topology-found
	tests/fuzz/fuzz-topology-libfuzzer -max_total_time=$(FUZZ_TOPOLOGY_SECONDS) -max_len=16384 \
		tests/fuzz/corpus-topology-found $(srcdir)/tests/fuzz/corpus/topology

.PHONY: fuzz-protocol fuzz-config fuzz-claims-state fuzz-isolation fuzz-uevent fuzz-topology
CLEANFILES += tests/fuzz/fuzz-protocol-libfuzzer tests/fuzz/fuzz-config-libfuzzer tests/fuzz/fuzz-claims-state-libfuzzer \
	tests/fuzz/fuzz-isolation-libfuzzer \
	tests/fuzz/fuzz-uevent-libfuzzer tests/fuzz/fuzz-topology-libfuzzer

# What rtplace-oci-hook parses from a container's author (fuzz-oci.c,
# corpus tests/fuzz/corpus/oci: states and config.json files as runc and
# podman write them, and broken ones): each input is both a state and a
# config.
#   make fuzz-oci [FUZZ_OCI_SECONDS=60]
#       the same; new inputs in tests/fuzz/corpus-oci-found.
check_PROGRAMS += tests/fuzz/replay-oci
tests_fuzz_replay_oci_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz-oci.c client/oci-spec.h client/oci-spec.c \
	client/oci-rights.h client/oci-rights.c client/cli.h client/cli.c
tests_fuzz_replay_oci_CPPFLAGS = $(CLIENT_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus/oci"'
tests_fuzz_replay_oci_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_fuzz_replay_oci_LDADD = common/libfile.la common/libcommon.la $(JSONC_LIBS)
TESTS += tests/fuzz/replay-oci
EXTRA_DIST += tests/fuzz/corpus/oci

FUZZ_OCI_SECONDS = 60
FUZZ_OCI_SRC = $(srcdir)/tests/fuzz/fuzz-oci.c $(srcdir)/client/oci-spec.c $(srcdir)/client/oci-rights.c \
	$(srcdir)/client/cli.c $(srcdir)/common/cpuset.c $(srcdir)/common/file.c $(srcdir)/common/reason.c \
	$(srcdir)/common/rtbudget.c

fuzz-oci: $(FUZZ_OCI_SRC)
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEFS) $(DEFAULT_INCLUDES) $(CLIENT_CPPFLAGS) $(CPPFLAGS) $(JSONC_CFLAGS) $(FUZZ_OCI_SRC) \
		$(JSONC_LIBS) -o tests/fuzz/fuzz-oci-libfuzzer
	$(MKDIR_P) tests/fuzz/corpus-oci-found
	tests/fuzz/fuzz-oci-libfuzzer -max_total_time=$(FUZZ_OCI_SECONDS) -max_len=8192 \
		tests/fuzz/corpus-oci-found $(srcdir)/tests/fuzz/corpus/oci

.PHONY: fuzz-oci
CLEANFILES += tests/fuzz/fuzz-oci-libfuzzer

# The bounded run CI makes (scripts/test-all.sh, step fuzz): every harness
# named in FUZZ_TARGETS (its `make fuzz-NAME` target, whose time is
# FUZZ_NAME_SECONDS) for FUZZ_CI_SECONDS each, all of them even when one
# fails. A harness joins CI by adding its name here.
#   make fuzz-ci [FUZZ_CI_SECONDS=20]
#       fails when a harness crashed, leaked or hung; libFuzzer leaves the
#       input in the build folder as crash-*, leak-*, timeout-* or oom-*.
#       Leaks inside libhwloc are suppressed (tests/fuzz/lsan.supp).
FUZZ_TARGETS = protocol config claims-state isolation uevent topology oci
FUZZ_CI_SECONDS = 20

fuzz-ci:
	@failed=; for t in $(FUZZ_TARGETS); do \
		v=FUZZ_`echo $$t | tr 'a-z-' 'A-Z_'`_SECONDS; \
		echo "== fuzz-$$t: $(FUZZ_CI_SECONDS) s"; \
		LSAN_OPTIONS=suppressions=$(abs_srcdir)/tests/fuzz/lsan.supp:print_suppressions=1 \
		$(MAKE) --no-print-directory fuzz-$$t FUZZ_SECONDS=$(FUZZ_CI_SECONDS) $$v=$(FUZZ_CI_SECONDS) \
			>tests/fuzz/fuzz-$$t.log 2>&1 || failed="$$failed $$t"; \
		grep -E '^Done|ERROR|SUMMARY|Suppressions used|Test unit written|^make' tests/fuzz/fuzz-$$t.log; \
	done; \
	[ -z "$$failed" ] || { echo "fuzz-ci: failed:$$failed (logs in tests/fuzz/fuzz-NAME.log)"; exit 1; }

.PHONY: fuzz-ci
CLEANFILES += tests/fuzz/fuzz-*.log
EXTRA_DIST += tests/fuzz/lsan.supp
