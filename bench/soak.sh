#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Soak test of rtplaced (run by hand, never by make check): for MINUTES it
# mixes plain and claiming queries (as root, also from inside a user
# namespace of the client's own), owner-bound claims through rtplace-run,
# moves of a sleeping thread, subscribers that come and go and garbage
# packets, some carrying descriptors. As root it adds the hostile mixes of
# DESIGN §14, each bounded and cleaned up on exit:
#
#   durable    root keeps up to 48 owner-bound claims on CPU 0 and records
#              every claim the daemon acknowledged (id, CPU, owner,
#              lease); after each kill -9 and restart (--restart-minutes)
#              every acknowledged claim not released and not near its
#              lease's end must be back (probed by another uid's RELEASE,
#              which the daemon refuses as "another user's" only for a
#              claim it holds), with its CPU and owner in the state
#              journal, released ones must stay gone, three owners are
#              killed and their claims must end; ids never repeat
#   manage     nobody and daemon ask MANAGE claims for processes of 20 to
#              1,500 threads (bench/soak-manage, two at a time each),
#              while root's `rtplace-run --manage` process must have every
#              thread in the tracker's watch map (per-user shares), and
#              each MANAGE reply is timed (bounded work per request)
#   userns     nobody under `unshare -Ur` moves root's thread to FIFO 99,
#              claims an exclusive rt99 CPU with no end and subscribes:
#              the move is refused, the claim held at user terms (a
#              bounded lease), and no record of root's thread shown
#   fdgarbage  nobody sends zero-length, oversized and truncated packets
#              carrying descriptors (up to 250: the daemon's control
#              buffer is cut, MSG_CTRUNC), closing mid-request
#   subflood   four uids each keep ten subscribers open (more than their
#              share) while root's `rtplacectl watch` must be taken
#   bpfwrite   nobody with CAP_BPF (ambient) asks LOCAL and tries to write
#              what it hands out: a BPF program that stores into it as a
#              map, a writable mapping, write(2); each must be refused,
#              while the same program on a map of nobody's own loads (so
#              a refusal is not the writer's own failure)
#   claimfd    eight uids (no CAP_SYS_NICE) each hold [limits]
#              max-claims-per-user (8 here) owner-bound claims, a pidfd
#              each (their RT right: group users in [moves] rt-groups,
#              since root may lack CAP_SYS_RESOURCE to give them an
#              RLIMIT_RTPRIO), stacked on CPU 1 at rt2..rt65 for the
#              whole run ([limits] max-lease-ms is the run's length; the
#              plain loads then find fewer free CPUs); one more
#              claim each uid asks every few seconds must be refused for
#              the limit (granted: a claim was lost). NOFILE=N runs the
#              daemon at RLIMIT_NOFILE N so that users meet its
#              descriptor reserve too
#   rtkit      a private system bus (dbus-daemon of the run's own) and
#              [rtkit] enable = yes: nobody and daemon each flood
#              MakeThreadHighPriorityWithPID (tests/integration/
#              test-rtkit-flood: 8 connections, 16 calls waiting on
#              each) while root's and another user's (bin's) calls must
#              be served
#   storm      two uids open and close connections as fast as they can,
#              10 s of every 15
#
# Root's query latency is sampled throughout (bench/soak-latency: a plain
# QUERY every 5 ms on one connection, p50/p99/max per SAMPLE_S window)
# against an idle baseline measured before any load starts; a window whose
# p99 exceeds P99_FACTOR (default 2) times the idle p99 fails the run.
# Windows cut by a restart are counted apart.
#
# As root, the run lays out its processes as systemd lays out a host's:
# the daemon (a service), root's sampler (root's session) and everything
# else (the loads and the mixes: other sessions) each in a cpu cgroup of
# its own, of equal weight (CPU_GROUPS=0: all in the run's own cgroup).
# Without them, the loads' fork-and-exec churn on a small machine decides
# when the daemon and the sampler run, whatever the daemon does: on 2
# vCPUs the plain loads alone took root's p99 from 0.1 to 3.5-4.3 ms.
# The groups keep that out, so that what remains is the daemon's own
# fairness: how long root's request waits behind other users' work.
#
# Every SAMPLE_S seconds it prints the daemon's open file descriptors,
# resident memory, active claims, the threads in the tracker's watch map
# and the requests each load got answered since the last sample. At the
# end: fds (all, and the /dev/null ones the garbage carries), RSS and
# RssAnon first and last (after a warm-up) for each daemon incarnation
# between restarts, and their floors, the counts of every mix, and as the
# start of the run (the first window of WINDOW_S seconds after the warm-up,
# a quarter of the run or one minute, whichever is shorter) against its
# end, as ratios end/start: the request rate of each load and the daemon's
# CPU time per request (summed over incarnations). A daemon that leaks
# shows fds or RSS growing within an incarnation; one that slows down, a
# rate ratio below 1 with a CPU ratio above 1 (rates alone also follow
# the machine's load, printed beside).
#
# Usage, from a build directory (as root for the live BPF tracker and the
# hostile mixes; as any user it simulates the 480-CPU topology):
#   bench/soak.sh [--minutes N] [--restart-minutes N] [MINUTES]
# --minutes: the run's length (default 2); --restart-minutes: a kill -9
# and restart of the daemon that often (default 0, none; RESTART_S=S sets
# it in seconds). Environment: MIXES (the hostile mixes to run, by name,
# default all of them: each costs root's latency its own share, and one
# run per mix tells which), SAMPLE_S (default 5), WINDOW_S (default
# 20), TOPOLOGY (the hwloc XML simulated when not root; default the shared
# 480-CPU one), P99_FACTOR (above), NOFILE (above). Needs python3 and
# bench/soak-latency; as root also setpriv, unshare, prlimit, bpftool,
# dbus-daemon, dbus-send and tests/integration/test-rtkit-flood (`make
# check` builds it, or `make tests/integration/test-rtkit-flood`).
# Everything the run starts (the daemon, the bus, every mix's processes,
# the claims' owners) ends on every exit path, its folder is removed, and
# rlimits are set only on the processes started under prlimit.
# Exits 1 when the floor of fds, /dev/null fds or RssAnon grew within an
# incarnation by more than its tolerance (below), or when a mix saw what DESIGN §14 forbids (a lost,
# moved or reused claim, a privileged request granted in a user
# namespace, root refused a subscription or its managed threads unwatched,
# a write through LOCAL, a uid over its claim limit, root or another user
# refused by RealtimeKit during the floods, root's p99 over P99_FACTOR
# times idle); 0 otherwise.
set -u
minutes=2
restart_min=
restart_s=${RESTART_S:-0}
while [ $# -gt 0 ]; do
	case $1 in
	--minutes | --restart-minutes)
		[ $# -ge 2 ] || { echo "soak: $1 needs a number of minutes" >&2; exit 64; }
		if [ "$1" = --minutes ]; then minutes=$2; else restart_min=$2; fi
		shift 2 ;;
	-h | --help) sed -n '3,/^set -u$/ { /^set -u$/d; s/^# \{0,1\}//; p }' "$0"; exit 0 ;;
	-*) echo "soak: unknown option $1 (--minutes N, --restart-minutes N)" >&2; exit 64 ;;
	*) minutes=$1; shift ;;
	esac
done
sample_s=${SAMPLE_S:-5}
window_s=${WINDOW_S:-20}
builddir=$(pwd)
RTPLACED=$builddir/daemon/rtplaced
CTL=$builddir/client/rtplacectl
RUN=$builddir/client/rtplace-run

[ -x "$RTPLACED" ] && [ -x "$CTL" ] || { echo "soak: run from a build directory" >&2; exit 64; }
for v in "$minutes" "${restart_min:-0}" "$restart_s" "$sample_s" "$window_s"; do
	case $v in '' | *[!0-9]*) echo "soak: --minutes, --restart-minutes, RESTART_S, SAMPLE_S and WINDOW_S are whole numbers" >&2; exit 64 ;; esac
