#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# stage-programs.sh DIR PROGRAM...: copies programs of the build tree into
# DIR (made mode 0755) for a test that runs them as another user, who may
# not reach the build tree: a checkout under /root or any 0700 folder.
# The caller makes DIR's parent traversable and removes DIR when done.
#
# A libtool wrapper script runs its real binary from .libs with the build
# tree's library folders on LD_LIBRARY_PATH, all behind the 0700 folder:
# the real binary and those libraries are copied to DIR/.libs instead, and
# DIR/PROGRAM is a script that points the loader there, as the wrapper
# does. Any other program is copied as it is.
set -eu
dir=$1
shift
mkdir -p "$dir/.libs"
chmod 0755 "$dir" "$dir/.libs"
for prog; do
	name=${prog##*/}
	if ! grep -q 'temporary wrapper script for' "$prog" 2>/dev/null; then
		cp "$prog" "$dir/$name"
		continue
	fi
	cp "${prog%/*}/.libs/$name" "$dir/.libs/$name"
	libdirs=$(sed -n 's/^ *LD_LIBRARY_PATH="\(.*\):\$LD_LIBRARY_PATH"$/\1/p' "$prog")
	[ -n "$libdirs" ] || {
		echo "stage-programs.sh: no library path in libtool wrapper $prog" >&2
		exit 1
	}
	for lib in $(echo "$libdirs" | tr ':' ' '); do
		# cp -P keeps the soname links links.
		cp -P "$lib"/*.so* "$dir/.libs/"
	done
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\nexport LD_LIBRARY_PATH\nexec %s/.libs/%s "$@"\n' \
		"$dir" "$dir" "$name" >"$dir/$name"
	chmod 0755 "$dir/$name"
done
chmod -R a+rX "$dir"
