#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplaced in a container, as a Kubernetes DaemonSet runs it (DESIGN §15;
# contrib/kubernetes/rtplaced-daemonset.yaml is this configuration
# translated): under real runc, in the host PID namespace, with only the
# capabilities of its systemd unit, /sys/kernel/btf and the socket's folder
# bind-mounted. Clients on the host are served: the BPF tracker runs, a
# claim owned by a host process ends when that process exits, the daemon
# moves a host thread, and it stops cleanly on SIGTERM. Nothing spins at
# RT: the host threads are sleeping processes.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

# contrib/kubernetes/rtplaced-daemonset.yaml says what this test runs:
# the host PID namespace, the unit's capabilities (all dropped, then these),
# no privilege escalation, a read-only root, /sys/kernel/btf and
# /run/rtplace from the host, the socket there, liveness by `rtplacectl
# status`.
python3 -c "import yaml" 2>/dev/null || skip "python3-yaml is not installed (apt-get install python3-yaml)"
python3 - "$top_srcdir/contrib/kubernetes/rtplaced-daemonset.yaml" "$top_srcdir/systemd/rtplaced.service.in" <<'PY' ||
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
unit_caps = next(l.split("=", 1)[1].split() for l in open(sys.argv[2]) if l.startswith("CapabilityBoundingSet="))
ds = next(d for d in docs if d["kind"] == "DaemonSet")
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
sc = c["securityContext"]
assert pod["hostPID"] is True, "hostPID"
assert sc["capabilities"]["drop"] == ["ALL"], "drop ALL"
assert sorted("CAP_" + x for x in sc["capabilities"]["add"]) == sorted(unit_caps), "capabilities differ from the unit's"
assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True and not sc.get("privileged")
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
host = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
assert host[next(n for n, p in mounts.items() if p == "/sys/kernel/btf")] == "/sys/kernel/btf", "btf"
assert host[next(n for n, p in mounts.items() if p == "/run/rtplace")] == "/run/rtplace", "socket folder"
assert c["args"][:2] == ["--socket", "/run/rtplace/rtplaced.sock"], "socket path"
probe = c["livenessProbe"]["exec"]["command"]
assert probe[0] == "rtplacectl" and probe[-1] == "status", "liveness"
PY
	fail "contrib/kubernetes/rtplaced-daemonset.yaml does not mirror the tested configuration"

require_root
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"
[ -r /sys/kernel/btf/vmlinux ] || skip "no /sys/kernel/btf/vmlinux (the tracker needs BTF)"
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || skip "needs 2 CPUs"
. "${top_srcdir:-.}/tests/integration/test-oci-common.sh"

DAEMON_BIN=$(cd "$top_builddir/daemon" && pwd)/rtplaced
ID=rtplaced-test-$$
B=$TMP/bundle
RUNDIR=$TMP/run-rtplace
mkdir -p "$RUNDIR" && chmod 755 "$RUNDIR"
printf '[placement]\nhousekeeping-cpus =\n' >"$RUNDIR/rtplaced.conf"
SOCK=$RUNDIR/rtplaced.sock

# The capabilities of systemd/rtplaced.service, nothing more.
CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$top_srcdir/systemd/rtplaced.service.in")
[ -n "$CAPS" ] || fail "no CapabilityBoundingSet in rtplaced.service.in"
# runc cannot grant what it does not hold: a test that runs in a sandbox
# whose bounding set lacks one of them (CAP_SYS_RESOURCE, often) leaves it
# out, and says so; the daemon needs it only on kernels that charge BPF
# maps to RLIMIT_MEMLOCK (before 5.11).
if command -v capsh >/dev/null; then
	held=$(capsh --decode="$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)" | sed 's/.*=//' | tr a-z A-Z)
	for c in $CAPS; do
		case ",$held," in
		*",$c,"*) ;;
		*)
			echo "note: this test's bounding set lacks $c; the container runs without it" >&2
			CAPS=$(printf '%s\n' $CAPS | grep -vx "$c")
			;;
		esac
	done
