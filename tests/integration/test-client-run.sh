#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplace-run with real programs and a real rtplaced: two RT instances
# started together get different CPUs and SCHED_FIFO 50 (read back from
# the kernel); their claims end when they exit, however they exit; no
# helper process remains; the local fallback (under the daemon's
# configuration: housekeeping CPUs) and --strict with no daemon; partial
# answers (a warning, or 75 with --strict); refusals that name the claims
# holding the CPUs, in words without a priority for a pin alone; an RT
# policy inherited from chrt
# claimed at its level; --manage refused by a simulated daemon; one-line
# usage errors; exit statuses 64, 69, 75, 77, 78, 127.
# (--manage on the live machine: test-client-sub.)
#
# The RT "busy loop" (test-client-spin) works 200 us per 1 ms and only
# sleeps when placed on CPU 0, exits by itself after 20 s, and this script,
# a normal-priority process, kills it when done or failing.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

# The kernel's view of a process: "POLICY PRIO CPULIST".
sched_of() {
	python3 -c "
import os, sys
pid = int(sys.argv[1])
pol = {0: 'other', 1: 'fifo', 2: 'rr'}.get(os.sched_getscheduler(pid), '?')
prio = os.sched_getparam(pid).sched_priority
cpus = ','.join(str(c) for c in sorted(os.sched_getaffinity(pid)))
print(pol, prio, cpus)" "$1"
}

