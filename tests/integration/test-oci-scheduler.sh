#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplace-oci-hook honours the runtime spec's own fields (runtime spec
# 1.2): process.scheduler (policy, priority, flags) and
# process.execCPUAffinity.final are the container's request, under the
# same rights as the annotations, and the hook says which it used. Under
# real runc (root) against a live rtplaced:
#   - process.scheduler SCHED_RR 20 with SCHED_FLAG_RESET_ON_FORK and
#     execCPUAffinity.final "1", no annotation: the container's program
#     runs on CPU 1 at SCHED_RR|SCHED_RESET_ON_FORK 20, its child at
#     SCHED_OTHER, and CPU 1 is claimed;
#   - the same priority without CAP_SYS_NICE: refused, naming the right
#     and process.scheduler;
#   - an annotation that disagrees with process.scheduler: refused,
#     naming both; annotations that agree: placed;
#   - SCHED_DEADLINE or SCHED_BATCH alone: the hook does nothing (no
#     claim, no pinning, which a SCHED_DEADLINE task may not have);
#   - a malformed field: refused, naming it.
# By hand (a sleeping process as the init process), the hook's line says
# where the policy and the CPUs came from. What Debian 12's runc (1.1)
# does itself with these fields is printed (it knows neither).
# Every container is deleted and the daemon killed on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

HOOK=${OCI_HOOK:-$(cd "$top_builddir/client" && pwd)/rtplace-oci-hook}
[ -x "$HOOK" ] || skip "rtplace-oci-hook is not built"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"
require_root
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"

. "${top_srcdir:-.}/tests/integration/test-oci-common.sh"

rt_lock
printf '[placement]\nhousekeeping-cpus =\n' >"$TMP/rtplaced.conf"
start_live_daemon --config "$TMP/rtplaced.conf"
NODE=$TMP/node-none.conf
: >"$NODE"

RT_GROUP=
[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] && RT_GROUP=1

WITH_NICE='.process.capabilities |= map_values(. + ["CAP_SYS_NICE"])'
NO_NICE='.process.capabilities |= map_values(map(select(. != "CAP_SYS_NICE")))'

# The program prints its affinity, its policy, and a child's policy.
PROG='grep Cpus_allowed_list /proc/self/status; chrt -p $$; sh -c "echo child; chrt -p \$\$"; exec sleep 60'

# make_bundle NAME ANNOTATIONS FILTER: a bundle in $TMP/NAME running PROG;
# FILTER edits its config (rights, process.scheduler...).
make_bundle() {
	oci_hook_bundle "$1" "$2" "$3" "$NODE" "$PROG"
}
create() {
	oci_create "$1"
}
start() {
	timeout 30 runc --root "$RUNC_ROOT" start "rtplace-test-$$-$1" || fail "runc start $1: $(cat "$TMP/$1.out")"
	wait_lines "$TMP/$1.out" 6
}
delete() {
	timeout 30 runc --root "$RUNC_ROOT" delete -f "rtplace-test-$$-$1" || fail "runc delete $1"
}
# What the program printed: its CPUs, its policy and priority, its child's.
cpus_of() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$TMP/$1.out"; }
policy_of() {
	sed -n "s/^pid 1's current scheduling policy: //p; s/^pid 1's current scheduling priority: //p" \
		"$TMP/$1.out" | tr '\n' ' '
}
child_policy_of() { sed -n '/^child$/,$ { s/.*current scheduling policy: //p }' "$TMP/$1.out"; }
# The CPUs rtplaced has claimed.
claimed() { "$CTL" --socket "$SOCK" --json cpus | jq -r '[.cpus[] | select(.claim != null and .claim != 0) | .cpu] | join(",")'; }

RR20='.process.scheduler = {policy: "SCHED_RR", priority: 20, flags: ["SCHED_FLAG_RESET_ON_FORK"]}'
FINAL1='.process.execCPUAffinity = {initial: "0", final: "1"}'

