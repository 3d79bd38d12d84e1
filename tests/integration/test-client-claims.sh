#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `rtplacectl claims` and rtplace-run's refusal (simulated daemon): who
# holds each claim, as the caller may see it (DESIGN §15). Root sees every
# claim's owner process, comm and uid; a user sees those of its own uid's
# claims and of another user's only that another user holds one; a client
# in another PID namespace sees an owner process by its own number, and
# one outside its namespace not at all. rtplace-run's refusal names the
# owners it may see beside the claims' ids.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
[ "$(id -u nobody 2>/dev/null)" ] || skip "no user nobody"
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"

# nobody reaches the socket and the staged programs, and may claim at RT
# levels (its group is an rt-group).
chmod 0711 "$TMP"
printf '[moves]\nrt-groups = nogroup\n' >"$CONF"
start_daemon
chmod 0666 "$SOCK"
stage_programs "$CTL" "$RUN"
NUID=$(id -u nobody)

# The claim field F of claim ID in $TMP/out (rtplacectl --json claims).
field() {
	python3 -c "
import json, sys
c = [c for c in json.load(open(sys.argv[1]))['claims'] if c['id'] == int(sys.argv[2])]
assert len(c) == 1, c
print(json.dumps(c[0][sys.argv[3]]))
" "$TMP/out" "$1" "$2"
}
claim_of() {
	python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['claim']['id'])" "$TMP/out"
}

