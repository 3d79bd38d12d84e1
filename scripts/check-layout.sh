#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Checks the include graph that the build relies on:
#  - no two headers in the tree share a file name, and none is called
#    config.h (that name is autoconf's generated header);
#  - common/ includes nothing from outside common/ (besides autoconf's
#    config.h and system headers), so the shared core stays free of the
#    daemon, the clients and the BPF programs;
#  - the pure core (libcommon in common/common.mk) includes nothing of the
#    I/O core beside it in common/ and only C headers that declare no I/O;
#  - no client source includes a daemon header: what both need is in
#    common/;
#  - in the daemon, only main.c includes dispatch.h and only the
#    handlers' files their own header (front ends act through the
#    engine), and every file has a tier (base, levels, engine, actors,
#    front ends, main) and includes nothing of a higher one;
#  - in the daemon and the shared core, /proc and /sys are named only by
#    their readers' roots (PROCFS_ROOT in daemon/procfs.h, SYSFS_ROOT in
#    common/sysfs.h), which every other file is handed or builds on, and
#    the clocks are read only by daemon/clocks.c, also for the benches;
#  - no source reaches another folder with a relative "../" include;
#  - no two source files of one folder have names one letter apart
#    (mover.c/moves.c, notify.c/sdnotify.c): a newcomer finds a role by
#    its name, not by telling near-twins apart.
#  - every tracked source file (code, build files, scripts, units, config,
#    man pages) names its license in an SPDX line among its first three
#    lines: LGPL-2.1-or-later for what librtplace is built from and installs
#    (client.mk's client_librtplace_la_SOURCES, include_HEADERS, its version
#    script, pkg-config file and man page), GPL-2.0-or-later for the rest;
#    debian/copyright's LGPL Files stanza lists exactly the former; and
#    each BPF program declares a GPL-compatible license to the kernel;
#  - no such file points at a ticket ("[i]ssue 12", "([i]ssue ...)", a
#    comment that opens with "14.2:"): a comment states the rule itself;
#  - every citation of the design document in a tracked text file
#    ("DESIGN §N", "DESIGN §N, §M", or a bare "§N" or "§N.M": the sign
#    followed by a number is kept for that document) names a section
#    doc/DESIGN.md has: a heading "## §N Title" (at any level; "§N.M"
#    needs a heading of its own).
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

# The quoted includes of file $1, one a line.
includes_of() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

common_headers=" $(git ls-files 'common/*.h' | xargs -n1 basename | tr '\n' ' ') config.h "
for f in $(git ls-files 'common/*.c' 'common/*.h'); do
	while IFS= read -r inc; do
		case "$common_headers" in
		*" $inc "*) ;;
		*) fail "$f includes \"$inc\", which is not in common/" ;;
		esac
	done < <(includes_of "$f")
done

# The pure core (common/common.mk's libcommon) makes no system calls, so its
# unit tests need no root: its files include each other and the C
# library's headers that declare no I/O, never the I/O core beside it in
# common/ (file, sysfs, rtbudget, conf, the hwloc loader).
pure_sources=$(printf 'include common/common.mk\nprint:\n\t@echo $(common_libcommon_la_SOURCES)\n' | env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -f - print 2>/dev/null)
[ -n "$pure_sources" ] || fail "common/common.mk: no common_libcommon_la_SOURCES read"
pure_headers=" $(for f in $pure_sources; do case $f in *.h) basename "$f" ;; esac; done | tr '\n' ' ') config.h "
pure_system=" assert.h ctype.h emmintrin.h endian.h errno.h inttypes.h limits.h linux/types.h sched.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h "
for f in $pure_sources; do
	while IFS= read -r inc; do
		case "$pure_headers" in
		*" $inc "*) ;;
		*) fail "$f (the pure core, libcommon) includes \"$inc\", which is not of the pure core: I/O belongs to the core beside it (libfile, libconfig) or to the daemon" ;;
		esac
	done < <(includes_of "$f")
	while IFS= read -r inc; do
		case "$pure_system" in
		*" $inc "*) ;;
		*) fail "$f (the pure core, libcommon) includes <$inc>, not among the C headers it may use ($pure_system): it makes no system calls" ;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$f")
done

daemon_headers=" $(git ls-files 'daemon/*.h' | xargs -n1 basename | tr '\n' ' ') "
for f in $(git ls-files 'client/*.c' 'client/*.h'); do
	while IFS= read -r inc; do
		case "$daemon_headers" in
		*" $inc "*) fail "$f includes the daemon header \"$inc\"; move what both need to common/" ;;
		esac
	done < <(includes_of "$f")
done

