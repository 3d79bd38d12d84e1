#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The help every binary prints, without a daemon: -V and --version on each,
# `rtplacectl help COMMAND` the same as `COMMAND --help`, and the bash
# completion: `complete -p rtplacectl`, then scripted completions of the
# commands and of every command's options, which must be the long options
# its --help lists (the help itself is held to the parser's table by
# tests/unit/test-cli).
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
CTL=$top_builddir/client/rtplacectl
COMPLETION=$top_srcdir/contrib/bash-completion/rtplacectl

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

PACKAGE_VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
[ -n "$PACKAGE_VERSION" ] || fail "no PACKAGE_VERSION in $top_builddir/config.h"

for bin in daemon/rtplaced client/rtplacectl client/rtplace-run client/rtplace-oci-hook; do
	name=${bin#*/}
	for opt in -V --version; do
		out=$("$top_builddir/$bin" $opt) || fail "$name $opt exited $?"
		[ "$out" = "$name $PACKAGE_VERSION" ] || fail "$name $opt printed '$out', want '$name $PACKAGE_VERSION'"
	done
done

# The commands as `rtplacectl help` lists them.
commands=$("$CTL" help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' | tr '\n' ' ')
[ -n "$commands" ] || fail "rtplacectl help lists no command"
[ "$("$CTL" help)" = "$("$CTL" --help)" ] || fail "rtplacectl help differs from rtplacectl --help"

# Long options as a help text lists them: labels start at column 3 (-x, --long)
# or 7 (--long); wrapped text starts at column 27.
long_options() {
	sed -n 's/^  -., \(--[a-z-]*\).*/\1/p; s/^      \(--[a-z-]*\).*/\1/p' | sort -u | tr '\n' ' '
}

for cmd in $commands; do
	a=$("$CTL" "$cmd" --help) || fail "$cmd --help exited $?"
	b=$("$CTL" help "$cmd") || fail "help $cmd exited $?"
	[ "$a" = "$b" ] || fail "'help $cmd' differs from '$cmd --help'"
	echo "$a" | grep -q "^usage: rtplacectl $cmd" || fail "$cmd --help: $a"
done
"$CTL" help frobnicate >/dev/null 2>&1
[ $? = 64 ] || fail "help of an unknown command did not exit 64"

command -v bash >/dev/null || { echo "SKIP: no bash for the completion" >&2; exit 77; }

# complete WORDS...: what the completion offers for the last word, sorted.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rtplacectl
		printf "%s\n" "${COMPREPLY[@]}"' complete "$COMPLETION" "$@" | sort -u | tr '\n' ' '
}

bash -c '. "$1"; complete -p rtplacectl' complete "$COMPLETION" | grep -q -- '-F _rtplacectl rtplacectl$' ||
	fail "sourcing $COMPLETION does not register a completion for rtplacectl"
want=$(printf '%s\n' $commands | sort | tr '\n' ' ')
[ "$(complete_words rtplacectl '')" = "$want" ] || fail "commands completed as '$(complete_words rtplacectl '')', want '$want'"
[ "$(complete_words rtplacectl --json q)" = "query " ] || fail "'rtplacectl --json q' completed as '$(complete_words rtplacectl --json q)'"
[ "$(complete_words rtplacectl help wa)" = "watch " ] || fail "'help wa' completed as '$(complete_words rtplacectl help wa)'"
[ "$(complete_words rtplacectl query --policy '')" = "fifo rr " ] || fail "--policy values"
for cmd in $commands; do
	want=$("$CTL" "$cmd" --help | long_options)
	got=$(complete_words rtplacectl --socket /x "$cmd" --)
	[ "$got" = "$want" ] || fail "'rtplacectl $cmd --' completed as '$got', want '$want' (its --help)"
done
want=$("$CTL" --help | long_options)
[ "$(complete_words rtplacectl --)" = "$want" ] || fail "global options completed as '$(complete_words rtplacectl --)', want '$want'"
exit 0
