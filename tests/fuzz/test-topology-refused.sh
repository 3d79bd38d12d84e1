#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtplaced --topology with XML that hwloc would crash on (an object with a
# set but not its complete counterpart: hwloc 2.9 dereferences NULL) or
# whose attributes hwloc's parser would stop short of, or holding what
# hwloc leaks on (an unknown element, text before a child): refused with
# status 1 and a message naming the file, the line, the object and what
# is wrong with it.
set -u
rtplaced="$top_builddir/daemon/rtplaced"
corpus="$top_srcdir/tests/fuzz/corpus/topology"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
: > "$dir/empty.conf"

# refused FILE TEXT: rtplaced refuses FILE, saying TEXT about it.
refused() {
	file="$corpus/$1"
	HWLOC_HIDE_ERRORS=2 timeout 10 "$rtplaced" --config "$dir/empty.conf" --socket "$dir/rtplaced.sock" \
		--topology "$file" > "$dir/err" 2>&1; rc=$?
	[ $rc -eq 1 ] || fail "$1: exited $rc, expected 1: $(cat "$dir/err")"
	grep -qF "Failed to load the topology: cannot load $file: $2" "$dir/err" ||
		fail "$1: $(cat "$dir/err")"
	[ ! -e "$dir/rtplaced.sock" ] || fail "$1: the daemon bound its socket"
}

refused invalid-numanode-without-complete-nodeset.xml \
	"line 11: object NUMANode (os_index 0) has a nodeset but no complete_nodeset; hwloc needs both"
refused invalid-pu-without-complete-cpuset.xml \
	"line 8: object PU (os_index 1) has a cpuset but no complete_cpuset; hwloc needs both"
refused invalid-pu-malformed-cpuset.xml \
	"line 8: object PU (os_index 1) has a cpuset that is not a bitmap"
refused invalid-upper-case-attribute.xml \
	"line 11: element object has an attribute Nodeset that hwloc does not read"
refused invalid-namespaced-attribute.xml \
	"line 11: element object uses an XML namespace, which hwloc does not read"
refused invalid-unknown-element.xml \
	"line 7: element object holds an element otc, which hwloc does not read there"
refused invalid-text-before-child.xml "line 6: element object holds text, which hwloc does not read there"
refused truncated-1s-8c-16t.xml "not an hwloc XML topology (line 20: Premature end of data"
refused empty "not an hwloc XML topology (no XML element in it)"
echo "PASS: every unsafe topology refused with its reason"
