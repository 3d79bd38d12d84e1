#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Isolated claims through the real daemon on this machine (root): with
# [isolation] irqs and workqueues on, `rtplacectl query --claim --isolate`
# on CPU 1 takes it out of every movable interrupt's affinity and of the
# unbound workqueue mask, and `cpus` flags it; a kill -9 of the daemon and
# a restart keep it isolated (undone from the journal, then isolated again
# for the restored claim); a release, the owner's exit and the daemon's
# stop each give every file back byte for byte, and leave no journal. The
# claim that would take node 0's last housekeeping CPU is refused, and so
# is nobody, who holds no CAP_SYS_NICE; asked --isolate-if-possible, both
# get the claim without isolation and the reason why, as from a daemon
# that isolates nothing (which refuses a plain --isolate). (Partitions need cgroup v2: the
# VM bed's test-isolation makes them.) The machine's affinities and mask
# are saved first and written back on every exit path.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
wq=/sys/devices/virtual/workqueue/cpumask
[ -w "$wq" ] || skip "no unbound workqueue mask at $wq"
[ "$(cat /sys/devices/system/cpu/online)" = 0-1 ] || [ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] ||
	skip "needs CPUs 0 and 1 online"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
rt_lock

. "${top_srcdir:-.}/tests/lib/host-isolation.sh"
host_save
trap 'host_restore; cleanup' EXIT

