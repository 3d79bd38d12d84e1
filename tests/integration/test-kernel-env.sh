#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel's RT environment on the live machine (root): what `rtplacectl
# status` and the metrics say equals what the kernel's files say.
#  - RT throttling is /proc/sys's; RT group scheduling is the cgroup v1
#    cpu controller's where it has cpu.rt_runtime_us (the root's budget,
#    and a folder made by the test is counted and named as one without a
#    budget after a reload, where the kernel refuses a thread SCHED_FIFO),
#    "none" elsewhere;
#  - the deadline servers are "unreadable" where debugfs is not mounted,
#    and, for a daemon in a mount namespace of its own with debugfs
#    mounted, what `cat` reads there: the values, or the same refusal
#    (kernel lockdown);
#  - sched_ext is "absent" exactly when /sys/kernel/sched_ext is;
#  - the log has the Kernel: lines once at start, one more for the part
#    that changed at a reload, none for a reload that changed nothing;
#  - promtool accepts the page.
# The folder and the sleeper are removed on every exit path; debugfs is
# only ever mounted inside the daemon's own mount namespace.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v promtool >/dev/null || fail "promtool is not installed (Debian package prometheus)"

# A field of the status's JSON, by a path of keys ("kernel fair_server state").
field() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[k]
print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)' "$TMP/status.json" "$@"
}
status_json() {
	expect_status 0 "$CTL" --socket "$SOCK" --json status
	cp "$TMP/out" "$TMP/status.json"
}
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

PORT=$(free_port)
printf '[metrics]\nlisten = 127.0.0.1:%s\n' "$PORT" >"$TMP/rtplaced.conf"
V1=/sys/fs/cgroup/cpu
CG=
if [ -f "$V1/cpu.rt_runtime_us" ]; then
	# "0..." sorts before every other folder of the same depth: the one named.
	CG=$V1/0rtplace-kenv.$$
	trap 'cleanup; [ -z "$CG" ] || rmdir "$CG" 2>/dev/null' EXIT
fi

start_live_daemon --config "$TMP/rtplaced.conf"
status_json
[ "$(field rt_runtime_us)" = "$(cat /proc/sys/kernel/sched_rt_runtime_us)" ] ||
	fail "rt_runtime_us $(field rt_runtime_us), /proc/sys says $(cat /proc/sys/kernel/sched_rt_runtime_us)"
[ "$(field rt_period_us)" = "$(cat /proc/sys/kernel/sched_rt_period_us)" ] ||
	fail "rt_period_us $(field rt_period_us), /proc/sys says $(cat /proc/sys/kernel/sched_rt_period_us)"
if [ -n "$CG" ]; then
	[ "$(field kernel rt_group_sched)" = v1 ] || fail "rt_group_sched $(field kernel rt_group_sched) with $V1/cpu.rt_runtime_us"
	[ "$(field kernel rt_needs_budget)" = true ] || fail "rt_needs_budget $(field kernel rt_needs_budget) on cgroup v1"
	[ "$(field kernel rt_root_runtime_us)" = "$(cat "$V1/cpu.rt_runtime_us")" ] ||
		fail "rt_root_runtime_us $(field kernel rt_root_runtime_us), $V1 says $(cat "$V1/cpu.rt_runtime_us")"
	[ "$(field kernel rt_root_period_us)" = "$(cat "$V1/cpu.rt_period_us")" ] ||
		fail "rt_root_period_us $(field kernel rt_root_period_us), $V1 says $(cat "$V1/cpu.rt_period_us")"
	before=$(field kernel rt_cgroups_budgetless)
else
	[ "$(field kernel rt_group_sched)" = none ] || fail "rt_group_sched $(field kernel rt_group_sched) without $V1/cpu.rt_runtime_us"
	[ "$(field kernel rt_needs_budget)" = false ] || fail "rt_needs_budget without RT group scheduling"
fi
if [ -d /sys/kernel/sched_ext ]; then
	[ "$(field kernel sched_ext state)" != absent ] || fail "sched_ext absent, but /sys/kernel/sched_ext is there"
else
	[ "$(field kernel sched_ext state)" = absent ] || fail "sched_ext $(field kernel sched_ext state) without /sys/kernel/sched_ext"
fi
if ! grep -q ' /sys/kernel/debug debugfs ' /proc/mounts; then
	[ "$(field kernel fair_server state)" = unreadable ] || fail "fair_server $(field kernel fair_server state) without debugfs"
	field kernel fair_server why | grep -q 'debugfs is not mounted' ||
		fail "fair_server's why does not say debugfs is not mounted: $(field kernel fair_server why)"
fi
n=$(grep -c 'info: Kernel: ' "$TMP/rtplaced.log")
[ "$n" = 4 ] || fail "$n Kernel: lines at start, want 4: $(grep Kernel: "$TMP/rtplaced.log")"

# The metrics say the same, and promtool takes them.
python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
	"http://127.0.0.1:$PORT/metrics" >"$TMP/page" || fail "GET /metrics"
promtool check metrics <"$TMP/page" >"$TMP/promtool.out" 2>&1 || fail "promtool check metrics: $(cat "$TMP/promtool.out")"
if [ -n "$CG" ]; then
	grep -qx 'rtplace_kernel_rt_group_sched{hierarchy="v1"} 1' "$TMP/page" || fail "no rt_group_sched v1 1: $(grep rt_group "$TMP/page")"
	grep -qx "rtplace_kernel_rt_group_cgroups{budget=\"none\"} $before" "$TMP/page" ||
		fail "budgetless cgroups in the metrics differ from status's $before: $(grep rt_group_cgroups "$TMP/page")"
