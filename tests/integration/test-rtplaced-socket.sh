#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplaced writes nothing before its socket is its own. A socket in a
# shared folder (/tmp) fails --check-config, naming the folder and the
# fix, as the start fails; the refused start leaves no claims state behind
# (it used to create SOCKET.claims, which the next start then refused) and
# leaves one that was there untouched.
# A second daemon pointed at a live daemon's socket fails without
# rewriting the live daemon's claims state.
. "$(dirname "$0")/test-client-common.sh"

shared=/tmp/rtplace-socket-test.$$.sock
trap 'rm -f "$shared" "$shared.claims"; cleanup' EXIT
printf '[daemon]\nsocket = %s\n' "$shared" > "$TMP/shared.conf"
"$RTPLACED" --check-config --config "$TMP/shared.conf" 2> "$TMP/err"; rc=$?
[ $rc -eq 78 ] || fail "--check-config with a socket in /tmp exited $rc, expected 78: $(cat "$TMP/err")"
grep -q "^\[daemon\] socket = $shared: The socket's folder /tmp is a shared folder" "$TMP/err" ||
	fail "--check-config did not name the shared folder: $(cat "$TMP/err")"
grep -q "mkdir -m 0755 /run/rtplace" "$TMP/err" || fail "--check-config did not name the fix: $(cat "$TMP/err")"
printf '[daemon]\nsocket-group = no-such-group-%s\n' $$ > "$TMP/group.conf"
"$RTPLACED" --check-config --config "$TMP/group.conf" --socket "$SOCK" 2> "$TMP/err"; rc=$?
[ $rc -eq 78 ] || fail "--check-config with a missing socket group exited $rc, expected 78"
grep -q "socket-group = no-such-group-$$: no such group" "$TMP/err" || fail "missing group: $(cat "$TMP/err")"

timeout 20 "$RTPLACED" --config "$TMP/shared.conf" --topology "$TOPO480" 2> "$TMP/err"; rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a start with the socket in /tmp exited $rc"
[ ! -e "$shared.claims" ] || fail "a refused start left $shared.claims behind"
[ ! -e "$shared" ] || fail "a refused start left $shared behind"
# A state file already there (an earlier daemon's) is left as it was: a
# refused start used to rewrite it with no claims (next-id 77 became 1025).
printf 'rtplace-claims 3\nnext-id 77\n' > "$shared.claims"
chmod 600 "$shared.claims"
before=$(cksum < "$shared.claims")
timeout 20 "$RTPLACED" --config "$TMP/shared.conf" --topology "$TOPO480" 2> "$TMP/err"; rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a start with the socket in /tmp over a state file exited $rc"
[ "$(cksum < "$shared.claims")" = "$before" ] || fail "a refused start rewrote $shared.claims: $(cat "$shared.claims")"
rm -f "$shared.claims"

start_daemon
[ -f "$SOCK.claims" ] || fail "the live daemon has no claims state at $SOCK.claims"
before=$(stat -c '%i %s %Y' "$SOCK.claims")
timeout 20 "$RTPLACED" --socket "$SOCK" --config "$CONF" --topology "$TOPO480" 2> "$TMP/err"; rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a second daemon on a live socket exited $rc"
grep -q "another rtplaced is already listening there" "$TMP/err" || fail "second daemon: $(cat "$TMP/err")"
[ "$(stat -c '%i %s %Y' "$SOCK.claims")" = "$before" ] ||
	fail "a second daemon rewrote the live daemon's claims state ($before, now $(stat -c '%i %s %Y' "$SOCK.claims"))"
"$CTL" --socket "$SOCK" status > /dev/null || fail "the live daemon stopped answering"
echo "PASS: nothing written before the socket is the daemon's; --check-config judges the socket's folder"
