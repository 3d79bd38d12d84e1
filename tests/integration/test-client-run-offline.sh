#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplace-run when the CPU rtplaced chose goes offline before rtplace-run
# pins to it (root, live daemon, real hotplug of CPU 1): it chooses again
# among the other CPUs, bounded, and the command runs there; with no other
# CPU left (--cpu-list 1) it exits 75 (EX_TEMPFAIL) saying so, and the
# command never runs. The race is injected by a preloaded
# sched_setaffinity() that takes CPU 1 offline just before the first pin
# to it. CPU 1 is put back online on every exit path; the test holds the
# RT-test lock throughout, as every test that takes a CPU offline does.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
SHIM=$top_builddir/tests/integration/.libs/libofflinepin.so
ONLINE=/sys/devices/system/cpu/cpu1/online
[ -f "$SHIM" ] || skip "the preload shim $SHIM is not built"
[ -w "$ONLINE" ] || skip "CPU 1 cannot be taken offline here ($ONLINE)"
rt_lock
[ "$(cat "$ONLINE")" = 1 ] || echo 1 >"$ONLINE" || fail "CPU 1 is offline and cannot be put back"
trap 'echo 1 >"$ONLINE"; cleanup' EXIT

# Runs rtplace-run "$@" with the race injected, output in $TMP/out, $TMP/err.
run_racing() {
	RTPLACE_TEST_OFFLINE_CPU=1 LD_PRELOAD=$SHIM ASAN_OPTIONS=verify_asan_link_order=0 \
		"$RUN" --socket "$SOCK" --config "$CONF" "$@" >"$TMP/out" 2>"$TMP/err"
}

# Waits (bounded) until the daemon reports CPU 1 online again.
wait_cpu1_online() {
	i=0
	until "$CTL" --socket "$SOCK" --json cpus | python3 -c '
import json, sys
sys.exit(0 if any(c["cpu"] == 1 and c["level"] != "offline" for c in json.load(sys.stdin)["cpus"]) else 1)'; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "the daemon never saw CPU 1 online again: $("$CTL" --socket "$SOCK" cpus 2>&1)"
		sleep 0.05
	done
}

start_live_daemon
# An rt1 claim on CPU 0, so that an rt50 answer is CPU 1 (a CPU claimed
# below a priority is still eligible, after unclaimed ones).
"$RUN" --socket "$SOCK" --config "$CONF" --prio 1 --cpu-list 0 -- sleep 60 &
PIDS="$PIDS $!"
wait_claims 1

run_racing --prio 50 --cpus 1 -v -- sh -c 'grep Cpus_allowed_list /proc/self/status'
st=$?
[ "$(cat "$ONLINE")" = 0 ] || fail "the shim did not take CPU 1 offline: $(cat "$TMP/err")"
[ $st = 0 ] || fail "rtplace-run exited $st when CPU 1 went offline before the pin: $(cat "$TMP/err")"
grep -q "CPUs 1 went offline before they could be pinned to; choosing again" "$TMP/err" ||
	fail "rtplace-run did not say it chose again: $(cat "$TMP/err")"
grep -q "rtplace-run: CPUs 0 (claim [0-9]*)" "$TMP/err" || fail "the second choice is not a claim on CPU 0: $(cat "$TMP/err")"
grep -qx "Cpus_allowed_list:[[:space:]]*0" "$TMP/out" || fail "the command did not run on CPU 0: $(cat "$TMP/out")"
echo 1 >"$ONLINE" || fail "cannot put CPU 1 back online"
wait_cpu1_online
wait_claims 1

# Nothing else to choose: a clear error, and the command never runs.
run_racing --prio 50 --cpu-list 1 -- touch "$TMP/ran"
st=$?
[ $st = 75 ] || fail "rtplace-run --cpu-list 1 exited $st with CPU 1 gone, want 75: $(cat "$TMP/err")"
grep -q "cannot pin to CPUs 1: Invalid argument; they went offline or left this process's cpuset, and no other CPU is left to choose" "$TMP/err" ||
	fail "no clear error: $(cat "$TMP/err")"
[ ! -e "$TMP/ran" ] || fail "the command ran although it could not be pinned"
echo 1 >"$ONLINE" || fail "cannot put CPU 1 back online"
wait_cpu1_online
# The failed choices left no claim behind: only the sleeper's.
wait_claims 1
echo "PASS: rtplace-run chooses again when its CPU goes offline before the pin"
