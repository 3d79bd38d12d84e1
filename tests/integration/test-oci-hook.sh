#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplace-oci-hook, run by hand with a state on stdin (any user) and by
# real runc at the createRuntime stage (root): bad annotations are refused
# naming the annotation and what it accepts; no io.rtplace.priority, no
# work; with no daemon the container is refused, or with
# io.rtplace.optional=true started unplaced with a warning; two containers
# at FIFO 50 created together run on different CPUs at SCHED_FIFO 50 (read
# inside each container); their claims end with the containers; a
# container whose cpuset is CPU 1 runs on CPU 1.
#
# The containers' root file systems bind-mount the host's /usr and /etc
# read-only (the rest of / is links into /usr on merged-/usr systems) in a
# private folder. Their program reads its own status and sleeps: nothing
# spins at RT. Every container is deleted (runc delete -f) and the daemon
# killed on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

HOOK=${OCI_HOOK:-$(cd "$top_builddir/client" && pwd)/rtplace-oci-hook}
[ -x "$HOOK" ] || skip "rtplace-oci-hook is not built"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"

. "${top_srcdir:-.}/tests/integration/test-oci-common.sh"

# The hooks.d entry (podman, CRI-O): createRuntime, the installed hook, and
# only for containers with io.rtplace.priority.
HOOKS_D=$top_builddir/client/rtplace-oci-hook.json
[ -r "$HOOKS_D" ] || fail "$HOOKS_D was not generated"
jq -e '.version == "1.0.0" and .stages == ["createRuntime"]
	and (.hook.path | endswith("/rtplace/rtplace-oci-hook")) and .hook.args == ["rtplace-oci-hook"]
	and (.when.annotations | to_entries | length == 1
		and (.[0].key as $re | ("io.rtplace.priority" | test($re))
			and ("io.rtplace.priority2" | test($re) | not) and ("ioXrtplaceXpriority" | test($re) | not)))' \
	"$HOOKS_D" >/dev/null || fail "hooks.d entry: $(cat "$HOOKS_D")"

# --- The hook by hand: a bundle with only a config.json, a sleeping
# process as the "init process".
HAND=$TMP/hand
mkdir -p "$HAND"
sleep 60 &
INIT=$!
PIDS="$PIDS $INIT"

# hand_config CPUS: a config.json whose cpuset is CPUS ("" for none), and
# whose process has CAP_SYS_NICE (what the hook grants is
# test-oci-rights.sh's).
HAND_CAPS='"process":{"capabilities":{"bounding":["CAP_SYS_NICE"],"effective":["CAP_SYS_NICE"]}}'
hand_config() {
	if [ -n "$1" ]; then
		printf '{"ociVersion":"1.0.2",%s,"linux":{"resources":{"cpu":{"cpus":"%s"}}}}\n' "$HAND_CAPS" "$1" \
			>"$HAND/config.json"
	else
		printf '{"ociVersion":"1.0.2",%s}\n' "$HAND_CAPS" >"$HAND/config.json"
	fi
}

# hook_by_hand WANT ANNOTATIONS: runs the hook on the state of $INIT with
# these annotations (a JSON object), expecting exit status WANT.
hook_by_hand() {
	printf '{"ociVersion":"1.0.2","id":"hand","status":"creating","pid":%d,"bundle":"%s","annotations":%s}\n' \
		"$INIT" "$HAND" "$2" >"$TMP/state.json"
	"$HOOK" --socket "$SOCK" --config "$CONF" <"$TMP/state.json" >"$TMP/out" 2>"$TMP/err"
	got=$?
	[ "$got" = "$1" ] || fail "hook with $2 exited $got, want $1: $(cat "$TMP/err")"
}

# bad_annotation KEY VALUE WHAT: refused (65), naming KEY=VALUE and WHAT.
bad_annotation() {
	hook_by_hand 65 "{\"io.rtplace.priority\":\"50\",\"$1\":\"$2\"}"
	grep -qF "container hand: annotation $1=\"$2\": $3" "$TMP/err" || fail "message for $1=$2: $(cat "$TMP/err")"
}

