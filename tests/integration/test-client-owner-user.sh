#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A claim of `rtplacectl query --claim` made by another user through a
# user switch (runuser, setpriv), simulated daemon: the owner walk stops
# where the owner's uid would change, a refusal names the process it
# found, whose user that is and what works instead, and a claim held at
# a lower level with a cut lease says both once, in the answer on stdout,
# with nothing on stderr.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
command -v runuser >/dev/null || skip "runuser (util-linux) is not installed"
[ "$(id -u nobody 2>/dev/null)" ] || skip "no user nobody"
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"

# Built-in defaults: nobody claims at normal, its lease cut to 60,000 ms.
chmod 0711 "$TMP"
start_daemon
chmod 0666 "$SOCK"
stage_programs "$CTL"
SCTL=$STAGED/rtplacectl

# runuser forks and waits: rtplacectl's parent is runuser, root's, and
# no process above is nobody's. Both owner choices are refused, naming
# that process and the way out.
for owner in shell parent; do
	expect_status 77 runuser -u nobody -- "$SCTL" --socket "$SOCK" query --prio 50 --claim 600000 --owner $owner
	grep -q "^rtplacectl: query: query refused: the claim would live with process [0-9]* (runuser), which runs as root, not as nobody who asks; no process above rtplacectl runs as nobody (a user switch is right above it): run it from a shell of nobody's (runuser -u nobody -- sh -c '...'), or give --owner PID of a process of nobody's that outlives the claim\$" \
		"$TMP/err" || fail "runuser, --owner $owner: $(cat "$TMP/err")"
	grep -q "Operation not permitted" "$TMP/err" && fail "a strerror tail: $(cat "$TMP/err")"
done

# setpriv execs: rtplacectl's parent is this (root's) shell. Through
# timeout, which nobody runs, the walk stops at timeout instead of
# climbing to root's shell: the daemon takes the owner.
expect_status 0 $NOBODY timeout 20 "$SCTL" --socket "$SOCK" --json query --prio 50 --claim 0
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['claim']['id'] > 0 and d['claim']['owner_pid'] != int(sys.argv[2]), d
" "$TMP/out" $$ || fail "the walk climbed past the user switch: $(cat "$TMP/out")"

# From nobody's own shell: the claim is held at normal and its lease cut;
# the answer says both, once, and stderr stays empty.
$NOBODY sh -c '"$1" --socket "$2" query --prio 50 --claim 600000; echo "exit $?"' sh "$SCTL" "$SOCK" \
	>"$TMP/out" 2>"$TMP/err"
grep -qx "exit 0" "$TMP/out" || fail "nobody's shell: $(cat "$TMP/out" "$TMP/err")"
[ -s "$TMP/err" ] && fail "a successful claim wrote to stderr: $(cat "$TMP/err")"
grep -qx "reason  at normal: rt50 > RLIMIT_RTPRIO 0, no CAP_SYS_NICE; lease cut from 600000 to 60000 ms" "$TMP/out" ||
	fail "the level and the lease cut: $(cat "$TMP/out")"
[ "$(grep -c "lease cut" "$TMP/out")" = 1 ] || fail "the cut said more than once: $(cat "$TMP/out")"
grep -q "^claim   [0-9]* (lease 60000 ms, or until process [0-9]* sh exits, or 'rtplacectl release [0-9]*')\$" \
	"$TMP/out" || fail "the claim line: $(cat "$TMP/out")"

# --owner naming root's init from nobody's shell: refused, and the default
# is named as the choice that works.
$NOBODY sh -c 'echo "shell $$"; "$1" --socket "$2" query --prio 50 --claim 0 --owner 1; echo "exit $?"' sh \
	"$SCTL" "$SOCK" >"$TMP/out" 2>"$TMP/err"
grep -qx "exit 77" "$TMP/out" || fail "--owner 1: $(cat "$TMP/out" "$TMP/err")"
shell=$(sed -n 's/^shell //p' "$TMP/out")
grep -q "the claim would live with process 1 ([^)]*), which runs as root, not as nobody who asks; --owner shell (the default) ties it to process $shell, which runs as nobody\$" \
	"$TMP/err" || fail "--owner 1's refusal: $(cat "$TMP/err")"
exit 0
