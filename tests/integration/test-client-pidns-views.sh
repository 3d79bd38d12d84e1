#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What a client in a container's own PID namespace (DESIGN §15) sees, under
# real runc, reaching the daemon through its bind-mounted socket folder:
# - `rtplacectl cpus --json` shows the container's spinner by the pid the
#   container gives it on the CPU it spins on, and a host spinner as 0
#   without a comm, never by a host pid (the host's own rtplacectl shows
#   the host spinner there, so the 0 is a translation, not an absence);
# - `rtplacectl watch --json` shows moves of the container's own thread by
#   its tid in the container, and a claim's expiry by the owner's pid in
#   the container; a move of a host thread is not delivered to it (it
#   could not name that thread, and such records would fill its ring);
# - a MOVE's refusal names the thread by the container's number;
# - `rtplacectl explain --json` shows what runs on each CPU as cpus does.
#
# The spinners run at normal priority, pinned, until the test has seen
# what it needs (at most 180 s: a loaded CI host makes a sample of
# `runc exec` take seconds); the container is deleted and the daemon
# killed on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"
. "${top_srcdir:-.}/tests/integration/test-oci-common.sh"
# Moves go to CPU 1, which test-hotplug-live takes offline under this lock.
rt_lock

ID=rtplace-test-$$-views
oci_start_daemon
CCTL="$BUILD/client/rtplacectl --socket $CSOCK"
"$CTL" --socket "$SOCK" --json status | jq -e '.tracking == true' >/dev/null ||
	skip "the daemon runs without the BPF tracker: CPUS replies carry no pids"

# spin FILE CPU: spins on CPU at normal priority, having written its pid
# (as its namespace numbers it) to FILE, until FILE.stop exists or 180 s
# have passed.
SPIN='
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[2])})
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
end = time.monotonic() + 180
n = 0
while time.monotonic() < end:
    n += 1
    if n % 100000 == 0 and os.path.exists(sys.argv[1] + ".stop"):
        break
'
oci_run_pidns "$ID" "$SOCKDIR"

# host_pid NSPID: the host pid of the container's task NSPID.
host_pid() {
	for st in /proc/[0-9]*/task/*/status; do
		if [ "$(readlink "${st%/status}/ns/pid" 2>/dev/null)" = "$(readlink /proc/$INIT/ns/pid)" ] &&
			sed -n 's/^NSpid:[[:space:]]*//p' "$st" 2>/dev/null | awk -v t="$1" '$NF == t { ok = 1 } END { exit !ok }'; then
			basename "${st%/status}"
			return
		fi
	done
}
HTID=$(host_pid "$CTID")
[ -n "$HTID" ] && [ "$HTID" != "$CTID" ] || fail "no host tid for the container's thread $CTID"

# --- CPUS: the container's spinner on CPU 1, a host spinner on CPU 0.
timeout 60 runc --root "$RUNC_ROOT" exec -d "$ID" python3 -c "$SPIN" /out/cspin 1 >"$TMP/exec.log" 2>&1 ||
	fail "starting the container's spinner: $(cat "$TMP/exec.log")"
python3 -c "$SPIN" "$TMP/hspin" 0 &
PIDS="$PIDS $!"
wait_lines "$TMP/out/cspin" 1
wait_lines "$TMP/hspin" 1
read -r CSPIN <"$TMP/out/cspin"
read -r HSPIN <"$TMP/hspin"
HCSPIN=$(host_pid "$CSPIN")
[ -n "$HCSPIN" ] && [ "$HCSPIN" != "$CSPIN" ] || fail "no host pid for the container's spinner $CSPIN"