hand_config ""
bad_annotation io.rtplace.priority 0 "not an RT priority 1..99"
bad_annotation io.rtplace.priority 100 "not an RT priority 1..99"
bad_annotation io.rtplace.priority high "not an RT priority 1..99"
bad_annotation io.rtplace.policy deadline "not fifo or rr"
bad_annotation io.rtplace.cpus 0 "not a count 1..256"
bad_annotation io.rtplace.cpu-list 1-x "not a CPU list (e.g. 2-5,8)"
bad_annotation io.rtplace.node -1 "not a NUMA node id"
bad_annotation io.rtplace.exclusive yes "not true or false"
bad_annotation io.rtplace.optional 1 "not true or false"
hook_by_hand 65 '{"io.rtplace.priority":"50","io.rtplace.prio":"50"}'
grep -qF "unknown annotation io.rtplace.prio (known: io.rtplace.priority, io.rtplace.policy" "$TMP/err" ||
	fail "unknown annotation: $(cat "$TMP/err")"
hook_by_hand 65 '{"io.rtplace.priority":"50","io.rtplace.cpus":"1","io.rtplace.cpu-list":"0"}'
grep -qF "io.rtplace.cpus and io.rtplace.cpu-list exclude each other" "$TMP/err" || fail "cpus+cpu-list: $(cat "$TMP/err")"
# A bad value is refused even when the daemon is optional.
hook_by_hand 65 '{"io.rtplace.priority":"50","io.rtplace.optional":"true","io.rtplace.policy":"other"}'
hand_config 0
hook_by_hand 78 '{"io.rtplace.priority":"50","io.rtplace.cpu-list":"0-1"}'
grep -qF "annotation io.rtplace.cpu-list=\"0-1\": not within the container's CPUs 0" "$TMP/err" ||
	fail "cpu-list outside the cpuset: $(cat "$TMP/err")"
printf '{%s,"linux":{"resources":{"cpu":{"cpus":"two"}}}}\n' "$HAND_CAPS" >"$HAND/config.json"
hook_by_hand 65 '{"io.rtplace.priority":"50"}'
grep -qF "linux.resources.cpu.cpus \"two\" is not a CPU list" "$TMP/err" || fail "bad cpuset: $(cat "$TMP/err")"

# No priority: nothing to do, whatever else is there (no daemon needed).
hook_by_hand 0 '{"io.rtplace.policy":"bad"}'
hook_by_hand 0 '{}'
[ ! -s "$TMP/err" ] || fail "no priority, but the hook said: $(cat "$TMP/err")"

# Bad states.
echo '{"id":"x","pid":1' | "$HOOK" --socket "$SOCK" >/dev/null 2>"$TMP/err"
[ $? = 65 ] && grep -q "not JSON: it ends early" "$TMP/err" || fail "truncated state: $(cat "$TMP/err")"
echo '{"id":"x","bundle":"/"}' | "$HOOK" --socket "$SOCK" >/dev/null 2>"$TMP/err"
[ $? = 65 ] && grep -q 'no "pid" number' "$TMP/err" || fail "state without pid: $(cat "$TMP/err")"
# One document: what follows it is refused, not ignored.
echo '{"id":"x","pid":1,"bundle":"/"} {"id":"y"}' | "$HOOK" --socket "$SOCK" >/dev/null 2>"$TMP/err"
[ $? = 65 ] && grep -q "not JSON: more follows the document at byte 32" "$TMP/err" ||
	fail "two documents: $(cat "$TMP/err")"

# config.json may be a link, but to a regular file: one to /dev/zero was
# read until the runtime killed the hook, a FIFO blocked it. Refused at
# once (66), naming the file and what it is.
hand_config ""
mv "$HAND/config.json" "$HAND/real.json"
ln -s real.json "$HAND/config.json"
hook_by_hand 0 '{}'
rm "$HAND/config.json"
ln -s /dev/zero "$HAND/config.json"
expect_status 66 timeout 10 "$HOOK" --socket "$SOCK" --config "$CONF" <"$TMP/state.json"
grep -qF "cannot read the bundle's config: $HAND/config.json is not a regular file (a character device)" \
	"$TMP/err" || fail "config.json -> /dev/zero: $(cat "$TMP/err")"
