#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the whole test suite from a fresh checkout, every way a user builds
# rtplace:
#   werror      out of tree with -Werror, `make check`
#   sanitizers  out of tree with ASan+UBSan, `make check`
#   intree      in a clean copy of the tree behind a 0700 folder,
#               `./configure --enable-werror &&
#               make && make check` (a release tarball's path), with a
#               restrictive rtplaced.conf at that build's default path: every
#               test result must equal the werror run's (tests are hermetic)
#   distcheck   `make distcheck`
#   fuzz        a bounded libFuzzer run of every harness in FUZZ_TARGETS
#               (tests/fuzz/fuzz.mk) in the werror step's build, with
#               Debian's clang; a crash, leak or hang fails it, and the
#               input that caused it is printed (base64) in the log
#   install     (root) `make install` onto the live system, the installed
#               rtplacectl and rtplaced run, `make uninstall` leaves nothing
#   package     (root) the Debian packages from a clean copy, lintian,
#               install, the installed binaries run, purge leaves nothing
#   vm          (root) the root integration tests of the werror build inside
#               qemu guests on Debian's 6.1, 6.1-rt, 6.12 and 6.12-rt
#               kernels with 4 NUMA nodes (tests/vm/), one guest at a time;
#               each test of each kernel counts
#   trixie      (root) the tree built with -Werror in a Debian 13 chroot
#               made from Debian's archive (tests/system/build-host.sh),
#               its unit tests run there, each counts, and the Debian
#               packages built there
#   system      (root) whole Debian 12 and 13 systems booting systemd in qemu
#               guests (tests/system/), images built from Debian's archive
#               and cached: the package step's packages installed through
#               apt (the Debian 13 guest gets those the trixie step built,
#               when it ran before), each check of each release counts
# Ends with one line "N passed, N failed[, N skipped]": every test of every
# `make check` counts, and every step counts as one. Arguments run only the
# steps they name, e.g. `scripts/test-all.sh package`.
#
# As root, tests that need root or BPF must run: RTPLACE_REQUIRE_ROOT_TESTS=1
# turns their skips into hard errors, and the run fails if no root
# integration test passed.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD

scripts/install-deps.sh || exit 1
scripts/check-layout.sh || exit 1
./autogen.sh >/dev/null 2>&1 || { echo "test-all: autogen.sh failed" >&2; exit 1; }

root=no
if [ "$(id -u)" -eq 0 ]; then
	root=yes
	export RTPLACE_REQUIRE_ROOT_TESTS="${RTPLACE_REQUIRE_ROOT_TESTS:-1}"
fi

passed=0 failed=0 skipped=0 root_passed=0 checks_run=0 status=0

# While a step has something installed on the machine, this undoes it if the
# run is interrupted.
undo_on_signal=
trap '[ -z "$undo_on_signal" ] || eval "$undo_on_signal"; exit 130' INT TERM HUP

# Configures ($2, then its arguments) and builds in the current folder, runs
# `make check` and counts its results; keeps them, sorted, in results.txt.
check_here() {
	local name=$1 configure=$2; shift 2

	echo "== $name: configure $*"
	"$configure" --quiet "$@" || return 1
	echo "== $name: build"
	make -j"$(nproc)" --no-print-directory >build.log 2>&1 || { tail -50 build.log; return 1; }
	echo "== $name: make check"
	make -j"$(nproc)" --no-print-directory check >check.log 2>&1
	local rc=$?
	checks_run=$((checks_run + 1))
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' check.log | tee results.txt.unsorted
	sort results.txt.unsorted >results.txt && rm -f results.txt.unsorted
	local p f s e xp
	p=$(grep -c '^PASS:' check.log); f=$(grep -c '^FAIL:' check.log)
	s=$(grep -c '^SKIP:' check.log); e=$(grep -c '^ERROR:' check.log)
	xp=$(grep -c '^XPASS:' check.log)
	passed=$((passed + p)); failed=$((failed + f + e + xp)); skipped=$((skipped + s))
	root_passed=$((root_passed + $(grep -c '^PASS: tests/integration/' check.log)))
	if [ $rc -ne 0 ] && [ $((p + f + s + e + xp)) -eq 0 ]; then
		tail -40 check.log
		echo "test-all: $name: make check failed before any test ran" >&2
		failed=$((failed + 1))
		return 1
	fi
	if [ $rc -ne 0 ] || [ $((f + e + xp)) -ne 0 ]; then
		for log in $(grep -lE '^:test-result: (FAIL|ERROR|XPASS)' $(find . -name '*.trs') 2>/dev/null); do
			echo "---- ${log%.trs}.log"; tail -40 "${log%.trs}.log"
		done
		return 1
	fi
}

