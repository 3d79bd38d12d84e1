#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The metrics endpoint against the real consumers: `promtool check metrics`
# accepts the page, and a real Prometheus server (its own folder, config
# and storage, loopback ports only) scrapes a simulated 480-CPU rtplaced
# and answers queries about it through its HTTP API. Every wait is bounded
# and everything started is killed on every exit path
# (test-client-common.sh).
. "$top_srcdir/tests/integration/test-client-common.sh"

command -v promtool >/dev/null || skip "promtool is not installed (Debian package prometheus)"
command -v prometheus >/dev/null || skip "prometheus is not installed (Debian package prometheus)"

# A loopback port nobody listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# GET of a URL on loopback; fails the test on anything but 200.
get() {
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1" ||
		fail "GET $1 failed"
}

METRICS_PORT=$(free_port)
PROM_PORT=$(free_port)
[ "$METRICS_PORT" != "$PROM_PORT" ] || PROM_PORT=$(free_port)
cat >"$TMP/rtplaced.conf" <<CONF
[metrics]
listen = 127.0.0.1:$METRICS_PORT
CONF
start_live_daemon --config "$TMP/rtplaced.conf" --topology "$TOPO480"

get "http://127.0.0.1:$METRICS_PORT/metrics" >"$TMP/page"
promtool check metrics <"$TMP/page" >"$TMP/promtool.out" 2>&1 || fail "promtool check metrics: $(cat "$TMP/promtool.out")"
[ "$(grep -c '^rtplace_cpu_online{cpu="[0-9]*"} 1$' "$TMP/page")" = 480 ] || fail "not 480 online CPUs in the page"
# A simulated machine's interrupts are not measured: no series.
! grep -q '^rtplace_cpu_\(soft\)\?irq_seconds_total' "$TMP/page" || fail "interrupt series for a simulated machine"

cat >"$TMP/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rtplace
    static_configs:
      - targets: ['127.0.0.1:$METRICS_PORT']
CONF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$TMP/prometheus.log" 2>&1 &
PIDS="$PIDS $!"

# Prometheus answers once it has scraped the daemon at least once.
version=$("$RTPLACED" --version | sed 's/^rtplaced //')
query() {
	python3 - "http://127.0.0.1:$PROM_PORT/api/v1/query" "$1" <<'PY' 2>/dev/null
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
doc = json.load(urllib.request.urlopen(url, timeout=5))
for r in doc["data"]["result"]:
    print(",".join(f"{k}={v}" for k, v in sorted(r["metric"].items()) if k not in ("instance", "job")), r["value"][1])
PY
}
i=0
until [ "$(query rtplace_build_info)" = "__name__=rtplace_build_info,version=$version 1" ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "Prometheus never returned rtplace_build_info: $(query rtplace_build_info); log: $(tail -5 "$TMP/prometheus.log")"
	sleep 0.1
done
[ "$(query 'count(rtplace_cpu_online == 1)')" = " 480" ] || fail "count(rtplace_cpu_online == 1): $(query 'count(rtplace_cpu_online == 1)')"
[ "$(query 'up{job="rtplace"}')" = "__name__=up 1" ] || fail "up: $(query 'up{job="rtplace"}')"

# The live daemon (root) on the same port adds the tracker's time by class:
# four counters per CPU that promtool accepts and Prometheus
# reads back, growing between scrapes.
[ "$(id -u)" = 0 ] || exit 0
stop_daemon
start_live_daemon --config "$TMP/rtplaced.conf"
ncpus=$(getconf _NPROCESSORS_CONF)
get "http://127.0.0.1:$METRICS_PORT/metrics" >"$TMP/page"
promtool check metrics <"$TMP/page" >"$TMP/promtool.out" 2>&1 || fail "promtool check metrics (live): $(cat "$TMP/promtool.out")"
[ "$(grep -c '^rtplace_cpu_class_seconds_total{cpu="[0-9]*",class="\(idle\|normal\|rt\|dl\)"} [0-9]*\.[0-9]\{9\}$' "$TMP/page")" = $((ncpus * 4)) ] ||
	fail "not 4 class counters for each of $ncpus CPUs: $(grep class_seconds "$TMP/page" | head -8)"
# /proc/stat's interrupt time: a hardirq and a softirq counter per CPU,
# the same seconds /proc/stat counts (within the ticks between the two
# reads: the daemon's sample is older).
for kind in irq softirq; do
	[ "$(grep -c "^rtplace_cpu_${kind}_seconds_total{cpu=\"[0-9]*\"} [0-9]*\.[0-9]\{3\}\$" "$TMP/page")" = "$ncpus" ] ||
		fail "not one $kind counter for each of $ncpus CPUs: $(grep "${kind}_seconds" "$TMP/page" | head -4)"
done
python3 - "$TMP/page" <<'PY' || fail "softirq seconds do not follow /proc/stat: $(grep softirq_seconds "$TMP/page" | head -4)"
import os, re, sys
page = open(sys.argv[1]).read()
hz = os.sysconf("SC_CLK_TCK")
for line in open("/proc/stat"):
    m = re.match(r"cpu(\d+) (.*)", line)
    if m:
        now = int(m.group(2).split()[6]) / hz
        got = float(re.search(r'^rtplace_cpu_softirq_seconds_total\{cpu="%s"\} (\S+)$' % m.group(1), page, re.M).group(1))
        assert got <= now + 1e-6, (m.group(1), got, now)
        assert got > 0 or now < 2, (m.group(1), got, now)
PY
i=0
until [ "$(query 'count(rtplace_cpu_class_seconds_total)')" = " $((ncpus * 4))" ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "Prometheus never returned the class counters: $(query 'count(rtplace_cpu_class_seconds_total)')"
	sleep 0.1
done
# Time passes: counters grow between scrapes.
i=0
until [ "$(query 'count(increase(rtplace_cpu_class_seconds_total[5s]) > 0)' | tr -d ' ')" -ge 1 ] 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "class counters do not grow: $(query 'rtplace_cpu_class_seconds_total')"
	sleep 0.1
done
exit 0
