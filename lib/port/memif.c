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
 *
 * Under a hypervisor that shadows the guest's page tables (this project's
 * 2-vCPU test machines), that is not enough: the first access of the CPU
 * to each page still exits to the hypervisor, about 5 us a page, without a
 * fault the guest can count. The first pass over the rings cost about 35
 * us a round trip again (dpdat-perf write_lat --transport raw: exactly the
 * first 1024 round trips at 37 us, then 1.8). So each page is also touched
 * once, by an atomic add of 0 to its first word: a write that changes
 * nothing, even while the peer writes there (20 to 50 ms for 16 MiB
 * there; a fraction of a millisecond where the hardware walks the guest's
 * tables itself). The touch runs on the EAL's interrupt thread, where the
 * driver unmaps a region when the peer leaves, so a region cannot go
 * while it is touched; the engine waits for it, and the link counts as up
 * after it: the cost is paid once, before the first connection, and not
 * by the first thousand messages.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_cycles.h>

#include "port_priv.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The process's memif regions (mapped for reading and writing), one by
 * one; false at the end. */
static bool
memif_region_next(FILE *f, uintptr_t *lo, uintptr_t *hi)
{
	char line[512], perms[8];

	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "/memfd:memif_region_") != NULL &&
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", lo, hi,
			   perms) == 3 &&
		    *hi > *lo && perms[0] == 'r' && perms[1] == 'w')
			return true;
	return false;
}

/* On the interrupt thread: every page of every memif region touched. */
static void
memif_touch(void *arg __rte_unused)
{
	uint64_t t0 = rte_get_timer_cycles(), pages = 0;
	uintptr_t lo, hi, a;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return;
	while (memif_region_next(f, &lo, &hi)) {
		for (a = RTE_ALIGN_CEIL(lo, 4096); a + 8 <= hi; a += 4096) {
			__atomic_fetch_add((uint64_t *)a, 0, __ATOMIC_RELAXED);
			pages++;
		}
	}
	fclose(f);
	PORT_LOG(DEBUG, "memif memory touched: %" PRIu64 " pages in %.1f ms",
		 pages, (double)(rte_get_timer_cycles() - t0) * 1e3 /
			(double)rte_get_timer_hz());
}

void
port_memif_prefault(struct dpdat_port *p)
{
	unsigned int regions = 0, failed = 0;
	uintptr_t lo, hi;
	size_t bytes = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return;
	while (memif_region_next(f, &lo, &hi)) {
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
	if (regions == 0 && !failed)
		return;		/* none mapped (any more) */
	if (port_intr_call(memif_touch, NULL) != 0)
		PORT_LOG(DEBUG, "%s: memif memory not touched (the interrupt "
			 "thread did not take it)", p->name);
}
