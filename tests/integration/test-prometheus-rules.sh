#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The Prometheus alerting rules in contrib/prometheus: promtool accepts
# them, its unit tests (rtplace-alerts.test.yml) see each alert fire on the
# series meant to fire it and stay quiet otherwise (the stock kernel's RT
# budget among them), every alert has such a test, and every rtplace_*
# series they use is one the daemon exports and rtplaced(8) documents.
: "${top_srcdir:=.}"
dir=$top_srcdir/contrib/prometheus
command -v promtool >/dev/null || { echo "SKIP: promtool is not installed (apt-get install prometheus)"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$(promtool check rules "$dir/rtplace-alerts.yml" 2>&1) || fail "promtool check rules: $out"
echo "$out" | grep -q "SUCCESS: 11 rules found" || fail "promtool found other rules than the eleven: $out"
# Every rule has its test, and the stock kernel's RT budget (0.95 of 1 s)
# is among the series that must not fire.
for alert in $(sed -n 's/^ *- alert: //p' "$dir/rtplace-alerts.yml"); do
	grep -q "alertname: $alert\$" "$dir/rtplace-alerts.test.yml" || fail "no promtool test for $alert"
done
grep -q "values: '0.95x10'" "$dir/rtplace-alerts.test.yml" || fail "no test of the stock kernel's RT budget"
out=$(cd "$dir" && promtool test rules rtplace-alerts.test.yml 2>&1) || fail "promtool test rules: $out"
for name in $(grep -o 'rtplace_[a-z_]*' "$dir/rtplace-alerts.yml" | sort -u); do
	grep -q "\"$name" "$top_srcdir/daemon/metrics.c" || fail "the rules use $name, which daemon/metrics.c does not export"
	grep -q "^\.BR.* $name\b\|^\.BR $name\b" "$top_srcdir/man/rtplaced.8" || fail "the rules use $name, which rtplaced(8) does not document"
done
echo "PASS: the alerting rules check, pass their tests and use exported series"
