#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every command's --json output has the shape rtplacectl(1) documents in
# JSON OUTPUT, the same object for the same concept across commands (a
# claim in query and claims, a CPU in cpus and top), and an error under
# --json is a JSON document on stdout too (simulated daemon; with root,
# move against a live one).
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

MAN=$top_srcdir/man/rtplacectl.1
SHAPES="python3 $top_srcdir/tests/lib/json-shapes.py"

# shape NAME: $TMP/out has the documented shape NAME.
shape() {
	$SHAPES "$MAN" "$1" "$TMP/out" || fail "$1: $(head -c 600 "$TMP/out")"
}

start_daemon
# The watcher sees the claims made below, one record each.
"$CTL" --socket "$SOCK" --json watch --count 3 >"$TMP/watch" 2>"$TMP/watch.err" &
W=$!
PIDS="$PIDS $W"
i=0
until [ "$(status_field clients)" -ge 2 ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "the watcher did not subscribe: $(cat "$TMP/watch.err")"
	sleep 0.05
done

expect_status 0 "$CTL" --socket "$SOCK" --json status
shape status
expect_status 0 "$CTL" --socket "$SOCK" --json cpus
shape cpus
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --count 2
shape query
expect_status 0 "$CTL" --socket "$SOCK" --json explain --prio 50 --count 2 --cpu-list 0-7
shape explain
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --count 2 --claim 600000 --owner $$
shape query
claim=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['claim']['id'])" "$TMP/out")
cp "$TMP/out" "$TMP/query"
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 60 --cpu-list 7 --claim 0 --exclusive --owner $$
shape query
# A claimed CPU, a claim's level and an empty answer.
expect_status 0 "$CTL" --socket "$SOCK" --json explain --prio 60 --cpu-list 7 --claim 0
shape explain
expect_status 0 "$CTL" --socket "$SOCK" --json claims
shape claims
# The claim of query is the claim of claims, but for the lease run down.
python3 - "$TMP/query" "$TMP/out" <<'PY' || fail "the claim differs between query and claims"
import json, sys
q = json.load(open(sys.argv[1]))["claim"]
c = [c for c in json.load(open(sys.argv[2]))["claims"] if c["id"] == q["id"]][0]
q.pop("lease_left_ms"), c.pop("lease_left_ms")
assert q == c, (q, c)
PY
# No CPU: the answer with a null level, exit 75.
expect_status 75 "$CTL" --socket "$SOCK" --json query --prio 50 --cpu-list 7
shape query
python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d['level'] is None and d['claim'] is None, d" \
	"$TMP/out" || fail "an empty answer: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" --json top -n 2 -d 0.1
shape top
expect_status 0 "$CTL" --socket "$SOCK" --json release "$claim"
shape release
wait $W || fail "watch --count 3 exited $?: $(cat "$TMP/watch.err")"
cp "$TMP/watch" "$TMP/out"
shape record

# Errors: a document on stdout with the exit status, whatever failed.
expect_status 64 "$CTL" --socket "$SOCK" --json query --count 2
shape error
expect_status 65 "$CTL" --socket "$SOCK" --json query --prio 50 --node 5
shape error
expect_status 69 "$CTL" --socket "$SOCK" --json cpus --interval 0.1
shape error
expect_status 69 "$CTL" --socket "$SOCK" --json move --tid $$ --prio 5
shape error
expect_status 69 "$CTL" --socket "$TMP/none.sock" --json status
shape error
python3 -c "
import json, sys
e = json.load(open(sys.argv[1]))['error']
assert e['command'] == 'status' and e['exit'] == 69 and e['errno'] == 'ENOENT' and 'cannot reach rtplaced' in e['message'], e
" "$TMP/out" || fail "the error document: $(cat "$TMP/out")"
stop_daemon

# move needs the live machine.
[ "$(id -u)" = 0 ] || exit 0
start_live_daemon
sleep 30 &
SLEEPER=$!
PIDS="$PIDS $SLEEPER"
expect_status 0 "$CTL" --socket "$SOCK" --json move --tid $SLEEPER --cpu-list 0
shape move
exit 0
