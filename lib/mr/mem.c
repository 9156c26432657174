/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Memory kinds: what the transmit path can do with a registered range.
 * DPDK memory (hugepage heap, memzones) is recorded with its IOVA and costs
 * O(1) to register; other page-aligned memory is handed to
 * rte_extmem_register() where the EAL has room for it; anything else is
 * copy-only. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <rte_eal.h>
#include <rte_fbarray.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "mr_priv.h"

/* Our own rte_extmem registrations, shared by every translation inside them
 * (the EAL refuses to register the same pages twice). Process-wide. */
struct mr_extmem {
	uint64_t addr;
	uint64_t len;
	uint32_t refcnt;
	TAILQ_ENTRY(mr_extmem) next;
};

static TAILQ_HEAD(, mr_extmem) extmem_list =
	TAILQ_HEAD_INITIALIZER(extmem_list);
static pthread_mutex_t extmem_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t
mr_page_size(void)
{
	static uint64_t pgsz;

	if (pgsz == 0)
		pgsz = (uint64_t)sysconf(_SC_PAGESIZE);
	return pgsz;
}

/* Take a reference on our registration containing [addr, addr + len); if
 * there is none and may_register, register exactly that range. */
static struct mr_extmem *
extmem_get(uint64_t addr, uint64_t len, bool may_register)
{
	struct mr_extmem *x;
	int ret;

	pthread_mutex_lock(&extmem_lock);
	TAILQ_FOREACH(x, &extmem_list, next) {
		if (mr_range_ok(x->addr, x->len, addr, len)) {
			x->refcnt++;
			goto out;
		}
		if (addr < x->addr + x->len && x->addr < addr + len) {
			x = NULL;	/* partial overlap: cannot register */
			goto out;
		}
	}
	if (!may_register)
		goto out;	/* x is NULL after the loop */
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		goto out;
	ret = rte_extmem_register((void *)(uintptr_t)addr, len, NULL, 0,
				  mr_page_size());
	if (ret != 0) {
		MR_LOG(DEBUG, "rte_extmem_register(0x%" PRIx64 ", %" PRIu64
		       ") failed: %s; copy path", addr, len,
		       rte_strerror(rte_errno));
		free(x);
		x = NULL;
		goto out;
	}
	x->addr = addr;
	x->len = len;
	x->refcnt = 1;
	TAILQ_INSERT_TAIL(&extmem_list, x, next);
out:
	pthread_mutex_unlock(&extmem_lock);
	return x;
}

static void
extmem_put(struct mr_extmem *x)
{
	pthread_mutex_lock(&extmem_lock);
	if (--x->refcnt == 0) {
		TAILQ_REMOVE(&extmem_list, x, next);
		if (rte_extmem_unregister((void *)(uintptr_t)x->addr,
					  x->len) != 0)
			MR_LOG(WARNING, "rte_extmem_unregister: %s",
			       rte_strerror(rte_errno));
		free(x);
	}
	pthread_mutex_unlock(&extmem_lock);
}

/* [addr, end) lies in DPDK's own memseg list msl: every page must be in use
 * (the list reserves address space with holes). Sets the IOVA of addr when
 * the range is IOVA-contiguous, MR_BAD_IOVA otherwise. Cost: a bitmap scan
 * plus, in IOVA-as-PA mode only, one step per hugepage. */
static int
dpdk_range_check(const struct rte_memseg_list *msl, uint64_t addr,
		 uint64_t end, uint64_t *iova)
{
	struct rte_fbarray *arr = (struct rte_fbarray *)&msl->memseg_arr;
	const uint64_t base = msl->addr_64, pgsz = msl->page_sz;
	const unsigned int i0 = (addr - base) / pgsz;
	const unsigned int i1 = (end - 1 - base) / pgsz;
	const struct rte_memseg *ms0, *ms;
	int n = rte_fbarray_find_contig_used(arr, i0);
	unsigned int i;

	if (n < 0 || (unsigned int)n < i1 - i0 + 1)
		return -EINVAL;
	if (rte_eal_iova_mode() == RTE_IOVA_VA) {
		*iova = addr;
		return 0;
	}
	ms0 = rte_fbarray_get(arr, i0);
	*iova = ms0->iova == RTE_BAD_IOVA ? MR_BAD_IOVA :
		ms0->iova + (addr - ms0->addr_64);
	for (i = i0 + 1; i <= i1 && *iova != MR_BAD_IOVA; i++) {
		ms = rte_fbarray_get(arr, i);
		if (ms->iova != ms0->iova + (uint64_t)(i - i0) * pgsz)
			*iova = MR_BAD_IOVA;
	}
	return 0;
}

/* Can the pages of [addr, addr + len) be accessed as need says? Faults them
 * in as the access would (MADV_POPULATE_READ/WRITE, Linux 5.14+), which is
 * also what pinning does on RDMA hardware: after this the data path cannot
 * fault on the range while it stays mapped. O(pages). Falls back to
 * /proc/self/maps on older kernels. */
