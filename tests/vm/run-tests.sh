#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the project's root integration tests inside qemu guests on Debian's
# own kernels, one guest at a time, from a build folder whose `make check`
# programs are built:
#
#   tests/vm/run-tests.sh [--build DIR] [--kernels "6.1 6.1-rt ..."]
#                         [--out DIR] [-- GUEST OPTIONS...]
#
# Each guest has 8 vCPUs in 4 NUMA nodes on 2 sockets (run-guest.sh's
# default; GUEST OPTIONS after -- change it) and runs VM_TESTS below with
# `make check` as root, RTPLACE_REQUIRE_ROOT_TESTS=1 (a skip fails). Every
# test's result is printed as automake prints it, named by its kernel
# ("PASS: vm/6.1/tests/integration/test-tracker"), with its log kept in
# OUT/KERNEL/, then one line per kernel with its boot-and-run time. With 6.1
# among the kernels, one more guest of it boots with CPUs 2-7 isolated
# (ISOLATED_APPEND) and runs ISOLATED_TESTS ("vm/6.1-isolated/..."). Exits
# 0 when every test of every kernel passed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$PWD kernels="" out=""
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--kernels) kernels=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "run-tests: unknown argument '$1'" >&2; exit 64 ;;
	esac
done
build=$(cd "$build" && pwd) || exit 1
[ -f "$build/Makefile" ] || { echo "run-tests: $build is no configured build folder" >&2; exit 64; }
# One line, names apart by spaces (kernels.sh lists one a line).
kernels=$(echo ${kernels:-$("$here/kernels.sh" list)})
guest_opts=("$@")
out=${out:-$build/vm-results}

# The tests that meet the kernel: the tracker's programs and map, the
# live daemon's topology and answers, hotplug, claims across kill -9,
# moves of real RT threads, the kernel-feature fallbacks of the readers
# (test-thread-sched) and of the peer's judge (test-daemon-peer-pidfd),
# isolation's cgroup v2 partitions (test-isolation: the guest's v2
# hierarchy has the cpuset controller, the host's may not), the kernel's
# RT environment (test-kernel-env: the guests mount debugfs, so 6.12's
# fair deadline server is read; 6.1 has none).
VM_TESTS="tests/integration/test-tracker tests/integration/test-thread-sched
tests/integration/test-daemon-live tests/integration/test-hotplug-live
tests/integration/test-claims-live tests/integration/test-moves-live
tests/integration/test-manage-rules tests/integration/test-daemon-peer-pidfd
tests/integration/test-isolation tests/integration/test-kernel-env.sh"

# A host tuned as tuned's realtime profile tunes it: Debian 12's own kernel
# booted with CPUs 2-7 isolated, the host-RT-configuration tests inside.
ISOLATED_KERNEL=6.1
ISOLATED_APPEND="isolcpus=domain,managed_irq,2-7 nohz_full=2-7"
ISOLATED_TESTS="tests/integration/test-daemon-isolated.sh tests/integration/test-tracker"

status=0
runs=$kernels
case " $kernels " in *" $ISOLATED_KERNEL "*) runs="$runs $ISOLATED_KERNEL-isolated" ;; esac
for k in $runs; do
	dir=$out/$k
	tests=$VM_TESTS
	set -- "${guest_opts[@]}"
	case $k in
	*-isolated)
		tests=$ISOLATED_TESTS
		set -- "$@" --append "$ISOLATED_APPEND"
		k=${k%-isolated}
		;;
	esac
	# The guest writes its logs here; the build folder's own copies stay
	# the host's.
	(cd "$build" && "$here/run-guest.sh" --kernel "$k" --out "$dir" "$@" -- bash -c '
		dir=$1; shift
		make -j4 --no-print-directory check TESTS="$*" RTPLACE_REQUIRE_ROOT_TESTS=1 >"$dir/check.log" 2>&1
		for t in "$@"; do
			mkdir -p "$dir/$(dirname "$t")"
			cp "$t.log" "$t.trs" "$dir/$(dirname "$t")/" 2>/dev/null
		done
		uname -r >"$dir/uname"
		true' _ "$dir" $tests)
	rc=$?
	k=$(basename "$dir")
	for t in $tests; do
		result=$(sed -n 's/^:test-result: //p' "$dir/$t.trs" 2>/dev/null | head -1)
		[ -n "$result" ] || result=ERROR
		echo "$result: vm/$k/$t"
		case $result in PASS) ;; *) status=1; [ -f "$dir/$t.log" ] && tail -30 "$dir/$t.log" | sed "s|^|vm/$k: |" ;; esac
	done
	[ $rc -eq 0 ] || { status=1; echo "vm/$k: the guest failed (status $rc): $dir/console.log"; }
	echo "vm/$k: $(cat "$dir/uname" 2>/dev/null || echo '?'), booted and ran in $(cat "$dir/seconds" 2>/dev/null || echo '?') s"
done
exit $status
