#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `rtplacectl reload` (RELOAD, what the unit's ExecReload= runs) waits for
# the daemon's verdict, simulated daemon: a good file is applied (status
# 0); a file that does not load is refused with its first error (65); a
# file that loads but would take a claimed CPU from placement
# ([placement] housekeeping-cpus naming it) is refused by the running
# daemon alone (75: rtplaced --check-config passes it), which keeps its
# configuration whole; a user other than root is refused (77). Before
# RELOAD existed every reload "succeeded" as far as its caller could tell.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
[ "$(id -u nobody 2>/dev/null)" ] || skip "no user nobody"

chmod 0711 "$TMP"
cp "$CONF" "$TMP/reload.conf"
CONF=$TMP/reload.conf
start_daemon
chmod 0666 "$SOCK"

# The housekeeping flag of CPU $1 in `cpus --json`: True or False.
hk() {
	"$CTL" --socket "$SOCK" --json cpus | python3 -c "
import json, sys
print([c for c in json.load(sys.stdin)['cpus'] if c['cpu'] == $1][0]['housekeeping'])"
}

# A good file: applied, and the caller hears so.
printf '[placement]\nhousekeeping-cpus = 8\n' >"$CONF"
expect_status 0 "$CTL" --socket "$SOCK" reload
grep -qx "configuration reloaded" "$TMP/out" || fail "reload printed: $(cat "$TMP/out")"
[ "$(hk 8)" = True ] || fail "CPU 8 is not housekeeping after a good reload"
expect_status 0 "$CTL" --socket "$SOCK" --json reload
[ "$(cat "$TMP/out")" = '{"reloaded": true}' ] || fail "reload --json printed: $(cat "$TMP/out")"

# A file that does not load: refused with its first error.
printf '[daemon]\nlog-level = chatty\n' >"$CONF"
expect_status 65 "$CTL" --socket "$SOCK" reload
grep -q "^rtplacectl: reload: the daemon keeps its running configuration: .*log-level" "$TMP/err" ||
	fail "a bad file's refusal: $(cat "$TMP/err")"
[ "$(hk 8)" = True ] || fail "a refused reload changed the housekeeping CPUs"

# A claim on CPU 7, then a file that would make CPU 7 housekeeping: the
# file is valid (the pre-check the unit ran before passes it), only the
# running daemon knows the claim.
printf '[placement]\nhousekeeping-cpus = 8\n' >"$CONF"
expect_status 0 "$CTL" --socket "$SOCK" reload
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --cpu-list 7 --claim 0 --owner $$
claim=$(python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])")
printf '[placement]\nhousekeeping-cpus = 7-8\n[limits]\nmax-clients = 77\n' >"$CONF"
expect_status 0 "$RTPLACED" --check-config --config "$CONF"
expect_status 75 "$CTL" --socket "$SOCK" reload
grep -q "^rtplacectl: reload: the daemon keeps its running configuration: \[placement\] housekeeping-cpus would take CPU 7 from placement while claim $claim holds it (owner pid $$): release the claim (rtplacectl release $claim) or leave the CPU managed\$" \
	"$TMP/err" || fail "a claimed CPU's refusal: $(cat "$TMP/err")"
grep -q "Reload failed: .*claim $claim holds it" "$TMP/rtplaced.log" || fail "the refusal is not logged"
[ "$(hk 7)" = False ] || fail "a refused reload made CPU 7 housekeeping"
[ "$(status_field claims_active)" = 1 ] || fail "the claim is gone after a refused reload"
# Released, the same file is applied.
expect_status 0 "$CTL" --socket "$SOCK" release "$claim"
expect_status 0 "$CTL" --socket "$SOCK" reload
[ "$(hk 7)" = True ] || fail "CPU 7 is not housekeeping once its claim ended"

# Only root: another user's reload is refused and changes nothing.
stage_programs "$CTL"
printf '[placement]\nhousekeeping-cpus = 9\n' >"$CONF"
expect_status 77 setpriv --reuid=nobody --regid=nogroup --clear-groups "$STAGED/rtplacectl" --socket "$SOCK" reload
grep -q "only root may reload the configuration" "$TMP/err" || fail "nobody's refusal: $(cat "$TMP/err")"
[ "$(hk 9)" = False ] || fail "nobody's reload was applied"
stop_daemon
