#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
# While a two-process RC run moves data, ask its processes over DPDK
# telemetry for dpdat's port and QP counters.
# Usage: telemetry_run.sh <run2.sh> <rc_test> <telemetry_check.py>
set -u
"$1" 60 "$2" --sizes 16777216,16777216,16777216 --pmtu 4096 --mtu 4200 \
	>/tmp/dpdat-telemetry-run.$$ 2>&1 &
run=$!
/usr/bin/python3 "$3"; check=$?
wait "$run"; rc=$?
tail -3 /tmp/dpdat-telemetry-run.$$; rm -f /tmp/dpdat-telemetry-run.$$
[ "$check" -eq 0 ] && [ "$rc" -eq 0 ]