rm "$HAND/config.json"
mkfifo "$HAND/config.json"
expect_status 66 timeout 10 "$HOOK" --socket "$SOCK" --config "$CONF" <"$TMP/state.json"
grep -qF "$HAND/config.json is not a regular file (a FIFO)" "$TMP/err" || fail "FIFO config.json: $(cat "$TMP/err")"
rm "$HAND/config.json" "$HAND/real.json"

# No daemon: refused (69) naming the socket, or with optional a warning.
hand_config ""
hook_by_hand 69 '{"io.rtplace.priority":"50"}'
grep -qF "container hand: cannot reach rtplaced at $SOCK" "$TMP/err" || fail "no daemon: $(cat "$TMP/err")"
hook_by_hand 0 '{"io.rtplace.priority":"50","io.rtplace.optional":"true"}'
grep -qF "container hand: warning: cannot reach rtplaced at $SOCK" "$TMP/err" &&
	grep -qF "starting unplaced (io.rtplace.optional=true)" "$TMP/err" || fail "optional: $(cat "$TMP/err")"
# A stopped daemon: its socket listens, its backlog is full. connect() waited
# for room for ever (container start with it); now the library's timeout
# (5 s) ends the wait and optional starts the container unplaced.
FULL=$TMP/full.sock
python3 -c '
import signal, socket, sys
l = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
l.bind(sys.argv[1])
l.listen(0)
held = []
while True:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.setblocking(False)
    try:
        c.connect(sys.argv[1])
    except BlockingIOError:
        break
    held.append(c)
open(sys.argv[2], "w").close()
signal.pause()
' "$FULL" "$TMP/full.ready" &
FULL_PID=$!
PIDS="$PIDS $FULL_PID"
for i in $(seq 50); do [ -e "$TMP/full.ready" ] && break; sleep 0.1; done
[ -e "$TMP/full.ready" ] || fail "no listener with a full backlog"
printf '{"ociVersion":"1.0.2","id":"hand","status":"creating","pid":%d,"bundle":"%s","annotations":%s}\n' \
	"$INIT" "$HAND" '{"io.rtplace.priority":"50","io.rtplace.optional":"true"}' >"$TMP/state.json"
expect_status 0 timeout 30 "$HOOK" --socket "$FULL" --config "$CONF" <"$TMP/state.json"
grep -qF "container hand: warning: cannot reach rtplaced at $FULL: Connection timed out" "$TMP/err" &&
	grep -qF "starting unplaced (io.rtplace.optional=true)" "$TMP/err" || fail "full backlog: $(cat "$TMP/err")"
kill "$FULL_PID"

# A config.json that gives the container its own PID namespace names an
# init that is process 1 there: a state naming a process of the host's
# namespace (another user's, say) is refused, nothing placed.
printf '{"ociVersion":"1.0.2",%s,"linux":{"namespaces":[{"type":"pid"},{"type":"mount"}]}}\n' "$HAND_CAPS" \
	>"$HAND/config.json"
hook_by_hand 77 '{"io.rtplace.priority":"50"}'
grep -qF "container hand: refused: process $INIT is not the init process of the container's own PID namespace" \
	"$TMP/err" || fail "a host process named as a new PID namespace's init: $(cat "$TMP/err")"
[ "$(chrt -p "$INIT" | sed -n 's/.*policy: //p' | head -1)" = SCHED_OTHER ] ||
	fail "the refused hook changed process $INIT: $(chrt -p "$INIT")"
hand_config ""

# --- Real containers under runc.
require_root
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"
rt_lock

# No housekeeping CPUs: both CPUs of a 2-CPU machine may be given out.
printf '[placement]\nhousekeeping-cpus =\n' >"$TMP/rtplaced.conf"

# RT group scheduling (cgroup v1 with CONFIG_RT_GROUP_SCHED) refuses RT
# tasks in a cpu cgroup without RT runtime: the containers get a little.
RT_GROUP=
[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] && RT_GROUP=1

