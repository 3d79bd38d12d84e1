#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplacectl against a real rtplaced: every command in both output forms
# (tables, and JSON that python3 -m json.tool accepts), claims made and
# released from the command line, errors and their sysexits statuses;
# global options after the command, --cpus a count and -c/--cpu-list a list,
# one-line usage errors, partial answers (a warning, or 75 with --strict).
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

json_ok() {
	python3 -m json.tool "$TMP/out" >/dev/null || fail "'$*' printed invalid JSON: $(cat "$TMP/out")"
}

# Without a daemon: EX_UNAVAILABLE, naming the socket.
expect_status 69 "$CTL" --socket "$SOCK" status
grep -q "$SOCK" "$TMP/err" || fail "no-daemon error does not name the socket"

start_daemon

expect_status 0 "$CTL" --socket "$SOCK" status
grep -q '^version  *0\.' "$TMP/out" || fail "status table: $(cat "$TMP/out")"
grep -q '^cpus  *480 ids, 480 online' "$TMP/out" || fail "status table: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" --json status
json_ok status
[ "$(status_field ncpus)" = 480 ] || fail "status ncpus"

expect_status 0 "$CTL" --socket "$SOCK" cpus
[ "$(wc -l <"$TMP/out")" = 481 ] || fail "cpus table has $(wc -l <"$TMP/out") lines, want header + 480"
grep -q '^ *479  *1 ' "$TMP/out" || fail "cpus table lacks CPU 479 on node 1"
expect_status 0 "$CTL" --socket "$SOCK" --json cpus
json_ok cpus
python3 -c "
import json, sys
d = json.load(open('$TMP/out'))
assert len(d['cpus']) == 480, len(d['cpus'])
assert all(c['level'] == 'idle' and c['online'] for c in d['cpus'])
assert [c['cpu'] for c in d['cpus']] == list(range(480))
" || fail "cpus JSON content"

expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 --count 4 --cpu-list 10-20
grep -q '^cpus  *' "$TMP/out" || fail "query table: $(cat "$TMP/out")"
grep -q '^claim  *none' "$TMP/out" || fail "query table: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --count 4 --cpu-list 10-20
json_ok query
python3 -c "
import json
d = json.load(open('$TMP/out'))
assert d['count'] == 4 and d['claim'] is None
assert all(10 <= c['cpu'] <= 20 for c in d['cpus'])
" || fail "query JSON content: $(cat "$TMP/out")"
# The same query answered in this process from the daemon's map.
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --count 4 --cpu-list 10-20 --local
json_ok "query --local"
python3 -c "
import json
d = json.load(open('$TMP/out'))
assert d['count'] == 4 and d['claim'] is None
assert all(10 <= c['cpu'] <= 20 for c in d['cpus'])
" || fail "query --local JSON content: $(cat "$TMP/out")"
expect_status 64 "$CTL" --socket "$SOCK" query --prio 50 --local --claim 0
grep -q -- '--local answers without claiming' "$TMP/err" || fail "query --local --claim: $(cat "$TMP/err")"

# A claim from the command line lives with --owner (this shell) and shows
# in the snapshot until released.
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 60 --count 2 --claim 0 --owner $$
json_ok claim
claim=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
cpu=$(python3 -c "import json; print(json.load(open('$TMP/out'))['cpus'][0]['cpu'])")
[ "$claim" -gt 0 ] || fail "no claim id"
"$CTL" --socket "$SOCK" --json cpus | python3 -c "
import json, sys
d = json.load(sys.stdin)
c = d['cpus'][$cpu]
assert c['claim'] == $claim and c['claim_level'] == 'rt60', c
" || fail "claim $claim not on CPU $cpu"
"$CTL" --socket "$SOCK" cpus | grep -q "^ *$cpu .* $claim rt60 " || fail "claim not in the cpus table"
expect_status 0 "$CTL" --socket "$SOCK" --json release "$claim"
json_ok release
expect_status 65 "$CTL" --socket "$SOCK" release "$claim"
grep -q "no such claim" "$TMP/err" || fail "release error: $(cat "$TMP/err")"
wait_claims 0

