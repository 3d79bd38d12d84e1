#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# org.freedesktop.RealtimeKit1 served by the live rtplaced on a private
# system bus: every method and property with rtkit's types; a grant to
# nobody's thread made SCHED_RR|SCHED_RESET_ON_FORK on the CPU of its claim,
# which ends with the thread, or, without a CPU below its priority, made RT
# where it is; refusals for another user's process, a thread
# of another process, an unlimited RLIMIT_RTTIME, a priority above the
# maximum, the root-only methods and a burst over the limit, each with
# rtkit's error name (AccessDenied), the root-only methods refused by
# rtplaced itself where the bus lets them through; root's Exit releases
# the name until a reload while the socket keeps serving; a second
# rtplaced that finds the name owned, or cannot reach a bus, or is
# refused the name, says so once and runs without it. Grants and
# refusals are in the metrics.
. "$top_srcdir/tests/integration/test-rtkit-common.sh"

rt_lock
# Without a bus, and on a bus without the shipped policy (which refuses
# the name), rtplaced says so once and serves its socket without it.
printf '[rtkit]\nenable = yes\n' >"$TMP/rtkit-off.conf"
start_bus "$TMP/bare_bus.sock" bare
for addr in "$TMP/no_bus.sock:cannot connect to the system bus" "$TMP/bare_bus.sock:the bus refused $RK_DEST"; do
	DBUS_SYSTEM_BUS_ADDRESS=unix:path=${addr%%:*}
	start_live_daemon --config "$TMP/rtkit-off.conf"
	wait_grep "${addr#*:}" "$TMP/rtplaced.log" "rtplaced did not say '${addr#*:}'"
	[ "$(grep -c RealtimeKit "$TMP/rtplaced.log")" = 1 ] || fail "more than one line: $(cat "$TMP/rtplaced.log")"
	"$CTL" --socket "$SOCK" status >/dev/null || fail "rtplaced stopped answering after '${addr#*:}'"
	stop_daemon
done
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$BUS
start_bus
METRICS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RK_CONF_HEAD="[metrics]
listen = 127.0.0.1:$METRICS_PORT"
start_rtkit_daemon "actions-per-burst-max = 10"
rk() {
	busctl --system "$@"
}
# dbus-send names the error: "Error org.freedesktop.DBus.Error.X: text".
rk_call() {
	dbus-send --system --print-reply --dest=$RK_DEST $RK_PATH "org.freedesktop.RealtimeKit1.$@" >"$TMP/out" 2>&1
}
nobody_call() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		dbus-send --system --print-reply --dest=$RK_DEST $RK_PATH "org.freedesktop.RealtimeKit1.$@" >"$TMP/out" 2>&1
}
expect_error() {
	want=$1
	shift
	"$@" && fail "'$*' succeeded, want $want"
	grep -q "^Error $want: " "$TMP/out" || fail "'$*' answered '$(cat "$TMP/out")', want $want"
}

# Properties, with their types, one by one and together; introspection.
[ "$(rk get-property $RK_DEST $RK_PATH $RK_DEST RTTimeUSecMax)" = "x 200000" ] || fail "RTTimeUSecMax"
[ "$(rk get-property $RK_DEST $RK_PATH $RK_DEST MaxRealtimePriority)" = "i 20" ] || fail "MaxRealtimePriority"
[ "$(rk get-property $RK_DEST $RK_PATH $RK_DEST MinNiceLevel)" = "i -15" ] || fail "MinNiceLevel"
all=$(rk call $RK_DEST $RK_PATH org.freedesktop.DBus.Properties GetAll s $RK_DEST)
for want in '"RTTimeUSecMax" x 200000' '"MaxRealtimePriority" i 20' '"MinNiceLevel" i -15'; do
	case $all in *"$want"*) ;; *) fail "GetAll answered '$all', without $want" ;; esac
