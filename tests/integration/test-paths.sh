#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The configuration path is the one this build was configured with
# ($sysconfdir/rtplace/rtplaced.conf), in `rtplaced --help` and in every
# installed man page that names it.
: "${top_builddir:=.}"
[ -n "${sysconfdir:-}" ] || { echo "FAIL: sysconfdir is not in the test environment" >&2; exit 99; }
conf=$sysconfdir/rtplace/rtplaced.conf
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

"$top_builddir/daemon/rtplaced" --help | grep -qF "$conf" || fail "rtplaced --help does not name $conf"

for page in rtplaced.8 rtplaced.conf.5; do
	grep -qF "$conf" "$top_builddir/man/gen/$page" || fail "$page does not name $conf"
done
# Every path to rtplaced.conf (or its .example) in any page is this build's.
for page in "$top_builddir"/man/gen/*; do
	for path in $(grep -o '[^ ]*/rtplace/rtplaced\.conf[.a-z]*' "$page" | sort -u); do
		case $path in
		"$conf" | "$conf.example") ;;
		*) fail "$(basename "$page") names $path, not $conf" ;;
		esac
	done
done
exit $status
