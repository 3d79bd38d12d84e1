#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Errors that say the same thing the same way in rtplacectl and
# rtplace-run (simulated daemon on a 16-CPU machine): a refusal carries
# the daemon's reason without a strerror tail, a count above the machine
# says how many to ask for at most, a partial answer of query names who
# holds the CPUs it left out as rtplace-run's does, chrt's -p and a
# guessed --priority are pointed to --prio, and rtplace-run's refusal by
# a daemon that simulates another machine (480 CPUs) says so.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

# The same shape and file as tests/lib/testlib.c's, which other tests read
# when ../shared is absent: siblings numbered N and N + 8.
TOPO16=$top_builddir/tests/topology-1s-8c-16t.xml
if [ ! -r "$TOPO16" ]; then
	lstopo-no-graphics -i "pack:1 [numa] l3:1 core:8 pu:2(indexes=core:pack)" --of xml -f "$TOPO16.$$" && mv "$TOPO16.$$" "$TOPO16" ||
		skip "lstopo-no-graphics cannot write a 16-CPU topology"
fi
start_notified "$RTPLACED" --socket "$SOCK" --config "$CONF" --topology "$TOPO16"

# Ranges: the machine's CPUs and nodes in words, no "(Numerical result
# out of range)" after them.
expect_status 65 "$CTL" --socket "$SOCK" query --prio 5 --node 3
grep -qx "rtplacectl: query: query refused: node 3 is not on this machine: it has node 0 only" "$TMP/err" ||
	fail "--node 3: $(cat "$TMP/err")"
expect_status 65 "$RUN" --socket "$SOCK" --strict --prio 5 --node 3 -- true
grep -qx "rtplace-run: rtplaced refused the query: node 3 is not on this machine: it has node 0 only" "$TMP/err" ||
	fail "rtplace-run --node 3: $(cat "$TMP/err")"

# A count above the machine: how many to ask for at most, as rtplace-run
# says of its affinity.
expect_status 65 "$CTL" --socket "$SOCK" query --prio 5 --count 20
grep -qx "rtplacectl: query: query refused: --count 20: rtplaced's machine has 16 CPUs (16 online and managed); ask for at most 16" \
	"$TMP/err" || fail "--count 20: $(cat "$TMP/err")"

# A partial answer names the claim that holds the CPU left out, its owner
# and level, in rtplace-run's words.
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 --cpu-list 3 --claim 0 --owner $$
held=$(sed -n 's/^claim   \([0-9]*\) .*/\1/p' "$TMP/out")
[ -n "$held" ] || fail "no claim on CPU 3: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 20 --count 2 --cpu-list 2-3
grep -qx "rtplacectl: query: warning: got 1 of 2 CPUs: CPU 3 held by claim $held (at rt50, owner pid $$ [^ ]*, uid $(id -u))" \
	"$TMP/err" || fail "query's partial answer: $(cat "$TMP/err")"

# chrt's habits get a pointer, in both tools.
for args in "-p 5" "--priority 5" "--priority=5"; do
	# shellcheck disable=SC2086
	expect_status 64 "$CTL" --socket "$SOCK" query $args
	grep -q "unknown option ${args%% *}; the RT priority is --prio P; see 'rtplacectl query --help'\$" "$TMP/err" ||
		fail "query $args: $(cat "$TMP/err")"
	# shellcheck disable=SC2086
	expect_status 64 "$RUN" --socket "$SOCK" $args -- true
	grep -q "unknown option ${args%% *}; the RT priority is --prio P" "$TMP/err" ||
		fail "rtplace-run $args: $(cat "$TMP/err")"
done

# rtplace-run claims among this machine's CPUs: the simulated machine's
# node 1 (CPUs 120-239 and 360-479) holds none of them.
stop_daemon
start_daemon
if [ "$(getconf _NPROCESSORS_CONF)" -le 120 ]; then
	expect_status 75 "$RUN" --socket "$SOCK" --node 1 -- true
	grep -q "; rtplaced simulates another machine (--topology, 480 CPUs on 2 nodes), whose node 1 is CPUs 120-239,360-479 there, not CPUs of this machine\$" \
		"$TMP/err" || fail "rtplace-run --node 1 against a simulation: $(cat "$TMP/err")"
fi
exit 0
