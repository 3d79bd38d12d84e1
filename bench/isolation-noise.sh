#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The noise on a claimed CPU with and without --isolate, under a noisy
# neighbour, as a ratio in one run (root, the live machine):
#
#   sh bench/isolation-noise.sh [ROUNDS [SECONDS]]   (from the build dir)
#
# A private rtplaced with [isolation] irqs and workqueues (and partition
# where the cgroup v2 hierarchy has cpuset: `partition` says which ran).
# Load: hackbench on every CPU (SCHED_OTHER) and direct-I/O dd (block
# interrupts). In each round, alternately, an exclusive claim of CPU K
# (the last online CPU) is made plain or --isolate, owned by cyclictest,
# which wakes on K every 500 us at SCHED_FIFO 80 for SECONDS (bounded
# from CPU 0 by timeout). A periodic claimant, not a spinner: a CPU that
# an RT thread keeps busy is one the load balancer leaves alone anyway
# (an oslat spinner saw 0% foreign time in both modes), while the time
# between its wake-ups is what the rest of the machine takes. Per round,
# on K: device interrupts/s and all interrupts/s (/proc/interrupts),
# context switches/s (perf stat -C K), foreign time (the run time of
# every thread not the claimant's whose last CPU is K, from each thread's
# schedstat, as a share of the window: the claimant's own main thread,
# which isolation keeps on K with it, is not foreign), apart from it K's
# own kernel threads' (bound to K alone: its timer, RCU and per-CPU
# workers, which no isolation moves), the claimant's share, and
# cyclictest's maximum latency. (Threads that left K within the window
# are missed and ones that came to it counted whole: plain rounds' figure
# is approximate, isolated rounds have no migrants.) Then the cost of
# making and releasing an exclusive claim, plain and --isolate,
# alternately (ms, median and fastest of 20).
# Prints one line per round and the medians' ratios. Takes the RT-test
# lock; saves every interrupt's affinity and the workqueue mask and puts
# them back on every exit path.
set -u
builddir=$(pwd)
srcdir=$(sed -n 's/^abs_top_srcdir = //p' "$builddir/Makefile")
ROUNDS=${1:-3}
SECS=${2:-5}
CTL=$builddir/client/rtplacectl
[ "$(id -u)" = 0 ] || { echo "isolation-noise: needs root" >&2; exit 77; }
for p in hackbench cyclictest perf; do
	command -v $p >/dev/null || { echo "isolation-noise: $p missing (apt-get install rt-tests)" >&2; exit 77; }
done
K=$(getconf _NPROCESSORS_ONLN)
K=$((K - 1))
[ "$K" -ge 1 ] || { echo "isolation-noise: needs 2 CPUs" >&2; exit 77; }
TMP=$(mktemp -d /var/tmp/rtplace-isonoise.XXXXXX)
fail() { echo "isolation-noise: $*" >&2; exit 1; }
wq=/sys/devices/virtual/workqueue/cpumask
. "$srcdir/tests/lib/host-isolation.sh"
mkdir -p /run/lock
exec 9>>/run/lock/rtplace-rt-tests.lock
flock -w 900 9 || fail "the RT-test lock stays held"
host_save
LOAD=
DAEMON=
CLAIMANT=
finish() {
	# The timeout's and the loop's children first: hackbench would
	# outlive its timeout killed before it.
	for p in $LOAD $CLAIMANT; do pkill -KILL -P "$p" 2>/dev/null; done
	for p in $LOAD $CLAIMANT $DAEMON; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	host_restore
	rm -rf "$TMP"
}
trap finish EXIT
trap 'exit 1' INT TERM HUP

{
	printf '[isolation]\nirqs = yes\nworkqueues = yes\n'
	# (the cgroup v2 hierarchy wherever it is mounted: the VM bed's guests
	# mount it beside v1's controllers)
	cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	grep -qw cpuset "${cg2:-/nonexistent}/cgroup.controllers" 2>/dev/null &&
		printf 'partition = yes\ncgroup-root = %s\n' "$cg2"
} > "$TMP/iso.conf"
"$builddir/daemon/rtplaced" --socket "$TMP/sock" --config "$TMP/iso.conf" > "$TMP/rtplaced.log" 2>&1 &
DAEMON=$!
i=0
until "$CTL" --socket "$TMP/sock" status > /dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "rtplaced did not start: $(cat "$TMP/rtplaced.log")"
	sleep 0.05
done

