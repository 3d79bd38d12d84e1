#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The host's RT configuration (DESIGN §20) end to end, without root: a
# simulated 480-CPU rtplaced reads a fixture host (--host-root) whose
# isolated and nohz_full lists name the lowest CPU this test may run on and
# 100-103, and whose RT throttling is off. RT claims take the isolated CPUs
# first, a normal-level claim (rtplace-run without --prio) keeps off them,
# and status, cpus and the metrics show the sets and the throttling; after
# SIGHUP, the new throttling values. Without the feature the claims land on
# the lowest CPUs and every check of the sets fails. The CPUs not isolated
# are the housekeeping set (housekeeping-cpus is unset).
. "$top_srcdir/tests/integration/test-client-common.sh"

ncpus=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
[ "$ncpus" -ge 2 ] || skip "a normal-level claim needs 2 CPUs to choose from, this test may use $ncpus"
# The lowest CPU of this test's affinity: without isolation it is what
# rtplace-run gets, so keeping off it is the rule at work.
low=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
[ "$low" -lt 100 ] || skip "this test's lowest CPU $low is not below 100"

HOST=$TMP/host
mkdir -p "$HOST/sys/devices/system/cpu" "$HOST/proc/sys/kernel"
echo "$low,100-103" >"$HOST/sys/devices/system/cpu/isolated"
echo "100-103" >"$HOST/sys/devices/system/cpu/nohz_full"
echo -1 >"$HOST/proc/sys/kernel/sched_rt_runtime_us"
echo 1000000 >"$HOST/proc/sys/kernel/sched_rt_period_us"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '[metrics]\nlisten = 127.0.0.1:%s\n' "$PORT" >"$TMP/host.conf"
start_daemon --config "$TMP/host.conf" --host-root "$HOST"

# A normal-level claim keeps off isolated CPUs, here the one it would get.
for i in 1 2 3 4 5; do
	expect_status 0 "$RUN" --socket "$SOCK" --cpus 1 -- sh -c 'echo "$RTPLACE_CPUS"'
	[ "$(cat "$TMP/out")" != "$low" ] || fail "a normal-level claim took isolated CPU $low (run $i)"
done

# RT claims take the isolated CPUs first, all five of them.
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --count 5 --claim 0 --owner $$
python3 -c "
import json
d = json.load(open('$TMP/out'))
got = sorted(c['cpu'] for c in d['cpus'])
assert got == [$low, 100, 101, 102, 103], got
" || fail "the RT claim is not on the isolated CPUs: $(cat "$TMP/out")"
claim=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
expect_status 0 "$CTL" --socket "$SOCK" release "$claim"

expect_status 0 "$CTL" --socket "$SOCK" status
grep -q "^isolated  *$low,100-103\$" "$TMP/out" || fail "status isolated: $(cat "$TMP/out")"
grep -q "^nohz_full  *100-103\$" "$TMP/out" || fail "status nohz_full: $(cat "$TMP/out")"
grep -q "^rt throttling  *off" "$TMP/out" || fail "status throttling: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" --json status
python3 -c "
import json
d = json.load(open('$TMP/out'))
assert d['isolated'] == '$low,100-103' and d['nohz_full'] == '100-103', d
assert d['rt_runtime_us'] == -1 and d['rt_period_us'] == 1000000, d
" || fail "status JSON: $(cat "$TMP/out")"

expect_status 0 "$CTL" --socket "$SOCK" --json cpus
python3 -c "
import json
d = json.load(open('$TMP/out'))
iso = [c['cpu'] for c in d['cpus'] if c['isolated']]
nohz = [c['cpu'] for c in d['cpus'] if c['nohz_full']]
assert iso == [$low, 100, 101, 102, 103], iso
assert nohz == [100, 101, 102, 103], nohz
" || fail "cpus JSON flags"
# The whole table on a wide terminal; in 80 columns FLAGS names only what
# is not plain online.
COLUMNS=160 expect_status 0 "$CTL" --socket "$SOCK" cpus
grep -q "^ *101 .* online,isolated,nohz_full\$" "$TMP/out" || fail "cpus table: $(grep '^ *101 ' "$TMP/out")"
grep -q "^ *$low .* online,isolated\$" "$TMP/out" || fail "cpus table: $(grep "^ *$low " "$TMP/out")"
grep -q "^ *104 .* online,housekeeping$" "$TMP/out" || fail "cpus table: $(grep '^ *104 ' "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" cpus
grep -q "^ *101 .* iso,nohz\$" "$TMP/out" || fail "cpus in 80 columns: $(grep '^ *101 ' "$TMP/out")"
grep -q "^ *104 .* hk\$" "$TMP/out" || fail "cpus in 80 columns: $(grep '^ *104 ' "$TMP/out")"

metrics() {
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
		"http://127.0.0.1:$PORT/metrics" >"$TMP/metrics" || fail "GET /metrics failed"
}
metrics
[ "$(grep -c '^rtplace_cpu_isolated{cpu="[0-9]*"} 1$' "$TMP/metrics")" = 5 ] || fail "not 5 isolated CPUs in the metrics"
grep -q '^rtplace_cpu_isolated{cpu="102"} 1$' "$TMP/metrics" || fail "CPU 102 not isolated in the metrics"
[ "$(grep -c '^rtplace_cpu_nohz_full{cpu="[0-9]*"} 1$' "$TMP/metrics")" = 4 ] || fail "not 4 nohz_full CPUs in the metrics"
grep -q '^rtplace_sched_rt_runtime_seconds -1$' "$TMP/metrics" || fail "runtime metric: $(grep rt_runtime "$TMP/metrics")"
grep -q '^rtplace_sched_rt_period_seconds 1.000000$' "$TMP/metrics" || fail "period metric: $(grep rt_period "$TMP/metrics")"

# SIGHUP reads the host again.
echo 950000 >"$HOST/proc/sys/kernel/sched_rt_runtime_us"
kill -HUP "$DAEMON"
i=0
until "$CTL" --socket "$SOCK" status | grep -q "^rt throttling  *950000 us of every 1000000 us\$"; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "status after SIGHUP: $("$CTL" --socket "$SOCK" status 2>&1)"
	sleep 0.05
done
# (the daemon builds the page at most every 100 ms: the scrape above may
# be what a scrape right after the reload reads)
i=0
until metrics && grep -q '^rtplace_sched_rt_runtime_seconds 0.950000$' "$TMP/metrics"; do
	i=$((i + 1))
	[ $i -lt 20 ] || fail "runtime metric after SIGHUP: $(grep rt_runtime "$TMP/metrics")"
	sleep 0.1
done
stop_daemon
