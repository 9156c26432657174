/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <errno.h>
#include <stdlib.h>

#include <rte_errno.h>

#include "mr_priv.h"

struct dpdat_pz *
dpdat_pz_create(struct dpdat_mr_domain *dom)
{
	struct dpdat_pz *pz;

	if (dom == NULL || dom->magic != MR_MAGIC_DOM) {
		rte_errno = EBADF;
		return NULL;
	}
	pz = calloc(1, sizeof(*pz));
	if (pz == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pz->magic = MR_MAGIC_PZ;
	pz->dom = dom;
	pthread_mutex_lock(&dom->lock);
	/* ids are never reused, so two live PZs never share one */
	if (dom->next_pz_id == 0) {
		pthread_mutex_unlock(&dom->lock);
		free(pz);
		rte_errno = ENOSPC;
		return NULL;
	}
	pz->id = dom->next_pz_id++;
	dom->n_pz++;
	pthread_mutex_unlock(&dom->lock);
	return pz;
}

int
dpdat_pz_query(const struct dpdat_pz *pz, struct dpdat_pz_info *info)
{
	if (pz == NULL || pz->magic != MR_MAGIC_PZ)
		return -EBADF;
	if (info == NULL)
		return -EINVAL;
	info->domain = pz->dom;
	info->id = pz->id;
	info->ref_count = __atomic_load_n(&pz->refs, __ATOMIC_RELAXED);
	return 0;
}

int
mr_pz_hold(struct dpdat_pz *pz, int delta)
{
	if (pz == NULL || pz->magic != MR_MAGIC_PZ)
		return -EBADF;
	pthread_mutex_lock(&pz->dom->lock);
	pz->refs += delta;
	pthread_mutex_unlock(&pz->dom->lock);
	return 0;
}

int
dpdat_pz_free(struct dpdat_pz *pz)
{
	struct dpdat_mr_domain *dom;

	if (pz == NULL || pz->magic != MR_MAGIC_PZ)
		return -EBADF;
	dom = pz->dom;
	pthread_mutex_lock(&dom->lock);
	if (pz->refs != 0) {
		pthread_mutex_unlock(&dom->lock);
		return -EBUSY;
	}
	pz->magic = MR_MAGIC_DEAD;
	dom->n_pz--;
	pthread_mutex_unlock(&dom->lock);
	free(pz);
	return 0;
}