# --- Debian 12's runc (1.1, runtime spec 1.0.2) ignores both fields: a
# container that asks SCHED_BATCH runs at SCHED_OTHER, with no hook.
make_bundle plain '{}' '.hooks = {} | .process.scheduler = {policy: "SCHED_BATCH", nice: 5}'
create plain || fail "runc create plain: $(cat "$TMP/plain.out")"
start plain
echo "note: runc $(runc --version | sed -n 's/^runc version //p') runs a process.scheduler SCHED_BATCH container at" \
	"$(policy_of plain)(runc 1.2 and later set it after the createRuntime hooks, crun before them)" >&2
delete plain

# --- The spec's fields alone: RR 20, reset on fork, on CPU 1, claimed.
make_bundle spec '{}' "$WITH_NICE | $RR20 | $FINAL1"
create spec || fail "runc create spec: $(cat "$TMP/spec.out")"
wait_claims 1
[ "$(claimed)" = 1 ] || fail "claimed CPUs '$(claimed)', want 1 (process.execCPUAffinity.final)"
start spec
[ "$(cpus_of spec)" = 1 ] || fail "container on CPUs '$(cpus_of spec)', want 1: $(cat "$TMP/spec.out")"
[ "$(policy_of spec)" = "SCHED_RR|SCHED_RESET_ON_FORK 20 " ] ||
	fail "container at '$(policy_of spec)', want SCHED_RR|SCHED_RESET_ON_FORK 20: $(cat "$TMP/spec.out")"
[ "$(child_policy_of spec)" = SCHED_OTHER ] ||
	fail "the program's child at '$(child_policy_of spec)', want SCHED_OTHER (reset on fork): $(cat "$TMP/spec.out")"
delete spec
wait_claims 0

# --- The same without CAP_SYS_NICE: the rights refuse it, naming the
# field that asked.
make_bundle specnocap '{}' "$NO_NICE | $RR20"
create specnocap && fail "runc created a container whose process.scheduler its rights do not allow"
grep -qF "refused: priority 20 needs CAP_SYS_NICE (effective and bounding sets) or RLIMIT_RTPRIO >= 20" \
	"$TMP/specnocap.out" && grep -qF "(asked: SCHED_RR 20 by process.scheduler)" "$TMP/specnocap.out" ||
	fail "process.scheduler without the right: $(cat "$TMP/specnocap.out")"
wait_claims 0

# --- Annotations that disagree are refused, naming both; that agree,
# placed (the annotation's io.rtplace.cpus with the spec's priority).
make_bundle disagree '{"io.rtplace.priority":"80"}' "$WITH_NICE | $RR20"
create disagree && fail "runc created a container whose annotations and process.scheduler disagree"
grep -qF "annotations ask for SCHED_FIFO 80 and process.scheduler for SCHED_RR 20" "$TMP/disagree.out" ||
	fail "disagreeing annotation: $(cat "$TMP/disagree.out")"
make_bundle listdiff '{"io.rtplace.priority":"20","io.rtplace.cpu-list":"0"}' "$WITH_NICE | $RR20 | $FINAL1"
create listdiff && fail "runc created a container whose cpu-list and execCPUAffinity.final disagree"
grep -qF 'process.execCPUAffinity.final' "$TMP/listdiff.out" && grep -qF 'disagree' "$TMP/listdiff.out" ||
	fail "disagreeing cpu-list: $(cat "$TMP/listdiff.out")"
make_bundle agree '{"io.rtplace.cpus":"2"}' "$WITH_NICE | $RR20"
create agree || fail "runc create agree: $(cat "$TMP/agree.out")"
wait_claims 1
[ "$(claimed)" = 0,1 ] || fail "claimed CPUs '$(claimed)', want 0,1 (io.rtplace.cpus=2)"
start agree
[ "$(cpus_of agree)" = 0-1 ] || fail "container on CPUs '$(cpus_of agree)', want 0-1: $(cat "$TMP/agree.out")"
[ "$(policy_of agree)" = "SCHED_RR|SCHED_RESET_ON_FORK 20 " ] || fail "container at '$(policy_of agree)'"
delete agree
wait_claims 0

