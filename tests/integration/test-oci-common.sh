# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced after test-client-common.sh by the tests that run containers
# under runc: a private runc state folder, root file systems made of the
# host's own /usr and /etc (read-only), `runc delete -f` of every
# container created, on every exit path, before the common cleanup, a
# client container in a PID namespace of its own (oci_run_pidns) and the
# live daemon it asks (oci_start_daemon).
RUNC_ROOT=$TMP/runc
CONTAINERS=

oci_cleanup() {
	for id in $CONTAINERS; do
		timeout 30 runc --root "$RUNC_ROOT" delete -f "$id" >/dev/null 2>&1
	done
	cleanup
}
trap oci_cleanup EXIT

# oci_bundle DIR: a bundle (`runc spec`'s config.json) in DIR whose root file
# system shows the host's /usr and /etc read-only (merged-/usr links for
# /bin, /lib...); prints, as a jq array, the folders its config must
# bind-mount.
oci_bundle() {
	mkdir -p "$1/rootfs" || fail "mkdir $1"
	binds=
	for d in bin sbin lib lib32 lib64 libx32 usr etc; do
		if [ -L "/$d" ]; then
			ln -s "$(readlink "/$d")" "$1/rootfs/$d"
		elif [ -d "/$d" ]; then
			mkdir "$1/rootfs/$d"
			binds="$binds\"/$d\","
		fi
	done
	mkdir -p "$1/rootfs/proc" "$1/rootfs/dev" "$1/rootfs/sys" "$1/rootfs/tmp" "$1/rootfs/run"
	(cd "$1" && runc spec) || fail "runc spec"
	echo "[${binds%,}]"
}

# oci_edit DIR JQ-ARGS... FILTER: edits DIR/config.json with jq; $binds (the
# folders of oci_bundle) is defined for the filter.
oci_edit() {
	dir=$1
	shift
	jq "$@" "$dir/config.json" >"$dir/config.json.new" && mv "$dir/config.json.new" "$dir/config.json" ||
		fail "jq on $dir/config.json"
}

# The jq filter that bind-mounts $binds read-only.
OCI_BIND_HOST='.mounts += ($binds | map({destination: ., type: "bind", source: ., options: ["rbind", "ro"]}))'

# The pid 1 of oci_run_pidns's container: a main thread and a second thread
# that sleep; it writes its own pid and that thread's tid, as its namespace
# numbers them.
OCI_PIDNS_INIT='
import os, threading, time
def sleeper():
    time.sleep(600)
t = threading.Thread(target=sleeper, daemon=True)
t.start()
while t.native_id is None:
    time.sleep(0.01)
with open("/out/ids.tmp", "w") as f:
    f.write("%d %d\n" % (os.getpid(), t.native_id))
os.rename("/out/ids.tmp", "/out/ids")
time.sleep(600)
'

# oci_run_pidns ID SOCKDIR: runs container ID (bundle in $TMP/bundle) in a
# PID namespace of its own, running OCI_PIDNS_INIT, with a read-only root,
# the build tree at its own path (the libtool wrappers name it), SOCKDIR at
# /run/rtplace and $TMP/out at /out. Sets INIT (its pid 1 as the host
# numbers it), CTID (the second thread, as the container numbers it) and
# what in_container runs in.
oci_run_pidns() {
	OCI_ID=$1
	build=$(cd "$top_builddir" && pwd)
	bundle=$TMP/bundle
	binds=$(oci_bundle "$bundle") || exit 1
	mkdir -p "$bundle/rootfs$build" "$bundle/rootfs/run/rtplace" "$bundle/rootfs/out" "$TMP/out"
	oci_edit "$bundle" --arg prog "$OCI_PIDNS_INIT" --arg build "$build" --arg sockdir "$2" --arg out "$TMP/out" \
		--arg cg "/$1" --argjson binds "$binds" '
		.process.terminal = false
		| .process.args = ["python3", "-c", $prog]
		| .root.readonly = true
		| .linux.cgroupsPath = $cg
		| .mounts += [{destination: $build, type: "bind", source: $build, options: ["rbind", "ro"]},
			      {destination: "/run/rtplace", type: "bind", source: $sockdir, options: ["rbind", "rw"]},
			      {destination: "/out", type: "bind", source: $out, options: ["rbind", "rw"]}]
		| '"$OCI_BIND_HOST"
	jq -e '.linux.namespaces | map(.type) | index("pid") != null' "$bundle/config.json" >/dev/null ||
		fail "the bundle has no PID namespace of its own"
	CONTAINERS="$CONTAINERS $1"
	timeout 60 runc --root "$RUNC_ROOT" run -d --bundle "$bundle" "$1" >"$TMP/runc.log" 2>&1 ||
		fail "runc run: $(cat "$TMP/runc.log")"
	INIT=$(timeout 10 runc --root "$RUNC_ROOT" state "$1" | jq -r .pid)
	[ -n "$INIT" ] && [ "$INIT" -gt 1 ] || fail "no init pid from runc state"
	wait_lines "$TMP/out/ids" 1
	read -r cpid CTID <"$TMP/out/ids"
	[ "$cpid" = 1 ] || fail "the container's program is pid $cpid in its namespace, not 1: no PID namespace?"
	[ "$(readlink /proc/$INIT/ns/pid)" != "$(readlink /proc/self/ns/pid)" ] ||
		fail "the container shares our PID namespace"
}

