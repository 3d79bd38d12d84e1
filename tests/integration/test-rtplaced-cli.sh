#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplaced's command line: --help, --version, bad usage (64, also a
# --socket path that is relative or too long), and
# --check-config on good and bad files (every error as file:line, status 78),
# and --serves-rtkit (0 when [rtkit] enable = yes, 1 when not, 78 for a bad
# file), which rtkit-daemon's drop-in asks.
set -u
rtplaced="$top_builddir/daemon/rtplaced"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$rtplaced" --help > "$dir/help" || fail "--help exited $?"
grep -q '^Usage: rtplaced' "$dir/help" || fail "--help has no usage line"
grep -q -- '--check-config' "$dir/help" || fail "--help does not document --check-config"
"$rtplaced" --version | grep -q '^rtplaced [0-9]' || fail "--version"

"$rtplaced" --no-such-option 2> "$dir/err"; rc=$?
[ $rc -eq 64 ] || fail "bad option exited $rc, expected 64"
grep -q -- "--help" "$dir/err" || fail "bad option does not point at --help"
"$rtplaced" stray-argument 2>/dev/null; rc=$?
[ $rc -eq 64 ] || fail "stray argument exited $rc, expected 64"

# --socket as [daemon] socket takes it: absolute, at most 107 bytes (a
# longer one was cut, a relative one followed the working directory).
long="/tmp/$(printf '%0120d' 0)"
"$rtplaced" --check-config --socket "$long" 2> "$dir/err"; rc=$?
[ $rc -eq 64 ] || fail "--socket of ${#long} bytes exited $rc, expected 64"
grep -q "holds at most 107" "$dir/err" || fail "--socket too long: $(cat "$dir/err")"
"$rtplaced" --check-config --socket rtplaced.sock 2> "$dir/err"; rc=$?
[ $rc -eq 64 ] || fail "relative --socket exited $rc, expected 64"
grep -q "not an absolute path" "$dir/err" || fail "relative --socket: $(cat "$dir/err")"

cp "$top_srcdir/conf/rtplaced.conf" "$dir/good.conf"
"$rtplaced" --check-config --config "$dir/good.conf" > "$dir/out" 2>&1 || fail "example config rejected: $(cat "$dir/out")"

printf '[rtkit]\nenable = yes\n' > "$dir/rtkit-on.conf"
"$rtplaced" --serves-rtkit --config "$dir/rtkit-on.conf" || fail "--serves-rtkit with enable = yes exited $?"
"$rtplaced" --serves-rtkit --config "$dir/good.conf"; rc=$?
[ $rc -eq 1 ] || fail "--serves-rtkit with the interface off exited $rc, expected 1"
printf '[rtkit]\nenable = perhaps\n' > "$dir/rtkit-bad.conf"
"$rtplaced" --serves-rtkit --config "$dir/rtkit-bad.conf" 2> "$dir/err"; rc=$?
[ $rc -eq 78 ] || fail "--serves-rtkit on a bad file exited $rc, expected 78"
grep -q "rtkit-bad.conf:2:" "$dir/err" || fail "--serves-rtkit on a bad file: $(cat "$dir/err")"

cat > "$dir/bad.conf" <<'CONF'
[daemon]
log-level = chatty
[placement]
avoid-smt-siblings = sometimes
no-such-key = 1
CONF
"$rtplaced" --check-config --config "$dir/bad.conf" 2> "$dir/err"; rc=$?
[ $rc -eq 78 ] || fail "bad config exited $rc, expected 78"
for line in 2 4 5; do
	grep -q "^$dir/bad.conf:$line: " "$dir/err" || fail "no error reported for line $line: $(cat "$dir/err")"
done

"$rtplaced" --check-config --config "$dir/missing.conf" 2> "$dir/err"; rc=$?
[ $rc -eq 78 ] || fail "missing explicit config exited $rc, expected 78"
grep -q "missing.conf" "$dir/err" || fail "missing config not named"
# Not a regular file: refused at once, never read (a FIFO would block,
# /dev/zero never ends), with what the file is.
mkfifo "$dir/fifo.conf"
timeout 10 "$rtplaced" --check-config --config "$dir/fifo.conf" 2> "$dir/err"; rc=$?
[ $rc -ne 124 ] || fail "--check-config on a FIFO hangs"
[ $rc -eq 78 ] || fail "FIFO config exited $rc, expected 78"
grep -qx "$dir/fifo.conf is not a regular file (a FIFO)" "$dir/err" || fail "FIFO config: $(cat "$dir/err")"
timeout 10 "$rtplaced" --check-config --config "$dir" 2> "$dir/err"; rc=$?
[ $rc -eq 78 ] || fail "folder as config exited $rc, expected 78"
grep -qx "$dir is not a regular file (a directory)" "$dir/err" || fail "folder as config: $(cat "$dir/err")"
timeout 10 "$rtplaced" --check-config --config /dev/zero 2> "$dir/err"; rc=$?
[ $rc -ne 124 ] || fail "--check-config on /dev/zero hangs"
[ $rc -eq 78 ] || fail "/dev/zero as config exited $rc, expected 78"
grep -qx "/dev/zero is not a regular file (a character device)" "$dir/err" ||
	fail "/dev/zero as config: $(cat "$dir/err")"

# The same for --topology: it hung on /dev/zero without a word.
for topo in /dev/zero "$dir/fifo.conf"; do
	timeout 10 "$rtplaced" --config "$dir/good.conf" --socket "$dir/rtplaced.sock" --topology "$topo" \
		> "$dir/err" 2>&1; rc=$?
	[ $rc -ne 124 ] || fail "--topology $topo hangs"
	[ $rc -ne 0 ] || fail "--topology $topo started"
	grep -q "Failed to load the topology: $topo is not a regular file (a" "$dir/err" ||
		fail "--topology $topo: $(cat "$dir/err")"
done

# No file at the default path: said so, and the defaults apply (status 0).
default=$("$rtplaced" --help | sed -n 's/.*read FILE instead of \(.*\)$/\1/p')
[ -n "$default" ] || fail "--help names no default configuration path"
check_default() {
	"$rtplaced" --check-config > "$dir/out" 2>&1; rc=$?
	[ $rc -eq 0 ] || fail "--check-config without $default exited $rc: $(cat "$dir/out")"
	grep -qx "no configuration file at $default; the built-in defaults apply" "$dir/out" ||
		fail "--check-config without $default: $(cat "$dir/out")"
}
if [ ! -e "$default" ]; then
	check_default
elif [ "$(id -u)" -eq 0 ] && unshare --mount true 2>/dev/null; then
	# A file is installed there: hide it in a private mount namespace.
	export rtplaced default dir
	unshare --mount sh -c 'mount -t tmpfs tmpfs "$(dirname "$default")" &&
		"$rtplaced" --check-config' > "$dir/out" 2>&1; rc=$?
	[ $rc -eq 0 ] || fail "--check-config with $default hidden exited $rc: $(cat "$dir/out")"
	grep -qx "no configuration file at $default; the built-in defaults apply" "$dir/out" ||
		fail "--check-config with $default hidden: $(cat "$dir/out")"
else
	echo "note: $default exists and cannot be hidden without root; its message is not checked"
fi
echo "ok"
