#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What a connection storm costs root, against what the same storm costs
# when it never reaches the daemon, in one run (root, from the build
# directory):
#
#   sh bench/storm-latency.sh [ROUNDS [SECONDS]]
#
# A private rtplaced (socket mode 0666). In each round, three phases of
# SECONDS each: idle; the control, two uids (60021, 60022) opening and
# closing connections to a socket path nobody listens on, as fast as they
# can (the same processes, the same CPU, no work for the daemon); the
# storm, the same two aimed at the daemon. In each phase, root's query
# latency on a kept connection (bench/soak-latency: a plain QUERY every
# 5 ms; p50, p99, max), the time of root's connect() on a new connection
# (100 of them, 20 ms apart), and the CPU ticks of the daemon's loop
# thread and of the whole daemon. Prints one line per phase and round, and
# the medians' ratios storm / control: where the daemon adds nothing of
# its own, they are near 1.
set -u
builddir=$(pwd)
ROUNDS=${1:-3}
SECS=${2:-5}
[ "$(id -u)" = 0 ] || { echo "storm-latency: needs root" >&2; exit 77; }
[ -x "$builddir/bench/soak-latency" ] || { echo "storm-latency: run from a build directory after make" >&2; exit 64; }
[ -x /usr/bin/python3 ] || { echo "storm-latency: needs /usr/bin/python3" >&2; exit 77; }
tmp=$(mktemp -d /tmp/rtplace-storm-latency.XXXXXX)
chmod 755 "$tmp"
daemon=
cleanup() {
	pkill -KILL -f "$tmp/storm.py" 2>/dev/null
	[ -z "$daemon" ] || kill "$daemon" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

cat >"$tmp/storm.py" <<'EOF'
import socket, sys, time
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except OSError:
        pass
    s.close()
EOF
cat >"$tmp/connect.py" <<'EOF'
import socket, struct, sys, time
ts = []
for _ in range(100):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 5, 0))
    t = time.monotonic()
    s.connect(sys.argv[1])
    ts.append(time.monotonic() - t)
    s.close()
    time.sleep(0.02)
ts.sort()
print("connect_p50 %.0f connect_p99 %.0f" % (ts[50] * 1e6, ts[98] * 1e6))
EOF
chmod 644 "$tmp/storm.py" "$tmp/connect.py"
printf '[daemon]\nsocket-mode = 0666\n' >"$tmp/rtplaced.conf"
sock=$tmp/rtplaced.sock
"$builddir/daemon/rtplaced" --config "$tmp/rtplaced.conf" --socket "$sock" >"$tmp/rtplaced.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
	"$builddir/client/rtplacectl" --socket "$sock" status >/dev/null 2>&1 && break
	sleep 0.05
done
"$builddir/client/rtplacectl" --socket "$sock" status >/dev/null ||
	{ echo "storm-latency: rtplaced did not start: $(tail -5 "$tmp/rtplaced.log")" >&2; exit 1; }

ticks() { sed 's/.*) //' "$1" | awk '{ print $12 + $13 }'; }
# phase NAME TARGET: one phase, storming TARGET (none when empty).
phase() {
	if [ -n "$2" ]; then
		for u in 60021 60022; do
			setpriv --reuid=$u --regid=$u --clear-groups /usr/bin/python3 "$tmp/storm.py" "$2" $((SECS * 2 + 10)) &
		done
		sleep 0.3
	fi
	l0=$(ticks "/proc/$daemon/task/$daemon/stat") a0=$(ticks "/proc/$daemon/stat")
	q=$("$builddir/bench/soak-latency" "$sock" "$SECS" "$SECS" | sed -n '1s/^window [0-9]* //p')
	c=$(/usr/bin/python3 "$tmp/connect.py" "$sock")
	l1=$(ticks "/proc/$daemon/task/$daemon/stat") a1=$(ticks "/proc/$daemon/stat")
	pkill -KILL -f "$tmp/storm.py" 2>/dev/null
	sleep 0.5
	echo "round $r $1 $q $c loop_ticks $((l1 - l0)) daemon_ticks $((a1 - a0))" | tee -a "$tmp/lines"
}
for r in $(seq "$ROUNDS"); do
	phase idle ""
	phase control "$tmp/nobody-listens.sock"
	phase storm "$sock"
done
# med PHASE FIELD: the median over the rounds of FIELD's value.
med() {
	awk -v p="$1" -v f="$2" '$3 == p { for (i = 4; i < NF; i++) if ($i == f) print $(i + 1) }' "$tmp/lines" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
for f in p50 p99 max connect_p50 connect_p99; do
	printf '%s: idle %s, control %s, storm %s us; storm / control %s\n' "$f" "$(med idle $f)" "$(med control $f)" \
		"$(med storm $f)" "$(awk -v s="$(med storm $f)" -v c="$(med control $f)" 'BEGIN { printf "%.2f", (c > 0 ? s / c : 0) }')"
done
echo "daemon ticks in the storm phase (median): $(med storm daemon_ticks), its loop thread's: $(med storm loop_ticks)"
