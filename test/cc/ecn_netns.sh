#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# RoCEv2's congestion signals between two namespaces: dpdat-perf streams
# 64 KiB WRITEs from namespace B to A over a kernel-backed port (af_xdp or
# af_packet on a veth pair) for 3 s; 5 % of B's frames leave marked CE, as
# a marking queue on the path (RED, fq_codel with ECN) would mark them:
# DPDAT_FAULT's tx:ce (this machine's kernel has tbf but none of the
# marking qdiscs). The server (A) must count frames marked CE and answer
# them with CNPs, fewer than the marks (at most one a QP in 50 us); the
# client (B) must receive CNPs and cut its rate (DCQCN), at most once a
# CNP, and the stream complete.
#   ecn_netns.sh <dpdat-perf> <af_xdp|af_packet>
set -u
here=$(dirname "$0")
. "$here/../integration/netns.sh"
perf=$1 kind=$2
dev=$(netns_dev "$kind") || exit 1
netns_up 1500
dir=$(mktemp -d /tmp/dpdat-ecn-XXXXXX)
trap 'netns_down; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; cat "$dir"/*.log; exit 1; }

# both mark their frames ECT(0) (DPDAT_ECN; off by default)
export DPDAT_ECN=ect0
ip netns exec "$NS_A" timeout 60 "$perf" write_bw -D 3 -s 65536 \
	--dev "$dev" > "$dir/server.log" 2>&1 &
spid=$!
sleep 1
ip netns exec "$NS_B" env DPDAT_FAULT='tx:ce=0.05;seed=5' timeout 60 \
	"$perf" write_bw -D 3 -s 65536 --dev "$dev" 198.18.0.1 \
	> "$dir/client.log" 2>&1
crc=$?
wait "$spid"; src=$?
[ $crc -eq 0 ] && [ $src -eq 0 ] || fail "dpdat-perf: server $src, client $crc"
# "ECN: CE received N CNPs sent N received N;"
ecn() { sed -n 's/.*ECN: CE received \([0-9]*\) CNPs sent \([0-9]*\) received \([0-9]*\); DCQCN: cuts \([0-9]*\) rate \([0-9]*\) .*/\1 \2 \3 \4 \5/p' "$1"; }
read -r sce scnp_tx _ _ _ < <(ecn "$dir/server.log")
read -r _ _ ccnp_rx ccuts crate < <(ecn "$dir/client.log")
grep -h "^ *65536 " "$dir/client.log"
echo "ecn: $kind: server: CE received ${sce:-?}, CNPs sent ${scnp_tx:-?}; client: CNPs received ${ccnp_rx:-?}, DCQCN cuts ${ccuts:-?}, rate at the end ${crate:-?} Mb/s"
[ -n "${sce:-}" ] && [ -n "${ccnp_rx:-}" ] || fail "no ECN counters in dpdat-perf's output"
[ "$sce" -gt 0 ] || fail "the server saw no frame marked CE"
[ "$scnp_tx" -gt 0 ] || fail "the server sent no CNP"
[ "$scnp_tx" -lt "$sce" ] || fail "a CNP for every CE frame: no gap"
[ "$scnp_tx" -le 60000 ] || fail "$scnp_tx CNPs in 3 s: more than one in 50 us"
[ "$ccnp_rx" -gt 0 ] || fail "the client received no CNP"
[ "$ccnp_rx" -le "$scnp_tx" ] || fail "the client received more CNPs than were sent"
# the sender reacts (DCQCN): its rate was cut, at most once a CNP
[ "$ccuts" -gt 0 ] || fail "the client's rate was never cut"
[ "$ccuts" -le "$ccnp_rx" ] || fail "more cuts than CNPs"
echo "PASS: CE marks answered by CNPs between namespaces over $kind"
