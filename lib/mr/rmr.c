/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* RMRs (memory windows) at table level: posting the bind on an endpoint,
 * fencing and its completion event belong to the transport. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "mr_priv.h"

struct dpdat_rmr *
dpdat_rmr_create(struct dpdat_pz *pz)
{
	struct dpdat_rmr *rmr;

	if (pz == NULL || pz->magic != MR_MAGIC_PZ) {
		rte_errno = EBADF;
		return NULL;
	}
	rmr = calloc(1, sizeof(*rmr));
	if (rmr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	rmr->magic = MR_MAGIC_RMR;
	rmr->pz = pz;
	pthread_mutex_lock(&pz->dom->lock);
	pz->refs++;
	pthread_mutex_unlock(&pz->dom->lock);
	return rmr;
}

/* Drop the current binding, if any; true if there was one (the caller then
 * waits for readers with mr_domain_sync() once unlocked). Caller holds
 * dom->lock. */
static bool
rmr_unbind(struct dpdat_mr_domain *dom, struct dpdat_rmr *rmr)
{
	if (rmr->lmr == NULL)
		return false;
	mr_table_release(dom, rmr->ctx);
	rmr->lmr->rmr_count--;
	rmr->lmr = NULL;
	rmr->ctx = 0;
	rmr->addr = 0;
	rmr->len = 0;
	rmr->priv = 0;
	rmr->qp_tag = 0;
	return true;
}

/* Validate a bind request against its LMR. Caller holds dom->lock. */
static int
bind_check(const struct dpdat_rmr *rmr, const struct dpdat_lmr *lmr,
	   const struct dpdat_lmr_triplet *seg, uint32_t privileges)
{
	if (lmr == NULL ||
	    !mr_range_ok(lmr->mem->addr, lmr->mem->len, seg->virtual_address,
			 seg->segment_length))
		return -EINVAL;
	if (lmr->pz != rmr->pz)
		return -EPERM;
	if ((privileges & DPDAT_MEM_PRIV_REMOTE_READ) &&
	    !(lmr->priv & DPDAT_MEM_PRIV_LOCAL_READ))
		return -EACCES;
	if ((privileges & (DPDAT_MEM_PRIV_REMOTE_WRITE |
			   DPDAT_MEM_PRIV_REMOTE_ATOMIC)) &&
	    !(lmr->priv & DPDAT_MEM_PRIV_LOCAL_WRITE))
		return -EACCES;
	return 0;
}

int
mr_rmr_bind(struct dpdat_rmr *rmr, const struct dpdat_lmr_triplet *seg,
	    uint32_t privileges, uint64_t qp_tag, uint32_t *rmr_context)
{
	struct dpdat_mr_domain *dom;
	struct dpdat_lmr *lmr;
	bool died = false;
	uint32_t ctx = 0;
	int ret = 0;

	if (rmr == NULL || rmr->magic != MR_MAGIC_RMR)
		return -EBADF;
	if (seg == NULL || (privileges & ~(DPDAT_MEM_PRIV_REMOTE |
					   DPDAT_MEM_PRIV_REMOTE_ATOMIC)) != 0)
		return -EINVAL;
	dom = rmr->pz->dom;
	pthread_mutex_lock(&dom->lock);
	if (seg->segment_length == 0) {
		died = rmr_unbind(dom, rmr);
		goto out;
	}
	lmr = mr_table_lmr(dom, seg->lmr_context);
	ret = bind_check(rmr, lmr, seg, privileges);
	if (ret < 0)
		goto out;
	/* take the new context first: a failed bind keeps the old one */
	ret = mr_table_alloc(dom, &ctx);
	if (ret < 0)
		goto out;
	died = rmr_unbind(dom, rmr);
	rmr->lmr = lmr;
	rmr->ctx = ctx;
	rmr->addr = seg->virtual_address;
	rmr->len = seg->segment_length;
	rmr->priv = privileges;
	rmr->qp_tag = qp_tag;
	lmr->rmr_count++;
	mr_table_publish(dom, ctx, MR_ENTRY_RMR, rmr, privileges, rmr->pz->id,
			 qp_tag, rmr->addr, rmr->len, lmr->mem);
out:
	pthread_mutex_unlock(&dom->lock);
	if (died)
		mr_domain_sync(dom);
	if (ret == 0 && rmr_context != NULL)
		*rmr_context = ctx;
	return ret;
}

int
dpdat_rmr_bind(struct dpdat_rmr *rmr, const struct dpdat_lmr_triplet *seg,
	       uint32_t privileges, uint32_t *rmr_context)
{
	return mr_rmr_bind(rmr, seg, privileges, 0, rmr_context);
}

int
dpdat_rmr_query(const struct dpdat_rmr *rmr, struct dpdat_rmr_info *info)
{
	if (rmr == NULL || rmr->magic != MR_MAGIC_RMR)
		return -EBADF;
	if (info == NULL)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->pz = rmr->pz;
	info->lmr = rmr->lmr;
	info->privileges = rmr->priv;
	info->rmr_context = rmr->ctx;
	info->address = rmr->addr;
	info->length = rmr->len;
	return 0;
}

int
dpdat_rmr_free(struct dpdat_rmr *rmr)
{
	struct dpdat_mr_domain *dom;

	if (rmr == NULL || rmr->magic != MR_MAGIC_RMR)
		return -EBADF;
	dom = rmr->pz->dom;
	pthread_mutex_lock(&dom->lock);
	rmr->magic = MR_MAGIC_DEAD;
	if (rmr_unbind(dom, rmr)) {
		pthread_mutex_unlock(&dom->lock);
		mr_domain_sync(dom);
		pthread_mutex_lock(&dom->lock);
	}
	rmr->pz->refs--;
	pthread_mutex_unlock(&dom->lock);
	free(rmr);
	return 0;
}
