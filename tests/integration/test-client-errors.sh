#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Errors that name their fix (root, to act as another user): a socket the
# user may not open names its group and the socket-group setting, in
# rtplacectl and in rtplace-run's fallback warning; rtplaced started as a
# user without BPF rights gives libbpf's whole reason, not a cut one.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
NOBODY="setpriv --reuid 65534 --regid 65534 --clear-groups"
stage_programs "$CTL" "$RUN" "$RTPLACED"
group=$(getent group daemon | cut -d: -f1)
[ -n "$group" ] || skip "no group named daemon"

# The socket's folder is open to everyone; the socket (mode 0660) is not.
chmod 755 "$TMP"

# Starts the simulated daemon with the configuration text $1.
start_with_config() {
	printf '%b' "$1" >"$TMP/rtplaced.conf"
	start_daemon --config "$TMP/rtplaced.conf"
}

# The default: the daemon's own group (root) owns the socket.
start_with_config '[daemon]\nsocket-mode = 0660\n'
expect_status 77 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" status
grep -q "Permission denied (the socket belongs to group root: set socket-group in \[daemon\] of rtplaced.conf" \
	"$TMP/err" || fail "EACCES with group root: $(cat "$TMP/err")"
stop_daemon

# A socket-group: the user is told to join it.
start_with_config "[daemon]\nsocket-mode = 0660\nsocket-group = $group\n"
expect_status 77 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" status
grep -q "Permission denied (join group $group, the socket's group as socket-group in rtplaced.conf sets it" \
	"$TMP/err" || fail "EACCES with socket-group: $(cat "$TMP/err")"
# rtplace-run pins to its local choice: CPU 1 must stay online meanwhile.
rt_lock
expect_status 0 $NOBODY "$STAGED/rtplace-run" --socket "$SOCK" -- true
grep -q "warning: cannot reach rtplaced at $SOCK: Permission denied (join group $group" "$TMP/err" ||
	fail "rtplace-run's EACCES warning: $(cat "$TMP/err")"
stop_daemon

# rtplaced without BPF rights and [tracker] required = yes (without it, it
# serves from a sampled map: test-tracker-sampled): exit 77 and the reason
# whole, not cut at a buffer's end: its parentheses are closed and its last
# sentence ends (a cut one stopped mid-word: "... and/or that
# RLIMIT_MEMLOC)"). Bounded: a daemon that serves instead would never end.
mkdir "$TMP/nobody"
printf '[tracker]\nrequired = yes\n' >"$TMP/nobody/rtplaced.conf"
chown -R 65534:65534 "$TMP/nobody"
expect_status 77 timeout -s KILL 30 $NOBODY "$STAGED/rtplaced" --socket "$TMP/nobody/rtplaced.sock" \
	--config "$TMP/nobody/rtplaced.conf"
line=$(grep "Failed to start the BPF tracker" "$TMP/err") || fail "no tracker error: $(cat "$TMP/err")"
printf '%s\n' "$line" | python3 -c "
import re, sys
line = sys.stdin.read().rstrip('\n')
assert line.count('(') == line.count(')') and re.search(r'[.!)\x27\x22]$', line), line
" || fail "the tracker's error is cut: $line"
exit 0
