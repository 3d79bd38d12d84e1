#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The EXAMPLE program of librtplace(3), as printed, compiles and links
# against this build's library with `pkg-config --cflags --libs rtplace`
# and nothing else (no -D_GNU_SOURCE of its own).
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
: "${CC:=cc}"
: "${PKG_CONFIG:=pkg-config}"
dir=$(mktemp -d /tmp/rtplace-example.XXXXXX) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The first .nf/.fi block after .SH EXAMPLE, roff escapes undone.
sed -n '/^\.SH EXAMPLE/,/^\.SH/p' "$top_srcdir/man/librtplace.3" |
	sed -n '/^\.nf/,/^\.fi/{/^\.nf/d;/^\.fi/q;p}' |
	sed -e 's/\\e/\\/g' -e 's/\\-/-/g' >"$dir/example.c"
grep -q 'int main' "$dir/example.c" || fail "no complete program in librtplace(3) EXAMPLE: $(cat "$dir/example.c")"

# The public headers side by side, as installed, and the built rtplace.pc
# pointed at them and at the built library.
mkdir "$dir/include" && cp "$top_srcdir"/client/rtplace*.h "$top_srcdir"/common/rtplace*.h "$dir/include/" ||
	fail "cannot copy the public headers"
flags=$(PKG_CONFIG_PATH="$top_builddir/client" "$PKG_CONFIG" \
	--define-variable=includedir="$dir/include" \
	--define-variable=libdir="$top_builddir/client/.libs" \
	--cflags --libs rtplace) || fail "pkg-config rtplace failed"
# A sanitizer build's library needs its runtime (SAN_LDFLAGS) at link time.
# shellcheck disable=SC2086
$CC -Wall -Wextra -Werror -o "$dir/example" "$dir/example.c" $flags ${SAN_LDFLAGS:-} 2>"$dir/err" ||
	fail "the example does not compile with '$flags': $(cat "$dir/err")"
echo "PASS: librtplace(3) example builds with $flags"
