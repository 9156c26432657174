#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# The quick-start demo: two dpdat-testpmd processes over a memif pair run
# their built-in scripts (--auto-start): register memory, connect through
# the CM, a verified RDMA WRITE and READ, SEND both ways, a 5-second WRITE
# stream with its rate, then an orderly disconnect. Each line is prefixed
# with the side that printed it. Exits non-zero when either side fails.
# Usage: devtools/demo.sh [build dir]
# DPDAT_NETNS=af_xdp|af_packet (as root): the same between two hosts, two
# network namespaces joined by a veth pair (test/integration/netns.sh, gone
# on exit), dpdat on each veth0 beside the kernel with its address.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD:-build}}
tp=$build/app/dpdat-testpmd/dpdat-testpmd
[ -x "$tp" ] || { echo "demo: $tp not built (devtools/build.sh)"; exit 1; }
sock=/tmp/dpdat-demo-$$.sock
srv=
trap 'rm -f "$sock"; kill ${srv:-} 2>/dev/null || true' EXIT
devargs=() srv_ns=() cli_ns=()
if [ -n "${DPDAT_NETNS:-}" ]; then
	. test/integration/netns.sh
	dev=$(netns_dev "$DPDAT_NETNS")
	netns_up 1500
	trap 'netns_down; rm -f "$sock"; kill ${srv:-} 2>/dev/null || true' EXIT
	devargs=(--dev "$dev")
	srv_ns=(ip netns exec "$NS_A") cli_ns=(ip netns exec "$NS_B")
fi
side() {	# role: run one side, its lines prefixed; EAL chatter dropped
	local ns=("${srv_ns[@]}")
	[ "$1" = client ] && ns=("${cli_ns[@]}")
	"${ns[@]}" timeout 90 "$tp" --role "$1" --socket "$sock" \
		"${devargs[@]}" --auto-start 2>&1 |
		grep --line-buffered -v -e '^EAL:' -e '^TELEMETRY:' \
			-e 'mp action callback' | sed -u "s/^/[$1] /"
	return "${PIPESTATUS[0]}"
}
side server & srv=$!
sleep 0.5
crc=0; side client || crc=$?
src=0; wait $srv || src=$?
srv=
if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
	echo "demo: FAILED (client $crc, server $src)"
	exit 1
fi
echo "demo: both sides done, every transfer verified"
