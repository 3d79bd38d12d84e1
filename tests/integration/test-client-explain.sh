#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `rtplacectl explain` against a real rtplaced (simulated 480-CPU machine):
# the CPUs it says chosen are those the query that follows gets (a dry run
# moves no rotation), a claim held by another process is named with its
# holder for root and only as another user's for nobody (DESIGN §15), the
# JSON parses, and a thread whose RLIMIT_RTPRIO is below the priority is
# told so, with the fix that its hard limit allows.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
command -v prlimit >/dev/null || skip "prlimit (util-linux) is not installed"
[ "$(id -u nobody 2>/dev/null)" ] || skip "no user nobody"
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
PY=/usr/bin/python3

chmod 0711 "$TMP"
start_daemon
chmod 0666 "$SOCK"
stage_programs "$CTL"

# A field of the explanation in $TMP/out: a Python expression over x.
field() {
	$PY -c "import json, sys; x = json.load(open(sys.argv[1])); print(json.dumps($1))" "$TMP/out"
}

# Root's exclusive claim on CPUs 0-1, held by a sleeper.
sleep 120 &
OWNER=$!
PIDS="$PIDS $OWNER"
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 1 -c 0-1 --count 2 --claim 600000 --owner $OWNER \
	--exclusive
CLAIM=$($PY -c "import json, sys; print(json.load(open(sys.argv[1]))['claim']['id'])" "$TMP/out")

# Root: the claim and its holder on CPUs 0 and 1, the JSON well formed.
expect_status 0 "$CTL" --socket "$SOCK" --json explain --prio 50 -c 0-7 --count 2
$PY -m json.tool "$TMP/out" >/dev/null || fail "explain --json is no JSON: $(cat "$TMP/out")"
[ "$(field "[c['verdict'] for c in x['cpus'] if c['cpu'] < 2]")" = '["claimed", "claimed"]' ] &&
	[ "$(field "[x['cpus'][0][k] for k in ('claim', 'claim_level', 'other_user', 'owner_uid', 'owner_pid', 'owner_comm')]")" = "[$CLAIM, \"dl\", false, 0, $OWNER, \"sleep\"]" ] ||
	fail "root's view of claim $CLAIM: $(cat "$TMP/out")"
# Every allowed CPU, and only those, with one verdict each.
[ "$(field "[c['cpu'] for c in x['cpus']]")" = "[0, 1, 2, 3, 4, 5, 6, 7]" ] ||
	fail "explain lists other CPUs than the allowed ones: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" explain --prio 50 -c 0-7 --count 2
grep -q "^CPU 0: claimed exclusively by claim $CLAIM (uid 0, pid $OWNER sleep): release it ('rtplacectl release $CLAIM'" \
	"$TMP/out" || fail "root's words for CPU 0: $(cat "$TMP/out")"

# What explain says chosen is what the next query gets, twice (the query
# moves the rotation, explain does not).
for round in 1 2; do
	expect_status 0 "$CTL" --socket "$SOCK" --json explain --prio 50 -c 0-7 --count 2
	said=$(field "x['cpu_list']")
	[ "$(field "x['result']")" = '"ok"' ] || fail "round $round: explain found no answer: $(cat "$TMP/out")"
	expect_status 0 "$CTL" --socket "$SOCK" --json explain --prio 50 -c 0-7 --count 2
	[ "$(field "x['cpu_list']")" = "$said" ] || fail "round $round: a second explain said $(field "x['cpu_list']"), not $said"
	expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 -c 0-7 --count 2
	[ "$(field "x['cpu_list']")" = "$said" ] ||
		fail "round $round: explain said $said, the query that followed got $(field "x['cpu_list']")"
done

