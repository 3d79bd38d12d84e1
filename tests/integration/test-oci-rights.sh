#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What rtplace-oci-hook grants a container: at most what the container's
# own spec (its bundle's config.json) lets its process do itself, narrowed
# by the node's [containers] policy. The hook runs as root, so without
# these checks the daemon granted every annotation. Under real runc (root)
# against a live rtplaced:
#   - no CAP_SYS_NICE and no RLIMIT_RTPRIO: refused, naming the right and
#     how to grant it, no claim left; with CAP_SYS_NICE: FIFO 50;
#   - an RLIMIT_RTPRIO below the priority: refused; at or above: granted
#     (by hand with a real process as the init process, and under runc
#     when this shell's hard RLIMIT_RTPRIO lets runc set one);
#   - exclusive: granted with CAP_SYS_NICE, refused with only an rlimit;
#   - with only an rlimit the claim is leased ([limits] max-lease-ms), with
#     CAP_SYS_NICE it lasts as long as the container;
#   - [containers] max-prio, allow-exclusive and max-cpus refuse what the
#     container's rights would allow.
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

RT_GROUP=
[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] && RT_GROUP=1

# The node policies the hook is given (--config): none, and one of each key.
NODE=$TMP/node-none.conf
: >"$NODE"
printf '[containers]\nmax-prio = 40\n' >"$TMP/node-prio.conf"
printf '[containers]\nallow-exclusive = no\n' >"$TMP/node-excl.conf"
printf '[containers]\nmax-cpus = 1\n' >"$TMP/node-cpus.conf"

# jq filters for the process's rights.
WITH_NICE='.process.capabilities |= map_values(. + ["CAP_SYS_NICE"])'
NO_NICE='.process.capabilities |= map_values(map(select(. != "CAP_SYS_NICE")))'
# rtprio N: an RLIMIT_RTPRIO of N, soft and hard.
rtprio() {
	echo ".process.rlimits += [{type: \"RLIMIT_RTPRIO\", hard: $1, soft: $1}]"
}

# make_bundle NAME ANNOTATIONS RIGHTS-FILTER [NODE-CONF]: a bundle in
# $TMP/NAME whose program prints its affinity and policy, then sleeps; its
# hook reads NODE-CONF (default: no policy).
make_bundle() {
	oci_hook_bundle "$1" "$2" "$3" "${4:-$NODE}" 'grep Cpus_allowed_list /proc/self/status; chrt -p $$; exec sleep 60'
}

create() {
	oci_create "$1"
}

policy_of() {
	sed -n "s/^pid 1's current scheduling policy: //p; s/^pid 1's current scheduling priority: //p" \
		"$TMP/$1.out" | tr '\n' ' '
}

# granted NAME ANNOTATIONS RIGHTS-FILTER POLICY [NODE-CONF]: the container
# is created and runs at POLICY ("SCHED_FIFO 50 "); deleted after.
granted() {
	make_bundle "$1" "$2" "$3" "${5:-}"
	create "$1" || fail "container $1 ($3) refused: $(cat "$TMP/$1.out")"
	timeout 30 runc --root "$RUNC_ROOT" start "rtplace-test-$$-$1" || fail "runc start $1: $(cat "$TMP/$1.out")"
	wait_lines "$TMP/$1.out" 3
	[ "$(policy_of "$1")" = "$4" ] || fail "container $1 runs at '$(policy_of "$1")', want '$4': $(cat "$TMP/$1.out")"
	timeout 30 runc --root "$RUNC_ROOT" delete -f "rtplace-test-$$-$1" || fail "runc delete $1"
	wait_claims 0
}

# refused NAME ANNOTATIONS RIGHTS-FILTER NODE-CONF MESSAGE...: runc refuses
# the container, its error holds every MESSAGE, and no claim is left.
refused() {
	name=$1 ann=$2 rights=$3 node=$4
	shift 4
	make_bundle "$name" "$ann" "$rights" "$node"
	create "$name" && fail "runc created container $name ($rights, $ann), which its rights do not allow"
	for m in "$@"; do
		grep -qF -- "$m" "$TMP/$name.out" || fail "container $name: no '$m' in: $(cat "$TMP/$name.out")"
	done
	wait_claims 0
}

# runc quotes the hook's message: the part without quotes.
HOW_CAP='podman or docker --cap-add SYS_NICE; Kubernetes securityContext.capabilities.add: '

# --- The capability.
refused nocap '{"io.rtplace.priority":"50"}' "$NO_NICE" "$NODE" \
	"refused: priority 50 needs CAP_SYS_NICE (effective and bounding sets) or RLIMIT_RTPRIO >= 50" \
	"gives no CAP_SYS_NICE and RLIMIT_RTPRIO 0" "$HOW_CAP" "--ulimit rtprio=50"
