#!/bin/sh
# Tracking overhead (DESIGN §11, issue 3): what the BPF tracker costs the
# scheduler path. Runs as root from the build directory:
#
#   sudo bench/tracker-overhead.sh [PAIRS]        (default 5 pairs)
#
# 1. hackbench (rt-tests) and `taskset -c 0 perf bench sched pipe` with the
#    tracker attached (bench/tracker-hold) vs detached, in interleaved
#    pairs whose order alternates, so drift on the host hits both sides; the
#    figure is the median of the per-pair ratios attached / detached
#    (> 1 means slower with the tracker). Twice: the full tracker, and the
#    tracker without its syscall tracepoint programs (tracker_syscalls()),
#    whose mere presence sends every syscall through the kernel's slow path.
# 2. The programs' own run time per event, from kernel.bpf_stats_enabled
#    (bpftool prog show: run_time_ns / run_cnt), over one run of each
#    workload.
set -eu

PAIRS=${1:-5}
HOLD=${TRACKER_HOLD:-bench/tracker-hold}
HACKBENCH_ARGS=${HACKBENCH_ARGS:--g 4 -l 500}
PIPE_LOOPS=${PIPE_LOOPS:-200000}

die() { echo "tracker-overhead: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$HOLD" ] || die "$HOLD not found: run from the build directory or set TRACKER_HOLD"
for tool in hackbench perf taskset bpftool; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done

tmp=$(mktemp -d)
hold_pid=
cleanup() {
	[ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null && wait "$hold_pid" 2>/dev/null
	[ -n "${stats_old:-}" ] && sysctl -qw kernel.bpf_stats_enabled="$stats_old"
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

# bench NAME FUNC: PAIRS interleaved pairs, prints the medians and the ratio.
bench() {
	name=$1
	fn=$2
	: >"$tmp/$name.ratios"
	: >"$tmp/$name.off"
	: >"$tmp/$name.on"
	p=1
	while [ $p -le "$PAIRS" ]; do
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
		echo "  pair $p: detached $off, attached $on"
		p=$((p + 1))
	done
	echo "$name: median detached $(median <"$tmp/$name.off"), attached $(median <"$tmp/$name.on"), " \
		"median ratio $(median <"$tmp/$name.ratios") (ratios: $(tr '\n' ' ' <"$tmp/$name.ratios"))"
}

echo "# $(uname -r), $(nproc) CPUs, $PAIRS pairs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for HOLD_ARGS in "" --no-syscalls; do
	echo "# tracker-hold $HOLD_ARGS"
	echo "# hackbench $HACKBENCH_ARGS (seconds)"
	bench hackbench run_hackbench
	echo "# taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS (usecs/op)"
	bench pipe run_pipe
done
HOLD_ARGS=

echo "# per-program run time with kernel.bpf_stats_enabled=1, one run of each workload"
stats_old=$(sysctl -n kernel.bpf_stats_enabled)
attach
sysctl -qw kernel.bpf_stats_enabled=1
run_hackbench >/dev/null
run_pipe >/dev/null
bpftool -j prog show >"$tmp/progs.json"
sysctl -qw kernel.bpf_stats_enabled="$stats_old"
detach
python3 - "$tmp/progs.json" <<'EOF'
import json, sys
progs = [p for p in json.load(open(sys.argv[1])) if p.get("name", "").startswith("tracker_")]
for p in sorted(progs, key=lambda p: -p.get("run_cnt", 0)):
    cnt, ns = p.get("run_cnt", 0), p.get("run_time_ns", 0)
    print(f"  {p['name']:<24} run_cnt {cnt:>10}  run_time_ns {ns:>12}  ns/event {ns / cnt if cnt else 0:8.1f}")
EOF
