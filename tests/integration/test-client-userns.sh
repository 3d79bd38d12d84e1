#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Capabilities held in a user namespace of a client's own are no host
# privilege (DESIGN §14). nobody runs a client under `unshare -Ur`, and
# root runs one in a runc container whose user namespace maps its root to
# nobody: in both, the client's CapEff has every capability, over its own
# namespace. Each tries what only host privilege may do: move a root-owned
# process to SCHED_FIFO 99 on CPU 1 (--force: past the system-thread
# guard, and the level re-check), claim a CPU exclusively at rt99 with no end, both of which the
# daemon must refuse (the claim is held at normal, its lease bounded). The
# same client as host root gets both. The processes moved sleep: nothing
# spins, whatever policy they get. The container is deleted and the daemon
# killed on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"
require_python_pidfds
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
$NOBODY unshare -Ur true 2>/dev/null || skip "nobody may not create a user namespace here"
. "${top_srcdir:-.}/tests/integration/test-oci-common.sh"
# Moves go to CPU 1, which test-hotplug-live takes offline under this lock.
rt_lock

# The client: python3 from /usr, so nobody runs nothing of the build tree.
# CLIENT SOCKET PID [pidfd]: prints whether CapEff has CAP_SYS_NICE, then
# the status of a MOVE of PID to FIFO 99 on CPU 1 (0 or -errno), sent with
# a pidfd of PID when asked, then the level an exclusive rt99 claim holds
# its CPU at and the claim's lease (ms).
CLIENT='
import os, socket, struct, sys
path, pid, with_pidfd = sys.argv[1], int(sys.argv[2]), len(sys.argv) > 3
caps = [l for l in open("/proc/self/status") if l.startswith("CapEff:")][0].split()[1]
print("cap_sys_nice", int(caps, 16) >> 23 & 1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
def call(mtype, rid, body, fds=()):
    msg = struct.pack("=IHHIIiI", 0x4c505452, 1, mtype, 24 + len(body), rid, 0, 0) + body
    if fds:
        socket.send_fds(s, [msg], list(fds))
    else:
        s.send(msg)
    while True:
        r = s.recv(65536)
        if struct.unpack_from("=I", r, 12)[0] == rid:
            return struct.unpack_from("=H", r, 6)[0], struct.unpack_from("=i", r, 16)[0], r[24:]
def mask(*cpus):
    m = bytearray(128)
    for c in cpus:
        m[c // 8] |= 1 << (c % 8)
    return bytes(m)
# SET_AFFINITY | SET_SCHED | FORCE | SYSTEM, FIFO 99.
rtype, status, _ = call(0x0105, 1, struct.pack("=iIBB6x", pid, 1 | 2 | 8 | 16, 1, 99) + mask(1),
                        [os.pidfd_open(pid)] if with_pidfd else [])
print("move", status if rtype == 0x0200 else 0)
# CLAIM | EXCLUSIVE at FIFO 99 on one of CPUs 0-1, lease infinite.
rtype, status, body = call(0x0101, 2, struct.pack("=BBHIiiIi", 99, 1, 1, 1 | 2, -1, -1, 0xffffffff, 0) + mask(0, 1))
assert rtype == 0x0201, (rtype, status)
claim, lease, count = struct.unpack_from("=QIH", body)
cpu = struct.unpack_from("=H", body, 8 + 4 + 2 + 2 + 64 + 128)[0]
rtype, status, page = call(0x0103, 3, struct.pack("=II", cpu, 0))
assert rtype == 0x0203, (rtype, status)
claim_id, claim_level = struct.unpack_from("=QB", page, 16 + 24)
assert claim_id == claim, (claim_id, claim)
print("claim", claim_level, lease)
'
# The answers of a client with host privilege, and of one without.
HOST_ROOT="cap_sys_nice 1
move 0
claim 102 4294967295"
IN_USERNS="cap_sys_nice 1
move -1
claim 2 60000"

# policy PID: its policy, priority and CPUs as the host sees them.
policy() {
	python3 -c 'import os, sys; p = int(sys.argv[1]); print(os.sched_getscheduler(p), os.sched_getparam(p).sched_priority, sorted(os.sched_getaffinity(p)))' "$1"
}

# The socket reaches nobody and the container's root (host nobody).
SOCKDIR=$TMP/sockdir
mkdir -p "$SOCKDIR" && chmod 755 "$TMP" "$SOCKDIR"
SOCK=$SOCKDIR/rtplaced.sock
printf '[daemon]\nsocket-mode = 0666\n[placement]\nhousekeeping-cpus =\n' >"$TMP/rtplaced.conf"
start_live_daemon --config "$TMP/rtplaced.conf"

# --- unshare -Ur, run by nobody.
sleep 300 &
TARGET=$!
PIDS="$PIDS $TARGET"
before=$(policy $TARGET)
got=$(cd / && $NOBODY unshare -Ur python3 -c "$CLIENT" "$SOCK" $TARGET 2>&1) || fail "client in unshare -Ur: $got"
[ "$got" = "$IN_USERNS" ] || fail "nobody in unshare -Ur got: $got"
[ "$(policy $TARGET)" = "$before" ] || fail "nobody in unshare -Ur moved root's $TARGET: $(policy $TARGET)"
got=$(python3 -c "$CLIENT" "$SOCK" $TARGET 2>&1) || fail "client as root: $got"
[ "$got" = "$HOST_ROOT" ] || fail "host root got: $got"
[ "$(policy $TARGET)" = "1 99 [1]" ] || fail "host root's move left $TARGET at $(policy $TARGET)"

# --- A runc container with its own user namespace, its root host nobody,
# given CAP_SYS_NICE (as `podman run --cap-add SYS_NICE` in rootless podman).
command -v runc >/dev/null || { echo "SKIP: runc is not installed: the container half not run" >&2; exit 0; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed: the container half not run" >&2; exit 0; }
command -v nsenter >/dev/null || { echo "SKIP: nsenter is not installed: the container half not run" >&2; exit 0; }
ID=rtplace-test-$$-userns
B=$TMP/bundle
CSOCK=/run/rtplace/rtplaced.sock
binds=$(oci_bundle "$B") || exit 1
mkdir -p "$B/rootfs/run/rtplace"
chmod 755 "$B" "$B/rootfs"
oci_edit "$B" --arg sockdir "$SOCKDIR" --arg cg "/$ID" --argjson binds "$binds" '
	.process.terminal = false
	| .process.args = ["sleep", "600"]
	| .process.capabilities |= with_entries(.value += ["CAP_SYS_NICE"])
	| .root.readonly = true
	| .linux.cgroupsPath = $cg
	| .linux.namespaces += [{type: "user"}]
	| .linux.uidMappings = [{containerID: 0, hostID: 65534, size: 1}]
	| .linux.gidMappings = [{containerID: 0, hostID: 65534, size: 1}]
	| .mounts |= map(select(.destination != "/sys/fs/cgroup")
			 | if .destination == "/dev/pts" then .options |= map(select(. != "gid=5")) else . end)
	| .mounts += [{destination: "/run/rtplace", type: "bind", source: $sockdir, options: ["rbind", "rw"]}]
	| '"$OCI_BIND_HOST"
CONTAINERS=$ID
timeout 60 runc --root "$RUNC_ROOT" run -d --bundle "$B" "$ID" >"$TMP/runc.log" 2>&1 ||
	fail "runc run: $(cat "$TMP/runc.log")"
INIT=$(timeout 10 runc --root "$RUNC_ROOT" state "$ID" | jq -r .pid)
[ -n "$INIT" ] && [ "$INIT" -gt 1 ] || fail "no init pid from runc state"
[ "$(readlink /proc/$INIT/ns/user)" != "$(readlink /proc/self/ns/user)" ] || fail "the container shares our user namespace"
[ "$(stat -c %u /proc/$INIT)" = 65534 ] || fail "the container's root is host uid $(stat -c %u /proc/$INIT), not nobody"

# A root-owned target the container sees: host root in its PID namespace
# only. The client names it by its number there, with a pidfd.
nsenter -t "$INIT" -p -- sleep 300 &
NSENTER=$!
PIDS="$PIDS $NSENTER"
i=0
until CTARGET=$(pgrep -P $NSENTER sleep) && [ -n "$CTARGET" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "no sleeper in the container's PID namespace"
	sleep 0.05
done
PIDS="$PIDS $CTARGET"
NSNUM=$(sed -n 's/^NSpid:.*[[:space:]]\([0-9]*\)$/\1/p' /proc/$CTARGET/status)
[ -n "$NSNUM" ] && [ "$NSNUM" != "$CTARGET" ] || fail "sleeper $CTARGET has no number of the container's"
before=$(policy $CTARGET)
got=$(timeout 60 runc --root "$RUNC_ROOT" exec "$ID" python3 -c "$CLIENT" $CSOCK $NSNUM pidfd 2>&1) ||
	fail "client in the container: $got"
[ "$got" = "$IN_USERNS" ] || fail "the container's root got: $got"
[ "$(policy $CTARGET)" = "$before" ] || fail "the container's root moved root's $CTARGET: $(policy $CTARGET)"
got=$(python3 -c "$CLIENT" "$SOCK" $CTARGET 2>&1) || fail "client as root: $got"
[ "$got" = "$HOST_ROOT" ] || fail "host root got: $got"
echo PASS
