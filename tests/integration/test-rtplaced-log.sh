#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplaced's log lines: plain "rtplaced: LEVEL: message" on a file, pipe or
# terminal; "<N>message" (the journal's level prefix) only when stderr is
# the journal stream that JOURNAL_STREAM names.
. "$top_srcdir/tests/integration/test-client-common.sh"

unset JOURNAL_STREAM
start_daemon
stop_daemon
grep -q '^rtplaced: notice: rtplaced .* listening on ' "$TMP/rtplaced.log" ||
	fail "no plain 'rtplaced: notice:' line on a file: $(cat "$TMP/rtplaced.log")"
! grep -q '^<[0-7]>' "$TMP/rtplaced.log" || fail "level prefixes outside the journal: $(cat "$TMP/rtplaced.log")"

# Another file's device and inode: not the journal either.
: >"$TMP/other"
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/other")
export JOURNAL_STREAM
start_daemon
stop_daemon
! grep -q '^<[0-7]>' "$TMP/rtplaced.log" || fail "level prefixes on a stream JOURNAL_STREAM does not name"

# stderr is the stream JOURNAL_STREAM names (start_daemon truncates the
# file in place, so its inode stays).
: >"$TMP/rtplaced.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/rtplaced.log")
start_daemon
stop_daemon
grep -q '^<5>rtplaced .* listening on ' "$TMP/rtplaced.log" ||
	fail "no '<5>' notice line on the journal stream: $(cat "$TMP/rtplaced.log")"
! grep -q '^rtplaced: ' "$TMP/rtplaced.log" || fail "plain lines on the journal stream"
exit 0
