#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian kernels the VM tests boot, fetched from the archive with apt
# and unpacked with dpkg -x into a cache (never installed on this machine):
#
#   tests/vm/kernels.sh fetch [NAME...]   fetch and unpack (all by default)
#   tests/vm/kernels.sh path NAME         print the unpacked tree of NAME
#   tests/vm/kernels.sh list              print the names, one a line
#
# NAME: 6.1 and 6.1-rt (Debian 12's own kernel and its PREEMPT_RT build),
# 6.12 and 6.12-rt (bookworm's newer kernels). Each follows its meta
# package, so a fetch after a point release takes the new one. The cache is
# $RTPLACE_VM_CACHE, /var/cache/rtplace-vm by default.
set -euo pipefail

cache=${RTPLACE_VM_CACHE:-/var/cache/rtplace-vm}
names="6.1 6.1-rt 6.12 6.12-rt"

meta_of() {
	case $1 in
	6.1) echo linux-image-amd64 ;;
	6.1-rt) echo linux-image-rt-amd64 ;;
	6.12) echo linux-image-6.12-amd64 ;;
	6.12-rt) echo linux-image-6.12-rt-amd64 ;;
	*) echo "kernels: unknown kernel '$1' (one of: $names)" >&2; return 64 ;;
	esac
}

# The versioned package the meta package depends on now.
package_of() {
	local meta pkg
	meta=$(meta_of "$1") || return
	pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -1)
	if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ] && [ -z "${apt_updated:-}" ]; then
		# A fresh machine's package lists may predate the meta package.
		apt_updated=yes
		apt-get update -qq >/dev/null 2>&1
		pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -1)
	fi
	if [ -z "$pkg" ]; then
		echo "kernels: apt knows no package behind $meta: run 'apt-get update'" >&2
		return 69
	fi
	echo "$pkg"
}

fetch() {
	local name=$1 pkg deb dir
	pkg=$(package_of "$name") || return
	dir=$cache/$pkg
	if [ -f "$dir/.unpacked" ]; then
		ln -sfn "$pkg" "$cache/$name"
		return 0
	fi
	mkdir -p "$cache"
	rm -rf "$dir" "$cache"/"$pkg"_*.deb
	# apt's sandbox user cannot write to root's cache; root downloads.
	(cd "$cache" && apt-get download -qq -o APT::Sandbox::User=root "$pkg") || {
		echo "kernels: apt-get download $pkg failed" >&2
		return 69
	}
	deb=$(ls "$cache"/"$pkg"_*.deb)
	dpkg -x "$deb" "$dir"
	depmod -b "$dir" "$(ls "$dir/lib/modules")"
	rm -f "$deb"
	touch "$dir/.unpacked"
	ln -sfn "$pkg" "$cache/$name"
	echo "kernels: $name is $pkg"
}

case ${1:-} in
fetch)
	shift
	for n in ${@:-$names}; do fetch "$n"; done
	;;
path)
	[ $# -eq 2 ] || { echo "usage: kernels.sh path NAME" >&2; exit 64; }
	meta_of "$2" >/dev/null
	if [ ! -f "$cache/$2/.unpacked" ]; then
		echo "kernels: kernel $2 is not fetched: run 'tests/vm/kernels.sh fetch $2'" >&2
		exit 69
	fi
	readlink -f "$cache/$2"
	;;
list) printf '%s\n' $names ;;
*) sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 64 ;;
esac
