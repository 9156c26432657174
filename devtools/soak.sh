#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Soak: two processes over memif for MINUTES (default 10), connecting,
# sending 32 x 4 KiB on each connection, WRITEing 64 KiB, READing it back
# and adding 1 to the server's counter with a fetch-and-add, then
# disconnecting, over and over, under 1 % faults each way (DPDAT_FAULT to
# change them). Every minute the client prints its counters (connections,
# SENDs, mbufs in use, registration contexts, resident set) and fails if any
# grew since the first minute; every work request must complete, every byte
# READ back match, every fetch-and-add fetch the count before it.
#   devtools/soak.sh [MINUTES]
#   SOAK_NETNS=af_xdp|af_packet devtools/soak.sh [MINUTES]
#        between two network namespaces instead (as root), over that kind of
#        port on a veth pair beside the kernel
set -u
cd "$(dirname "$0")/.."
min=${1:-10}
case $min in ''|*[!0-9]*|0) echo "usage: $0 [MINUTES]" >&2; exit 2 ;; esac
devtools/build.sh build || exit 1
secs=$((min * 60))
export DPDAT_FAULT=${DPDAT_FAULT:-"rx:drop=0.01,dup=0.01,reorder=0.01;tx:drop=0.01;seed=$RANDOM"}
case ${SOAK_NETNS:-} in
'') run=(test/integration/run2.sh) where="memif" ;;
af_xdp|af_packet) run=(test/integration/run2-netns.sh "$SOAK_NETNS")
	where="two namespaces over $SOAK_NETNS" ;;
*) echo "soak: SOAK_NETNS: af_xdp or af_packet" >&2; exit 2 ;;
esac
echo "soak: $min min, $where, DPDAT_FAULT=$DPDAT_FAULT"
"${run[@]}" $((secs + 60)) build/test/integration/cm_test \
	soak "$secs" 2>&1 | grep -vE '^\[(server|client)\] (EAL|TELEMETRY|rte_pmd_memif)'
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && echo "soak: passed" || echo "soak: FAILED"
exit "$rc"
