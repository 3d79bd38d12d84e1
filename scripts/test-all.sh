#!/bin/bash
# Runs the whole test suite from a fresh checkout: installs dependencies,
# builds with -Werror and runs `make check`, then builds with ASan+UBSan and
# runs it again. Ends with one line "N passed, N failed[, N skipped]".
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

if [ "$(id -u)" -eq 0 ]; then
	export RTPLACE_REQUIRE_ROOT_TESTS="${RTPLACE_REQUIRE_ROOT_TESTS:-1}"
fi

passed=0 failed=0 skipped=0 root_passed=0 status=0

run_variant() {
	local name=$1; shift
	local dir="$top/build-test-$name"

	echo "== $name: configure $*"
	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || return 1
	"$top/configure" --quiet "$@" || return 1
	echo "== $name: build"
	make -j"$(nproc)" --no-print-directory >build.log 2>&1 || { tail -50 build.log; return 1; }
	echo "== $name: make check"
	make -j"$(nproc)" --no-print-directory check >check.log 2>&1
	local rc=$?
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' check.log
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
	cd "$top"
}

run_variant werror --enable-werror || status=1
cd "$top"
run_variant sanitizers --enable-werror --enable-sanitizers || status=1
cd "$top"

if [ "$(id -u)" -eq 0 ]; then
	if [ "$skipped" -ne 0 ]; then
		echo "test-all: $skipped test(s) skipped while running as root" >&2
		status=1
	fi
	if [ "$root_passed" -eq 0 ]; then
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