# Waits (bounded) until process $1 runs the program named $2.
wait_exec() {
	i=0
	until [ "$(basename "$(readlink /proc/"$1"/exe 2>/dev/null)")" = "$2" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "process $1 never became $2"
		sleep 0.05
	done
}

ncpus=$(python3 -c "import os; print(len(os.sched_getaffinity(0)))")

# Usage errors and unknown commands need neither root nor a daemon.
expect_status 64 "$RUN" --prio 0 -- true
expect_status 64 "$RUN" --cpus 2 --cpu-list 1 -- true
expect_status 64 "$RUN" --policy rr -- true
expect_status 64 "$RUN"
expect_status 127 "$RUN" --socket "$SOCK" -- no-such-command-rtplace
grep -q "no-such-command-rtplace: command not found" "$TMP/err" || fail "127 message: $(cat "$TMP/err")"
expect_status 0 "$RUN" --help
# Usage errors are one line naming the problem and where the help is.
for args in "--prio 0 -- true" "--cpus 2 --cpu-list 1 -- true" "--policy rr -- true" "" "--bogus -- true" \
	"-c" "--cpus 1-3 -- true"; do
	# shellcheck disable=SC2086
	expect_status 64 "$RUN" $args
	[ "$(wc -l <"$TMP/err")" = 1 ] || fail "'rtplace-run $args' printed $(wc -l <"$TMP/err") lines: $(cat "$TMP/err")"
	grep -q "^rtplace-run: .*; see 'rtplace-run --help'\$" "$TMP/err" || fail "'rtplace-run $args': $(cat "$TMP/err")"
done
grep -q -- "--cpu-list" "$TMP/err" || fail "--cpus LIST does not point to --cpu-list: $(cat "$TMP/err")"
# More CPUs than this process may use: says how many there are.
expect_status 64 "$RUN" --socket "$SOCK" --cpus $((ncpus + 1)) -- true
grep -q "may run on $ncpus CPUs" "$TMP/err" || fail "count above the machine: $(cat "$TMP/err")"

# No daemon: --strict refuses (69); otherwise a warning and a local choice.
expect_status 69 "$RUN" --socket "$SOCK" --strict -- true
grep -q "cannot reach rtplaced at $SOCK" "$TMP/err" || fail "strict message: $(cat "$TMP/err")"
# Only the daemon isolates: --isolate never falls back, the command never runs.
expect_status 69 "$RUN" --socket "$SOCK" --isolate -- touch "$TMP/ran"
grep -q "cannot reach rtplaced at $SOCK" "$TMP/err" || fail "isolate without a daemon: $(cat "$TMP/err")"
[ ! -e "$TMP/ran" ] || fail "rtplace-run --isolate ran the command without a daemon"
expect_status 0 "$RUN" --socket "$SOCK" --cpus 1 -- sh -c 'echo "$RTPLACE_CPUS"; grep Cpus_allowed_list /proc/self/status'
grep -q "warning: cannot reach rtplaced" "$TMP/err" || fail "fallback warning: $(cat "$TMP/err")"
cpu=$(head -1 "$TMP/out")
grep -q "Cpus_allowed_list:[[:space:]]*$cpu\$" "$TMP/out" || fail "fallback affinity: $(cat "$TMP/out")"
[ -n "$cpu" ] && [ "$cpu" -ge 0 ] || fail "fallback chose no CPU"

# The fallback follows the daemon's configuration (--config, else the
# default path): housekeeping CPUs are never chosen, whatever the pid.
if [ "$ncpus" -ge 2 ]; then
	printf '[placement]\nhousekeeping-cpus = 0\n' >"$TMP/hk.conf"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		expect_status 0 "$RUN" --socket "$SOCK" --config "$TMP/hk.conf" -- sh -c 'echo "$RTPLACE_CPUS"'
		[ "$(cat "$TMP/out")" != 0 ] || fail "the local choice took housekeeping CPU 0 (run $i)"
	done
	# Two CPUs asked, one left after the housekeeping CPU: a warning.
	expect_status 0 "$RUN" --socket "$SOCK" --config "$TMP/hk.conf" --cpus 2 -- sh -c 'echo "$RTPLACE_CPUS"'
	[ "$(cat "$TMP/out")" != 0 ] && ! grep -q '^0[,-]' "$TMP/out" ||
		fail "the local choice took housekeeping CPU 0: $(cat "$TMP/out")"
	grep -q "warning: got $((ncpus - 1)) of 2 CPUs" "$TMP/err" || [ "$ncpus" -gt 2 ] ||
		fail "no partial-answer warning: $(cat "$TMP/err")"
fi
# Every CPU housekeeping: a pin alone (no --prio) is refused (75) in its own
# words, not as a priority the user never gave.
printf '[placement]\nhousekeeping-cpus = 0-%d\n' $((ncpus - 1)) >"$TMP/allhk.conf"
expect_status 75 "$RUN" --socket "$SOCK" --config "$TMP/allhk.conf" -- echo ran
[ ! -s "$TMP/out" ] || fail "the command ran with every CPU housekeeping"
grep -q "^rtplace-run: no free CPU for a pinned (normal-level) placement here: .*(housekeeping-cpus of $TMP/allhk.conf)\$" \
	"$TMP/err" && ! grep -q "priority 1" "$TMP/err" || fail "local refusal of a pin: $(cat "$TMP/err")"
# A configuration with errors, or one that is not there, is refused (78),
# naming the file (and the line).
printf '[placement]\nhousekeeping-cpu = 0\n' >"$TMP/bad.conf"
expect_status 78 "$RUN" --socket "$SOCK" --config "$TMP/bad.conf" -- true
grep -q "$TMP/bad.conf:2: unknown key 'housekeeping-cpu'" "$TMP/err" || fail "bad --config: $(cat "$TMP/err")"
expect_status 78 "$RUN" --socket "$SOCK" --config "$TMP/none.conf" -- true
grep -q "cannot read the configuration: $TMP/none.conf: No such file" "$TMP/err" || fail "missing --config: $(cat "$TMP/err")"
# One that is not a regular file is refused at once, saying what it is: a
# FIFO blocked, /dev/zero was "File descriptor in bad state".
mkfifo "$TMP/fifo.conf"
expect_status 78 timeout 10 "$RUN" --socket "$SOCK" --config /dev/zero -- true
grep -q "cannot read the configuration: /dev/zero is not a regular file (a character device)" "$TMP/err" ||
	fail "--config /dev/zero: $(cat "$TMP/err")"
expect_status 78 timeout 10 "$RUN" --socket "$SOCK" --config "$TMP/fifo.conf" -- true
grep -q "cannot read the configuration: $TMP/fifo.conf is not a regular file (a FIFO)" "$TMP/err" ||
	fail "--config FIFO: $(cat "$TMP/err")"

start_daemon

# The command's exit status passes through; the claim ends with it.
expect_status 3 "$RUN" --socket "$SOCK" -- sh -c 'exit 3'
expect_status 0 "$RUN" --socket "$SOCK" -- sh -c 'test -n "$RTPLACE_CLAIM_ID"'
wait_claims 0
# A daemon that isolates nothing refuses --isolate, saying so, and the
# command does not run.
expect_status 69 "$RUN" --socket "$SOCK" --isolate -- touch "$TMP/ran"
grep -q "this daemon isolates nothing" "$TMP/err" || fail "--isolate refused: $(cat "$TMP/err")"
[ ! -e "$TMP/ran" ] || fail "rtplace-run --isolate ran the command though the daemon refused"
wait_claims 0
# A simulated daemon manages no threads: a warning with its reason and the
# command runs placed but unmanaged; --strict refuses instead.
expect_status 0 "$RUN" --socket "$SOCK" --manage -- sh -c 'test -n "$RTPLACE_CLAIM_ID"'
grep -q "does not manage threads (managed threads need the live machine" "$TMP/err" ||
	fail "--manage warning: $(cat "$TMP/err")"
expect_status 69 "$RUN" --socket "$SOCK" --manage --strict -- true
wait_claims 0
expect_status 137 "$RUN" --socket "$SOCK" -- sh -c 'kill -9 $$'
wait_claims 0
expect_status 65 "$RUN" --socket "$SOCK" --node 7 -- true
expect_status 0 "$RUN" --socket "$SOCK" --cpu-list 1 -- sh -c 'grep Cpus_allowed_list /proc/self/status'
grep -q "Cpus_allowed_list:[[:space:]]*1\$" "$TMP/out" || fail "--cpu-list 1: $(cat "$TMP/out")"

# Fewer free CPUs than asked: the command runs on those found, with a
# warning (0); with --strict it does not run (75). CPU 1 is held by an
# exclusive claim of this shell.
if [ "$ncpus" = 2 ]; then
	expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 1 -c 1 --claim 0 --owner $$ --exclusive
	held=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
	expect_status 0 "$RUN" --socket "$SOCK" --cpus 2 -- sh -c 'echo "$RTPLACE_CPUS"'
	[ "$(cat "$TMP/out")" = 0 ] || fail "partial answer ran on $(cat "$TMP/out")"
	grep -qx "rtplace-run: warning: got 1 of 2 CPUs: CPU 1 held by claim $held (.*)" "$TMP/err" ||
		fail "partial answer warning does not name claim $held: $(cat "$TMP/err")"
	expect_status 75 "$RUN" --socket "$SOCK" --cpus 2 --strict -- echo ran
	[ ! -s "$TMP/out" ] || fail "--strict ran the command on a partial answer"
	expect_status 0 "$CTL" --socket "$SOCK" release "$held"
	wait_claims 0
fi

require_root
[ "$ncpus" -ge 2 ] || skip "needs 2 CPUs"

# Missing permission for RT policies: 77, naming the fixes.
if command -v setpriv >/dev/null; then
	stage_programs "$RUN"
	expect_status 77 setpriv --reuid 65534 --regid 65534 --clear-groups "$STAGED/rtplace-run" --socket "$SOCK" \
		--prio 50 -- true
	grep -q "CAP_SYS_NICE" "$TMP/err" && grep -q "RLIMIT_RTPRIO" "$TMP/err" || fail "77 message: $(cat "$TMP/err")"
	wait_claims 0
fi

# Every CPU held by claims of another process: a pin alone (no --prio)
# exits 75 naming the claims that hold them and their owner, never "priority 1" (its wire
# priority, which the user did not give); --cpu-list and --prio say the
# same of their CPUs.
sleep 60 &
holder=$!
PIDS="$PIDS $holder"
claim_of() {
	python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['claim']['id'])" "$TMP/out"
}
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 1 -c 0 --claim 600000 --owner $holder --exclusive
c0=$(claim_of)
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 -c 1 --claim 600000 --owner $holder
c1=$(claim_of)
# Each claim's owner as root sees it: rtplacectl claims' list.
owner="owner pid $holder sleep, uid 0"
expect_status 75 taskset -c 0,1 "$RUN" --socket "$SOCK" -- echo ran
[ ! -s "$TMP/out" ] || fail "a pin ran on held CPUs"
grep -qx "rtplace-run: no free CPU for a pinned (normal-level) claim among CPUs 0-1: CPU 0 held by claim $c0 \
(exclusive, $owner), CPU 1 held by claim $c1 (at rt50, $owner)" "$TMP/err" && ! grep -q "priority 1" "$TMP/err" ||
	fail "refused pin does not name claims $c0 and $c1: $(cat "$TMP/err")"
