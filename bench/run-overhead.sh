#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What rtplace-run costs at program start (DESIGN §11): whole-process time of
#   true                                   (the floor: one fork+exec)
#   taskset -c CPU chrt -f P true          (pinning by hand: two extra execs)
#   rtplace-run --prio P -- true           (query + claim + pin + policy + exec)
#   rtplace-run --prio P -- true, no daemon (the local fallback: hwloc topology)
# side by side in one hyperfine run (apt-get install hyperfine).
#
# Usage (from a build directory, as root for the RT policy):
#   bench/run-overhead.sh [RUNS]
# With $RTPLACE_SOCKET set, rtplace-run asks that daemon (e.g. the live
# /run/rtplace/rtplaced.sock); otherwise a private rtplaced is started in
# simulation mode over this machine's own topology (lstopo --of xml).
set -eu
runs=${1:-300}
. "$(dirname "$0")/benchlib.sh"
prio=10
cpu=$(python3 -c "import os; print(max(os.sched_getaffinity(0)))")

command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 69; }
[ -x "$RUN" ] || { echo "run from a build directory (no client/rtplace-run here)" >&2; exit 64; }

bench_daemon bench

echo "# $(nproc) CPUs, $(uname -r), rtplace-run -> $sock, $runs runs each"
hyperfine -N --warmup 20 --runs "$runs" --export-markdown "$tmp/table.md" \
	-n 'true' 'true' \
	-n "taskset -c $cpu chrt -f $prio true" "taskset -c $cpu chrt -f $prio true" \
	-n "rtplace-run --prio $prio -- true" "$RUN --socket $sock --prio $prio -- true" \
	-n "rtplace-run --prio $prio -- true (no daemon)" "$RUN --socket $tmp/none.sock --prio $prio -- true" \
	2>&1 | grep -v 'warning: cannot reach rtplaced'
cat "$tmp/table.md"