# --- Policies rtplace does not place: nothing done, nothing claimed. A
# SCHED_DEADLINE task must keep every CPU (sched_setattr(2)): the hook
# leaves its affinity alone.
make_bundle dl '{}' "$WITH_NICE | $FINAL1"' | .process.scheduler = {policy: "SCHED_DEADLINE", runtime: 100000, deadline: 1000000, period: 1000000}'
create dl || fail "runc create dl: $(cat "$TMP/dl.out")"
start dl
[ "$(status_field claims_active)" = 0 ] || fail "a claim for a SCHED_DEADLINE container"
[ "$(cpus_of dl)" = "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)" ] ||
	fail "the SCHED_DEADLINE container was pinned: $(cat "$TMP/dl.out")"
delete dl
make_bundle dlann '{"io.rtplace.priority":"20"}' "$WITH_NICE"' | .process.scheduler = {policy: "SCHED_DEADLINE", runtime: 100000, deadline: 1000000}'
create dlann && fail "runc created a SCHED_DEADLINE container with an RT priority annotation"
grep -qF "process.scheduler.policy is SCHED_DEADLINE" "$TMP/dlann.out" || fail "DEADLINE + annotation: $(cat "$TMP/dlann.out")"

# --- A malformed field is refused, named.
make_bundle bad '{}' "$WITH_NICE"' | .process.scheduler = {policy: "SCHED_FIFO", priority: 120}'
create bad && fail "runc created a container with process.scheduler.priority 120"
grep -qF "process.scheduler.priority 120: SCHED_FIFO needs a priority 1..99" "$TMP/bad.out" ||
	fail "priority 120: $(cat "$TMP/bad.out")"
make_bundle badaff '{}' "$WITH_NICE | $RR20"' | .process.execCPUAffinity = {final: "1-"}'
create badaff && fail "runc created a container with a bad execCPUAffinity.final"
grep -qF 'process.execCPUAffinity.final \"1-\": not a CPU list' "$TMP/badaff.out" ||
	grep -qF 'process.execCPUAffinity.final "1-": not a CPU list' "$TMP/badaff.out" ||
	fail "final 1-: $(cat "$TMP/badaff.out")"
wait_claims 0

# --- By hand: the hook's line says where each part came from.
HAND=$TMP/hand
mkdir -p "$HAND"
sleep 60 &
INIT=$!
PIDS="$PIDS $INIT"
printf '{"ociVersion":"1.2.0","process":{"capabilities":{"bounding":["CAP_SYS_NICE"],"effective":["CAP_SYS_NICE"]},"scheduler":{"policy":"SCHED_FIFO","priority":30},"execCPUAffinity":{"final":"1"}}}\n' \
	>"$HAND/config.json"
printf '{"ociVersion":"1.2.0","id":"hand","status":"creating","pid":%d,"bundle":"%s"}\n' "$INIT" "$HAND" >"$TMP/state.json"
expect_status 0 timeout 30 "$HOOK" --socket "$SOCK" --config "$NODE" <"$TMP/state.json"
grep -qE "^rtplace-oci-hook: container hand: placed: CPUs 1 \(process.execCPUAffinity.final\), SCHED_FIFO 30 \(process.scheduler\), claim [0-9]+$" \
	"$TMP/err" || fail "the hook's line: $(cat "$TMP/err")"
[ "$(chrt -p "$INIT" | sed -n 's/.*scheduling policy: //p')" = SCHED_FIFO ] || fail "by hand: $(chrt -p "$INIT")"
kill "$INIT"
wait_claims 0

echo "PASS"