# nobody: that another user holds the claim, and nothing of whom.
expect_status 0 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" --json explain --prio 50 -c 0-7
$PY -m json.tool "$TMP/out" >/dev/null || fail "nobody's explain --json is no JSON: $(cat "$TMP/out")"
[ "$(field "[x['cpus'][0][k] for k in ('claim', 'claim_level', 'other_user', 'owner_uid', 'owner_pid', 'owner_comm')]")" = "[$CLAIM, \"dl\", true, null, null, null]" ] ||
	fail "nobody's view of claim $CLAIM: $(cat "$TMP/out")"
! grep -q "$OWNER" "$TMP/out" || fail "nobody was shown the holder's pid $OWNER: $(cat "$TMP/out")"
expect_status 0 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" explain --prio 50 -c 0-7
grep -q "^CPU 0: claimed exclusively by claim $CLAIM of another user:" "$TMP/out" ||
	fail "nobody's words for CPU 0: $(cat "$TMP/out")"

# The thread's obstacles: nobody without RLIMIT_RTPRIO, hard limit 0 (root
# must raise it) and, where this root may raise a hard limit
# (CAP_SYS_RESOURCE: not in every container), 99 (nobody may raise it
# itself) and 50; root has CAP_SYS_NICE, which no limit stops.
expect_status 0 prlimit --rtprio=0:0 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" explain --prio 50 -c 2
grep -q "^thread  RLIMIT_RTPRIO 0 is below rt50 and the thread has no CAP_SYS_NICE: the hard limit is 0: raise it as root (prlimit --rtprio=50" \
	"$TMP/out" || fail "nobody's RLIMIT_RTPRIO 0:0: $(cat "$TMP/out")"
if prlimit --rtprio=0:99 true 2>/dev/null; then
	expect_status 0 prlimit --rtprio=0:99 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" --json explain --prio 50 -c 2
	[ "$(field "[(o['kind'], o['value'], o['limit']) for o in x['obstacles'] if o['kind'] == 'rlimit-rtprio']")" = '[["rlimit-rtprio", 0, 99]]' ] &&
		field "x['obstacles'][0]['why']" | grep -q "ulimit -r 50" || fail "nobody's RLIMIT_RTPRIO 0:99: $(cat "$TMP/out")"
	expect_status 0 prlimit --rtprio=50:99 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" --json explain --prio 50 -c 2
	[ "$(field "[o['kind'] for o in x['obstacles'] if o['kind'] == 'rlimit-rtprio']")" = '[]' ] ||
		fail "RLIMIT_RTPRIO 50 still said to stop rt50: $(cat "$TMP/out")"
fi
expect_status 0 prlimit --rtprio=0:0 "$CTL" --socket "$SOCK" --json explain --prio 50 -c 2
[ "$(field "[o['kind'] for o in x['obstacles'] if o['kind'] == 'rlimit-rtprio']")" = '[]' ] ||
	fail "root's CAP_SYS_NICE not counted: $(cat "$TMP/out")"

# nobody as root of a user namespace of its own holds CAP_SYS_NICE there,
# which the kernel does not count for RT: said, beside RLIMIT_RTPRIO.
if command -v unshare >/dev/null && $NOBODY unshare -Ur true 2>/dev/null; then
	expect_status 0 prlimit --rtprio=0:0 $NOBODY unshare -Ur "$STAGED/rtplacectl" --socket "$SOCK" --json explain \
		--prio 50 -c 2
	[ "$(field "[o['kind'] for o in x['obstacles'] if o['kind'] != 'rt-throttling']")" = '["rlimit-rtprio", "cap-sys-nice-userns"]' ] ||
		fail "nobody in a user namespace of its own: $(cat "$TMP/out")"
fi

# A query's own errors are explain's: no such node.
expect_status 65 "$CTL" --socket "$SOCK" explain --prio 50 --node 9
grep -q "node 9" "$TMP/err" || fail "explain --node 9: $(cat "$TMP/err")"
echo "PASS: explain names the claim's holder to root only, its answer is the next query's, RLIMIT_RTPRIO said with its fix"
