#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A connection storm from one user (root) does not keep others out:
# nobody opens and closes connections as fast as it can for 3 s while
# root asks `status` 40 times; every one of root's requests is answered,
# and the daemon refuses nobody's connections past its rate (256 a second
# after a burst of 512) at once, saying so in its log. Root's request
# times during the storm and before it are printed (bench/README.md).
# A refusal costs the daemon one recv() to drain the connection, also when
# the client had hung up already, as a storm's clients have: 1,000
# connections opened and closed while the daemon is stopped are refused
# with at most 2 recvfrom calls per accepted connection (strace counts
# them; the drain once looped 64 times on such a connection). The storm's
# cost falls on the acceptor's thread: the loop's own thread, which serves
# root's requests, takes at most a quarter of the daemon's CPU meanwhile.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"

chmod 0711 "$TMP"
start_daemon
chmod 0666 "$SOCK"

# CPU ticks (user and system) of the process or thread whose stat is $1.
ticks() { sed 's/.*) //' "$1" | awk '{ print $12 + $13 }'; }
# Root's request times, ms, one a line, into $1.
root_times() {
	: >"$1"
	for i in $(seq 40); do
		t0=$(date +%s%N)
		"$CTL" --socket "$SOCK" status >/dev/null 2>"$TMP/root.err" || fail "root's status failed: $(cat "$TMP/root.err")"
		echo $((($(date +%s%N) - t0) / 1000)) >>"$1"
	done
}
# p50 and p99 of the times in $1, in µs.
percentiles() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { printf "p50 %d us, p99 %d us", v[int(NR * 0.5) + 1], v[int(NR * 0.99) + 1] }'
}

root_times "$TMP/idle"
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import socket, sys, time
end = time.time() + 3
n = 0
while time.time() < end:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(sys.argv[1])
        n += 1
    except OSError:
        pass
    s.close()
print(n)
' "$SOCK" >"$TMP/storm.out" 2>&1 &
STORM=$!
PIDS="$PIDS $STORM"
sleep 0.3
loop0=$(ticks "/proc/$DAEMON/task/$DAEMON/stat") all0=$(ticks "/proc/$DAEMON/stat")
root_times "$TMP/storm"
loop1=$(ticks "/proc/$DAEMON/task/$DAEMON/stat") all1=$(ticks "/proc/$DAEMON/stat")
wait "$STORM" || fail "the storm failed: $(cat "$TMP/storm.out")"
# The storm's cost is the acceptor thread's: the loop's thread, which
# serves root, took at most a quarter of the daemon's CPU meanwhile.
[ $((4 * (loop1 - loop0))) -le $((all1 - all0)) ] ||
	fail "during the storm the loop's thread took $((loop1 - loop0)) of the daemon's $((all1 - all0)) ticks"
echo "# during the storm: the daemon $((all1 - all0)) ticks, its loop's thread $((loop1 - loop0))"
wait_grep "connects more than 256 times a second" "$TMP/rtplaced.log" \
	"nobody's storm of $(cat "$TMP/storm.out") connections in 3 s was not refused at the rate" "$TMP/rtplaced.log"
# The drain: nobody's 1,000 connections, each closed before the daemon,
# stopped, accepts it; over the burst of 512, so some are refused.
if command -v strace >/dev/null; then
	strace -f -qq -c -e trace=accept4,recvfrom -o "$TMP/strace.txt" -p "$DAEMON" 2>"$TMP/strace.err" &
	STRACE=$!
	PIDS="$PIDS $STRACE"
	sleep 0.5
	kill -STOP "$DAEMON"
	setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import socket, sys
for _ in range(1000):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setblocking(False)
    s.connect(sys.argv[1])
    s.close()
' "$SOCK" 2>"$TMP/closed.err" || { kill -CONT "$DAEMON"; fail "opening 1,000 connections: $(cat "$TMP/closed.err")"; }
	kill -CONT "$DAEMON"
	# Root's connection queues behind the 1,000: its answer means all
	# were accepted.
	"$CTL" --socket "$SOCK" status >/dev/null || fail "root's status after the closed connections"
	kill -INT "$STRACE"
	wait "$STRACE"
	calls() { awk -v c="$1" '$NF == c { print ($4 ~ /^[0-9]+$/) ? $4 : $3 }' "$TMP/strace.txt"; }
	accepts=$(calls accept4) recvs=$(calls recvfrom)
	[ "${accepts:-0}" -ge 1000 ] || fail "strace saw ${accepts:-no} accept4 calls for 1,000 connections: $(cat "$TMP/strace.txt" "$TMP/strace.err")"
	[ "${recvs:-0}" -le $((2 * accepts)) ] ||
		fail "the daemon drained 1,000 hung-up connections with $recvs recvfrom calls ($accepts accepts): more than 2 a connection"
	echo "# 1,000 hung-up connections: $accepts accept4, ${recvs:-0} recvfrom"
else
	echo "# strace is not installed (apt-get install strace): the drain's cost is not counted"
fi
echo "# root's status, idle: $(percentiles "$TMP/idle"); during nobody's storm of $(cat "$TMP/storm.out") connections in 3 s: $(percentiles "$TMP/storm")"
echo "PASS: a storm's connections past the rate are refused, root's requests all answered"
