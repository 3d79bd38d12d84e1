#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Isolation as records (root, real IRQs and workqueue mask): with
# [isolation] irqs and workqueues on, `rtplacectl watch --json` sees an
# isolated claim on CPU 1 as claim-created then isolated (the claim's id,
# its first CPU, irqs and workqueues taken away), and its end as released
# (why: release; owner-exit after a kill -9 of the owner; stop when the
# daemon stops) before claim-released, in the shape rtplacectl(1) documents.
# The table names them too. A claim
# without --isolate has no isolation record. The machine's affinities and
# mask are saved first and written back on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
wq=/sys/devices/virtual/workqueue/cpumask
[ -w "$wq" ] || skip "no unbound workqueue mask at $wq"
[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || skip "needs CPUs 0 and 1 online"
rt_lock

. "${top_srcdir:-.}/tests/lib/host-isolation.sh"
host_save
trap 'host_restore; cleanup' EXIT

printf '[isolation]\nirqs = yes\nworkqueues = yes\n' > "$TMP/iso.conf"
start_live_daemon --config "$TMP/iso.conf"

# watch_start NAME: `watch --json` into $TMP/NAME, subscribed once it saw
# a claim made after it started (made and released).
watch_start() {
	"$CTL" --socket "$SOCK" --json watch > "$TMP/$1" 2> "$TMP/$1.err" &
	WATCH=$!
	PIDS="$PIDS $WATCH"
	i=0
	until [ -s "$TMP/$1" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "watch printed no record: $(cat "$TMP/$1.err")"
		"$CTL" --socket "$SOCK" query --prio 50 -c 0 --claim 1000 > "$TMP/probe" 2>&1 ||
			fail "the probe claim failed: $(cat "$TMP/probe")"
		"$CTL" --socket "$SOCK" release "$(sed -n 's/^claim *\([0-9]*\) .*/\1/p' "$TMP/probe")" > /dev/null ||
			fail "cannot release the probe claim"
		sleep 0.05
	done
}

# check NAME ID WHY: the records of claim ID in $TMP/NAME are, in order,
# claim-created, isolated (CPU 1, irqs and workqueues), released (WHY),
# claim-released.
check() {
	python3 -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mine = [r for r in recs if r.get('claim') == int(sys.argv[2])]
types = [r['type'] for r in mine]
assert types == ['claim-created', 'isolated', 'released', 'claim-released'], types
iso, rel = mine[1], mine[2]
assert iso['to_cpu'] == 1 and iso['from_cpu'] == -1, iso
assert 'irqs' in iso['isolated'] and 'workqueues' in iso['isolated'], iso
assert 'partition' not in iso['isolated'], iso
assert rel['from_cpu'] == 1 and rel['why'] == sys.argv[3], rel
" "$TMP/$1" "$2" "$3" || fail "$1: records of claim $2: $(cat "$TMP/$1")"
}

claim_id() {
	sed -n 's/^claim *\([0-9]*\) .*/\1/p' "$TMP/out"
}

sleep 600 & OWNER=$!
PIDS="$PIDS $OWNER"

# Released.
watch_start w-release
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
id=$(claim_id)
expect_status 0 "$CTL" --socket "$SOCK" release "$id"
wait_grep '"claim-released".*"claim": '"$id}" "$TMP/w-release" "no claim-released record" "$TMP/w-release"
check w-release "$id" release
# A plain claim has none.
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER
plain=$(claim_id)
expect_status 0 "$CTL" --socket "$SOCK" release "$plain"
wait_grep '"claim-released".*"claim": '"$plain}" "$TMP/w-release" "no claim-released record" "$TMP/w-release"
! grep -q '"type": "isolated".*"claim": '"$plain}" "$TMP/w-release" || fail "a plain claim was isolated"
kill "$WATCH"

# The owner killed with SIGKILL; the table's words.
"$CTL" --socket "$SOCK" watch > "$TMP/w-table" 2> "$TMP/w-table.err" &
PIDS="$PIDS $!"
wait_lines "$TMP/w-table" 1
watch_start w-kill
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
id=$(claim_id)
kill -9 "$OWNER"
wait "$OWNER" 2>/dev/null
wait_grep '"claim-released".*"claim": '"$id}" "$TMP/w-kill" "no claim-released record after kill -9" "$TMP/w-kill"
check w-kill "$id" owner-exit
python3 "$top_srcdir/tests/lib/json-shapes.py" "$top_srcdir/man/rtplacectl.1" record "$TMP/w-kill" ||
	fail "the records' JSON is not the shape rtplacectl(1) documents: $(cat "$TMP/w-kill")"
wait_grep " released .* $id why=owner-exit\$" "$TMP/w-table" "the table's released line" "$TMP/w-table"
grep -q " isolated .* $id took=irqs,workqueues" "$TMP/w-table" || fail "the table's isolated line: $(cat "$TMP/w-table")"

# The daemon's stop gives the CPUs back while the watcher still listens.
sleep 600 & OWNER=$!
PIDS="$PIDS $OWNER"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
id=$(claim_id)
wait_grep '"isolated".*"claim": '"$id}" "$TMP/w-kill" "no isolated record" "$TMP/w-kill"
stop_daemon
wait_grep '"released".*"claim": '"$id}" "$TMP/w-kill" "no released record at stop" "$TMP/w-kill"
grep '"released".*"claim": '"$id}" "$TMP/w-kill" | grep -q '"why": "stop"' || fail "stop: $(cat "$TMP/w-kill")"
[ "$(cat "$wq")" = "$(cat "$SAVED/wq")" ] || fail "the workqueue mask is not back after the stop"
echo "PASS: isolated and released records for a release, an owner's kill -9 and the daemon's stop"