done
rk introspect --xml-interface $RK_DEST $RK_PATH >"$TMP/intro.xml" || fail "Introspect failed"
for want in 'name="MakeThreadRealtime"' 'name="MakeThreadRealtimeWithPID"' 'name="MakeThreadHighPriority"' \
	'name="MakeThreadHighPriorityWithPID"' 'name="ResetKnown"' 'name="ResetAll"' 'name="Exit"' \
	'name="RTTimeUSecMax" type="x"' 'name="MaxRealtimePriority" type="i"' 'name="MinNiceLevel" type="i"' \
	'type="t" name="process"' 'type="t" name="thread"' 'type="u" name="priority"' 'type="i" name="priority"'; do
	grep -q "$want" "$TMP/intro.xml" || fail "introspection lacks $want: $(cat "$TMP/intro.xml")"
done

# nobody's processes, with a hard RLIMIT_RTTIME within the maximum, and
# one without.
$NOBODY prlimit --rttime=100000:200000 sleep 120 &
LIMITED=$!
$NOBODY prlimit --rttime=100000:200000 sleep 120 &
OTHER=$!
$NOBODY sleep 120 &
UNLIMITED=$!
PIDS="$PIDS $LIMITED $OTHER $UNLIMITED"
sleep 0.2

$NOBODY busctl --system call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtimeWithPID ttu $LIMITED $LIMITED 10 ||
	fail "MakeThreadRealtimeWithPID for nobody's own thread refused"
chrt -p $LIMITED | grep -q "policy: SCHED_RR|SCHED_RESET_ON_FORK" || fail "not SCHED_RR|SCHED_RESET_ON_FORK: $(chrt -p $LIMITED)"
chrt -p $LIMITED | grep -q "priority: 10" || fail "not at priority 10: $(chrt -p $LIMITED)"
cpu=$(sed -n "s/.*thread $LIMITED of process $LIMITED (uid [0-9]*) is SCHED_RR 10 on CPU \([0-9]*\) .*/\1/p" \
	"$TMP/rtplaced.log")
[ -n "$cpu" ] || fail "rtplaced did not say which CPU it chose"
mask=$(taskset -pc $LIMITED | sed 's/.*: //')
[ "$mask" = "$cpu" ] || fail "thread on CPUs $mask, rtplace chose $cpu"
"$CTL" --socket "$SOCK" cpus | awk -v c="$cpu" '$1 == c && $9 == "rt10" { found = 1 } END { exit !found }' ||
	fail "no rt10 claim on CPU $cpu: $("$CTL" --socket "$SOCK" cpus)"
wait_claims 1
echo "# granted SCHED_RR 10 on CPU $cpu, claimed"

# A nice level, within and beyond MinNiceLevel.
$NOBODY busctl --system call $RK_DEST $RK_PATH $RK_DEST MakeThreadHighPriorityWithPID tti -- $OTHER $OTHER -10 ||
	fail "MakeThreadHighPriorityWithPID -10 refused"
[ "$(ps -o ni= -p $OTHER | tr -d ' ')" = -10 ] || fail "nice is $(ps -o ni= -p $OTHER), want -10"
expect_error org.freedesktop.DBus.Error.AccessDenied nobody_call MakeThreadHighPriorityWithPID \
	uint64:$OTHER uint64:$OTHER int32:-16

# Refusals, each with rtkit's error name.
expect_error org.freedesktop.DBus.Error.AccessDenied nobody_call MakeThreadRealtimeWithPID \
	uint64:$$ uint64:$$ uint32:10
grep -q "(not_owner)" "$TMP/rtplaced.log" || fail "another user's process: no not_owner refusal logged"
expect_error org.freedesktop.DBus.Error.AccessDenied nobody_call MakeThreadRealtimeWithPID \
	uint64:$OTHER uint64:$LIMITED uint32:10
grep -q "(foreign_thread)" "$TMP/rtplaced.log" || fail "another process's thread: no foreign_thread refusal"
expect_error org.freedesktop.DBus.Error.AccessDenied nobody_call MakeThreadRealtimeWithPID \
	uint64:$UNLIMITED uint64:$UNLIMITED uint32:10
grep -q "(rttime_unlimited)" "$TMP/rtplaced.log" || fail "unlimited RLIMIT_RTTIME: no rttime_unlimited refusal"
expect_error org.freedesktop.DBus.Error.AccessDenied nobody_call MakeThreadRealtimeWithPID \
	uint64:$OTHER uint64:$OTHER uint32:21
