# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the test-rtkit-*.sh tests: a private system bus (a
# dbus-daemon of the test's own, with the shipped policy file and
# DBUS_SYSTEM_BUS_ADDRESS pointing at it) and a live rtplaced serving
# org.freedesktop.RealtimeKit1 on it, as root under the RT-test lock.
. "$top_srcdir/tests/integration/test-client-common.sh"
. "$top_srcdir/tests/lib/system-bus.sh"

require_root
for tool in dbus-daemon busctl dbus-send setpriv prlimit chrt taskset; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (scripts/install-deps.sh)"
done
# nobody reaches the bus socket and the staged programs under $TMP.
chmod 0755 "$TMP"
BUS=$TMP/system_bus.sock
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$BUS
RK_DEST=org.freedesktop.RealtimeKit1
RK_PATH=/org/freedesktop/RealtimeKit1

# Metric $1 as the daemon's /metrics on 127.0.0.1:$METRICS_PORT shows it
# (the test sets METRICS_PORT and [metrics] listen).
metric() {
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
		"http://127.0.0.1:$METRICS_PORT/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}
# Whether metric $1 reads $2 within 2 s: the daemon builds the page at
# most once every 100 ms (METRICS_PAGE_MAX_AGE_MS), so a scrape just after
# a change may still read the page from before it.
metric_is() {
	local i
	for i in $(seq 20); do
		[ "$(metric "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# A bus on socket $1 (default $BUS) (tests/lib/system-bus.sh); who may
# own and call RealtimeKit1 is the shipped policy's to say, included unless
# $2 is "bare" (none) or the path of another policy file.
start_bus() {
	include="<include>$(cd "$top_srcdir" && pwd)/dbus/rtplace-realtimekit.conf</include>"
	case ${2:-} in
	bare) include= ;;
	/*) include="<include>$2</include>" ;;
	esac
	bus_start "${1:-$BUS}" "$include" || fail "dbus-daemon on ${1:-$BUS} did not start"
}

# rtplaced on the live machine with [rtkit] enable = yes and the extra
# [rtkit] lines "$@", after the sections in $RK_CONF_HEAD if set; returns
# once it serves the name.
start_rtkit_daemon() {
	{
		printf '%s\n[rtkit]\nenable = yes\n' "${RK_CONF_HEAD:-}"
		for line in "$@"; do printf '%s\n' "$line"; done
	} >"$TMP/rtkit.conf"
	start_live_daemon --config "$TMP/rtkit.conf"
	wait_grep "serving $RK_DEST" "$TMP/rtplaced.log" "rtplaced did not take $RK_DEST"
}

# A command prefix that runs the rest as nobody (setpriv execs it: a
# background command's $! is its own pid).
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"

# reuse_pid PID UID [RTTIME [FIFO]]: a new process (sleep 60) of uid UID
# (its gid too) at pid PID, which must be free by now (clone3 with
# set_tid), with hard RLIMIT_RTTIME RTTIME us unless 0, and SCHED_FIFO at
# priority FIFO when given; added to PIDS. Fails the test when the kernel
# gives another pid.
reuse_pid() {
	/usr/bin/python3 - "$@" >"$TMP/reuse" 2>&1 <<'PY' || fail "cannot give pid $1 to a new process: $(cat "$TMP/reuse")"
import ctypes, os, resource, signal, struct, sys
pid, uid = int(sys.argv[1]), int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
set_tid = ctypes.c_int(pid)
# struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal,
# stack, stack_size, tls, set_tid, set_tid_size
args = ctypes.create_string_buffer(struct.pack("10Q", 0, 0, 0, 0, signal.SIGCHLD, 0, 0, 0,
                                               ctypes.addressof(set_tid), 1))
child = libc.syscall(435, args, len(args.raw))
if child == 0:
    if len(sys.argv) > 3 and int(sys.argv[3]):
        resource.setrlimit(resource.RLIMIT_RTTIME, (int(sys.argv[3]) // 2, int(sys.argv[3])))
    if len(sys.argv) > 4:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(sys.argv[4])))
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    os.execv("/bin/sleep", ["sleep", "60"])
if child < 0:
    sys.exit("clone3: " + os.strerror(ctypes.get_errno()))
print(child)
PY
	PIDS="$PIDS $(cat "$TMP/reuse")"
	[ "$(cat "$TMP/reuse")" = "$1" ] || fail "the new process is $(cat "$TMP/reuse"), not $1"
}

# start_held_rtkit_daemon VAR [LINE...]: under the RT-test lock, a private
# bus and rtplaced with the [rtkit] lines given and test hold VAR (a
# --enable-self-checks build's, rtkit.c) on FIFO $TMP/hold, which a test
# releases with : >"$TMP/hold". Skips in other builds.
start_held_rtkit_daemon() {
	grep -q '^#define RTPLACE_SELF_CHECKS 1' "$top_builddir/config.h" ||
		skip "the test hold is built with --enable-self-checks only"
	rt_lock
	start_bus
	mkfifo "$TMP/hold"
	eval "$1=\$TMP/hold; export $1"
	shift
	start_rtkit_daemon "$@"
}

# start_spinner: nobody's runaway (test-rtkit-spin, staged in $STAGED),
# busy in bursts shorter than its hard RLIMIT_RTTIME on CPU 1, bounded: 8 s
# from a normal-priority timeout on CPU 0, and its own 6 s. Sets BOUND (the
# timeout) and SPIN (the runaway), both in PIDS.
start_spinner() {
	taskset -c 0 timeout -s KILL 8 $NOBODY prlimit --rttime=200000 taskset -c 1 "$STAGED/test-rtkit-spin" 6 &
	BOUND=$!
	PIDS="$PIDS $BOUND"
	i=0
	until SPIN=$(pgrep -P $BOUND -x test-rtkit-spin); do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "the spinner did not start"
		sleep 0.02
	done
	PIDS="$SPIN $PIDS"
}