fi
CAPS_JSON=$(printf '%s\n' $CAPS | jq -R . | jq -sc .)

binds=$(oci_bundle "$B") || exit 1
touch "$B/rootfs/rtplaced"
mkdir -p "$B/rootfs/run/rtplace"
oci_edit "$B" --arg bin "$DAEMON_BIN" --arg run "$RUNDIR" --argjson caps "$CAPS_JSON" \
	--arg cg "/$ID" --argjson binds "$binds" '
	.process.terminal = false
	| .process.args = ["/rtplaced", "--socket", "/run/rtplace/rtplaced.sock",
			   "--config", "/run/rtplace/rtplaced.conf"]
	| .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps}
	| .process.noNewPrivileges = true
	| .root.readonly = true
	| .linux.namespaces -= [{type: "pid"}]
	| .linux.cgroupsPath = $cg
	| .mounts += [{destination: "/rtplaced", type: "bind", source: $bin, options: ["bind", "ro"]},
		      {destination: "/sys/kernel/btf", type: "bind", source: "/sys/kernel/btf", options: ["rbind", "ro"]},
		      {destination: "/run/rtplace", type: "bind", source: $run, options: ["rbind", "rw"]}]
	| '"$OCI_BIND_HOST"

CONTAINERS=$ID
timeout 60 runc --root "$RUNC_ROOT" run -d --bundle "$B" "$ID" >"$TMP/rtplaced.log" 2>&1 ||
	fail "runc run: $(cat "$TMP/rtplaced.log")"
i=0
until "$CTL" --socket "$SOCK" status >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 400 ] || fail "rtplaced in the container did not answer"
	timeout 10 runc --root "$RUNC_ROOT" state "$ID" 2>/dev/null | grep -q '"status": "running"' ||
		fail "rtplaced in the container exited at start"
	sleep 0.05
done
[ "$(status_field tracking)" = True ] || fail "the containerised daemon does not track (no BPF?)"
[ "$(status_field moves_served)" = True ] || fail "the containerised daemon does not serve moves"

# A claim owned by a host process, ended by its exit: the daemon sees host
# pids.
"$RUN" --socket "$SOCK" --cpus 1 -- sleep 30 &
OWNER=$!
PIDS="$PIDS $OWNER"
wait_claims 1
kill "$OWNER"
wait "$OWNER" 2>/dev/null
wait_claims 0

# A move of a host thread: CAP_SYS_NICE in the container is enough. It
# goes to CPU 1, which must stay online meanwhile (test-hotplug-live).
rt_lock
sleep 30 &
SLEEPER=$!
PIDS="$PIDS $SLEEPER"
expect_status 0 "$CTL" --socket "$SOCK" move --tid $SLEEPER --cpu-list 1
[ "$(python3 -c "import os; print(sorted(os.sched_getaffinity($SLEEPER)))")" = "[1]" ] ||
	fail "the host thread was not moved: $(cat "$TMP/out" "$TMP/err")"
expect_status 0 "$CTL" --socket "$SOCK" move --tid $SLEEPER --prio 10 --policy rr --cpu-list 0
[ "$(chrt -p $SLEEPER | sed -n 's/.*policy: //p')" = SCHED_RR ] || fail "no RT policy: $(chrt -p $SLEEPER)"

# SIGTERM stops it cleanly; runc reports the container stopped.
timeout 10 runc --root "$RUNC_ROOT" kill "$ID" TERM || fail "runc kill"
i=0
until timeout 10 runc --root "$RUNC_ROOT" state "$ID" 2>/dev/null | grep -q '"status": "stopped"'; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "rtplaced did not stop on SIGTERM"
	sleep 0.05
done
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
grep -q "rtplaced $version listening on /run/rtplace/rtplaced.sock" "$TMP/rtplaced.log" ||
	fail "no listening line in the daemon's log"

echo "PASS"