grep -q "(priority_above_max)" "$TMP/rtplaced.log" || fail "priority 21: no priority_above_max refusal"
# The shipped policy keeps the root-only methods from nobody; rtplaced
# refuses them too, which root's ResetKnown below passes.
for m in ResetKnown ResetAll Exit; do
	expect_error org.freedesktop.DBus.Error.AccessDenied nobody_call $m
done
expect_error org.freedesktop.DBus.Error.InvalidArgs rk_call MakeThreadRealtimeWithPID uint64:0 uint64:1 uint32:1

# MakeThreadRealtime names a thread of the caller's own process.
$NOBODY prlimit --rttime=200000 sh -c "exec busctl --system call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtime tu \$\$ 5" ||
	fail "MakeThreadRealtime for the caller's own thread refused"

# The burst: nobody has made 8 requests of its 10; the 11th is refused.
nobody_call MakeThreadRealtimeWithPID uint64:$LIMITED uint64:$LIMITED uint32:11 || fail "9th request refused"
nobody_call MakeThreadRealtimeWithPID uint64:$LIMITED uint64:$LIMITED uint32:12 || fail "10th request refused"
expect_error org.freedesktop.DBus.Error.AccessDenied nobody_call MakeThreadRealtimeWithPID \
	uint64:$LIMITED uint64:$LIMITED uint32:12
grep -q "(burst)" "$TMP/rtplaced.log" || fail "11th request: no burst refusal logged"
chrt -p $LIMITED | grep -q "priority: 12" || fail "the re-grant at 12 did not apply: $(chrt -p $LIMITED)"
wait_claims 1

# Every refusal counted by reason, every grant by kind.
for want in 'refusals_total{reason="not_owner"} 1' 'refusals_total{reason="foreign_thread"} 1' \
	'refusals_total{reason="rttime_unlimited"} 1' 'refusals_total{reason="priority_above_max"} 1' \
	'refusals_total{reason="nice_below_min"} 1' 'refusals_total{reason="burst"} 1' \
	'refusals_total{reason="root_only"} 0' 'grants_total{kind="realtime"} 4' \
	'grants_total{kind="high_priority"} 1' 'grants_total{kind="unpinned"} 0'; do
	got=$(metric "rtplace_rtkit_${want% *}")
	[ "$got" = "${want##* }" ] || fail "rtplace_rtkit_${want% *} is '$got', want ${want##* }"
done
[ "$(metric rtplace_rtkit_serving)" = 1 ] || fail "rtplace_rtkit_serving is $(metric rtplace_rtkit_serving)"

# ResetKnown (root): the thread is back to SCHED_OTHER, its claim ends.
rk call $RK_DEST $RK_PATH $RK_DEST ResetKnown || fail "root's ResetKnown failed"
chrt -p $LIMITED | grep -q "policy: SCHED_OTHER" || fail "ResetKnown left $(chrt -p $LIMITED)"
wait_claims 0

# A claim ends with its thread.
rk call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtimeWithPID ttu $LIMITED $LIMITED 3 || fail "root's grant refused"
wait_claims 1
kill $LIMITED
wait_claims 0

# No CPU below the priority in the thread's affinity (root holds an rt50
# claim on its one CPU): it is made RT where it is, and the log says so.
# Another user than nobody, which has spent its burst.
OTHER_USER="setpriv --reuid=daemon --regid=daemon --clear-groups"
last=$(($(nproc) - 1))
$OTHER_USER prlimit --rttime=200000 taskset -c $last sleep 120 &
PINNED=$!
PIDS="$PIDS $PINNED"
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --count 1 --cpu-list $last --claim 0 --owner $$
wait_claims 1
$OTHER_USER busctl --system call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtimeWithPID ttu $PINNED $PINNED 10 ||
	fail "a grant without a free CPU was refused"
grep -q "thread $PINNED of process $PINNED gets rt10 without a CPU of its own" "$TMP/rtplaced.log" ||
	fail "rtplaced did not say the grant is unpinned"
