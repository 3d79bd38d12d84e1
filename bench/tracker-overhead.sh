#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Tracking overhead (DESIGN §11): what the BPF tracker costs the
# scheduler path. Runs as root from the build directory:
#
#   sudo bench/tracker-overhead.sh [PAIRS]        (default 5 pairs)
#
# 1. hackbench (rt-tests) and `taskset -c 0 perf bench sched pipe` with the
#    tracker attached (bench/tracker-hold) vs detached, in interleaved
#    pairs whose order alternates, so drift on the host hits both sides; the
#    figure is the median of the per-pair ratios attached / detached
#    (> 1 means slower with the tracker). Twice: the tracker as a daemon
#    that watches no thread holds it (switch, nr_running and migration
#    programs), and with one thread watched (tracker-hold --watch), which
#    adds the wakeup and exit programs for as long as the daemon manages
#    threads.
#    Each pair line ends with the 1-minute load average and the number of
#    runnable tasks (/proc/loadavg) when it started. The load average
#    includes hackbench's own tasks for minutes after it ran; the runnable
#    count (1 is this script) shows other work at that instant. Rerun pairs
#    taken while other work ran.
# 2. The programs' own cost, deterministic where the ratios drown in the
#    host's noise: for each mode and each workload, bench/bpf-stats runs one
#    run of the workload with BPF run-time statistics enabled through a
#    bpf(BPF_ENABLE_STATS) descriptor (kernel.bpf_stats_enabled is left
#    alone) and prints each program's events and ns per event, and the
#    programs' share of the machine's busy CPU time over the run. The
#    figures include the statistics' own cost (two clock reads per event).
#    A third workload, a ping-pong between processes pinned to CPUs 0 and 1,
#    makes every switch change its CPU's class (idle <-> normal): the worst
#    case of the time-by-class accounting, which the pinned pipe
#    (normal -> normal) never reaches.
set -eu

PAIRS=${1:-5}
HOLD=${TRACKER_HOLD:-bench/tracker-hold}
STATS=${BPF_STATS:-bench/bpf-stats}
HACKBENCH_ARGS=${HACKBENCH_ARGS:--g 4 -l 500}
PIPE_LOOPS=${PIPE_LOOPS:-200000}
PINGPONG_LOOPS=${PINGPONG_LOOPS:-50000}
# Round trips between a process on CPU 0 and one on CPU 1 over two pipes.
PINGPONG='import os, sys
n = int(sys.argv[1])
a_r, a_w = os.pipe()
b_r, b_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.sched_setaffinity(0, {1})
    for _ in range(n):
        os.read(a_r, 1)
        os.write(b_w, b"x")
    os._exit(0)
os.sched_setaffinity(0, {0})
for _ in range(n):
    os.write(a_w, b"x")
    os.read(b_r, 1)
os.waitpid(pid, 0)'

die() { echo "tracker-overhead: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$HOLD" ] || die "$HOLD not found: run from the build directory or set TRACKER_HOLD"
[ -x "$STATS" ] || die "$STATS not found: run from the build directory or set BPF_STATS"
for tool in hackbench perf taskset python3; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done

tmp=$(mktemp -d)
hold_pid=
cleanup() {
	[ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null && wait "$hold_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

HOLD_ARGS=
attach() {
	# shellcheck disable=SC2086
	"$HOLD" $HOLD_ARGS >"$tmp/hold.out" &
	hold_pid=$!
	i=0
	until grep -q attached "$tmp/hold.out" 2>/dev/null; do
		kill -0 "$hold_pid" 2>/dev/null || die "tracker-hold failed"
		i=$((i + 1))
		[ $i -lt 200 ] || die "tracker-hold did not attach"
		sleep 0.05
	done
}

detach() {
	kill "$hold_pid"
	wait "$hold_pid" || true
	hold_pid=
}

# Seconds for one hackbench run.
run_hackbench() {
	# shellcheck disable=SC2086
	hackbench $HACKBENCH_ARGS | awk '/^Time:/ { print $2 }'
}

# Microseconds per round trip (two context switches) on one CPU.
run_pipe() {
	taskset -c 0 perf bench sched pipe -l "$PIPE_LOOPS" | awk '/usecs\/op/ { print $1 }'
}

median() {
	sort -g | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# "load L runnable R" from /proc/loadavg.
load() {
	awk '{ split($4, r, "/"); printf "load %s runnable %d", $1, r[1] }' /proc/loadavg
}

# bench NAME FUNC: PAIRS interleaved pairs, prints the medians and the ratio.
bench() {
	name=$1
	fn=$2
	: >"$tmp/$name.ratios"
	: >"$tmp/$name.off"
	: >"$tmp/$name.on"
	p=1
	while [ $p -le "$PAIRS" ]; do
		at=$(load)
		if [ $((p % 2)) = 1 ]; then
			off=$($fn)
			attach
			on=$($fn)
			detach
		else
			attach
			on=$($fn)
			detach
			off=$($fn)
		fi
		echo "$off" >>"$tmp/$name.off"
		echo "$on" >>"$tmp/$name.on"
		awk -v a="$on" -v b="$off" 'BEGIN { printf "%.4f\n", a / b }' >>"$tmp/$name.ratios"
		echo "  pair $p: detached $off, attached $on, ratio $(tail -n 1 "$tmp/$name.ratios"), $at"
		p=$((p + 1))
	done
	echo "$name: median detached $(median <"$tmp/$name.off"), attached $(median <"$tmp/$name.on")," \
		"median ratio $(median <"$tmp/$name.ratios") (ratios: $(tr '\n' ' ' <"$tmp/$name.ratios"))"
}

echo "# $(uname -r), $(nproc) CPUs, $PAIRS pairs, $(load)"
for HOLD_ARGS in "" --watch; do
	echo "# tracker-hold $HOLD_ARGS"
	echo "# hackbench $HACKBENCH_ARGS (seconds)"
	bench hackbench run_hackbench
	echo "# taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS (usecs/op)"
	bench pipe run_pipe
done

# The attached tracker's programs (not those of another tracker), comma-separated.
prog_ids() {
	cat /proc/"$hold_pid"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -un | paste -sd, -
}

# stats NAME COMMAND...: one run under bpf-stats, its lines indented.
stats() {
	name=$1
	shift
	echo "  $name:"
	"$STATS" --ids "$ids" -- "$@" | sed 's/^/    /'
}

for HOLD_ARGS in "" --watch; do
	echo "# BPF_ENABLE_STATS, one run of each workload, tracker-hold $HOLD_ARGS, $(load)"
	attach
	ids=$(prog_ids)
	[ -n "$ids" ] || die "no programs found for tracker-hold"
	# shellcheck disable=SC2086
	stats "hackbench $HACKBENCH_ARGS" hackbench $HACKBENCH_ARGS
	stats "taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS" taskset -c 0 perf bench sched pipe -l "$PIPE_LOOPS"
	stats "ping-pong CPU 0 <-> CPU 1, $PINGPONG_LOOPS round trips" python3 -c "$PINGPONG" "$PINGPONG_LOOPS"
	detach
done