expect_status 75 "$RUN" --socket "$SOCK" --cpu-list 1 -- true
grep -qx "rtplace-run: no free CPU for a pinned claim on CPU 1: CPU 1 held by claim $c1 (at rt50, $owner)" "$TMP/err" ||
	fail "refused --cpu-list 1: $(cat "$TMP/err")"
expect_status 75 taskset -c 0,1 "$RUN" --socket "$SOCK" --prio 40 -- true
grep -qx "rtplace-run: no CPU for priority 40 among CPUs 0-1: CPU 0 held by claim $c0 (exclusive, $owner), CPU 1 \
held by claim $c1 (at rt50, $owner)" "$TMP/err" || fail "refused --prio 40: $(cat "$TMP/err")"
kill "$holder"
wait "$holder" 2>/dev/null
wait_claims 0

# Started under chrt without --prio: the policy stays, and the CPUs are
# chosen and claimed at the level it runs at (rt10), not at rt1.
expect_status 0 chrt -f 10 "$RUN" --socket "$SOCK" --verbose -- sh -c \
	'"$1" --socket "$2" --json cpus >"$3"; chrt -p $$' sh "$CTL" "$SOCK" "$TMP/cpus.json"
grep -q "SCHED_FIFO 10 (inherited)" "$TMP/err" || fail "inherited policy not said: $(cat "$TMP/err")"
grep -q "scheduling policy: SCHED_FIFO" "$TMP/out" && grep -q "scheduling priority: 10" "$TMP/out" ||
	fail "inherited policy lost: $(cat "$TMP/out")"
