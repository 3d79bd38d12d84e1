#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/check-layout.sh catches what it is there to catch. On a copy of
# the tracked tree it passes; then a citation of a design section that
# doc/DESIGN.md lacks (two citations on one line of a header, a
# subsection in a man page) and a cited section taken out of doc/DESIGN.md must each fail
# it, named by file:line, and nothing else may; so must a daemon front end
# that includes the request handlers (dispatch.h), an engine that
# includes a module built over it, a daemon file of no tier, and the pure
# core including the I/O core or a header of system calls. A tarball (make distcheck)
# has no tracked files to copy: skipped, as check-layout is there.
set -u
# The section sign, written so that this file cites no section itself.
S=$(printf '\302\247')
fail() { echo "FAIL: $*"; exit 1; }

src=$(cd "${top_srcdir:-$(dirname "$0")/../..}" && pwd -P)
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) || { echo "SKIP: $src is not a git work tree"; exit 77; }
[ "$(cd "$top" && pwd -P)" = "$src" ] || { echo "SKIP: $src is inside another project's work tree"; exit 77; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tree="$dir/tree"
mkdir "$tree"
# The tracked files as they are in the work tree (a deleted one stays out).
(cd "$src" && git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$tree" -xf - ||
	fail "cannot copy the tracked files"
cd "$tree" || fail "cd $tree"
git init -q . && git add -A -f . || fail "cannot index the copy"

scripts/check-layout.sh > "$dir/out" 2>&1 || fail "check-layout fails on the tree as it is: $(cat "$dir/out")"

# A header citing one section that exists and one that does not.
printf '/* DESIGN %s2, %s98 */\n' "$S" "$S" >> common/levels.h
levels_line=$(wc -l < common/levels.h)
# A man page citing a subsection that does not exist.
printf '.\\" DESIGN %s7.3\n' "$S" >> man/rtplaced.8
man_line=$(wc -l < man/rtplaced.8)
# A section the code cites, gone from the document.
sed -i "s/^## ${S}19 /## /" doc/DESIGN.md
grep -q "^## ${S}19 " doc/DESIGN.md && fail "could not take section 19 out of the copy's doc/DESIGN.md"
git add -A -f . || fail "cannot index the changes"

scripts/check-layout.sh > "$dir/out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "check-layout exited $rc on dangling citations, expected 1: $(cat "$dir/out")"
grep -q "^check-layout: common/levels.h:$levels_line: cites DESIGN ${S}98, " "$dir/out" ||
	fail "${S}98 in common/levels.h:$levels_line not reported: $(cat "$dir/out")"
grep -q "common/levels.h:$levels_line: cites DESIGN ${S}2," "$dir/out" &&
	fail "${S}2, which doc/DESIGN.md has, reported: $(cat "$dir/out")"
grep -q "^check-layout: man/rtplaced.8:$man_line: cites DESIGN ${S}7.3, " "$dir/out" ||
	fail "${S}7.3 in man/rtplaced.8:$man_line not reported: $(cat "$dir/out")"
grep -q "^check-layout: common/snap.h:[0-9]*: cites DESIGN ${S}19, " "$dir/out" ||
	fail "common/snap.h's citation of the removed ${S}19 not reported: $(cat "$dir/out")"
others=$(grep -v -e ": cites DESIGN ${S}98, " -e ": cites DESIGN ${S}7.3, " -e ": cites DESIGN ${S}19, " "$dir/out")
[ -z "$others" ] || fail "check-layout reported more than the dangling citations: $others"
echo "PASS: dangling citations of doc/DESIGN.md fail check-layout, by file:line"

# The daemon's layers: a front end that includes the request handlers, and
# the engine including a module built over it.
git checkout -q -- . || fail "cannot restore the copy"
sed -i '0,/#include "metrics.h"/s//#include "metrics.h"\n#include "dispatch.h"/' daemon/metrics.c
sed -i '0,/#include "engine.h"/s//#include "engine.h"\n#include "moves.h"/' daemon/engine.c
printf '/* SPDX-License-Identifier: GPL-2.0-or-later */\n#include "log.h"\n' > daemon/untiered.c
git add -A -f . || fail "cannot index the changes"
scripts/check-layout.sh > "$dir/out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "check-layout exited $rc on a front end including dispatch.h, expected 1: $(cat "$dir/out")"
grep -q '^check-layout: daemon/metrics.c includes "dispatch.h"' "$dir/out" ||
	fail "daemon/metrics.c including dispatch.h not reported: $(cat "$dir/out")"
grep -q '^check-layout: daemon/engine.c (tier 3) includes "moves.h" (tier 4), which is built over it' "$dir/out" ||
	fail "daemon/engine.c including moves.h not reported: $(cat "$dir/out")"
grep -q '^check-layout: daemon/untiered.c has no tier' "$dir/out" ||
	fail "a daemon file without a tier not reported: $(cat "$dir/out")"
echo "PASS: a front end including dispatch.h, and the engine including what is built over it, fail check-layout"

# The pure core reaching for I/O: the sysfs reader, and a system header.
git checkout -q -- . && rm -f daemon/untiered.c || fail "cannot restore the copy"
sed -i '0,/#include "placement-core.h"/s//#include "placement-core.h"\n#include "sysfs.h"/' common/placement.c
sed -i '0,/#include <string.h>/s//#include <string.h>\n#include <fcntl.h>/' common/kenv.c
git add -A -f . || fail "cannot index the changes"
scripts/check-layout.sh > "$dir/out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "check-layout exited $rc on the pure core including I/O, expected 1: $(cat "$dir/out")"
grep -q '^check-layout: common/placement.c (the pure core, libcommon) includes "sysfs.h"' "$dir/out" ||
	fail "common/placement.c including sysfs.h not reported: $(cat "$dir/out")"
grep -q '^check-layout: common/kenv.c (the pure core, libcommon) includes <fcntl.h>' "$dir/out" ||
	fail "common/kenv.c including fcntl.h not reported: $(cat "$dir/out")"
echo "PASS: the pure core including the I/O core or an I/O header fails check-layout"
