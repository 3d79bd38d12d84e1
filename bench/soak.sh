#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Soak test of rtplaced (run by hand, never by make check): for MINUTES it
# mixes plain and claiming queries (as root, also from inside a user
# namespace of the client's own), owner-bound claims through rtplace-run,
# moves of a sleeping thread, subscribers that come and go and garbage
# packets, some carrying descriptors (with RESTART_S, also a kill -9 and
# restart of the daemon that often); every SAMPLE_S seconds it prints the daemon's open file
# descriptors, resident memory, active claims and the requests each load
# got answered since the last sample. At the end it compares the start of
# the run (the first sample after the warm-up, a quarter of the run or one
# minute, whichever is shorter) with its end, as ratios end/start: fds, RSS,
# the request rate of each load and the daemon's CPU time per request over
# a window of WINDOW_S seconds. A daemon that leaks shows fds or RSS
# growing; one that slows down, a rate ratio below 1 with a CPU ratio
# above 1 (rates alone also follow the machine's load, printed beside).
#
# Usage, from a build directory (as root for the live BPF tracker; as any
# user it simulates the 480-CPU topology):
#   bench/soak.sh [MINUTES]        default 2
# Environment: SAMPLE_S (default 5), WINDOW_S (default 20), RESTART_S
# (default 0, no restarts: a restart resets RSS, so judge growth without
# them), TOPOLOGY (the hwloc XML simulated when not root; default the
# shared 480-CPU one). Needs python3 for the garbage sender. Exits 1 when
# fds or RSS grew by more than the tolerance printed at the end, 0
# otherwise.
set -u
minutes=${1:-2}
restart_s=${RESTART_S:-0}
sample_s=${SAMPLE_S:-5}
window_s=${WINDOW_S:-20}
builddir=$(pwd)
RTPLACED=$builddir/daemon/rtplaced
CTL=$builddir/client/rtplacectl
RUN=$builddir/client/rtplace-run

[ -x "$RTPLACED" ] && [ -x "$CTL" ] || { echo "soak: run from a build directory" >&2; exit 64; }
for v in "$minutes" "$restart_s" "$sample_s" "$window_s"; do
	case $v in '' | *[!0-9]*) echo "soak: MINUTES, RESTART_S, SAMPLE_S and WINDOW_S are whole numbers" >&2; exit 64 ;; esac
done
[ "$sample_s" -gt 0 ] && [ "$window_s" -ge "$sample_s" ] ||
	{ echo "soak: SAMPLE_S must be at least 1 and WINDOW_S at least SAMPLE_S" >&2; exit 64; }
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
trap cleanup EXIT
# A signal ends the run (the EXIT trap then cleans up); a trap that only
# cleaned up would let the loops run on without their folder.
trap 'exit 130' INT TERM

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
warm=$((minutes * 60 / 4)); [ "$warm" -gt 60 ] && warm=60
running() { [ "$SECONDS" -lt "$end" ]; }
# One byte per answered request, per load: the rates come from the sizes.
loads="query claim run move watch garbage"
for l in $loads; do : >"$tmp/n.$l"; done
count() { printf . >>"$tmp/n.$1"; }

start_daemon

# Plain queries.
(while running; do "$CTL" --socket "$sock" query --prio $((RANDOM % 99 + 1)) --count $((RANDOM % 4 + 1)) >/dev/null 2>&1 && count query; done) &
pids+=($!)
# Claims with short leases, released or left to expire.
(while running; do
	id=$("$CTL" --socket "$sock" --json query --prio 50 --count 1 --claim 200 2>/dev/null |
		sed -n 's/.*"claim": *\([0-9]*\).*/\1/p')
	[ -n "$id" ] && count claim
	[ -n "$id" ] && [ $((RANDOM % 2)) = 0 ] && "$CTL" --socket "$sock" release "$id" >/dev/null 2>&1
done) &
pids+=($!)
# Owner-bound claims: each lives as long as its short-lived process.
(while running; do "$RUN" --socket "$sock" --cpus 1 -- sleep 0.2 >/dev/null 2>&1 && count run; done) &
pids+=($!)
# As root, claims asked from inside a user namespace of the client's own,
# whose capabilities are no privilege on the host: the daemon must hold
# them at level normal like any user's (counted with the claims above).
if [ "$(id -u)" = 0 ] && unshare -Ur true 2>/dev/null; then
	(while running; do
		unshare -Ur "$CTL" --socket "$sock" query --prio 90 --count 1 --claim 200 >/dev/null 2>&1 &&
			count claim
		sleep 0.1
	done) &
	pids+=($!)
