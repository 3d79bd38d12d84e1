#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Isolation and a running irqbalance (root, the real irqbalance in the
# foreground, rescanning every second). Where it listens on
# /run/irqbalance/irqbalance<PID>.sock, an isolated claim on CPU 1 has it
# ban CPU 1 besides what it banned before (its own socket's setup reply
# says so), and the release and the daemon's stop give it back its banned
# CPUs. Started where /run/irqbalance is missing, it listens on an
# abstract socket no one can name: the claim is isolated all the same
# (interrupts and workqueues) and says that irqbalance was not reached.
# The affinities irqbalance and rtplaced change are written back on every
# exit path, irqbalance killed, and /run/irqbalance removed if the test
# made it.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v irqbalance >/dev/null || skip "irqbalance is not installed (scripts/install-deps.sh)"
wq=/sys/devices/virtual/workqueue/cpumask
[ -w "$wq" ] || skip "no unbound workqueue mask at $wq"
[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || skip "needs CPUs 0 and 1 online"
pgrep -x irqbalance >/dev/null && skip "an irqbalance runs already (pid $(pgrep -x irqbalance)): stop it first"
rt_lock

. "${top_srcdir:-.}/tests/lib/host-isolation.sh"
host_save
RUNDIR=/run/irqbalance
MADE_RUNDIR=
IB=
stop_irqbalance() {
	[ -n "$IB" ] && kill "$IB" 2>/dev/null && wait "$IB" 2>/dev/null
	IB=
}
trap 'stop_irqbalance; host_restore; [ -n "$MADE_RUNDIR" ] && rm -rf "$RUNDIR"; cleanup' EXIT

start_irqbalance() {
	irqbalance --foreground --interval 1 > "$TMP/irqbalance.log" 2>&1 &
	IB=$!
}

# The CPUs irqbalance $IB bans now, as a CPU list, from its setup reply.
cat > "$TMP/banned.py" <<'PY'
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(2)
s.connect(sys.argv[1])
cred = struct.pack("iII", os.getpid(), os.geteuid(), os.getegid())
s.sendmsg([b"setup"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, cred)])
reply = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    reply += b
mask = int(reply.decode().split("BANNED ")[1].split()[0].replace(",", ""), 16)
print(",".join(str(c) for c in range(mask.bit_length()) if mask >> c & 1))
PY
banned() {
	python3 "$TMP/banned.py" "$RUNDIR/irqbalance$IB.sock" || fail "cannot ask irqbalance $IB: $(cat "$TMP/irqbalance.log")"
}

# wait_banned WANT WHY: until irqbalance bans exactly WANT (its rescan
# takes up to its 1 s interval).
wait_banned() {
	i=0
	until now=$(banned) && [ "$now" = "$1" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "$2: irqbalance bans \"$now\", not \"$1\""
		sleep 0.1
	done
}

claim_id() {
	sed -n 's/^claim *\([0-9]*\) .*/\1/p' "$TMP/out"
}

printf '[isolation]\nirqs = yes\nworkqueues = yes\n' > "$TMP/iso.conf"
sleep 600 & OWNER=$!
PIDS="$PIDS $OWNER"

# Unreachable: not fought, and said.
if [ ! -e "$RUNDIR" ]; then
	start_irqbalance
	start_live_daemon --config "$TMP/iso.conf"
	expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
	grep -q "^reason .*irqbalance (pid $IB) runs and its socket $RUNDIR/irqbalance$IB.sock does not answer" \
		"$TMP/out" || fail "the claim does not say irqbalance was not reached: $(cat "$TMP/out")"
	[ "$(( 0x$(tr -d , < "$wq") & 2 ))" -eq 0 ] || fail "CPU 1 is not isolated from unbound work all the same"
	expect_status 0 "$CTL" --socket "$SOCK" release "$(claim_id)"
	stop_daemon
	stop_irqbalance
	mkdir "$RUNDIR" || fail "mkdir $RUNDIR"
	MADE_RUNDIR=1
fi

# Reached: CPU 1 banned while the claim lasts.
start_irqbalance
i=0
until [ -S "$RUNDIR/irqbalance$IB.sock" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "irqbalance made no socket in $RUNDIR: $(cat "$TMP/irqbalance.log")"
	sleep 0.05
done
before=$(banned)
case ",$before," in *,1,*) fail "irqbalance bans CPU 1 before any claim: $before" ;; esac
with1=$(python3 -c "import sys; print(','.join(sorted(set(sys.argv[1].split(',')) - {''} | {'1'}, key=int)))" "$before")
start_live_daemon --config "$TMP/iso.conf"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
! grep -q "irqbalance" "$TMP/out" || fail "the claim says irqbalance was not reached: $(cat "$TMP/out")"
wait_banned "$with1" "isolated"
grep -q "^irqbalance $IB " "$SOCK.isolation" || fail "the journal does not hold irqbalance: $(cat "$SOCK.isolation")"
expect_status 0 "$CTL" --socket "$SOCK" release "$(claim_id)"
wait_banned "$before" "released"

# Given back at the daemon's stop.
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
wait_banned "$with1" "isolated again"
kill "$OWNER"
wait "$OWNER" 2>/dev/null
sleep 600 & OWNER=$!
PIDS="$PIDS $OWNER"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
wait_banned "$with1" "isolated a third time"
stop_daemon
wait_banned "$before" "after the daemon's stop"
[ ! -e "$SOCK.isolation" ] || fail "the journal is left: $(cat "$SOCK.isolation")"
echo "PASS: irqbalance bans the isolated CPU while the claim lasts and is told so through its socket, or said unreached"
