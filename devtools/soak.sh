#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Soak: two processes over memif for MINUTES (default 10), connecting,
# sending 32 x 4 KiB on each connection and disconnecting, over and over,
# under 1 % faults each way (DPDAT_FAULT to change them). Every minute the
# client prints its counters (connections, SENDs, mbufs in use,
# registration contexts, resident set) and fails if any grew since the
# first minute; every SEND must complete. Usage: devtools/soak.sh [MINUTES]
set -u
cd "$(dirname "$0")/.."
min=${1:-10}
case $min in ''|*[!0-9]*|0) echo "usage: $0 [MINUTES]" >&2; exit 2 ;; esac
devtools/build.sh build || exit 1
secs=$((min * 60))
export DPDAT_FAULT=${DPDAT_FAULT:-"rx:drop=0.01,dup=0.01,reorder=0.01;tx:drop=0.01;seed=$RANDOM"}
echo "soak: $min min, DPDAT_FAULT=$DPDAT_FAULT"
test/integration/run2.sh $((secs + 60)) build/test/integration/cm_test \
	soak "$secs" 2>&1 | grep -vE '^\[(server|client)\] (EAL|TELEMETRY|rte_pmd_memif)'
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && echo "soak: passed" || echo "soak: FAILED"
exit "$rc"