static int
access_probe(uint64_t addr, uint64_t len, unsigned int need)
{
	const uint64_t pg = mr_page_size();
	const uint64_t a = RTE_ALIGN_FLOOR(addr, pg);
	const uint64_t n = RTE_ALIGN_CEIL(addr + len, pg) - a;
	unsigned char vec[4096];
	uint64_t off, step;
	int advice;

	if (need & (MR_MAP_READ | MR_MAP_WRITE)) {
		advice = (need & MR_MAP_WRITE) ? MADV_POPULATE_WRITE :
						 MADV_POPULATE_READ;
		if (madvise((void *)(uintptr_t)a, n, advice) == 0)
			return 0;
		if (errno != EINVAL)
			return -EINVAL;	/* ENOMEM: a hole; EFAULT: no access */
		/* EINVAL: an old kernel, or VM_IO/PFNMAP memory: ask maps */
		return mr_maps_check(addr, len, need);
	}
	/* no access asked: mapped is enough (mincore fails on a hole) */
	for (off = 0; off < n; off += step) {
		step = RTE_MIN(n - off, (uint64_t)sizeof(vec) * pg);
		if (mincore((void *)(uintptr_t)(a + off), step, vec) != 0)
			return -EINVAL;
	}
	return 0;
}

int
mr_mem_probe(const struct mr_mem *mem, unsigned int need)
{
	return access_probe(mem->addr, mem->len, need);
}

/* Fill kind, iova and the page-rounded registration of mem->addr/len.
 * Memory DPDK does not own must be mapped with the access in need
 * (-EINVAL otherwise) and, for MR_MAP_SHARED, be shared (-EBADFD). */
int
mr_mem_classify(struct mr_mem *mem, unsigned int need)
{
	const uint64_t pg = mr_page_size();
	const uint64_t end = mem->addr + mem->len;	/* caller checked wrap */
	const struct rte_memseg_list *msl, *msl_end;
	const void *va = (const void *)(uintptr_t)mem->addr;
	int ret;

	mem->reg_addr = RTE_ALIGN_FLOOR(mem->addr, pg);
	mem->reg_len = RTE_ALIGN_CEIL(end, pg) - mem->reg_addr;
	mem->iova = MR_BAD_IOVA;
	mem->ext = NULL;

	msl = rte_mem_virt2memseg_list(va);
	msl_end = rte_mem_virt2memseg_list((const void *)(uintptr_t)(end - 1));
	if (msl != NULL && msl == msl_end && !msl->external) {
		/* DPDK's own pages: no page walk, whatever the size */
		mem->kind = DPDAT_MEM_KIND_DPDK;
		return dpdk_range_check(msl, mem->addr, end, &mem->iova);
	}
	ret = access_probe(mem->addr, mem->len, need & ~MR_MAP_SHARED);
	if (ret == 0 && (need & MR_MAP_SHARED))
		ret = mr_maps_check(mem->addr, mem->len, MR_MAP_SHARED);
	if (ret < 0)
		return ret;
	/* inside pages we registered: share that registration; unknown,
	 * page-aligned pages: register them */
	mem->ext = extmem_get(mem->addr, mem->len,
			      msl == NULL && msl_end == NULL &&
			      mem->addr == mem->reg_addr &&
			      mem->len == mem->reg_len);
	if (mem->ext != NULL || (msl != NULL && msl == msl_end)) {
		/* ours, or external memory the application registered */
		mem->kind = DPDAT_MEM_KIND_EXTMEM;
		if (rte_eal_iova_mode() == RTE_IOVA_VA)
			mem->iova = mem->addr;
		return 0;
	}
	mem->kind = DPDAT_MEM_KIND_COPY;
	return 0;
}

void
mr_mem_unclassify(struct mr_mem *mem)
{
	if (mem->ext != NULL)
		extmem_put(mem->ext);
	mem->ext = NULL;
}

/* Is every byte of [addr, addr + len) mapped with the access in need
 * (MR_MAP_READ, MR_MAP_WRITE, MR_MAP_SHARED)? Reads /proc/self/maps, which is
 * sorted by address: control path only, for memory DPDK does not own.
 * Returns 0, -EINVAL (a hole, or read/write not allowed), -EBADFD (mapped as
 * asked but private where MR_MAP_SHARED was required). */
int
mr_maps_check(uint64_t addr, uint64_t len, unsigned int need)
{
	uint64_t want = addr, end = addr + len;
	unsigned long lo, hi;
	char perms[8], *line = NULL;
	size_t cap = 0;
	int ret = -EINVAL;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (f == NULL)
		return -EINVAL;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (hi <= want)
			continue;
		if (lo > want)
			break;	/* a hole in the range */
		if ((need & MR_MAP_READ) && perms[0] != 'r')
			break;
		if ((need & MR_MAP_WRITE) && perms[1] != 'w')
			break;
		if ((need & MR_MAP_SHARED) && perms[3] != 's') {
			ret = -EBADFD;
			break;
		}
		want = hi;
		if (want >= end) {
			ret = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

const char *
dpdat_mem_kind_str(enum dpdat_mem_kind kind)
{
	switch (kind) {
	case DPDAT_MEM_KIND_DPDK: return "dpdk";
	case DPDAT_MEM_KIND_EXTMEM: return "extmem";
	case DPDAT_MEM_KIND_COPY: return "copy";
	}
	return "?";
}

void *
dpdat_mem_alloc(size_t size, size_t align, int socket)
{
	void *p;

	if (size == 0 || (align & (align - 1)) != 0 || align > UINT32_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	p = rte_zmalloc_socket("dpdat_mem", size, (unsigned int)align, socket);
	if (p == NULL)
		rte_errno = ENOMEM;
	return p;
}

void
dpdat_mem_free(void *ptr)
{
	rte_free(ptr);
}
