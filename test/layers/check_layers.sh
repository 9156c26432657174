#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# The library's layers hold in its objects: every symbol a subsystem needs
# from another subsystem is defined by one it declared in `uses` (its
# meson.build). Includes are held by the build itself (each subsystem
# compiles with the include directories of what it uses only).
#
# Usage: check_layers.sh LIBDIR SUBSYSTEM:USED,USED ...
#   LIBDIR holds libdpdat_<subsystem>.a (meson's build tree, lib/).
# Prints every call that runs the wrong way; exits 1 if there is one.
set -euo pipefail
libdir=$1; shift

declare -A uses owner
order=()
for spec in "$@"; do
	s=${spec%%:*}
	uses[$s]=",${spec#*:},"
	order+=("$s")
done

# who defines what
for s in "${order[@]}"; do
	a=$libdir/libdpdat_$s.a
	[ -f "$a" ] || { echo "layers: $a missing"; exit 2; }
	while read -r sym; do
		owner[$sym]=$s
	done < <(nm -g --defined-only "$a" 2>/dev/null |
		 awk 'NF == 3 { print $3 }')
done

bad=0
checked=0
for s in "${order[@]}"; do
	while read -r sym; do
		t=${owner[$sym]:-}
		[ -n "$t" ] || continue		# DPDK, libc, ...
		[ "$t" != "$s" ] || continue
		checked=$((checked + 1))
		if [[ "${uses[$s]}" != *",$t,"* ]]; then
			# which object of s needs it
			obj=$(nm -u -A "$libdir/libdpdat_$s.a" 2>/dev/null |
			      awk -v y="$sym" '$NF == y && !n++ {
			      split($1, p, ":"); print p[2] }')
			echo "layers: lib/$s (${obj##*/}) uses $sym of lib/$t," \
			     "which lib/$s/meson.build does not list in uses"
			bad=1
		fi
	done < <(nm -u "$libdir/libdpdat_$s.a" 2>/dev/null |
		 awk 'NF == 2 && $1 == "U" { print $2 }' | sort -u)
done
echo "layers: ${#order[@]} subsystems, $checked uses across them checked"
if [ $bad -ne 0 ]; then
	echo "layers: FAILED"
	exit 1
fi
echo "layers: every use runs down"
