#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Configure (once) and build a tree. Usage: devtools/build.sh [dir [meson options...]]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || {
		cat "$dir.setup.log"; exit 1; }
	rm -f "$dir.setup.log"
fi
ninja -C "$dir" >"$dir.ninja.log" 2>&1 || { cat "$dir.ninja.log"; exit 1; }
grep -E "warning:" "$dir.ninja.log" || true
rm -f "$dir.ninja.log"
echo "build: $dir ready"
