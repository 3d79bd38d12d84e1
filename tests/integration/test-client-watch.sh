#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplacectl move and watch against rtplaced on the live machine (root):
# the move reply in both forms; the record of a `rtplacectl move` as a table
# line with its wall-clock time and as one JSON object per line (an ISO time
# beside the monotonic one); a clean exit (0) on SIGTERM and
# SIGINT; exit 69 when the daemon stops; an unprivileged watcher (setpriv)
# sees only its own threads' records. No RT work: the threads moved are
# sleeping `sleep` processes.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"

NOBODY="setpriv --reuid 65534 --regid 65534 --clear-groups"
stage_programs "$CTL"
# Moves go to CPU 1, which test-hotplug-live takes offline under this lock.
rt_lock

# The unprivileged watcher must be able to reach and connect to the socket.
chmod 755 "$TMP"
printf '[daemon]\nsocket-mode = 0666\n' >"$TMP/rtplaced.conf"
start_live_daemon --config "$TMP/rtplaced.conf"
[ "$(status_field moves_served)" = True ] || fail "the live daemon does not serve moves"

sleep 60 &
SLEEPER=$!
PIDS="$PIDS $SLEEPER"

# The move reply, human then JSON.
expect_status 0 "$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list 0
expect_status 0 "$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list 1
grep -qx "thread $SLEEPER: other 0 on 1 (was other 0 on 0)" "$TMP/out" || fail "move line: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" --json move --tid $SLEEPER --cpu-list 0
python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
assert m == {'tid': int(sys.argv[2]), 'all': False, 'policy': 'other', 'prio': 0, 'cpu_list': '0',
             'prev_policy': 'other', 'prev_prio': 0, 'prev_cpu_list': '1'}, m
" "$TMP/out" $SLEEPER || fail "move JSON: $(cat "$TMP/out")"
expect_status 65 "$CTL" --socket "$SOCK" move --tid 999999 --cpu-list 0
grep -q "does not exist" "$TMP/err" || fail "vanished thread: $(cat "$TMP/err")"

# Human: the header is printed once subscribed, then the record of the move.
"$CTL" --socket "$SOCK" watch --count 1 >"$TMP/w1" 2>"$TMP/w1.err" &
W=$!
PIDS="$PIDS $W"
wait_lines "$TMP/w1" 1
grep -q '^ *SEQ  *TIME  *TYPE  *TID  *UID  *FROM  *TO  *SCHED  *CLAIM$' "$TMP/w1" || fail "header: $(cat "$TMP/w1")"
expect_status 0 "$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list 1
wait $W || fail "watch --count 1 exited $?: $(cat "$TMP/w1.err")"
[ "$(wc -l <"$TMP/w1")" = 2 ] || fail "watch printed: $(cat "$TMP/w1")"
tail -n 1 "$TMP/w1" | awk -v tid=$SLEEPER '$3 == "moved" && $4 == tid && $5 == 0 && $6 == 0 && $7 == 1 &&
	$8 == "other" && $9 == "-" && NF == 9 { ok = 1 } END { exit !ok }' || fail "record line: $(cat "$TMP/w1")"
# TIME is the wall-clock time of the move (local, as date prints it), not
# seconds since boot: it lies within minutes of now (80 columns: the time
# of day, today's unless the test ran across midnight).
tail -n 1 "$TMP/w1" | python3 -c "
import datetime, sys
t = datetime.datetime.strptime(sys.stdin.read().split()[1], '%H:%M:%S.%f')
now = datetime.datetime.now()
t = t.replace(year=now.year, month=now.month, day=now.day)
if t - now > datetime.timedelta(hours=12):
    t -= datetime.timedelta(days=1)
assert abs((t - datetime.datetime.now()).total_seconds()) < 600, t
" || fail "record time is not wall-clock time: $(cat "$TMP/w1")"