# In the effective set only: the bounding set lacks it.
refused effonly '{"io.rtplace.priority":"50"}' \
	'.process.capabilities.effective += ["CAP_SYS_NICE"] | .process.capabilities.permitted += ["CAP_SYS_NICE"]' \
	"$NODE" "gives no CAP_SYS_NICE and RLIMIT_RTPRIO 0"
granted cap '{"io.rtplace.priority":"50"}' "$WITH_NICE" "SCHED_FIFO 50 "

# --- The rlimit: runc can set 0 here, whatever this shell's hard limit.
refused rlimit0 '{"io.rtplace.priority":"1"}' "$NO_NICE | $(rtprio 0)" "$NODE" \
	"refused: priority 1 needs CAP_SYS_NICE" "RLIMIT_RTPRIO 0" "--ulimit rtprio=1"

# --- Exclusive: with the capability granted, refused otherwise (the
# priority's own refusal comes first when the rlimit does not cover it).
granted excl '{"io.rtplace.priority":"50","io.rtplace.exclusive":"true"}' "$WITH_NICE" "SCHED_FIFO 50 "
refused exclnocap '{"io.rtplace.priority":"50","io.rtplace.exclusive":"true"}' "$NO_NICE" "$NODE" \
	"needs CAP_SYS_NICE" "$HOW_CAP"

# --- The node's policy narrows what the capability allows.
refused nodeprio '{"io.rtplace.priority":"50"}' "$WITH_NICE" "$TMP/node-prio.conf" \
	"refused: priority 50 is above this node's [containers] max-prio = 40"
granted nodeprio40 '{"io.rtplace.priority":"40"}' "$WITH_NICE" "SCHED_FIFO 40 " "$TMP/node-prio.conf"
refused nodeexcl '{"io.rtplace.priority":"50","io.rtplace.exclusive":"true"}' "$WITH_NICE" "$TMP/node-excl.conf" \
	"refused: io.rtplace.exclusive=true: this node's [containers] allow-exclusive = no"
refused nodecpus '{"io.rtplace.priority":"50","io.rtplace.cpus":"2"}' "$WITH_NICE" "$TMP/node-cpus.conf" \
	"refused: 2 CPUs asked, above this node's [containers] max-cpus = 1"
# A policy with errors refuses every container, naming the error.
printf '[containers]\nmax-prio = 100\n' >"$TMP/node-bad.conf"
refused nodebad '{"io.rtplace.priority":"10"}' "$WITH_NICE" "$TMP/node-bad.conf" \
	"node-bad.conf:2: max-prio = 100 is out of range" "has errors"

# --- RLIMIT_RTPRIO other than 0, by hand: the hook on a state whose init
# process is a real sleeping process and a bundle of only a config.json,
# as runc would hand them over. (Under runc, raising the hard limit needs
# CAP_SYS_RESOURCE, which a test machine's root may lack: below.)
HAND=$TMP/hand
mkdir -p "$HAND"
# by_hand WANT ANNOTATIONS PROCESS-JSON: the hook's exit status is WANT.
by_hand() {
	sleep 60 &
	INIT=$!
	PIDS="$PIDS $INIT"
	printf '{"ociVersion":"1.0.2","process":%s}\n' "$3" >"$HAND/config.json"
	printf '{"ociVersion":"1.0.2","id":"hand","status":"creating","pid":%d,"bundle":"%s","annotations":%s}\n' \
		"$INIT" "$HAND" "$2" >"$TMP/state.json"
	timeout 30 "$HOOK" --socket "$SOCK" --config "${BY_HAND_NODE:-$NODE}" <"$TMP/state.json" >"$TMP/out" 2>"$TMP/err"
	got=$?
	[ "$got" = "$1" ] || fail "hook with $3 and $2 exited $got, want $1: $(cat "$TMP/err")"
}
# by_hand_done POLICY: the init process runs at POLICY; it ends, and so
# does its claim.
by_hand_done() {
	got=$(chrt -p "$INIT" | sed -n 's/.*scheduling policy: //p; s/.*scheduling priority: //p' | tr '\n' ' ')
	[ "$got" = "$1" ] || fail "init process at '$got', want '$1'"
	kill "$INIT"
	wait_claims 0
}
by_hand 77 '{"io.rtplace.priority":"50"}' '{"rlimits":[{"type":"RLIMIT_RTPRIO","hard":49,"soft":49}]}'
grep -qF "container hand: refused: priority 50 needs CAP_SYS_NICE" "$TMP/err" &&
	grep -qF "RLIMIT_RTPRIO 49: grant one" "$TMP/err" || fail "rtprio 49: $(cat "$TMP/err")"
