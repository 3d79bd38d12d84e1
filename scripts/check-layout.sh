#!/bin/bash
# Checks the include graph that the build relies on (issue 10 §1):
#  - no two headers in the tree share a file name, and none is called
#    config.h (that name is autoconf's generated header);
#  - common/ includes nothing from outside common/ (besides autoconf's
#    config.h and system headers), so the shared core stays free of the
#    daemon, the clients and the BPF programs;
#  - no source reaches another folder with a relative "../" include.
# Prints every violation and exits 1 if there is any.
set -uo pipefail
cd "$(dirname "$0")/.."

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

while IFS= read -r hit; do
	fail "relative include: $hit"
done < <(git grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' -- '*.c' '*.h')

[ $status -eq 0 ] && echo "check-layout: ok ($(echo "$headers" | wc -w) headers)"
exit $status