# Isolation is asked with a claim, and a daemon that isolates nothing
# refuses it, saying so: nothing is claimed.
expect_status 64 "$CTL" --socket "$SOCK" query --prio 60 --isolate
grep -q -- '--owner, --exclusive and --isolate\[-if-possible\] need --claim' "$TMP/err" || fail "query --isolate: $(cat "$TMP/err")"
expect_status 69 "$CTL" --socket "$SOCK" query --prio 60 --claim 0 --owner $$ --isolate
grep -q 'this daemon isolates nothing (\[isolation\] in rtplaced.conf turns it on)' "$TMP/err" ||
	fail "query --claim --isolate: $(cat "$TMP/err")"
wait_claims 0

# An empty answer: every allowed CPU claimed exclusively.
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 10 --count 2 --cpu-list 7-8 --claim 0 --owner $$ --exclusive
claim=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
expect_status 75 "$CTL" --socket "$SOCK" query --prio 99 --cpu-list 7-8
grep -q '^no CPU: ' "$TMP/out" || fail "empty answer: $(cat "$TMP/out")"
expect_status 75 "$CTL" --socket "$SOCK" --json query --prio 99 --cpu-list 7-8
json_ok empty
expect_status 0 "$CTL" --socket "$SOCK" release "$claim"
grep -q "^released claim $claim (2 CPUs)" "$TMP/out" || fail "release table: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 10 --count 1 --claim 0 --owner $$
claim=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
expect_status 0 "$CTL" --socket "$SOCK" release "$claim"
grep -q "^released claim $claim (1 CPU)\$" "$TMP/out" || fail "release of one CPU: $(cat "$TMP/out")"

# Refusals, usage errors, help.
# A node or CPU the machine lacks: the daemon's reason names those it has
# (the 480-CPU topology has nodes 0-1, CPUs 0-479), in words, not wire
# fields, and every client prints it as it came, without a strerror tail.
expect_status 65 "$CTL" --socket "$SOCK" query --prio 50 --node 5
grep -qx "rtplacectl: query: query refused: node 5 is not on this machine: nodes 0-1" "$TMP/err" ||
	fail "--node 5: $(cat "$TMP/err")"
expect_status 65 "$CTL" --socket "$SOCK" query --prio 50 --cpu-list 478-481
grep -qx "rtplacectl: query: query refused: CPUs 480-481 are not on this machine: CPUs 0-479" "$TMP/err" ||
	fail "--cpu-list 478-481: $(cat "$TMP/err")"
expect_status 65 "$CTL" --socket "$SOCK" query --prio 50 --cpu-list 900
grep -qx "rtplacectl: query: query refused: CPU 900 is not on this machine: CPUs 0-479" "$TMP/err" ||
	fail "--cpu-list 900: $(cat "$TMP/err")"
expect_status 65 "$CTL" --socket "$SOCK" query --prio 50 --near 480
grep -qx "rtplacectl: query: query refused: near CPU 480 is not on this machine: CPUs 0-479" "$TMP/err" ||
	fail "--near 480: $(cat "$TMP/err")"
expect_status 65 "$CTL" --socket "$SOCK" move --tid $$ --cpu-list 0,1000
grep -qx "rtplacectl: move: move refused: CPU 1000 is not on this machine: CPUs 0-479" "$TMP/err" ||
	fail "move --cpu-list 0,1000: $(cat "$TMP/err")"
expect_status 65 "$RUN" --socket "$SOCK" --strict --prio 50 --node 5 -- true
grep -qx "rtplace-run: rtplaced refused the query: node 5 is not on this machine: nodes 0-1" \
	"$TMP/err" || fail "rtplace-run --node 5: $(cat "$TMP/err")"
expect_status 64 "$CTL" --socket "$SOCK" query --count 2
expect_status 64 "$CTL" --socket "$SOCK" query --prio 100
expect_status 64 "$CTL" --socket "$SOCK" query --prio 5 --cpu-list 3-x
expect_status 64 "$CTL" --socket "$SOCK" release abc
expect_status 64 "$CTL" --socket "$SOCK" release
expect_status 64 "$CTL" --socket "$SOCK" frobnicate
expect_status 64 "$CTL"
expect_status 69 "$CTL" --socket "$SOCK" move --tid $$ --prio 5
expect_status 64 "$CTL" --socket "$SOCK" move --tid $$
expect_status 64 "$CTL" --socket "$SOCK" watch --count 0
expect_status 64 "$CTL" --socket "$SOCK" watch now