by_hand_done "SCHED_OTHER 0 "
# The soft limit is the kernel's: a higher hard one does not count.
by_hand 77 '{"io.rtplace.priority":"50"}' '{"rlimits":[{"type":"RLIMIT_RTPRIO","hard":99,"soft":10}]}'
by_hand_done "SCHED_OTHER 0 "
by_hand 0 '{"io.rtplace.priority":"50"}' '{"rlimits":[{"type":"RLIMIT_RTPRIO","hard":50,"soft":50}]}'
by_hand_done "SCHED_FIFO 50 "
by_hand 0 '{"io.rtplace.priority":"50","io.rtplace.policy":"rr"}' \
	'{"rlimits":[{"type":"RLIMIT_RTPRIO","hard":60,"soft":60}]}'
by_hand_done "SCHED_RR 50 "
by_hand 77 '{"io.rtplace.priority":"50","io.rtplace.exclusive":"true"}' \
	'{"rlimits":[{"type":"RLIMIT_RTPRIO","hard":99,"soft":99}]}'
grep -qF "refused: io.rtplace.exclusive=true needs CAP_SYS_NICE (effective and bounding sets; an RLIMIT_RTPRIO does not do)" \
	"$TMP/err" || fail "exclusive with only an rlimit: $(cat "$TMP/err")"
by_hand_done "SCHED_OTHER 0 "
# CAP_SYS_NICE of a user namespace of the container's gives no RT right.
printf '{"ociVersion":"1.0.2","process":{"capabilities":{"bounding":["CAP_SYS_NICE"],"effective":["CAP_SYS_NICE"]}},"linux":{"namespaces":[{"type":"user"}]}}\n' \
	>"$HAND/config.json"
sleep 60 &
INIT=$!
PIDS="$PIDS $INIT"
printf '{"ociVersion":"1.0.2","id":"hand","status":"creating","pid":%d,"bundle":"%s","annotations":{"io.rtplace.priority":"20"}}\n' \
	"$INIT" "$HAND" >"$TMP/state.json"
expect_status 77 timeout 30 "$HOOK" --socket "$SOCK" --config "$NODE" <"$TMP/state.json"
grep -qF "CAP_SYS_NICE only inside its own user namespace" "$TMP/err" || fail "userns: $(cat "$TMP/err")"
by_hand_done "SCHED_OTHER 0 "

# Without CAP_SYS_NICE the claim is leased as the daemon leases any claim
# of a requester without it ([limits] max-lease-ms), the hook's being root
# notwithstanding; with it, the claim lasts as long as the container.
printf '[limits]\nmax-lease-ms = 1000\n' >"$TMP/node-lease.conf"
BY_HAND_NODE=$TMP/node-lease.conf
by_hand 0 '{"io.rtplace.priority":"50"}' '{"rlimits":[{"type":"RLIMIT_RTPRIO","hard":50,"soft":50}]}'
grep -qF "note: without CAP_SYS_NICE the claim lasts at most [limits] max-lease-ms = 1000 ms" "$TMP/err" ||
	fail "rlimit-only lease: $(cat "$TMP/err")"
LEASED=$INIT
by_hand 0 '{"io.rtplace.priority":"50"}' '{"capabilities":{"bounding":["CAP_SYS_NICE"],"effective":["CAP_SYS_NICE"]}}'
# (nothing but the line saying where it placed it)
[ -z "$(grep -v "container hand: placed: CPUs " "$TMP/err")" ] || fail "with CAP_SYS_NICE the hook said: $(cat "$TMP/err")"
wait_claims 2
wait_claims 1
kept=$("$CTL" --socket "$SOCK" --json cpus | jq -r '.cpus[] | select(.claim != null and .claim != 0) | .cpu')
[ "$kept" = "$(taskset -pc "$INIT" | sed 's/.*: //')" ] ||
	fail "the claim left is on CPU '$kept', not the capable container's $(taskset -pc "$INIT")"
kill "$LEASED"
by_hand_done "SCHED_FIFO 50 "
BY_HAND_NODE=

# The same under runc where this shell may give the container an
# RLIMIT_RTPRIO of 50 (runc sets it after the hook, with this shell's
# rights).
hard=$(prlimit --pid $$ --rtprio --output HARD --noheadings | tr -d " ")
if [ "$hard" = unlimited ] || [ "$hard" -ge 50 ]; then
	granted rlimit50 '{"io.rtplace.priority":"50"}' "$NO_NICE | $(rtprio 50)" "SCHED_FIFO 50 "
	refused rlimit49 '{"io.rtplace.priority":"50"}' "$NO_NICE | $(rtprio 49)" "$NODE" "RLIMIT_RTPRIO 49: grant one"
else
	echo "note: hard RLIMIT_RTPRIO $hard: RLIMIT_RTPRIO 49 and 50 checked by hand only" >&2
fi

echo "PASS"
