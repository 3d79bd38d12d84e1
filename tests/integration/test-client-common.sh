# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the test-client-*.sh tests: paths, skip/fail, a private
# rtplaced (simulation mode on a shared topology) and cleanup of everything
# started, on every exit path.
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
RTPLACED=$top_builddir/daemon/rtplaced
CTL=$top_builddir/client/rtplacectl
RUN=$top_builddir/client/rtplace-run
SPIN=$top_builddir/tests/integration/test-client-spin
TOPO480=$top_srcdir/../shared/topologies/2s-240c-480t.xml

skip() {
	if [ "${RTPLACE_REQUIRE_ROOT_TESTS:-}" = 1 ]; then
		echo "FATAL: required test cannot run: $*" >&2
		exit 99
	fi
	echo "SKIP: $*" >&2
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	[ -f "$TMP/rtplaced.log" ] && sed 's/^/rtplaced: /' "$TMP/rtplaced.log" >&2
	exit 1
}

require_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (RT scheduling)"
}

# The clients that send a pidfd along are python3's: skips unless it can
# open one and send descriptors.
require_python_pidfds() {
	python3 -c 'import os, socket; os.pidfd_open; socket.send_fds' 2>/dev/null ||
		skip "python3 has no os.pidfd_open or socket.send_fds (3.9+)"
}

[ -x "$RTPLACED" ] || skip "rtplaced is not built"
if [ ! -r "$TOPO480" ]; then
	# Without ../shared, the same shape from its hwloc synthetic description
	# (written aside, then renamed: tests run in parallel).
	TOPO480=$top_builddir/tests/topology-2s-240c-480t.xml
	if [ ! -r "$TOPO480" ]; then
		lstopo-no-graphics -i "pack:2 [numa] l3:1 core:120 pu:2(indexes=core:pack)" --of xml -f "$TOPO480.$$" &&
			mv "$TOPO480.$$" "$TOPO480" ||
			skip "no 480-CPU topology: ../shared/topologies is missing and lstopo-no-graphics failed"
	fi
fi

TMP=$(mktemp -d /tmp/rtplace-client-test.XXXXXX)
SOCK=$TMP/rtplaced.sock
# The test's own configuration, empty (built-in defaults): every daemon and
# every client that reads the daemon's configuration gets it, so that a file
# installed at the default path changes no result.
CONF=$TMP/defaults.conf
: >"$CONF"
PIDS=
DAEMON=
STAGED=

cleanup() {
	[ -z "${WATCHDOG:-}" ] || pkill -KILL -P "$WATCHDOG" 2>/dev/null
	for p in $PIDS $DAEMON; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP" ${STAGED:+"$STAGED"}
}
trap cleanup EXIT
trap 'echo "FAIL: test did not finish within ${TEST_BOUND_S}s" >&2; exit 1' ALRM
trap 'exit 1' INT TERM HUP

# Every wait in these tests is bounded by this: a watchdog from outside the
# shell interrupts a stuck `wait` with SIGALRM, and cleanup kills the rest.
TEST_BOUND_S=${TEST_BOUND_S:-180}
# The watchdog signals this shell only if it is still this shell (same pid,
# same start time): a watchdog that outlived its test (its shell killed
# with SIGKILL) must not interrupt whatever process reuses the pid.
start_time_of() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}
TEST_SHELL_START=$(start_time_of $$)
start_watchdog() {
	( sleep "$TEST_BOUND_S" && [ "$(start_time_of $$)" = "$TEST_SHELL_START" ] && kill -ALRM $$ 2>/dev/null ) &
	WATCHDOG=$!
	PIDS="$PIDS $WATCHDOG"
}
start_watchdog

# Copies the build tree's programs "$@" into $STAGED, a folder of their own
# that another user can reach: the build tree may lie under a 0700 folder
# (a checkout in /root). cleanup removes it.
stage_programs() {
	STAGED=$(mktemp -d /tmp/rtplace-staged.XXXXXX) || fail "cannot make a folder for staged programs"
	sh "$top_srcdir/tests/lib/stage-programs.sh" "$STAGED" "$@" || fail "cannot stage $* for another user"
}

# Starts the rtplaced command line "$@" in the background as systemd starts
# a Type=notify service, with a NOTIFY_SOCKET of the test's own, and
# returns once it has sent READY=1 (it listens by then); fails, bounded,
# if it exits or stays silent.
start_notified() {
	notify=$TMP/notify.sock
	rm -f "$notify" "$TMP/notify.bound" "$TMP/notify.ready"
	timeout 30 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[2], "w").close()
