#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots whole Debian systems (systemd as PID 1) with this tree's Debian
# packages and runs the system tests in them:
#
#   tests/system/run.sh --debs DIR --out DIR [--timeout SECONDS] [RELEASE...]
#
# DIR holds rtplace_*.deb and librtplace0_*.deb (dpkg-buildpackage's
# output). RELEASE: bookworm (Debian 12) and trixie (Debian 13), both by
# default. For each, the image is built unless cached (images.sh, with the
# libraries the packages depend on), booted once under qemu (TCG, 4 CPUs in
# 2 NUMA nodes, its own kernel and initramfs, the disk read-only with
# snapshot=on) with OUT/RELEASE shared over 9p; guest.sh runs there as a
# unit, installs the packages through apt and writes one PASS/FAIL line per
# check. Prints those lines as "PASS: system/RELEASE/CHECK", and per release
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
# alternatives; apt takes a provider for a renamed library).
deps=$(for d in "$debs"/rtplace_*.deb "$debs"/librtplace0_*.deb; do dpkg-deb -f "$d" Depends; done |
	tr ',' '\n' | sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep -v '^librtplace' | sort -u)
# rtkit: the RealtimeKit checks meet Debian's own daemon.
extra="rtkit $deps"

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
	cp "$debs"/rtplace_*.deb "$debs"/librtplace0_*.deb "$share/debs/"
	cp "$here/guest.sh" "$share/guest.sh"
	qrc=0
	# no_timer_check: on a loaded host TCG's ticks came late enough for
	# 6.12's IO-APIC timer check to panic at boot ("IO-APIC + timer
	# doesn't work!").
	timeout -s KILL "$timeout" qemu-system-x86_64 \
		-accel tcg,thread=single -cpu max,la57=off,vendor=GenuineIntel,l3-cache=off \
		-m 2048 -smp 4,sockets=2,cores=2,threads=1 \
		-object memory-backend-ram,id=m0,size=1024M -numa node,nodeid=0,cpus=0-1,memdev=m0 \
		-object memory-backend-ram,id=m1,size=1024M -numa node,nodeid=1,cpus=2-3,memdev=m1 \
		-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 loglevel=4 no_timer_check" \
		-drive "file=$img/rootfs.ext4,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$share,mount_tag=share,security_model=none,multidevs=remap" \
		-display none -serial "file:$share/console.log" -monitor none -no-reboot -nodefaults ||
		qrc=$?
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
