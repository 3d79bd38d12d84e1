# The config parser's fuzz harness (fuzz-config.c). `make check` runs it
# without libFuzzer: the generic tests/fuzz/replay.c feeds it every file of
# the committed corpus tests/fuzz/corpus/config (valid-* and invalid-*
# files; test-config checks that each loads or fails as its name says).
#
#   make fuzz-config [FUZZ_CONFIG_SECONDS=60]
#       builds tests/fuzz/fuzz-config-libfuzzer with clang's libFuzzer, ASan
#       and UBSan, and fuzzes from the committed corpus with config.dict.
#       New inputs land in tests/fuzz/corpus-config-found (build tree); copy
#       those worth keeping into the committed corpus.
check_PROGRAMS += tests/fuzz/replay-config
tests_fuzz_replay_config_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz-config.c
tests_fuzz_replay_config_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus/config"'
tests_fuzz_replay_config_LDADD = daemon/libconfig.la common/libcommon.la
TESTS += tests/fuzz/replay-config
EXTRA_DIST += tests/fuzz/corpus/config tests/fuzz/config.dict

FUZZ_CONFIG_SECONDS = 60
FUZZ_CONFIG_SRC = $(srcdir)/tests/fuzz/fuzz-config.c $(srcdir)/daemon/config.c $(srcdir)/common/cpuset.c

fuzz-config: $(FUZZ_CONFIG_SRC)
	$(AM_V_CC)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(INIH_CFLAGS) $(FUZZ_CONFIG_SRC) \
		$(INIH_LIBS) -o tests/fuzz/fuzz-config-libfuzzer
	$(MKDIR_P) tests/fuzz/corpus-config-found
	tests/fuzz/fuzz-config-libfuzzer -max_total_time=$(FUZZ_CONFIG_SECONDS) -max_len=4096 \
		-dict=$(srcdir)/tests/fuzz/config.dict \
		tests/fuzz/corpus-config-found $(srcdir)/tests/fuzz/corpus/config
.PHONY: fuzz-config
CLEANFILES += tests/fuzz/fuzz-config-libfuzzer