chrt -p $PINNED | grep -q "priority: 10" || fail "the unpinned grant: $(chrt -p $PINNED)"
[ "$(taskset -pc $PINNED | sed 's/.*: //')" = $last ] || fail "the unpinned thread moved: $(taskset -pc $PINNED)"
metric_is 'rtplace_rtkit_grants_total{kind="unpinned"}' 1 || fail "the unpinned grant is not counted"
wait_claims 1

# A thread in a cpu cgroup without an RT budget (RT group scheduling,
# cgroup v1): the kernel refuses SCHED_RR although the rules allow it, and
# the error names the folder and the fix; the CPU claimed for it is given
# back. The folder is removed on every exit path.
V1=/sys/fs/cgroup/cpu
if [ -f "$V1/cpu.rt_runtime_us" ]; then
	CG=$V1/rtplace-rtkit-budget.$$
	mkdir "$CG" || fail "cannot create $CG"
	trap 'cleanup; rmdir "$CG" 2>/dev/null' EXIT
	# A uid of its own: nobody's requests may have met the burst limit.
	AS_OTHER="setpriv --reuid=daemon --regid=daemon --clear-groups"
	$AS_OTHER prlimit --rttime=100000:200000 sleep 60 &
	BUDGETLESS=$!
	PIDS="$PIDS $BUDGETLESS"
	echo "$BUDGETLESS" >"$CG/cgroup.procs" || fail "cannot move the sleeper into $CG"
	before=$(status_field claims_active)
	$AS_OTHER dbus-send --system --print-reply --dest=$RK_DEST $RK_PATH \
		org.freedesktop.RealtimeKit1.MakeThreadRealtimeWithPID uint64:$BUDGETLESS uint64:$BUDGETLESS uint32:5 \
		>"$TMP/out" 2>&1 && fail "a thread in $CG was made RT"
	grep -q "^Error org.freedesktop.DBus.Error.Failed: " "$TMP/out" || fail "the budget refusal answered $(cat "$TMP/out")"
	grep -q "rtplace-rtkit-budget.$$" "$TMP/out" || fail "the error does not name the cgroup: $(cat "$TMP/out")"
	grep -q "cpu.rt_runtime_us" "$TMP/out" || fail "the error does not name the fix: $(cat "$TMP/out")"
	chrt -p $BUDGETLESS | grep -q "policy: SCHED_OTHER" || fail "the refused thread changed: $(chrt -p $BUDGETLESS)"
	[ "$(status_field claims_active)" = "$before" ] || fail "the refused grant kept its claim"
	kill $BUDGETLESS
	wait $BUDGETLESS 2>/dev/null
	rmdir "$CG" || fail "cannot remove $CG"
else
	echo "# no cgroup v1 cpu controller with RT group scheduling at $V1: the budget refusal is not checked"
fi

# The name taken: a second rtplaced says so once and serves its socket.
"$RTPLACED" --socket "$TMP/second.sock" --config "$TMP/rtkit-off.conf" >"$TMP/second.log" 2>&1 9>&- &
PIDS="$PIDS $!"
i=0
until grep -q "owned by another process" "$TMP/second.log" && "$CTL" --socket "$TMP/second.sock" status >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "the second rtplaced did not say the name is owned: $(cat "$TMP/second.log")"
	sleep 0.05
done
[ "$(grep -c "$RK_DEST" "$TMP/second.log")" = 1 ] || fail "the second rtplaced said more than once: $(cat "$TMP/second.log")"

# rtplaced refuses the root-only methods itself: on a bus whose policy
# lets everyone call them, nobody's ResetKnown, ResetAll and Exit are
# AccessDenied by rtplaced (counted as root_only) and the name stays
# owned.
cat >"$TMP/open-policy.conf" <<'CONF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy user="root"><allow own="org.freedesktop.RealtimeKit1"/></policy>
  <policy context="default"><allow send_destination="org.freedesktop.RealtimeKit1"/></policy>
</busconfig>
CONF
start_bus "$TMP/open_bus.sock" "$TMP/open-policy.conf"
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TMP/open_bus.sock "$RTPLACED" --socket "$TMP/open.sock" \
	--config "$TMP/rtkit-off.conf" >"$TMP/open.log" 2>&1 9>&- &
