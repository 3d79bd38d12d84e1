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
# (the last online CPU) is made plain or --isolate, owned by oslat, which
# spins on K at SCHED_FIFO 1 for SECONDS (bounded from CPU 0 by timeout;
# CPU 0 keeps normal work and the RT throttle's 5%). Per round, on K:
# device interrupts/s and all interrupts/s (/proc/interrupts), context
# switches/s (perf stat -C K), foreign time (the part of the wall time
# oslat's thread did not run, /proc/PID/task/TID/schedstat), and oslat's
# maximum latency. Then the cost of making and releasing an exclusive
# claim, plain and --isolate, alternately (ms, median and fastest of 20).
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
for p in hackbench oslat perf; do
	command -v $p >/dev/null || { echo "isolation-noise: $p missing (apt-get install rt-tests)" >&2; exit 77; }
done
K=$(getconf _NPROCESSORS_ONLN)
K=$((K - 1))
[ "$K" -ge 1 ] || { echo "isolation-noise: needs 2 CPUs" >&2; exit 77; }
TMP=$(mktemp -d /var/tmp/rtplace-isonoise.XXXXXX)
fail() { echo "isolation-noise: $*" >&2; exit 1; }
wq=/sys/devices/virtual/workqueue/cpumask
. "$srcdir/tests/lib/host-isolation.sh"
exec 9>>/run/lock/rtplace-rt-tests.lock
flock -w 900 9 || fail "the RT-test lock stays held"
host_save
LOAD=
DAEMON=
finish() {
	# The timeout's and the loop's children first: hackbench would
	# outlive its timeout killed before it.
	for p in $LOAD; do pkill -KILL -P "$p" 2>/dev/null; done
	for p in $LOAD $DAEMON; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	host_restore
	rm -rf "$TMP"
}
trap finish EXIT
trap 'exit 1' INT TERM HUP

{
	printf '[isolation]\nirqs = yes\nworkqueues = yes\n'
	grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null && printf 'partition = yes\n'
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

# One round: mode plain|isolate. Prints "mode dev/s all/s cs/s foreign% max_us".
round() {
	sleep 600 & owner=$!
	flag=
	[ "$1" = isolate ] && flag=--isolate
	"$CTL" --socket "$TMP/sock" query --prio 1 -c "$K" --exclusive --claim 600000 --owner $owner $flag \
		> "$TMP/claim" 2>&1 || fail "claim ($1): $(cat "$TMP/claim")"
	id=$(sed -n 's/^claim *\([0-9]*\) .*/\1/p' "$TMP/claim")
	taskset -c 0 timeout -s KILL $((SECS + 5)) oslat --cpu-list "$K" -f 1 -D "${SECS}s" -q > "$TMP/oslat" 2>&1 &
	o=$!
	sleep 1
	# timeout's child; its spinning thread the one allowed on K alone.
	op=$(pgrep -P $o oslat) || fail "oslat did not start: $(cat "$TMP/oslat")"
	tid=$(grep -l "^Cpus_allowed_list:[[:space:]]*$K\$" /proc/$op/task/*/status | head -1 | cut -d/ -f5)
	[ -n "$tid" ] || fail "no oslat thread on CPU $K"
	run0=$(cut -d' ' -f1 /proc/$op/task/$tid/schedstat)
	c0=$(counters)
	w0=$(date +%s%N)
	taskset -c 0 perf stat -C "$K" -e context-switches -x, -o "$TMP/perf" -- sleep $((SECS - 2))
	run1=$(cut -d' ' -f1 /proc/$op/task/$tid/schedstat)
	w1=$(date +%s%N)
	c1=$(counters)
	cs=$(grep context-switches "$TMP/perf" | cut -d, -f1)
	wait $o
	max=$(sed -n 's/^[[:space:]]*Maximum:[[:space:]]*\([0-9]*\).*/\1/p' "$TMP/oslat" | head -1)
	"$CTL" --socket "$TMP/sock" release "$id" > /dev/null || fail "release $id"
	kill $owner; wait $owner 2>/dev/null
	python3 -c "
import sys
m, c0, c1, r0, r1, w0, w1, mx, cs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), sys.argv[8], int(sys.argv[9])
s = (w1 - w0) / 1e9
d = [(int(b) - int(a)) / s for a, b in zip(c0, c1)]
print(f'{m:8s} {d[0]:10.1f} {d[1]:10.1f} {cs / s:10.1f} {100 * (1 - (r1 - r0) / (w1 - w0)):10.3f} {mx:>8s}'
      f'   (ran {(r1 - r0) / 1e6:.0f} of {(w1 - w0) / 1e6:.0f} ms)')
" "$1" "$c0" "$c1" "$run0" "$run1" "$w0" "$w1" "${max:-?}" "${cs:-0}"
}

# Make and release an exclusive claim of K: ms for both.
cost() {
	flag=
	[ "$1" = isolate ] && flag=--isolate
	a=$(date +%s%N)
	"$CTL" --socket "$TMP/sock" query --prio 1 -c "$K" --exclusive --claim 600000 --owner $$ $flag > "$TMP/c" 2>&1 ||
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
timeout -s KILL $((ROUNDS * 2 * (SECS + 4) + 30)) hackbench -T -g 1 -f 2 -l 100000000 -s 512 > /dev/null 2>&1 &
LOAD=$!
( while :; do dd if=/dev/zero of="$TMP/io" bs=64k count=256 oflag=direct 2>/dev/null; done ) &
LOAD="$LOAD $!"
sleep 2
echo "# mode       dev-irq/s  all-irq/s      cs/s   foreign%   oslat-max-us (on CPU $K)"
for i in $(seq "$ROUNDS"); do round plain; round isolate; done | tee "$TMP/rounds"
echo "# load during: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$TMP/rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {m: [statistics.median(float(r[i]) for r in rows if r[0] == m) for i in range(1, 6)] for m in ("plain", "isolate")}
names = ["device IRQs/s", "all IRQs/s", "context switches/s", "foreign time %", "oslat max us"]
for i, n in enumerate(names):
    p, q = med["plain"][i], med["isolate"][i]
    print(f"# median {n:20s} plain {p:10.2f}  isolate {q:10.2f}  ratio {p / q if q else float('inf'):8.2f}x")
PY
