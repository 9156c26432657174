#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# The quick-start demo N times in a row: its server used to crash at exit
# about one run in five (memif's interrupt handler, taking the client's
# hang-up, raced dpdat_port_free() on the main thread), which one run
# rarely shows. Usage: demo_repeat.sh <demo.sh> <build dir> <N>
set -uo pipefail
demo=$1 build=$2 n=$3
for ((i = 1; i <= n; i++)); do
	if ! "$demo" "$build" >"$build/demo-repeat.log" 2>&1; then
		tail -20 "$build/demo-repeat.log"
		echo "demo-repeat: run $i of $n failed"
		exit 1
	fi
done
echo "demo-repeat: $n runs, every one clean"
