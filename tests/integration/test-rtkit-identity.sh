#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A thread's identity cannot change under a RealtimeKit grant: the grant
# is held (a test build's hold, RTPLACED_TEST_RTKIT_HOLD) between its
# checks and its act while nobody's thread is killed and its tid given to
# a new task of another user (clone3 with set_tid); the grant acts on that
# tid, finds it names another task, and undoes what it did: the new task
# keeps SCHED_OTHER and its affinity, the caller is told the thread is
# gone, and the CPU claimed for it is given back.
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

start_held_rtkit_daemon RTPLACED_TEST_RTKIT_HOLD

$NOBODY prlimit --rttime=100000:200000 sleep 120 &
VICTIM=$!
PIDS="$PIDS $VICTIM"
sleep 0.2
$NOBODY busctl --system --timeout=30 call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtimeWithPID ttu \
	$VICTIM $VICTIM 10 >"$TMP/reply" 2>&1 &
CALLER=$!
PIDS="$PIDS $CALLER"
wait_grep "test hold before acting on thread $VICTIM" "$TMP/rtplaced.log" "the grant did not reach the test hold"

# The thread ends; its tid becomes a new task of uid daemon.
kill -KILL $VICTIM
wait $VICTIM 2>/dev/null
reuse_pid $VICTIM 1
REUSED=$VICTIM
[ "$(ps -o user= -p $REUSED)" = daemon ] || fail "tid $REUSED is not the daemon user's: $(ps -o user= -p $REUSED)"
mask=$(taskset -pc $REUSED | sed 's/.*: //')

# The grant goes on.
: >"$TMP/hold"
wait $CALLER && fail "the grant for the ended thread succeeded: $(cat "$TMP/reply")"
chrt -p $REUSED | grep -q "policy: SCHED_OTHER$" || fail "another user's task was left $(chrt -p $REUSED)"
grep -q "thread $VICTIM exited under its grant .*; undone" "$TMP/rtplaced.log" || fail "rtplaced did not say it undid the grant"
[ "$(taskset -pc $REUSED | sed 's/.*: //')" = "$mask" ] ||
	fail "another user's task was left on CPUs $(taskset -pc $REUSED | sed 's/.*: //'), was $mask"
grep -q "thread $VICTIM exited" "$TMP/reply" || fail "the refusal does not say the thread is gone: $(cat "$TMP/reply")"
wait_claims 0
echo "# tid $REUSED given to uid daemon's new task under the grant: $(chrt -p $REUSED | tr '\n' ' '), CPUs $mask"
stop_daemon
