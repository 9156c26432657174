#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# The example pair as the guide runs it: the importer reads the exporter's
# greeting, writes its own back and signals; both must say so.
# Usage: demo.sh <rsm-exporter> <rsm-importer>
set -u
sock=$(mktemp -u /tmp/dpdat-rsm-demo-XXXXXX.sock)
out=$(mktemp -d)
trap 'rm -rf "$out" "$sock"' EXIT
DPDAT_RSM_NODE=1 DPDAT_RSM_DEVICE="net_memif0,role=server,socket=$sock" \
	timeout -k 2 60 "$1" > "$out/exp" 2>&1 &
epid=$!
sleep 0.5
DPDAT_RSM_NODE=2 DPDAT_RSM_DEVICE="net_memif0,role=client,socket=$sock" \
	timeout -k 2 60 "$2" > "$out/imp" 2>&1
irc=$?
wait "$epid"; erc=$?
sed 's/^/[exporter] /' "$out/exp"; sed 's/^/[importer] /' "$out/imp"
[ "$erc" -eq 0 ] && [ "$irc" -eq 0 ] &&
grep -q 'the segment says "hello from the exporter"' "$out/imp" &&
grep -q 'the importer wrote "hello from the importer"' "$out/exp"