# in_container CMD...: runs CMD in oci_run_pidns's container (its
# namespaces), output in $TMP/out.txt and $TMP/err.txt; returns its status.
in_container() {
	timeout 60 runc --root "$RUNC_ROOT" exec "$OCI_ID" "$@" >"$TMP/out.txt" 2>"$TMP/err.txt"
}

# oci_start_daemon: starts the live daemon, every CPU open to placement, on
# $SOCK in SOCKDIR ($TMP/sockdir, which oci_run_pidns shows at /run/rtplace,
# where the container finds it as $CSOCK); makes $TMP/out and sets BUILD
# (the build tree's absolute path).
oci_start_daemon() {
	BUILD=$(cd "$top_builddir" && pwd)
	SOCKDIR=$TMP/sockdir
	mkdir -p "$SOCKDIR" "$TMP/out" && chmod 755 "$SOCKDIR"
	printf '[placement]\nhousekeeping-cpus =\n' >"$TMP/rtplaced.conf"
	SOCK=$SOCKDIR/rtplaced.sock
	CSOCK=/run/rtplace/rtplaced.sock
	start_live_daemon --config "$TMP/rtplaced.conf"
}

# oci_hook_bundle NAME ANNOTATIONS FILTER NODE-CONF PROG: a bundle in
# $TMP/NAME whose program is `sh -c PROG` on a read-only root, with these
# annotations, $HOOK at createRuntime asking $SOCK under the node policy
# NODE-CONF, a cgroup of its own (with a little RT runtime where $RT_GROUP
# says RT group scheduling wants it); FILTER (jq) edits the rest.
oci_hook_bundle() {
	b=$TMP/$1
	binds=$(oci_bundle "$b") || exit 1
	oci_edit "$b" --arg hook "$HOOK" --arg sock "$SOCK" --argjson ann "$2" --arg conf "$4" --arg prog "$5" \
		--arg cg "/rtplace-test-$$-$1" --argjson binds "$binds" --arg rt "${RT_GROUP:+10000}" '
		.process.terminal = false
		| .process.args = ["sh", "-c", $prog]
		| .root.readonly = true
		| .annotations = $ann
		| .hooks.createRuntime = [{path: $hook, args: ["rtplace-oci-hook", "--socket", $sock, "--config", $conf],
			timeout: 20}]
		| .linux.cgroupsPath = $cg
		| if $rt != "" then .linux.resources.cpu.realtimeRuntime = ($rt | tonumber)
			| .linux.resources.cpu.realtimePeriod = 1000000 else . end
		| '"$OCI_BIND_HOST"' | '"$3"
}

# oci_create NAME: runc create of oci_hook_bundle's NAME (the hook runs),
# deleted on exit; its output in $TMP/NAME.out. Returns runc's status.
oci_create() {
	CONTAINERS="$CONTAINERS rtplace-test-$$-$1"
	timeout 60 runc --root "$RUNC_ROOT" create --bundle "$TMP/$1" "rtplace-test-$$-$1" >"$TMP/$1.out" 2>&1
}
