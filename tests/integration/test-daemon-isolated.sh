#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The host's isolated and nohz_full CPUs as the live kernel reports them
# (root, the real sysfs, no fixture): the live daemon's status names
# exactly the kernel's sets; where CPUs are isolated (the VM bed boots a
# guest with isolcpus=domain,managed_irq,2-7 nohz_full=2-7), an rt50
# claim lands on isolated CPUs and a normal-level claim (rtplace-run
# without --prio) keeps off them. On a host with none, the sets must read
# "none" (what a kernel without isolation says) and the claims are not
# tried: there is nothing to keep them apart from.
. "$top_srcdir/tests/integration/test-client-common.sh"

require_root
sys=/sys/devices/system/cpu
iso=$(cat "$sys/isolated" 2>/dev/null)
nohz=$(cat "$sys/nohz_full" 2>/dev/null)
[ "$nohz" != "(null)" ] || nohz=
start_live_daemon

got_iso=$(status_field isolated)
got_nohz=$(status_field nohz_full)
[ "$got_iso" = "$iso" ] || fail "status says isolated '$got_iso', the kernel '$iso'"
[ "$got_nohz" = "$nohz" ] || fail "status says nohz_full '$got_nohz', the kernel '$nohz'"
expect_status 0 "$CTL" --socket "$SOCK" status
grep -q "^isolated  *${iso:-none}\$" "$TMP/out" || fail "status does not show isolated ${iso:-none}: $(cat "$TMP/out")"
[ -n "$iso" ] || exit 0

in_iso() {
	python3 -c "
import sys
def cpus(s):
    out = set()
    for part in filter(None, s.split(',')):
        a, _, b = part.partition('-')
        out.update(range(int(a), int(b or a) + 1))
    return out
sys.exit(0 if cpus(sys.argv[1]) <= cpus(sys.argv[2]) else 1)" "$1" "$2"
}

expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 50 --count 2 --claim 0 --owner $$
rt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu_list"])' "$TMP/out")
in_iso "$rt" "$iso" || fail "an rt50 claim got CPUs $rt, not among the isolated $iso"
expect_status 0 "$RUN" --socket "$SOCK" --cpus 1 -- sh -c 'echo "$RTPLACE_CPUS"'
normal=$(cat "$TMP/out")
! in_iso "$normal" "$iso" || fail "a normal-level claim got isolated CPU $normal"
echo "# isolated $iso: rt50 claim on $rt, normal-level claim on $normal"
