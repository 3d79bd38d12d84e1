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
builddir=$(pwd)
# The real binary, not libtool's wrapper script (which costs ~8 ms of shell).
RUN=$builddir/client/.libs/rtplace-run
if [ -x "$RUN" ]; then
	LD_LIBRARY_PATH=$builddir/client/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
else
	RUN=$builddir/client/rtplace-run
fi
RTPLACED=$builddir/daemon/rtplaced
prio=10
cpu=$(python3 -c "import os; print(max(os.sched_getaffinity(0)))")

command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 69; }
[ -x "$RUN" ] || { echo "run from a build directory (no client/rtplace-run here)" >&2; exit 64; }

tmp=$(mktemp -d /tmp/rtplace-bench.XXXXXX)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

sock=${RTPLACE_SOCKET:-}
if [ -z "$sock" ]; then
	sock=$tmp/rtplaced.sock
	lstopo --of xml "$tmp/machine.xml"
	"$RTPLACED" --socket "$sock" --topology "$tmp/machine.xml" >"$tmp/rtplaced.log" 2>&1 &
	daemon=$!
	i=0
	until "$builddir/client/rtplacectl" --socket "$sock" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "rtplaced did not start" >&2; exit 70; }
		sleep 0.05
	done
fi

echo "# $(nproc) CPUs, $(uname -r), rtplace-run -> $sock, $runs runs each"
hyperfine -N --warmup 20 --runs "$runs" --export-markdown "$tmp/table.md" \
	-n 'true' 'true' \
	-n "taskset -c $cpu chrt -f $prio true" "taskset -c $cpu chrt -f $prio true" \
	-n "rtplace-run --prio $prio -- true" "$RUN --socket $sock --prio $prio -- true" \
	-n "rtplace-run --prio $prio -- true (no daemon)" "$RUN --socket $tmp/none.sock --prio $prio -- true" \
	2>&1 | grep -v 'warning: cannot reach rtplaced'
cat "$tmp/table.md"
