#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `rtplacectl top` on a terminal (a tmux pane of 80x24) against the
# simulated 480-CPU machine: no frame is taller than the terminal, the
# summary stays on its first lines, the CPUs come a page at a time (space
# forward, b back, every CPU on some page), q quits at once with status 0
# and the terminal's mode is as it was.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

command -v tmux >/dev/null || skip "no tmux (apt-get install tmux)"
start_daemon

# A tmux server of the test's own (its socket in $TMP), killed on exit.
TMUX_SOCK=$TMP/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT
tm -f /dev/null new-session -d -x 80 -y 24 -s top "sh" || fail "cannot start tmux"
tm set-option -t top status off >/dev/null
tm resize-window -t top -x 80 -y 24 2>/dev/null
tm send-keys -t top "stty -a > $TMP/stty.before; $CTL --socket $SOCK top -d 0.5; echo \"exit \$?\" > $TMP/status; stty -a > $TMP/stty.after" Enter

# screen: the pane's text now, in $TMP/screen.
screen() { tm capture-pane -p -t top > "$TMP/screen"; }
# wait_screen PATTERN: until the pane shows PATTERN (bounded).
wait_screen() {
	for _ in $(seq 100); do
		screen
		grep -q "$1" "$TMP/screen" && return 0
		sleep 0.1
	done
	fail "the pane never showed '$1': $(cat "$TMP/screen")"
}
# ids: the CPU ids of the cells on the screen, one a line.
ids() {
	grep -oE '(^|  ) *[0-9]+ (idle|norm|rt[0-9]+|dl|off)' "$TMP/screen" | awk '{ print $1 }'
}

wait_screen '^page 1 of '
pages=$(sed -n 's/^page 1 of \([0-9]*\).*/\1/p' "$TMP/screen")
[ "${pages:-0}" -gt 1 ] || fail "480 CPUs at 80x24 fit one page: $(cat "$TMP/screen")"
[ "$(wc -l < "$TMP/screen")" -le 24 ] || fail "a frame taller than 24 lines"
head -1 "$TMP/screen" | grep -q '^rtplace top: 480 CPUs' || fail "the first line is not the summary: $(head -1 "$TMP/screen")"
sed -n 2p "$TMP/screen" | grep -q '^claims ' || fail "the second line is not the summary: $(sed -n 2p "$TMP/screen")"
grep -q 'space next, b back, q quit' "$TMP/screen" || fail "the page line names no keys: $(tail -1 "$TMP/screen")"
ids > "$TMP/seen"

# Every page in turn, then the first again after the last.
p=1
while [ $p -lt "$pages" ]; do
	p=$((p + 1))
	tm send-keys -t top ' '
	wait_screen "^page $p of $pages"
	[ "$(wc -l < "$TMP/screen")" -le 24 ] || fail "page $p is taller than 24 lines"
	head -1 "$TMP/screen" | grep -q '^rtplace top: 480 CPUs' || fail "page $p lost the summary"
	ids >> "$TMP/seen"
done
[ "$(sort -n "$TMP/seen" | uniq | wc -l)" = 480 ] ||
	fail "the pages showed $(sort -n "$TMP/seen" | uniq | wc -l) of 480 CPUs"
[ "$(sort -n "$TMP/seen" | uniq -d | wc -l)" = 0 ] || fail "a CPU shown on two pages"
tm send-keys -t top ' '
wait_screen "^page 1 of $pages"
tm send-keys -t top 'b'
wait_screen "^page 1 of $pages"
tm send-keys -t top ' ' 
wait_screen "^page 2 of $pages"
tm send-keys -t top 'b'
wait_screen "^page 1 of $pages"

# q: out at once (well within the frame delay's bound), status 0, the
# terminal's mode restored.
tm send-keys -t top 'q'
for _ in $(seq 50); do
	[ -s "$TMP/status" ] && [ -s "$TMP/stty.after" ] && break
	sleep 0.1
done
[ -s "$TMP/status" ] || fail "q did not end top: $(screen; cat "$TMP/screen")"
[ "$(cat "$TMP/status")" = "exit 0" ] || fail "top ended with $(cat "$TMP/status") on q"
cmp -s "$TMP/stty.before" "$TMP/stty.after" ||
	fail "the terminal's mode changed: $(diff "$TMP/stty.before" "$TMP/stty.after")"
echo "PASS: top pages $pages pages of 480 CPUs at 80x24 and quits on q"
