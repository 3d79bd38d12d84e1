#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A claim rtplaced cannot record in its state file (its file system is
# full) is refused with an error that says so, and subscribers hear nothing
# of it: no claim-created record, and no claim-released after one. The
# claims recorded before and after it are heard of as usual. Root: the full
# file system is a small tmpfs of the test's own, holding the socket and so
# the state file beside it.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
FULL=$TMP/full
mkdir "$FULL" || fail "cannot make $FULL"
mount -t tmpfs -o size=256k,mode=0700 rtplace-test "$FULL" || skip "cannot mount a tmpfs"
# The daemon holds the file system: it goes first, then the mount, then
# the rest as every test cleans up.
cleanup_full() {
	[ -z "$DAEMON" ] || { kill -9 "$DAEMON" 2>/dev/null; wait "$DAEMON" 2>/dev/null; }
	DAEMON=
	umount -l "$FULL"
	cleanup
}
trap cleanup_full EXIT

SOCK=$FULL/rtplaced.sock
# No lease: every claim lives until the test ends, so none ends on its own.
printf '[limits]\nmax-claims-per-user = 1000\n[placement]\nclaim-timeout-ms = 0\n' >"$CONF"
start_daemon

# Claims with this shell as owner are kept in the state file; prints the
# claim's id.
claim() {
	"$CTL" --socket "$SOCK" --json query --prio 10 --claim 0 --owner $$ >"$TMP/out" 2>"$TMP/err" || return 1
	python3 -c "import json; print(json.load(open('$TMP/out'))['claim']['id'])"
}

# Waits (bounded) until the watcher printed the creation of claim $1.
wait_created() {
	i=0
	until python3 -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.endswith('\\n')]
sys.exit(not any(r['type'] == 'claim-created' and r['claim'] == int(sys.argv[2]) for r in recs))
" "$TMP/wj" "$1"; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "the watcher saw no claim-created for claim $1: $(cat "$TMP/wj" "$TMP/wj.err")"
		sleep 0.05
	done
}

# The watcher has subscribed once it saw a claim made after it started.
"$CTL" --socket "$SOCK" --json watch >"$TMP/wj" 2>"$TMP/wj.err" &
PIDS="$PIDS $!"
: >"$TMP/made"
i=0
until [ -s "$TMP/wj" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the watcher printed no record: $(cat "$TMP/wj.err")"
	id=$(claim) || fail "claim before the file system is full: $(cat "$TMP/err")"
	echo "$id" >>"$TMP/made"
	sleep 0.05
done

# Full: the journal's last page takes a few more lines, then a claim
# cannot be recorded.
dd if=/dev/zero of="$FULL/filler" bs=4k 2>/dev/null
[ "$(df --output=avail "$FULL" | tail -n 1)" -eq 0 ] || fail "$FULL is not full: $(df "$FULL")"
i=0
while id=$(claim); do
	echo "$id" >>"$TMP/made"
	i=$((i + 1))
	[ $i -lt 400 ] || fail "400 claims recorded on a full file system"
done
grep -q "cannot record the claim in the state file" "$TMP/err" || fail "the refusal: $(cat "$TMP/err")"
grep -q "Failed to record claim [0-9]* in $FULL/rtplaced.sock.claims: No space left on device" \
	"$TMP/rtplaced.log" || fail "the daemon's log does not say why"

# Room again: the next claim is recorded, and once its record is seen,
# the watcher has seen everything before it.
rm "$FULL/filler"
id=$(claim) || fail "claim once the file system has room: $(cat "$TMP/err")"
echo "$id" >>"$TMP/made"
wait_created "$id"
python3 -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.endswith('\\n')]
created = sorted(r['claim'] for r in recs if r['type'] == 'claim-created')
# the claims made before the watcher subscribed are not its to see
made = sorted(i for i in map(int, open(sys.argv[2])) if i >= created[0])
ended = [r for r in recs if r['type'] != 'claim-created']
assert created == made, ('created', created, 'made', made)
assert not ended, ended
" "$TMP/wj" "$TMP/made" || fail "the records are not those of the claims made: $(cat "$TMP/wj")"
[ "$(status_field claims_active)" = "$(wc -l <"$TMP/made")" ] || fail "the daemon holds $(status_field claims_active) claims"
