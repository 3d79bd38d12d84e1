#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Quick start: installs dependencies, builds rtplace and runs rtplaced in the
# foreground with its built-in defaults (no config file needed). Extra
# arguments go to rtplaced, e.g. --topology FILE.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure --quiet
make -j"$(nproc)" --no-print-directory >/dev/null
exec daemon/rtplaced "$@"
