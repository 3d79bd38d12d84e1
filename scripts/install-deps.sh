#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the Debian 12 packages rtplace needs to build, test, package
# (debian/: debhelper, lintian) and run.
# Idempotent: packages already present are left alone.
set -eu

packages="autoconf automake libtool pkg-config make gcc clang llvm bpftool
libbpf-dev libevent-dev libhwloc-dev libxml2-dev libsystemd-dev libinih-dev libcmocka-dev libjson-c-dev
libclang-rt-14-dev hwloc systemd rt-tests linux-perf python3 util-linux procps
ffmpeg hyperfine runc jq python3-yaml prometheus tmux
dbus-daemon dbus-bin pipewire-bin rtkit
git dpkg-dev debhelper fakeroot lintian
qemu-system-x86 busybox-static kmod cpio xz-utils"
# The OCI hook's test under a real container engine (test-oci-podman.sh).
packages="$packages podman"
# The system tier's images of whole Debian systems (tests/system/).
packages="$packages mmdebstrap e2fsprogs"
# irqbalance for test-isolation-irqbalance.sh, which starts its own.
packages="$packages irqbalance"
# strace counts the daemon's system calls (test-daemon-storm.sh).
packages="$packages strace"
# The real xdg-desktop-portal and a bubblewrap sandbox in front of
# rtplaced's RealtimeKit (test-rtkit-portal.sh); gdbus calls the portal.
packages="$packages xdg-desktop-portal bubblewrap libglib2.0-bin"

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages:$missing; run as root to install them" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	# Its service would move the interrupts the isolation tests check.
	case " $missing " in
	*" irqbalance "*) systemctl disable --now irqbalance.service >/dev/null 2>&1 || true ;;
	esac
fi
