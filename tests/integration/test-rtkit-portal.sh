#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The real xdg-desktop-portal (Debian's package) between a sandboxed
# client and rtplaced's RealtimeKit, as Flatpak apps reach RT: the portal
# runs as nobody on a private session bus (no display, no desktop: the
# Realtime portal needs neither) and finds RealtimeKit on the test's
# private system bus; the client runs as nobody inside bubblewrap in its
# own user and PID namespaces, with a /.flatpak-info naming its app and
# instance, and bwrap's --info-fd JSON where Flatpak keeps it
# ($XDG_RUNTIME_DIR/.flatpak/INSTANCE/bwrapinfo.json): what the portal
# reads to map the client's pids to the host's (the path whose failures
# users see as "Could not map pid" in the 1.16 portal and "Could not get
# pidns" in 1.19 and later). The client asks the portal's
# MakeThreadRealtimeWithPID for one of its threads by its own numbers; the
# portal translates them and calls rtplaced's MakeThreadRealtimeWithPID
# itself. The thread ends SCHED_RR|SCHED_RESET_ON_FORK at the priority
# asked, on the CPU rtplaced chose and claimed.
#
# The properties, non-default here, are read as the portal and SDL read
# them: on the system bus each has rtkit's signature (i, i, x), and the
# portal, which reads them once at start with g_variant_get_int32/int64
# (wrong types would leave it 0 and log a critical), shows the same values.
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

PORTAL=/usr/libexec/xdg-desktop-portal
[ -x "$PORTAL" ] || skip "xdg-desktop-portal is not installed (scripts/install-deps.sh)"
for tool in bwrap gdbus; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (scripts/install-deps.sh)"
done
rt_lock
start_bus
start_rtkit_daemon "max-realtime-priority = 25" "min-nice-level = -12" "rttime-usec-max = 150000"

# On the system bus: rtkit's types, the configured values.
for want in "MaxRealtimePriority i 25" "MinNiceLevel i -12" "RTTimeUSecMax x 150000"; do
	set -- $want
	got=$(busctl --system get-property $RK_DEST $RK_PATH $RK_DEST "$1") || fail "cannot read $1"
	[ "$got" = "$2 $3" ] || fail "$1 on the system bus is \"$got\", want \"$2 $3\""
done

# The session: nobody's runtime folder and bus; the portal on it.
XDG=$TMP/xdg
mkdir -p "$XDG/home" "$TMP/session"
chown -R nobody:nogroup "$XDG" "$TMP/session"
chmod 0700 "$XDG"
$NOBODY dbus-daemon --session --address="unix:path=$TMP/session/bus" --nofork --print-address=3 \
	3>"$TMP/session.addr" >"$TMP/session.log" 2>&1 9>&- &
PIDS="$PIDS $!"
wait_grep "unix:path=" "$TMP/session.addr" "the session bus did not start" "$TMP/session.log"
SESSION=unix:path=$TMP/session/bus
AS_USER="env -i PATH=/usr/bin:/bin HOME=$XDG/home XDG_RUNTIME_DIR=$XDG DBUS_SESSION_BUS_ADDRESS=$SESSION"
# The portal's system bus is the test's (DBUS_SYSTEM_BUS_ADDRESS).
$NOBODY $AS_USER DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" "$PORTAL" --verbose \
	>"$TMP/portal.log" 2>&1 9>&- &
PORTAL_PID=$!
PIDS="$PIDS $PORTAL_PID"
wait_grep "org.freedesktop.portal.Desktop acquired" "$TMP/portal.log" "the portal did not start" "$TMP/portal.log"
grep -q "providing portal org.freedesktop.portal.Realtime" "$TMP/portal.log" ||
	fail "the portal provides no Realtime portal: $(cat "$TMP/portal.log")"

portal_get() {
	$NOBODY $AS_USER gdbus call --session -d org.freedesktop.portal.Desktop -o /org/freedesktop/portal/desktop \
		-m org.freedesktop.DBus.Properties.Get org.freedesktop.portal.Realtime "$1"
}
# gdbus prints an int32 bare and an int64 with its type.
for want in "MaxRealtimePriority (<25>,)" "MinNiceLevel (<-12>,)" "RTTimeUSecMax (<int64 150000>,)"; do
	got=$(portal_get "${want%% *}") || fail "cannot read ${want%% *} of the portal"
	[ "$got" = "${want#* }" ] || fail "the portal's ${want%% *} is $got, want ${want#* } (the types it read)"
