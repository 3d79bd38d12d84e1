#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# k ffmpeg instances at once, three ways, side by side (DESIGN §11):
#   unpinned      ffmpeg ...
#   taskset       taskset -c <round-robin group of N CPUs> ffmpeg ...
#   rtplace-run   rtplace-run --cpus N [--prio P] -- ffmpeg ...
# Each instance encodes the same generated clip (testsrc2, x264, N threads)
# to the null muxer; fps = frames / its own wall time. Prints fps per
# instance and the total per mode and round; modes alternate inside each
# round so that drift hits all of them alike.
#
# Usage (from a build directory, as root):
#   bench/ffmpeg-instances.sh [K [N [FRAMES [ROUNDS]]]]
# K instances (default: CPUs / N), N CPUs each (default 1). PRIO=P runs the
# rtplace-run instances at SCHED_FIFO P: only on a machine with housekeeping
# CPUs to spare (RT transcodes on every CPU starve everything else).
# With $RTPLACE_SOCKET set rtplace-run asks that daemon; otherwise a private
# rtplaced runs in simulation mode over this machine's topology.
set -eu
n=${2:-1}
ncpu=$(nproc)
k=${1:-$((ncpu / n))}
frames=${3:-300}
rounds=${4:-3}
size=${SIZE:-640x360}
prio=${PRIO:-}
. "$(dirname "$0")/benchlib.sh"
command -v ffmpeg >/dev/null || { echo "needs ffmpeg (apt-get install ffmpeg)" >&2; exit 69; }

bench_daemon ffbench

# One instance: prints its fps.
instance() {
	t0=$(date +%s.%N)
	"$@" ffmpeg -nostdin -hide_banner -loglevel error -f lavfi -i "testsrc2=size=$size:rate=25" \
		-frames:v "$frames" -c:v libx264 -preset veryfast -threads "$n" -f null - </dev/null
	t1=$(date +%s.%N)
	echo "$frames $t0 $t1" | awk '{ printf "%.1f\n", $1 / ($3 - $2) }'
}

# K instances of a mode at once; prints "mode total per-instance...".
run_mode() {
	mode=$1
	pids=
	i=0
	while [ $i -lt "$k" ]; do
		case $mode in
		unpinned) instance >"$tmp/fps.$i" & ;;
		taskset)
			first=$(((i * n) % ncpu))
			instance taskset -c "$first-$((first + n - 1))" >"$tmp/fps.$i" & ;;
		rtplace-run)
			instance "$RUN" --socket "$sock" --cpus "$n" ${prio:+--prio "$prio"} -- >"$tmp/fps.$i" & ;;
		esac
		pids="$pids $!"
		i=$((i + 1))
	done
	# Not a bare wait: the private daemon is a child too.
	for p in $pids; do
		wait "$p"
	done
	cat "$tmp"/fps.* | awk -v m="$mode" '{ t += $1; s = s sprintf(" %6.1f", $1) } END { printf "%-12s %8.1f   %s\n", m, t, s }'
	rm -f "$tmp"/fps.*
}

echo "# $ncpu CPUs, k=$k instances x $n CPUs, $frames frames $size x264 veryfast, rtplace-run ${prio:+--prio $prio }-> $sock"
printf "%-12s %8s   %s\n" mode "total" "fps per instance"
r=1
while [ $r -le "$rounds" ]; do
	echo "# round $r"
	for mode in unpinned taskset rtplace-run; do
		run_mode "$mode"
	done
	r=$((r + 1))
done