# An out-of-tree build in build-test-NAME.
run_variant() {
	local name=$1; shift
	local dir="$top/build-test-$name"

	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || return 1
	check_here "$name" "$top/configure" "$@"
}

# Copies the tree as git sees it (tracked and untracked files, not ignored
# ones: no build output, no generated autotools files) into $1.
copy_tree() {
	rm -rf "$1" && mkdir -p "$1" || return 1
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		tar -C "$top" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$1" -xf -
}

# A step that is not a `make check`: counted as one result.
step() {
	local name=$1; shift

	if "$@"; then
		echo "PASS: ci/$name"
		passed=$((passed + 1))
	else
		echo "FAIL: ci/$name"
		failed=$((failed + 1))
		status=1
	fi
	cd "$top"
}

skip_step() {
	echo "SKIP: ci/$1 ($2)"
	skipped=$((skipped + 1))
}

intree() {
	local base=$top/build-test-intree
	local src=$base/rtplace etc=$base/etc conf=$base/etc/rtplace/rtplaced.conf rc=0

	copy_tree "$src" || return 1
	# A git work tree of its own, as a checkout is, so that check-layout
	# and its own test read the copy's files, not an enclosing tree's.
	git -C "$src" init -q && git -C "$src" add -A -f . || return 1
	# Behind a 0700 folder, as a checkout under /root is: tests that act
	# as another user must not run anything from the build tree.
	chmod 0700 "$base" || return 1
	# The copy sits beside ../shared as the checkout does.
	[ -d "$top/../shared" ] && ln -s "$(cd "$top/../shared" && pwd)" "$base/shared"
	(cd "$src" && ./autogen.sh >/dev/null 2>&1) || { echo "intree: autogen.sh failed" >&2; return 1; }
	# What a user's /usr/local/etc/rtplace/rtplaced.conf could say: this
	# build's default path is under $etc (--sysconfdir), so the machine's
	# own files are neither read nor touched.
	mkdir -p "$etc/rtplace" && cat >"$conf" <<-'EOF'
		[daemon]
		socket-mode = 0600
		log-level = err
		[placement]
		housekeeping-cpus = 0
		prefer-idle = no
		avoid-smt-siblings = always
		claim-timeout-ms = 1
		[moves]
		allow = root
		rebalance = no
		max-prio = 1
		[notify]
		ring-records = 64
		[limits]
		max-clients = 1
		max-claims-per-client = 1
	EOF
	cd "$src" && check_here intree ./configure --enable-werror --sysconfdir="$etc" || rc=1
	if ! daemon/rtplaced --check-config 2>&1 | grep -qF "$conf"; then
		echo "intree: rtplaced does not read $conf by default" >&2
		rc=1
	fi
	rm -rf "$etc"
	if ! diff -u "$top/build-test-werror/results.txt" results.txt; then
		echo "intree: results differ from the werror run's, with $conf at the default path: a test is not hermetic (or not stable)" >&2
		rc=1
	fi
	return $rc
}

distcheck() {
	cd "$top/build-test-werror" || return 1
	echo "== distcheck"
	make -j"$(nproc)" --no-print-directory distcheck >distcheck.log 2>&1 || { tail -60 distcheck.log; return 1; }
}