while b"READY=1" not in s.recv(4096).split(b"\n"):
    pass
open(sys.argv[3], "w").close()
' "$notify" "$TMP/notify.bound" "$TMP/notify.ready" &
	listener=$!
	PIDS="$PIDS $listener"
	i=0
	until [ -e "$TMP/notify.bound" ]; do
		i=$((i + 1))
		[ $i -lt 500 ] || fail "the test's notify socket was not bound"
		sleep 0.01
	done
	# Not the RT-test lock (fd 9): a daemon that outlived its test would
	# hold it and stall every other test.
	NOTIFY_SOCKET=$notify "$@" >"$TMP/rtplaced.log" 2>&1 9>&- &
	DAEMON=$!
	until [ -e "$TMP/notify.ready" ]; do
		kill -0 "$DAEMON" 2>/dev/null || fail "rtplaced exited at start"
		kill -0 "$listener" 2>/dev/null || [ -e "$TMP/notify.ready" ] || fail "rtplaced did not say READY=1 within 30 s"
		sleep 0.02
	done
}

# Starts rtplaced on $SOCK over the 480-CPU topology, with the extra
# arguments given; waits (bounded) until it answers. rtplace-run asks within
# its own affinity, so its answers name CPUs of this machine.
start_daemon() {
	start_notified "$RTPLACED" --socket "$SOCK" --config "$CONF" --topology "$TOPO480" "$@"
}

# Takes the machine-wide lock every test holds while it runs RT threads
# (tests/lib/testlib.h, test_lock_rt_cpu), until the test exits. make check
# runs tests in parallel and they queue here, each one bounded while it
# holds the lock: the wait is idle time, so it may be long, and the test's
# own bound starts again once the lock is held.
# A test that needs CPU 1 counts the machine's CPUs with _NPROCESSORS_CONF
# before it takes the lock, never the online ones: a hotplug test may hold
# CPU 1 offline until it lets the lock go.
RT_LOCK_WAIT_S=${RT_LOCK_WAIT_S:-900}
rt_lock() {
	lock=/run/lock/rtplace-rt-tests.lock
	[ -w /run/lock ] || lock=/tmp/rtplace-rt-tests.lock
	exec 9>>"$lock"
	flock -w "$RT_LOCK_WAIT_S" 9 || fail "RT-test lock $lock still held after $RT_LOCK_WAIT_S s"
	pkill -KILL -P "$WATCHDOG" 2>/dev/null
	kill -KILL "$WATCHDOG" 2>/dev/null
	start_watchdog
}

# Starts rtplaced on $SOCK on the live machine (root, BPF tracker), with
# the extra arguments given (a --config among them wins over $CONF); waits
# (bounded) until it answers.
start_live_daemon() {
	start_notified "$RTPLACED" --socket "$SOCK" --config "$CONF" "$@"
}

# Waits (bounded) until file $1 has at least $2 lines.
wait_lines() {
	i=0
	until [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "$1 has $(wc -l <"$1" 2>&1) lines, want $2: $(cat "$1" 2>&1)"
		sleep 0.05
	done
}

# wait_grep PATTERN FILE WHY [SHOW]: waits (bounded, as wait_lines) until a
# line of FILE matches PATTERN (grep's basic regex); fails with WHY, and
# with what file SHOW holds by then when it is given.
wait_grep() {
	i=0
	until grep -q "$1" "$2"; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "$3${4:+: $(cat "$4")}"
		sleep 0.05
	done
}

stop_daemon() {
	kill "$DAEMON"
	wait "$DAEMON" || fail "rtplaced exited with $? on SIGTERM"
	DAEMON=
}

# A field of `rtplacectl --json status`.
status_field() {
	"$CTL" --socket "$SOCK" --json status | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"
}

# Waits (bounded) until the daemon counts $1 active claims: process exits
# reach it asynchronously.
wait_claims() {
	i=0
	until [ "$(status_field claims_active)" = "$1" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "claims_active is $(status_field claims_active), want $1"
		sleep 0.05
	done
}

# Runs "$@", expecting exit status $EXPECT.
expect_status() {
	want=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	[ "$got" = "$want" ] || fail "'$*' exited $got, want $want: $(cat "$TMP/err")"
}