# CPU K's interrupt counts: device IRQs, all IRQs.
counters() {
	python3 - "$K" <<'PY'
import sys
k = int(sys.argv[1])
lines = open("/proc/interrupts").read().splitlines()
col = lines[0].split().index(f"CPU{k}") + 1
dev = alls = 0
for l in lines[1:]:
    f = l.split()
    if len(f) <= col or not f[col].isdigit():
        continue
    alls += int(f[col])
    if f[0].rstrip(":").isdigit():
        dev += int(f[col])
print(dev, alls)
PY
}

# The run time on CPU $1 of every thread whose last CPU it is, over $2
# seconds: "foreign_ns kthreads_ns claimant_ns window_ns most-foreign",
# the claimant being process $3's threads, kthreads those bound to $1.
RUNTIME='
import os, sys, time
k, secs, claimant = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
def snap():
    d = {}
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            try:
                ns = int(open(f"/proc/{p}/task/{t}/schedstat").read().split()[0])
                st = open(f"/proc/{p}/task/{t}/stat").read()
            except OSError:
                continue
            f = st[st.rindex(")") + 2:].split()
            try:
                bound = int(f[6]) & 0x00200000 and os.sched_getaffinity(int(t)) == {k}
            except OSError:
                bound = False
            d[t] = (p, ns, int(f[36]), st[st.index("(") + 1:st.rindex(")")], bound)
    return d
a, t0 = snap(), time.monotonic_ns()
time.sleep(secs)
b, t1 = snap(), time.monotonic_ns()
if not os.path.exists(f"/proc/{claimant}"):
    sys.exit(f"the claimant, process {claimant}, ended within the window")
own = other = kthreads = 0
top = []
for t, (p, ns, cpu, comm, bound) in b.items():
    if cpu == k:
        d = ns - (a[t][1] if t in a else 0)
        if p == claimant:
            own += d
        elif bound:
            kthreads += d
        else:
            other += d
        if p != claimant:
            top.append((d, comm))
print(other, kthreads, own, t1 - t0, ",".join(f"{c}:{d / 1e6:.2f}ms" for d, c in sorted(top, reverse=True)[:3] if d))
'

# One round: mode plain|isolate. Prints "mode dev/s all/s cs/s foreign% kthreads% claimant% max_us".
round() {
	flag=
	[ "$1" = isolate ] && flag=--isolate
	# The claim's owner is cyclictest itself, so that --isolate moves it
	# into the partition: a shell that waits for the claim, then becomes
	# cyclictest (bounded from CPU 0 by timeout, which stays where it is).
	rm -f "$TMP/go"
	mkfifo "$TMP/go"
	# -D only bounds it: it is stopped once the window closes. (Under
	# TCG a round takes many times its window: a bound of the window
	# and 15 s ended claimants, and their claims, within it.)
	taskset -c 0 timeout -s KILL $((SECS + 300)) sh -c 'read -r _ < "$1"; shift; exec "$@"' - "$TMP/go" \
		cyclictest -m -q -t 1 -a "$K" --mainaffinity "$K" -p 80 -i 500 -D "$((SECS + 240))" > "$TMP/cyclictest" 2>&1 &
	o=$!
	CLAIMANT=$o
	i=0
	until op=$(pgrep -P $o) && [ -n "$op" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "the claimant did not start"; sleep 0.02
	done
	"$CTL" --socket "$TMP/sock" query --prio 80 -c "$K" --exclusive --claim 600000 --owner "$op" $flag \
		> "$TMP/claim" 2>&1 || fail "claim ($1): $(cat "$TMP/claim")"
	id=$(sed -n 's/^claim *\([0-9]*\) .*/\1/p' "$TMP/claim")
	echo > "$TMP/go"
	# The window opens once cyclictest's measuring thread is on K at
	# SCHED_FIFO (stat: processor, policy).
	i=0
	until awk -v k="$K" '$39 == k && $41 == 1 { f = 1 } END { exit !f }' /proc/$op/task/*/stat 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 500 ] || fail "no cyclictest thread on CPU $K: $(cat "$TMP/cyclictest")"; sleep 0.02
	done
	sleep 0.5
	c0=$(counters)
	w0=$(date +%s%N)
	taskset -c 0 python3 -c "$RUNTIME" "$K" $((SECS - 2)) "$op" > "$TMP/runtime" 2>&1 &
	rt=$!
	taskset -c 0 perf stat -C "$K" -e context-switches -x, -o "$TMP/perf" -- sleep $((SECS - 2))
	wait $rt || fail "the run times on CPU $K: $(cat "$TMP/runtime")"
	w1=$(date +%s%N)
	c1=$(counters)
	cs=$(grep context-switches "$TMP/perf" | cut -d, -f1)
	# (cyclictest prints its summary on SIGINT)
	kill -INT "$op" 2>/dev/null
	wait $o
	max=$(sed -n 's/.* Max: *\([0-9]*\).*/\1/p' "$TMP/cyclictest" | head -1)
	# The claim ends with its owner (and its isolation with it).
	i=0
	while "$CTL" --socket "$TMP/sock" claims 2>/dev/null | grep -q "^ *$id "; do
		i=$((i + 1)); [ $i -lt 250 ] || fail "claim $id outlived its owner"; sleep 0.02
	done
	python3 -c "
import sys
m, c0, c1, w0, w1, mx, cs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], int(sys.argv[7])
other, kthreads, own, window, *top = sys.argv[8].split()
other, kthreads, own, window = int(other), int(kthreads), int(own), int(window)
s = (w1 - w0) / 1e9
d = [(int(b) - int(a)) / s for a, b in zip(c0, c1)]
print(f'{m:8s} {d[0]:10.1f} {d[1]:10.1f} {cs / s:10.1f} {100 * other / window:10.4f} {100 * kthreads / window:10.4f} {100 * own / window:10.3f} {mx:>8s}   {top[0] if top else \"\"}')
" "$1" "$c0" "$c1" "$w0" "$w1" "${max:-?}" "${cs:-0}" "$(cat "$TMP/runtime")"
}