# libFuzzer for RTPLACE_FUZZ_SECONDS (default 20) per harness; what it finds is
# kept under build-test-werror/fuzz-found and printed here.
fuzz() {
	local build=$top/build-test-werror rc=0 f

	cd "$build" || return 1
	rm -f crash-* leak-* timeout-* oom-* slow-unit-*
	echo "== fuzz: make fuzz-ci FUZZ_CI_SECONDS=${RTPLACE_FUZZ_SECONDS:-20}"
	make --no-print-directory fuzz-ci FUZZ_CI_SECONDS="${RTPLACE_FUZZ_SECONDS:-20}" || rc=1
	for f in crash-* leak-* timeout-* oom-*; do
		[ -f "$f" ] || continue
		mkdir -p fuzz-found && cp "$f" fuzz-found/
		echo "fuzz: input $f ($(wc -c <"$f") bytes, kept in $build/fuzz-found), base64:"
		base64 "$f" | head -c 65536
		echo
		rc=1
	done
	return $rc
}

# `make install` as a user does it, onto the live system, as root. What it
# installs is listed first by a staged install; a file already there stops
# the step, so nothing of the machine's is replaced, and every file and
# folder it added is gone afterwards.
live_install() {
	local build=$top/build-test-werror stage=$top/build-test-install rc=0 f d added_dirs=
	local prefix bindir sbindir cache_before

	cd "$build" || return 1
	rm -rf "$stage" && make --no-print-directory install DESTDIR="$stage" >install.log 2>&1 || { tail -20 install.log; return 1; }
	for f in $(cd "$stage" && find . ! -type d | sed 's|^\.||'); do
		[ -e "$f" ] || [ -L "$f" ] || continue
		echo "install: $f already exists; not installing over it" >&2
		return 1
	done
	for d in $(cd "$stage" && find . -mindepth 1 -type d | sed 's|^\.||' | sort -r); do
		[ -d "$d" ] || added_dirs="$added_dirs $d"
	done
	prefix=$(sed -n 's/^prefix = //p' Makefile)
	bindir=$prefix/bin sbindir=$prefix/sbin
	cache_before=$(ldconfig -p | grep librtplace)
	echo "== install: make install (prefix $prefix)"
	undo_on_signal="make -C '$build' uninstall >/dev/null 2>&1"
	if make --no-print-directory install >>install.log 2>&1; then
		env -u LD_LIBRARY_PATH "$bindir/rtplacectl" --version || { echo "install: the installed rtplacectl does not run" >&2; rc=1; }
		env -u LD_LIBRARY_PATH "$sbindir/rtplaced" --version || { echo "install: the installed rtplaced does not run" >&2; rc=1; }
	else
		tail -20 install.log
		rc=1
	fi
	make --no-print-directory uninstall >>install.log 2>&1 || { tail -20 install.log; rc=1; }
	undo_on_signal=
	for d in $added_dirs; do
		rmdir "$d" 2>/dev/null
	done
	for f in $(cd "$stage" && find . | sed 's|^\.||'); do
		[ -e "$f" ] || [ -L "$f" ] || continue
		[ -d "$f" ] && [ -d "$stage$f" ] && ! echo " $added_dirs " | grep -qF " $f " && continue
		echo "install: $f left behind after make uninstall" >&2
		rc=1
	done
	if [ "$(ldconfig -p | grep librtplace)" != "$cache_before" ]; then
		echo "install: librtplace still in the dynamic linker's cache after make uninstall" >&2
		rc=1
	fi
	rm -rf "$stage"
	return $rc
}