# Every movable interrupt's affinity and the mask as they were.
host_as_saved() {
	for f in "$SAVED"/irq.*; do
		[ "$(cat "/proc/irq/${f##*.}/smp_affinity_list" 2>/dev/null)" = "$(cat "$f")" ] ||
			fail "$1: IRQ ${f##*.} affinity $(cat "/proc/irq/${f##*.}/smp_affinity_list") is not $(cat "$f") again"
	done
	[ "$(cat "$wq")" = "$(cat "$SAVED/wq")" ] || fail "$1: workqueue mask $(cat "$wq") is not $(cat "$SAVED/wq") again"
	[ ! -e "$SOCK.isolation" ] || fail "$1: the journal $SOCK.isolation is left: $(cat "$SOCK.isolation")"
}

# CPU 1 out of the mask and of every interrupt it could leave.
cpu1_isolated() {
	[ "$(( 0x$(cat "$wq" | tr -d ,) & 2 ))" -eq 0 ] || fail "$1: CPU 1 still in the workqueue mask $(cat "$wq")"
	for f in "$SAVED"/irq.*; do
		n=${f##*.}
		aff=$(cat "/proc/irq/$n/smp_affinity_list" 2>/dev/null) || continue
		case ",$aff," in
		*,1,* | *-1,* | *,1-*) grep -q "IRQ $n\b" "$TMP/reason" 2>/dev/null ||
			fail "$1: IRQ $n's affinity $aff keeps CPU 1, and the claim did not name it" ;;
		esac
	done
	"$CTL" --socket "$SOCK" --json cpus > "$TMP/cpus" || fail "$1: cpus failed"
	python3 -c "
import json, sys
c = [c for c in json.load(open(sys.argv[1]))['cpus'] if c['cpu'] == 1][0]
assert c['isolated'] is True, c
" "$TMP/cpus" || fail "$1: cpus does not flag CPU 1 isolated: $(cat "$TMP/cpus")"
}

port=$((20000 + $$ % 20000))
printf '[isolation]\nirqs = yes\nworkqueues = yes\n[metrics]\nlisten = 127.0.0.1:%s\n' $port > "$TMP/iso.conf"
start_live_daemon --config "$TMP/iso.conf"
sleep 600 & OWNER=$!
PIDS="$PIDS $OWNER"

# nobody may not isolate CPUs: isolation is host configuration.
chmod 0711 "$TMP"
chmod 0666 "$SOCK"
stage_programs "$CTL"
# (From a shell of nobody's, whose process the claim would live with.)
expect_status 77 setpriv --reuid=nobody --regid=nogroup --clear-groups /bin/sh -c '"$@"; exit $?' sh \
	"$STAGED/rtplacectl" --socket "$SOCK" query --prio 50 -c 1 --claim 60000 --isolate
grep -q "CAP_SYS_NICE" "$TMP/err" || fail "nobody's refusal does not name CAP_SYS_NICE: $(cat "$TMP/err")"
# Nor does nobody as root of a user namespace of its own: CAP_SYS_NICE
# there is no host privilege.
if command -v unshare >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups unshare -Ur true 2>/dev/null; then
	expect_status 77 setpriv --reuid=nobody --regid=nogroup --clear-groups unshare -Ur /bin/sh -c '"$@"; exit $?' sh \
		"$STAGED/rtplacectl" --socket "$SOCK" query --prio 50 -c 1 --claim 60000 --isolate
	grep -q "CAP_SYS_NICE" "$TMP/err" || fail "unshare -Ur's refusal does not name CAP_SYS_NICE: $(cat "$TMP/err")"
fi
# Asked if possible, nobody gets the claim without isolation, told why.
expect_status 0 setpriv --reuid=nobody --regid=nogroup --clear-groups /bin/sh -c '"$@"; exit $?' sh \
	"$STAGED/rtplacectl" --socket "$SOCK" query --prio 50 -c 1 --claim 60000 --isolate-if-possible
grep -q "^reason  not isolated: .*CAP_SYS_NICE" "$TMP/out" || fail "nobody's claim if possible: $(cat "$TMP/out")"
host_as_saved "after nobody's claim if possible"
# Both CPUs would leave node 0 without a housekeeping CPU.
expect_status 75 "$CTL" --socket "$SOCK" query --prio 50 -c 0-1 --count 2 --claim 60000 --isolate --owner $OWNER
grep -q "housekeeping" "$TMP/err" || fail "the last housekeeping CPU's refusal: $(cat "$TMP/err")"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 0-1 --count 2 --claim 60000 --isolate-if-possible \
	--owner $OWNER
grep -q "^reason  not isolated: .*housekeeping" "$TMP/out" || fail "both CPUs if possible: $(cat "$TMP/out")"
host_as_saved "after the refusals"
"$CTL" --socket "$SOCK" release "$(sed -n 's/^claim *\([0-9]*\) .*/\1/p' "$TMP/out")" > /dev/null ||
	fail "cannot release the claim of both CPUs"

# Held, through a kill -9 and a restart, then released.
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
cp "$TMP/out" "$TMP/reason"
id=$(sed -n 's/^claim *\([0-9]*\) .*/\1/p' "$TMP/out")
[ -n "$id" ] || fail "no claim id in: $(cat "$TMP/out")"
cpu1_isolated "held"
expect_status 0 "$CTL" --socket "$SOCK" --json claims
python3 -c "
import json, sys
c = [c for c in json.load(open(sys.argv[1]))['claims'] if c['id'] == int(sys.argv[2])][0]
assert c['isolated'] is True and c['exclusive'] is True, c
" "$TMP/out" "$id" || fail "claims --json does not show claim $id isolated: $(cat "$TMP/out")"
expect_status 0 "$CTL" --socket "$SOCK" claims
grep -q "^ *$id  *isolated " "$TMP/out" || fail "claims does not show claim $id isolated: $(cat "$TMP/out")"
python3 -c "import urllib.request, sys; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" \
	"http://127.0.0.1:$port/metrics" > "$TMP/metrics" || fail "cannot scrape the metrics"
grep -q '^rtplace_cpu_isolated_for_claim{cpu="1"} 1$' "$TMP/metrics" &&
	grep -q '^rtplace_cpu_isolated_for_claim{cpu="0"} 0$' "$TMP/metrics" ||
	fail "the metrics do not show CPU 1 isolated for the claim: $(grep isolated "$TMP/metrics")"
kill -9 "$DAEMON"
wait "$DAEMON" 2>/dev/null
DAEMON=
[ "$(( 0x$(cat "$wq" | tr -d ,) & 2 ))" -eq 0 ] || fail "a killed daemon's isolation changed by itself"
start_live_daemon --config "$TMP/iso.conf"
cpu1_isolated "after the restart"
expect_status 0 "$CTL" --socket "$SOCK" release "$id"
host_as_saved "after release"

# Ended by its owner's exit.
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
cpu1_isolated "held again"
kill "$OWNER"
wait "$OWNER" 2>/dev/null
i=0
until [ "$(cat "$wq")" = "$(cat "$SAVED/wq")" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the owner exited and CPU 1 stays isolated"
	sleep 0.05
done
host_as_saved "after the owner's exit"

# Given back at the daemon's stop.
sleep 600 & OWNER=$!
PIDS="$PIDS $OWNER"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 600000 --owner $OWNER --isolate
cpu1_isolated "held a third time"
stop_daemon
host_as_saved "after the daemon stopped"

# A daemon that isolates nothing refuses --isolate, and makes the claim
# without isolation when asked if possible, saying so. (The held claim's
# owner goes first: the daemon would restore its claim.)
kill "$OWNER"
wait "$OWNER" 2>/dev/null
sleep 600 & OWNER=$!
PIDS="$PIDS $OWNER"
start_live_daemon
expect_status 69 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 60000 --isolate --owner $OWNER
grep -q "isolates nothing" "$TMP/err" || fail "--isolate without [isolation]: $(cat "$TMP/err")"
expect_status 0 "$CTL" --socket "$SOCK" query --prio 50 -c 1 --claim 60000 --isolate-if-possible --owner $OWNER
grep -q "^reason  not isolated: this daemon isolates nothing" "$TMP/out" ||
	fail "--isolate-if-possible without [isolation]: $(cat "$TMP/out")"
expect_status 0 "$RUN" --socket "$SOCK" --verbose -c 0 --isolate-if-possible -- true
grep -q "^rtplace-run: not isolated: this daemon isolates nothing" "$TMP/err" ||
	fail "rtplace-run --isolate-if-possible --verbose: $(cat "$TMP/err")"
host_as_saved "with a daemon that isolates nothing"
echo "PASS: isolated claims take CPU 1 from interrupts and unbound work, and give it back on every end"