# Make and release an exclusive claim of K: ms for both.
cost() {
	flag=
	[ "$1" = isolate ] && flag=--isolate
	a=$(date +%s%N)
	"$CTL" --socket "$TMP/sock" query --prio 80 -c "$K" --exclusive --claim 600000 --owner $$ $flag > "$TMP/c" 2>&1 ||
		fail "claim: $(cat "$TMP/c")"
	b=$(date +%s%N)
	"$CTL" --socket "$TMP/sock" release "$(sed -n 's/^claim *\([0-9]*\) .*/\1/p' "$TMP/c")" > /dev/null || fail release
	c=$(date +%s%N)
	echo "$1 $(( (b - a) / 1000 )) $(( (c - b) / 1000 ))"
}

echo "# $(uname -r), $(nproc) CPUs, K = CPU $K, load $(cut -d' ' -f1-3 /proc/loadavg) before;" \
	"isolation: $(tr '\n' ' ' < "$TMP/iso.conf" | sed 's/\[isolation\] //')"
for i in $(seq 20); do cost plain; cost isolate; done > "$TMP/cost"
python3 - "$TMP/cost" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for m in ("plain", "isolate"):
    mk = [int(r[1]) / 1000 for r in rows if r[0] == m]
    rl = [int(r[2]) / 1000 for r in rows if r[0] == m]
    print(f"# cost {m:8s} make {statistics.median(mk):7.2f} ms (fastest {min(mk):.2f}), "
          f"release {statistics.median(rl):7.2f} ms (fastest {min(rl):.2f}) [rtplacectl process included]")
PY

# The noisy neighbour: hackbench on every CPU (threads: the timeout's
# SIGKILL ends them all), direct I/O for interrupts.
timeout -s KILL $((ROUNDS * 2 * (SECS + 60) + 60)) hackbench -T -g 1 -f 2 -l 100000000 -s 512 > /dev/null 2>&1 &
LOAD=$!
( while :; do dd if=/dev/zero of="$TMP/io" bs=64k count=256 oflag=direct 2>/dev/null; done ) &
LOAD="$LOAD $!"
sleep 2
echo "# mode       dev-irq/s  all-irq/s      cs/s     foreign%  kthreads%  claimant%  cyclictest-max-us (on CPU $K)   most foreign"
for i in $(seq "$ROUNDS"); do round plain; round isolate; done | tee "$TMP/rounds"
echo "# load during: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$TMP/rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {m: [statistics.median(float(r[i]) for r in rows if r[0] == m) for i in range(1, 8)] for m in ("plain", "isolate")}
names = ["device IRQs/s", "all IRQs/s", "context switches/s", "foreign time %", "K's kthreads %", "claimant %", "cyclictest max us"]
for i, n in enumerate(names):
    p, q = med["plain"][i], med["isolate"][i]
    print(f"# median {n:20s} plain {p:10.4f}  isolate {q:10.4f}  ratio {p / q if q else float('inf'):8.2f}x")
PY
# What the daemon had to say of the claims (isolated in part, refusals).
grep -E 'warning|error|notice: claim' "$TMP/rtplaced.log" | head -20 | sed 's/^/# rtplaced: /'