# The Debian packages, built as `dpkg-buildpackage -b -us -uc` from a clean
# copy. The suite is not run inside the package build (nocheck): it runs
# above, on this same tree.
package() {
	local base=$top/build-test-deb src=$top/build-test-deb/rtplace rc=0 p debs installed group_before
	local pkgs="rtplace librtplace0 librtplace-dev"

	for p in $pkgs; do
		if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "installed"; then
			echo "package: $p is installed on this machine; not replacing it" >&2
			return 1
		fi
	done
	copy_tree "$src" && cd "$src" || return 1
	dpkg-checkbuilddeps || return 1
	echo "== package: dpkg-buildpackage -b -us -uc"
	DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -b -us -uc >"$base/build.log" 2>&1 ||
		{ tail -50 "$base/build.log"; return 1; }
	cd "$base" || return 1
	echo "== package: lintian"
	lintian --fail-on error ./*.changes || rc=1
	debs="./rtplace_*.deb ./librtplace0_*.deb ./librtplace-dev_*.deb"
	group_before=$(getent group rtplace)
	echo "== package: install" $debs
	undo_on_signal="apt-get purge -y -qq $pkgs >/dev/null 2>&1"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $debs >install.log 2>&1 ||
		{ tail -20 install.log; rc=1; }
	installed=$(dpkg -L $pkgs 2>/dev/null | sort -u)
	/usr/sbin/rtplaced --version || rc=1
	if ! /usr/sbin/rtplaced --check-config >check-config.out 2>&1 ||
		! grep -qF /etc/rtplace/rtplaced.conf check-config.out; then
		echo "package: rtplaced --check-config: $(cat check-config.out)" >&2
		rc=1
	fi
	/usr/bin/rtplacectl --version || rc=1
	dpkg-query -W -f='${Conffiles}\n' rtplace | grep -q ' /etc/rtplace/rtplaced.conf ' ||
		{ echo "package: /etc/rtplace/rtplaced.conf is not a conffile" >&2; rc=1; }
	for f in /etc/systemd/system/multi-user.target.wants/rtplaced.service \
		/etc/systemd/system/sockets.target.wants/rtplaced.socket; do
		[ -L "$f" ] || { echo "package: $f missing: the units are not enabled" >&2; rc=1; }
	done
	getent group rtplace >/dev/null || { echo "package: no group rtplace (sysusers)" >&2; rc=1; }
	# librtplace-dev: the manual's example builds against the installed files.
	zcat /usr/share/man/man3/librtplace.3.gz | sed -n '/^\.SH EXAMPLE/,/^\.SH/p' |
		sed -n '/^\.nf/,/^\.fi/{/^\.nf/d;/^\.fi/q;p}' | sed -e 's/\\e/\\/g' -e 's/\\-/-/g' >example.c
	# shellcheck disable=SC2046
	cc -Wall -Werror -o example example.c $(pkg-config --cflags --libs rtplace) ||
		{ echo "package: librtplace(3)'s example does not build against librtplace-dev" >&2; rc=1; }
	echo "== package: purge"
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $pkgs >>install.log 2>&1 || { tail -20 install.log; rc=1; }
	undo_on_signal=
	for p in $pkgs; do
		! dpkg -L "$p" >/dev/null 2>&1 || { echo "package: $p still installed after purge" >&2; rc=1; }
	done
	for f in $installed; do
		[ -e "$f" ] && [ ! -d "$f" ] && { echo "package: $f left behind after purge" >&2; rc=1; }
	done
	for f in /etc/rtplace /usr/share/doc/rtplace /usr/share/doc/librtplace0 /usr/share/doc/librtplace-dev; do
		[ ! -e "$f" ] || { echo "package: $f left behind after purge" >&2; rc=1; }
	done
	if find /etc/systemd /var/lib/systemd -name 'rtplaced*' 2>/dev/null | grep .; then
		echo "package: unit state left behind after purge" >&2
		rc=1
	fi
	# Debian keeps system groups after a purge (the rtplace group, from
	# sysusers.d); the machine gets back the state it had.
	[ -n "$group_before" ] || ! getent group rtplace >/dev/null || groupdel rtplace || rc=1
	return $rc
}

# The root integration tests inside guests on Debian's own kernels: every
# test of every kernel counts (a skip fails, as for the tests above).
vm() {
	local build=$top/build-test-werror p f s

	cd "$build" || return 1
	echo "== vm: Debian's kernels in qemu guests"
	"$top/tests/vm/kernels.sh" fetch || return 1
	"$top/tests/vm/run-tests.sh" --build "$build" --out "$build/vm-results" >vm.log 2>&1
	cat vm.log
	p=$(grep -c '^PASS: vm/' vm.log); f=$(grep -cE '^(FAIL|ERROR|XPASS): vm/' vm.log)
	s=$(grep -c '^SKIP: vm/' vm.log)
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	root_passed=$((root_passed + p))
	[ "$p" -gt 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ] && ! grep -q '^vm/.*: the guest failed' vm.log
}

# Whole Debian systems with the package step's packages (or packages built
# here when that step did not run): every check of every release counts.
system() {
	local debs=$top/build-test-deb p f

	if ! ls "$debs"/rtplace_*.deb >/dev/null 2>&1; then
		copy_tree "$debs/rtplace" && cd "$debs/rtplace" || return 1
		echo "== system: dpkg-buildpackage -b -us -uc"
		DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -b -us -uc >"$debs/build.log" 2>&1 ||
			{ tail -50 "$debs/build.log"; return 1; }
		cd "$top" || return 1
	fi
	echo "== system: Debian 12 and 13 booting systemd in qemu guests"
	"$top/tests/system/run.sh" --debs "$debs" ${trixie_debs:+--debs-of trixie "$trixie_debs"} --out "$debs/system" \
		>"$debs/system.log" 2>&1
	cat "$debs/system.log"
	p=$(grep -c '^PASS: system/' "$debs/system.log"); f=$(grep -c '^FAIL: system/' "$debs/system.log")
	passed=$((passed + p)); failed=$((failed + f))
	root_passed=$((root_passed + p))
	[ "$p" -gt 0 ] && [ "$f" -eq 0 ]
}

# Debian 13 as a build host: -Werror with its gcc 14 and libraries, and the
# unit tests.
trixie() {
	local out=$top/build-test-trixie p f

	echo "== trixie: -Werror build and unit tests in a Debian 13 chroot"
	rm -rf "$out" && mkdir -p "$out" || return 1
	"$top/tests/system/build-host.sh" --out "$out" trixie >"$out/run.log" 2>&1
	cat "$out/run.log"
	p=$(grep -c '^PASS: trixie/' "$out/run.log")
	f=$(grep -cE '^(FAIL|ERROR|XPASS|SKIP): trixie/' "$out/run.log")
	passed=$((passed + p)); failed=$((failed + f))
	[ "$p" -gt 1 ] && [ "$f" -eq 0 ] || return 1
	# The system step, when it follows, installs these in Debian 13.
	trixie_debs=$out/debs
}

werror() { run_variant werror --enable-werror; }
sanitizers() { run_variant sanitizers --enable-werror --enable-sanitizers; }

# Arguments name steps to run alone (intree, distcheck, fuzz and install
# use the werror step's build); none: all of them.
trixie_debs=
steps=${*:-werror sanitizers intree distcheck fuzz install package vm trixie system}
for s in $steps; do
	case $s in
	werror | sanitizers | intree | distcheck | fuzz) step "$s" "$s" ;;
	install | package | vm | system | trixie)
		if [ $root = yes ]; then
			[ $s = install ] && step install live_install
			[ $s = package ] && step package package
			[ $s = vm ] && step vm vm
			[ $s = system ] && step system system
			[ $s = trixie ] && step trixie trixie
		else
			skip_step "$s" "needs root"
		fi
		;;
	*) echo "test-all: no step '$s' (werror sanitizers intree distcheck fuzz install package vm trixie system)" >&2; exit 64 ;;
	esac
done

if [ $root = yes ]; then
	if [ "$skipped" -ne 0 ]; then
		echo "test-all: $skipped test(s) skipped while running as root" >&2
		status=1
	fi
	if [ "$checks_run" -ne 0 ] && [ "$root_passed" -eq 0 ]; then
		echo "test-all: no root/BPF integration test passed" >&2
		status=1
	fi
fi

if [ "$skipped" -ne 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] || status=1
exit $status
