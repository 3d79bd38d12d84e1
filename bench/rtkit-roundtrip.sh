#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# MakeThreadRealtimeWithPID round trips: rtplaced's RealtimeKit1 against
# Debian's rtkit-daemon (package rtkit), each on a private system bus of
# its own, measured side by side in one run by bench/rtkit-roundtrip
# (rounds alternate between the two). Root; nothing outside the run's own
# folder is touched, and the machine's own bus is not used.
#
#   sudo bench/rtkit-roundtrip.sh [CALLS [ROUNDS]]   (from the build tree)
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
RTPLACED=${RTPLACED:-daemon/rtplaced}
BENCH=${BENCH:-bench/rtkit-roundtrip}
RTKIT=${RTKIT:-/usr/libexec/rtkit-daemon}
[ "$(id -u)" = 0 ] || { echo "rtkit-roundtrip: run as root" >&2; exit 77; }
for f in "$RTPLACED" "$BENCH" "$RTKIT"; do
	[ -x "$f" ] || { echo "rtkit-roundtrip: $f is missing (build rtplace; apt-get install rtkit)" >&2; exit 1; }
done
command -v dbus-daemon >/dev/null || { echo "rtkit-roundtrip: dbus-daemon is missing" >&2; exit 1; }

TMP=$(mktemp -d /tmp/rtkit-roundtrip.XXXXXX)
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
. "$top_srcdir/tests/lib/system-bus.sh"

# A bus like Debian's system bus (tests/lib/system-bus.sh), where root may
# own any name (rtplaced, rtkit-daemon, the polkit stand-in) and call any.
start_bus() {
	bus_start "$TMP/$1.sock" '<policy user="root"><allow own="*"/><allow send_destination="*"/></policy>' ||
		{ echo "rtkit-roundtrip: the $1 bus did not start" >&2; exit 1; }
}

# Waits until name $2 is owned on bus $1.
wait_name() {
	i=0
	until DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TMP/$1.sock busctl --system status "$2" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "rtkit-roundtrip: $2 did not appear on the $1 bus:" >&2; cat "$TMP/$1.log" >&2; exit 1; }
		sleep 0.05
	done
}

start_bus rtplace
start_bus rtkit
# Both with the same rules, and bursts out of the way of the run.
printf '[rtkit]\nenable = yes\nactions-per-burst-max = 1000000\n' >"$TMP/rtplaced.conf"
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TMP/rtplace.sock \
	"$RTPLACED" --config "$TMP/rtplaced.conf" --socket "$TMP/rtplaced.sock" >"$TMP/rtplaced.log" 2>&1 &
PIDS="$PIDS $!"
"$BENCH" --polkit "unix:path=$TMP/rtkit.sock" &
PIDS="$PIDS $!"
wait_name rtkit org.freedesktop.PolicyKit1
# rtkit-daemon as packaged, but kept root and out of a chroot (it serves
# a bus in this run's folder), and without its own RLIMIT_FSIZE 0, which
# kills it for writing its log to a file.
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TMP/rtkit.sock \
	"$RTKIT" --stderr --no-drop-privileges --no-chroot --no-limit-resources --actions-per-burst-max=1000000 \
	>"$TMP/rtkit.log" 2>&1 &
PIDS="$PIDS $!"
wait_name rtplace org.freedesktop.RealtimeKit1
wait_name rtkit org.freedesktop.RealtimeKit1

# The caller becomes SCHED_RR: it is bounded from a normal process on
# CPU 0, and it waits on the bus between calls, never spins.
echo "# $(nproc) CPUs, $(uname -r)"
taskset -c 0 timeout -s KILL 120 "$BENCH" "unix:path=$TMP/rtplace.sock" "unix:path=$TMP/rtkit.sock" "$@" ||
	{ echo "rtkit-roundtrip: failed; rtplaced said:" >&2; tail -5 "$TMP/rtplaced.log" >&2;
	  echo "rtkit-daemon said:" >&2; tail -5 "$TMP/rtkit.log" >&2; exit 1; }
