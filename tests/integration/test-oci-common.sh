# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced after test-client-common.sh by the tests that run containers
# under runc: a private runc state folder, root file systems made of the
# host's own /usr and /etc (read-only), and `runc delete -f` of every
# container created, on every exit path, before the common cleanup.
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