done
[ -n "$restart_min" ] && restart_s=$((restart_min * 60))
[ "$minutes" -gt 0 ] || { echo "soak: --minutes must be at least 1" >&2; exit 64; }
[ "$sample_s" -gt 0 ] && [ "$window_s" -ge "$sample_s" ] ||
	{ echo "soak: SAMPLE_S must be at least 1 and WINDOW_S at least SAMPLE_S" >&2; exit 64; }
command -v python3 >/dev/null || { echo "soak: needs python3 (apt-get install python3)" >&2; exit 69; }
srcdir=$(sed -n 's/^abs_top_srcdir = //p' "$builddir/Makefile")

hostile=0
if [ "$(id -u)" = 0 ]; then
	for t in setpriv unshare bpftool; do
		command -v $t >/dev/null || { echo "soak: the hostile mixes need $t (util-linux, bpftool)" >&2; exit 69; }
	done
	# Other users run Debian's python3: root's may be a private one.
	[ -x /usr/bin/python3 ] || { echo "soak: the hostile mixes need /usr/bin/python3" >&2; exit 69; }
	[ -x "$builddir/bench/soak-manage" ] || { echo "soak: bench/soak-manage is not built (make)" >&2; exit 64; }
	for t in prlimit dbus-daemon dbus-send; do
		command -v $t >/dev/null || { echo "soak: the hostile mixes need $t (util-linux, dbus)" >&2; exit 69; }
	done
	[ -x "$builddir/tests/integration/test-rtkit-flood" ] ||
		{ echo "soak: tests/integration/test-rtkit-flood is not built (make tests/integration/test-rtkit-flood)" >&2; exit 64; }
	hostile=1
else
	echo "soak: not root: no live tracker, no hostile mixes (durable, manage, userns, fdgarbage, subflood, bpfwrite, claimfd, rtkit, storm)"
fi
[ -x "$builddir/bench/soak-latency" ] || { echo "soak: bench/soak-latency is not built (make)" >&2; exit 64; }
p99_factor=${P99_FACTOR:-2}
all_mixes="durable manage userns fdgarbage subflood bpfwrite claimfd rtkit storm"
mixes=${MIXES-$all_mixes}
for m in $mixes; do
	[[ " $all_mixes " == *" $m "* ]] || { echo "soak: MIXES: no mix named $m (the mixes: $all_mixes)" >&2; exit 64; }
done
# Whether the hostile mix $1 runs.
mix() { [ "$hostile" = 1 ] && [[ " $mixes " == *" $1 "* ]]; }
nofile=${NOFILE:-}
case $p99_factor in '' | *[!0-9]* | 0) echo "soak: P99_FACTOR is a whole number, 1 or more" >&2; exit 64 ;; esac
case $nofile in *[!0-9]*) echo "soak: NOFILE is a whole number" >&2; exit 64 ;; esac

tmp=$(mktemp -d /tmp/rtplace-soak.XXXXXX)
chmod 755 "$tmp"
sock=$tmp/rtplaced.sock
conf=$tmp/rtplaced.conf
log=$tmp/rtplaced.log
# Other users reach the socket: the daemon's rules refuse them, not its mode.
printf '[daemon]\nsocket-mode = 0666\n' >"$conf"
# claimfd: users at a limit that two CPUs' priorities can hold (claims
# stack at rising priorities), for the whole run.
max_lease_ms=$(((minutes * 60 + 600) * 1000))
claimfd_limit=8
# Their RT right is group users' ceiling ([moves] rt-groups): root may
# not raise another process's RLIMIT_RTPRIO past its own hard limit.
[ "$hostile" = 1 ] && printf '[limits]\nmax-claims-per-user = %d\nmax-lease-ms = %d\n[moves]\nrt-groups = users\nmax-prio = 99\n[rtkit]\nenable = yes\n' \
	"$claimfd_limit" "$max_lease_ms" >>"$conf"
args=(--config "$conf" --socket "$sock")
if [ "$(id -u)" != 0 ]; then
	topo=${TOPOLOGY:-$srcdir/../shared/topologies/2s-240c-480t.xml}
	[ -r "$topo" ] || topo=$builddir/tests/topology-2s-240c-480t.xml
	[ -r "$topo" ] || { echo "soak: not root and no 480-CPU topology to simulate (set TOPOLOGY=FILE)" >&2; exit 69; }
	args+=(--topology "$topo")
fi

daemon=
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	wait 2>/dev/null
	# The mixes' own children (owners, floods, watchers), by the uids
	# and the folder that are this run's alone.
	for p in $(grep -l "$tmp" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$tmp"
	cg_remove
}
trap cleanup EXIT

# The cpu cgroups (above): cgroup v1's cpu hierarchy, or v2's where its
# root gives its children the cpu controller. cg_group is the run's
# group, empty when there is none (then every process stays where the run
# started).
cg_group= cg_home=
if [ "$hostile" = 1 ] && [ "${CPU_GROUPS:-1}" != 0 ]; then
	if [ -d /sys/fs/cgroup/cpu ] && [ -e /sys/fs/cgroup/cpu/cgroup.procs ]; then
		cg_home=/sys/fs/cgroup/cpu$(sed -n 's/^[0-9]*:[^:]*\bcpu\b[^:]*:\(.*\)$/\1/p' /proc/self/cgroup)
	elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		cg_home=/sys/fs/cgroup
	fi
	cg_group=${cg_home:+$cg_home/rtplace-soak.$$}
	if [ -n "$cg_group" ] && mkdir "$cg_group" 2>/dev/null; then
		[ -e "$cg_group/cgroup.subtree_control" ] && echo +cpu >"$cg_group/cgroup.subtree_control"
		mkdir "$cg_group/daemon" "$cg_group/root" "$cg_group/load" && echo $$ >"$cg_group/load/cgroup.procs" ||
			{ echo "soak: cannot lay out the cpu cgroups in $cg_group" >&2; exit 1; }
	else
		echo "soak: no cpu cgroup to lay the run out in (cgroup v1's cpu, or v2 with cpu at its root): the loads share the CPUs with the daemon and root's sampler"
		cg_group=
	fi
fi
# Puts process $2 into the run's group $1 (daemon, root, load).
cg_place() { [ -z "$cg_group" ] || echo "$2" >"$cg_group/$1/cgroup.procs"; }
# After every process of the run has ended.
cg_remove() {
	local g _
	[ -n "$cg_group" ] || return 0
	echo $$ >"$cg_home/cgroup.procs"
	for _ in $(seq 50); do
		for g in daemon root load; do [ -d "$cg_group/$g" ] && rmdir "$cg_group/$g" 2>/dev/null; done
		rmdir "$cg_group" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "soak: could not remove $cg_group" >&2
}
# A signal ends the run (the EXIT trap then cleans up); a trap that only
# cleaned up would let the loops run on without their folder.
trap 'exit 130' INT TERM

# Binaries other users run, where they can reach them (/root is 0700).
BIN=$tmp/bin
if [ "$hostile" = 1 ]; then
	sh "$srcdir/tests/lib/stage-programs.sh" "$BIN" "$CTL" "$RUN" "$builddir/bench/soak-manage" \
		"$builddir/tests/integration/test-rtkit-flood" ||
		{ echo "soak: cannot stage the clients in $BIN" >&2; exit 1; }
fi
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
NOBODY=65534 DAEMONUID=1 PROBEUID=60999

# The incarnation (restarts so far) and whether a restart is under way:
# the mixes do not count what a restart interrupted.
echo 0 >"$tmp/inc"
incarnation() { if [ -e "$tmp/restarting" ]; then echo r; else cat "$tmp/inc"; fi; }
# Whether the daemon stayed the same, up, since incarnation said $1.
same_inc() { [ "$1" != r ] && [ "$1" = "$(incarnation)" ]; }
start_daemon() {
	${nofile:+prlimit --nofile="$nofile:$nofile"} "$RTPLACED" "${args[@]}" >>"$log" 2>&1 &
	daemon=$!
	cg_place daemon "$daemon"
	echo "$daemon" >"$tmp/daemon.pid"
	for _ in $(seq 100); do
		"$CTL" --socket "$sock" status >/dev/null 2>&1 && { date +%s >"$tmp/daemon.since"; return 0; }
		sleep 0.05
	done
	echo "soak: rtplaced did not start; its log:" >&2
	tail -20 "$log" >&2
	exit 1
}

