#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplacectl's tables fit 80 columns by default, as ps and top do, and
# grow with the terminal ($COLUMNS when stdout is no terminal): cpus,
# claims, watch and top's compact legend (simulated 480-CPU daemon).
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

start_daemon
"$CTL" --socket "$SOCK" query --prio 50 --count 2 --cpu-list 7,300 --claim 600000 --owner $$ >/dev/null ||
	fail "claiming CPUs 7 and 300"

# widest FILE: the longest line's length.
widest() {
	awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$1"
}

unset COLUMNS
for cmd in cpus claims "top -b -n 1 -d 0.1"; do
	# shellcheck disable=SC2086
	expect_status 0 "$CTL" --socket "$SOCK" $cmd
	[ "$(widest "$TMP/out")" -le 80 ] || fail "$cmd is $(widest "$TMP/out") columns wide: $(head -3 "$TMP/out")"
done
# top's legend whole, not cut at the 80th column.
grep -q '^cells: .*%$' "$TMP/out" || fail "top's legend is cut: $(grep '^cells' "$TMP/out")"

# cpus: the claim and its level in the same places as in the wide table.
expect_status 0 "$CTL" --socket "$SOCK" cpus
awk '$1 == 7 && $9 == "rt50" { ok = 1 } END { exit !ok }' "$TMP/out" || fail "cpus row 7: $(grep '^ *7 ' "$TMP/out")"
head -1 "$TMP/out" | grep -q "RT%  *SIRQ%  *FLAGS\$" || fail "cpus header in 80 columns: $(head -1 "$TMP/out")"

# Wider: every column.
COLUMNS=160 expect_status 0 "$CTL" --socket "$SOCK" cpus
head -1 "$TMP/out" | grep -q "IDLE%  *NORM%  *RT%  *DL%  *IRQ%  *SIRQ%  *FLAGS\$" ||
	fail "cpus header at 160 columns: $(head -1 "$TMP/out")"
[ "$(widest "$TMP/out")" -le 160 ] || fail "cpus at 160 columns is wider"
COLUMNS=160 expect_status 0 "$CTL" --socket "$SOCK" claims
grep -q "owner-exit,lease([0-9]* ms left)\$" "$TMP/out" || fail "claims at 160 columns: $(cat "$TMP/out")"
exit 0
