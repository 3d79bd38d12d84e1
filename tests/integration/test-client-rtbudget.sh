#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A cpu cgroup with no RT budget (RT group scheduling, cgroup v1; root):
# moving a process in it to SCHED_FIFO through the daemon, and rtplace-run
# --prio started in it, fail with a message that names the cgroup and the
# fix. The processes sleep; the cgroup is removed on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
V1=/sys/fs/cgroup/cpu
[ -f "$V1/cpu.rt_runtime_us" ] || skip "no cgroup v1 cpu controller with RT group scheduling at $V1"
CG=$V1/rtplace-rtbudget.$$
mkdir "$CG" || fail "cannot create $CG"
# After cleanup has killed (and reaped) what ran in the folder.
trap 'cleanup; rmdir "$CG"' EXIT
[ "$(cat "$CG/cpu.rt_runtime_us")" = 0 ] || fail "a new cpu cgroup has budget $(cat "$CG/cpu.rt_runtime_us"), want 0"
fix="echo [0-9]* > $CG/cpu.rt_runtime_us"

start_live_daemon

sh -c "echo \$\$ >'$CG/cgroup.procs' && exec sleep 60" &
SLEEPER=$!
PIDS="$PIDS $SLEEPER"
i=0
until grep -qx "$SLEEPER" "$CG/cgroup.procs"; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "the sleeper never joined $CG"
	sleep 0.05
done
expect_status 77 "$CTL" --socket "$SOCK" move --tid "$SLEEPER" --prio 10
# The daemon's reason itself names the cgroup and the fix, whole.
grep -q "move refused: no RT budget: cpu cgroup $CG has cpu.rt_runtime_us 0" "$TMP/err" ||
	fail "move: the daemon's reason does not name the cgroup: $(cat "$TMP/err")"
grep -q "$fix" "$TMP/err" || fail "move: no fix: $(cat "$TMP/err")"
grep -q -- "--cpu-rt-runtime" "$TMP/err" || fail "move: no container fix: $(cat "$TMP/err")"
[ "$(chrt -p "$SLEEPER" | grep -c SCHED_OTHER)" = 1 ] || fail "the sleeper's policy changed: $(chrt -p "$SLEEPER")"
grep -q "cpu.rt_runtime_us 0" "$TMP/rtplaced.log" || fail "the daemon did not log the fix"
# A process-wide move says the same.
expect_status 77 "$CTL" --socket "$SOCK" move --pid "$SLEEPER" --all --prio 10
grep -q "$fix" "$TMP/err" || fail "move --all: no fix: $(cat "$TMP/err")"

# rtplace-run started in the folder: the same words, and COMMAND never runs.
expect_status 77 sh -c "echo \$\$ >'$CG/cgroup.procs' && exec '$RUN' --socket '$SOCK' --config '$CONF' --prio 10 -- echo ran"
grep -q "ran" "$TMP/out" && fail "rtplace-run ran COMMAND without its policy"
grep -q "no RT budget: cpu cgroup $CG has cpu.rt_runtime_us 0" "$TMP/err" ||
	fail "rtplace-run does not name the cgroup: $(cat "$TMP/err")"
grep -q "$fix" "$TMP/err" || fail "rtplace-run: no fix: $(cat "$TMP/err")"

# explain says it of the thread that would run there: the claim's owner,
# else rtplacectl itself.
expect_status 0 "$CTL" --socket "$SOCK" explain --prio 10 --claim 0 --owner "$SLEEPER"
grep -q "^thread  no RT budget: cpu cgroup $CG has cpu.rt_runtime_us 0" "$TMP/out" && grep -q "$fix" "$TMP/out" ||
	fail "explain of the sleeper names no budget: $(cat "$TMP/out")"
expect_status 0 sh -c "echo \$\$ >'$CG/cgroup.procs' && exec '$CTL' --socket '$SOCK' --json explain --prio 10"
python3 -c "
import json, sys
o = [o for o in json.load(open(sys.argv[1]))['obstacles'] if o['kind'] == 'rt-budget']
assert len(o) == 1 and sys.argv[2] in o[0]['why'], o
" "$TMP/out" "$CG/cpu.rt_runtime_us" || fail "explain from inside $CG: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" explain --prio 10
grep -q "no RT budget" "$TMP/out" && fail "explain from outside $CG names a budget: $(cat "$TMP/out")"

# With a budget the same move goes through: the budget was the cause.
echo 10000 >"$CG/cpu.rt_runtime_us" || fail "cannot give $CG a budget"
expect_status 0 "$CTL" --socket "$SOCK" move --tid "$SLEEPER" --prio 10
exit 0
