#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Clients in a container's own PID namespace (DESIGN §15), under real runc,
# reaching the daemon through its bind-mounted socket folder:
# - rtplace-run inside gets a claim owned by the right host process (the
#   program it executes, a process of the container's namespace), which
#   ends when that process exits;
# - `rtplacectl move` of one of the container's own threads (not its
#   process's first, so the daemon finds it through its process's pidfd)
#   and of the container's pid 1 moves those, and only those;
# - pids forged by a client that sends no pidfd (a bare MOVE or QUERY, as
#   a librtplace before pidfds writes them), naming a host process (the
#   test's sleeper, pid 1), are refused with -EXDEV and a reason naming
#   the fix, and leave those processes as they were; so are numbers that
#   do not match the pidfd sent with them.
#
# The container's root file system shows the host's /usr and /etc
# read-only, and the build tree at its own path (the libtool wrappers name
# it). Nothing runs at an RT policy. The container is deleted and the
# daemon killed on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"
require_python_pidfds
python3 -c 'import os; os.close(os.pidfd_open(os.getpid()))' 2>/dev/null || skip "no pidfd_open (Linux 5.3+)"
. "${top_srcdir:-.}/tests/integration/test-oci-common.sh"
# Moves go to CPU 1, which test-hotplug-live takes offline under this lock.
rt_lock

ID=rtplace-test-$$-pidns
oci_start_daemon
oci_run_pidns "$ID" "$SOCKDIR"

# host_tid NSTID: the host tid of the container's init's thread NSTID.
host_tid() {
	for st in /proc/$INIT/task/*/status; do
		if sed -n 's/^NSpid:[[:space:]]*//p' "$st" | awk -v t="$1" '$NF == t { ok = 1 } END { exit !ok }'; then
			basename "$(dirname "$st")"
			return
		fi
	done
}

# sched_of PID: affinity and policy, as the host sees them.
sched_of() {
	python3 -c 'import os, sys; p = int(sys.argv[1]); print(sorted(os.sched_getaffinity(p)), os.sched_getscheduler(p), os.sched_getparam(p).sched_priority)' "$1"
}

HTID=$(host_tid "$CTID")
[ -n "$HTID" ] && [ "$HTID" != "$INIT" ] || fail "no host tid for the container's thread $CTID"
sleep 300 &
SLEEPER=$!
PIDS="$PIDS $SLEEPER"
SLEEPER_BEFORE=$(sched_of $SLEEPER)
ONE_BEFORE=$(sched_of 1)
INIT_BEFORE=$(sched_of $INIT)

# --- A claim owned by a process of the container.
in_container sh -c "'$BUILD/client/rtplace-run' --socket $CSOCK --cpus 1 -- sleep 301 </dev/null >/dev/null 2>&1 &" ||
	fail "rtplace-run in the container: $(cat "$TMP/err.txt")"
