#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A real PipeWire (Debian's pipewire-bin), run as nobody with RLIMIT_RTPRIO
# 0 so that it cannot make itself RT, asks org.freedesktop.RealtimeKit1 on
# the test's private system bus, served by the live rtplaced: its data loop
# runs SCHED_RR|SCHED_RESET_ON_FORK at the priority it asked for, on the one
# CPU rtplaced chose for it, under a claim that `rtplacectl cpus` shows and
# that ends when PipeWire exits; its main thread gets its nice level.
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

command -v pipewire >/dev/null 2>&1 || skip "pipewire is not installed (pipewire-bin, scripts/install-deps.sh)"
rt_lock
start_bus
start_rtkit_daemon

# PipeWire's own configuration, the test's: the RT module and its socket,
# no devices, no session manager. rt.prio 15 is within the default
# max-realtime-priority (20).
mkdir -p "$TMP/xdg"
chown nobody "$TMP/xdg"
chmod 0700 "$TMP/xdg"
cat >"$TMP/pipewire.conf" <<'CONF'
context.properties = {
    support.dbus = true
    log.level = 3
}
context.spa-libs = {
    support.* = support/libspa-support
}
context.modules = [
    { name = libpipewire-module-rt
        args = {
            nice.level = -11
            rt.prio = 15
        }
    }
    { name = libpipewire-module-protocol-native }
]
CONF
chmod 0644 "$TMP/pipewire.conf"
# setpriv and prlimit exec it: $! is PipeWire itself, which cleanup kills
# (it sleeps in its loop, RT or not). No session bus: it asks the system
# bus.
XDG_RUNTIME_DIR=$TMP/xdg DBUS_SESSION_BUS_ADDRESS=unix:path=$TMP/no-session-bus \
	$NOBODY prlimit --rtprio=0 pipewire -c "$TMP/pipewire.conf" >"$TMP/pipewire.log" 2>&1 9>&- &
PW=$!
PIDS="$PIDS $PW"

# The grant: rtplaced logs the thread and its CPU.
wait_grep "of process [0-9]* (uid [0-9]*) is SCHED_RR 15 on CPU" "$TMP/rtplaced.log" "PipeWire got no RT grant" \
	"$TMP/pipewire.log"
line=$(grep "is SCHED_RR 15 on CPU" "$TMP/rtplaced.log" | head -1)
tid=$(echo "$line" | sed 's/.*thread \([0-9]*\) of process.*/\1/')
pid=$(echo "$line" | sed 's/.*of process \([0-9]*\) .*/\1/')
cpu=$(echo "$line" | sed 's/.* on CPU \([0-9]*\) .*/\1/')
[ "$pid" = "$PW" ] || fail "the grant went to process $pid, not PipeWire ($PW)"
[ "$(stat -c %U /proc/$pid)" = nobody ] || fail "PipeWire runs as $(stat -c %U /proc/$pid), not nobody"
[ "$tid" != "$pid" ] || fail "PipeWire's main thread was made RT, not its data loop"
grep -q "^Max realtime priority *0 *0" /proc/$pid/limits || fail "PipeWire runs with RLIMIT_RTPRIO $(grep 'realtime priority' /proc/$pid/limits)"

chrt -p "$tid" | grep -q "policy: SCHED_RR|SCHED_RESET_ON_FORK" || fail "data loop: $(chrt -p "$tid")"
chrt -p "$tid" | grep -q "priority: 15" || fail "data loop: $(chrt -p "$tid")"
mask=$(taskset -pc "$tid" | sed 's/.*: //')
[ "$mask" = "$cpu" ] || fail "the data loop runs on CPUs $mask, rtplaced chose $cpu"
"$CTL" --socket "$SOCK" cpus | awk -v c="$cpu" '$1 == c && $9 == "rt15" { found = 1 } END { exit !found }' ||
	fail "no rt15 claim on CPU $cpu: $("$CTL" --socket "$SOCK" cpus)"
wait_claims 1
i=0
until [ "$(ps -o ni= -p "$pid" | tr -d ' ')" = -11 ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "PipeWire's main thread has nice $(ps -o ni= -p "$pid"), want -11"
	sleep 0.05
done
echo "# PipeWire $pid: data loop $tid SCHED_RR 15 on CPU $cpu (claimed), main thread nice -11"

# The claim ends with PipeWire.
kill "$PW"
wait "$PW" 2>/dev/null
wait_claims 0
"$CTL" --socket "$SOCK" cpus | awk '$9 == "rt15" { exit 1 }' || fail "an rt15 claim outlived PipeWire"

stop_daemon