end=$((SECONDS + minutes * 60))
warm=$((minutes * 60 / 4)); [ "$warm" -gt 60 ] && warm=60
# Within an incarnation after a restart: its first samples are of a daemon
# still restoring claims and re-watching threads.
inc_warm=20; [ "$restart_s" -gt 0 ] && [ $((restart_s / 4)) -lt $inc_warm ] && inc_warm=$((restart_s / 4))
running() { [ "$SECONDS" -lt "$end" ]; }
# One byte per answered request, per load: the rates come from the sizes.
loads="query claim run move watch garbage"
for l in $loads; do : >"$tmp/n.$l"; done
count() { printf . >>"$tmp/n.$1"; }
# One line per event, per mix: the summary counts them.
# (A flooder's last line may come after the clean-up: it is dropped.)
tally() { local f=$1; shift; echo "$*" 2>/dev/null >>"$tmp/t.$f"; }
nlines() { local n; n=$(grep -c -- "${2:-}" "$tmp/t.$1" 2>/dev/null); echo "${n:-0}"; }
status_claims() { "$CTL" --socket "$sock" --json status 2>/dev/null | sed -n 's/.*"claims_active": *\([0-9]*\).*/\1/p'; }

# rtkit: a private system bus of the run's own (tests/lib/system-bus.sh),
# the daemon serving RealtimeKit1 on it by the shipped policy.
if mix rtkit; then
	. "$srcdir/tests/lib/system-bus.sh"
	PIDS=
	bus_start "$tmp/bus.sock" "<include>$srcdir/dbus/rtplace-realtimekit.conf</include>" ||
		{ echo "soak: dbus-daemon did not start" >&2; exit 1; }
	pids+=($PIDS)
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/bus.sock
fi

start_daemon

# Root's idle query latency, before any load: the baseline of the p99
# sampled throughout.
(cg_place root $BASHPID && exec "$builddir/bench/soak-latency" "$sock" 10 10) >"$tmp/latency.idle" ||
	{ echo "soak: bench/soak-latency could not query the daemon" >&2; exit 1; }
idle_p99=$(awk '{ print $8 }' "$tmp/latency.idle")
echo "root's query latency idle: $(sed 's/^window [0-9]* //' "$tmp/latency.idle")"

# claimfd: the owners and their claims, made before the loads so that
# they stack on CPU 1 at rising priorities (a claim takes a CPU only
# below its level).
claimfd_uids="60011 60012 60013 60014 60015 60016 60017 60018"
# Waits (2 s at most) until process $1 is a sleep of uid $2: an owner
# started with setpriv is root's until it has switched.
owner_ready() {
	local _
	for _ in $(seq 100); do
		[ "$(stat -c %u "/proc/$1" 2>/dev/null)" = "$2" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ] && return 0
		sleep 0.02
	done
	return 1
}
# As uid $1 in group users, [moves] rt-groups (RT claims, no CAP_SYS_NICE).
as_rt() { local u=$1; shift; setpriv --reuid="$u" --regid=100 --clear-groups "$@"; }
if mix claimfd; then
	k=0
	for u in $claimfd_uids; do
		for j in $(seq 0 $((claimfd_limit - 1))); do
			# Named after the run's folder, which the clean-up looks for.
			(cd / && exec setpriv --reuid="$u" --regid=100 --clear-groups \
				bash -c 'exec -a "$0" sleep "$1"' "$tmp/claimfd-owner" $((minutes * 60 + 120))) &
			ow=$!
			# (killed with the mixes: the clean-up's wait would
			# otherwise wait for every owner's sleep)
			pids+=($ow)
			owner_ready "$ow" "$u"
			(cd / && as_rt "$u" "$BIN/rtplacectl" --socket "$sock" query --prio $((2 + k * claimfd_limit + j)) \
				--count 1 --cpu-list 1 --claim "$max_lease_ms" --owner "$ow" >/dev/null 2>"$tmp/claimfd.err") ||
				tally claimfd "setup uid $u claim $j refused: $(head -1 "$tmp/claimfd.err")"
		done
		k=$((k + 1))
	done
	echo "claimfd: $(status_claims) claims active after the setup ($(nlines claimfd setup) refused)"
fi

# Root's query latency, one line per window, for the whole run.
(cg_place root $BASHPID && exec "$builddir/bench/soak-latency" "$sock" "$sample_s" $((minutes * 60))) >"$tmp/latency" 2>&1 &
pids+=($!)

# Plain queries.
(while running; do "$CTL" --socket "$sock" query --prio $((RANDOM % 99 + 1)) --count $((RANDOM % 4 + 1)) >/dev/null 2>&1 && count query; done) &
pids+=($!)
# Claims with short leases, released or left to expire.
(while running; do
	id=$("$CTL" --socket "$sock" --json query --prio 50 --count 1 --claim 200 2>/dev/null |
		sed -n 's/.*"claim": *{"id": *\([0-9]*\).*/\1/p')
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
sleep $((minutes * 60 + 60)) &
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

# Garbage. random: lengths 0-511 and random bytes, some with a valid
# magic, a quarter carrying 1-6 descriptors (more than a request may
# bring). shapes: each packet one of the shapes that once kept the
# descriptors it carried, sent by nobody; the answer (answer() below) is
# tallied by shape. Each shape but midclose must get an ERROR (or, for a
# connection refused at a limit, its ERROR): rtplace-proto.h, "Bad
# input". The daemon must close every descriptor it receives: its fd
# count says.
GARBAGE='
import array, os, random, socket, struct, sys
mode, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
null = os.open("/dev/null", os.O_RDONLY)
MAGIC, MSG_MAX = 0x4c505452, 65536
def header(mtype, length):
    return struct.pack("=IHHIIiI", MAGIC, 1, mtype, length, random.randrange(1 << 32), 0, 0)
def shape():
    k = random.choice(["zero", "oversized", "ctrunc", "short", "nofd-type", "midclose"])
    if k == "zero":
        return k, b"", random.randrange(1, 7)
    if k == "oversized":
        n = random.randrange(MSG_MAX + 1, 3 * MSG_MAX)
        return k, header(0x0101, n) + os.urandom(n - 24), random.randrange(1, 7)
    if k == "ctrunc":
        return k, header(0x0104, 24), 250
    if k == "short":
        return k, header(0x0105, 200)[:random.randrange(1, 24)], random.randrange(1, 7)
    if k == "nofd-type":
        return k, header(0x0104, 24), random.randrange(1, 7)
    return k, header(0x0105, 24 + 144) + os.urandom(144), random.randrange(1, 7)
# What came back: an ERROR ("limit" when it refused the connection at a
# limit: request id 0, -EUSERS), a reply, the close, or nothing within 2 s.
# A reset is read past, as librtplace does: a daemon that closed with
# packets unread leaves one ahead of its ERROR.
def answer(s):
    s.settimeout(2)
    for _ in range(2):
        try:
            r = s.recv(MSG_MAX)
        except socket.timeout:
            return "silent"
        except ConnectionResetError:
            continue
        except OSError:
            return "closed"
        if not r:
            return "closed"
        mtype, rid, status = struct.unpack_from("=H", r, 6)[0], *struct.unpack_from("=Ii", r, 12)
        if mtype != 0x0200:
            return "reply"
        return "limit" if rid == 0 and status == -87 else "error"
    return "reset"
lines = []
for _ in range(100 if mode == "shapes" else 200):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * MSG_MAX)
        s.connect(path)
        if mode == "shapes":
            kind, body, nfd = shape()
        else:
            kind, n = "random", random.randrange(0, 512)
            body = os.urandom(n)
            if random.random() < 0.5 and n >= 4:
                body = struct.pack("<I", MAGIC) + body[4:]
            nfd = random.randrange(1, 7) if random.random() < 0.25 else 0
        got = "sent"
        try:
            if nfd:
                s.sendmsg([body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null] * nfd))])
            else:
                s.send(body)
        except BrokenPipeError:
            got = "refused"
        if mode == "shapes" and kind != "midclose":
            got = answer(s)
        s.close()
        lines.append(kind + " " + got + "\n")
    except OSError as e:
        lines.append("refused " + (e.strerror or "error").replace(" ", "-") + "\n")