done
# What the portal says when it cannot read a property, or reads one of
# another type. (The document portal, which needs FUSE that the test does
# not give it, fails the portal's document proxy: a critical of its own.)
! grep -E "g_variant_get_int|RealtimeKit" "$TMP/portal.log" ||
	fail "the portal could not read rtplaced's properties: $(grep -E "g_variant_get_int|RealtimeKit" "$TMP/portal.log")"

# The sandbox, as flatpak builds it: a root of its own with /usr, the app's
# /.flatpak-info, bwrap's info for the portal.
INSTANCE=271828
mkdir -p "$XDG/.flatpak/$INSTANCE"
chown nobody:nogroup "$XDG/.flatpak" "$XDG/.flatpak/$INSTANCE"
printf '[Application]\nname=org.rtplace.PortalTest\n\n[Instance]\ninstance-id=%s\n' $INSTANCE >"$TMP/flatpak-info"
# The client asks for its thread at priority $1 by its own ids, prints
# them and the portal's answer, and keeps the thread.
cat >"$TMP/client.py" <<'PY'
import subprocess, sys, threading, time
# The thread to make RT sleeps: RT or not, it takes no CPU.
t = threading.Thread(target=time.sleep, args=(60,), daemon=True)
t.start()
pid, tid = subprocess.os.getpid(), t.native_id
r = subprocess.run(["gdbus", "call", "--session", "-d", "org.freedesktop.portal.Desktop",
                    "-o", "/org/freedesktop/portal/desktop",
                    "-m", "org.freedesktop.portal.Realtime.MakeThreadRealtimeWithPID",
                    str(pid), str(tid), sys.argv[1]], capture_output=True, text=True)
print("asked", pid, tid, "exit", r.returncode, r.stdout.strip(), r.stderr.strip(), flush=True)
time.sleep(60)
PY
chmod 0644 "$TMP/flatpak-info" "$TMP/client.py"

# sandboxed LOG PRIO [BWRAP-ARGS]: the client as nobody in bwrap's own user
# and PID namespaces, its output in LOG, bwrap's info where the portal
# looks; prlimit and setpriv exec, so its parent outside is in PIDS.
sandboxed() {
	log=$1 prio=$2
	shift 2
	$NOBODY prlimit --rttime=100000:150000 bwrap --unshare-user --unshare-pid --die-with-parent \
		--ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin \
		--ro-bind /etc /etc --proc /proc --dev /dev --bind "$TMP/session" "$TMP/session" \
		--ro-bind "$TMP/client.py" /app/client.py "$@" \
		--info-fd 3 --clearenv --setenv PATH /usr/bin --setenv DBUS_SESSION_BUS_ADDRESS "$SESSION" \
		/usr/bin/python3 /app/client.py "$prio" 3>"$XDG/.flatpak/$INSTANCE/bwrapinfo.json" >"$log" 2>&1 9>&- &
	PIDS="$PIDS $!"
	wait_grep "^asked" "$log" "the client did not ask" "$log"
}

# granted PRIO: the host's thread, process and CPU of rtplaced's grant at
# PRIO, checked: nobody's, SCHED_RR|SCHED_RESET_ON_FORK at PRIO, alone on
# the CPU rtplaced claimed for it.
granted() {
	wait_grep "is SCHED_RR $1 on CPU" "$TMP/rtplaced.log" "rtplaced logged no grant at $1" "$TMP/rtplaced.log"
	line=$(grep "is SCHED_RR $1 on CPU" "$TMP/rtplaced.log" | head -1)
	tid=$(echo "$line" | sed 's/.*thread \([0-9]*\) of process.*/\1/')
	pid=$(echo "$line" | sed 's/.*of process \([0-9]*\) .*/\1/')
	cpu=$(echo "$line" | sed 's/.* on CPU \([0-9]*\) .*/\1/')
	case $line in
	*"(uid 65534)"*) ;;
	*) fail "the grant is not for nobody's call: $line" ;;
	esac
	[ "$(stat -c %U /proc/$pid)" = nobody ] || fail "the client runs as $(stat -c %U /proc/$pid)"
	chrt -p "$tid" | grep -q "policy: SCHED_RR|SCHED_RESET_ON_FORK" || fail "thread $tid is $(chrt -p "$tid")"
	chrt -p "$tid" | grep -q "priority: $1\$" || fail "thread $tid is $(chrt -p "$tid")"
	[ "$(taskset -pc "$tid" | sed 's/.*: //')" = "$cpu" ] ||
		fail "thread $tid runs on CPUs $(taskset -pc "$tid" | sed 's/.*: //'), rtplaced chose $cpu"
	"$CTL" --socket "$SOCK" cpus | awk -v c="$cpu" -v l="rt$1" '$1 == c && $9 == l { found = 1 } END { exit !found }' ||
		fail "no rt$1 claim on CPU $cpu: $("$CTL" --socket "$SOCK" cpus)"
}

