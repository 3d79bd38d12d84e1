#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-CPU RT kernel threads against the map and rt40 answers
# (bench/rt-kthreads), SECONDS (60 by default) at a time under a private
# live rtplaced: the machine idle but for the daemon, with a timer load (a
# sleeper of 100 us on every CPU), with an interrupt load (files read
# without pause, whose I/O completes in interrupts: on PREEMPT_RT in
# irq/N-NAME threads at FIFO 50), and that load again under a daemon with
# [placement] irq-tiebreak = no, which ranks CPUs of one level without
# their interrupt time. Run as root from a build folder, on this machine or
# in a guest of the VM test bed:
#
#   bench/rt-kthreads.sh [SECONDS]
#   tests/vm/run-guest.sh --kernel 6.12-rt --out /var/tmp/rtk -- ../bench/rt-kthreads.sh 60
#
# The guest's files are the host's over 9p (virtio): reading them is the
# interrupt load there.
set -euo pipefail

seconds=${1:-60}
. "$(dirname "$0")/benchlib.sh"
[ "$(id -u)" = 0 ] || { echo "rt-kthreads.sh: needs root (a live rtplaced)" >&2; exit 77; }
tmp=$(mktemp -d /tmp/rtplace-rt-kthreads.XXXXXX)
daemon="" load=""
cleanup() {
	[ -z "$load" ] || kill -- -"$load" 2>/dev/null || true
	[ -z "$daemon" ] || { kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true; }
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
sock=$tmp/rtplaced.sock
: >"$tmp/default.conf"
printf '[placement]\nirq-tiebreak = no\n' >"$tmp/no-tiebreak.conf"
start_daemon() {
	"$builddir/daemon/rtplaced" --socket "$sock" --config "$1" >"$tmp/rtplaced.log" 2>&1 &
	daemon=$!
	i=0
	until "$builddir/client/rtplacectl" --socket "$sock" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "rtplaced did not start:" >&2; cat "$tmp/rtplaced.log" >&2; exit 70; }
		sleep 0.1
	done
}
stop_daemon() {
	kill "$daemon"
	wait "$daemon" || true
	daemon=
}
sampler=$builddir/bench/rt-kthreads
echo "== $(uname -r), $(nproc) CPUs, $(ls -d /sys/devices/system/node/node* | wc -l) nodes"
start_daemon "$tmp/default.conf"
echo "== idle"
"$sampler" --socket "$sock" --seconds "$seconds"
echo "== timer load"
"$sampler" --socket "$sock" --seconds "$seconds" --load timers
setsid bash -c 'exec timeout -s KILL '"$((3 * seconds + 60))"' find /usr -xdev -type f -readable -exec cat {} + >/dev/null 2>&1' &
load=$!
echo "== interrupt load (files read)"
"$sampler" --socket "$sock" --seconds "$seconds"
stop_daemon
start_daemon "$tmp/no-tiebreak.conf"
echo "== interrupt load (files read), irq-tiebreak = no"
"$sampler" --socket "$sock" --seconds "$seconds"
