#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplace-run --manage against rtplaced on the live machine (root, BPF
# tracker): the daemon manages the threads of rtplace-run's own process
# (the program it execs), not those of a child the program forks, as
# rtplace-run(1) and --help say, and --verbose says so too. What is
# managed is read from the daemon's records: a managed thread's exit is a
# thread-exited record, an unmanaged one's is none. No RT work: the
# program and its child run at the normal policy and mostly sleep.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root

# New threads of managed processes are looked for on each rebalancing
# tick: a short one, so that a thread living half a second is seen.
printf '[moves]\nrebalance-interval-ms = 10\n' >"$TMP/rtplaced.conf"
start_live_daemon --config "$TMP/rtplaced.conf"

# The program: its own thread T1 lives until a forked child has started a
# thread T2 and exited; then T1 and the program end. Each prints its id.
cat >"$TMP/prog.py" <<'EOF'
import os, sys, threading, time

out = sys.argv[1]
child_done = threading.Event()

def note(what):
    with open(out, "a") as f:
        f.write("%s %d\n" % (what, threading.get_native_id()))

def t1():
    note("t1")
    child_done.wait(30)

def t2():
    note("t2")
    time.sleep(0.5)

note("program")
a = threading.Thread(target=t1)
a.start()
time.sleep(0.5)
pid = os.fork()
if pid == 0:
    note("child")
    b = threading.Thread(target=t2)
    b.start()
    b.join()
    os._exit(0)
os.waitpid(pid, 0)
child_done.set()
a.join()
EOF

# The table's header is printed once subscribed.
"$CTL" --socket "$SOCK" watch >"$TMP/watch" 2>"$TMP/watch.err" &
W=$!
PIDS="$PIDS $W"
wait_lines "$TMP/watch" 1

expect_status 0 "$RUN" --socket "$SOCK" --config "$CONF" --manage --strict --verbose -- \
	python3 "$TMP/prog.py" "$TMP/ids"
grep -qx "rtplace-run: managed: the threads of process [0-9]* (python3) only, not those of the processes it starts" \
	"$TMP/err" || fail "--verbose does not say what is managed: $(cat "$TMP/err")"
id_of() {
	awk -v w="$1" '$1 == w { print $2 }' "$TMP/ids"
}
program=$(id_of program) t1=$(id_of t1) child=$(id_of child) t2=$(id_of t2)
[ -n "$program" ] && [ -n "$t1" ] && [ -n "$child" ] && [ -n "$t2" ] || fail "the program did not run: $(cat "$TMP/ids")"
grep -q "process $program " "$TMP/err" || fail "--verbose names another process than $program: $(cat "$TMP/err")"

# The program's main thread exits last: once its record is in, the record
# of any thread that exited before it is too.
exited() {
	awk -v tid="$1" '$3 == "thread-exited" && $4 == tid { ok = 1 } END { exit !ok }' "$TMP/watch"
}
i=0
until exited "$program"; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "no thread-exited record of the program's main thread $program: $(cat "$TMP/watch")"
	sleep 0.05
done
exited "$t1" || fail "the program's own thread $t1 was not managed: $(cat "$TMP/watch")"
! exited "$child" && ! exited "$t2" ||
	fail "the child $child (thread $t2) was managed, which rtplace-run(1) says it is not: $(cat "$TMP/watch")"
wait_claims 0

kill "$W"
stop_daemon
exit 0
