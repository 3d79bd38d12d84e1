#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What rtplaced answers before it drops a client (simulated daemon): a
# packet that is no message (a bad magic, shorter than a header) or longer
# than any gets an ERROR naming what was wrong, then the connection closes,
# and the log says why, once for the client; a connection refused at a
# limit gets its ERROR. Packets the client sent after the one that got it
# dropped are discarded unread, so the client reads the ERROR, not a reset
# of the connection (ECONNRESET). The daemon is stopped (SIGSTOP) while a
# client queues its packets, so that they all wait when it reads the first.
# Root: a connection limit binds users other than root, here nobody.
. "${top_srcdir:-.}/tests/integration/test-client-common.sh"

require_root
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
NOBODY="setpriv --reuid 65534 --regid 65534 --clear-groups"

# nobody reaches the socket (one connection each) and writes its flags
# in a folder of its own.
chmod 755 "$TMP"
FLAGS=$TMP/flags
mkdir "$FLAGS" && chown 65534:65534 "$FLAGS" || fail "cannot make $FLAGS"
printf '[daemon]\nsocket-mode = 0666\n[limits]\nmax-clients-per-user = 1\n' >"$CONF"
start_daemon

# client.py SOCKET READY GO PACKETS...: connects, sends each packet (hex,
# or HEX/N: those bytes and zeros up to N),
# makes READY and waits for GO, then prints what it reads, a line each:
# "error STATUS REQUEST-ID REASON", "eof", "reset", or "silent" after 5 s.
cat >"$TMP/client.py" <<'EOF'
import os, socket, struct, sys, time
path, ready, go = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
s.connect(path)
for p in sys.argv[4:]:
    data, _, size = p.partition("/")
    data = bytes.fromhex(data)
    s.send(data + bytes(int(size) - len(data) if size else 0))
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.01)
s.settimeout(5)
while True:
    try:
        r = s.recv(1 << 17)
    except ConnectionResetError:
        print("reset")
        break
    except socket.timeout:
        print("silent")
        break
    if not r:
        print("eof")
        break
    _, _, mtype, _, rid, status, _ = struct.unpack_from("=IHHIIiI", r)
    if mtype != 0x0200:
        print("reply", hex(mtype))
        continue
    print("error", status, rid, r[32:r.index(b"\0", 32)].decode())
EOF
chmod 644 "$TMP/client.py"

# A header (version 1, QUERY) of request id $2 and length $1, in hex.
header() {
	python3 -c "import struct, sys; print(struct.pack('=IHHIIiI', 0x4c505452, 1, 0x0101, int(sys.argv[1]), int(sys.argv[2]), 0, 0).hex())" "$1" "$2"
}
# A valid STATUS request of request id $1.
status_request() {
	python3 -c "import struct, sys; print(struct.pack('=IHHIIiI', 0x4c505452, 1, 0x0104, 24, int(sys.argv[1]), 0, 0).hex())" "$1"
}

# exchange NAME [--as-nobody] PACKETS...: runs client.py with the daemon
# stopped while the packets are queued; its lines in $TMP/NAME.
exchange() {
	name=$1
	shift
	as=
	if [ "$1" = --as-nobody ]; then
		as=$NOBODY
		shift
	fi
	rm -f "$FLAGS/ready" "$FLAGS/go"
	kill -STOP "$DAEMON"
	$as /usr/bin/python3 "$TMP/client.py" "$SOCK" "$FLAGS/ready" "$FLAGS/go" "$@" >"$TMP/$name" 2>&1 &
	client=$!
	i=0
	until [ -e "$FLAGS/ready" ]; do
		i=$((i + 1))
		[ $i -lt 500 ] || { kill -CONT "$DAEMON"; fail "$name: the client did not send: $(cat "$TMP/$name")"; }
		sleep 0.01
	done
	kill -CONT "$DAEMON"
	: >"$FLAGS/go"
	wait $client || fail "$name: the client failed: $(cat "$TMP/$name")"
}

second=$(status_request 2)

# A bad magic, then a request: the ERROR, then the close.
exchange badmagic "00000000$(header 24 5 | cut -c9-)" "$second"
[ "$(cat "$TMP/badmagic")" = "error -71 0 bad magic
eof" ] || fail "bad magic answered: $(cat "$TMP/badmagic")"

# Shorter than a header.
exchange short 4c5054 "$second"
[ "$(cat "$TMP/short")" = "error -71 0 short message
eof" ] || fail "short packet answered: $(cat "$TMP/short")"

# Longer than any message: the ERROR answers the request its header
# names, and says by how much.
exchange oversize "$(header 70000 9)/70000" "$second"
[ "$(cat "$TMP/oversize")" = "error -90 9 a 70000-byte message exceeds the protocol's 65536-byte limit
eof" ] || fail "oversized packet answered: $(cat "$TMP/oversize")"

# A well-framed request the daemon does not take (an unknown type): an
# ERROR, and the connection stays (the request after it is answered).
unknown=$(python3 -c "import struct; print(struct.pack('=IHHIIiI', 0x4c505452, 1, 0x01ff, 24, 3, 0, 0).hex())")
exchange unknown "$unknown" "$second"
[ "$(cat "$TMP/unknown" | head -n 1)" = "error -95 3 unknown message type" ] && grep -q '^reply 0x204$' "$TMP/unknown" ||
	fail "unknown type answered: $(cat "$TMP/unknown")"

# Refused at max-clients-per-user: nobody holds its one connection, and
# the second gets the ERROR naming the limit, not a reset.
$NOBODY /usr/bin/python3 -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
open(sys.argv[2], 'w').close()
time.sleep(60)
" "$SOCK" "$FLAGS/held" 2>"$TMP/held.err" &
PIDS="$PIDS $!"
i=0
until [ -e "$FLAGS/held" ] && [ "$(status_field clients)" -ge 2 ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "nobody's first connection: $(cat "$TMP/held.err")"
	sleep 0.05
done
exchange refused --as-nobody "$second" "$second"
[ "$(cat "$TMP/refused")" = "error -87 0 [limits] max-clients-per-user = 1 reached
eof" ] || fail "refused connection answered: $(cat "$TMP/refused")"

# Why each was dropped, in the log: once for each client.
for why in 'sent garbage (bad magic); dropping it' 'sent garbage (short message); dropping it' \
	'70000-byte message exceeds the 65536-byte limit; dropping it' \
	'Refusing client pid [0-9]* uid 65534: \[limits\] max-clients-per-user = 1 reached'; do
	[ "$(grep -c "$why" "$TMP/rtplaced.log")" = 1 ] || fail "the log does not say once '$why'"
done
exit 0
