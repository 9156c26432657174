/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_errno.h>

#include "mr_priv.h"

static int
check_range(const void *addr, size_t len)
{
	uint64_t a = (uintptr_t)addr;

	if (addr == NULL || len == 0 || a + len < a)
		return -EINVAL;
	return 0;
}

static struct mr_mem *
mem_new(uint64_t addr, uint64_t len, unsigned int need)
{
	struct mr_mem *mem = calloc(1, sizeof(*mem));
	int ret;

	if (mem == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	mem->addr = addr;
	mem->len = len;
	ret = mr_mem_classify(mem, need);
	if (ret < 0) {
		free(mem);
		rte_errno = -ret;
		return NULL;
	}
	return mem;
}

static void
mem_put(struct dpdat_mr_domain *dom, struct mr_mem *mem)
{
	if (--mem->refcnt != 0)
		return;
	if (mem->shared)
		TAILQ_REMOVE(&dom->shared, mem, next);
	mr_mem_unclassify(mem);
	free(mem);
}

/* Page access the privileges need: the transmit path reads what local or
 * remote reads may reach, the receive path writes what writes may reach. */
static unsigned int
priv_need(uint32_t priv)
{
	unsigned int need = 0;

	if (priv & (DPDAT_MEM_PRIV_LOCAL_READ | DPDAT_MEM_PRIV_REMOTE_READ))
		need |= MR_MAP_READ;
	if (priv & (DPDAT_MEM_PRIV_LOCAL_WRITE | DPDAT_MEM_PRIV_REMOTE_WRITE |
		    DPDAT_MEM_PRIV_REMOTE_ATOMIC))
		need |= MR_MAP_WRITE;
	return need;
}

/* An existing translation reused with new privileges: memory DPDK does not
 * own must allow them. */
static int
mem_reuse_check(const struct mr_mem *mem, unsigned int need)
{
	if (mem->kind == DPDAT_MEM_KIND_DPDK || need == 0)
		return 0;
	return mr_mem_probe(mem, need);
}

static struct mr_mem *
mem_find_cookie(struct dpdat_mr_domain *dom, const uint8_t *cookie)
{
	struct mr_mem *mem;

	TAILQ_FOREACH(mem, &dom->shared, next)
		if (memcmp(mem->cookie, cookie, DPDAT_LMR_COOKIE_LEN) == 0)
			return mem;
	return NULL;
}

/* Find or make the translation for desc; returned with a reference taken.
 * Caller holds dom->lock. */
static struct mr_mem *
mem_get(struct dpdat_mr_domain *dom, const struct dpdat_mem_desc *desc,
	uint32_t priv)
{
	const unsigned int need = priv_need(priv);
	const struct dpdat_lmr *parent;
	struct mr_mem *mem;
	int ret = 0;

	switch (desc->type) {
	case DPDAT_MEM_TYPE_VIRTUAL:
	case DPDAT_MEM_TYPE_SO_VIRTUAL:
		if (check_range(desc->virt.addr, desc->virt.length) != 0)
			goto einval;
		mem = mem_new((uintptr_t)desc->virt.addr, desc->virt.length,
			      need);
		break;
	case DPDAT_MEM_TYPE_LMR:
		parent = desc->lmr;
		if (parent == NULL || parent->magic != MR_MAGIC_LMR) {
			rte_errno = EBADF;
			return NULL;
		}
		if (parent->pz->dom != dom)
			goto einval;
		mem = parent->mem;
		ret = mem_reuse_check(mem, need);
		break;
	case DPDAT_MEM_TYPE_SHARED_VIRTUAL:
		if (desc->shared.cookie == NULL ||
		    check_range(desc->shared.addr, desc->shared.length) != 0)
			goto einval;
		mem = mem_find_cookie(dom, desc->shared.cookie);
		if (mem != NULL) {
			/* the cookie names one region: same range or nothing */
			if (mem->addr != (uintptr_t)desc->shared.addr ||
			    mem->len != desc->shared.length)
				goto einval;
			ret = mem_reuse_check(mem, need);
			break;
		}
		mem = mem_new((uintptr_t)desc->shared.addr,
			      desc->shared.length, need | MR_MAP_SHARED);
		if (mem == NULL)
			return NULL;
		mem->shared = true;
		memcpy(mem->cookie, desc->shared.cookie, DPDAT_LMR_COOKIE_LEN);
		TAILQ_INSERT_TAIL(&dom->shared, mem, next);
		break;
	default:
		rte_errno = ENOTSUP;
		return NULL;
	}
	if (ret < 0) {
		rte_errno = -ret;
		return NULL;
	}
	if (mem == NULL)
		return NULL;
	mem->refcnt++;
	return mem;
einval:
	rte_errno = EINVAL;
	return NULL;
}

struct dpdat_lmr *
dpdat_lmr_create(struct dpdat_pz *pz, const struct dpdat_mem_desc *desc,
		 uint32_t privileges)
{
	struct dpdat_mr_domain *dom;
	struct dpdat_lmr *lmr;
	int ret;

	if (pz == NULL || pz->magic != MR_MAGIC_PZ) {
		rte_errno = EBADF;
		return NULL;
	}
	/* remote write and atomics need local write, as on InfiniBand */
	if (desc == NULL || (privileges & ~(DPDAT_MEM_PRIV_ALL |
					    DPDAT_MEM_PRIV_REMOTE_ATOMIC)) != 0 ||
	    ((privileges & (DPDAT_MEM_PRIV_REMOTE_WRITE |
			    DPDAT_MEM_PRIV_REMOTE_ATOMIC)) &&
	     !(privileges & DPDAT_MEM_PRIV_LOCAL_WRITE))) {
		rte_errno = EINVAL;
		return NULL;
	}
	lmr = calloc(1, sizeof(*lmr));
	if (lmr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	dom = pz->dom;
	pthread_mutex_lock(&dom->lock);
	lmr->mem = mem_get(dom, desc, privileges);
	if (lmr->mem == NULL)
		goto err_free;
	ret = mr_table_alloc(dom, &lmr->ctx);
	if (ret < 0) {
		rte_errno = -ret;
		goto err_mem;
	}
	lmr->magic = MR_MAGIC_LMR;
	lmr->type = desc->type;
	lmr->pz = pz;
	lmr->priv = privileges;
	pz->refs++;
	mr_table_publish(dom, lmr->ctx, MR_ENTRY_LMR, lmr, privileges, pz->id, 0,
			 lmr->mem->addr, lmr->mem->len, lmr->mem);
	pthread_mutex_unlock(&dom->lock);
	return lmr;

err_mem:
	mem_put(dom, lmr->mem);
err_free:
	pthread_mutex_unlock(&dom->lock);
	free(lmr);
	return NULL;
}

int
dpdat_lmr_query(const struct dpdat_lmr *lmr, struct dpdat_lmr_info *info)
{
	const struct mr_mem *mem;

	if (lmr == NULL || lmr->magic != MR_MAGIC_LMR)
		return -EBADF;
	if (info == NULL)
		return -EINVAL;
	mem = lmr->mem;
	memset(info, 0, sizeof(*info));
	info->type = lmr->type;
	info->kind = mem->kind;
	info->pz = lmr->pz;
	info->privileges = lmr->priv;
	info->lmr_context = lmr->ctx;
	info->rmr_context = (lmr->priv & (DPDAT_MEM_PRIV_REMOTE |
					  DPDAT_MEM_PRIV_REMOTE_ATOMIC)) ?
			    lmr->ctx : 0;
	info->address = mem->addr;
	info->length = mem->len;
	info->registered_address = mem->reg_addr;
	info->registered_size = mem->reg_len;
	info->iova = mem->iova;
	info->rmr_count = __atomic_load_n(&lmr->rmr_count, __ATOMIC_RELAXED);
	info->share_count = __atomic_load_n(&mem->refcnt, __ATOMIC_RELAXED);
	return 0;
}

int
dpdat_lmr_free(struct dpdat_lmr *lmr)
{
	struct dpdat_mr_domain *dom;

	if (lmr == NULL || lmr->magic != MR_MAGIC_LMR)
		return -EBADF;
	dom = lmr->pz->dom;
	pthread_mutex_lock(&dom->lock);
	if (lmr->rmr_count != 0) {
		pthread_mutex_unlock(&dom->lock);
		return -EBUSY;
	}
	mr_table_release(dom, lmr->ctx);
	lmr->magic = MR_MAGIC_DEAD;
	pthread_mutex_unlock(&dom->lock);
	/* the context is dead; let accesses checked before finish */
	mr_domain_sync(dom);
	pthread_mutex_lock(&dom->lock);
	lmr->pz->refs--;
	mem_put(dom, lmr->mem);
	pthread_mutex_unlock(&dom->lock);
	free(lmr);
	return 0;
}

static int
lmr_sync(struct dpdat_mr_domain *dom, const struct dpdat_lmr_triplet *segs,
	 size_t n)
{
	const struct dpdat_lmr *lmr;
	int ret = 0;
	size_t i;

	if (dom == NULL || dom->magic != MR_MAGIC_DOM)
		return -EBADF;
	if (segs == NULL && n != 0)
		return -EINVAL;
	pthread_mutex_lock(&dom->lock);
	for (i = 0; i < n && ret == 0; i++) {
		lmr = mr_table_lmr(dom, segs[i].lmr_context);
		if (lmr == NULL ||
		    !mr_range_ok(lmr->mem->addr, lmr->mem->len,
				 segs[i].virtual_address,
				 segs[i].segment_length))
			ret = -EINVAL;
	}
	pthread_mutex_unlock(&dom->lock);
	return ret;
}

int
dpdat_lmr_sync_rdma_read(struct dpdat_mr_domain *dom,
			 const struct dpdat_lmr_triplet *segs, size_t n)
{
	int ret = lmr_sync(dom, segs, n);

	/* local stores before this call are visible to the engine's reads */
	if (ret == 0)
		rte_atomic_thread_fence(__ATOMIC_RELEASE);
	return ret;
}

int
dpdat_lmr_sync_rdma_write(struct dpdat_mr_domain *dom,
			  const struct dpdat_lmr_triplet *segs, size_t n)
{
	int ret = lmr_sync(dom, segs, n);

	/* the engine's stores of placed data are visible to later loads */
	if (ret == 0)
		rte_atomic_thread_fence(__ATOMIC_ACQUIRE);
	return ret;
}
