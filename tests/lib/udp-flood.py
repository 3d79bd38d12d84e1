# SPDX-License-Identifier: GPL-2.0-or-later
# A known softirq load for SECONDS (argv[1]): a loopback UDP flood, whose
# NET_RX runs on the sending CPU (pin it with taskset). It ends itself;
# callers bound it from a normal-priority process too. Shared by
# tests/integration/test-daemon-irqnoise.sh and bench/irqnoise-cost.sh.
import socket, sys, time
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 0))
r.setblocking(False)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
to, data, end = r.getsockname(), b"x" * 1400, time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    for _ in range(200):
        s.sendto(data, to)
        try:
            r.recv(2048)
        except BlockingIOError:
            pass