# The daemon is built bottom-up (daemon/main.c): levels source -> engine
# -> actors -> dispatch -> server, RealtimeKit and the metrics beside
# dispatch over the engine. The request handlers are main.c's to hand to
# the server, no front end's to reach into; the engine and its levels
# source include nothing built over them.
for f in $(git ls-files 'daemon/*.c' 'daemon/*.h'); do
	case "$f" in daemon/dispatch.[ch] | daemon/dispatch-*.[ch]) continue ;; esac
	while IFS= read -r inc; do
		case "$inc" in
		dispatch.h) [ "$f" = daemon/main.c ] ||
			fail "$f includes \"dispatch.h\": front ends act through the engine (engine.h), not the request handlers" ;;
		dispatch-*.h) fail "$f includes \"$inc\", the request handlers' own header" ;;
		esac
	done < <(includes_of "$f")
done
# Every daemon file has a tier, and includes the daemon's headers of its
# own tier and those below only:
#   1 base      what any layer uses: the loop, logging, /proc, the claims
#               table and its journal, rights, quotas, records, the socket,
#               the isolation edge (cgroupfs and systemd's scopes) and
#               RealtimeKit's pure rules
#   2 levels    where the map's levels come from
#   3 engine    the one owner of the daemon's state
#   4 actors    what acts on threads over the engine
#   5 front     the request handlers, RealtimeKit on the bus, the metrics
#   6 main      start-up order
daemon_tier() {
	case "$(basename "${1%.[ch]}")" in
	main) echo 6 ;;
	dispatch | dispatch-* | metrics | rtkit | rtkit-bus | rtkit-caller | rtkit-grant | rtkit-threads | rtkit-watchdog | \
		rtkit-internal) echo 5 ;;
	actors | moves | push | manage) echo 4 ;;
	engine) echo 3 ;;
	levels-source | tracker | sampler) echo 2 ;;
	log | clocks | loop | procfs | histogram | systemd | quota | claims | claims-state | pidmap | auth | \
		thread-sched | irqnoise | kernel-env | hotplug | seed | snapshot | isoplan | isolation | isolation-systemd | irqbalance | rtkit-rules | rtkit-admit | \
		notify | server | acceptor | rate) echo 1 ;;
	*) echo 0 ;;
	esac
}
for f in $(git ls-files 'daemon/*.c' 'daemon/*.h'); do
	tier=$(daemon_tier "$f")
	if [ "$tier" = 0 ]; then
		fail "$f has no tier in the daemon's layers: place it in daemon_tier() (scripts/check-layout.sh)"
		continue
	fi
	while IFS= read -r inc; do
		case "$daemon_headers" in *" $inc "*) ;; *) continue ;; esac
		[ "$(daemon_tier "$inc")" -le "$tier" ] ||
			fail "$f (tier $tier) includes \"$inc\" (tier $(daemon_tier "$inc")), which is built over it"
	done < <(includes_of "$f")
done

# Code lines only: comments may name the files these roots lead to. The
# daemon's and the core's files, and those named after the two arguments.
code_hits() {
	local re=$1 except=$2

	shift 2
	git grep -n -E "$re" -- 'daemon/*.[ch]' 'common/*.[ch]' "$@" |
		grep -v -E '^[^:]*:[0-9]+:[[:space:]]*(/?\*|//)' | grep -v -E "^($except):" |
		sed -e 's|/\*.*\*/||g' -e 's|//.*||' | grep -E "$re"
}
while IFS= read -r hit; do
	fail "/proc named outside daemon/procfs.h (use PROCFS_ROOT, or the proc root passed in): $hit"
done < <(code_hits '"/proc' 'daemon/procfs.h')
while IFS= read -r hit; do
	fail "/sys named outside common/sysfs.h (use SYSFS_ROOT, or the sysfs root passed in): $hit"
done < <(code_hits '"/sys' 'common/sysfs.h')
while IFS= read -r hit; do
	fail "a clock read outside daemon/clocks.c (use clocks.h or loop_now_ms()): $hit"
done < <(code_hits '\<(clock_gettime|gettimeofday|time\(NULL\))' 'daemon/clocks.c' 'bench/*.[ch]')

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

# Licenses. Exempt: prose (*.md, NEWS), the license texts, data (fuzz
# corpora and dictionary, the generated SVG), JSON (no comment syntax) and
# the Debian packaging files that debian/copyright covers as a whole.
licenses_checked=no
while IFS= read -r hit; do
	case "$hit" in
	"#checked") licenses_checked=yes ;;
	*) fail "$hit" ;;
	esac
