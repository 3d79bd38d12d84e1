#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplaced(8) reads as an operator uses it: what it does, OPTIONS and
# EXAMPLES come before the sections on how it works inside (TRACKING, CPU
# HOTPLUG, PID NAMESPACES, OVERHEAD, METRICS), and the page renders without
# a groff warning.
: "${top_srcdir:=.}"
page=$top_srcdir/man/rtplaced.8
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# Line number of section $1, 0 when the page lacks it.
section_line() {
	grep -n "^\.SH \"*$1\"*\$" "$page" | head -n 1 | cut -d: -f1 | grep . || echo 0
}

opts=$(section_line OPTIONS)
examples=$(section_line EXAMPLES)
[ "$opts" -gt 0 ] || fail "rtplaced(8) has no OPTIONS section"
[ "$examples" -gt "$opts" ] || fail "rtplaced(8): EXAMPLES (line $examples) missing or not after OPTIONS (line $opts)"
for internal in TRACKING "CPU HOTPLUG" "PID NAMESPACES" REALTIMEKIT OVERHEAD METRICS; do
	at=$(section_line "$internal")
	[ "$at" -gt 0 ] || fail "rtplaced(8) has no $internal section"
	[ "$at" -gt "$examples" ] || fail "rtplaced(8): $internal (line $at) comes before EXAMPLES (line $examples)"
done
# DESCRIPTION stays short: the internals have sections of their own.
desc=$(section_line DESCRIPTION)
[ $((opts - desc)) -lt 60 ] || fail "rtplaced(8): DESCRIPTION is $((opts - desc)) lines, keep it under 60"

if command -v groff >/dev/null; then
	warnings=$(groff -man -ww -z "$page" 2>&1)
	[ -z "$warnings" ] || fail "groff warns on rtplaced(8): $warnings"
fi
exit $status
