#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The time-by-class views against a real rtplaced: `rtplacectl top` on the
# simulated 480-CPU machine (compact cells, no line wider than the
# terminal, one JSON document per frame with every CPU), `cpus --svg`
# (well-formed XML, one titled shape per CPU, claims in the titles), the
# time by class in `cpus` and `top` of a live daemon (root), and the
# one-line usage errors (exit 64) of the new options.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

start_daemon
"$CTL" --socket "$SOCK" query --prio 50 --count 2 --cpu-list 7,300 --claim 0 >/dev/null ||
	fail "claiming CPUs 7 and 300"

# Usage errors: one line, exit 64, before connecting.
for args in "top -d 0" "top -d x" "top -d" "top -n 0" "top -n -1" "top extra" "top --frames 2" \
	"cpus --interval 0" "cpus --interval 1e9" "cpus --interval nan" "cpus --svg --json" \
	"cpus --svg --interval 1"; do
	# shellcheck disable=SC2086
	expect_status 64 "$CTL" --socket "$SOCK" $args
	[ "$(wc -l <"$TMP/err")" = 1 ] || fail "'$args': not one line: $(cat "$TMP/err")"
done
expect_status 0 "$CTL" top --help
grep -q -- '--delay SECONDS' "$TMP/out" || fail "top --help: $(cat "$TMP/out")"

# Batch frames at several widths: every line fits, every CPU is shown.
for cols in 80 132 40; do
	COLUMNS=$cols expect_status 0 "$CTL" --socket "$SOCK" top -b -n 2 -d 0.1
	awk -v w="$cols" 'length($0) > w { bad++ } END { exit bad > 0 }' "$TMP/out" ||
		fail "top at $cols columns printed a wider line: $(awk -v w="$cols" 'length($0) > w' "$TMP/out" | head -3)"
	[ "$(grep -c '^rtplace top: 480 CPUs' "$TMP/out")" = 2 ] || fail "top -n 2 did not print 2 frames"
	# Cells start with the CPU id: 480 ids per frame, each once.
	python3 - "$TMP/out" <<'PY' || fail "top at $cols columns does not show each CPU once per frame"
import re, sys
frames = open(sys.argv[1]).read().split("rtplace top:")[1:]
for f in frames:
    ids = [int(m) for m in re.findall(r"(?:^|  )\s*(\d+) (?:idle|norm|rt\d+|dl|off)", f, re.M)]
    assert sorted(ids) == list(range(480)), (len(ids), sorted(set(range(480)) - set(ids))[:5])
PY
done

# JSON: one document per frame, one line each.
expect_status 0 "$CTL" --socket "$SOCK" --json top -n 3 -d 0.1
[ "$(wc -l <"$TMP/out")" = 3 ] || fail "top --json -n 3 printed $(wc -l <"$TMP/out") lines"
python3 - "$TMP/out" <<'PY' || fail "top --json frames: $(head -c 300 "$TMP/out")"
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    assert 0.05 < d["interval_s"] < 5, d["interval_s"]
    assert d["claims_active"] == 1 and d["tracking"] is False
    # counted from the notification records top subscribed to
    assert d["collisions"] == 0, d["collisions"]
    cpus = d["cpus"]
    assert sorted(c["cpu"] for c in cpus) == list(range(480))
    for c in cpus:
        assert {"level", "idle", "normal", "rt", "dl", "claim", "node", "llc"} <= set(c)
        # simulated levels: no time by class
        assert c["idle"] is None and c["rt"] is None
    claimed = {c["cpu"]: c["claim_level"] for c in cpus if c["claim"]}
    assert claimed == {7: "rt50", 300: "rt50"}, claimed
PY

# SIGTERM and SIGINT end top between frames with status 0, the frames
# already printed whole.
for sig in TERM INT; do
	"$CTL" --socket "$SOCK" --json top -d 0.2 >"$TMP/top.$sig" 2>"$TMP/err" &
	top=$!
	wait_lines "$TMP/top.$sig" 2
	kill -$sig $top
	wait $top
	st=$?
	[ $st = 0 ] || fail "top exited $st on SIG$sig: $(cat "$TMP/err")"
	python3 -c "import json, sys; [json.loads(l) for l in open(sys.argv[1])]" "$TMP/top.$sig" ||
		fail "top left a partial frame on SIG$sig"
done