done < <(git ls-files | python3 -c '
import fnmatch, os, re, sys
exempt = ["*.md", "NEWS", "COPYING*", ".gitignore", "*/.gitignore", "tests/fuzz/corpus/*",
          "tests/fuzz/config.dict", "doc/*.svg", "*.json.in"]
def make_list(path, var):
    text = re.sub(r"\\\n", " ", open(path).read())
    return [w for m in re.finditer(r"^" + var + r"\s*\+?=(.*)$", text, re.M) for w in m.group(1).split()]
lgpl = set(make_list("client/client.mk", "client_librtplace_la_SOURCES"))
for mk in ["Makefile.am", "client/client.mk", "common/common.mk"]:
    lgpl.update(make_list(mk, "include_HEADERS"))
lgpl.update(["client/librtplace.sym", "client/rtplace.pc.in", "man/librtplace.3"])
spdx = re.compile(r"SPDX-License-Identifier: ([A-Za-z0-9.+-]+)")
ticket = re.compile(r"\bissues?[ -]#?[0-9]|\(issue([ ,)]|$)|^\s*(/?\*|#|//)\s*[0-9]+\.[0-9]+: ", re.I)
for path in sys.stdin.read().splitlines():
    if any(fnmatch.fnmatch(path, p) for p in exempt):
        continue
    if path.startswith("debian/") and path != "debian/rules":
        continue
    want = "LGPL-2.1-or-later" if path in lgpl else "GPL-2.0-or-later"
    try:
        with open(path, errors="replace") as f:
            lines = f.read().split("\n")
    except OSError as e:
        print(f"{path}: unreadable: {e.strerror}")
        continue
    found = [m.group(1) for m in map(spdx.search, lines[:3]) if m]
    if not found:
        print(f"{path}: no SPDX-License-Identifier line among its first three lines (want {want})")
    elif found[0] != want:
        print(f"{path}: SPDX-License-Identifier {found[0]}, its role needs {want}")
    for n, line in enumerate(lines, 1):
        if ticket.search(line):
            print(f"{path}:{n}: names a ticket; state the rule instead: {line.strip()}")
    if path.startswith("bpf/") and path.endswith(".bpf.c"):
        lic = re.search(r"SEC\(\"license\"\)\s*=\s*\"([^\"]*)\"", "\n".join(lines))
        if not lic or lic.group(1) not in ("GPL", "Dual BSD/GPL", "GPL v2", "Dual MIT/GPL"):
            print(f"{path}: the BPF license string must be GPL-compatible (\"GPL\" or \"Dual BSD/GPL\")")
# debian/copyright says the same: its LGPL stanza lists exactly these
# (a tarball has no debian/ folder, and no tracked files to check either).
text = open("debian/copyright").read() if os.path.exists("debian/copyright") else ""
for stanza in text.split("\n\n"):
    if re.search(r"^License: LGPL-2.1-or-later$", stanza, re.M) and stanza.startswith("Files:"):
        listed = set(re.match(r"Files:((?:.*\n?)*?)(?=^\S)", stanza, re.M).group(1).split())
        for path in sorted(lgpl - listed):
            print(f"debian/copyright: {path} is LGPL-2.1-or-later (librtplace is built from it) but not in its LGPL Files stanza")
        for path in sorted(listed - lgpl):
            print(f"debian/copyright: {path} is in the LGPL Files stanza but librtplace is not built from it")
print("#checked")
')
[ $licenses_checked = yes ] || fail "the license and ticket checks did not run (python3?)"

design_checked=no
while IFS= read -r hit; do
	case "$hit" in
	"#checked") design_checked=yes ;;
	*) fail "$hit" ;;
	esac
done < <(git ls-files | python3 -c '
import fnmatch, os, re, sys
design = "doc/DESIGN.md"
ref = re.compile(r"§([0-9]+(?:\.[0-9]+)*)")
heading = re.compile(r"^#+[ \t]+§([0-9]+(?:\.[0-9]+)*)(?![0-9.])")
sections = set()
if os.path.exists(design):
    with open(design, errors="replace") as f:
        sections = {m.group(1) for m in map(heading.match, f) if m}
else:
    print(f"{design} is missing: the design document every citation of DESIGN §N points into")
# The sections it has, consecutive numbers as one range.
spans = []
for n in sorted(sections, key=lambda n: [int(x) for x in n.split(".")]):
    if spans and n.isdigit() and spans[-1][1].isdigit() and int(n) == int(spans[-1][1]) + 1:
        spans[-1][1] = n
    else:
        spans.append([n, n])
have = ", ".join("§" + a if a == b else f"§{a}-§{b}" for a, b in spans) or "none"
for path in sys.stdin.read().splitlines():
    if fnmatch.fnmatch(path, "tests/fuzz/corpus/*"):
        continue
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"{path}: unreadable: {e.strerror}")
        continue
    if b"\0" in data:
        continue
    for n, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
        for m in ref.finditer(line):
            if m.group(1) not in sections:
                print(f"{path}:{n}: cites DESIGN §{m.group(1)}, a section {design} does not have (it has {have})")
print("#checked")
')
[ $design_checked = yes ] || fail "the check of citations of doc/DESIGN.md did not run (python3?)"

[ $status -eq 0 ] && echo "check-layout: ok ($(echo "$headers" | wc -w) headers)"
exit $status
