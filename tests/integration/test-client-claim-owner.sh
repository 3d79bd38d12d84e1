#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Who holds a claim of `rtplacectl query --claim` (simulated daemon): made
# inside `$(...)`, it lives with the calling shell, not with the subshell
# that ran rtplacectl and exited when the output was read; the output says
# who holds it and how it ends (a line of the table, at length on stderr
# with --verbose, fields in JSON);
# --owner parent ties it to that subshell instead (it ends with it),
# --owner PID to the process named; it ends when its shell exits. Command
# wrappers (timeout, nice, env) between the shell and rtplacectl are
# passed over like the subshell: they exit with rtplacectl.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

start_daemon

# The claim on a CPU according to `rtplacectl --json cpus`, "" for none.
claim_cpu() {
	"$CTL" --socket "$SOCK" --json cpus | python3 -c "
import json, sys
cpus = [c['cpu'] for c in json.load(sys.stdin)['cpus'] if c['claim'] == int(sys.argv[1])]
print(','.join(map(str, cpus)))
" "$1"
}

# JSON: a pipeline inside $(...) always runs in a subshell.
got=$("$CTL" --socket "$SOCK" --json query --prio 50 --claim 0 | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['claim']['id'], d['claim']['owner_pid'], d['owner'], d['claim']['owner_comm'] != '', ','.join(d['claim']['ends']))
") || fail "query --claim in \$(...) failed"
set -- $got
claim=$1
[ "$2" = $$ ] || fail "the claim's owner is $2, not this shell ($$): $got"
[ "$3" = shell ] || fail "owner kind: $got"
[ "$4" = True ] || fail "no owner_comm: $got"
[ "$5" = owner-exit,lease,release ] || fail "ends: $got"

# The same with --owner parent: that subshell holds it, and it is gone
# with it. Once the daemon has seen that end, the first claim is still
# there: its owner is this shell.
"$CTL" --socket "$SOCK" --json query --prio 50 --claim 0 --owner parent >/dev/null ||
	fail "query --owner parent"
wait_claims 2
gone=$("$CTL" --socket "$SOCK" --json query --prio 50 --claim 0 --owner parent | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['claim']['id'], d['claim']['owner_pid'], d['owner'])
")
set -- $gone
[ "$2" != $$ ] || fail "--owner parent in \$(...) held by this shell: $gone"
[ "$3" = parent ] || fail "--owner parent kind: $gone"
wait_claims 2
[ -n "$(claim_cpu "$claim")" ] || fail "claim $claim made in \$(...) is gone with its subshell"
[ -z "$(claim_cpu "$1")" ] || fail "claim $1 of --owner parent outlived its subshell"

# The table: the CPU and the claim on stdout, and nothing on stderr (a
# success lands in no cron mail); with --verbose, who holds the claim on
# stderr.
"$CTL" --socket "$SOCK" query --prio 50 --claim 0 >"$TMP/quiet" 2>"$TMP/note" || fail "query --claim failed"
[ -s "$TMP/note" ] && fail "a successful query --claim wrote to stderr: $(cat "$TMP/note")"
grep -q "^claim   [0-9]* (lease [0-9]* ms, or until process $$ [^ ]* exits, or 'rtplacectl release [0-9]*')\$" \
	"$TMP/quiet" || fail "the claim line: $(cat "$TMP/quiet")"
wait_claims 3
cpu=$("$CTL" --socket "$SOCK" query --prio 50 --claim 0 --verbose 2>"$TMP/note" | awk '$1 == "cpus" { print $2 }')
[ -n "$cpu" ] || fail "no CPU from the table: $(cat "$TMP/note")"
grep -q "^rtplacectl: query: claim [0-9]* is held by process $$ ([^)]*), the calling shell, not the subshell [0-9]* that ran rtplacectl; it ends when that process exits, when its lease of [0-9]* ms runs out, or with 'rtplacectl release [0-9]*'\$" \
	"$TMP/note" || fail "the note on stderr: $(cat "$TMP/note")"
table_claim=$(sed -n 's/.* claim \([0-9]*\) is held.*/\1/p' "$TMP/note")
[ "$(claim_cpu "$table_claim")" = "$cpu" ] || fail "claim $table_claim is not on CPU $cpu"
wait_claims 4

# --owner PID names the process; a word that is neither is a usage error.
sleep 30 &
SLEEPER=$!
PIDS="$PIDS $SLEEPER"
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --claim 0 --owner $SLEEPER
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['claim']['owner_pid'] == int(sys.argv[2]) and d['owner'] == 'pid' and d['claim']['owner_comm'] == 'sleep', d
" "$TMP/out" $SLEEPER || fail "--owner PID: $(cat "$TMP/out")"
grep -q "is held by process $SLEEPER (sleep), as --owner named" "$TMP/err" && fail "a note in JSON mode: $(cat "$TMP/err")"
wait_claims 5
kill $SLEEPER
wait_claims 4
expect_status 64 "$CTL" --socket "$SOCK" query --prio 50 --claim 0 --owner me
grep -q -- "--owner me: not a process id, shell or parent" "$TMP/err" || fail "--owner me: $(cat "$TMP/err")"

# Another shell (an exec, not a fork of this one) holds what it claims in
# its own $(...), until it exits.
sh -c '
c=$("$1" --socket "$2" query --prio 50 --claim 0 2>/dev/null | awk "\$1 == \"cpus\" { print \$2 }")
[ -n "$c" ] || exit 1
"$1" --socket "$2" --json status | grep -q "\"claims_active\": 5" || exit 2
' sh "$CTL" "$SOCK" || fail "the inner shell's claim did not live with it (exit $?)"
wait_claims 4

# timeout runs rtplacectl through nice and env; each execs the next, so
# rtplacectl's parent is timeout, which exits as soon as rtplacectl does.
wrapped=$(timeout 20 nice -n 0 env "$CTL" --socket "$SOCK" --json query --prio 50 --claim 0 | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['claim']['id'], d['claim']['owner_pid'], d['owner'])
") || fail "query --claim through timeout, nice and env failed"
set -- $wrapped
[ "$2" = $$ ] || fail "the claim made through wrappers is held by $2, not this shell ($$): $wrapped"
wait_claims 5
[ -n "$(claim_cpu "$1")" ] || fail "claim $1 made through timeout is gone with it"

# The note names the wrapper passed over.
cpu=$(timeout 20 "$CTL" --socket "$SOCK" query --prio 50 --claim 0 --verbose 2>"$TMP/note" | awk '$1 == "cpus" { print $2 }')
[ -n "$cpu" ] || fail "no CPU through timeout: $(cat "$TMP/note")"
grep -q "^rtplacectl: query: claim [0-9]* is held by process $$ ([^)]*), the calling shell, not timeout [0-9]* that ran rtplacectl;" \
	"$TMP/note" || fail "the note through timeout: $(cat "$TMP/note")"
wait_claims 6

# --owner parent still means the wrapper itself: the claim ends with it.
wrapped=$(timeout 20 "$CTL" --socket "$SOCK" --json query --prio 50 --claim 0 --owner parent | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['claim']['id'], d['claim']['owner_pid'], d['owner'])
")
set -- $wrapped
[ "$2" != $$ ] || fail "--owner parent through timeout held by this shell: $wrapped"
wait_claims 6
[ -z "$(claim_cpu "$1")" ] || fail "claim $1 of --owner parent outlived timeout"
exit 0