# JSON has no header: move until the watcher has printed its record.
"$CTL" --socket "$SOCK" --json watch --count 1 >"$TMP/w2" 2>"$TMP/w2.err" &
W=$!
PIDS="$PIDS $W"
cpu=0
i=0
until [ -s "$TMP/w2" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "json watch printed nothing: $(cat "$TMP/w2.err")"
	"$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list $cpu >/dev/null || fail "move to $cpu"
	cpu=$((1 - cpu))
	sleep 0.05
done
wait $W || fail "json watch --count 1 exited $?: $(cat "$TMP/w2.err")"
[ "$(wc -l <"$TMP/w2")" = 1 ] || fail "json watch printed: $(cat "$TMP/w2")"
while read -r line; do
	printf '%s\n' "$line" | python3 -m json.tool >/dev/null || fail "not JSON: $line"
done <"$TMP/w2"
python3 -c "
import datetime, json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r['type'] == 'moved' and r['type_id'] == 1 and r['tid'] == int(sys.argv[2]), r
assert r['uid'] == 0 and r['policy'] == 'other' and r['prio'] == 0 and r['claim'] is None and r['level'] is None, r
assert {r['from_cpu'], r['to_cpu']} == {0, 1} and r['seq'] > 0 and r['time_ns'] > 0, r
t = datetime.datetime.fromisoformat(r['time'])
assert t.tzinfo is not None, r
assert abs((t - datetime.datetime.now(datetime.timezone.utc)).total_seconds()) < 600, r
" "$TMP/w2" $SLEEPER || fail "json record: $(cat "$TMP/w2")"

# SIGTERM and SIGINT end a watch cleanly. A file of each watch's own: a
# header left by the previous one would let the signal go before this one
# has its handler, and a background job of a non-interactive shell starts
# with SIGINT ignored, so that SIGINT would be lost.
for sig in TERM INT; do
	"$CTL" --socket "$SOCK" watch >"$TMP/w3.$sig" 2>"$TMP/w3.$sig.err" &
	W=$!
	PIDS="$PIDS $W"
	wait_lines "$TMP/w3.$sig" 1
	kill -s $sig $W
	wait $W || fail "watch exited $? on SIG$sig: $(cat "$TMP/w3.$sig.err")"
done

# An unprivileged watcher sees its own threads' records only: root's
# thread moves first, nobody's second, and the one record printed is
# nobody's.
$NOBODY sleep 60 &
THEIRS=$!
PIDS="$PIDS $THEIRS"
$NOBODY "$STAGED/rtplacectl" --socket "$SOCK" watch --count 1 >"$TMP/w4" 2>"$TMP/w4.err" &
W=$!
PIDS="$PIDS $W"
wait_lines "$TMP/w4" 1
expect_status 0 "$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list 0
expect_status 0 "$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list 1
expect_status 0 "$CTL" --socket "$SOCK" move --tid $THEIRS --cpu-list 1
wait $W || fail "unprivileged watch exited $?: $(cat "$TMP/w4.err")"
[ "$(wc -l <"$TMP/w4")" = 2 ] || fail "unprivileged watch printed: $(cat "$TMP/w4")"
tail -n 1 "$TMP/w4" | awk -v tid=$THEIRS '$3 == "moved" && $4 == tid && $5 == 65534 && $7 == 1 { ok = 1 }
	END { exit !ok }' || fail "unprivileged watcher printed: $(cat "$TMP/w4")"

# The daemon stops: the watcher says so and exits 69.
"$CTL" --socket "$SOCK" watch >"$TMP/w5" 2>"$TMP/w5.err" &
W=$!
PIDS="$PIDS $W"
wait_lines "$TMP/w5" 1
stop_daemon
wait $W
st=$?
[ $st = 69 ] || fail "watch exited $st when the daemon stopped, want 69: $(cat "$TMP/w5.err")"
grep -q "closed the subscription" "$TMP/w5.err" || fail "watch error: $(cat "$TMP/w5.err")"
exit 0
