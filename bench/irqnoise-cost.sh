#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Interrupt noise, the two sources side by side (DESIGN §20). Runs as root
# from the build directory:
#
#   sudo bench/irqnoise-cost.sh [SECONDS]        (default 5)
#
# 1. bench/irqnoise-cost --daemons: one /proc/stat sample (read, parse,
#    update, the noisy set) at this host's CPU count and on written files
#    of 480 and 8,192 CPUs; then four live rtplaced with sampling off
#    (irq-window-ms 60000) and its twin (the noise floor), at the default
#    1000 ms and at 100 ms, side by side: their CPU time per second idle
#    over the same SECONDS x 2, and the QUERY round trip interleaved
#    between them, with ratios to off.
# 2. A known softirq load: a loopback UDP flood pinned to CPU 1 (a local
#    send runs NET_RX on the sending CPU) for SECONDS, bounded by timeout
#    from this normal-priority shell, while bench/irqtime-hold holds the
#    irq and softirq tracepoint programs attached and bench/bpf-stats
#    counts their events and ns per event. Printed per CPU: the wall time,
#    what /proc/stat's irq and softirq columns grew by (USER_HZ ticks, as
#    seconds) and what the tracepoints summed, and the programs' share of
#    the flood's CPU time.
set -eu
secs=${1:-5}
[ "$(id -u)" = 0 ] || { echo "irqnoise-cost.sh: needs root (BPF)" >&2; exit 2; }
[ -x bench/irqnoise-cost ] && [ -x bench/irqtime-hold ] && [ -x bench/bpf-stats ] ||
	{ echo "irqnoise-cost.sh: run from the build directory after make" >&2; exit 2; }
tmp=$(mktemp -d /tmp/irqnoise-cost.XXXXXX)
hold=
cleanup() {
	[ -z "$hold" ] || kill "$hold" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "== one /proc/stat sample; the daemon's cost with sampling off and on =="
bench/irqnoise-cost --daemons --seconds $((secs * 2)) 2>"$tmp/daemons.log" ||
	{ cat "$tmp/daemons.log" >&2; exit 1; }

cp "$(dirname "$0")/../tests/lib/udp-flood.py" "$tmp/flood.py"
bench/irqtime-hold >"$tmp/hold" &
hold=$!
i=0
until grep -q '^ids ' "$tmp/hold"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "irqnoise-cost.sh: irqtime-hold did not attach: $(cat "$tmp/hold")" >&2; exit 1; }
	sleep 0.05
done
ids=$(awk '/^ids / { print $2 }' "$tmp/hold")
grep '^cpu[0-9]' /proc/stat >"$tmp/stat0"
t0=$(date +%s.%N)
echo
echo "== the tracepoint programs during a ${secs} s loopback flood pinned to CPU 1 =="
bench/bpf-stats --ids "$ids" -- timeout -s KILL $((secs + 5)) taskset -c 1 python3 "$tmp/flood.py" "$secs"
t1=$(date +%s.%N)
grep '^cpu[0-9]' /proc/stat >"$tmp/stat1"
kill "$hold"
wait "$hold" || true
hold=
echo
echo "== what each source saw =="
python3 - "$tmp/stat0" "$tmp/stat1" "$tmp/hold" "$t0" "$t1" <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
def stat(p):
    return {int(l.split()[0][3:]): [int(x) for x in l.split()[1:]] for l in open(p)}
a, b = stat(sys.argv[1]), stat(sys.argv[2])
bpf = {}
for l in open(sys.argv[3]):
    f = l.split()
    if f[0] == "cpu":
        bpf[int(f[1])] = (int(f[3]) / 1e9, int(f[5]), int(f[7]) / 1e9, int(f[9]))
wall = float(sys.argv[5]) - float(sys.argv[4])
print("wall %.3f s, USER_HZ %d" % (wall, hz))
print("%4s %12s %12s %12s %12s %12s %12s" % ("cpu", "stat irq s", "bpf irq s", "irq events",
                                              "stat sirq s", "bpf sirq s", "sirq events"))
for c in sorted(a):
    d = [(y - x) / hz for x, y in zip(a[c], b[c])]
    i_ns, i_n, s_ns, s_n = bpf.get(c, (0, 0, 0, 0))
    print("%4d %12.3f %12.3f %12d %12.3f %12.3f %12d" % (c, d[5], i_ns, i_n, d[6], s_ns, s_n))
PY
