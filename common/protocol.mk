# The wire protocol (DESIGN §8): the public contract header, installed for
# clients; its codec in libcommon, shared by the daemon and the clients; its
# unit test; and (tests/fuzz/fuzz.mk) its fuzz harness and corpus.
common_libcommon_la_SOURCES += common/protocol.h common/protocol.c
include_HEADERS += client/rtplace-proto.h

check_PROGRAMS += tests/unit/test-protocol
tests_unit_test_protocol_SOURCES = tests/unit/test-protocol.c tests/fuzz/fuzz-protocol.c \
	tests/fuzz/proto-samples.h tests/fuzz/proto-samples.c
tests_unit_test_protocol_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/fuzz
tests_unit_test_protocol_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_protocol_LDADD = $(UNIT_LDADD)
TESTS += tests/unit/test-protocol

include $(top_srcdir)/tests/fuzz/fuzz.mk
