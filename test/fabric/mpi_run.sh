#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# An MPI program on two ranks over dpdat: Debian's Open MPI, its ofi MTL
# (pml cm) on dpdat;ofi_rxm, the ranks joined by a memif pair:
#   mpi_run.sh PROVIDER_DIR PROGRAM [args...]
# Each rank gets its side of the pair (rank 0 the memif server at
# 198.18.0.1, rank 1 the client at 198.18.0.2): mpirun starts this script
# again as the rank wrapper (MPI_RUN_RANK set), which sets FI_DPDAT_DEVICE
# and FI_DPDAT_IPV4 and executes the program. The launch recipe of
# doc/guides/libfabric.md.
set -u
if [ -n "${MPI_RUN_RANK:-}" ]; then
	r=${OMPI_COMM_WORLD_RANK:-0}
	sock=$MPI_RUN_DIR/memif.sock
	if [ "$r" = 0 ]; then
		role=server ip=198.18.0.1
	else	# the server's socket first
		role=client ip=198.18.0.2
		for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
	fi
	export FI_DPDAT_DEVICE="net_memif0,role=$role,socket=$sock,socket-abstract=no"
	export FI_DPDAT_IPV4=$ip
	exec "$@"
fi
provdir=$1; shift
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (openmpi-bin)"; exit 77; }
dir=$(mktemp -d /tmp/dpdat-mpi-XXXXXX)
trap 'rm -rf "$dir"' EXIT
echo "mpi: mpirun -np 2 --mca pml cm --mca mtl ofi," \
	"--mca mtl_ofi_provider_include dpdat, memif"
FI_PROVIDER_PATH=$provdir MPI_RUN_DIR=$dir MPI_RUN_RANK=1 \
timeout -k 5 "${MPI_TIMEOUT:-120}" mpirun -np 2 --allow-run-as-root \
	--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include dpdat \
	--mca btl self \
	-x FI_PROVIDER_PATH -x MPI_RUN_DIR -x MPI_RUN_RANK \
	"$0" "$@" >"$dir/out" 2>&1
rc=$?
cat "$dir/out"
echo "mpirun exit $rc"
[ "$rc" -eq 0 ] || exit 1
grep -q '^mpi: allreduce .*: right$' "$dir/out" &&
	[ "$(grep -c '^mpi: ping-pong .*errors 0$' "$dir/out")" -eq 3 ]
