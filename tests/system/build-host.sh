#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds this tree with -Werror on another Debian release and runs its unit
# tests there, in a chroot made from Debian's archive with mmdebstrap:
#
#   tests/system/build-host.sh --out DIR [RELEASE]
#
# RELEASE: trixie (Debian 13: gcc 14, clang 19, libbpf 1.5, systemd 257)
# by default. The chroot holds debian/control's Build-Depends and the
# autotools, and is kept in $RTPLACE_SYSTEM_CACHE (/var/cache/rtplace-system
# by default) as chroot-RELEASE-KEY, keyed by a hash of the release, the
# package list and this script. The tree (git's files) is copied in fresh,
# configured with --enable-werror, built, and `make check` runs the unit
# tests (tests/unit/: they need no root, no BPF and no daemon). Then the
# Debian packages are built there from another fresh copy
# (`dpkg-buildpackage -b -us -uc`, nocheck: the suite ran above) and kept
# in DIR/debs. Prints the unit tests' PASS/FAIL lines as
# "PASS: RELEASE/tests/unit/...", then "PASS: RELEASE/build" and
# "PASS: RELEASE/debs", keeps the logs in DIR, and exits 0 when the build,
# every unit test and the packages passed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${RTPLACE_SYSTEM_CACHE:-/var/cache/rtplace-system}
mirror=${RTPLACE_SYSTEM_MIRROR:-http://deb.debian.org/debian}
out=""
[ "${1:-}" = --out ] && [ $# -ge 2 ] || { sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 64; }
out=$2
release=${3:-trixie}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Build-Depends by name (versions and debhelper's own entries left to
# apt), and what autogen.sh and the build call.
deps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$top/debian/control" | sed 's/^Build-Depends://' |
	grep -v '^[A-Z]' | tr ',' '\n' | sed 's/(.*//; s/[[:space:]]//g' | grep -v -e '^$' -e '^debhelper' -e '^dh-')
packages=$(printf '%s\n' $deps autoconf automake libtool make gcc llvm git build-essential debhelper dpkg-dev | sort -u | tr '\n' ' ')
key=$( {
	echo "$release $mirror $packages"
	cat "$0"
} | sha256sum | cut -c1-16)
root=$cache/chroot-$release-$key

if [ ! -f "$root/.built" ]; then
	command -v mmdebstrap >/dev/null || { echo "build-host: mmdebstrap is missing (scripts/install-deps.sh)" >&2; exit 69; }
	# --one-file-system: never into the host's /dev/shm, /proc or /sys that
	# a killed mmdebstrap may have left mounted there.
	rm -rf --one-file-system "$cache/chroot-$release"-*
	mkdir -p "$cache"
	start=$(date +%s)
	echo "build-host: making the $release chroot ($packages)"
	mmdebstrap --variant=apt --include="${packages// /,}" "$release" "$root" "$mirror" >"$out/chroot.log" 2>&1 ||
		{ tail -30 "$out/chroot.log" >&2; rm -rf --one-file-system "$root"; exit 1; }
	echo $(($(date +%s) - start)) >"$root/.seconds"
	touch "$root/.built"
	echo "build-host: $release chroot made in $(cat "$root/.seconds") s"
fi

# copy DIR: the tree as git has it (committed or not, ignored files left
# out), fresh in DIR.
copy() {
	rm -rf --one-file-system "$1" && mkdir -p "$1"
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		tar -C "$top" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$1" -xf -
}
src=$root/src
copy "$src"
units=$(sed -n 's/^TESTS += \(tests\/unit\/.*\)/\1/p' "$top/tests/tests.mk" | tr '\n' ' ')
mounted=
trap '[ -z "$mounted" ] || umount "$root/proc"' EXIT
mount -t proc proc "$root/proc" && mounted=yes
rc=0
chroot "$root" /bin/sh -c "cd /src && ./autogen.sh >/dev/null 2>&1 && mkdir -p build && cd build &&
	../configure --quiet --enable-werror >/dev/null && make -j$(nproc) >build.log 2>&1 || { tail -50 build.log; exit 1; }
	make -j$(nproc) check TESTS='$units' >check.log 2>&1" || rc=$?
cp "$src/build/build.log" "$src/build/check.log" "$out/" 2>/dev/null || true
if [ ! -f "$out/check.log" ]; then
	echo "FAIL: $release/build (configure or make with -Werror failed; $out/build.log)"
	exit 1
fi
echo "PASS: $release/build"
grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS):' "$out/check.log" | sed "s|^\([A-Z]*\): |\1: $release/|"
if [ $rc -ne 0 ] || grep -qE '^(FAIL|ERROR|XPASS|SKIP):' "$out/check.log"; then
	exit 1
fi

# The Debian packages, built on this release.
deb=$root/deb
copy "$deb/rtplace"
rm -rf "$out/debs" && mkdir -p "$out/debs"
if chroot "$root" /bin/sh -c "cd /deb/rtplace && DEB_BUILD_OPTIONS='nocheck parallel=$(nproc)' \
	dpkg-buildpackage -b -us -uc" >"$out/debs.log" 2>&1 && cp "$deb"/*.deb "$out/debs/"; then
	echo "PASS: $release/debs ($(cd "$out/debs" && echo *.deb))"
else
	tail -30 "$out/debs.log"
	echo "FAIL: $release/debs (dpkg-buildpackage failed; $out/debs.log)"
	exit 1
fi
