#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The host's side of the guests' suspend to RAM (tests/system/run.sh): a
# sleeping machine wakes only from outside. Connects to qemu's QMP socket
# (waiting for qemu to make it), and each time the guest enters S3 (event
# SUSPEND) waits SECONDS, then sends system_wakeup; ends when qemu does.
#
#   wakeup.py QMP-SOCKET [SECONDS]
import json
import socket
import sys
import time

path = sys.argv[1]
delay = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
sock = socket.socket(socket.AF_UNIX)
for _ in range(600):
    try:
        sock.connect(path)
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit(f"wakeup: no QMP socket at {path}")
qmp = sock.makefile("rw")


def send(command):
    qmp.write(json.dumps({"execute": command}) + "\n")
    qmp.flush()


qmp.readline()  # the greeting
send("qmp_capabilities")
for line in qmp:
    event = json.loads(line).get("event")
    if event:
        print(f"wakeup: {time.strftime('%H:%M:%S')} {event}", flush=True)
    if event == "SUSPEND":
        time.sleep(delay)
        send("system_wakeup")
