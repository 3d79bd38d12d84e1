#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplace-oci-hook under a real podman (rootful, cgroupfs, runc), called
# through the hooks.d file the build generates for `make install`, with its
# stage and `when` condition as they are (only the hook's path and its
# --socket and --config are the test's): a container with
# io.rtplace.priority=50 and CAP_SYS_NICE runs its program at SCHED_FIFO 50
# on its claimed CPU inside its --cpuset-cpus; two such containers never
# share a claimed CPU; the claim ends with `podman rm -f` and when the
# container's process is killed with SIGKILL; without the annotation the
# hook does nothing; without CAP_SYS_NICE (or an rtprio ulimit) podman
# refuses the container with the hook's message.
#
# podman keeps everything in the test's folder (vfs storage, --root,
# --runroot, --tmpdir); the root file system is a static busybox. The
# programs sleep: nothing spins at RT. Every container is removed, and the
# daemon killed, on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

HOOK=${OCI_HOOK:-$(cd "$top_builddir/client" && pwd)/rtplace-oci-hook}
HOOKS_D=$top_builddir/client/rtplace-oci-hook.json
[ -x "$HOOK" ] || skip "rtplace-oci-hook is not built"
[ -r "$HOOKS_D" ] || fail "$HOOKS_D was not generated"
require_root
command -v podman >/dev/null || skip "podman is not installed (apt-get install podman)"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"
RUNC=$(command -v runc) || skip "runc is not installed (apt-get install runc)"
BUSYBOX=$(command -v busybox) || skip "busybox is not installed (apt-get install busybox-static)"
ldd "$BUSYBOX" >/dev/null 2>&1 && skip "$BUSYBOX is not static (apt-get install busybox-static)"
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"

PM=$TMP/podman
mkdir -p "$PM/root" "$PM/runroot" "$PM/tmp" "$PM/hooks.d" "$TMP/rootfs/bin" "$TMP/rootfs/proc" \
	"$TMP/rootfs/dev" "$TMP/rootfs/sys" "$TMP/rootfs/etc" "$TMP/rootfs/tmp" || fail "mkdir $PM"
cp "$BUSYBOX" "$TMP/rootfs/bin/busybox" || fail "cp $BUSYBOX"
for a in sh sleep grep cat; do
	ln -s busybox "$TMP/rootfs/bin/$a"
done

# The generated hooks.d entry, pointed at the built hook, this test's
# daemon and policy; stage and `when` untouched.
jq --arg hook "$HOOK" --arg sock "$SOCK" --arg conf "$CONF" \
	'.hook.path = $hook | .hook.args += ["--socket", $sock, "--config", $conf]' "$HOOKS_D" \
	>"$PM/hooks.d/rtplace-oci-hook.json" || fail "jq on $HOOKS_D"
jq -e '.stages == ["createRuntime"] and (.when | keys == ["annotations"])' "$PM/hooks.d/rtplace-oci-hook.json" \
	>/dev/null || fail "hooks.d entry: $(cat "$PM/hooks.d/rtplace-oci-hook.json")"

# podman asks for 1,048,576 open files unless told, above a hard limit that
# may be lower (runc then fails to set it).
pm() {
	timeout 60 podman --runtime "$RUNC" --cgroup-manager cgroupfs --events-backend file --storage-driver vfs \
		--root "$PM/root" --runroot "$PM/runroot" --tmpdir "$PM/tmp" --hooks-dir "$PM/hooks.d" "$@"
}

