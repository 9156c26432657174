#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Open MPI's "ssh" into a host that is a network namespace (mpi_netns.sh
# names it as plm_rsh_agent): called as  netns_rsh.sh HOST COMMAND...,
# it runs COMMAND (a shell command line, as ssh would) in the namespace
# that $MPI_NS_DIR/HOST names; HOST is the host's address.
set -u
host=$1; shift
ns=$(cat "${MPI_NS_DIR:?}/$host" 2>/dev/null) ||
	{ echo "netns_rsh: no namespace for host $host" >&2; exit 255; }
exec ip netns exec "$ns" bash -c "$*"
