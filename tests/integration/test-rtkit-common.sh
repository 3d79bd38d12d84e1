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
