#!/bin/sh
# The systemd units: systemd-analyze verify accepts them (with ExecStart
# pointed at this build's rtplaced), and the offline security score of the
# service stays at "OK" or better (exposure below 4.0).
set -u
command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: systemd-analyze not installed"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|@sbindir@|$top_builddir/daemon|g" "$top_srcdir/systemd/rtplaced.service.in" > "$dir/rtplaced.service"
cp "$top_srcdir/systemd/rtplaced.socket" "$dir/rtplaced.socket"

if ! systemd-analyze verify --man=no "$dir/rtplaced.service" "$dir/rtplaced.socket"; then
	echo "FAIL: systemd-analyze verify rejected the units"
	exit 1
fi
grep -q '^Type=notify$' "$dir/rtplaced.service" || { echo "FAIL: service is not Type=notify"; exit 1; }
grep -q '^ListenSequentialPacket=/run/rtplace/rtplaced.sock$' "$dir/rtplaced.socket" || {
	echo "FAIL: socket unit does not listen on the default path"; exit 1; }
# Claims tied to processes are kept beside the socket across restarts
# (DESIGN §14): the runtime directory must outlive the service.
grep -q '^RuntimeDirectoryPreserve=yes$' "$dir/rtplaced.service" || {
	echo "FAIL: /run/rtplace is not kept across restarts (RuntimeDirectoryPreserve=yes)"; exit 1; }

score=$(systemd-analyze security --offline=yes --no-pager "$dir/rtplaced.service" 2>&1 |
	sed -n 's/.*Overall exposure level for rtplaced.service: \([0-9.]*\).*/\1/p')
echo "exposure: ${score:-unknown}"
[ -n "$score" ] || { echo "FAIL: no exposure score"; exit 1; }
awk -v s="$score" 'BEGIN { exit !(s < 4.0) }' || { echo "FAIL: exposure $score >= 4.0"; exit 1; }
