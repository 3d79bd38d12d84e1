#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# README's examples and rtplacectl(1)'s EXAMPLES against what the clients
# print today (simulated daemon): the version and the lines of `status`,
# the columns of `cpus` in 80 columns and wide, the lines of a claimed
# `query`, the commands and exit statuses README lists, a simulated
# claim's level as rtplaced(8) describes it, and every rtplacectl(1)
# example run, exiting as documented.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

README=$top_srcdir/README.md
MAN=$top_srcdir/man/rtplacectl.1
[ -r "$README" ] || skip "no README.md beside the sources"
start_daemon
export RTPLACE_SOCKET="$SOCK"
unset COLUMNS

# block N: README's fenced block that follows the Nth line matching $1.
readme_block() {
	awk -v pat="$1" '
		index($0, pat) { found = 1 }
		found && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$README"
}

# status: the version is this build's, and the labels are those printed.
readme_block 'says what the daemon sees' >"$TMP/readme.status"
want=$("$CTL" --version | awk '{ print $2 }')
grep -qx "version          $want" "$TMP/readme.status" ||
	fail "README's status says $(grep '^version' "$TMP/readme.status"), the build is $want"
"$CTL" status >"$TMP/status" || fail "status"
[ "$(cut -c1-17 "$TMP/readme.status")" = "$(cut -c1-17 "$TMP/status")" ] ||
	fail "README's status lines differ: $(diff "$TMP/readme.status" "$TMP/status")"

# cpus: the header of each example is the one printed, at 80 columns and wide.
readme_block 'shows one line per CPU' | head -1 >"$TMP/readme.cpus"
"$CTL" cpus | head -1 >"$TMP/cpus"
cmp -s "$TMP/readme.cpus" "$TMP/cpus" || fail "README's cpus header: $(cat "$TMP/readme.cpus") vs $(cat "$TMP/cpus")"
readme_block 'On a terminal of 120 columns' | head -1 >"$TMP/readme.cpus"
COLUMNS=120 "$CTL" cpus | head -1 >"$TMP/cpus"
cmp -s "$TMP/readme.cpus" "$TMP/cpus" || fail "README's wide cpus header: $(cat "$TMP/readme.cpus") vs $(cat "$TMP/cpus")"

# query: the command as README runs it, the same lines, the claim line alike.
readme_block 'Hold the answer for 5 s' >"$TMP/readme.query"
cmd=$(sed -n 's/^\$ client\/rtplacectl //p' "$TMP/readme.query")
# shellcheck disable=SC2086
"$CTL" $cmd >"$TMP/query" || fail "README's query: rtplacectl $cmd"
[ "$(sed 1d "$TMP/readme.query" | awk '{ print $1 }')" = "$(awk '{ print $1 }' "$TMP/query")" ] ||
	fail "README's query lines differ: $(cat "$TMP/query")"
pattern=$(grep '^claim ' "$TMP/readme.query" | sed 's/[0-9][0-9]*/[0-9]*/g; s/process \[0-9\]\* [^ ]* exits/process [0-9]* [^ ]* exits/')
grep -q "^$pattern\$" "$TMP/query" || fail "README's claim line is not printed so: $(grep '^claim' "$TMP/query")"

# The commands and exit statuses README names.
for cmd in $("$CTL" help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p'); do
	[ "$cmd" = help ] && continue
	grep -q "\`$cmd[\` ]" "$README" || fail "README names no \`$cmd\`"
done
exits=$(awk '/^\*\*`rtplacectl`\*\*/, /^$/' "$README" | tr '\n' ' ' | sed -n 's/.*Exit status:\(.*\)/\1/p' |
	grep -o '[0-9][0-9]*' | sort -n | tr '\n' ' ')
[ "$exits" = "0 64 65 69 75 77 " ] || fail "README's exit statuses are '$exits'"
for code in $exits; do
	grep -q "^\.B $code\$" "$MAN" || fail "README's exit status $code is not in rtplacectl(1)"
done

# rtplaced(8): under --topology only claims change levels, and cpus shows
# a claimed CPU at its claim's level.
"$CTL" query --prio 50 --cpu-list 5 --claim 0 --owner $$ >/dev/null || fail "claiming CPU 5"
"$CTL" --json cpus | python3 -c "
import json, sys
c = json.load(sys.stdin)['cpus'][5]
assert c['level'] == 'rt50' and c['claim_level'] == 'rt50', c
" || fail "rtplaced(8) says claims change levels under --topology; cpus does not show it"

# rtplacectl(1)'s EXAMPLES, run: 0, but where the simulation cannot serve
# (move, cpus --interval: 69) or the example needs what it names (claim 17
# is another's: 65); watch runs until interrupted.
sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$MAN" | sed -n 's/^\$ //p' | sed 's/\\-/-/g; s/ *# .*//' >"$TMP/examples"
[ -s "$TMP/examples" ] || fail "rtplacectl(1) has no examples"
cd "$TMP" || fail "cd $TMP"
while IFS= read -r line; do
	case $line in
	*" watch"*) continue ;;
	*" move "* | *"--interval"*) want=69 ;;
	*"release 17"*) want=65 ;;
	*) want=0 ;;
	esac
	sh -c "PATH=\"$(cd "$(dirname "$CTL")" && pwd):\$PATH\"; $line" >"$TMP/out" 2>"$TMP/err" </dev/null
	got=$?
	[ "$got" = "$want" ] || fail "rtplacectl(1) example '$line' exited $got, want $want: $(cat "$TMP/err")"
done <"$TMP/examples"
exit 0