fi
grep -qx "rtplace_kernel_deadline_server_state{server=\"fair\",state=\"$(field kernel fair_server state)\"} 1" "$TMP/page" ||
	fail "the fair server's state differs in the metrics: $(grep server_state "$TMP/page")"

# A folder without a budget, seen at the next reload; the kernel refuses
# SCHED_FIFO there, as status says it will.
if [ -n "$CG" ]; then
	mkdir "$CG" || fail "cannot create $CG"
	sh -c "echo \$\$ >'$CG/cgroup.procs' && exec sleep 60" &
	SLEEPER=$!
	PIDS="$PIDS $SLEEPER"
	i=0
	until grep -qx "$SLEEPER" "$CG/cgroup.procs"; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "the sleeper never joined $CG"
		sleep 0.05
	done
	! chrt -f -p 10 "$SLEEPER" 2>/dev/null || fail "the kernel made a thread in budgetless $CG SCHED_FIFO"
	kill -HUP "$DAEMON"
	wait_grep 'notice: Kernel: RT group scheduling' "$TMP/rtplaced.log" "no Kernel: line for the new folder" "$TMP/rtplaced.log"
	status_json
	[ "$(field kernel rt_cgroup_first_budgetless)" = "/${CG##*/}" ] ||
		fail "first budgetless $(field kernel rt_cgroup_first_budgetless), want /${CG##*/}"
	# Counted with the folders other tests make and remove meanwhile
	# (test-client-rtbudget's, under make -j): only ours is sure to be there.
	[ "$(field kernel rt_cgroups_budgetless)" -ge 1 ] ||
		fail "budgetless $(field kernel rt_cgroups_budgetless) with $CG there (before it: $before)"
	expect_status 0 "$CTL" --socket "$SOCK" status
	grep -q "^rt group sched   on (cgroup v1 cpu.rt_runtime_us): an RT task in a cpu cgroup other than the root needs a budget there; .*(first /${CG##*/})\$" "$TMP/out" ||
		fail "status's text does not name the folder: $(grep 'rt group' "$TMP/out")"
fi
# A reload that changes nothing logs no Kernel: line.
n=$(grep -c 'Kernel: ' "$TMP/rtplaced.log")
kill -HUP "$DAEMON"
i=0
until [ "$(grep -c 'Configuration reloaded' "$TMP/rtplaced.log")" -ge $([ -n "$CG" ] && echo 2 || echo 1) ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "the second reload was not logged"
	sleep 0.05
done
[ "$(grep -c 'Kernel: ' "$TMP/rtplaced.log")" = "$n" ] || fail "a reload without change logged: $(grep Kernel: "$TMP/rtplaced.log" | tail -3)"
stop_daemon

# The daemon in a mount namespace of its own, debugfs mounted there (the
# VM bed's guests have it mounted already): it sees what cat sees there.
start_notified unshare -m --propagation private sh -c '
	{ grep -q " /sys/kernel/debug debugfs " /proc/mounts || mount -t debugfs none /sys/kernel/debug; } || exit 1
	cat /sys/kernel/debug/sched/fair_server/cpu0/runtime >"$0.runtime" 2>"$0.err"
	exec "$@"' "$TMP/cat" \
	"$RTPLACED" --socket "$SOCK" --config "$TMP/rtplaced.conf"
status_json
if [ -s "$TMP/cat.runtime" ]; then
	[ "$(field kernel fair_server state)" = read ] || fail "fair_server $(field kernel fair_server state): $(field kernel fair_server why)"
	[ "$(field kernel fair_server cpus)" = "$(getconf _NPROCESSORS_CONF)" ] ||
		fail "fair_server read on $(field kernel fair_server cpus) CPUs, the machine has $(getconf _NPROCESSORS_CONF)"
	runtime=$(cat "$TMP/cat.runtime")
	[ "$(field kernel fair_server runtime_min_ns)" -le "$runtime" ] && [ "$(field kernel fair_server runtime_max_ns)" -ge "$runtime" ] ||
		fail "CPU 0's fair server runtime $runtime is outside $(field kernel fair_server runtime_min_ns)-$(field kernel fair_server runtime_max_ns)"
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
		"http://127.0.0.1:$PORT/metrics" >"$TMP/page" || fail "GET /metrics"
	promtool check metrics <"$TMP/page" >"$TMP/promtool.out" 2>&1 || fail "promtool check metrics (debugfs): $(cat "$TMP/promtool.out")"
	[ "$(grep -c '^rtplace_kernel_deadline_server_runtime_seconds{server="fair",cpu="[0-9]*"} ' "$TMP/page")" = "$(getconf _NPROCESSORS_CONF)" ] ||
		fail "not one fair server runtime per CPU: $(grep server_runtime "$TMP/page")"
	echo "fair_server read: $(field kernel fair_server runtime_min_ns) ns of $(field kernel fair_server period_min_ns) ns"
elif grep -q 'Operation not permitted' "$TMP/cat.err"; then
	[ "$(field kernel fair_server state)" = unreadable ] || fail "fair_server $(field kernel fair_server state) where cat is refused"
	field kernel fair_server why | grep -q 'fair_server/cpu0/runtime: Operation not permitted (kernel lockdown' ||
		fail "fair_server's why does not say the kernel refused it: $(field kernel fair_server why)"
	echo "fair_server refused by the kernel (lockdown): $(field kernel fair_server why)"
else
	[ "$(field kernel fair_server state)" = absent ] || fail "fair_server $(field kernel fair_server state) where cat found no file: $(cat "$TMP/cat.err")"
	echo "fair_server absent"
fi
exit 0
