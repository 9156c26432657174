/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Device arguments that name the local rank: "%l" in a device string is
 * this process's rank among the processes of its job on this host, as the
 * launcher exports it, so that one setting (a dat.conf line,
 * FI_DPDAT_DEVICE) gives every rank of an MPI job its own share of the NIC
 * (doc/guides/many-apps.md): net_af_xdp0,iface=mv%l is mv0 for local rank
 * 0, mv1 for rank 1. "%%" is a "%". */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dpdat/dpdat_env.h>

#include "port_priv.h"

/* Where launchers put the local rank, in the order they are looked at:
 * dpdat's own setting first, then Open MPI, MPICH (Hydra), MVAPICH,
 * Slurm and Cray PALS. */
static const char *const rank_vars[] = {
	"DPDAT_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
	"MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PALS_LOCAL_RANKID",
};

/* The local rank, or -ENOENT when no launcher said, -EINVAL when the
 * first variable set is no number (logged). */
static long
rank_local(const char **from)
{
	for (size_t i = 0; i < RTE_DIM(rank_vars); i++) {
		const char *v = i == 0 ? dpdat_env_str(rank_vars[0]) :
			getenv(rank_vars[i]);
		char *end;
		long r;

		if (v == NULL || *v == '\0')
			continue;
		*from = rank_vars[i];
		errno = 0;
		r = strtol(v, &end, 10);
		if (errno != 0 || *end != '\0' || end == v || r < 0 ||
		    r > 65535) {
			PORT_LOG(ERR, "%s=\"%s\": not a local rank (0..65535)",
				 rank_vars[i], v);
			return -EINVAL;
		}
		return r;
	}
	return -ENOENT;
}

int
port_devargs_expand(const char *device, char *out, size_t len)
{
	const char *from = NULL;
	size_t o = 0;
	long rank = -1;
	int n;

	for (const char *p = device; *p != '\0'; p++) {
		if (*p != '%') {
			if (o + 1 >= len)
				goto no_room;
			out[o++] = *p;
			continue;
		}
		p++;
		if (*p == '%') {
			if (o + 1 >= len)
				goto no_room;
			out[o++] = '%';
			continue;
		}
		if (*p != 'l') {
			PORT_LOG(ERR, "%s: '%%%c' in device arguments: %%l (the "
				 "local rank) or %%%% only", device,
				 *p ? *p : ' ');
			return -EINVAL;
		}
		if (rank < 0) {
			rank = rank_local(&from);
			if (rank == -ENOENT)
				PORT_LOG(ERR, "%s: %%l names the local rank, but "
					 "no launcher set one (DPDAT_LOCAL_RANK, "
					 "OMPI_COMM_WORLD_LOCAL_RANK, "
					 "MPI_LOCALRANKID, SLURM_LOCALID, ...)",
					 device);
			if (rank < 0)
				return (int)rank;
		}
		n = snprintf(out + o, len - o, "%ld", rank);
		if (n < 0 || (size_t)n >= len - o)
			goto no_room;
		o += (size_t)n;
	}
	if (o >= len)
		goto no_room;
	out[o] = '\0';
	if (from != NULL)
		PORT_LOG(INFO, "%s: local rank %ld (%s): %s", device, rank,
			 from, out);
	return 0;
no_room:
	PORT_LOG(ERR, "%s: device arguments longer than %zu bytes", device,
		 len - 1);
	return -EINVAL;
}