NAMES=
pm_cleanup() {
	for n in $NAMES; do
		pm rm -f -t 0 "$n" >/dev/null 2>&1
	done
	# vfs leaves no mount but the containers' shm, which rm unmounts;
	# anything left would make rm -rf of $TMP fail.
	grep -o " $TMP/[^ ]*" /proc/mounts | sort -r | while read -r m; do
		umount -l "$m"
	done
	# podman leaves an empty conmon cgroup in each hierarchy, which
	# conmon, exiting after the container, may still hold a moment.
	for d in /sys/fs/cgroup/*/"$CG" /sys/fs/cgroup/unified/"$CG"; do
		i=0
		while [ -d "$d" ] && [ $i -lt 50 ]; do
			find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
			i=$((i + 1))
			[ -d "$d" ] && sleep 0.1
		done
		[ -d "$d" ] && echo "cleanup: cannot remove cgroup $d" >&2
	done
	cleanup
}
trap pm_cleanup EXIT

# The containers' cgroups go under one of the test's own (cleanup removes
# it). Under RT group scheduling (cgroup v1, CONFIG_RT_GROUP_SCHED) a
# container's cpu cgroup needs an RT budget, and so does that parent, which
# podman would create with none.
CG=rtplace-test-$$
RT_ARGS=
if [ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ]; then
	mkdir /sys/fs/cgroup/cpu/"$CG" && echo 100000 >/sys/fs/cgroup/cpu/"$CG"/cpu.rt_runtime_us ||
		fail "no RT budget for cgroup /$CG (other cgroups hold the root's?)"
	RT_ARGS="--cpu-rt-period 1000000 --cpu-rt-runtime 10000"
fi

# run NAME ARGS...: a detached container named NAME whose program prints its
# affinity and sleeps; podman's output in $TMP/NAME.out. Returns podman's
# status.
run() {
	name=$1
	shift
	NAMES="$NAMES rtplace-test-$$-$name"
	# shellcheck disable=SC2086 # RT_ARGS is a word list
	pm run -d --name "rtplace-test-$$-$name" --cgroup-parent "/$CG" --network none --log-driver k8s-file \
		--ulimit nofile=20000:20000 --ulimit nproc=4096:4096 $RT_ARGS "$@" --rootfs "$TMP/rootfs" \
		/bin/sh -c 'grep Cpus_allowed_list /proc/self/status; exec sleep 60' >"$TMP/$name.out" 2>&1
}

# pid_of NAME: the host pid of the container's program.
pid_of() {
	pm inspect --format '{{.State.Pid}}' "rtplace-test-$$-$1" || fail "podman inspect $1"
}

# policy_of PID: "SCHED_FIFO 50 ".
policy_of() {
	chrt -p "$1" | sed -n 's/.*scheduling policy: //p; s/.*scheduling priority: //p' | tr '\n' ' '
}

# cpus_of PID: its affinity as a CPU list.
cpus_of() {
	taskset -pc "$1" | sed 's/.*: //'
}

# claimed: the CPUs the daemon has claimed, one a line.
claimed() {
	"$CTL" --socket "$SOCK" --json cpus | jq -r '.cpus[] | select(.claim != null and .claim != 0) | .cpu'
}

rt_lock
printf '[placement]\nhousekeeping-cpus =\n' >"$TMP/rtplaced.conf"
start_live_daemon --config "$TMP/rtplaced.conf"

# Without the annotation: no claim, no RT policy.
run plain --cap-add SYS_NICE --cpuset-cpus 0-1 || fail "podman run plain: $(cat "$TMP/plain.out")"
pid=$(pid_of plain)
[ "$(policy_of "$pid")" = "SCHED_OTHER 0 " ] || fail "plain container at $(policy_of "$pid")"
wait_claims 0
pm rm -f -t 0 "rtplace-test-$$-plain" >/dev/null || fail "podman rm plain"

# Without CAP_SYS_NICE: refused with the hook's message, no claim.
run nocap --annotation io.rtplace.priority=50 --cpuset-cpus 0-1 &&
	fail "podman ran a container without CAP_SYS_NICE at priority 50"
grep -qF "refused: priority 50 needs CAP_SYS_NICE (effective and bounding sets) or RLIMIT_RTPRIO >= 50" \
	"$TMP/nocap.out" && grep -qF -- "--cap-add SYS_NICE" "$TMP/nocap.out" &&
	grep -qF -- "--ulimit rtprio=50" "$TMP/nocap.out" || fail "podman's message: $(cat "$TMP/nocap.out")"
wait_claims 0

# Two containers at FIFO 50 in the same cpuset: two claims, one CPU each,
# never the same, each running on its own.
run a --annotation io.rtplace.priority=50 --cap-add SYS_NICE --cpuset-cpus 0-1 ||
	fail "podman run a: $(cat "$TMP/a.out")"
run b --annotation io.rtplace.priority=50 --cap-add SYS_NICE --cpuset-cpus 0-1 ||
	fail "podman run b: $(cat "$TMP/b.out")"
wait_claims 2
pa=$(pid_of a)
pb=$(pid_of b)
[ "$(policy_of "$pa")" = "SCHED_FIFO 50 " ] || fail "container a at $(policy_of "$pa")"
[ "$(policy_of "$pb")" = "SCHED_FIFO 50 " ] || fail "container b at $(policy_of "$pb")"
ca=$(cpus_of "$pa")
cb=$(cpus_of "$pb")
case "$ca,$cb" in
0,1 | 1,0) ;;
*) fail "containers on CPUs '$ca' and '$cb', want 0 and 1" ;;
esac
[ "$(claimed | sort | tr '\n' ' ')" = "0 1 " ] || fail "claimed CPUs: $(claimed | tr '\n' ' ')"
# The program itself (not only the host's view of its pid) runs there.
wait_lines "$PM/root/vfs-containers/$(pm inspect --format '{{.Id}}' "rtplace-test-$$-a")/userdata/ctr.log" 1
pm logs "rtplace-test-$$-a" | grep -qx "Cpus_allowed_list:	$ca" || fail "container a's own view: $(pm logs "rtplace-test-$$-a")"

# The claim ends with the container: removed, or its program killed.
pm rm -f -t 0 "rtplace-test-$$-a" >/dev/null || fail "podman rm -f a"
wait_claims 1
[ "$(claimed)" = "$cb" ] || fail "after rm -f a, claimed: $(claimed | tr '\n' ' '), want $cb"
kill -KILL "$pb"
wait_claims 0
pm rm -f -t 0 "rtplace-test-$$-b" >/dev/null || fail "podman rm -f b"

# Inside a cpuset of CPU 1 only.
run one --annotation io.rtplace.priority=50 --cap-add SYS_NICE --cpuset-cpus 1 ||
	fail "podman run one: $(cat "$TMP/one.out")"
p1=$(pid_of one)
[ "$(cpus_of "$p1")" = 1 ] || fail "container with cpuset 1 on CPUs $(cpus_of "$p1")"
[ "$(policy_of "$p1")" = "SCHED_FIFO 50 " ] || fail "container one at $(policy_of "$p1")"
pm rm -f -t 0 "rtplace-test-$$-one" >/dev/null || fail "podman rm -f one"
wait_claims 0

# An rtprio ulimit instead of the capability, where this shell's hard
# limit lets runc set one.
hard=$(prlimit --pid $$ --rtprio --output HARD --noheadings | tr -d " ")
if [ "$hard" = unlimited ] || [ "$hard" -ge 50 ]; then
	run ulimit --annotation io.rtplace.priority=50 --ulimit rtprio=50:50 --cpuset-cpus 0-1 ||
		fail "podman run --ulimit rtprio=50: $(cat "$TMP/ulimit.out")"
	pu=$(pid_of ulimit)
	[ "$(policy_of "$pu")" = "SCHED_FIFO 50 " ] || fail "container with rtprio 50 at $(policy_of "$pu")"
	pm rm -f -t 0 "rtplace-test-$$-ulimit" >/dev/null || fail "podman rm -f ulimit"
	wait_claims 0
else
	echo "note: hard RLIMIT_RTPRIO $hard: podman --ulimit rtprio not run" >&2
fi

echo "PASS"
