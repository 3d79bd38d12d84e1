#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `rtplacectl top` against a simulated rtplaced that stops: the first
# frame comes at once whatever -d says, and when the daemon goes away top
# says so on a line of its own, as watch does, and exits 69; on a
# terminal the message does not run into the page line.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

start_daemon

# -d 5: the first frame within 2 s, not after 5.
"$CTL" --socket "$SOCK" top -b -d 5 >"$TMP/top" 2>"$TMP/top.err" &
top=$!
i=0
until grep -q '^rtplace top: 480 CPUs' "$TMP/top"; do
	i=$((i + 1))
	[ $i -lt 40 ] || fail "no frame of top -d 5 within 2 s: $(cat "$TMP/top" "$TMP/top.err")"
	sleep 0.05
done
stop_daemon
wait $top
st=$?
[ $st = 69 ] || fail "top exited $st when the daemon stopped, want 69: $(cat "$TMP/top.err")"
[ "$(cat "$TMP/top.err")" = "rtplacectl: top: rtplaced closed the connection (it stopped?)" ] ||
	fail "top's message when the daemon stopped: $(cat "$TMP/top.err")"

# The same on a terminal, where a frame ends in the page line.
command -v tmux >/dev/null || exit 0
start_daemon
TMUX_SOCK=$TMP/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT
tm -f /dev/null new-session -d -x 80 -y 24 -s top "sh" || fail "cannot start tmux"
tm set-option -t top status off >/dev/null
tm send-keys -t top "$CTL --socket $SOCK top -d 0.3; echo \"exit \$?\" > $TMP/status" Enter
for _ in $(seq 100); do
	tm capture-pane -p -t top >"$TMP/screen"
	grep -q '^page 1 of ' "$TMP/screen" && break
	sleep 0.1
done
grep -q '^page 1 of ' "$TMP/screen" || fail "no frame on the terminal: $(cat "$TMP/screen")"
stop_daemon
for _ in $(seq 100); do
	[ -s "$TMP/status" ] && break
	sleep 0.1
done
[ "$(cat "$TMP/status" 2>/dev/null)" = "exit 69" ] || fail "top on a terminal ended with $(cat "$TMP/status" 2>&1)"
tm capture-pane -p -t top >"$TMP/screen"
grep -qx "rtplacectl: top: rtplaced closed the connection (it stopped?)" "$TMP/screen" ||
	fail "the message is not a line of its own: $(cat "$TMP/screen")"
exit 0