# A Flatpak-like app: its own ids, mapped by the portal to the host's.
sandboxed "$TMP/client.log" 15 --ro-bind "$TMP/flatpak-info" /.flatpak-info
set -- $(cat "$TMP/client.log")
ns_pid=$2 ns_tid=$3
[ "$5" = 0 ] || fail "the portal refused: $(cat "$TMP/client.log"); portal: $(tail -5 "$TMP/portal.log")"
granted 15
[ "$pid" != "$ns_pid" ] && [ "$tid" != "$ns_tid" ] || fail "the client's ids $ns_pid/$ns_tid reached rtplaced unmapped"
[ "$(awk '/^NSpid:/ { print $NF }' /proc/$pid/status)" = "$ns_pid" ] || fail "host pid $pid is not the client's $ns_pid"
[ "$(awk '/^NSpid:/ { print $NF }' /proc/$pid/task/$tid/status)" = "$ns_tid" ] ||
	fail "host tid $tid is not the client's thread $ns_tid"
[ "$(readlink /proc/$pid/ns/pid)" != "$(readlink /proc/self/ns/pid)" ] || fail "the client shares the host's PID namespace"
[ "$(grep -c "RealtimeKit: the bus gives " "$TMP/rtplaced.log")" = 1 ] ||
	fail "rtplaced did not say once whether its bus gives ProcessFD: $(grep RealtimeKit "$TMP/rtplaced.log")"
echo "# sandboxed thread $ns_tid of process $ns_pid = host $tid of $pid: SCHED_RR 15 on CPU $cpu, through xdg-desktop-portal $(dpkg-query -W -f '${Version}' xdg-desktop-portal 2>/dev/null)"

# A host app (the case newer portals, 1.19 and 1.20, fail as "Could not
# get pidns" before they call RealtimeKit): its ids are the host's, the
# portal passes them on as they are.
$NOBODY $AS_USER prlimit --rttime=100000:150000 /usr/bin/python3 "$TMP/client.py" 12 >"$TMP/host.log" 2>&1 9>&- &
PIDS="$PIDS $!"
wait_grep "^asked" "$TMP/host.log" "the host client did not ask" "$TMP/host.log"
set -- $(cat "$TMP/host.log")
[ "$5" = 0 ] || fail "the portal refused the host app: $(cat "$TMP/host.log"); portal: $(tail -5 "$TMP/portal.log")"
granted 12
[ "$pid" = "$2" ] && [ "$tid" = "$3" ] || fail "the host app asked for $3 of $2, rtplaced granted $tid of $pid"
echo "# host app: thread $tid of process $pid SCHED_RR 12 on CPU $cpu"

# A sandbox without /.flatpak-info: the portal takes it for a host app and
# passes its own ids on unmapped; on the host they name other processes
# (root's), which rtplaced must refuse and leave alone.
sandboxed "$TMP/bare.log" 10
set -- $(cat "$TMP/bare.log")
other=$2
before=$(chrt -p "$other" 2>&1)
[ "$5" != 0 ] || fail "a sandbox's unmapped ids were granted: $(cat "$TMP/bare.log")"
grep -q "MakeThreadRealtimeWithPID refused to uid 65534 " "$TMP/rtplaced.log" ||
	fail "rtplaced logged no refusal of the unmapped ids: $(grep RealtimeKit "$TMP/rtplaced.log")"
[ "$(chrt -p "$other" 2>&1)" = "$before" ] || fail "host pid $other was changed: $(chrt -p "$other" 2>&1)"
grep -q "AccessDenied: thread $3 of process $other belongs to uid 0, not to the caller.s uid 65534" "$TMP/bare.log" ||
	fail "the app was not told rtplaced's refusal: $(cat "$TMP/bare.log")"
grep -q "is SCHED_RR 10" "$TMP/rtplaced.log" && fail "rtplaced granted the unmapped ids: $(grep "SCHED_RR 10" "$TMP/rtplaced.log")"
echo "# unmapped sandbox ids $2/$3: refused ($(grep -o "MakeThreadRealtimeWithPID refused to uid 65534 ([a-z_]*)" "$TMP/rtplaced.log" | head -1))"
stop_daemon
