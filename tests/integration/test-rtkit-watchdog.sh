#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The RealtimeKit starvation watchdog: a runaway made RT through
# RealtimeKit1 (busy 99% in bursts shorter than its hard RLIMIT_RTTIME, on
# CPU 1, bounded by a normal-priority timeout on CPU 0) is sent back to
# SCHED_OTHER within its bound, its claim ends, the next request is refused
# with AccessDenied for watchdog-refuse-sec, and the metrics count it.
# Subscribers see a watchdog record naming the thread, the CPU it starved
# and the policy it had: root's watcher, and nobody's (the thread's owner).
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

[ "$(nproc --all)" -ge 2 ] || skip "needs 2 CPUs (the runaway keeps off CPU 0)"
SPINNER=$top_builddir/tests/integration/test-rtkit-spin
[ -x "$SPINNER" ] || skip "test-rtkit-spin is not built"
stage_programs "$SPINNER" "$CTL"
rt_lock
start_bus
METRICS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RK_CONF_HEAD="[daemon]
socket-mode = 0666
[metrics]
listen = 127.0.0.1:$METRICS_PORT"
start_rtkit_daemon "watchdog-interval-ms = 500" "watchdog-refuse-sec = 30"
# Two JSON watchers, root's and nobody's, bounded in time; both are
# subscribed once a move of nobody's sleeper reaches them.
$NOBODY sleep 60 &
SLEEPER=$!
PIDS="$PIDS $SLEEPER"
timeout 30 "$CTL" --socket "$SOCK" --json watch >"$TMP/watch-root" 2>"$TMP/watch-root.err" &
PIDS="$PIDS $!"
timeout 30 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" --json watch >"$TMP/watch-nobody" \
	2>"$TMP/watch-nobody.err" &
PIDS="$PIDS $!"
cpu=0
i=0
until grep -q "\"tid\": $SLEEPER," "$TMP/watch-root" && grep -q "\"tid\": $SLEEPER," "$TMP/watch-nobody"; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "the watchers saw no move: $(cat "$TMP/watch-root.err" "$TMP/watch-nobody.err")"
	"$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list $cpu >/dev/null || fail "cannot move the sleeper"
	cpu=$((1 - cpu))
	sleep 0.05
done

start_spinner
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
metric_is rtplace_rtkit_watchdog_demotions_total 1 || fail "demotions: $(metric rtplace_rtkit_watchdog_demotions_total)"
echo "# $(grep 'RealtimeKit watchdog: thread' "$TMP/rtplaced.log" | sed 's/.*watchdog: //')"

# Requests are refused for watchdog-refuse-sec.
$NOBODY dbus-send --system --print-reply --dest=$RK_DEST $RK_PATH org.freedesktop.RealtimeKit1.MakeThreadRealtimeWithPID \
	uint64:$SPIN uint64:$SPIN uint32:5 >"$TMP/out" 2>&1 && fail "a request after the demotion was granted"
grep -q "^Error org.freedesktop.DBus.Error.AccessDenied: " "$TMP/out" || fail "refused with $(cat "$TMP/out")"
metric_is 'rtplace_rtkit_refusals_total{reason="watchdog"}' 1 ||
	fail "the watchdog refusal is not counted: $(metric 'rtplace_rtkit_refusals_total{reason="watchdog"}')"
chrt -p $SPIN | grep -q "policy: SCHED_OTHER" || fail "the refused request changed $(chrt -p $SPIN)"
kill $SPIN

# The records, read by root's watcher and by nobody's (the thread's
# owner): type 6, the spinner, nobody's uid, CPU 1 starved, rr 5 before
# the demotion.
for w in root nobody; do
	i=0
	until grep -q '"type": "watchdog"' "$TMP/watch-$w"; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "$w's watcher saw no watchdog record: $(cat "$TMP/watch-$w" "$TMP/watch-$w.err")"
		sleep 0.05
	done
	python3 -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if '\"watchdog\"' in l]
assert len(recs) == 1, recs
r = recs[0]
assert r['type_id'] == 6 and r['tid'] == int(sys.argv[2]) and r['uid'] == int(sys.argv[3]), r
assert r['from_cpu'] == 1 and r['to_cpu'] == -1 and r['policy'] == 'rr' and r['prio'] == 5, r
" "$TMP/watch-$w" $SPIN "$(id -u nobody)" || fail "$w's watchdog record: $(grep watchdog "$TMP/watch-$w")"
done
stop_daemon
