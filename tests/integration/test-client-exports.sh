#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# librtplace exports its public API and nothing else, each function under
# the version node of the release that added it: 0.1.0's functions at
# LIBRTPLACE_1, later ones at LIBRTPLACE_2, and the two whose interface
# changed in 0.2.0 (rtplace_query, rtplace_place_self) at LIBRTPLACE_2 by
# default with their 0.1.0 forms kept at LIBRTPLACE_1. A program built
# against 0.2.0 then asks the loader for LIBRTPLACE_2 when it uses what
# 0.1.0 lacks, and an older library is refused at start.
: "${top_srcdir:=.}" "${top_builddir:=.}"
lib=$top_builddir/client/.libs/librtplace.so
header=$top_srcdir/client/rtplace.h
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

[ -f "$lib" ] || { echo "FAIL: no shared library at $lib (configured with --disable-shared?)" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# What 0.1.0 shipped: frozen, so it is written out here rather than read
# from the version script this test checks.
cat >"$tmp/v1" <<'LIST'
rtplace_class_name
rtplace_close
rtplace_connect
rtplace_cpu_times
rtplace_cpu_times_free
rtplace_cpus
rtplace_cpus_free
rtplace_last_reason
rtplace_level_name
rtplace_move
rtplace_notification_name
rtplace_place_self
rtplace_query
rtplace_release
rtplace_set_timeout
rtplace_status
rtplace_sub_capacity
rtplace_sub_fd
rtplace_sub_free
rtplace_sub_read
rtplace_subscribe
LIST
changed="rtplace_place_self rtplace_query"

nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort >"$tmp/exported"
# The functions rtplace.h declares (a name followed by its argument list).
grep -oE '\brtplace_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u >"$tmp/declared"

sed 's/@.*//' "$tmp/exported" | sort -u >"$tmp/names"
extra=$(comm -13 "$tmp/declared" "$tmp/names" | tr '\n' ' ')
[ -z "$extra" ] || fail "exported but not in rtplace.h: $extra"
missing=$(comm -23 "$tmp/declared" "$tmp/names" | tr '\n' ' ')
[ -z "$missing" ] || fail "declared in rtplace.h but not exported: $missing"

while read -r name; do
	case " $changed " in
	*" $name "*)
		grep -qx "$name@@LIBRTPLACE_2" "$tmp/exported" || fail "$name: no default version LIBRTPLACE_2"
		grep -qx "$name@LIBRTPLACE_1" "$tmp/exported" || fail "$name: 0.1.0's form at LIBRTPLACE_1 is gone"
		;;
	*)
		if grep -qx "$name" "$tmp/v1"; then
			want=LIBRTPLACE_1
		else
			want=LIBRTPLACE_2
		fi
		grep -qx "$name@@$want" "$tmp/exported" ||
			fail "$name: exported as $(grep "^$name@" "$tmp/exported" | tr '\n' ' ')not $name@@$want"
		;;
	esac
done <"$tmp/declared"

[ $status -eq 0 ] && echo "ok: $(wc -l <"$tmp/declared") functions, each at its release's version"
exit $status