OPEN=$!
PIDS="$PIDS $OPEN"
wait_grep "serving $RK_DEST" "$TMP/open.log" "rtplaced did not take $RK_DEST on the open bus" "$TMP/open.log"
for m in ResetKnown ResetAll Exit; do
	DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TMP/open_bus.sock expect_error org.freedesktop.DBus.Error.AccessDenied \
		nobody_call $m
done
[ "$(grep -c "refused to uid $(id -u nobody) (root_only)" "$TMP/open.log")" = 3 ] ||
	fail "rtplaced did not refuse the root-only methods itself: $(grep RealtimeKit "$TMP/open.log")"
owner=$(DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TMP/open_bus.sock dbus-send --system --print-reply=literal \
	--dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:$RK_DEST | tr -d ' ')
[ "$owner" = booleantrue ] || fail "nobody's Exit released the name: $owner"
kill $OPEN
wait $OPEN 2>/dev/null

# A reload takes the new rules; the properties follow, and grants get
# the policy configured.
printf '[metrics]\nlisten = 127.0.0.1:%s\n[rtkit]\nenable = yes\nmax-realtime-priority = 30\nscheduling-policy = fifo\n' \
	"$METRICS_PORT" >"$TMP/rtkit.conf"
kill -HUP "$DAEMON"
wait_grep "Configuration reloaded" "$TMP/rtplaced.log" "rtplaced did not reload"
[ "$(rk get-property $RK_DEST $RK_PATH $RK_DEST MaxRealtimePriority)" = "i 30" ] ||
	fail "MaxRealtimePriority after the reload: $(rk get-property $RK_DEST $RK_PATH $RK_DEST MaxRealtimePriority)"
rk call $RK_DEST $RK_PATH $RK_DEST MakeThreadRealtimeWithPID ttu $OTHER $OTHER 25 || fail "the grant under fifo refused"
chrt -p $OTHER | grep -q "policy: SCHED_FIFO|SCHED_RESET_ON_FORK" || fail "scheduling-policy = fifo gave $(chrt -p $OTHER)"
chrt -p $OTHER | grep -q "priority: 25" || fail "not at priority 25: $(chrt -p $OTHER)"

# Exit (root): rtplaced answers, logs who asked, releases the name and
# keeps serving its socket; a call to the name then finds no owner. A
# reload serves it again.
rk call $RK_DEST $RK_PATH $RK_DEST Exit || fail "root's Exit failed"
has_owner() {
	dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.NameHasOwner string:$RK_DEST | tr -d ' '
}
i=0
until [ "$(has_owner)" = "booleanfalse" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "$RK_DEST is still owned after Exit"
	sleep 0.05
done
grep -q "Exit called by root (pid [0-9]*, bus name :[0-9.]*); no longer serving $RK_DEST" "$TMP/rtplaced.log" ||
	fail "Exit did not log who asked: $(grep Exit "$TMP/rtplaced.log")"
expect_error org.freedesktop.DBus.Error.ServiceUnknown rk_call MakeThreadRealtimeWithPID \
	uint64:$OTHER uint64:$OTHER uint32:5
"$CTL" --socket "$SOCK" status >/dev/null || fail "rtplaced stopped answering its socket after Exit"
[ "$(metric rtplace_rtkit_serving)" = 0 ] || fail "rtplace_rtkit_serving after Exit: $(metric rtplace_rtkit_serving)"
kill -HUP "$DAEMON"
i=0
until [ "$(grep -c "serving $RK_DEST on the system bus" "$TMP/rtplaced.log")" = 2 ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "the reload after Exit did not serve $RK_DEST again: $(grep RealtimeKit "$TMP/rtplaced.log")"
	sleep 0.05
done
[ "$(rk get-property $RK_DEST $RK_PATH $RK_DEST MaxRealtimePriority)" = "i 30" ] || fail "no properties after the reload"

# rtplaced stops cleanly while serving (a sanitizer build checks its memory).
stop_daemon