with open(out, "a") as f:
    f.writelines(lines)
'
(while running; do
	python3 -c "$GARBAGE" random "$sock" "$tmp/garbage.random" 2>/dev/null
	[ -e "$tmp/garbage.random" ] && { tr -cd '\n' <"$tmp/garbage.random" | tr '\n' . >>"$tmp/n.garbage"; : >"$tmp/garbage.random"; }
	sleep 0.2
done) &
pids+=($!)

if [ "$hostile" = 1 ]; then
	# --- fdgarbage: the shapes, as nobody (who writes the tally).
	if mix fdgarbage; then
		: >"$tmp/t.fdgarbage"
		chmod 666 "$tmp/t.fdgarbage"
		(cd / && while running; do
			as $NOBODY /usr/bin/python3 -c "$GARBAGE" shapes "$sock" "$tmp/t.fdgarbage" 2>/dev/null
			sleep 1
		done) &
		pids+=($!)
	fi

	# --- userns: nobody's privileged requests from unshare -Ur. The
	# claim's parent (its owner) is nobody's shell inside the namespace.
	if mix userns; then
		(cd / && while running; do
			i0=$(incarnation)
			out=$(as $NOBODY unshare -Ur "$BIN/rtplacectl" --socket "$sock" move --tid "$sleeper" --cpu-list 1 \
				--prio 99 --policy fifo 2>&1)
			rc=$?
			pol=$(chrt -p "$sleeper" 2>/dev/null | sed -n 's/.*policy: *//p')
			if [ "$pol" != SCHED_OTHER ]; then tally userns "move granted ($pol)"
			elif ! same_inc "$i0"; then :
			elif [ $rc != 0 ] && [[ $out == *"belongs to uid 0"* ]]; then tally userns "move refused"
			else tally userns "move other $rc ${out//$'\n'/ }"; fi
			i0=$(incarnation)
			out=$(as $NOBODY unshare -Ur sh -c '"$1" --socket "$2" --json query --prio 99 --count 1 --claim 4294967294 --exclusive; true' \
				- "$BIN/rtplacectl" "$sock" 2>&1)
			lease=$(echo "$out" | sed -n 's/.*"lease_left_ms": *\([0-9]*\).*/\1/p')
			if ! same_inc "$i0"; then :
			elif [ -z "$lease" ]; then tally userns "claim refused ${out//$'\n'/ }"
			elif [ "$lease" -le "$max_lease_ms" ]; then tally userns "claim held-at-user-terms"
			else tally userns "claim granted lease $lease"; fi
			i0=$(incarnation)
			seen=$(as $NOBODY unshare -Ur timeout 2 "$BIN/rtplacectl" --socket "$sock" watch 2>/dev/null |
				awk -v t="$sleeper" '$4 == t' | wc -l)
			same_inc "$i0" && tally userns "watch root-records $seen"
			sleep 1
		done) &
		pids+=($!)
	fi

	# --- subflood: four uids, ten subscribers each (their share is 8),
	# and root's subscriber among them.
	if mix subflood; then
		(cd / && while running; do
			i0=$(incarnation)
			for u in 60001 60002 60003 60004; do
				for _ in $(seq 10); do
					(as $u timeout 4 "$BIN/rtplacectl" --socket "$sock" watch >/dev/null 2>&1
					 rc=$?
					 same_inc "$i0" && tally subflood "uid $u $([ $rc = 124 ] && echo held || echo refused)") &
				done
			done
			sleep 1
			timeout 2 "$CTL" --socket "$sock" watch >/dev/null 2>&1
			rc=$?
			same_inc "$i0" && tally subflood "uid 0 $([ $rc = 124 ] && echo held || echo refused)"
			wait
			sleep 1
		done) &
		pids+=($!)
	fi

	# --- manage: nobody and daemon, two MANAGE flooders at a time each;
	# root keeps one `rtplace-run --manage` process of 8 threads.
	if mix manage; then
		for u in $NOBODY $DAEMONUID; do
			(cd / && while running; do
				for _ in 1 2; do
					nt=$(shuf -n1 -e 20 500 1500)
					(r=$(as $u "$BIN/soak-manage" "$nt" $((RANDOM % 10 + 5)) "$sock" 2>&1)
					 tally manage "uid $u threads $nt $r") &
				done
				wait
			done) &
			pids+=($!)
		done
		# Only a process whose claim the daemon answered counts: one started
		# across a restart runs on unclaimed and unmanaged.
		(cd / && while running; do
			i0=$(incarnation)
			"$BIN/rtplace-run" --socket "$sock" --manage --cpus 1 -- "$BIN/soak-manage" 8 40 >/dev/null 2>"$tmp/root-manage.err" &
			p=$!
			sleep 1
			if same_inc "$i0" && ! grep -q warning "$tmp/root-manage.err"; then echo $p; else echo 0; fi >"$tmp/root-manage.pid"
			date +%s >"$tmp/root-manage.since"
			wait
		done) &
		pids+=($!)
	fi

	# --- bpfwrite: nobody with ambient CAP_BPF, through LOCAL.
	if mix bpfwrite; then
		BPFWRITE='
import array, ctypes, mmap, os, socket, struct, sys
path = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
SYS_BPF = {"x86_64": 321, "aarch64": 280}[os.uname().machine]
def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(SYS_BPF, cmd, buf, 128)
    return r if r >= 0 else -ctypes.get_errno()
def name(e):
    return "ok" if e >= 0 else os.strerror(-e).replace(" ", "-")
