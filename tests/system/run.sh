#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots whole Debian systems (systemd as PID 1) with this tree's Debian
# packages and runs the system tests in them:
#
#   tests/system/run.sh --debs DIR [--debs-of RELEASE DIR] --out DIR
#                       [--timeout SECONDS] [RELEASE...]
#
# DIR holds rtplace_*.deb and librtplace0_*.deb (dpkg-buildpackage's
# output); --debs-of gives RELEASE's guest those of another DIR instead
# (the packages built on that release: build-host.sh). RELEASE: bookworm (Debian 12) and trixie (Debian 13), both by
# default. For each, the image is built unless cached (images.sh, with the
# libraries the packages depend on), booted once under qemu (TCG, 4 CPUs in
# 2 NUMA nodes, its own kernel and initramfs, the disk read-only with
# snapshot=on) with OUT/RELEASE shared over 9p; guest.sh runs there as a
# unit, installs the packages through apt and writes one PASS/FAIL line per
# check. The guests may suspend to RAM (S3 enabled on the PIIX4): wakeup.py
# wakes them through qemu's QMP socket. Prints those lines as "PASS: system/RELEASE/CHECK", and per release
# how long the image build (cold) and the boot with the checks (warm) took.
# Exits 0 when every check of every release passed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
debs="" out="" timeout=1500
usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 64
}
while [ $# -gt 0 ]; do
	case $1 in
	--debs) debs=$2; shift 2 ;;
	--debs-of)
		case ${2:-} in bookworm | trixie) ;; *) usage ;; esac
		eval "debs_$2=\$(cd \"\$3\" && pwd)" || exit 1
		shift 3
		;;
	--out) out=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	-h | --help) usage ;;
	--) shift; break ;;
	-*) echo "system: unknown argument '$1'" >&2; usage ;;
	*) break ;;
	esac
done
[ -n "$debs" ] && [ -n "$out" ] || usage
releases=${*:-bookworm trixie}
debs=$(cd "$debs" && pwd)
ls "$debs"/rtplace_*.deb "$debs"/librtplace0_*.deb >/dev/null || exit 1

# What the packages need from the archive, by name (the first of
# alternatives; apt takes a provider for a renamed library, which then
# also serves packages built on the newer release: trixie's
# libevent-core-2.1-7t64 for libevent-core-2.1-7). From DIR's alone, so
# that an image's key does not follow --debs-of.
deps=$(for d in "$debs"/rtplace_*.deb "$debs"/librtplace0_*.deb; do dpkg-deb -f "$d" Depends; done |
	tr ',' '\n' | sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep -v '^librtplace' | sort -u)
# rtkit: the RealtimeKit checks meet Debian's own daemon; PipeWire asks
# RealtimeKit as users' sessions do; podman (crun, its first choice of
# runtime on both releases) runs the OCI hook, over a busybox root.
extra="rtkit pipewire pipewire-bin dbus-user-session podman busybox-static $deps"

rc=0
for r in $releases; do
	t0=$(date +%s)
	# shellcheck disable=SC2086
	"$here/images.sh" build "$r" $extra || { echo "FAIL: system/$r/image"; rc=1; continue; }
	# shellcheck disable=SC2086
	img=$("$here/images.sh" path "$r" $extra)
	t1=$(date +%s)
	share=$out/$r
	rm -rf "$share" && mkdir -p "$share/debs"
	eval "rdebs=\${debs_$r:-\$debs}"
	[ "$rdebs" = "$debs" ] || echo "system: $r: the packages of $rdebs"
	cp "$rdebs"/rtplace_*.deb "$rdebs"/librtplace0_*.deb "$share/debs/"
	cp "$here/guest.sh" "$share/guest.sh"
	qrc=0
	# The QMP socket's path must fit a UNIX address: not under OUT.
	qmp=$(mktemp -d /tmp/rtplace-qmp.XXXXXX)
	"$here/wakeup.py" "$qmp/qmp.sock" >"$share/wakeup.log" 2>&1 &
	waker=$!
	# no_timer_check: a host too loaded to tick the emulated PIT in time
	# made Debian 12's kernel panic at boot ("IO-APIC + timer doesn't
	# work!").
	timeout -s KILL "$timeout" qemu-system-x86_64 \
		-accel tcg,thread=single -cpu max,la57=off,vendor=GenuineIntel,l3-cache=off \
		-m 2048 -smp 4,sockets=2,cores=2,threads=1 \
		-object memory-backend-ram,id=m0,size=1024M -numa node,nodeid=0,cpus=0-1,memdev=m0 \
		-object memory-backend-ram,id=m1,size=1024M -numa node,nodeid=1,cpus=2-3,memdev=m1 \
		-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 loglevel=4 no_timer_check" \
		-drive "file=$img/rootfs.ext4,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$share,mount_tag=share,security_model=none,multidevs=remap" \
		-global PIIX4_PM.disable_s3=0 -qmp "unix:$qmp/qmp.sock,server=on,wait=off" \
		-display none -serial "file:$share/console.log" -monitor none -no-reboot -nodefaults ||
		qrc=$?
	kill "$waker" 2>/dev/null || true
	wait "$waker" 2>/dev/null || true
	rm -rf "$qmp"
	t2=$(date +%s)
	if [ -s "$share/results" ]; then
		sed -E "s#^(PASS|FAIL): #\1: system/$r/#" "$share/results"
	fi
	if ! grep -q '^PASS: purge' "$share/results" 2>/dev/null && ! grep -q '^FAIL: purge' "$share/results" 2>/dev/null; then
		echo "FAIL: system/$r/guest (the checks did not run to the end, qemu exit $qrc; console and guest.log in $share)"
		tail -20 "$share/console.log" >&2
		rc=1
	fi
	grep -q '^FAIL' "$share/results" 2>/dev/null && rc=1
	echo "system: $r: image $((t1 - t0)) s$([ -f "$img/seconds" ] && echo " (built in $(cat "$img/seconds") s)"), boot and checks $((t2 - t1)) s"
done
exit $rc
