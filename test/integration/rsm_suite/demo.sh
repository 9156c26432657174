#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# The example pair as the guide runs it: the importer reads the exporter's
# greeting, writes its own back and signals; both must say so.
# Usage: demo.sh <rsm-exporter> <rsm-importer>
# DPDAT_NETNS=af_xdp|af_packet: between two hosts, the exporter in namespace
# A (node 1, 198.18.0.1), the importer in B (node 2, 198.18.0.2), each on
# its veth0 beside the kernel.
set -u
sock=$(mktemp -u /tmp/dpdat-rsm-demo-XXXXXX.sock)
out=$(mktemp -d)
trap 'rm -rf "$out" "$sock"' EXIT
exp_dev="net_memif0,role=server,socket=$sock"
imp_dev="net_memif0,role=client,socket=$sock"
A=() B=()
if [ -n "${DPDAT_NETNS:-}" ]; then
	. "$(dirname "$0")/../netns.sh"
	exp_dev=$(netns_dev "$DPDAT_NETNS") || exit 1
	imp_dev=$exp_dev
	netns_up 1500
	trap 'netns_down; rm -rf "$out" "$sock"' EXIT
	A=(ip netns exec "$NS_A") B=(ip netns exec "$NS_B")
fi
DPDAT_RSM_NODE=1 DPDAT_RSM_DEVICE=$exp_dev \
	"${A[@]}" timeout -k 2 60 "$1" > "$out/exp" 2>&1 &
epid=$!
sleep 0.5
DPDAT_RSM_NODE=2 DPDAT_RSM_DEVICE=$imp_dev \
	"${B[@]}" timeout -k 2 60 "$2" > "$out/imp" 2>&1
irc=$?
wait "$epid"; erc=$?
sed 's/^/[exporter] /' "$out/exp"; sed 's/^/[importer] /' "$out/imp"
[ "$erc" -eq 0 ] && [ "$irc" -eq 0 ] &&
grep -q 'the segment says "hello from the exporter"' "$out/imp" &&
grep -q 'the importer wrote "hello from the importer"' "$out/exp"
