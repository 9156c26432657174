/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * memif's shared memory, faulted in when the link comes up.
 *
 * DPDK 22.11's memif keeps its rings and packet buffers in a memfd
 * ("memif_region_N") that both processes map with 4 KiB pages, and maps it
 * afresh at every connection. Left alone, each page faults on its first
 * use in each process: the first pass over the rings (1024 slots a
 * direction by default, so the first ~1000 round trips) paid several
 * microseconds a message (dpdat-perf read_lat -n 1000: 7 us typical, 1.5
 * with a 64-slot ring). MADV_POPULATE_WRITE (Linux 5.14) builds the page
 * tables of every memif region of the process in one call each, without
 * touching a byte; where the kernel lacks it, nothing is done.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "port_priv.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void
port_memif_prefault(struct dpdat_port *p)
{
	unsigned int regions = 0, failed = 0;
	uintptr_t lo, hi;
	size_t bytes = 0;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "/memfd:memif_region_") == NULL ||
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2 ||
		    hi <= lo)
			continue;
		/* the driver may unmap it meanwhile (the peer went away):
		 * then this fails with ENOMEM and nothing is touched */
		if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0) {
			regions++;
			bytes += hi - lo;
		} else if (errno == EINVAL) {
			failed++;	/* an older kernel */
			break;
		}
	}
	fclose(f);
	if (failed)
		PORT_LOG(DEBUG, "%s: memif memory not faulted in "
			 "(no MADV_POPULATE_WRITE)", p->name);
	else
		PORT_LOG(DEBUG, "%s: memif memory faulted in: %u region(s), "
			 "%zu KiB", p->name, regions, bytes >> 10);
}