# make_bundle NAME ANNOTATIONS CPUSET [RT-RUNTIME-US]: a bundle in $TMP/NAME
# whose program prints its affinity and policy, then sleeps, with
# CAP_SYS_NICE (the right the hook requires: test-oci-rights.sh).
make_bundle() {
	b=$TMP/$1
	binds=$(oci_bundle "$b") || exit 1
	rt=${4:-}
	[ -n "$RT_GROUP" ] && [ -z "$rt" ] && rt=10000
	oci_edit "$b" --arg hook "$HOOK" --arg sock "$SOCK" --argjson ann "$2" --arg cpus "$3" --arg rt "$rt" \
		--arg cg "/rtplace-test-$$-$1" --argjson binds "$binds" --arg conf "$CONF" '
		.process.terminal = false
		| .process.args = ["sh", "-c", "grep Cpus_allowed_list /proc/self/status; chrt -p $$; exec sleep 60"]
		| .root.readonly = true
		| .annotations = $ann
		| .process.capabilities |= map_values(. + ["CAP_SYS_NICE"])
		| .hooks.createRuntime = [{path: $hook, args: ["rtplace-oci-hook", "--socket", $sock, "--config", $conf],
			timeout: 20}]
		| .linux.cgroupsPath = $cg
		| if $cpus != "" then .linux.resources.cpu.cpus = $cpus else . end
		| if $rt != "" and $rt != "0" then .linux.resources.cpu.realtimeRuntime = ($rt | tonumber)
			| .linux.resources.cpu.realtimePeriod = 1000000 else . end
		| '"$OCI_BIND_HOST"
}

# create NAME: runc create (the hook runs); the container's output goes to
# $TMP/NAME.out. Returns runc's status.
create() {
	CONTAINERS="$CONTAINERS rtplace-test-$$-$1"
	timeout 60 runc --root "$RUNC_ROOT" create --bundle "$TMP/$1" "rtplace-test-$$-$1" >"$TMP/$1.out" 2>&1
}

start() {
	timeout 30 runc --root "$RUNC_ROOT" start "rtplace-test-$$-$1" || fail "runc start $1: $(cat "$TMP/$1.out")"
}

delete() {
	timeout 30 runc --root "$RUNC_ROOT" delete -f "rtplace-test-$$-$1" || fail "runc delete $1"
}

# cpus_of NAME, policy_of NAME: what the container's program printed.
cpus_of() {
	sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$TMP/$1.out"
}
policy_of() {
	sed -n "s/^pid 1's current scheduling policy: //p; s/^pid 1's current scheduling priority: //p" \
		"$TMP/$1.out" | tr '\n' ' '
}

# With no daemon: refused, naming the cause; optional: started unplaced.
make_bundle nodaemon '{"io.rtplace.priority":"50"}' ""
create nodaemon && fail "runc created a container whose hook found no daemon"
grep -qF "cannot reach rtplaced at $SOCK" "$TMP/nodaemon.out" || fail "runc's message: $(cat "$TMP/nodaemon.out")"
make_bundle optional '{"io.rtplace.priority":"50","io.rtplace.optional":"true"}' ""
create optional || fail "optional container not created: $(cat "$TMP/optional.out")"
start optional
wait_lines "$TMP/optional.out" 3
[ "$(policy_of optional)" = "SCHED_OTHER 0 " ] || fail "optional container: $(cat "$TMP/optional.out")"
delete optional

start_live_daemon --config "$TMP/rtplaced.conf"

# io.rtplace.isolate: true asks rtplaced to isolate (this test's daemon
# isolates nothing: refused, the container not started unless optional);
# if-possible is placed without isolation, saying why; true without
# CAP_SYS_NICE in the host's user namespace is refused by the hook itself,
# if-possible then places without isolation.
sleep 600 &
INIT=$!
PIDS="$PIDS $INIT"
hand_config ""
hook_by_hand 69 '{"io.rtplace.priority":"50","io.rtplace.isolate":"true"}'
grep -qF "isolates nothing" "$TMP/err" || fail "isolate=true against a daemon that isolates nothing: $(cat "$TMP/err")"
hook_by_hand 0 '{"io.rtplace.priority":"50","io.rtplace.isolate":"if-possible"}'
grep -qF "container hand: note: not isolated: this daemon isolates nothing" "$TMP/err" ||
	fail "isolate=if-possible: $(cat "$TMP/err")"
hook_by_hand 65 '{"io.rtplace.priority":"50","io.rtplace.isolate":"maybe"}'
grep -qF 'annotation io.rtplace.isolate="maybe": not true, false or if-possible' "$TMP/err" ||
	fail "isolate=maybe: $(cat "$TMP/err")"