python3 -c "
import json, sys
claimed = [c for c in json.load(open(sys.argv[1]))['cpus'] if c['claim']]
assert len(claimed) == 1 and claimed[0]['claim_level'] == 'rt10', claimed
" "$TMP/cpus.json" || fail "claim under chrt -f 10: $(cat "$TMP/cpus.json")"
wait_claims 0

# Two RT instances started together.
rt_lock
"$RUN" --socket "$SOCK" --prio 50 --cpus 1 -- "$SPIN" 20 &
a=$!
"$RUN" --socket "$SOCK" --prio 50 --cpus 1 -- "$SPIN" 20 &
b=$!
PIDS="$a $b"
wait_exec "$a" test-client-spin
wait_exec "$b" test-client-spin
set -- $(sched_of "$a")
pol_a=$1 prio_a=$2 cpus_a=$3
set -- $(sched_of "$b")
pol_b=$1 prio_b=$2 cpus_b=$3
[ "$pol_a $prio_a" = "fifo 50" ] || fail "instance A runs $pol_a $prio_a"
[ "$pol_b $prio_b" = "fifo 50" ] || fail "instance B runs $pol_b $prio_b"
case "$cpus_a$cpus_b" in *,*) fail "an instance has several CPUs: $cpus_a / $cpus_b" ;; esac
[ "$cpus_a" != "$cpus_b" ] || fail "both instances on CPU $cpus_a"
# /proc/PID/sched agrees (policy 1 = SCHED_FIFO, kernel prio 99 - 50).
grep -q "^policy  *: *1\$" /proc/"$a"/sched || fail "/proc/$a/sched policy"
grep -q "^prio  *: *49\$" /proc/"$a"/sched || fail "/proc/$a/sched prio"
# No helper stayed behind: the claimed process is the spinner itself.
[ -z "$(pgrep -P "$a")" ] || fail "instance A has children"
# The daemon holds a claim on each CPU, at rt50.
wait_claims 2
"$CTL" --socket "$SOCK" --json cpus | python3 -c "
import json, sys
d = json.load(sys.stdin)['cpus']
for cpu in ($cpus_a, $cpus_b):
    assert d[cpu]['claim'] and d[cpu]['claim_level'] == 'rt50', d[cpu]
assert d[$cpus_a]['claim'] != d[$cpus_b]['claim']
" || fail "claims not on CPUs $cpus_a and $cpus_b"

# A third instance finds no CPU below rt50 among this machine's two (75),
# unless the machine has more.
if [ "$ncpus" = 2 ]; then
	expect_status 75 "$RUN" --socket "$SOCK" --prio 50 -- true
	grep -q "no CPU for priority 50" "$TMP/err" || fail "75 message: $(cat "$TMP/err")"
fi

kill "$a" "$b"
wait "$a" "$b" 2>/dev/null
PIDS=
wait_claims 0
stop_daemon
exit 0
