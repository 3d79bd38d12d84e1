#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole Debian systems the system tests boot, built from Debian's
# archive with mmdebstrap and kept in a cache:
#
#   tests/system/images.sh build RELEASE [PACKAGE...]   build unless cached
#   tests/system/images.sh path RELEASE [PACKAGE...]    print the image folder
#
# RELEASE is bookworm (Debian 12) or trixie (Debian 13). PACKAGEs are
# installed besides the base list (the run passes the libraries the
# packages under test depend on: the guest has no network, so apt installs
# those packages from what the image holds). An image is a folder holding
# rootfs.ext4 (the root file system, booted read-only with qemu's
# snapshot=on so it never changes), vmlinuz and initrd.img (the image's own
# kernel and initramfs) and seconds (how long the build took). It is keyed
# by a hash of the release, the package list and this script: a new list
# builds a new image, an unchanged one is reused. The cache is
# $RTPLACE_SYSTEM_CACHE, /var/cache/rtplace-system by default, the image
# image-RELEASE-KEY there; images of other keys are removed when a new one
# is built.
#
# The image boots with systemd as PID 1 and runs one unit,
# rtplace-system-test.service: it mounts the folder qemu shares as "share"
# (9p) at /mnt/share, runs /mnt/share/guest.sh as root and powers off
# when it ends.
set -euo pipefail

cache=${RTPLACE_SYSTEM_CACHE:-/var/cache/rtplace-system}
mirror=${RTPLACE_SYSTEM_MIRROR:-http://deb.debian.org/debian}
base="linux-image-amd64 systemd-sysv dbus udev kmod procps e2fsprogs"

usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 64
}

[ $# -ge 2 ] || usage
cmd=$1 release=$2
shift 2
case $release in
bookworm | trixie) ;;
*) echo "images: unknown release '$release' (bookworm or trixie)" >&2; exit 64 ;;
esac
packages=$(printf '%s\n' $base "$@" | sort -u | tr '\n' ' ')
key=$( {
	echo "$release $mirror $packages"
	cat "$0"
} | sha256sum | cut -c1-16)
dir=$cache/image-$release-$key

build() {
	local work start rc=0

	[ -f "$dir/.built" ] && return 0
	if ! command -v mmdebstrap >/dev/null; then
		echo "images: mmdebstrap is missing (scripts/install-deps.sh installs it)" >&2
		return 69
	fi
	# --one-file-system: a build killed half way may leave the chroot's
	# mounts of the host's /dev/shm, /proc and /sys behind.
	rm -rf --one-file-system "$cache/image-$release"-*
	mkdir -p "$dir"
	work=$dir/rootfs
	start=$(date +%s)
	echo "images: building $release ($packages)"
	# The unit that runs the tests, then powers off through sysrq, whatever
	# the script's end (SuccessAction=poweroff-force left Debian 12's and
	# 13's guests idle, not powered off); apt's and maintenance timers are
	# masked so that nothing the tests do not start runs beside them.
	mmdebstrap --variant=apt --include="${packages// /,}" \
		--customize-hook='echo rtplace-system >"$1/etc/hostname"' \
		--customize-hook='printf "/dev/vda / ext4 defaults 0 1\n" >"$1/etc/fstab"' \
		--customize-hook='mkdir -p "$1/mnt/share"' \
		--customize-hook='cat >"$1/etc/systemd/system/rtplace-system-test.service" <<EOF
[Unit]
Description=rtplace system tests
After=basic.target systemd-user-sessions.service

[Service]
Type=simple
ExecStartPre=/bin/mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 share /mnt/share
ExecStart=/bin/bash /mnt/share/guest.sh
StandardOutput=journal+console
TimeoutStartSec=infinity
ExecStopPost=/bin/sh -c "sync; echo o >/proc/sysrq-trigger"

[Install]
WantedBy=multi-user.target
EOF' \
		--customize-hook='chroot "$1" systemctl enable rtplace-system-test.service' \
		--customize-hook='chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer getty@tty1.service' \
		--customize-hook='cp "$1"/boot/vmlinuz-* "$1/../vmlinuz" && cp "$1"/boot/initrd.img-* "$1/../initrd.img"' \
		"$release" "$work" "$mirror" >"$dir.log" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		tail -30 "$dir.log" >&2
		echo "images: mmdebstrap $release failed (exit $rc)" >&2
		rm -rf --one-file-system "$dir"
		return 1
	fi
	# The root file system, with room for the packages under test and logs.
	mke2fs -q -t ext4 -L root -d "$work" "$dir/rootfs.ext4" "$(($(du -sm "$work" | cut -f1) + 512))M" >/dev/null
	rm -rf --one-file-system "$work"
	echo $(($(date +%s) - start)) >"$dir/seconds"
	mv "$dir.log" "$dir/build.log"
	touch "$dir/.built"
	echo "images: $release built in $(cat "$dir/seconds") s: $dir"
}

case $cmd in
build) build ;;
path)
	if [ ! -f "$dir/.built" ]; then
		echo "images: no $release image for this package list: run 'tests/system/images.sh build $release ...'" >&2
		exit 69
	fi
	echo "$dir"
	;;
*) usage ;;
esac
