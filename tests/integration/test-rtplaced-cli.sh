#!/bin/sh
# rtplaced's command line: --help, --version, bad usage (64), and
# --check-config on good and bad files (every error as file:line, status 78).
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

cp "$top_srcdir/conf/rtplaced.conf" "$dir/good.conf"
"$rtplaced" --check-config --config "$dir/good.conf" > "$dir/out" 2>&1 || fail "example config rejected: $(cat "$dir/out")"

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
echo "ok"
