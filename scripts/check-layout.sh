#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Checks the include graph that the build relies on:
#  - no two headers in the tree share a file name, and none is called
#    config.h (that name is autoconf's generated header);
#  - common/ includes nothing from outside common/ (besides autoconf's
#    config.h and system headers), so the shared core stays free of the
#    daemon, the clients and the BPF programs;
#  - no client source includes a daemon header: what both need is in
#    common/;
#  - no source reaches another folder with a relative "../" include;
#  - no two source files of one folder have names one letter apart
#    (mover.c/moves.c, notify.c/sdnotify.c): a newcomer finds a role by
#    its name, not by telling near-twins apart.
# Prints every violation and exits 1 if there is any.
set -uo pipefail
cd "$(dirname "$0")/.."
# It reads the tracked files: a tarball build (make distcheck) has none.
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "check-layout: not a git work tree; skipped"
	exit 77
fi

status=0
fail() { echo "check-layout: $*" >&2; status=1; }

headers=$(git ls-files '*.h')

dups=$(for h in $headers; do basename "$h"; done | sort | uniq -d)
for d in $dups; do
	fail "header name $d is used more than once: $(echo "$headers" | grep "/$d\$\|^$d\$" | tr '\n' ' ')"
done
for h in $headers; do
	[ "$(basename "$h")" = config.h ] && fail "$h: config.h is autoconf's name; choose another"
done

common_headers=" $(git ls-files 'common/*.h' | xargs -n1 basename | tr '\n' ' ') config.h "
for f in $(git ls-files 'common/*.c' 'common/*.h'); do
	while IFS= read -r inc; do
		case "$common_headers" in
		*" $inc "*) ;;
		*) fail "$f includes \"$inc\", which is not in common/" ;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done

daemon_headers=" $(git ls-files 'daemon/*.h' | xargs -n1 basename | tr '\n' ' ') "
for f in $(git ls-files 'client/*.c' 'client/*.h'); do
	while IFS= read -r inc; do
		case "$daemon_headers" in
		*" $inc "*) fail "$f includes the daemon header \"$inc\"; move what both need to common/" ;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done

while IFS= read -r hit; do
	fail "relative include: $hit"
done < <(git grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' -- '*.c' '*.h')

# Names (without .c/.h) one insertion, deletion or substitution apart.
while IFS= read -r hit; do
	fail "file names one letter apart: $hit"
done < <(git ls-files 'bpf/*.[ch]' 'common/*.[ch]' 'daemon/*.[ch]' 'client/*.[ch]' | python3 -c '
import sys, os, itertools
def near(a, b):
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    if len(a) > len(b):
        a, b = b, a
    return any(b[:i] + b[i + 1:] == a for i in range(len(b)))
by_dir = {}
for path in sys.stdin.read().split():
    stem = os.path.splitext(os.path.basename(path))[0]
    by_dir.setdefault(os.path.dirname(path), set()).add(stem)
for d, stems in sorted(by_dir.items()):
    for a, b in itertools.combinations(sorted(stems), 2):
        if near(a, b):
            print(f"{d}/{a} and {d}/{b}")
')

[ $status -eq 0 ] && echo "check-layout: ok ($(echo "$headers" | wc -w) headers)"
exit $status
