/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* The context table and the domain that owns it. See mr_priv.h for the
 * publication protocol that keeps lookups wait-free. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_random.h>

#include "mr_priv.h"

RTE_LOG_REGISTER(dpdat_mr_logtype, dpdat.mr, NOTICE);

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

struct mr_entry *
mr_table_entry(const struct dpdat_mr_domain *dom, uint32_t index)
{
	struct mr_entry *chunk;

	chunk = __atomic_load_n(&dom->chunks[index >> MR_CHUNK_SHIFT],
				__ATOMIC_ACQUIRE);
	return chunk == NULL ? NULL : &chunk[index & MR_CHUNK_MASK];
}

static int
table_grow(struct dpdat_mr_domain *dom, uint32_t *index)
{
	uint32_t idx = dom->n_slots;
	uint32_t c = idx >> MR_CHUNK_SHIFT;
	struct mr_entry *chunk;

	if (idx > dom->max_contexts)
		return -ENOSPC;
	if (dom->chunks[c] == NULL) {
		/* anonymous pages arrive zeroed and are touched only when used */
		chunk = mmap(NULL, sizeof(*chunk) * MR_CHUNK_SIZE,
			     PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (chunk == MAP_FAILED)
			return -ENOMEM;
		__atomic_store_n(&dom->chunks[c], chunk, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&dom->n_slots, idx + 1, __ATOMIC_RELEASE);
	*index = idx;
	return 0;
}

int
mr_table_alloc(struct dpdat_mr_domain *dom, uint32_t *ctx)
{
	struct mr_entry *e;
	uint32_t idx;
	int ret;

	if (dom->free_head != 0) {
		idx = dom->free_head;
		e = mr_table_entry(dom, idx);
		dom->free_head = e->next_free;
		if (dom->free_head == 0)
			dom->free_tail = 0;
	} else {
		ret = table_grow(dom, &idx);
		if (ret < 0)
			return ret;
		e = mr_table_entry(dom, idx);
	}
	/* generations run through 1..255 from a random start, so keys are
	 * not guessed from the index alone; after 255 uses the slot retires
	 * (in release) and no context issued from it resolves again */
	__atomic_store_n(&e->gen, e->uses == 0 ?
			 (uint8_t)(1 + rte_rand() % MR_CTX_GEN_MASK) :
			 (uint8_t)(e->gen % MR_CTX_GEN_MASK + 1),
			 __ATOMIC_RELAXED);
	e->uses++;
	e->next_free = 0;
	*ctx = MR_CTX_MAKE(idx, e->gen);
	return 0;
}

void
mr_table_publish(struct dpdat_mr_domain *dom, uint32_t ctx,
		 enum mr_entry_type type, void *obj, uint32_t priv,
		 uint32_t pz_id, uint64_t qp_tag, uint64_t addr, uint64_t len,
		 const struct mr_mem *mem)
{
	struct mr_entry *e = mr_table_entry(dom, MR_CTX_INDEX(ctx));
	uint64_t iova = mem->iova;

	if (iova != MR_BAD_IOVA)
		iova += addr - mem->addr;
	STORE(&e->type, (uint8_t)type);
	STORE(&e->priv, (uint8_t)priv);
	STORE(&e->kind, (uint8_t)mem->kind);
	STORE(&e->pz_id, pz_id);
	STORE(&e->qp_tag, qp_tag);
	STORE(&e->addr, addr);
	STORE(&e->len, len);
	STORE(&e->iova, iova);
	e->obj = obj;
	__atomic_store_n(&e->key, ctx, __ATOMIC_RELEASE);
	__atomic_add_fetch(&dom->live, 1, __ATOMIC_RELAXED);
}

void
mr_table_release(struct dpdat_mr_domain *dom, uint32_t ctx)
{
	uint32_t idx = MR_CTX_INDEX(ctx);
	struct mr_entry *e = mr_table_entry(dom, idx);

	STORE(&e->key, 0);
	/* readers that see any later field store must also see key 0 */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	STORE(&e->type, (uint8_t)MR_ENTRY_FREE);
	e->obj = NULL;
	__atomic_sub_fetch(&dom->live, 1, __ATOMIC_RELAXED);
	if (e->uses == MR_CTX_GEN_MASK) {
		/* every generation used: retire the slot so that no context
		 * issued from it can ever resolve again */
		MR_LOG(DEBUG, "%s: retiring index %u", dom->name, idx);
		return;
	}
	e->next_free = 0;
	if (dom->free_tail != 0)
		mr_table_entry(dom, dom->free_tail)->next_free = idx;
	else
		dom->free_head = idx;
	dom->free_tail = idx;
}

struct dpdat_lmr *
mr_table_lmr(struct dpdat_mr_domain *dom, uint32_t ctx)
{
	uint32_t idx = MR_CTX_INDEX(ctx);
	struct mr_entry *e;

	if (idx == 0 || idx >= dom->n_slots)
		return NULL;
	e = mr_table_entry(dom, idx);
	if (e->key != ctx || e->type != MR_ENTRY_LMR)
		return NULL;
	return e->obj;
}

void
mr_table_destroy(struct dpdat_mr_domain *dom)
{
	unsigned int c;

	for (c = 0; c < MR_N_CHUNKS; c++)
		if (dom->chunks[c] != NULL)
			munmap(dom->chunks[c],
			       sizeof(struct mr_entry) * MR_CHUNK_SIZE);
}

enum dpdat_mr_check
mr_access_check(const struct dpdat_mr_domain *dom, uint32_t ctx,
		uint64_t addr, uint64_t len, uint32_t access, uint32_t pz_id,
		uint64_t qp_tag, struct dpdat_mr_xlat *xlat)
{
	uint32_t idx = MR_CTX_INDEX(ctx);
	const struct mr_entry *e;
	uint64_t base, blen, iova;
	uint32_t epz;
	uint64_t etag;
	uint8_t priv, kind;

	if (idx == 0 || idx >= __atomic_load_n(&dom->n_slots, __ATOMIC_ACQUIRE))
		return DPDAT_MR_CHECK_UNKNOWN_KEY;
	e = mr_table_entry(dom, idx);
	if (__atomic_load_n(&e->key, __ATOMIC_ACQUIRE) != ctx)
		return LOAD(&e->gen) == 0 ? DPDAT_MR_CHECK_UNKNOWN_KEY :
					    DPDAT_MR_CHECK_STALE_KEY;
	priv = LOAD(&e->priv);
	kind = LOAD(&e->kind);
	epz = LOAD(&e->pz_id);
	etag = LOAD(&e->qp_tag);
	base = LOAD(&e->addr);
	blen = LOAD(&e->len);
	iova = LOAD(&e->iova);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (LOAD(&e->key) != ctx)
		return DPDAT_MR_CHECK_STALE_KEY;

	if (epz != pz_id)
		return DPDAT_MR_CHECK_PZ;
	if (etag != 0 && etag != qp_tag)
		return DPDAT_MR_CHECK_SCOPE;
	if ((priv & access) != access || access == 0)
		return DPDAT_MR_CHECK_PRIVILEGE;
	if (!mr_range_ok(base, blen, addr, len))
		return DPDAT_MR_CHECK_BOUNDS;
	if (xlat != NULL) {
		xlat->addr = (void *)(uintptr_t)addr;
		xlat->iova = iova == MR_BAD_IOVA ? MR_BAD_IOVA :
						   iova + (addr - base);
		xlat->kind = (enum dpdat_mem_kind)kind;
	}
	return DPDAT_MR_CHECK_OK;
}

enum dpdat_mr_check
dpdat_mr_access_check(const struct dpdat_mr_domain *dom, uint32_t ctx,
		      uint64_t addr, uint64_t len, uint32_t access,
		      uint32_t pz_id, struct dpdat_mr_xlat *xlat)
{
	return mr_access_check(dom, ctx, addr, len, access, pz_id, 0, xlat);
}

const char *
dpdat_mr_check_str(enum dpdat_mr_check r)
{
	switch (r) {
	case DPDAT_MR_CHECK_OK: return "ok";
	case DPDAT_MR_CHECK_UNKNOWN_KEY: return "unknown key";
	case DPDAT_MR_CHECK_STALE_KEY: return "stale key";
	case DPDAT_MR_CHECK_BOUNDS: return "out of bounds";
	case DPDAT_MR_CHECK_PRIVILEGE: return "privilege";
	case DPDAT_MR_CHECK_PZ: return "protection zone mismatch";
	case DPDAT_MR_CHECK_SCOPE: return "bound to another QP";
	}
	return "?";
}

struct dpdat_mr_domain *
dpdat_mr_domain_create(const struct dpdat_mr_domain_conf *conf)
{
	static uint32_t domain_seq;
	struct dpdat_mr_domain *dom;
	uint32_t max = DPDAT_MR_MAX_CONTEXTS;

	if (rte_lcore_count() == 0) {
		MR_LOG(ERR, "EAL not initialised: call dpdat_eal_init() first");
		rte_errno = ENODEV;
		return NULL;
	}
	if (conf != NULL && conf->max_contexts != 0) {
		if (conf->max_contexts > DPDAT_MR_MAX_CONTEXTS) {
			rte_errno = EINVAL;
			return NULL;
		}
		max = conf->max_contexts;
	}
	dom = calloc(1, sizeof(*dom));
	if (dom == NULL)
		goto err_nomem;
	dom->max_readers = conf && conf->max_readers ? conf->max_readers :
			   DPDAT_MR_DEFAULT_READERS;
	if (dom->max_readers > DPDAT_MR_MAX_READERS) {
		free(dom);
		rte_errno = EINVAL;
		return NULL;
	}
	dom->qsbr = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(
		rte_rcu_qsbr_get_memsize(dom->max_readers),
		RTE_CACHE_LINE_SIZE));
	dom->reader_ids = calloc((dom->max_readers + 63) / 64,
				 sizeof(uint64_t));
	if (dom->qsbr == NULL || dom->reader_ids == NULL ||
	    rte_rcu_qsbr_init(dom->qsbr, dom->max_readers) != 0)
		goto err_free;
	dom->magic = MR_MAGIC_DOM;
	pthread_mutex_init(&dom->lock, NULL);
	dom->max_contexts = max;
	dom->n_slots = 1;	/* index 0 is never handed out */
	dom->next_pz_id = 1;
	TAILQ_INIT(&dom->shared);
	if (conf != NULL && conf->name != NULL)
		snprintf(dom->name, sizeof(dom->name), "%s", conf->name);
	else
		snprintf(dom->name, sizeof(dom->name), "mr%u",
			 __atomic_fetch_add(&domain_seq, 1, __ATOMIC_RELAXED));
	MR_LOG(INFO, "%s: domain created, up to %u contexts", dom->name, max);
	return dom;

err_free:
	free(dom->reader_ids);
	free(dom->qsbr);
	free(dom);
err_nomem:
	rte_errno = ENOMEM;
	return NULL;
}

static bool
readers_registered(const struct dpdat_mr_domain *dom)
{
	unsigned int w;

	for (w = 0; w < (dom->max_readers + 63) / 64; w++)
		if (dom->reader_ids[w] != 0)
			return true;
	return false;
}

int
dpdat_mr_domain_free(struct dpdat_mr_domain *dom)
{
	if (dom == NULL || dom->magic != MR_MAGIC_DOM)
		return -EBADF;
	pthread_mutex_lock(&dom->lock);
	if (dom->n_pz != 0 || readers_registered(dom)) {
		pthread_mutex_unlock(&dom->lock);
		return -EBUSY;
	}
	dom->magic = MR_MAGIC_DEAD;
	pthread_mutex_unlock(&dom->lock);
	mr_table_destroy(dom);
	pthread_mutex_destroy(&dom->lock);
	free(dom->reader_ids);
	free(dom->qsbr);
	free(dom);
	return 0;
}

void
mr_domain_sync(struct dpdat_mr_domain *dom)
{
	/* returns at once when no reader is registered */
	rte_rcu_qsbr_synchronize(dom->qsbr, RTE_QSBR_THRID_INVALID);
}

int
dpdat_mr_reader_register(struct dpdat_mr_domain *dom,
			 unsigned int *reader_id)
{
	unsigned int id;
	int ret = -ENOSPC;

	if (dom == NULL || dom->magic != MR_MAGIC_DOM)
		return -EBADF;
	if (reader_id == NULL)
		return -EINVAL;
	pthread_mutex_lock(&dom->lock);
	for (id = 0; id < dom->max_readers; id++) {
		if (dom->reader_ids[id / 64] & (1ull << (id % 64)))
			continue;
		ret = rte_rcu_qsbr_thread_register(dom->qsbr, id);
		if (ret == 0) {
			dom->reader_ids[id / 64] |= 1ull << (id % 64);
			*reader_id = id;
		}
		break;
	}
	pthread_mutex_unlock(&dom->lock);
	return ret;
}

int
dpdat_mr_reader_unregister(struct dpdat_mr_domain *dom,
			   unsigned int reader_id)
{
	int ret = -EINVAL;

	if (dom == NULL || dom->magic != MR_MAGIC_DOM)
		return -EBADF;
	pthread_mutex_lock(&dom->lock);
	if (reader_id < dom->max_readers &&
	    (dom->reader_ids[reader_id / 64] & (1ull << (reader_id % 64)))) {
		rte_rcu_qsbr_thread_offline(dom->qsbr, reader_id);
		ret = rte_rcu_qsbr_thread_unregister(dom->qsbr, reader_id);
		dom->reader_ids[reader_id / 64] &= ~(1ull << (reader_id % 64));
	}
	pthread_mutex_unlock(&dom->lock);
	return ret;
}

void
dpdat_mr_reader_online(struct dpdat_mr_domain *dom, unsigned int reader_id)
{
	rte_rcu_qsbr_thread_online(dom->qsbr, reader_id);
}

void
dpdat_mr_reader_offline(struct dpdat_mr_domain *dom, unsigned int reader_id)
{
	rte_rcu_qsbr_thread_offline(dom->qsbr, reader_id);
}

void
dpdat_mr_reader_quiescent(struct dpdat_mr_domain *dom,
			  unsigned int reader_id)
{
	rte_rcu_qsbr_quiescent(dom->qsbr, reader_id);
}

uint32_t
dpdat_mr_domain_count(const struct dpdat_mr_domain *dom)
{
	if (dom == NULL || dom->magic != MR_MAGIC_DOM)
		return 0;
	return __atomic_load_n(&dom->live, __ATOMIC_RELAXED);
}

int
dpdat_mr_domain_walk(struct dpdat_mr_domain *dom,
		     int (*cb)(uint32_t ctx, struct dpdat_lmr *lmr,
			       struct dpdat_rmr *rmr, void *arg),
		     void *arg)
{
	struct mr_entry *e;
	uint32_t idx;
	int ret = 0;

	if (dom == NULL || dom->magic != MR_MAGIC_DOM)
		return -EBADF;
	if (cb == NULL)
		return -EINVAL;
	pthread_mutex_lock(&dom->lock);
	for (idx = 1; idx < dom->n_slots && ret == 0; idx++) {
		e = mr_table_entry(dom, idx);
		if (e->key == 0)
			continue;
		if (e->type == MR_ENTRY_LMR)
			ret = cb(e->key, e->obj, NULL, arg);
		else
			ret = cb(e->key, NULL, e->obj, arg);
	}
	pthread_mutex_unlock(&dom->lock);
	return ret;
}