# Without the tracker `cpus` shows no shares, and --interval says why.
COLUMNS=160 expect_status 0 "$CTL" --socket "$SOCK" cpus
grep -q '^ *7 .* rt50 .*  -  *-  *-  *-  *-  *- online' "$TMP/out" || fail "cpus table row 7: $(grep '^ *7 ' "$TMP/out")"
expect_status 69 "$CTL" --socket "$SOCK" cpus --interval 0.1
grep -q 'no time by class' "$TMP/err" || fail "cpus --interval without tracker: $(cat "$TMP/err")"

# The picture: XML, one titled CPU square per CPU, the claims named.
expect_status 0 "$CTL" --socket "$SOCK" cpus --svg
python3 - "$TMP/out" <<'PY' || fail "cpus --svg: not the picture wanted"
import re, sys
import xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg"
titles = {}
for r in root.iter(ns + "rect"):
    t = r.find(ns + "title")
    if t is not None:
        m = re.match(r"CPU (\d+): (\S+), ", t.text)
        assert m, t.text
        titles[int(m.group(1))] = t.text
assert sorted(titles) == list(range(480)), len(titles)
assert "claim" in titles[7] and "at rt50" in titles[300], (titles[7], titles[300])
assert "no claim" in titles[8]
labels = [t.text for t in root.iter(ns + "text")]
assert {"package 0", "package 1", "node 0", "node 1", "LLC 1"} <= set(labels), labels[:10]
PY
stop_daemon

# A daemon older than CPU_TIMES and the CPUS package flag (a fake one
# speaking protocol version 1 as it was): librtplace asks again without
# the flag, `cpus` shows no shares and no packages, the picture draws no
# package boxes.
python3 - "$TMP/old.sock" "$TMP/old.ready" <<'PY' &
import os, socket, struct, sys
HDR = struct.Struct("=IHHIIiI")
MAGIC, CPUS, CPUS_REPLY, ERROR = 0x4c505452, 0x0103, 0x0203, 0x0200
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(8)
open(sys.argv[2], "w").close()
def send(c, typ, rid, status, body):
    c.send(HDR.pack(MAGIC, 1, typ, HDR.size + len(body), rid, status, 0) + body)
def error(c, typ, rid, errno, reason):
    send(c, ERROR, rid, -errno, struct.pack("=H6x64s", typ, reason.encode()))
while True:
    c, _ = s.accept()
    while True:
        m = c.recv(65536)
        if not m:
            break
        _, _, typ, _, rid, _, _ = HDR.unpack_from(m)
        if typ == CPUS and struct.unpack_from("=II", m, HDR.size)[1]:
            error(c, typ, rid, 22, "reserved field not zero")
        elif typ == CPUS:
            cpus = b"".join(struct.pack("=HBBiiiiIQBB6x16s", i, 1, 1, 0, 0, i, 0, 0, 0, 0, 0, b"")
                            for i in range(2))
            send(c, CPUS_REPLY, rid, 0, struct.pack("=IIII", 2, 0, 2, 0) + cpus + bytes(56 * 126))
        else:
            error(c, typ, rid, 95, "unknown message type")
    c.close()
PY
PIDS="$PIDS $!"
wait_lines "$TMP/old.ready" 0
expect_status 0 "$CTL" --socket "$TMP/old.sock" --json cpus
python3 - "$TMP/out" <<'PY' || fail "cpus from an old daemon: $(cat "$TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert [c["cpu"] for c in d["cpus"]] == [0, 1]
for c in d["cpus"]:
    assert c["package"] == -1 and c["node"] == 0 and c["idle"] is None, c
PY
expect_status 69 "$CTL" --socket "$TMP/old.sock" cpus --interval 0.1
expect_status 0 "$CTL" --socket "$TMP/old.sock" cpus --svg
grep -q '<title>CPU 1: idle' "$TMP/out" || fail "svg from an old daemon: $(head -c 300 "$TMP/out")"
! grep -q '>package ' "$TMP/out" || fail "svg from an old daemon draws packages"

# Live (root): the tracker's time by class in both views.
[ "$(id -u)" = 0 ] || exit 0
start_live_daemon
expect_status 0 "$CTL" --socket "$SOCK" --json cpus --interval 0.3
python3 - "$TMP/out" <<'PY' || fail "cpus --interval --json: $(cat "$TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["interval_s"] - 0.3) < 1e-9
for c in d["cpus"]:
    if c["online"]:
        assert abs(c["idle"] + c["normal"] + c["rt"] + c["dl"] - 1) < 0.01, c