# Samples until each view has shown what it must: the running thread is a
# hint, and whatever else runs on a CPU at a sample is shown at times.
# The daemon itself is what runs on its own CPU while it reads the map,
# so it is pinned away from the CPU whose spinner the sample looks for:
# to CPU 0 for the container's view (its spinner on CPU 1), to CPU 1 for
# the host's (its spinner on CPU 0). Unpinned, it ran on CPU 1 at every
# one of 100 samples at times (explain failed so, twice in CI, and in 2 of
# 4 runs on a quiet host).
pin_daemon() { taskset -a -p -c "$1" "$DAEMON" >/dev/null || fail "pinning rtplaced to CPU $1"; }
seen_own='' seen_zero='' seen_host=''
i=0
while [ -z "$seen_own" ] || [ -z "$seen_zero" ] || [ -z "$seen_host" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "after 100 samples: own spinner seen '$seen_own', host CPU shown 0 '$seen_zero'," \
		"host spinner seen by the host '$seen_host'; last: $(cat "$TMP/out.txt")"
	pin_daemon 0
	in_container taskset -c 0 $CCTL --json cpus || fail "rtplacectl cpus in the container: $(cat "$TMP/err.txt")"
	jq -e --argjson h "$HSPIN" --argjson hc "$HCSPIN" '[.cpus[] | select(.pid == $h or .pid == $hc)] == []' \
		"$TMP/out.txt" >/dev/null || fail "the container was shown a host pid ($HSPIN or $HCSPIN): $(cat "$TMP/out.txt")"
	jq -e --argjson c "$CSPIN" '.cpus[] | select(.cpu == 1 and .pid == $c and .comm == "python3")' \
		"$TMP/out.txt" >/dev/null && seen_own=yes
	jq -e '.cpus[] | select(.cpu == 0 and .pid == 0 and .comm == "")' "$TMP/out.txt" >/dev/null && seen_zero=yes
	pin_daemon 1
	"$CTL" --socket "$SOCK" --json cpus >"$TMP/host.txt" || fail "rtplacectl cpus on the host"
	jq -e --argjson h "$HSPIN" '.cpus[] | select(.cpu == 0 and .pid == $h)' "$TMP/host.txt" >/dev/null &&
		seen_host=yes
done

# --- EXPLAIN shows what runs on each CPU as CPUS does.
pin_daemon 0
seen_own=''
i=0
while [ -z "$seen_own" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "after 100 samples explain never showed the container's spinner $CSPIN on CPU 1" \
		"(host pid $HCSPIN, $(kill -0 "$HCSPIN" 2>/dev/null && echo running || echo gone)): $(cat "$TMP/out.txt")"
	in_container taskset -c 0 $CCTL --json explain --prio 50 || fail "rtplacectl explain in the container: $(cat "$TMP/err.txt")"
	jq -e --argjson h "$HSPIN" --argjson hc "$HCSPIN" '[.cpus[] | select(.pid == $h or .pid == $hc)] == []' \
		"$TMP/out.txt" >/dev/null || fail "explain showed the container a host pid ($HSPIN or $HCSPIN): $(cat "$TMP/out.txt")"
	jq -e --argjson c "$CSPIN" '.cpus[] | select(.cpu == 1 and .pid == $c and .comm == "python3")' \
		"$TMP/out.txt" >/dev/null && seen_own=yes
done
touch "$TMP/out/cspin.stop" "$TMP/hspin.stop"
pin_daemon 0-1

# --- Records: the container's watcher, bounded to 40 s.
timeout 60 runc --root "$RUNC_ROOT" exec "$ID" timeout 40 $CCTL --json watch >"$TMP/watch.txt" 2>"$TMP/watch.err" &
WATCH=$!
PIDS="$PIDS $WATCH"
# records_of TID [FILTER]: the watcher's records about TID (and FILTER).
records_of() {
	jq -c --argjson t "$1" "select(.tid == \$t ${2:+and $2})" "$TMP/watch.txt" 2>/dev/null
}
# JSON has no header: move until the watcher has printed its record.
i=0
until [ -n "$(records_of "$CTID" '.type == "moved"')" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the container's watcher shows no move of its thread $CTID (host $HTID):" \
		"$(cat "$TMP/watch.txt" "$TMP/watch.err")"
	in_container $CCTL move --tid "$CTID" --cpu-list 0 || fail "move --tid $CTID: $(cat "$TMP/err.txt")"
	sleep 0.1
done
# A host thread's move, then the container's thread again: records arrive
# in order, so once the second is there the first would be too.
sleep 300 &
SLEEPER=$!
PIDS="$PIDS $SLEEPER"
"$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list 1 >/dev/null || fail "host move of $SLEEPER"
in_container $CCTL move --tid "$CTID" --cpu-list 1 || fail "move --tid $CTID: $(cat "$TMP/err.txt")"
i=0
until [ -n "$(records_of "$CTID" '.type == "moved" and .to_cpu == 1')" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "no record of the move of $CTID to CPU 1: $(cat "$TMP/watch.txt")"
	sleep 0.05
done
[ -z "$(records_of "$SLEEPER")" ] && [ -z "$(records_of "$HTID")" ] && [ -z "$(records_of 0 '.type == "moved"')" ] ||
	fail "the container's watcher got a record about a host thread or by a host tid: $(cat "$TMP/watch.txt")"

# A refusal names the thread by the container's number: nobody in there
# (in root's group, which the socket admits) may not move root's thread.
timeout 60 runc --root "$RUNC_ROOT" exec --user 65534:0 "$ID" $CCTL move --tid "$CTID" --cpu-list 1 \
	>"$TMP/out.txt" 2>"$TMP/err.txt" && fail "nobody in the container moved root's thread $CTID"
grep -q "thread $CTID belongs to uid 0, not 65534" "$TMP/err.txt" ||
	fail "the refusal does not name thread $CTID as the container numbers it: $(cat "$TMP/err.txt")"

# A claim owned by a process of the container, with a lease: its expiry
# names the owner (the shell, rtplacectl's parent) by its container pid.
in_container sh -c "echo \$\$ >/out/owner; $CCTL query --prio 1 --cpus 1 --claim 200 >/dev/null && sleep 3" ||
	fail "a claim in the container: $(cat "$TMP/err.txt")"
read -r OWNER <"$TMP/out/owner"
i=0
until [ -n "$(records_of "$OWNER" '.type == "claim-expired"')" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "no claim-expired record naming owner $OWNER: $(cat "$TMP/watch.txt")"
	sleep 0.05
done

echo "PASS"
