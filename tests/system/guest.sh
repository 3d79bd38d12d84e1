#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The system tests, run as root by rtplace-system-test.service inside a
# whole Debian system booted with systemd as PID 1 (tests/system/run.sh).
# The shared folder holds this script and debs/ (the packages under test);
# each check appends one line "PASS: NAME" or "FAIL: NAME (why)" to results
# there, and what the commands printed goes to guest.log. The checks run in
# order on one boot: install, then what a user of the packages meets, then
# purge.
set -u
# From a copy outside the share, SHARE its argument: the suspend check
# takes the share away while the system sleeps, which bash reading this
# file from it would not allow.
if [ $# -eq 0 ]; then
	cp "$0" /run/rtplace-guest.sh
	exec /bin/bash /run/rtplace-guest.sh "$(cd "$(dirname "$0")" && pwd)"
fi
share=$1
res=$share/results log=$share/guest.log
conf=/etc/rtplace/rtplaced.conf
: >"$res"
exec >>"$log" 2>&1
export SYSTEMD_PAGER='' SYSTEMD_COLORS=0 DEBIAN_FRONTEND=noninteractive

pass() { echo "PASS: $1" >>"$res"; echo "== PASS: $1"; }
fail() { echo "FAIL: $1 ($2)" >>"$res"; echo "== FAIL: $1 ($2)"; }
# check NAME WHY COMMAND...: PASS when COMMAND succeeds.
check() {
	local name=$1 why=$2
	shift 2
	echo "== $name: $*"
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}
# Waits up to $1 seconds for COMMAND to succeed (the guest runs under
# emulation: every wait is generous).
wait_for() {
	local t=$1
	shift
	for ((i = 0; i < t * 5; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
prop() { systemctl show -P "$1" rtplaced.service; }
active() { [ "$(systemctl is-active rtplaced.service)" = active ]; }
# The configuration: the package's file with SECTION/KEY lines appended.
set_conf() {
	cp /root/rtplaced.conf.orig "$conf"
	[ $# -eq 0 ] || printf '%b\n' "$@" >>"$conf"
}
restart_clean() {
	systemctl reset-failed rtplaced.service rtplaced.socket
	systemctl restart rtplaced.socket rtplaced.service && wait_for 60 active
}
# The comm of the process that owns a bus name, or nothing.
bus_owner() {
	local pid
	pid=$(busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
		GetConnectionUnixProcessID s org.freedesktop.RealtimeKit1 2>/dev/null | awk '{print $2}')
	[ -n "$pid" ] && cat "/proc/$pid/comm"
}
export -f active bus_owner
rtkit_call() {
	busctl --system --timeout=60 get-property org.freedesktop.RealtimeKit1 /org/freedesktop/RealtimeKit1 \
		org.freedesktop.RealtimeKit1 MaxRealtimePriority
}

echo "== $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -r), systemd $(systemctl --version | head -1)"
nproc
start=$(date +%s)

# --- install through apt, as a user does
check install "apt-get install of the packages failed" \
	apt-get install -y --no-install-recommends "$share"/debs/rtplace_*.deb "$share"/debs/librtplace0_*.deb
cp "$conf" /root/rtplaced.conf.orig
check units-usr-lib "units installed outside /usr/lib/systemd/system" \
	bash -c '! dpkg -L rtplace | grep -E "^/lib/systemd" && dpkg -L rtplace | grep -q "^/usr/lib/systemd/system/rtplaced.service$"'

# --- socket activation: the socket listens, the first client starts the daemon
systemctl stop rtplaced.service
check socket-activation "a client did not start rtplaced through its socket" \
	bash -c '[ "$(systemctl is-active rtplaced.socket)" = active ] && ! systemctl -q is-active rtplaced.service &&
		rtplacectl status && systemctl -q is-active rtplaced.service'

# --- the tracker is live under the unit's sandbox, both nodes seen
rtplacectl status >/tmp/status
cat /tmp/status
check tracker-live "levels not live from the BPF tracker under the unit" \
	grep -q '^levels  *live (BPF tracker)' /tmp/status
check numa-nodes "rtplaced does not see the guest's 2 NUMA nodes" \
	grep -q '^topology  *2 nodes' /tmp/status

# --- hardening
exposure=$(systemd-analyze security rtplaced.service 2>&1 | sed -n 's/.*Overall exposure level for rtplaced.service: \([0-9.]*\).*/\1/p')
echo "exposure: $exposure"
check hardening "systemd-analyze security: exposure '$exposure', more than 2.5" \
	awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 2.5) }'

# --- rights: root, a member of group rtplace, another user
useradd -m -G rtplace alice
useradd -m bob
check rights-root "root cannot claim" rtplacectl query --prio 10 --claim 60000 --owner $$
check rights-member "a member of group rtplace cannot query" runuser -u alice -- rtplacectl query --prio 10
runuser -u bob -- rtplacectl query --prio 10 >/tmp/bob.out 2>&1
cat /tmp/bob.out
check rights-other "another user is not refused with how to join group rtplace" \
	bash -c '! runuser -u bob -- rtplacectl query --prio 10 && grep -q rtplace /tmp/bob.out'
# A claim through a user switch: the owner walk stops at runuser (root's)
# and says which process it found and what to give instead; from a shell
# of the member's, the claim is made.
runuser -u alice -- rtplacectl query --prio 10 --claim 60000 >/tmp/runuser.out 2>&1
cat /tmp/runuser.out
check rights-runuser-told "the refusal through runuser names neither runuser nor --owner" \
	bash -c 'runuser -u alice -- rtplacectl query --prio 10 --claim 60000 >/dev/null 2>&1 ||
		{ grep -q "(runuser)" /tmp/runuser.out && grep -q -- "--owner" /tmp/runuser.out; }'
check rights-runuser-shell "runuser -u alice -- sh -c 'rtplacectl query --claim' refused" \
	runuser -u alice -- sh -c 'rtplacectl query --prio 10 --claim 60000'

# --- kill -9: systemd restarts rtplaced, the claims tied to processes stay
sleep 3600 &
owner=$!
rtplacectl query --prio 20 --claim 600000 --owner $owner
pid=$(prop MainPID)
kill -9 "$pid"
check kill9-restart "rtplaced not restarted after kill -9" \
	wait_for 60 bash -c "active && [ \"\$(systemctl show -P MainPID rtplaced.service)\" != $pid ]"
rtplacectl claims | tee /tmp/claims
check kill9-claims-kept "the claim of process $owner is gone after the restart" \
	grep -qw "$owner" /tmp/claims
kill "$owner"

# --- watchdog: never fired so far, fires on a stopped daemon
check watchdog-quiet "the watchdog fired while rtplaced was running" \
	bash -c '! journalctl -b -u rtplaced.service | grep -qi "watchdog timeout"'
pid=$(prop MainPID)
kill -STOP "$pid"
check watchdog-fires "no watchdog restart of a stopped rtplaced within 90 s" \
	wait_for 90 bash -c "active && [ \"\$(systemctl show -P MainPID rtplaced.service)\" != $pid ]"

# --- a bad configuration at start: the unit fails once, no restart loop
set_conf '[daemon]' 'log-level = chatty'
systemctl reset-failed rtplaced.service
systemctl restart rtplaced.service
sleep 10
echo "NRestarts=$(prop NRestarts) ActiveState=$(prop ActiveState) Result=$(prop Result)"
check bad-config-no-loop "a bad configuration restarted rtplaced $(prop NRestarts) times" \
	bash -c '[ "$(systemctl show -P NRestarts rtplaced.service)" = 0 ] &&
		[ "$(systemctl show -P ActiveState rtplaced.service)" = failed ]'
set_conf
restart_clean

# --- reload: a good file is applied, a bad one fails the reload
pid=$(prop MainPID)
set_conf '[daemon]' 'log-level = debug'
check reload-good "systemctl reload of a good file failed" \
	bash -c "systemctl reload rtplaced.service && [ \"\$(systemctl show -P MainPID rtplaced.service)\" = $pid ] &&
		journalctl -b -u rtplaced.service | grep -q 'Configuration reloaded'"
set_conf '[daemon]' 'log-level = chatty'
check reload-bad "systemctl reload of a bad file succeeded" \
	bash -c "! systemctl reload rtplaced.service && systemctl -q is-active rtplaced.service &&
		[ \"\$(systemctl show -P MainPID rtplaced.service)\" = $pid ]"
set_conf
restart_clean

# --- reload refused by the running daemon alone: a file that loads (the
# daemon's own --check-config passes it) but would take the CPU a live
# claim holds from placement. systemctl reload waits for the verdict
# (ExecReload=rtplacectl reload) and fails with the daemon's reason.
sleep 3600 &
owner=$!
rtplacectl query --prio 20 --cpu-list 3 --claim 600000 --owner $owner
pid=$(prop MainPID)
set_conf '[placement]' 'housekeeping-cpus = 3'
rtplaced --check-config
systemctl reload rtplaced.service >/tmp/reload.out 2>&1
echo "reload exit $?: $(cat /tmp/reload.out)"
journalctl -b -u rtplaced.service | grep 'housekeeping-cpus would take' | tail -2
check reload-claimed-cpu "systemctl reload of a file taking claimed CPU 3 succeeded, or the daemon did not say why" \
	bash -c "rtplaced --check-config && ! systemctl reload rtplaced.service && systemctl -q is-active rtplaced.service &&
		[ \"\$(systemctl show -P MainPID rtplaced.service)\" = $pid ] && rtplacectl claims | grep -qw $owner &&
		journalctl -b -u rtplaced.service | grep -q 'housekeeping-cpus would take CPU 3 from placement while claim'"
kill "$owner"
wait_for 30 bash -c "! rtplacectl claims | grep -qw $owner"
check reload-claim-ended "the same file is refused once the claim on CPU 3 ended" systemctl reload rtplaced.service
set_conf
restart_clean

# --- RealtimeKit with rtkit installed: rtplaced keeps the name when enabled
if [ -x /usr/libexec/rtkit-daemon ]; then
	systemctl stop rtkit-daemon.service
	rtkit_call
	check rtkit-disabled "with [rtkit] enable = no the RealtimeKit name is not rtkit-daemon's" \
		bash -c '[ "$(bus_owner)" = rtkit-daemon ]'
	systemctl stop rtkit-daemon.service
	set_conf '[rtkit]' 'enable = yes'
	restart_clean
	wait_for 30 bash -c '[ "$(bus_owner)" = rtplaced ]'
	systemctl stop rtplaced.service
	rtkit_call
	echo "owner after a call while rtplaced was stopped: $(bus_owner)"
	check rtkit-kept "a call while rtplaced was stopped gave the RealtimeKit name to $(bus_owner)" \
		bash -c '[ "$(bus_owner)" = rtplaced ]'
	systemctl restart rtplaced.service
	wait_for 30 bash -c '[ "$(bus_owner)" = rtplaced ]'
	check rtkit-restart "after a restart of rtplaced the RealtimeKit name is $(bus_owner)'s" \
		bash -c '[ "$(bus_owner)" = rtplaced ]'
	set_conf
	restart_clean
	rtkit_call
	check rtkit-back "with the interface disabled again rtkit-daemon does not serve" \
		bash -c '[ "$(bus_owner)" = rtkit-daemon ]'
else
	fail rtkit "rtkit is not installed in the image"
fi

# --- suspend to RAM and back (S3; run.sh's wakeup.py wakes the guest):
# no RealtimeKit grant demoted, no claim lost, a claimed thread keeps its
# policy and affinity (rtkit's most reported defect is demotion after
# resume). The 9p share does not survive S3 (its driver cannot restore
# the device qemu resets at wakeup): it is unmounted and its driver
# unbound for the sleep, bound and mounted again after, the output kept
# in /run meanwhile. The sleepers' output is not the share's, or it would
# stay busy.
systemctl stop rtkit-daemon.service
set_conf '[rtkit]' 'enable = yes'
restart_clean
wait_for 30 bash -c '[ "$(bus_owner)" = rtplaced ]'
runuser -u alice -- prlimit --rttime=200000 sleep 3600 </dev/null >/dev/null 2>&1 &
wait_for 10 pgrep -u alice -x sleep >/dev/null
rk=$(pgrep -u alice -x sleep | head -1)
runuser -u alice -- busctl --system --timeout=60 call org.freedesktop.RealtimeKit1 /org/freedesktop/RealtimeKit1 \
	org.freedesktop.RealtimeKit1 MakeThreadRealtimeWithPID ttu "$rk" "$rk" 5
rtplace-run --prio 20 -- sleep 3600 </dev/null >/dev/null 2>&1 &
cl=$! # rtplace-run execs sleep
wait_for 30 bash -c "chrt -p $cl | grep -q SCHED_FIFO"
sched() { echo "$(chrt -p "$1" | sed -n 's/.*policy: //p; s/.*priority: //p' | tr '\n' ' ')$(taskset -pc "$1" | sed 's/.*: //')"; }
# PipeWire as a lingering user's service: its data loop asks RealtimeKit
# (rtplaced) for RT and gets RR 20 on a CPU claimed for it.
uid=$(id -u alice)
loginctl enable-linger alice
wait_for 60 systemctl -q is-active "user@$uid.service"
# As alice, with her session's runtime folder (her manager's private socket).
as_alice() { runuser -u alice -- env XDG_RUNTIME_DIR="/run/user/$uid" "$@"; }
as_alice systemctl --user start pipewire.service
echo "$(runuser -u alice -- pipewire --version | tail -1)"
# PipeWire's data loop once it is RT: its pid and tid (0.3.65 leaves the
# thread named pipewire, 1.4 names it data-loop.0).
pw_rt() { ps -L -u alice -o pid=,tid=,cls=,comm= | awk '$3 == "RR" && ($4 ~ /^data-loop/ || $4 == "pipewire") { print $1, $2; exit }'; }
export -f pw_rt
wait_for 60 bash -c '[ -n "$(pw_rt)" ]'
ps -L -u alice -o pid,tid,cls,rtprio,psr,comm
read -r pwpid pw <<<"$(pw_rt)"
rtplacectl claims
check pipewire-rtkit "PipeWire's data loop is not RR 20 on a CPU claimed for it through RealtimeKit" \
	bash -c "[ -n '$pw' ] && [ \"\$(chrt -p $pw | sed -n 's/.*priority: //p')\" = 20 ] &&
		rtplacectl claims | awk -v p=$pwpid -v c=\"\$(taskset -pc $pw | sed 's/.*: //')\" '\$4 == p && \$3 == c' | grep -q ."
# The claims of the three: id, level, CPUs, owner (not the lease left).
claims_of() { rtplacectl claims | awk -v a="$rk" -v b="$cl" -v c="${pwpid:-x}" '$4 == a || $4 == b || $4 == c { print $1, $2, $3, $4 }'; }
rk_before=$(sched "$rk") cl_before=$(sched "$cl") pw_before=$([ -z "$pw" ] || sched "$pw") pid=$(prop MainPID)
rtplacectl claims
claims_of | tee /tmp/claims.before
echo "before: RealtimeKit thread $rk: $rk_before; claimed thread $cl: $cl_before"
check s3-setup "the RealtimeKit grant (RR 5) or the claimed thread (FIFO 20) was not made" \
	bash -c "[[ '$rk_before' == SCHED_RR*' 5 '* ]] && [[ '$cl_before' == 'SCHED_FIFO 20 '* ]] &&
		[ \$(wc -l </tmp/claims.before) -ge 2 ]"
sleeps=$(cat /sys/power/suspend_stats/success)
dev=$(basename "$(readlink -f /sys/bus/virtio/drivers/9pnet_virtio/virtio*)")
exec >>/run/guest-s3.log 2>&1
t0=$(date +%s)
if umount "$share" && echo "$dev" >/sys/bus/virtio/drivers/9pnet_virtio/unbind; then
	echo mem >/sys/power/state
	echo "suspend: exit $?"
	echo "$dev" >/sys/bus/virtio/drivers/9pnet_virtio/bind
else
	echo "suspend: the share could not be taken away: $(ls -l /proc/[0-9]*/fd 2>/dev/null | grep "$share")"
fi
mountpoint -q "$share" || mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 share "$share"
cat /run/guest-s3.log >>"$log"
exec >>"$log" 2>&1
echo "suspended and back in $(($(date +%s) - t0)) s; $(journalctl -k -b | grep -E 'PM: (suspend entry|suspend exit)' | tr '\n' ' ')"
check s3-resumed "the guest did not sleep in S3 (suspend_stats/success $(cat /sys/power/suspend_stats/success), was $sleeps)" \
	test "$(cat /sys/power/suspend_stats/success)" -gt "$sleeps"
sleep 5 # the watchdogs' look after the wake
rk_after=$(sched "$rk") cl_after=$(sched "$cl") pw_after=$([ -z "$pw" ] || sched "$pw")
echo "after: RealtimeKit thread $rk: $rk_after; claimed thread $cl: $cl_after"
claims_of | tee /tmp/claims.after
check s3-rtkit-kept "the RealtimeKit grant was '$rk_before' before the sleep, '$rk_after' after" \
	test "$rk_after" = "$rk_before"
check s3-pipewire-kept "PipeWire's data loop was '$pw_before' before the sleep, '$pw_after' after" \
	bash -c "[ -n '$pw' ] && [ '$pw_after' = '$pw_before' ]"
check s3-claim-kept "the claimed thread was '$cl_before' before the sleep, '$cl_after' after, or its claim is gone" \
	bash -c "[ '$cl_after' = '$cl_before' ] && diff /tmp/claims.before /tmp/claims.after"
check s3-daemon-kept "rtplaced restarted or failed across the sleep" \
	bash -c "active && [ \"\$(systemctl show -P MainPID rtplaced.service)\" = $pid ]"
kill "$rk" "$cl"
as_alice systemctl --user stop pipewire.service pipewire.socket
loginctl disable-linger alice
set_conf
restart_clean

# --- podman runs the OCI hook (hooks.d as installed, rootful, its default
# runtime and cgroup manager): a container annotated
# io.rtplace.priority=50 with CAP_SYS_NICE runs at SCHED_FIFO 50 on the
# CPU claimed for it, the claim ends with the container. The root is a
# static busybox: the guest has no registry to pull from.
podman --version
podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.CgroupManager}} cgroup {{.Host.CgroupsVersion}}'
mkdir -p /root/ctr/bin /root/ctr/proc /root/ctr/dev /root/ctr/sys /root/ctr/etc /root/ctr/tmp
cp /bin/busybox /root/ctr/bin/busybox && ln -sf busybox /root/ctr/bin/sh && ln -sf busybox /root/ctr/bin/sleep
podman run -d --name rtplace-rt --cap-add SYS_NICE --annotation io.rtplace.priority=50 --network none \
	--rootfs /root/ctr /bin/sh -c 'exec sleep 600'
cpid=$(podman inspect --format '{{.State.Pid}}' rtplace-rt)
rtplacectl claims | tee /tmp/claims.podman
echo "container $cpid: $(chrt -p "$cpid" 2>&1 | tr '\n' ' ') $(taskset -pc "$cpid" 2>&1)"
check podman-hook "the container does not run at SCHED_FIFO 50 on a CPU claimed for it" \
	bash -c "[ -n '$cpid' ] && [ '$cpid' != 0 ] && chrt -p $cpid | grep -q 'policy: SCHED_FIFO' &&
		[ \"\$(chrt -p $cpid | sed -n 's/.*priority: //p')\" = 50 ] &&
		awk -v p=$cpid -v c=\"\$(taskset -pc $cpid | sed 's/.*: //')\" '\$4 == p && \$3 == c' /tmp/claims.podman | grep -q ."
podman rm -f -t 0 rtplace-rt
check podman-claim-ended "the container's claim outlived it" \
	wait_for 30 bash -c "! rtplacectl claims | awk '{ print \$4 }' | grep -qx '$cpid'"
# --- isolation under systemd: an isolated claim's partition is a
# transient scope in rtplace.slice that systemd made and knows, for a process
# of a user's service; nothing else runs on the CPU; released, and after
# kill -9 and a restart, every cgroup file is as before, byte for byte
iso_cg=/sys/fs/cgroup
# The cgroup files an isolated claim may change (around the claimant's
# cgroup $1), the busy loop $2's CPUs, and rtplace's units, as text.
iso_state() {
	local d f
	for d in "$iso_cg" "$iso_cg/system.slice" "$iso_cg/user.slice" "$iso_cg/rtplace.slice" "$iso_cg$1"; do
		[ -d "$d" ] || { echo "$d: absent"; continue; }
		for f in cgroup.subtree_control cpuset.cpus cpuset.cpus.effective cpuset.cpus.exclusive \
			cpuset.cpus.exclusive.effective cpuset.cpus.partition cpuset.mems; do
			[ -f "$d/$f" ] && echo "$d/$f: $(tr '\n' ' ' <"$d/$f")"
		done
	done
	echo "$iso_cg$1/cgroup.procs: $(tr '\n' ' ' <"$iso_cg$1/cgroup.procs")"
	grep Cpus_allowed_list "/proc/$2/status"
	systemctl list-units --all --plain --no-legend 'rtplace-claim-*' rtplace.slice
}
# The busy loop $1 never runs on CPU 3 (/proc/PID/stat's processor).
iso_busy_off_3() {
	local i cpu
	grep -q '^Cpus_allowed_list:[[:space:]]*0-2$' "/proc/$1/status" || return 1
	for ((i = 0; i < 20; i++)); do
		cpu=$(awk '{ print $39 }' "/proc/$1/stat")
		[ "$cpu" != 3 ] || return 1
		sleep 0.1
	done
}
# Claim $1 of process $2 holds CPU 3 isolated ($4: when), busy loop $3 off it.
iso_held() {
	local unit=rtplace-claim-$1.scope
	systemctl status "$unit" | tee /tmp/iso.status
	cat "/proc/$2/cgroup"
	echo "rtplace.slice: partition $(cat $iso_cg/rtplace.slice/cpuset.cpus.partition)," \
		"cpus '$(cat $iso_cg/rtplace.slice/cpuset.cpus)'," \
		"exclusive '$(cat $iso_cg/rtplace.slice/cpuset.cpus.exclusive 2>/dev/null)'"
	check "isolation-$4-scope" "process $2 is not in $unit under rtplace.slice" \
		bash -c "grep -qw '$2' /tmp/iso.status && [ \"\$(systemctl show -P Slice $unit)\" = rtplace.slice ] &&
			grep -qx '0::/rtplace.slice/$unit' /proc/$2/cgroup"
	check "isolation-$4-partition" "$unit's partition: $(cat "$iso_cg/rtplace.slice/$unit/cpuset.cpus.partition" 2>&1)" \
		grep -qx isolated "$iso_cg/rtplace.slice/$unit/cpuset.cpus.partition"
	check "isolation-$4-alone" "the busy loop in iso-busy.service: $(grep Cpus_allowed_list "/proc/$3/status")" \
		iso_busy_off_3 "$3"
}
# Releases claim $1 of process $2 (from cgroup $3; busy loop $4): the scope
# is gone, the process back, the files as in /tmp/iso.before ($5: when).
iso_released() {
	rtplacectl release "$1"
	iso_state "$3" "$4" >/tmp/iso.after
	diff /tmp/iso.before /tmp/iso.after
	check "isolation-$5-released" "rtplace-claim-$1.scope still there, or process $2 not back in $3" \
		bash -c "! systemctl list-units --all --plain --no-legend rtplace-claim-$1.scope | grep -q . &&
			grep -qx '0::$3' /proc/$2/cgroup"
	# Nothing left to undo: the journal goes when it holds nothing.
	check "isolation-$5-journal-empty" "rtplaced still holds: $(cat /run/rtplace/rtplaced.sock.isolation 2>&1)" \
		test ! -e /run/rtplace/rtplaced.sock.isolation
	check "isolation-$5-as-before" "cgroup files differ: $(diff /tmp/iso.before /tmp/iso.after | grep '^[<>]' | tr '\n' ' ')" \
		cmp -s /tmp/iso.before /tmp/iso.after
}
# Stops what isolation_systemd_checks started and puts the unit back.
iso_cleanup() {
	systemctl stop iso-busy.service
	runuser -u alice -- env XDG_RUNTIME_DIR="/run/user/$(id -u alice)" systemctl --user stop iso-claimant.service
	loginctl disable-linger alice
	rm -r /etc/systemd/system/rtplaced.service.d
	systemctl daemon-reload
	set_conf
	restart_clean
}
isolation_systemd_checks() {
	local uid pid from id busy main t0 rc
	local user="env XDG_RUNTIME_DIR=/run/user/$(id -u alice)"
	t0=$(date +%s)
	set_conf '[isolation]' 'partition = yes'
	# The package's sandbox keeps /sys/fs/cgroup read-only: isolation's
	# drop-in (rtplaced.conf(5), [isolation] partition).
	mkdir -p /etc/systemd/system/rtplaced.service.d
	printf '[Service]\nProtectControlGroups=no\n' >/etc/systemd/system/rtplaced.service.d/isolation.conf
	systemctl daemon-reload
	restart_clean
	check isolation-systemd-route "rtplaced does not make its partitions through systemd" \
		bash -c "journalctl -b -u rtplaced.service | grep -q 'partitions are systemd.s scopes in rtplace.slice'"
	uid=$(id -u alice)
	loginctl enable-linger alice
	wait_for 60 systemctl -q is-active "user@$uid.service"
	runuser -u alice -- $user systemd-run --user --unit=iso-claimant sleep 3600
	pid=$(runuser -u alice -- $user systemctl --user show -P MainPID iso-claimant.service)
	systemd-run --unit=iso-busy -p RuntimeMaxSec=1200 sh -c 'while :; do :; done'
	busy=$(systemctl show -P MainPID iso-busy.service)
	from=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	echo "claimant $pid in $from, busy loop $busy"
	if [ -z "$pid" ] || [ "$pid" = 0 ] || [ -z "$busy" ] || [ "$busy" = 0 ]; then
		fail isolation-systemd "no claimant in alice's service manager ($pid) or no busy loop ($busy)"
		iso_cleanup
		return
	fi
	iso_state "$from" "$busy" >/tmp/iso.before
	cat /tmp/iso.before
	rtplacectl query --prio 10 -c 3 --claim 600000 --owner "$pid" --isolate >/tmp/iso.out 2>&1
	rc=$?
	cat /tmp/iso.out
	check isolation-claim "the isolated claim of CPU 3 for process $pid was refused: $(cat /tmp/iso.out)" test "$rc" = 0
	id=$(sed -n 's/^claim *\([0-9]*\) .*/\1/p' /tmp/iso.out)
	[ -n "$id" ] || { iso_cleanup; return; }
	iso_held "$id" "$pid" "$busy" held
	iso_released "$id" "$pid" "$from" "$busy" release

	# kill -9: the restarted daemon undoes the dead one's partition and isolates the claim again.
	rtplacectl query --prio 10 -c 3 --claim 600000 --owner "$pid" --isolate >/tmp/iso.out 2>&1
	cat /tmp/iso.out
	id=$(sed -n 's/^claim *\([0-9]*\) .*/\1/p' /tmp/iso.out)
	check isolation-kill9-claim "the second isolated claim was refused: $(cat /tmp/iso.out)" test -n "$id"
	[ -n "$id" ] || { iso_cleanup; return; }
	cat /run/rtplace/rtplaced.sock.isolation
	main=$(prop MainPID)
	kill -9 "$main"
	wait_for 90 bash -c "active && [ \"\$(systemctl show -P MainPID rtplaced.service)\" != $main ]"
	wait_for 60 grep -qx isolated "$iso_cg/rtplace.slice/rtplace-claim-$id.scope/cpuset.cpus.partition"
	journalctl -b -u rtplaced.service | tail -12
	iso_held "$id" "$pid" "$busy" kill9
	iso_released "$id" "$pid" "$from" "$busy" kill9
	iso_cleanup
	echo "== isolation under systemd took $(($(date +%s) - t0)) s"
}
isolation_systemd_checks

# --- purge leaves nothing (Debian keeps the rtplace group)
apt-get purge -y rtplace librtplace0
left=$(ls -d /etc/rtplace /run/rtplace /var/lib/rtplace /usr/share/doc/rtplace 2>/dev/null
	find /etc/systemd /var/lib/systemd /usr/lib/systemd /lib/systemd \
		\( -name 'rtplaced*' -o -path '*/rtkit-daemon.service.d/rtplace.conf' \) 2>/dev/null)
echo "left after purge: $left"
check purge "left after purge: $(echo $left)" test -z "$left"

echo "== checks took $(($(date +%s) - start)) s"
