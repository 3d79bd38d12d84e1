#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd units: systemd-analyze verify accepts them (with ExecStart
# and ExecReload pointed at this build's rtplaced and rtplacectl), a
# reload waits for the daemon's verdict (rtplacectl reload), and the offline security score of the
# service stays at "OK" or better (exposure below 4.0), also with the metrics
# drop-in rtplaced.conf(5) documents.
set -u
command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: systemd-analyze not installed"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|@sbindir@|$top_builddir/daemon|g; s|@bindir@|$top_builddir/client|g" "$top_srcdir/systemd/rtplaced.service.in" \
	> "$dir/rtplaced.service"
cp "$top_srcdir/systemd/rtplaced.socket" "$dir/rtplaced.socket"

if ! systemd-analyze verify --man=no "$dir/rtplaced.service" "$dir/rtplaced.socket"; then
	echo "FAIL: systemd-analyze verify rejected the units"
	exit 1
fi
grep -q '^Type=notify$' "$dir/rtplaced.service" || { echo "FAIL: service is not Type=notify"; exit 1; }
# One ExecReload=, synchronous: SIGHUP alone would report every reload as
# a success, the daemon's refusal only in its log.
[ "$(grep '^ExecReload=' "$dir/rtplaced.service")" = "ExecReload=$top_builddir/client/rtplacectl reload" ] || {
	echo "FAIL: ExecReload= is not 'rtplacectl reload' alone: $(grep '^ExecReload=' "$dir/rtplaced.service")"; exit 1; }
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

# The metrics drop-in exactly as rtplaced.conf(5) shows it: systemd accepts
# it, it opens loopback IP to the daemon, and it keeps what the unit gave
# (netlink for hotplug uevents) and an exposure below 4.0.
mkdir "$dir/rtplaced.service.d"
awk '/metrics\.conf/ { f = 1 } f && /^\.nf/ { g = 1; next } g && /^\.fi/ { exit } g { print }' \
	"$top_srcdir/man/rtplaced.conf.5" > "$dir/rtplaced.service.d/metrics.conf"
grep -q '^PrivateNetwork=no$' "$dir/rtplaced.service.d/metrics.conf" || {
	echo "FAIL: no metrics drop-in found in rtplaced.conf(5)"; exit 1; }
if ! systemd-analyze verify --man=no "$dir/rtplaced.service" "$dir/rtplaced.socket"; then
	echo "FAIL: systemd-analyze verify rejected the unit with the metrics drop-in"
	exit 1
fi
report=$(systemd-analyze security --offline=yes --no-pager "$dir/rtplaced.service" 2>&1)
for want in "Service has access to the host's network" "Service may allocate Internet sockets" \
	"Service defines IP address allow list with only localhost entries" "Service may allocate netlink sockets"; do
	printf '%s\n' "$report" | grep -qF "$want" || { echo "FAIL: with the metrics drop-in, not: $want"; exit 1; }
done
score=$(printf '%s\n' "$report" | sed -n 's/.*Overall exposure level for rtplaced.service: \([0-9.]*\).*/\1/p')
echo "exposure with the metrics drop-in: ${score:-unknown}"
[ -n "$score" ] || { echo "FAIL: no exposure score with the metrics drop-in"; exit 1; }
awk -v s="$score" 'BEGIN { exit !(s < 4.0) }' || { echo "FAIL: exposure $score >= 4.0 with the metrics drop-in"; exit 1; }
