#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A RealtimeKit caller is the process that sent the call, never whatever
# holds its pid later. nobody calls MakeThreadRealtime for its own thread
# (the caller's process is the target: the bus names it by pid); rtplaced
# is held (a test build's hold, RTPLACED_TEST_RTKIT_CALLER_HOLD) after the
# bus named the caller and before it pins it, while the caller is killed
# and its pid given to a new process of the same user with a hard
# RLIMIT_RTTIME (clone3 with set_tid), which the rules would let through.
# With Debian 12's dbus-daemon, which gives no ProcessFD, rtplaced says so
# once and finds the process at that pid started after the call; with a
# bus that gives one (dbus-daemon 1.15.8+ first in PATH) the pidfd has
# exited. Either way the call is refused as the caller's exit and the new
# process keeps SCHED_OTHER.
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

start_held_rtkit_daemon RTPLACED_TEST_RTKIT_CALLER_HOLD

# call_self REPLY: nobody's busctl, in the background, asks
# MakeThreadRealtime for its own main thread (setpriv, prlimit and sh
# exec: $! is busctl after it, and $$ its main thread).
call_self() {
	$NOBODY prlimit --rttime=100000:200000 sh -c \
		"exec busctl --system --timeout=30 call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtime tu \$\$ 10" \
		>"$1" 2>&1 &
}

call_self "$TMP/reply"
CALLER=$!
PIDS="$PIDS $CALLER"
wait_grep "test hold before pinning caller $CALLER" "$TMP/rtplaced.log" "the call did not reach the caller hold"

# The caller ends; its pid becomes a new process of nobody's, RT-ready.
kill -KILL $CALLER
wait $CALLER 2>/dev/null
reuse_pid $CALLER 65534 200000
[ "$(ps -o user= -p $CALLER)" = nobody ] || fail "pid $CALLER is not nobody's: $(ps -o user= -p $CALLER)"
mask=$(taskset -pc $CALLER | sed 's/.*: //')

# The call goes on, and finds its caller gone: by the bus's ProcessFD
# where it gives one (dbus-daemon 1.15.8+: Debian 13, or PATH naming one),
# else by the start time of the process at its pid.
: >"$TMP/hold"
if grep -q "the bus gives each caller's process descriptor (ProcessFD)" "$TMP/rtplaced.log"; then
	said="the bus gives each caller's process descriptor"
	why="the caller (pid $CALLER) exited"
else
	said="the bus gives no ProcessFD"
	why="the caller exited: its pid $CALLER names a process that started after the call"
fi
wait_grep "MakeThreadRealtime refused to uid 65534 (gone): $why" "$TMP/rtplaced.log" \
	"rtplaced did not refuse the call of the ended caller"
chrt -p $CALLER | grep -q "policy: SCHED_OTHER$" || fail "the process that took the caller's pid is $(chrt -p $CALLER)"
[ "$(taskset -pc $CALLER | sed 's/.*: //')" = "$mask" ] ||
	fail "the process that took the caller's pid runs on CPUs $(taskset -pc $CALLER | sed 's/.*: //'), was $mask"
[ "$(grep -c "$said" "$TMP/rtplaced.log")" = 1 ] || fail "rtplaced did not say once how it knows callers ($said)"
wait_claims 0

# A live caller is still served through the same path, and told once only.
call_self "$TMP/reply2"
LIVE=$!
PIDS="$PIDS $LIVE"
wait_grep "test hold before pinning caller $LIVE" "$TMP/rtplaced.log" "the second call did not reach the caller hold"
: >"$TMP/hold"
wait $LIVE || fail "a live caller was refused: $(cat "$TMP/reply2")"
[ "$(grep -c "$said" "$TMP/rtplaced.log")" = 1 ] || fail "rtplaced said it again ($said)"
echo "# $said; pid $CALLER given to a new process of nobody's under the call: $(chrt -p $CALLER | tr '\n' ' '), CPUs $mask"
stop_daemon
