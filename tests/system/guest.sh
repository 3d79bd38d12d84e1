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
share=$(cd "$(dirname "$0")" && pwd)
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