# A simulated daemon moves nothing but still publishes records: a claim is
# made and its lease runs out, another is made and released; each record
# names its claim (CLAIM, the last column). The table header says the
# watcher has subscribed.
"$CTL" --socket "$SOCK" watch --count 4 >"$TMP/w" 2>"$TMP/w.err" &
W=$!
PIDS="$PIDS $W"
wait_lines "$TMP/w" 1
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 5 --claim 100
leased=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
wait_lines "$TMP/w" 3
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 5 --claim 0
held=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
expect_status 0 "$CTL" --socket "$SOCK" release "$held"
wait $W || fail "watch --count 4 exited $?: $(cat "$TMP/w.err")"
# Each claim record in the columns' own words: the owner process as TID,
# the CPU the claim went TO when made and left FROM when it ended, the
# level it is held at as SCHED, never a policy with a priority or a -1.
tail -n 4 "$TMP/w" | awk -v pid=$$ -v uid="$(id -u)" -v a="$leased" -v b="$held" '
	NR == 1 && $3 == "claim-created" && $9 == a && $6 == "-" && $7 ~ /^[0-9]+$/ { n++ }
	NR == 2 && $3 == "claim-expired" && $9 == a && $6 ~ /^[0-9]+$/ && $7 == "-" { n++ }
	NR == 3 && $3 == "claim-created" && $9 == b && $6 == "-" && $7 ~ /^[0-9]+$/ { n++ }
	NR == 4 && $3 == "claim-released" && $9 == b && $6 ~ /^[0-9]+$/ && $7 == "-" { n++ }
	$4 == pid && $5 == uid && $8 == "rt5" && NF == 9 { m++ }
	END { exit !(n == 4 && m == 4) }' || fail "watch printed (claims $leased, $held): $(cat "$TMP/w")"
# 80 columns, the time of day only; a wider terminal gets the date too.
awk 'length($0) > 80 { bad++ } END { exit bad > 0 }' "$TMP/w" || fail "watch is wider than 80 columns: $(cat "$TMP/w")"
tail -n 1 "$TMP/w" | awk '$2 ~ /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9][0-9][0-9][0-9]$/ { ok = 1 } END { exit !ok }' ||
	fail "watch's time in 80 columns: $(tail -n 1 "$TMP/w")"
COLUMNS=100 "$CTL" --socket "$SOCK" watch --count 1 >"$TMP/w" 2>"$TMP/w.err" &
W=$!
PIDS="$PIDS $W"
wait_lines "$TMP/w" 1
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 5 --claim 100
wait $W || fail "watch at 100 columns exited $?: $(cat "$TMP/w.err")"
tail -n 1 "$TMP/w" | awk '$2 ~ /^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T/ && length($0) <= 100 { ok = 1 } END { exit !ok }' ||
	fail "watch at 100 columns: $(cat "$TMP/w")"
# The same records in JSON: move on claiming and releasing until the
# watcher, which prints no header, has seen one made and released.
"$CTL" --socket "$SOCK" --json watch >"$TMP/wj" 2>"$TMP/wj.err" &
W=$!
PIDS="$PIDS $W"
i=0
# A claim made and released in the file, both records naming it.
made_and_released() {
	python3 -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.endswith('\\n')]
made = {r['claim'] for r in recs if r['type'] == 'claim-created' and r['type_id'] == 7
        and r['from_cpu'] == -1 and r['to_cpu'] >= 0 and r['policy'] is None and r['level'] == 'rt5'}
sys.exit(not any(r['type_id'] == 8 and r['claim'] in made for r in recs if r['type'] == 'claim-released'))
" "$TMP/wj"
}
until made_and_released; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "json watch saw no claim released: $(cat "$TMP/wj.err")"
	expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 5 --claim 0
	held=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
	expect_status 0 "$CTL" --socket "$SOCK" release "$held"
	sleep 0.05
done
kill $W
python3 -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.endswith('\\n')]
assert all(r['claim'] > 0 and r['tid'] == int(sys.argv[2]) and r['prio'] == 5 for r in recs), recs
" "$TMP/wj" $$ || fail "json claim records: $(cat "$TMP/wj")"
for cmd in status cpus query release move watch; do
	expect_status 0 "$CTL" "$cmd" --help
	grep -q "^usage: rtplacectl .*$cmd" "$TMP/out" || fail "$cmd --help"
