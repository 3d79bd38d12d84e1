#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The RealtimeKit starvation watchdog: a runaway made RT through
# RealtimeKit1 (busy 99% in bursts shorter than its hard RLIMIT_RTTIME, on
# CPU 1, bounded by a normal-priority timeout on CPU 0) is sent back to
# SCHED_OTHER within its bound, its claim ends, the next request is refused
# with AccessDenied for watchdog-refuse-sec, and the metrics count it.
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

[ "$(nproc --all)" -ge 2 ] || skip "needs 2 CPUs (the runaway keeps off CPU 0)"
SPINNER=$top_builddir/tests/integration/test-rtkit-spin
[ -x "$SPINNER" ] || skip "test-rtkit-spin is not built"
stage_programs "$SPINNER"
rt_lock
start_bus
METRICS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RK_CONF_HEAD="[metrics]
listen = 127.0.0.1:$METRICS_PORT"
start_rtkit_daemon "watchdog-interval-ms = 500" "watchdog-refuse-sec = 30"
metric() {
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
		"http://127.0.0.1:$METRICS_PORT/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}

# The bound: 8 s from a normal-priority timeout on CPU 0, and the spinner's
# own 6 s.
taskset -c 0 timeout -s KILL 8 $NOBODY prlimit --rttime=200000 taskset -c 1 "$STAGED/test-rtkit-spin" 6 &
BOUND=$!
PIDS="$PIDS $BOUND"
i=0
until SPIN=$(pgrep -P $BOUND -x test-rtkit-spin); do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the spinner did not start"
	sleep 0.02
done
PIDS="$SPIN $PIDS"
$NOBODY busctl --system call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtimeWithPID ttu $SPIN $SPIN 5 ||
	fail "the spinner's request was refused"
# Granted under a claim: read from the log, since the watchdog may end the
# claim before a status query could see it on a loaded machine.
grep -q "thread $SPIN of process $SPIN (uid [0-9]*) is SCHED_RR 5 on CPU 1 (claim [0-9]*)" "$TMP/rtplaced.log" ||
	fail "the spinner was not granted rt5 on CPU 1 under a claim: $(grep RealtimeKit "$TMP/rtplaced.log")"

# Demoted within the bound (the watchdog looks every 0.5 s).
i=0
until chrt -p $SPIN 2>/dev/null | grep -q "policy: SCHED_OTHER"; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the runaway is still $(chrt -p $SPIN 2>&1) after 5 s"
	sleep 0.05
done
kill -0 $SPIN 2>/dev/null || fail "the runaway exited before it was demoted"
grep -q "RealtimeKit watchdog: thread $SPIN of process $SPIN .* of CPU 1" "$TMP/rtplaced.log" ||
	fail "the watchdog did not say what it saw: $(grep watchdog "$TMP/rtplaced.log")"
[ "$(taskset -pc $SPIN | sed 's/.*: //')" = 1 ] || fail "the demoted thread lost its own affinity: $(taskset -pc $SPIN)"
wait_claims 0
[ "$(metric rtplace_rtkit_watchdog_demotions_total)" = 1 ] || fail "demotions: $(metric rtplace_rtkit_watchdog_demotions_total)"
echo "# $(grep 'RealtimeKit watchdog: thread' "$TMP/rtplaced.log" | sed 's/.*watchdog: //')"

# Requests are refused for watchdog-refuse-sec.
$NOBODY dbus-send --system --print-reply --dest=$RK_DEST $RK_PATH org.freedesktop.RealtimeKit1.MakeThreadRealtimeWithPID \
	uint64:$SPIN uint64:$SPIN uint32:5 >"$TMP/out" 2>&1 && fail "a request after the demotion was granted"
grep -q "^Error org.freedesktop.DBus.Error.AccessDenied: " "$TMP/out" || fail "refused with $(cat "$TMP/out")"
[ "$(metric 'rtplace_rtkit_refusals_total{reason="watchdog"}')" = 1 ] || fail "the watchdog refusal is not counted"
chrt -p $SPIN | grep -q "policy: SCHED_OTHER" || fail "the refused request changed $(chrt -p $SPIN)"
kill $SPIN
stop_daemon