PY
expect_status 0 "$CTL" --socket "$SOCK" --json top -n 1 -d 0.3
python3 - "$TMP/out" <<'PY' || fail "top --json live: $(cat "$TMP/out")"
import json, sys
d = json.loads(open(sys.argv[1]).readline())
assert d["tracking"] is True
# counted from the notification records top subscribed to
assert isinstance(d["collisions"], int) and d["collisions"] >= 0, d["collisions"]
for c in d["cpus"]:
    if c["online"]:
        assert abs(c["idle"] + c["normal"] + c["rt"] + c["dl"] - 1) < 0.01, c
PY

# A FIFO task on CPU 1 (bursts of 200 us between 1 ms sleeps, ending itself
# after 4 s; CPU 1 only, under the RT-test lock) shows as rt time there.
[ "$(getconf _NPROCESSORS_CONF)" -ge 2 ] || exit 0
rt_lock
taskset -c 1 chrt -f 50 "$SPIN" 4 &
spin=$!
PIDS="$PIDS $spin"
expect_status 0 "$CTL" --socket "$SOCK" --json top -n 1 -d 1.5
kill $spin 2>/dev/null
wait $spin
python3 - "$TMP/out" <<'PY' || fail "top --json with a FIFO task on CPU 1: $(cat "$TMP/out")"
import json, sys
d = json.loads(open(sys.argv[1]).readline())
cpu1 = [c for c in d["cpus"] if c["cpu"] == 1][0]
print("# CPU 1 with a FIFO task:", cpu1, file=sys.stderr)
assert cpu1["rt"] >= 0.05, cpu1
PY

# The host's isolated and nohz_full CPUs (DESIGN §20) in top (text and
# JSON) and the SVG, from a simulated daemon on a fixture --host-root.
stop_daemon
HOST=$TMP/host
mkdir -p "$HOST/sys/devices/system/cpu"
echo "2-3" >"$HOST/sys/devices/system/cpu/isolated"
echo "3-4" >"$HOST/sys/devices/system/cpu/nohz_full"
start_daemon --host-root "$HOST"
COLUMNS=80 expect_status 0 "$CTL" --socket "$SOCK" top --batch --iterations 1
# 480 CPUs: the compact cells, the mark right after the CPU number.
for want in ' 2iidle' ' 3bidle' ' 4nidle' ' 5 idle'; do
	grep -q -- "$want" "$TMP/out" || fail "top does not mark CPU '$want': $(head -c 600 "$TMP/out")"
done
expect_status 0 "$CTL" --socket "$SOCK" --json top --iterations 1
python3 - "$TMP/out" <<'PY' || fail "top --json: isolated/nohz_full: $(head -c 600 "$TMP/out")"
import json, sys
cpus = {c["cpu"]: c for c in json.loads(open(sys.argv[1]).readline())["cpus"]}
assert [c for c in cpus if cpus[c]["isolated"]] == [2, 3], cpus[2]
assert sorted(c for c in cpus if cpus[c]["nohz_full"]) == [3, 4], cpus[3]
PY
expect_status 0 "$CTL" --socket "$SOCK" cpus --svg
grep -q '<title>CPU 3: [^<]*, isolated, nohz_full</title>' "$TMP/out" || fail "svg: CPU 3 not marked"
grep -q '<title>CPU 2: [^<]*, isolated</title>' "$TMP/out" || fail "svg: CPU 2 not marked"
! grep -q '<title>CPU 5: [^<]*isolated' "$TMP/out" || fail "svg marks CPU 5"

# A CPU busy with a normal task from before the daemon started never
# changes class: its time counts from the start all the same, in the class
# of the level seeded from /proc (a busy loop on CPU 1, bounded, under the
# lock that keeps other tests' RT threads off CPU 1).
stop_daemon
timeout 20 taskset -c 1 sh -c 'while :; do :; done' &
busy=$!
PIDS="$PIDS $busy"
start_live_daemon
expect_status 0 "$CTL" --socket "$SOCK" --json cpus --interval 0.5
kill $busy 2>/dev/null
python3 - "$TMP/out" <<'PY' || fail "cpus --interval with CPU 1 busy since before the start: $(cat "$TMP/out")"
import json, sys
cpu1 = [c for c in json.load(open(sys.argv[1]))["cpus"] if c["cpu"] == 1][0]
assert cpu1["normal"] is not None and cpu1["normal"] >= 0.5, cpu1
PY
exit 0