fi
# Moves of a sleeping thread between the first two CPUs.
sleep 100000 &
sleeper=$!
pids+=($sleeper)
(while running; do
	"$CTL" --socket "$sock" move --tid "$sleeper" --cpu-list $((RANDOM % 2)) >/dev/null 2>&1 && count move
	sleep 0.05
done) &
pids+=($!)
# Subscribers that come and go.
(while running; do
	# a subscriber that lasted its 3 s counts; one refused does not
	timeout 3 "$CTL" --socket "$sock" watch >/dev/null 2>&1
	if [ $? = 124 ]; then count watch; else sleep 0.1; fi
done) &
pids+=($!)
# Garbage: random lengths and bytes, some with a valid magic, a quarter
# carrying 1-6 descriptors (more than a request may bring, and empty
# packets among them): the daemon must close every one it receives.
(while running; do
	python3 - "$sock" "$tmp/n.garbage" <<'PY' 2>/dev/null
import array, os, random, socket, struct, sys
null = os.open("/dev/null", os.O_RDONLY)
for _ in range(200):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sys.argv[1])
        n = random.randrange(0, 512)
        body = os.urandom(n)
        if random.random() < 0.5 and n >= 4:
            body = struct.pack("<I", 0x4c505452) + body[4:]
        if random.random() < 0.25:
            fds = array.array("i", [null] * random.randrange(1, 7))
            s.sendmsg([body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        else:
            s.send(body)
        s.close()
        with open(sys.argv[2], "a") as f:
            f.write(".")
    except OSError:
        pass
PY
	sleep 0.2
done) &
pids+=($!)

restarts=0
last_restart=$SECONDS
times=() fdss=() rsss=() counts=() cpus=() loads_avg=()
hz=$(getconf CLK_TCK)
counts_now() {
	local l c=
	for l in $loads; do c="$c $(stat -c %s "$tmp/n.$l")"; done
	echo "$c"
}
printf '%6s %8s %6s %9s %7s  %s\n' seconds restarts fds rss_kb claims "answered since the last sample: $loads"
prev=$(counts_now)
while running; do
	sleep "$sample_s"
	# a sample past the end would count loads that have stopped
	running || break
	if [ "$restart_s" -gt 0 ] && [ $((SECONDS - last_restart)) -ge "$restart_s" ]; then
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
	now=$(counts_now)
	delta=$(awk -v a="$now" -v b="$prev" 'BEGIN { n = split(a, x); split(b, y); for (i = 1; i <= n; i++) printf "%d ", x[i] - y[i] }')
	prev=$now
	printf '%6d %8d %6s %9s %7s  %s\n' "$SECONDS" "$restarts" "$fds" "${rss:-?}" "${claims:-?}" "$delta"
	if [ "$SECONDS" -ge "$warm" ] && [ -n "$rss" ]; then
		times+=("$SECONDS") fdss+=("$fds") rsss+=("$rss") counts+=("$now")
		# the daemon's user + system CPU ticks, and the machine's load
		cpus+=("$(awk '{ print $14 + $15 }' "/proc/$daemon/stat" 2>/dev/null || echo 0)")
		loads_avg+=("$(cut -d' ' -f1 /proc/loadavg)")
	fi
done

n=${#times[@]}
if [ "$n" -lt 2 ] || [ $((times[n - 1] - times[0])) -lt $((2 * window_s)) ]; then
	echo "soak: too short to compare start and end (run longer than the warm-up and two windows of ${window_s} s)"
	exit 0
fi
# The samples that close the first window after the warm-up and open the
# last one.
s1=0; while [ $((times[s1] - times[0])) -lt "$window_s" ]; do s1=$((s1 + 1)); done
e0=$((n - 1)); while [ $((times[n - 1] - times[e0])) -lt "$window_s" ]; do e0=$((e0 - 1)); done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "start: ${times[0]}-${times[s1]} s, end: ${times[e0]}-${times[n - 1]} s, $restarts restarts"
# fds: the fewest open in each window, so that connections in flight at
# one sample do not read as growth (a leak raises the floor).
fmin() { local i m=${fdss[$1]}; for ((i = $1; i <= $2; i++)); do [ "${fdss[i]}" -lt "$m" ] && m=${fdss[i]}; done; echo "$m"; }
fd_s=$(fmin 0 "$s1") fd_e=$(fmin "$e0" $((n - 1)))
echo "fds (fewest in the window): $fd_s -> $fd_e, ratio $(ratio "$fd_e" "$fd_s")"
echo "RSS: ${rsss[0]} -> ${rsss[n - 1]} kB, ratio $(ratio "${rsss[n - 1]}" "${rsss[0]}")"
read -r -a c0 <<<"${counts[0]}"; read -r -a c1 <<<"${counts[s1]}"
read -r -a d0 <<<"${counts[e0]}"; read -r -a d1 <<<"${counts[n - 1]}"
i=0
for l in $loads; do
	rs=$(awk -v a="${c1[i]}" -v b="${c0[i]}" -v t=$((times[s1] - times[0])) 'BEGIN { printf "%.1f", (a - b) / t }')
	re=$(awk -v a="${d1[i]}" -v b="${d0[i]}" -v t=$((times[n - 1] - times[e0])) 'BEGIN { printf "%.1f", (a - b) / t }')
	echo "rate $l: $rs/s -> $re/s, ratio $(ratio "$re" "$rs")"
	i=$((i + 1))
done
# The rates follow the machine's load too (the loads and the daemon share
# its CPUs); the daemon's CPU time per request does much less.
sum() { awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x); split(b, y); for (i = 1; i <= n; i++) t += x[i] - y[i]; print t }'; }
req_s=$(sum "${counts[s1]}" "${counts[0]}") req_e=$(sum "${counts[n - 1]}" "${counts[e0]}")
cpu_s=$(awk -v a="${cpus[s1]}" -v b="${cpus[0]}" -v r="$req_s" -v hz="$hz" 'BEGIN { if (r > 0) printf "%.1f", (a - b) * 1e6 / hz / r; else print 0 }')
cpu_e=$(awk -v a="${cpus[n - 1]}" -v b="${cpus[e0]}" -v r="$req_e" -v hz="$hz" 'BEGIN { if (r > 0) printf "%.1f", (a - b) * 1e6 / hz / r; else print 0 }')
echo "daemon CPU per request (all loads): $cpu_s us -> $cpu_e us, ratio $(ratio "$cpu_e" "$cpu_s")"
echo "load average: ${loads_avg[0]}-${loads_avg[s1]} at the start, ${loads_avg[e0]}-${loads_avg[n - 1]} at the end"
fdmax=${fdss[0]} rssmax=${rsss[0]}
for ((i = 0; i < n; i++)); do
	[ "${fdss[i]}" -gt "$fdmax" ] && fdmax=${fdss[i]}
	[ "${rsss[i]}" -gt "$rssmax" ] && rssmax=${rsss[i]}
done
# Tolerances: the load itself opens up to a few dozen connections and
# subscriber rings at a time; RSS may settle by a few pages.
fd_tol=64 rss_tol=2048
echo "after the warm-up: fds ${fdss[0]} -> max $fdmax (tolerance +$fd_tol), RSS ${rsss[0]} -> max $rssmax kB (tolerance +$rss_tol kB)"
if [ $((fdmax - fdss[0])) -gt $fd_tol ] || [ $((rssmax - rsss[0])) -gt $rss_tol ]; then
	echo "soak: NOT flat"
	exit 1
fi
echo "soak: flat"
