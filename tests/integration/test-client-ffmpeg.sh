#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A real ffmpeg transcode (x264, two threads) of a generated source through
# rtplace-run: while it runs, every ffmpeg thread is at SCHED_FIFO 20 on the
# claimed CPU and the daemon shows the claim; it completes with status 0; the
# claim ends with it.
#
# ffmpeg runs on CPU 1 (--cpu-list 1, keeping CPU 0 free of RT work) and
# reads its input at the native rate (-re), so it mostly sleeps; it is
# bounded by -t 3 and by this normal-priority script, which kills it after
# 60 s.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v ffmpeg >/dev/null || skip "ffmpeg is not installed (apt-get install ffmpeg)"
[ "$(python3 -c 'import os; print(1 in os.sched_getaffinity(0))')" = True ] || skip "needs CPU 1"

rt_lock
start_daemon
"$RUN" --socket "$SOCK" --prio 20 --cpu-list 1 -- \
	ffmpeg -nostdin -hide_banner -loglevel error -re -f lavfi -i testsrc2=size=320x240:rate=25 \
	-t 5 -c:v libx264 -preset ultrafast -threads 2 -f null - &
ff=$!
PIDS=$ff
(sleep 60; kill -9 "$ff" 2>/dev/null) &
PIDS="$ff $!"

i=0
until [ "$(cat /proc/"$ff"/comm 2>/dev/null)" = ffmpeg ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "ffmpeg did not start"
	sleep 0.05
done
# Wait (bounded) for its encoder threads, then look at every one of them.
python3 - "$ff" <<'PY' || fail "ffmpeg threads are not placed"
import os, sys, time
pid = sys.argv[1]
# x264 with -threads 2 starts encoder threads: inheritance is what is tested.
deadline = time.monotonic() + 20
while len(os.listdir(f"/proc/{pid}/task")) < 2 and time.monotonic() < deadline:
    time.sleep(0.05)
tids = os.listdir(f"/proc/{pid}/task")
bad = []
for tid in tids:
    t = int(tid)
    pol = os.sched_getscheduler(t)
    prio = os.sched_getparam(t).sched_priority
    cpus = os.sched_getaffinity(t)
    if (pol, prio, cpus) != (os.SCHED_FIFO, 20, {1}):
        bad.append((t, pol, prio, sorted(cpus)))
print(f"ffmpeg {pid}: {len(tids)} threads, all SCHED_FIFO 20 on CPU 1" if not bad else bad)
sys.exit(1 if bad or len(tids) < 2 else 0)
PY
"$CTL" --socket "$SOCK" --json cpus | python3 -c "
import json, sys
c = json.load(sys.stdin)['cpus'][1]
assert c['claim'] and c['claim_level'] == 'rt20', c
" || fail "no claim on CPU 1 while ffmpeg runs"

wait "$ff"
st=$?
[ $st = 0 ] || fail "ffmpeg exited with $st"
PIDS=
wait_claims 0
stop_daemon
exit 0
