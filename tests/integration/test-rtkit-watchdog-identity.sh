#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The starvation watchdog demotes a thread by its id, and a thread's id
# outlives it: a runaway granted RT through RealtimeKit1 (on CPU 1, bounded
# by a normal-priority timeout on CPU 0) starves its CPU, the watchdog is
# held (a test build's hold, RTPLACED_TEST_RTKIT_WATCHDOG_HOLD) before it
# demotes it, and meanwhile the runaway is killed and its id given to a new
# SCHED_FIFO task of root's (clone3 with set_tid). The watchdog finds the
# thread it granted gone, says so, and leaves root's task SCHED_FIFO; its
# claim ends.
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

[ "$(nproc --all)" -ge 2 ] || skip "needs 2 CPUs (the runaway keeps off CPU 0)"
SPINNER=$top_builddir/tests/integration/test-rtkit-spin
[ -x "$SPINNER" ] || skip "test-rtkit-spin is not built"
stage_programs "$SPINNER"
start_held_rtkit_daemon RTPLACED_TEST_RTKIT_WATCHDOG_HOLD "watchdog-interval-ms = 500"

start_spinner
$NOBODY busctl --system call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtimeWithPID ttu $SPIN $SPIN 5 ||
	fail "the spinner's request was refused"
wait_grep "test hold before demoting thread $SPIN" "$TMP/rtplaced.log" "the watchdog did not reach its hold"

# The runaway ends; its id becomes root's SCHED_FIFO task.
kill -KILL $SPIN
i=0
while [ -e /proc/$SPIN ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the runaway $SPIN did not go"
	sleep 0.02
done
reuse_pid $SPIN 0 0 3
chrt -p $SPIN | grep -q "policy: SCHED_FIFO$" || fail "root's task is $(chrt -p $SPIN)"

: >"$TMP/hold"
wait_grep "RealtimeKit watchdog: thread $SPIN exited before its demotion" "$TMP/rtplaced.log" \
	"the watchdog did not see its thread gone"
chrt -p $SPIN | grep -q "policy: SCHED_FIFO$" || fail "the watchdog demoted root's task: $(chrt -p $SPIN)"
chrt -p $SPIN | grep -q "priority: 3$" || fail "root's task is $(chrt -p $SPIN)"
wait_claims 0
echo "# tid $SPIN given to root's SCHED_FIFO task under the watchdog: $(chrt -p $SPIN | tr '\n' ' ')"
stop_daemon
