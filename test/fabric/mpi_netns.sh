#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Open MPI over dpdat;ofi_rxm with two ranks a host (four in all): hosts A
# (198.18.0.1) and B (198.18.0.2) are network namespaces joined by a veth
# pair (made here, removed on every exit), each with two macvlan shares of
# its veth0, mv0 and mv1 (doc/guides/many-apps.md). mpirun runs in A and
# starts B's daemon through netns_rsh.sh (its "ssh"); every rank takes
# FI_DPDAT_DEVICE=net_<kind>0,iface=mv%l, its share by local rank, with
# the share's address. The program: mpi_pingpong (rank 0 with rank 1, on
# the same host, then with rank 2, on the other; an allreduce of all
# four), every byte checked. --bind-to none: the two "hosts" share this
# machine's cores, and Open MPI binds each host's first rank to core 0
# (one rank a host: both on one core, 3.4 ms half round trips, 5.8 us
# unbound).
#   mpi_netns.sh <af_xdp|af_packet> PROVIDER_DIR PROGRAM [args...]
# MPI_PER_HOST=1 runs one rank a host instead (two in all; rank 1 on B).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/netns.sh"
kind=$1 provdir=$2; shift 2
command -v mpirun >/dev/null || netns_skip "no mpirun (openmpi-bin)"
netns_up 1500
per=${MPI_PER_HOST:-2}
case $per in 1 | 2) ;; *) echo "MPI_PER_HOST: 1 or 2"; exit 2 ;; esac
netns_share "$NS_A" "$per" 10 0
netns_share "$NS_B" "$per" 20 0
dir=$(mktemp -d /tmp/dpdat-mpins-XXXXXX)
trap 'netns_down; rm -rf "$dir"' EXIT
echo "$NS_A" > "$dir/198.18.0.1"
echo "$NS_B" > "$dir/198.18.0.2"
echo "mpi: $((2 * per)) ranks, $per a host ($NS_A, $NS_B), each on its own share over $kind"
ip netns exec "$NS_A" env FI_PROVIDER_PATH="$provdir" MPI_NS_DIR="$dir" \
	FI_DPDAT_DEVICE="net_${kind}0,iface=mv%l" FI_DPDAT_IPV4=auto \
	timeout -k 5 "${MPI_TIMEOUT:-150}" mpirun -np $((2 * per)) \
	--host "198.18.0.1:$per,198.18.0.2:$per" --allow-run-as-root \
	--bind-to none --mca plm_rsh_agent "$here/netns_rsh.sh" \
	--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include dpdat \
	--mca btl self \
	-x FI_PROVIDER_PATH -x FI_DPDAT_DEVICE -x FI_DPDAT_IPV4 -x MPI_NS_DIR \
	"$@" >"$dir/out" 2>&1
rc=$?
grep -v "^EAL\|^TELEMETRY" "$dir/out"
echo "mpirun exit $rc"
[ "$rc" -eq 0 ] || exit 1
# a ping-pong line for each of 3 sizes and each peer named (rank 1 when
# none is), every one without an error
peers=0 skip=0
for a in "${@:2}"; do
	if [ $skip = 1 ]; then skip=0; continue; fi
	[ "$a" = -n ] && { skip=1; continue; }
	peers=$((peers + 1))
done
[ $peers -gt 0 ] || peers=1
ok=$(grep -c '^mpi: ping-pong .*errors 0$' "$dir/out")
grep -q "^mpi: allreduce .* over $((2 * per)) ranks: right$" "$dir/out" &&
	[ "$(grep -c '^mpi: ping-pong ' "$dir/out")" -eq $((3 * peers)) ] &&
	[ "$ok" -eq $((3 * peers)) ]