# A socket filter that stores 0x5c at byte 0 of the value of map fd.
def store_through(fd):
    insns = struct.pack("=BBhi", 0x18, 1 | 2 << 4, 0, fd) + struct.pack("=BBhi", 0, 0, 0, 0)
    insns += struct.pack("=BBhi", 0x62, 1, 0, 0x5c) + struct.pack("=BBhi", 0xb7, 0, 0, 0)
    insns += struct.pack("=BBhi", 0x95, 0, 0, 0)
    ibuf, lic = ctypes.create_string_buffer(insns), ctypes.create_string_buffer(b"GPL")
    r = bpf(5, struct.pack("=IIQQ", 1, len(insns) // 8, ctypes.addressof(ibuf), ctypes.addressof(lic)))
    if r >= 0:
        os.close(r)
    return r
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
s.send(struct.pack("=IHHIIiI", 0x4c505452, 3, 0x010a, 24, 7, 0, 0))
msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(2 * 4))
fds = array.array("i")
for level, kind, data in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(data[:len(data) - len(data) % 4])
if len(fds) != 2:
    print("nolocal %s" % struct.unpack_from("=i", msg, 16)[0])
    sys.exit(0)
size = struct.unpack_from("=Q", msg, 24)[0]
prog = store_through(fds[0])
try:
    mmap.mmap(fds[0], size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    mapped = 0
except OSError as e:
    mapped = -e.errno
try:
    os.write(fds[0], b"\x5c")
    wrote = 0
except OSError as e:
    wrote = -e.errno
own = bpf(0, struct.pack("=IIIII", 2, 4, 64, 1, 0))
control = store_through(own) if own >= 0 else own
print("local prog %s mmap %s write %s control %s" % (name(prog), name(mapped), name(wrote), name(control)))
'
		(cd / && while running; do
			i0=$(incarnation)
			out=$(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups --inh-caps=+bpf --ambient-caps=+bpf \
				/usr/bin/python3 -c "$BPFWRITE" "$sock" 2>&1)
			same_inc "$i0" && tally bpfwrite "${out//$'\n'/ }"
			sleep 2
		done) &
		pids+=($!)
	fi

	# --- claimfd: every uid at its limit: one claim more must be refused
	# for it (each uid's probe owner lives as long as the probe).
	if mix claimfd; then
		(cd / && while running; do
			for u in $claimfd_uids; do
				i0=$(incarnation)
				(exec setpriv --reuid="$u" --regid=100 --clear-groups bash -c 'exec -a "$0" sleep 30' "$tmp/claimfd-owner") &
				ow=$!
				owner_ready "$ow" "$u"
				out=$(as_rt "$u" "$BIN/rtplacectl" --socket "$sock" --json query --prio 99 --count 1 --cpu-list 1 \
					--claim 1000 --owner "$ow" 2>&1)
				id=$(echo "$out" | sed -n 's/.*"claim": *{"id": *\([0-9]*\).*/\1/p')
				kill "$ow" 2>/dev/null
				wait "$ow" 2>/dev/null
				if ! same_inc "$i0"; then :
				elif [[ $out == *max-claims-per-user* ]]; then tally claimfd "uid $u at-limit"
				elif [[ $out == *"descriptor"* ]]; then tally claimfd "uid $u at-fd-reserve"
				elif [ -n "$id" ] && [ "$id" != 0 ]; then tally claimfd "uid $u below-limit (claim $id granted)"
				else tally claimfd "uid $u other ${out//$'\n'/ }"; fi
			done
			sleep 3
		done) &
		pids+=($!)
	fi

	# --- rtkit: two senders flood, root and another user are served.
	if mix rtkit; then
		for u in $NOBODY $DAEMONUID; do
			(cd / && while running; do
				(exec setpriv --reuid="$u" --regid="$u" --clear-groups bash -c 'exec -a "$0" sleep 60' "$tmp/rtkit-target") &
				target=$!
				owner_ready "$target" "$u"
				r=$(as $u timeout -s KILL 40 "$BIN/test-rtkit-flood" 8 16 20 "$target" 2>&1)
				tally rtkit "flood uid $u ${r//$'\n'/ }"
				kill "$target" 2>/dev/null
				wait "$target" 2>/dev/null
			done) &
			pids+=($!)
		done
		(cd / && while running; do
			for u in 0 2; do
				i0=$(incarnation)
				(exec setpriv --reuid="$u" --regid="$u" --clear-groups bash -c 'exec -a "$0" sleep 30' "$tmp/rtkit-target") &
				target=$!
				# (a call for it before it has switched would name root's)
				owner_ready "$target" "$u"
				out=$(setpriv --reuid="$u" --regid="$u" --clear-groups timeout 10 dbus-send --system --print-reply \
					--dest=org.freedesktop.RealtimeKit1 /org/freedesktop/RealtimeKit1 \
					org.freedesktop.RealtimeKit1.MakeThreadHighPriorityWithPID uint64:$target uint64:$target int32:-5 2>&1)
				rc=$?
				kill "$target" 2>/dev/null
				wait "$target" 2>/dev/null
				if ! same_inc "$i0"; then :
				elif [ $rc = 0 ]; then tally rtkit "served uid $u"
				else tally rtkit "refused uid $u ${out//$'\n'/ }"; fi
			done
			sleep 2
		done) &
		pids+=($!)
	fi

	# --- storm: two uids, connections opened and closed back to back.
	if mix storm; then
		STORM='
import socket, sys, time
end, n, refused = time.time() + 10, 0, 0
while time.time() < end:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
        n += 1
    except OSError:
        refused += 1
    s.close()
print("connects %d refused %d" % (n, refused))
'
		for u in 60021 60022; do
			(cd / && while running; do
				r=$(as $u /usr/bin/python3 -c "$STORM" "$sock" 2>&1)
				tally storm "uid $u ${r//$'\n'/ }"
				sleep 5
			done) &
			pids+=($!)
		done
	fi

	# --- durable: root's owner-bound claims across kill -9, each owned by
	# a sleeper of its own, with leases of 30 s to an hour. A CPU takes a
	# claim only below the claim's level, so they stack on CPU 0 (which
	# hotplug never takes away) at rising priorities, rt2 to rt98; the
	# highest is released when the stack is full.
	if mix durable; then
		(
		declare -A cpu=() own=() exp=() prio=()
		inflight=() released=()
		maxid=0
		now_ms() { date +%s%3N; }
		forget() { kill "${own[$1]}" 2>/dev/null; wait "${own[$1]}" 2>/dev/null; unset "cpu[$1]" "own[$1]" "exp[$1]" "prio[$1]"; }
		top() { local id t=1; for id in "${!prio[@]}"; do [ "${prio[$id]}" -gt $t ] && t=${prio[$id]}; done; echo $t; }
		claim() {
			local ow out id c l p
			p=$(($(top) + 1))
			[ $p -le 98 ] || return 0
			# Named after the run's folder, which the clean-up looks for.
			(exec -a "$tmp/owner" sleep $((minutes * 60 + 120))) &
			ow=$!
			out=$("$CTL" --socket "$sock" --json query --prio $p --count 1 --cpu-list 0 \
				--claim "$(shuf -n1 -e 30000 120000 600000 3600000)" --owner "$ow" 2>/dev/null)
			id=$(echo "$out" | sed -n 's/.*"claim": *{"id": *\([0-9]*\).*/\1/p')
			c=$(echo "$out" | sed -n 's/.*"cpu_list": *"\([0-9,-]*\)".*/\1/p')
			l=$(echo "$out" | sed -n 's/.*"lease_left_ms": *\([0-9]*\).*/\1/p')
			if [ -z "$id" ] || [ "$id" = 0 ]; then
				kill "$ow"; wait "$ow" 2>/dev/null
				return 0
			fi
			[ "$id" -le "$maxid" ] && tally durable "reused $id (after $maxid)"
			[ "$id" -gt "$maxid" ] && maxid=$id
			tally durable "acknowledged $id"
			cpu[$id]=$c own[$id]=$ow prio[$id]=$p
			# (no lease: "lease_left_ms": null)
			if [ -z "$l" ]; then exp[$id]=inf; else exp[$id]=$(($(now_ms) + l)); fi
		}
		# By RELEASE, or (one in three) by its owner's exit.
		release() {
			local id=$1 out
			if [ $((RANDOM % 3)) = 0 ]; then
				released+=("$id")
				forget "$id"
				return
			fi
			out=$("$CTL" --socket "$sock" release "$id" 2>&1)
			if [ $? = 0 ]; then
				released+=("$id")
				forget "$id"
			elif [[ $out == *"no such claim"* ]] && { [ "${exp[$id]}" = inf ] || [ "${exp[$id]}" -gt $(($(now_ms) + 5000)) ]; }; then
				tally durable "lost $id (found gone by its release)"
				forget "$id"
			elif [[ $out != *"no such claim"* ]]; then
				# Killed in flight: the release may have been journaled.
				inflight+=("$id")
			fi
			[ ${#released[@]} -gt 8 ] && released=("${released[@]:1}")
		}
		# kept, gone, or err: another uid's RELEASE of a claim of root's is
		# refused as another user's only when the daemon holds it.
		probe() {
			local out t
			for t in 1 2 3; do
				out=$(cd / && as $PROBEUID "$BIN/rtplacectl" --socket "$sock" release "$1" 2>&1)
				case $out in
				*"another user"*) echo kept; return ;;
				*"no such claim"*) echo gone; return ;;
				esac
				sleep 0.2
			done
			echo "err ${out//$'\n'/ }"
		}
		check() {
			local id j now st victims=()
			# The journal's live set, replayed: id -> owner and CPUs.
			declare -A jr=()
			while read -r id j; do jr[$id]=$j; done < <(awk '$1 == "claim" { c[$2] = $3 " " $8 } $1 == "end" { delete c[$2] }
				END { for (i in c) print i, c[i] }' "$sock.claims" 2>/dev/null)
			for id in "${!cpu[@]}"; do
				now=$(now_ms)
				if [ "${exp[$id]}" != inf ] && [ "${exp[$id]}" -le $((now + 5000)) ]; then
					tally durable "expiring $id"; continue
				fi
				# A release the kill cut off may or may not have been
				# journaled: neither answer is wrong, and the claim is
				# forgotten.
				if [[ " ${inflight[*]} " == *" $id "* ]]; then
					tally durable "in-doubt $id"
					forget "$id"
					continue
				fi
				st=$(probe "$id")
				case $st in
				kept)
					if [ "${jr[$id]:-}" = "${own[$id]} ${cpu[$id]}" ]; then tally durable "kept $id"
					else tally durable "moved $id: acknowledged owner ${own[$id]} cpu ${cpu[$id]}, journal '${jr[$id]:-none}'"; fi ;;
				gone) tally durable "lost $id owner ${own[$id]} cpu ${cpu[$id]} expires ${exp[$id]} now $now" ;;
				*) tally durable "lost $id: probe $st" ;;
				esac
				[ "$st" = kept ] || forget "$id"
			done
			for id in "${released[@]}"; do
				st=$(probe "$id")
				[ "$st" = gone ] && tally durable "released-stays-gone $id" || tally durable "resurrected $id $st"
			done
			released=() inflight=()
			# The restored claims still end with their owners: three owners
			# killed, their claims must go.
			set -- "${!own[@]}"
			[ $# -gt 0 ] || return 0
			victims=($(shuf -n3 -e "$@"))
			for id in "${victims[@]}"; do kill "${own[$id]}"; wait "${own[$id]}" 2>/dev/null; done
			sleep 2
			for id in "${victims[@]}"; do
				st=$(probe "$id")
				[ "$st" = gone ] && tally durable "owner-ended $id" || tally durable "owner-stale $id $st"
				forget "$id"
			done
		}
		while running; do
			if [ -e "$tmp/pause" ]; then
				touch "$tmp/paused"
				for _ in $(seq 600); do [ -e "$tmp/up" ] && break; sleep 0.1; done
				check
				rm -f "$tmp/paused"
				while [ -e "$tmp/pause" ]; do sleep 0.05; done
				continue
			fi
			now=$(now_ms)
			for id in "${!exp[@]}"; do
				[ "${exp[$id]}" != inf ] && [ "${exp[$id]}" -lt $((now - 5000)) ] && forget "$id"
			done
			t=$(top)
			if [ ${#cpu[@]} -lt 48 ] && [ "$t" -lt 98 ] && [ $((RANDOM % 10)) -lt 7 ]; then
				claim
			elif [ ${#cpu[@]} -gt 0 ]; then
				# The highest when the stack is full, else any.
				if [ ${#cpu[@]} -ge 48 ] || [ "$t" -ge 98 ]; then
					for id in "${!prio[@]}"; do [ "${prio[$id]}" = "$t" ] && break; done
				else
					set -- "${!cpu[@]}"
					id=$(shuf -n1 -e "$@")
				fi
				release "$id"
			fi
			sleep 0.2
		done
		for id in "${!own[@]}"; do kill "${own[$id]}" 2>/dev/null; done
		) &
		pids+=($!)
	fi
fi

# The tracker's watch map, as bpftool reads it through the daemon's own
# map descriptor: prints the threads in it, root's managed process's
# threads and how many of them are in it, and by uid the flooders' threads
# in it ("-" without a map; root's other soak-manage processes are the
# durable mix's owners, unmanaged).
WATCHMAP='
import json, os, subprocess, sys
dpid, root_pid = int(sys.argv[1]), int(sys.argv[2] or 0)
def bpftool(*a):
    r = subprocess.run(["bpftool", "-j"] + list(a), capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None
watched = None
ids = set()
for fd in os.listdir("/proc/%d/fdinfo" % dpid):
    try:
        ids.update(int(l.split()[1]) for l in open("/proc/%d/fdinfo/%s" % (dpid, fd)) if l.startswith("map_id:"))
    except OSError:
        pass
for i in ids:
    info = bpftool("map", "show", "id", str(i))
    if info and info.get("name") == "tracker_watched":
        watched = {e["formatted"]["key"] if "formatted" in e else int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little")
                   for e in bpftool("map", "dump", "id", str(i)) or []}
if watched is None:
    print("- - - -")
    sys.exit(0)
per_uid, root_n, root_in = {}, 0, 0
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        if open("/proc/%s/comm" % p).read().strip() != "soak-manage":
            continue
        uid = os.stat("/proc/" + p).st_uid
        tids = [int(t) for t in os.listdir("/proc/%s/task" % p)]
    except OSError:
        continue
    n = sum(t in watched for t in tids)
    if int(p) == root_pid:
        root_n, root_in = len(tids), n
    elif uid != 0:
        per_uid[uid] = per_uid.get(uid, 0) + n
print(len(watched), root_n, root_in, ",".join("%d:%d" % kv for kv in sorted(per_uid.items())) or "none")
'

restarts=0
last_restart=$SECONDS
inc_start=$SECONDS
times=() fdss=() rsss=() counts=() cpus=() loads_avg=()
cpu_base=0 cpu_last=0
hz=$(getconf CLK_TCK)
counts_now() {
	local l c=
	for l in $loads; do c="$c $(stat -c %s "$tmp/n.$l")"; done
	echo "$c"
}
printf '%6s %4s %6s %9s %7s %8s  %s\n' seconds inc fds rss_kb claims watched "answered since the last sample: $loads"
prev=$(counts_now)
while running; do
	sleep "$sample_s"
	# a sample past the end would count loads that have stopped
	running || break
	if [ "$restart_s" -gt 0 ] && [ $((SECONDS - last_restart)) -ge "$restart_s" ]; then
		touch "$tmp/restarting"
		kill -9 "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
		cpu_base=$((cpu_base + cpu_last)) cpu_last=0
		if mix durable; then
			touch "$tmp/pause"
			for _ in $(seq 300); do [ -e "$tmp/paused" ] && break; sleep 0.1; done
		fi
		start_daemon
		restarts=$((restarts + 1))
		echo "$restarts" >"$tmp/inc"
		if mix durable; then
			touch "$tmp/up"
			for _ in $(seq 1200); do [ -e "$tmp/paused" ] || break; sleep 0.1; done
			rm -f "$tmp/pause" "$tmp/up"
		fi
		rm -f "$tmp/restarting"
		last_restart=$SECONDS inc_start=$SECONDS
		continue
	fi
	# The fewest of three reads over a second (the floods come and go);
	# the descriptors the garbage brings are all /dev/null's.
	fds= devnull=
	for k in 1 2 3; do
		f=$(ls "/proc/$daemon/fd" 2>/dev/null | wc -l)
		d=$(ls -l "/proc/$daemon/fd" 2>/dev/null | grep -c ' /dev/null$')
		[ -z "$fds" ] || [ "$f" -lt "$fds" ] && fds=$f
		[ -z "$devnull" ] || [ "$d" -lt "$devnull" ] && devnull=$d
		[ $k = 3 ] || sleep 0.5
	done
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$daemon/status" 2>/dev/null)
	anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$daemon/status" 2>/dev/null)
	claims=$("$CTL" --socket "$sock" --json status 2>/dev/null | sed -n 's/.*"claims_active": *\([0-9]*\).*/\1/p')
	watched=-
	if [ "$hostile" = 1 ]; then
		rpid=$(cat "$tmp/root-manage.pid" 2>/dev/null)
		read -r watched rn rin peruid < <(python3 -c "$WATCHMAP" "$daemon" "${rpid:-0}" 2>/dev/null || echo "- - - -")
		# Root's threads, once the process and the daemon have had 3 s
		# (a tick or two) to find them.
		now_s=$(date +%s)
		if [ "$watched" != - ] && [ "${rn:-0}" -gt 0 ] && [ $((now_s - $(cat "$tmp/root-manage.since"))) -ge 3 ] &&
			[ $((now_s - $(cat "$tmp/daemon.since"))) -ge 3 ]; then
			if [ "$rin" = "$rn" ]; then tally rootmanage "watched $rin of $rn"
			else tally rootmanage "unwatched $((rn - rin)) of $rn (map $watched, flooders $peruid)"; fi
		fi
		[ "${peruid:-none}" != none ] && tally watchmap "$watched $peruid"
	fi
	now=$(counts_now)
	delta=$(awk -v a="$now" -v b="$prev" 'BEGIN { n = split(a, x); split(b, y); for (i = 1; i <= n; i++) printf "%d ", x[i] - y[i] }')
	prev=$now
	printf '%6d %4d %6s %9s %7s %8s  %s\n' "$SECONDS" "$restarts" "$fds" "${rss:-?}" "${claims:-?}" "$watched" "$delta"
	[ -n "$rss" ] || continue
	cpu_last=$(awk '{ print $14 + $15 }' "/proc/$daemon/stat" 2>/dev/null || echo 0)
	iw=$([ "$restarts" = 0 ] && echo "$warm" || echo "$inc_warm")
	[ $((SECONDS - inc_start)) -ge "$iw" ] && echo "$SECONDS $restarts $fds $rss $devnull ${anon:-0}" >>"$tmp/samples"
	if [ "$SECONDS" -ge "$warm" ]; then
		times+=("$SECONDS") fdss+=("$fds") rsss+=("$rss") counts+=("$now")
		# the daemon's user + system CPU ticks, all incarnations, and the
		# machine's load
		cpus+=($((cpu_base + cpu_last)))
		loads_avg+=("$(cut -d' ' -f1 /proc/loadavg)")
	fi
done
# Let the mixes finish their last round before they are counted.
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
sleep 1

fail=0
bad() { echo "soak: $*"; fail=1; }
# Judged is the floor, the fewest fds and the least memory of the first
# and of the last window of each incarnation (WINDOW_S or a third of it,
# whichever is longer): connections and subscriber
# rings in flight at one sample do not read as growth, a leak raises the
# floor. Tolerances: the loads hold up to a few dozen connections at a time
# and the floods a hundred more (a leak of what the garbage carries is
# told apart: /dev/null descriptors, a handful at most in flight); RSS
# counts the rings the daemon maps for subscribers, RssAnon (its heap)
# does not and may settle by a few pages.
fd_tol=$([ "$hostile" = 1 ] && echo 128 || echo 64) null_tol=8 anon_tol=2048
echo "per incarnation, after its warm-up (${warm} s for the first, ${inc_warm} s after a restart): first -> last sample" \
	"[range]; floor of its first -> last window"
while read -r i t0 t1 f0 f1 fmin fmax ff fl r0 r1 rmin rmax rf rl nf nl nmax af al amax; do
	echo "  incarnation $i (${t0}-${t1} s): fds $f0 -> $f1 [$fmin-$fmax], floor $ff -> $fl; /dev/null fds floor $nf -> $nl (max $nmax);" \
		"RSS $r0 -> $r1 kB [$rmin-$rmax], floor $rf -> $rl; RssAnon floor $af -> $al kB (max $amax)"
	[ $((fl - ff)) -gt $fd_tol ] && bad "incarnation $i: the fds' floor grew past +$fd_tol"
	[ $((nl - nf)) -gt $null_tol ] && bad "incarnation $i: the /dev/null fds' floor grew past +$null_tol"
	[ $((al - af)) -gt $anon_tol ] && bad "incarnation $i: the RssAnon floor grew past +$anon_tol kB"
done < <(awk -v w="$window_s" '{ t[NR] = $1; inc[NR] = $2; v[NR, 1] = $3; v[NR, 2] = $4; v[NR, 3] = $5; v[NR, 4] = $6 }
	END {
		for (a = 1; a <= NR; a = b) {
			for (b = a; b <= NR && inc[b] == inc[a]; b++);
			z = b - 1
			wi = (t[z] - t[a]) / 3; if (wi < w) wi = w
			printf "%s %s %s", inc[a], t[a], t[z]
			for (c = 1; c <= 4; c++) {
				lo = hi = v[a, c]; ff = v[a, c]; fl = v[z, c]
				for (k = a; k <= z; k++) {
					x = v[k, c]
					if (x < lo) lo = x; if (x > hi) hi = x
					if (t[k] - t[a] < wi && x < ff) ff = x
					if (t[z] - t[k] < wi && x < fl) fl = x
				}
				if (c <= 2) printf " %s %s %s %s %s %s", v[a, c], v[z, c], lo, hi, ff, fl
				else printf " %s %s %s", ff, fl, hi
			}
			print ""
		}
	}' "$tmp/samples" 2>/dev/null)
echo "restarts (kill -9): $restarts"
if [ "$hostile" = 1 ]; then
	if mix durable; then
		echo "durable: $(nlines durable '^acknowledged') acknowledged; at the restarts $(nlines durable '^kept') kept," \
			"$(nlines durable '^lost') lost, $(nlines durable '^moved') moved, $(nlines durable '^expiring') near their lease's end" \
			"and $(nlines durable '^in-doubt') in doubt (not checked); $(nlines durable '^released-stays-gone') released stayed gone," \
			"$(nlines durable '^resurrected') came back; after an owner's kill $(nlines durable '^owner-ended') ended," \
			"$(nlines durable '^owner-stale') stayed; ids reused: $(nlines durable '^reused')"
		grep -E '^(lost|moved|resurrected|owner-stale|reused)' "$tmp/t.durable" 2>/dev/null | head -5 | sed 's/^/  /'
		[ "$(nlines durable '^\(lost\|moved\|resurrected\|owner-stale\|reused\)')" = 0 ] || bad "an acknowledged claim was not kept"
		[ "$restarts" -gt 0 ] && [ "$(nlines durable '^kept')" = 0 ] && bad "restarts, but no claim was checked"
	fi
	if mix manage; then
		for u in $NOBODY $DAEMONUID; do
			for nt in 20 500 1500; do
				# sorted by reply time, for the median
				awk -v u="$u" -v nt="$nt" '$2 == u && $4 == nt' "$tmp/t.manage" 2>/dev/null | sort -n -k8 |
					awk -v u="$u" -v nt="$nt" '{ n++; if ($5 == "claim") { g++; us[g] = $8 } else r++
						if ($0 ~ /max-managed-threads/) q++ }
					END { if (!n) exit; printf "manage: uid %s, %4s threads: %d MANAGE, %d granted (%d met a per-user limit), %d refused; reply p50 %s us, max %s us\n",
						u, nt, n, g, q, r, g ? us[int((g + 1) / 2)] : "-", g ? us[g] : "-" }'
			done
		done
		awk '{ n = split($2, kv, ","); for (i = 1; i <= n; i++) { split(kv[i], x, ":"); if (x[2] > m[x[1]]) m[x[1]] = x[2] } if ($1 > t) t = $1 }
			END { printf "watch map: at most %d threads; flooders'\'' watched threads at most", t; for (u in m) printf " uid %s: %d", u, m[u]; print "" }' \
			"$tmp/t.watchmap" 2>/dev/null
		echo "root's rtplace-run --manage: $(nlines rootmanage '^watched') samples every thread watched, $(nlines rootmanage '^unwatched') not"
		grep '^unwatched' "$tmp/t.rootmanage" 2>/dev/null | head -3 | sed 's/^/  /'
		[ "$(nlines rootmanage '^unwatched')" = 0 ] || bad "root's managed threads went unwatched"
		[ "$(nlines rootmanage '^watched')" -gt 0 ] || bad "root's managed threads never sampled"
	fi
	if mix userns; then
		echo "userns: moves $(nlines userns '^move refused') refused, $(nlines userns '^move granted') granted," \
			"$(nlines userns '^move other') other; exclusive rt99 claims $(nlines userns '^claim held-at-user-terms') held at user terms," \
			"$(nlines userns '^claim granted') granted, $(nlines userns '^claim refused') refused;" \
			"subscribers $(nlines userns '^watch') with $(awk '$1 == "watch" { s += $3 } END { print s + 0 }' "$tmp/t.userns" 2>/dev/null) records of root's thread"
		grep -E '^(move other|claim refused)' "$tmp/t.userns" 2>/dev/null | sort | uniq -c | head -3 | sed 's/^/  /'
		[ "$(nlines userns 'granted')" = 0 ] || bad "a privileged request from a user namespace was granted"
		[ "$(awk '$1 == "watch" { s += $3 } END { print s + 0 }' "$tmp/t.userns" 2>/dev/null)" = 0 ] || bad "root's records reached a user namespace"
	fi
	if mix fdgarbage; then
		echo "fdgarbage (as nobody), by shape and answer:"
		sort "$tmp/t.fdgarbage" 2>/dev/null | uniq -c | awk '{ printf "  %-10s %-8s %d\n", $2, $3, $1 }'
	fi
	if mix subflood; then
		echo "subflood, by uid: held / refused"
		awk '{ k = $2; if ($3 == "held") h[k]++; else r[k]++ } END { for (k in h) printf "  uid %s: %d / %d\n", k, h[k], r[k] + 0;
			for (k in r) if (!(k in h)) printf "  uid %s: 0 / %d\n", k, r[k] }' "$tmp/t.subflood" 2>/dev/null | sort -n -k2
		[ "$(awk '$2 == 0 && $3 != "held"' "$tmp/t.subflood" 2>/dev/null | wc -l)" = 0 ] || bad "root's subscriber was refused"
	fi
	if mix bpfwrite; then
		echo "bpfwrite (nobody with CAP_BPF, through LOCAL: a program storing into it, a writable mapping, write; a program on its own map):"
		sort "$tmp/t.bpfwrite" 2>/dev/null | uniq -c | sed 's/^/  /'
		[ "$(nlines bpfwrite '^local ')" -gt 0 ] || bad "bpfwrite never got LOCAL's descriptors"
		[ "$(awk '$1 != "local" || $3 == "ok" || $5 == "ok" || $7 == "ok" || $9 != "ok"' "$tmp/t.bpfwrite" 2>/dev/null | wc -l)" = 0 ] ||
			bad "bpfwrite: a write through LOCAL was allowed, or the writer could not write its own map (then it proves nothing)"
	fi
	if mix claimfd; then
		echo "claimfd: ${claimfd_limit} claims each for $(echo $claimfd_uids | wc -w) uids ($(nlines claimfd '^setup') refused at the setup);" \
			"one more refused for the limit $(nlines claimfd ' at-limit$') times, for the descriptor reserve $(nlines claimfd ' at-fd-reserve$')," \
			"granted $(nlines claimfd ' below-limit') times, other $(nlines claimfd ' other ')"
		grep -E '^(setup| *uid [0-9]+ (below-limit|other))' "$tmp/t.claimfd" 2>/dev/null | sort | uniq -c | head -5 | sed 's/^/  /'
		[ "$(nlines claimfd '^setup')" = 0 ] || bad "claimfd: not every uid was put at its claim limit"
		[ "$(nlines claimfd ' below-limit')" = 0 ] || bad "claimfd: a uid at its limit was granted one more (a claim lost)"
		[ "$(nlines claimfd ' at-limit$')" -gt 0 ] || bad "claimfd: never refused at the limit"
	fi
	if mix rtkit; then
		echo "rtkit: floods (ok / denied / limits / other, summed):"
		awk '$1 == "flood" { k = $3; ok[k] += $5; d[k] += $7; l[k] += $9; o[k] += $11; n[k]++ }
			END { for (k in n) printf "  uid %s: %d floods, %d / %d / %d / %d\n", k, n[k], ok[k], d[k], l[k], o[k] }' \
			"$tmp/t.rtkit" 2>/dev/null
		echo "rtkit: during them root served $(nlines rtkit '^served uid 0$'), refused $(nlines rtkit '^refused uid 0 ');" \
			"uid 2 (bin) served $(nlines rtkit '^served uid 2$'), refused $(nlines rtkit '^refused uid 2 ')"
		grep '^refused' "$tmp/t.rtkit" 2>/dev/null | sort | uniq -c | head -3 | sed 's/^/  /'
		[ "$(nlines rtkit '^refused ')" = 0 ] || bad "rtkit: root or another user was refused during the floods"
		[ "$(nlines rtkit '^served ')" -gt 0 ] || bad "rtkit: no call of root's or another user's was answered"
	fi
	if mix storm; then
		awk '{ k = $2; c[k] += $4; r[k] += $6; n[k]++ } END { for (k in n) printf "storm: uid %s: %d storms of 10 s, %d connects, %d refused at once\n", k, n[k], c[k], r[k] }' \
			"$tmp/t.storm" 2>/dev/null
	fi
fi

# Root's p99 against idle, per window; a window with errors was cut by a
# restart (or the daemon did not answer) and is counted apart.
p99s=$(awk '$1 == "window" && $12 == 0 { print $8 }' "$tmp/latency" 2>/dev/null | sort -n)
cut=$(awk '$1 == "window" && $12 > 0' "$tmp/latency" 2>/dev/null | wc -l)
echo "$p99s" | awk -v idle="$idle_p99" -v f="$p99_factor" -v cut="$cut" 'NF { n++; p[n] = $1 }
	END {
		printf "root p99 over %d windows of %s s: median %.1f us, max %.1f us, idle %.1f us, ratio max/idle %.2f;" \
			" windows over %dx idle: ", n, "'"$sample_s"'", n ? p[int((n + 1) / 2)] : 0, n ? p[n] : 0, idle,
			(n && idle > 0) ? (p[n] / idle) : 0, f
		o = 0; for (i = 1; i <= n; i++) if (p[i] > f * idle) o++
		printf "%d; cut by a restart or error: %d\n", o, cut
	}'
echo "root p99 per window, us (* cut by a restart or error): $(awk '$1 == "window" { printf "%s%s ", $8, ($12 > 0 ? "*" : "") }' "$tmp/latency" 2>/dev/null)"
over=$(awk -v idle="$idle_p99" -v f="$p99_factor" '$1 == "window" && $12 == 0 && $8 > f * idle' "$tmp/latency" 2>/dev/null | wc -l)
[ "$(grep -c '^window' "$tmp/latency" 2>/dev/null)" -gt 0 ] || bad "no latency window sampled"
[ "$over" = 0 ] || bad "root's query p99 exceeded ${p99_factor}x idle (${idle_p99} us) in $over windows"

n=${#times[@]}
if [ "$n" -lt 2 ] || [ $((times[n - 1] - times[0])) -lt $((2 * window_s)) ]; then
	echo "soak: too short to compare start and end (run longer than the warm-up and two windows of ${window_s} s)"
	[ $fail = 0 ] && echo "soak: flat, every check held"
	exit $fail
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
echo "daemon CPU per request (the loads above, not the hostile mixes): $cpu_s us -> $cpu_e us, ratio $(ratio "$cpu_e" "$cpu_s")"
echo "load average: ${loads_avg[0]}-${loads_avg[s1]} at the start, ${loads_avg[e0]}-${loads_avg[n - 1]} at the end"
if [ "$restarts" = 0 ]; then
	fdmax=${fdss[0]} rssmax=${rsss[0]}
	for ((i = 0; i < n; i++)); do
		[ "${fdss[i]}" -gt "$fdmax" ] && fdmax=${fdss[i]}
		[ "${rsss[i]}" -gt "$rssmax" ] && rssmax=${rsss[i]}
	done
	echo "after the warm-up: fds ${fdss[0]} -> max $fdmax, RSS ${rsss[0]} -> max $rssmax kB"
fi
if [ $fail != 0 ]; then
	echo "soak: FAILED (NOT flat, or a check above did not hold)"
	exit 1
fi
echo "soak: flat, every check held"
