#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplacectl move against rtplaced on the live machine (root): init (PID 1),
# a kernel thread (kthreadd, PID 2) and the daemon itself are refused
# without --force, with a reason naming the target, and stay as they were;
# --force lets the move through; `move --pid P --all` moves every thread of
# a process, and puts back those already moved when one thread cannot be
# moved (a SCHED_DEADLINE thread, whose affinity the kernel will not
# narrow). No RT work: every thread moved sleeps.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

THREADS=$top_builddir/tests/integration/test-client-threads

require_root
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"
[ -x "$THREADS" ] || skip "test-client-threads is not built"
# Threads move to CPU 1 (at RT priorities, asleep), and CPU 1 must stay
# online while affinities are compared: hold the RT-test lock.
rt_lock

# "POLICY PRIO CPULIST" of every thread of process $1, one line per thread,
# main thread first.
threads_of() {
	python3 -c "
import os, sys
pid = int(sys.argv[1])
tids = sorted(int(t) for t in os.listdir('/proc/%d/task' % pid))
tids.remove(pid)
for tid in [pid] + tids:
    pol = os.sched_getscheduler(tid) & ~0x40000000  # without SCHED_RESET_ON_FORK
    pol = {0: 'other', 1: 'fifo', 2: 'rr', 6: 'deadline'}.get(pol, '?')
    prio = os.sched_getparam(tid).sched_priority
    cpus = sorted(os.sched_getaffinity(tid))
    print(pol, prio, '%d-%d' % (cpus[0], cpus[-1]) if len(cpus) > 1 and cpus[-1] - cpus[0] == len(cpus) - 1
          else ','.join(map(str, cpus)))" "$1"
}

# Starts test-client-threads with the arguments given; waits until it says
# ready. Its pid in $STARTED.
start_threads() {
	"$THREADS" "$@" >"$TMP/threads.out" 2>"$TMP/threads.err" &
	STARTED=$!
	PIDS="$PIDS $STARTED"
	i=0
	until grep -q ready "$TMP/threads.out" 2>/dev/null; do
		i=$((i + 1))
		kill -0 $STARTED 2>/dev/null || fail "test-client-threads $*: $(cat "$TMP/threads.err")"
		[ $i -lt 200 ] || fail "test-client-threads $* never got ready"
		sleep 0.05
	done
}

start_live_daemon

# Init: refused, named, untouched. Should a daemon move it all the same,
# it is put back before the test fails.
python3 -c "
import os
print(os.sched_getscheduler(1), os.sched_getparam(1).sched_priority, ','.join(map(str, os.sched_getaffinity(1))))
" >"$TMP/init"
init_back() {
	python3 -c "
import os, sys
pol, prio, cpus = open(sys.argv[1]).read().split()
os.sched_setscheduler(1, int(pol), os.sched_param(int(prio)))
os.sched_setaffinity(1, [int(c) for c in cpus.split(',')])" "$TMP/init"
}
before=$(threads_of 1)
"$CTL" --socket "$SOCK" move --tid 1 --prio 10 >"$TMP/out" 2>"$TMP/err"
st=$?
after=$(threads_of 1)
[ "$after" = "$before" ] || { init_back; fail "PID 1 changed: $before -> $after"; }
[ $st = 77 ] || fail "move --tid 1 exited $st, want 77: $(cat "$TMP/err")"
grep -q "thread 1 is of init (pid 1): needs --force" "$TMP/err" || fail "PID 1 refusal: $(cat "$TMP/err")"
"$CTL" --socket "$SOCK" move --pid 1 --all --cpu-list 0 >"$TMP/out" 2>"$TMP/err"
st=$?
after=$(threads_of 1)
[ "$after" = "$before" ] || { init_back; fail "PID 1 changed by --all: $before -> $after"; }
[ $st = 77 ] || fail "move --pid 1 --all exited $st, want 77: $(cat "$TMP/err")"

# A kernel thread: kthreadd.
before=$(threads_of 2)
expect_status 77 "$CTL" --socket "$SOCK" move --pid 2 --cpu-list 0
grep -q "thread 2 (kthreadd): kernel thread, needs --force" "$TMP/err" || fail "kthreadd refusal: $(cat "$TMP/err")"
[ "$(threads_of 2)" = "$before" ] || fail "kthreadd changed: $before -> $(threads_of 2)"

# The daemon itself: refused, and with --force moved (to the CPUs it has).
threads_of "$DAEMON" >"$TMP/d"
daemon_cpus=$(head -1 "$TMP/d" | cut -d' ' -f3)
expect_status 77 "$CTL" --socket "$SOCK" move --pid "$DAEMON" --cpu-list "$daemon_cpus"
grep -q "thread $DAEMON is rtplaced's own: needs --force" "$TMP/err" || fail "self refusal: $(cat "$TMP/err")"
expect_status 0 "$CTL" --socket "$SOCK" move --pid "$DAEMON" --cpu-list "$daemon_cpus" --force

# --all moves every thread; without it only the main thread moves.
start_threads 6
threads_of $STARTED >"$TMP/t"
full=$(head -1 "$TMP/t" | cut -d' ' -f3)
expect_status 0 "$CTL" --socket "$SOCK" move -p $STARTED -c 1
threads_of $STARTED >"$TMP/t"
[ "$(head -1 "$TMP/t")" = "other 0 1" ] || fail "main thread after move -p: $(cat "$TMP/t")"
[ "$(grep -c "^other 0 $full\$" "$TMP/t")" = 5 ] || fail "other threads moved without --all: $(cat "$TMP/t")"
expect_status 0 "$CTL" --socket "$SOCK" move --pid $STARTED --all --cpu-list 0 --prio 5
grep -qx "every thread of process $STARTED: fifo 5 on 0 (thread $STARTED was other 0 on 1)" "$TMP/out" ||
	fail "move --all line: $(cat "$TMP/out")"
threads_of $STARTED >"$TMP/t"
[ "$(grep -c '^fifo 5 0$' "$TMP/t")" = 6 ] || fail "not every thread moved by --all: $(cat "$TMP/t")"
expect_status 0 "$CTL" --socket "$SOCK" --json move --pid $STARTED --all --cpu-list 1
python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
assert m['all'] is True and m['tid'] == int(sys.argv[2]) and m['cpu_list'] == '1' and m['prev_cpu_list'] == '0', m
" "$TMP/out" $STARTED || fail "move --all JSON: $(cat "$TMP/out")"
[ "$(threads_of $STARTED | grep -c '^fifo 5 1$')" = 6 ] || fail "not every thread moved: $(threads_of $STARTED)"
kill $STARTED

# All or none: the last thread is SCHED_DEADLINE, so the kernel refuses to
# narrow its affinity after the five before it moved. They are put back:
# every thread is as it was, and the reply names the thread that failed.
start_threads 6 deadline
before=$(threads_of $STARTED)
dl=$(ls /proc/$STARTED/task | sort -n | tail -1)
[ "$(printf '%s\n' "$before" | tail -1 | cut -d' ' -f1)" = deadline ] || fail "no deadline thread: $before"
expect_status 75 "$CTL" --socket "$SOCK" move --pid $STARTED --all --cpu-list 1 --prio 7
grep -q "thread $dl of pid $STARTED: Device or resource busy; none moved" "$TMP/err" ||
	fail "--all failure message: $(cat "$TMP/err")"
[ "$(threads_of $STARTED)" = "$before" ] || fail "threads not put back: $before -> $(threads_of $STARTED)"
kill $STARTED
stop_daemon
exit 0
