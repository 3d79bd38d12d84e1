#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Draws the README's picture, doc/cpus-480.svg: `rtplacectl cpus --svg` of
# a simulated rtplaced on the 2-socket, 480-CPU topology of
# ../shared/topologies, with four CPUs claimed at rt50 and two at rt90 on
# node 1. Needs no root (no BPF); the daemon runs on a private socket with
# built-in defaults and is stopped on every exit path.
#
#   scripts/draw-480.sh [BUILD-DIR]      (default: build; TOPO=FILE for another topology)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
TOPO=${TOPO:-../shared/topologies/2s-240c-480t.xml}
[ -x "$BUILD/daemon/rtplaced" ] || { echo "draw-480: $BUILD/daemon/rtplaced is not built" >&2; exit 1; }

tmp=$(mktemp -d)
pid=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
# Without ../shared, the same shape from hwloc's synthetic description (as
# the tests make it).
if [ ! -r "$TOPO" ]; then
	TOPO=$tmp/2s-240c-480t.xml
	lstopo-no-graphics -i "pack:2 [numa] l3:1 core:120 pu:2(indexes=core:pack)" --of xml -f "$TOPO"
fi
: >"$tmp/empty.conf"
"$BUILD/daemon/rtplaced" --socket "$tmp/sock" --config "$tmp/empty.conf" --topology "$TOPO" 2>"$tmp/log" &
pid=$!
i=0
until "$BUILD/client/rtplacectl" --socket "$tmp/sock" status >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "draw-480: rtplaced did not answer: $(cat "$tmp/log")" >&2; exit 1; }
	sleep 0.1
done
ctl() { "$BUILD/client/rtplacectl" --socket "$tmp/sock" "$@" >/dev/null; }
ctl query --prio 50 --count 4 --claim 60000
ctl query --prio 90 --count 2 --node 1 --claim 60000
"$BUILD/client/rtplacectl" --socket "$tmp/sock" cpus --svg >doc/cpus-480.svg
echo "draw-480: wrote doc/cpus-480.svg"
