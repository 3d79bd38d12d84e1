#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Interrupt noise as a tie-breaker (DESIGN §20) on the live machine (root):
# a loopback UDP flood pinned to CPU 1 runs its softirqs there (a local
# send raises NET_RX on the sending CPU); the daemon's interrupt window
# then shows CPU 1's SIRQ% above CPU 0's, and rt50 queries over CPUs 0-1,
# both CPUs at one level (prefer-idle = no folds idle into normal), answer
# CPU 0 every time, where rotation alone alternates (checked with the
# tie-breaker off). Only orderings are asserted, never times: the flood
# is polled for (bounded) until the window shows it.
. "$top_srcdir/tests/integration/test-client-common.sh"

require_root
[ "$(nproc --all)" -ge 2 ] || skip "needs CPUs 0 and 1"
grep -q '^cpu1 ' /proc/stat || skip "CPU 1 is offline"
rt_lock

write_conf() {
	cat >"$TMP/irq.conf" <<EOC
[placement]
prefer-idle = no
avoid-smt-siblings = never
isolated = ignore
irq-window-ms = 300
irq-tiebreak = $1
EOC
}

# The flood (tests/lib/udp-flood.py): normal priority, bounded by timeout
# from this (normal priority) shell; it ends itself first.
start_flood() {
	timeout -s KILL 40 taskset -c 1 python3 "$top_srcdir/tests/lib/udp-flood.py" 35 &
	FLOOD=$!
	PIDS="$PIDS $FLOOD"
}

# softirq of CPU 0 and CPU 1 (fractions of the window) from cpus --json.
sirq() {
	"$CTL" --socket "$SOCK" --json cpus | python3 -c '
import json, sys
c = {x["cpu"]: x for x in json.load(sys.stdin)["cpus"]}
assert 0 <= c[0]["softirq"] <= 1 and 0 <= c[1]["softirq"] <= 1
print(c[0]["softirq"], c[1]["softirq"])'
}

# The CPUs of four rt50 queries over CPUs 0-1, one line.
answers() {
	for i in 1 2 3 4; do
		"$CTL" --socket "$SOCK" --json query --prio 50 -c 0-1 |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["cpus"][0]["cpu"], end=" ")'
	done
}

# Polls (bounded) until CPU 1's window shows more softirq than CPU 0's by
# over a point (the daemon's noisy margin) and four answers are all $1;
# prints the last reading.
wait_answers() {
	i=0
	while :; do
		s=$(sirq) || fail "cpus --json: $s"
		a=$(answers)
		if python3 -c 'import sys; a, b = map(float, sys.argv[1:3]); sys.exit(0 if b > a + 0.01 else 1)' $s; then
			[ "$a" != "$1" ] || break
		fi
		i=$((i + 1))
		[ $i -lt 40 ] || fail "after $i windows: softirq CPU 0/1 $s, answers '$a', want '$1'"
		sleep 0.3
	done
	echo "# softirq CPU 0/1 $s: answers $a"
}

write_conf yes
start_live_daemon --config "$TMP/irq.conf"
start_flood
wait_answers "0 0 0 0 "
# The text table orders them the same: SIRQ% is the column before FLAGS.
expect_status 0 "$CTL" --socket "$SOCK" cpus
awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "SIRQ%") col = i }
     NR > 1 { v[$1] = $col } END { exit !(col && v[1] > v[0]) }' "$TMP/out" ||
	fail "cpus does not show CPU 1's SIRQ% above CPU 0's: $(cat "$TMP/out")"
stop_daemon

# The same flood without the tie-breaker: rotation spreads the answers.
write_conf no
start_live_daemon --config "$TMP/irq.conf"
i=0
until a=$(answers); [ "$a" = "0 1 0 1 " ] || [ "$a" = "1 0 1 0 " ]; do
	i=$((i + 1))
	[ $i -lt 20 ] || fail "irq-tiebreak = no: answers '$a', not alternating"
	sleep 0.3
done
echo "# irq-tiebreak = no: answers $a"
