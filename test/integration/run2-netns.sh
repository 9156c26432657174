#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# run2.sh between two hosts: the server in namespace A (198.18.0.1), the
# client in namespace B (198.18.0.2), joined by a veth pair, dpdat on each
# veth0 over a kernel-backed port beside the kernel (each takes its
# interface's address). Usage:
#   run2-netns.sh <af_xdp|af_packet> <timeout-s> <program> [args...]
# The program is called as: program server|client <rendezvous> args..., with
# DPDAT_TEST_DEV naming the device; the rendezvous path is where the two
# exchange details out of band (a file system both see). NETNS_MTU sets the
# veth MTU (default 1500); NETNS_BRIDGE=1 joins the hosts through a bridge
# (a veth pair each) instead of one veth pair. Exits 77 (skipped) where
# namespaces cannot be made.
set -u
here=$(dirname "$0")
. "$here/netns.sh"
kind=$1 limit=$2 prog=$3; shift 3
dev=$(netns_dev "$kind") || exit 1
[ "${NETNS_BRIDGE:-0}" = 1 ] && netns_bridge
netns_up "${NETNS_MTU:-1500}"
dir=$(mktemp -d /tmp/dpdat-netns-XXXXXX)
trap 'netns_down; rm -rf "$dir"' EXIT
rdv=$dir/rdv

echo "netns: $NS_A (198.18.0.1) <-> $NS_B (198.18.0.2)${NS_BR:+ through bridge $NS_BR}, veth MTU ${NETNS_MTU:-1500}, $dev"
ip netns exec "$NS_A" env DPDAT_TEST_DEV="$dev" \
	timeout -k 2 "$limit" "$prog" server "$rdv" "$@" \
	> >(sed 's/^/[server] /') 2>&1 &
spid=$!
sleep 0.5
ip netns exec "$NS_B" env DPDAT_TEST_DEV="$dev" \
	timeout -k 2 "$limit" "$prog" client "$rdv" "$@" 2>&1 |
	sed 's/^/[client] /'
crc=${PIPESTATUS[0]}
wait "$spid"; src=$?
echo "server exit $src, client exit $crc"
[ "${SERVER_DIES:-0}" = 1 ] && [ "$src" -eq 137 ] && src=0
[ "$src" -eq 77 ] && [ "$crc" -eq 77 ] && exit 77
[ "$src" -eq 0 ] && [ "$crc" -eq 0 ]