wait_claims 1
i=0
until OWNER=$(sed -n 's/^claim [0-9]* \([0-9]*\) .*/\1/p' "$SOCK.claims" 2>/dev/null) && [ -n "$OWNER" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "no owner-bound claim in $SOCK.claims: $(cat "$SOCK.claims" 2>&1)"
	sleep 0.05
done
[ "$(tr '\0' ' ' </proc/$OWNER/cmdline 2>/dev/null)" = "sleep 301 " ] ||
	fail "claim owner $OWNER is not the container's sleep 301: $(tr '\0' ' ' </proc/$OWNER/cmdline 2>&1)"
[ "$(readlink /proc/$OWNER/ns/pid)" = "$(readlink /proc/$INIT/ns/pid)" ] ||
	fail "claim owner $OWNER is not in the container's PID namespace"
kill "$OWNER"
wait_claims 0

# --- Moves of the container's own threads, named as it numbers them.
in_container "$BUILD/client/rtplacectl" --socket $CSOCK move --tid "$CTID" --cpu-list 1 ||
	fail "rtplacectl move --tid $CTID in the container: $(cat "$TMP/out.txt" "$TMP/err.txt")"
grep -q "^thread $CTID: " "$TMP/out.txt" || fail "the reply names another thread: $(cat "$TMP/out.txt")"
[ "$(python3 -c "import os; print(sorted(os.sched_getaffinity($HTID)))")" = "[1]" ] ||
	fail "the container's thread $CTID (host $HTID) was not moved to CPU 1"
[ "$(sched_of $INIT)" = "$INIT_BEFORE" ] || fail "the main thread moved with thread $CTID: $(sched_of $INIT)"
in_container "$BUILD/client/rtplacectl" --socket $CSOCK move --tid 1 --cpu-list 0 ||
	fail "rtplacectl move --tid 1 in the container: $(cat "$TMP/out.txt" "$TMP/err.txt")"
[ "$(python3 -c "import os; print(sorted(os.sched_getaffinity($INIT)))")" = "[0]" ] ||
	fail "the container's pid 1 (host $INIT) was not moved to CPU 0"
[ "$(sched_of 1)" = "$ONE_BEFORE" ] || fail "the host's pid 1 changed: $(sched_of 1), was $ONE_BEFORE"
# A host pid means nothing in there: librtplace finds no such process.
in_container "$BUILD/client/rtplacectl" --socket $CSOCK move --tid $SLEEPER --cpu-list 1 &&
	fail "rtplacectl moved pid $SLEEPER, which the container cannot see"

# --- Forged requests: bare pids (no pidfd), or a pidfd of another process.
# forge KIND PID [pidfd]: sends a MOVE of PID to CPU 1, or a QUERY claiming
# one CPU for owner PID, with a pidfd of the sender itself when asked;
# prints the reply's status and reason.
FORGE='
import os, socket, struct, sys
path, kind, pid, with_pidfd = sys.argv[1], sys.argv[2], int(sys.argv[3]), len(sys.argv) > 4
mask = bytearray(128)
mask[0] = 1 << 1
if kind == "move":
    mtype, body = 0x0105, struct.pack("=iIBB6x", pid, 1, 0, 0) + bytes(mask)
else:
    mtype, body = 0x0101, struct.pack("=BBHIiiIi", 10, 1, 1, 1, -1, -1, 0, pid) + bytes(128)
msg = struct.pack("=IHHIIiI", 0x4c505452, 1, mtype, 24 + len(body), 7, 0, 0) + body
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
if with_pidfd:
    socket.send_fds(s, [msg], [os.pidfd_open(os.getpid())])
else:
    s.send(msg)
r = s.recv(65536)
rtype, status = struct.unpack_from("=H", r, 6)[0], struct.unpack_from("=i", r, 16)[0]
print(status, r[32:96].split(b"\0")[0].decode() if rtype == 0x0200 else "")
'
forge() {
	in_container python3 -c "$FORGE" $CSOCK "$@" || fail "forging $*: $(cat "$TMP/err.txt")"
	cat "$TMP/out.txt"
}
REFUSAL="-18 bare pid from another PID namespace: use librtplace >= "
for target in $SLEEPER 1; do
	got=$(forge move $target)
	case "$got" in "$REFUSAL"*) ;; *) fail "a bare MOVE of host pid $target got: $got" ;; esac
	got=$(forge query $target)
	case "$got" in "$REFUSAL"*) ;; *) fail "a bare QUERY owned by host pid $target got: $got" ;; esac
done
got=$(forge move $SLEEPER pidfd)
[ "$got" = "-3 thread $SLEEPER is not a thread of the pidfd's process" ] ||
	fail "a MOVE of $SLEEPER with another process's pidfd got: $got"
got=$(forge query $SLEEPER pidfd)
[ "$got" = "-22 pid $SLEEPER is not the process of the pidfd sent" ] ||
	fail "a QUERY owned by $SLEEPER with another process's pidfd got: $got"
[ "$(sched_of $SLEEPER)" = "$SLEEPER_BEFORE" ] || fail "the host's sleeper changed: $(sched_of $SLEEPER), was $SLEEPER_BEFORE"
[ "$(sched_of 1)" = "$ONE_BEFORE" ] || fail "the host's pid 1 changed: $(sched_of 1), was $ONE_BEFORE"
[ "$(status_field claims_active)" = 0 ] || fail "a forged QUERY left a claim"

echo "PASS"