done
expect_status 0 "$CTL" --help
expect_status 0 "$CTL" --version

# Global options also after the command, and between its own options.
expect_status 0 "$CTL" status --json --socket "$SOCK"
json_ok "status --json"
expect_status 0 "$CTL" cpus --socket "$SOCK" --json
json_ok "cpus --json"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 --json --cpus 2
json_ok "query --json"
python3 -c "
import json
d = json.load(open('$TMP/out'))
assert d['count'] == 2, d
" || fail "query --cpus 2 is not a count of 2: $(cat "$TMP/out")"

# One meaning per flag: --cpus is a count, -c/--cpu-list a list.
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 -c 30-31 --cpus 2
python3 -c "
import json
d = json.load(open('$TMP/out'))
assert sorted(c['cpu'] for c in d['cpus']) == [30, 31], d
" || fail "query -c 30-31: $(cat "$TMP/out")"
expect_status 64 "$CTL" --socket "$SOCK" query --prio 50 --cpus 10-20
grep -q -- "--cpu-list" "$TMP/err" || fail "--cpus LIST does not point to --cpu-list: $(cat "$TMP/err")"
expect_status 64 "$CTL" --socket "$SOCK" move --tid $$ --cpus 1
grep -q -- "--cpu-list" "$TMP/err" || fail "move --cpus does not point to --cpu-list: $(cat "$TMP/err")"

# Usage errors are one line naming the problem and where the help is.
for args in "query --count 2" "query --prio 100" "query --prio" "query --prio 5 --bogus" "release abc" \
	"release" "frobnicate" "" "--bogus status" "status --bogus" "status -x" "move --tid 3" "watch now" \
	"--socket"; do
	# shellcheck disable=SC2086
	expect_status 64 "$CTL" $args
	[ "$(wc -l <"$TMP/err")" = 1 ] || fail "'rtplacectl $args' printed $(wc -l <"$TMP/err") lines: $(cat "$TMP/err")"
	grep -q "^rtplacectl: .*; see 'rtplacectl .*--help'\$" "$TMP/err" || fail "'rtplacectl $args': $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || fail "'rtplacectl $args' printed on stdout: $(cat "$TMP/out")"
done

# A socket path longer than a UNIX socket address holds is the user's
# mistake, named with the limit (it exited 70, EX_SOFTWARE).
long="/tmp/$(printf '%0120d' 0)"
expect_status 64 "$CTL" --socket "$long" status
grep -q "^rtplacectl: status: socket path $long has 125 bytes; a UNIX socket path holds at most 107; " "$TMP/err" ||
	fail "--socket too long: $(cat "$TMP/err")"
expect_status 64 env RTPLACE_SOCKET="$long" "$CTL" status
grep -q "holds at most 107" "$TMP/err" || fail "RTPLACE_SOCKET too long: $(cat "$TMP/err")"

# Fewer CPUs than asked: the CPUs found and a warning (exit 0), or with
# --strict a failure (75) that gives the claim back.
expect_status 0 "$CTL" --socket "$SOCK" query --prio 20 --count 4 --cpu-list 40-41
grep -q "warning: got 2 of 4 CPUs" "$TMP/err" || fail "partial answer warning: $(cat "$TMP/err")"
grep -q '^cpus  *40-41$' "$TMP/out" || fail "partial answer: $(cat "$TMP/out")"
expect_status 75 "$CTL" --socket "$SOCK" query --prio 20 --count 4 --cpu-list 40-41 --strict --claim 0 --owner $$
grep -q "error: got 2 of 4 CPUs" "$TMP/err" || fail "partial answer with --strict: $(cat "$TMP/err")"
wait_claims 0

# The environment names the socket when --socket does not.
expect_status 0 env RTPLACE_SOCKET="$SOCK" "$CTL" status
stop_daemon

# More CPUs asked than the daemon manages at all: the warning says how many
# it manages (here 10, the rest housekeeping CPUs).
printf '[placement]\nhousekeeping-cpus = 10-479\n' >"$TMP/hk.conf"
start_daemon --config "$TMP/hk.conf"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 20 --count 20
grep -q "warning: got 10 of 20 CPUs: .*; rtplaced manages 10 CPUs: ask for at most 10\$" "$TMP/err" ||
	fail "count above the managed CPUs: $(cat "$TMP/err")"
stop_daemon
exit 0
