#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One user does not make RealtimeKit refuse others: while nobody floods
# the interface from 32 connections (64 calls waiting on each, far over
# its burst), another user's 15 requests and root's 15 are all served;
# nobody's flood is refused for its burst, and what it is refused for
# waiting (LimitsExceeded) is counted. Figures are printed.
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

FLOOD=$top_builddir/tests/integration/test-rtkit-flood
[ -x "$FLOOD" ] || skip "test-rtkit-flood is not built"
stage_programs "$FLOOD"
rt_lock
start_bus
start_rtkit_daemon

$NOBODY sleep 120 &
FLOODED=$!
OTHER_USER="setpriv --reuid=daemon --regid=daemon --clear-groups"
$OTHER_USER sleep 120 &
OTHERS=$!
sleep 120 &
ROOTS=$!
PIDS="$PIDS $FLOODED $OTHERS $ROOTS"

timeout -s KILL 60 $NOBODY "$STAGED/test-rtkit-flood" 32 64 50 $FLOODED >"$TMP/flood" 2>&1 &
FLOODER=$!
PIDS="$PIDS $FLOODER"
wait_grep "(burst)" "$TMP/rtplaced.log" "the flood did not reach its burst limit"

other_refused=0
root_refused=0
for i in $(seq 15); do
	$OTHER_USER dbus-send --system --print-reply --dest=$RK_DEST $RK_PATH \
		org.freedesktop.RealtimeKit1.MakeThreadHighPriorityWithPID uint64:$OTHERS uint64:$OTHERS int32:-5 \
		>>"$TMP/answers" 2>&1 || other_refused=$((other_refused + 1))
	dbus-send --system --print-reply --dest=$RK_DEST $RK_PATH \
		org.freedesktop.RealtimeKit1.MakeThreadHighPriorityWithPID uint64:$ROOTS uint64:$ROOTS int32:-5 \
		>>"$TMP/answers" 2>&1 || root_refused=$((root_refused + 1))
done
kill -TERM $FLOODER 2>/dev/null || fail "the flood ended before the others' requests: $(cat "$TMP/flood")"
wait $FLOODER || fail "the flood failed: $(cat "$TMP/flood")"
echo "# nobody's flood: $(cat "$TMP/flood"); refused of 15: another user's $other_refused, root's $root_refused"
[ $other_refused = 0 ] && [ $root_refused = 0 ] ||
	fail "requests refused during the flood (another user's $other_refused, root's $root_refused of 15): $(grep Error "$TMP/answers" | sort | uniq -c)"
set -- $(cat "$TMP/flood")
[ "$2" -le 25 ] || fail "nobody was served $2 times, over its burst of 25"
[ "$4" -gt 0 ] || fail "nobody's flood was never refused for its burst: $(cat "$TMP/flood")"
[ "$(ps -o ni= -p $OTHERS | tr -d ' ')" = -5 ] || fail "another user's thread is at nice $(ps -o ni= -p $OTHERS)"
"$CTL" --socket "$SOCK" status >/dev/null || fail "rtplaced stopped answering during the flood"
stop_daemon
