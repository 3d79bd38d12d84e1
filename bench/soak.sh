#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Soak test of rtplaced (run by hand, never by make check): for MINUTES it
# mixes plain and claiming queries, owner-bound claims through rtplace-run,
# moves of a sleeping thread, subscribers that come and go, garbage packets,
# and a kill -9 and restart of the daemon every RESTART_S seconds; every
# SAMPLE_S seconds it prints the daemon's open file descriptors, resident
# memory and active claims. The last lines compare the samples taken after
# the first minute: a daemon that leaks shows fds or RSS growing there.
#
# Usage, from a build directory (as root for the live BPF tracker; as any
# user it simulates the 480-CPU topology):
#   bench/soak.sh [MINUTES]        default 2
# Environment: RESTART_S (default 30), SAMPLE_S (default 5), TOPOLOGY (the
# hwloc XML simulated when not root; default the shared 480-CPU one).
# Needs python3 for the garbage sender. Exits 1 when fds or RSS grew by
# more than the tolerance printed at the end, 0 otherwise.
set -u
minutes=${1:-2}
restart_s=${RESTART_S:-30}
sample_s=${SAMPLE_S:-5}
builddir=$(pwd)
RTPLACED=$builddir/daemon/rtplaced
CTL=$builddir/client/rtplacectl
RUN=$builddir/client/rtplace-run

[ -x "$RTPLACED" ] && [ -x "$CTL" ] || { echo "soak: run from a build directory" >&2; exit 64; }
case $minutes in '' | *[!0-9]*) echo "soak: MINUTES must be a whole number" >&2; exit 64 ;; esac
command -v python3 >/dev/null || { echo "soak: needs python3 (apt-get install python3)" >&2; exit 69; }

tmp=$(mktemp -d /tmp/rtplace-soak.XXXXXX)
chmod 755 "$tmp"
sock=$tmp/rtplaced.sock
conf=$tmp/rtplaced.conf
log=$tmp/rtplaced.log
: >"$conf"
args=(--config "$conf" --socket "$sock")
if [ "$(id -u)" != 0 ]; then
	srcdir=$(sed -n 's/^abs_top_srcdir = //p' "$builddir/Makefile")
	topo=${TOPOLOGY:-$srcdir/../shared/topologies/2s-240c-480t.xml}
	[ -r "$topo" ] || topo=$builddir/tests/topology-2s-240c-480t.xml
	[ -r "$topo" ] || { echo "soak: not root and no 480-CPU topology to simulate (set TOPOLOGY=FILE)" >&2; exit 69; }
	args+=(--topology "$topo")
fi

daemon=
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

start_daemon() {
	"$RTPLACED" "${args[@]}" >>"$log" 2>&1 &
	daemon=$!
	for _ in $(seq 100); do
		"$CTL" --socket "$sock" status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "soak: rtplaced did not start; its log:" >&2
	tail -20 "$log" >&2
	exit 1
}

end=$((SECONDS + minutes * 60))
running() { [ "$SECONDS" -lt "$end" ]; }

start_daemon

# Plain queries.
(while running; do "$CTL" --socket "$sock" query --prio $((RANDOM % 99 + 1)) --count $((RANDOM % 4 + 1)) >/dev/null 2>&1; done) &
pids+=($!)
# Claims with short leases, released or left to expire.
(while running; do
	id=$("$CTL" --socket "$sock" --json query --prio 50 --count 1 --claim 200 2>/dev/null |
		sed -n 's/.*"claim_id": *\([0-9]*\).*/\1/p')
	[ -n "$id" ] && [ $((RANDOM % 2)) = 0 ] && "$CTL" --socket "$sock" release "$id" >/dev/null 2>&1
done) &
pids+=($!)
# Owner-bound claims: each lives as long as its short-lived process.
(while running; do "$RUN" --socket "$sock" --cpus 1 -- sleep 0.2 >/dev/null 2>&1; done) &
pids+=($!)
# Moves of a sleeping thread between the first two CPUs.
sleep 100000 &
sleeper=$!
pids+=($sleeper)
(while running; do
	"$CTL" --socket "$sock" move --tid "$sleeper" --cpu-list $((RANDOM % 2)) >/dev/null 2>&1
	sleep 0.05
done) &
pids+=($!)
# Subscribers that come and go.
(while running; do
	timeout 3 "$CTL" --socket "$sock" watch >/dev/null 2>&1
done) &
pids+=($!)
# Garbage: random lengths and bytes, some with a valid magic.
(while running; do
	python3 - "$sock" <<'PY' 2>/dev/null
import os, random, socket, struct, sys
for _ in range(200):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sys.argv[1])
        n = random.randrange(0, 512)
        body = os.urandom(n)
        if random.random() < 0.5 and n >= 4:
            body = struct.pack("<I", 0x4c505452) + body[4:]
        s.send(body)
        s.close()
    except OSError:
        pass
PY
	sleep 0.2
done) &
pids+=($!)

restarts=0
last_restart=$SECONDS
samples=()
printf '%6s %8s %6s %9s %7s\n' seconds restarts fds rss_kb claims
while running; do
	sleep "$sample_s"
	if [ $((SECONDS - last_restart)) -ge "$restart_s" ]; then
		kill -9 "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
		start_daemon
		restarts=$((restarts + 1))
		last_restart=$SECONDS
		continue
	fi
	fds=$(ls "/proc/$daemon/fd" 2>/dev/null | wc -l)
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$daemon/status" 2>/dev/null)
	claims=$("$CTL" --socket "$sock" --json status 2>/dev/null | sed -n 's/.*"claims_active": *\([0-9]*\).*/\1/p')
	printf '%6d %8d %6s %9s %7s\n' "$SECONDS" "$restarts" "$fds" "${rss:-?}" "${claims:-?}"
	[ "$SECONDS" -ge 60 ] && samples+=("$fds $rss")
done

if [ ${#samples[@]} -lt 2 ]; then
	echo "soak: too short to judge (run at least 2 minutes)"
	exit 0
fi
read -r fd0 rss0 <<<"${samples[0]}"
fdmax=$fd0 rssmax=$rss0
for s in "${samples[@]}"; do
	read -r f r <<<"$s"
	[ "$f" -gt "$fdmax" ] && fdmax=$f
	[ "$r" -gt "$rssmax" ] && rssmax=$r
done
# Tolerances: the load itself opens up to a few dozen connections and
# subscriber rings at a time; RSS may settle by a few pages.
fd_tol=64 rss_tol=2048
echo "after the first minute: fds $fd0 -> max $fdmax (tolerance +$fd_tol), RSS $rss0 -> max $rssmax kB (tolerance +$rss_tol kB), $restarts restarts"
if [ $((fdmax - fd0)) -gt $fd_tol ] || [ $((rssmax - rss0)) -gt $rss_tol ]; then
	echo "soak: NOT flat"
	exit 1
fi
echo "soak: flat"