# (A new "init process": the placed one is pinned to its claimed CPU.)
kill "$INIT"
wait "$INIT" 2>/dev/null
wait_claims 0
sleep 600 &
INIT=$!
PIDS="$PIDS $INIT"
printf '{"ociVersion":"1.0.2","process":{"rlimits":[{"type":"RLIMIT_RTPRIO","hard":50,"soft":50}]}}\n' \
	>"$HAND/config.json"
hook_by_hand 77 '{"io.rtplace.priority":"50","io.rtplace.isolate":"true"}'
grep -qF "io.rtplace.isolate=true needs CAP_SYS_NICE in the host's user namespace" "$TMP/err" ||
	fail "isolate=true without CAP_SYS_NICE: $(cat "$TMP/err")"
hook_by_hand 0 '{"io.rtplace.priority":"50","io.rtplace.isolate":"if-possible"}'
grep -qF "not isolated: io.rtplace.isolate needs CAP_SYS_NICE" "$TMP/err" ||
	fail "isolate=if-possible without CAP_SYS_NICE: $(cat "$TMP/err")"
hand_config ""
# Their claims end with their "init process".
kill "$INIT"
wait "$INIT" 2>/dev/null
wait_claims 0


# A bad annotation under runc: the runtime refuses the container.
make_bundle bad '{"io.rtplace.priority":"50","io.rtplace.policy":"deadline"}' ""
create bad && fail "runc created a container with a bad annotation"
grep -qF 'annotation io.rtplace.policy=\"deadline\": not fifo or rr' "$TMP/bad.out" ||
	grep -qF 'annotation io.rtplace.policy="deadline": not fifo or rr' "$TMP/bad.out" ||
	fail "runc's message for a bad annotation: $(cat "$TMP/bad.out")"

# Two containers created together: two claims, different CPUs, FIFO 50.
make_bundle a '{"io.rtplace.priority":"50"}' ""
make_bundle b '{"io.rtplace.priority":"50","io.rtplace.policy":"fifo"}' ""
create a || fail "runc create a: $(cat "$TMP/a.out")"
create b || fail "runc create b: $(cat "$TMP/b.out")"
wait_claims 2
start a
start b
wait_lines "$TMP/a.out" 3
wait_lines "$TMP/b.out" 3
ca=$(cpus_of a)
cb=$(cpus_of b)
case "$ca,$cb" in
0,1 | 1,0) ;;
*) fail "containers on CPUs '$ca' and '$cb', want 0 and 1: $(cat "$TMP/a.out" "$TMP/b.out")" ;;
esac
[ "$(policy_of a)" = "SCHED_FIFO 50 " ] || fail "container a: $(cat "$TMP/a.out")"
[ "$(policy_of b)" = "SCHED_FIFO 50 " ] || fail "container b: $(cat "$TMP/b.out")"
# The claims end with the containers: killed, or deleted.
timeout 30 runc --root "$RUNC_ROOT" kill "rtplace-test-$$-a" KILL || fail "runc kill a"
wait_claims 1
delete a
delete b
wait_claims 0

# A container whose cpuset is CPU 1, at SCHED_RR 10.
make_bundle one '{"io.rtplace.priority":"10","io.rtplace.policy":"rr"}' 1
create one || fail "runc create one: $(cat "$TMP/one.out")"
start one
wait_lines "$TMP/one.out" 3
[ "$(cpus_of one)" = 1 ] || fail "container with cpuset 1: $(cat "$TMP/one.out")"
[ "$(policy_of one)" = "SCHED_RR 10 " ] || fail "container one: $(cat "$TMP/one.out")"
delete one
wait_claims 0

# No RT runtime in the container's cpu cgroup: refused, naming the fix.
if [ -n "$RT_GROUP" ]; then
	make_bundle nort '{"io.rtplace.priority":"50"}' "" 0
	create nort && fail "runc created a container that cannot run at RT"
	# The refusal names the cgroup without a budget and the container's fix.
	grep -qF "no RT budget: cpu cgroup " "$TMP/nort.out" || fail "no RT runtime: $(cat "$TMP/nort.out")"
	grep -qF "linux.resources.cpu.realtimeRuntime" "$TMP/nort.out" || fail "no RT runtime fix: $(cat "$TMP/nort.out")"
	wait_claims 0
fi

echo "PASS"
