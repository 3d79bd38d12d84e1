# SPDX-License-Identifier: GPL-2.0-or-later
# What the shell benches share; each sources it from the build directory
# it runs in:
#   builddir  that directory;
#   RUN       rtplace-run: the real binary with the library path it needs,
#             not libtool's wrapper script (which costs ~8 ms of shell);
#   bench_daemon NAME  sets tmp, a private folder /tmp/rtplace-NAME.*
#             removed at exit, and sock: $RTPLACE_SOCKET when set, else the
#             socket of a private rtplaced started here in simulation mode
#             over this machine's own topology (lstopo --of xml) and
#             stopped at exit. Exits 70 when that daemon does not start.
builddir=$(pwd)
RUN=$builddir/client/.libs/rtplace-run
if [ -x "$RUN" ]; then
	LD_LIBRARY_PATH=$builddir/client/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
else
	RUN=$builddir/client/rtplace-run
fi

bench_cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	rm -rf "$tmp"
}

bench_daemon() {
	tmp=$(mktemp -d "/tmp/rtplace-$1.XXXXXX")
	daemon=
	trap bench_cleanup EXIT INT TERM
	sock=${RTPLACE_SOCKET:-}
	[ -z "$sock" ] || return 0
	sock=$tmp/rtplaced.sock
	lstopo --of xml "$tmp/machine.xml"
	"$builddir/daemon/rtplaced" --socket "$sock" --topology "$tmp/machine.xml" >"$tmp/rtplaced.log" 2>&1 &
	daemon=$!
	i=0
	until "$builddir/client/rtplacectl" --socket "$sock" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "rtplaced did not start" >&2; exit 70; }
		sleep 0.05
	done
}