# Root's claim on CPU 0, exclusive, owned by a sleeper; nobody's on CPU 1
# at rt40 (below the default [moves] max-prio).
sleep 60 &
ROOT_OWNER=$!
PIDS="$PIDS $ROOT_OWNER"
expect_status 0 "$CTL" --socket "$SOCK" --json query --prio 1 -c 0 --claim 600000 --owner $ROOT_OWNER --exclusive
c0=$(claim_of)
$NOBODY sleep 60 &
NOBODY_OWNER=$!
PIDS="$PIDS $NOBODY_OWNER"
i=0
until [ "$(cat /proc/$NOBODY_OWNER/comm 2>/dev/null)" = sleep ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "nobody's sleeper $NOBODY_OWNER did not start"
	sleep 0.05
done
expect_status 0 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" --json query --prio 40 -c 1 --claim 600000 \
	--owner $NOBODY_OWNER
c1=$(claim_of)
wait_claims 2

# Root sees both owners.
expect_status 0 "$CTL" --socket "$SOCK" --json claims
[ "$(field "$c0" owner_pid)" = "$ROOT_OWNER" ] && [ "$(field "$c0" owner_comm)" = '"sleep"' ] &&
	[ "$(field "$c0" owner_uid)" = 0 ] && [ "$(field "$c0" exclusive)" = true ] &&
	[ "$(field "$c0" cpu_list)" = '"0"' ] || fail "root's view of claim $c0: $(cat "$TMP/out")"
[ "$(field "$c1" owner_pid)" = "$NOBODY_OWNER" ] && [ "$(field "$c1" owner_uid)" = "$NUID" ] &&
	[ "$(field "$c1" other_user)" = false ] && [ "$(field "$c1" lease_left_ms)" != null ] &&
	[ "$(field "$c1" ends)" = '["owner-exit", "lease", "release"]' ] ||
	fail "root's view of claim $c1: $(cat "$TMP/out")"
# In 80 columns the lease left has a column of its own, in seconds; on a
# wider terminal it is a parenthesis of ENDS.
expect_status 0 "$CTL" --socket "$SOCK" claims
grep -Eq "^ *$c0 exclusive +0 +$ROOT_OWNER +sleep +0 +owner-exit +[0-9]+\.[0-9]\$" "$TMP/out" ||
	fail "root's table: $(cat "$TMP/out")"
COLUMNS=132 expect_status 0 "$CTL" --socket "$SOCK" claims
grep -Eq "^ *$c0 exclusive +0 +$ROOT_OWNER +sleep +0 +owner-exit,lease\([0-9]+ ms left\)\$" "$TMP/out" ||
	fail "root's wide table: $(cat "$TMP/out")"

# nobody sees its own claim's owner, and of root's only another user's.
expect_status 0 $NOBODY "$STAGED/rtplacectl" --socket "$SOCK" --json claims
[ "$(field "$c1" owner_pid)" = "$NOBODY_OWNER" ] && [ "$(field "$c1" owner_uid)" = "$NUID" ] ||
	fail "nobody's view of its claim $c1: $(cat "$TMP/out")"
[ "$(field "$c0" other_user)" = true ] && [ "$(field "$c0" owner_pid)" = null ] &&
	[ "$(field "$c0" owner_uid)" = null ] && [ "$(field "$c0" owner_comm)" = null ] &&
	[ "$(field "$c0" cpu_list)" = '"0"' ] || fail "nobody's view of root's claim $c0: $(cat "$TMP/out")"

# nobody as "root" of a user namespace of its own (unshare -Ur) is still
# nobody to the daemon: root's owner stays hidden.
expect_status 0 $NOBODY unshare -Ur "$STAGED/rtplacectl" --socket "$SOCK" --json claims
[ "$(field "$c0" other_user)" = true ] && [ "$(field "$c0" owner_pid)" = null ] &&
	[ "$(field "$c0" owner_uid)" = null ] ||
	fail "a user namespace's view of root's claim $c0: $(cat "$TMP/out")"

# rtplace-run's refusal: root's names both owners, nobody's only its own.
expect_status 75 taskset -c 0,1 "$RUN" --socket "$SOCK" -- echo ran
grep -qx "rtplace-run: no free CPU for a pinned (normal-level) claim among CPUs 0-1: CPU 0 held by claim $c0 \
(exclusive, owner pid $ROOT_OWNER sleep, uid 0), CPU 1 held by claim $c1 (at rt40, owner pid $NOBODY_OWNER \
sleep, uid $NUID)" "$TMP/err" || fail "root's refusal: $(cat "$TMP/err")"
expect_status 75 $NOBODY taskset -c 0,1 "$STAGED/rtplace-run" --socket "$SOCK" -- echo ran
grep -qx "rtplace-run: no free CPU for a pinned (normal-level) claim among CPUs 0-1: CPU 0 held by claim $c0 \
(exclusive, another user's), CPU 1 held by claim $c1 (at rt40, owner pid $NOBODY_OWNER sleep, uid $NUID)" \
	"$TMP/err" || fail "nobody's refusal: $(cat "$TMP/err")"

# Another PID namespace: root's sleeper lives outside it (no pid, no
# comm), and a claim owned by a process inside is shown by the number it
# has there.
unshare --pid --fork --mount-proc sh -c '
"$1" --socket "$2" --json query --prio 1 -c 2 --claim 600000 --owner $$ >"$3/ns-claim" || exit 1
"$1" --socket "$2" --json claims >"$3/ns-claims" || exit 2
echo $$ >"$3/ns-pid"
' sh "$CTL" "$SOCK" "$TMP" || fail "the client in its own PID namespace failed (exit $?)"
cp "$TMP/ns-claims" "$TMP/out"
c2=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['claim']['id'])" "$TMP/ns-claim")
[ "$(field "$c0" owner_pid)" = null ] && [ "$(field "$c0" owner_uid)" = 0 ] &&
	[ "$(field "$c0" other_user)" = false ] || fail "the namespace's view of claim $c0: $(cat "$TMP/out")"
[ "$(field "$c2" owner_pid)" = "$(cat "$TMP/ns-pid")" ] && [ "$(field "$c2" owner_comm)" = '"sh"' ] ||
	fail "the namespace's view of its own claim $c2 (pid $(cat "$TMP/ns-pid")): $(cat "$TMP/out")"
wait_claims 2

# A claim ends: it leaves the list.
kill $NOBODY_OWNER
wait_claims 1
expect_status 0 "$CTL" --socket "$SOCK" --json claims
python3 -c "
import json, sys
assert [c['id'] for c in json.load(open(sys.argv[1]))['claims']] == [int(sys.argv[2])]
" "$TMP/out" "$c0" || fail "the list after claim $c1 ended: $(cat "$TMP/out")"
exit 0
