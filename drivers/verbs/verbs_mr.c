/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Protection domains and memory regions of dpdat0. */

#include <stdlib.h>

#include <rte_errno.h>

#include "verbs_priv.h"

/* ---- protection domains and memory regions ---- */

/* PD -> protection zone, MR -> LMR: lkey is the LMR's context, rkey its
 * remote context (the LMR's own when no remote access was asked, which
 * no remote key check accepts). Any memory: hugepage memory is reached
 * directly, other memory through the copy path (dpdat_lmr_create). */
struct ibv_pd *
ibv_alloc_pd(struct ibv_context *ctx)
{
	struct dpdat_pz_info pi;
	struct dv_pd *p;

	if (!dv_ours(ctx))
		return NEXT(ibv_alloc_pd, "IBVERBS_1.1",
			    struct ibv_pd *(*)(struct ibv_context *))(ctx);
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p->pz = dpdat_pz_create(dpdat_dev_domain(dv_ctx(ctx)->dev));
	if (p->pz == NULL) {
		errno = rte_errno;
		free(p);
		return NULL;
	}
	p->pd.context = ctx;
	p->pd.handle = dpdat_pz_query(p->pz, &pi) == 0 ? pi.id : 0;
	return &p->pd;
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct dv_pd *p = (struct dv_pd *)pd;
	int ret;

	if (!dv_ours_pd(pd))
		return NEXT(ibv_dealloc_pd, "IBVERBS_1.1",
			    int (*)(struct ibv_pd *))(pd);
	ret = dpdat_pz_free(p->pz);
	if (ret != 0)
		return -ret;	/* EBUSY: MRs (or later QPs) still use it */
	free(p);
	return 0;
}

/* Verbs access flags -> dpdat privileges; -1: a flag dpdat0 lacks. */
static int
dv_privileges(unsigned int access, uint32_t *priv)
{
	const unsigned int known = IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING;

	if (access & ~known)
		return -1;
	*priv = DPDAT_MEM_PRIV_LOCAL_READ |
		(access & IBV_ACCESS_LOCAL_WRITE ? DPDAT_MEM_PRIV_LOCAL_WRITE : 0) |
		(access & IBV_ACCESS_REMOTE_WRITE ? DPDAT_MEM_PRIV_REMOTE_WRITE : 0) |
		(access & IBV_ACCESS_REMOTE_READ ? DPDAT_MEM_PRIV_REMOTE_READ : 0) |
		(access & IBV_ACCESS_REMOTE_ATOMIC ?
		 DPDAT_MEM_PRIV_REMOTE_ATOMIC : 0);
	return 0;
}

static struct ibv_mr *
dv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
	  unsigned int access)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dv_pd *p = (struct dv_pd *)pd;
	struct dpdat_lmr_info li;
	struct dv_mr *m;
	uint32_t priv;

	if (iova != (uintptr_t)addr) {
		/* the keys resolve virtual addresses of this process */
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (dv_privileges(access, &priv) != 0) {
		errno = EOPNOTSUPP;	/* memory windows, ODP, zero-based */
		return NULL;
	}
	/* verbs: remote write or atomic access needs local write */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	d.virt.addr = addr;
	d.virt.length = length;
	m->lmr = dpdat_lmr_create(p->pz, &d, priv);
	if (m->lmr == NULL || dpdat_lmr_query(m->lmr, &li) != 0) {
		errno = m->lmr == NULL ? rte_errno : EIO;
		if (m->lmr != NULL)
			dpdat_lmr_free(m->lmr);
		free(m);
		return NULL;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = li.lmr_context;
	m->mr.lkey = li.lmr_context;
	m->mr.rkey = li.rmr_context != 0 ? li.rmr_context : li.lmr_context;
	return &m->mr;
}

struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	if (!dv_ours_pd(pd))
		return NEXT(ibv_reg_mr, "IBVERBS_1.1",
			    struct ibv_mr *(*)(struct ibv_pd *, void *, size_t,
					       int))(pd, addr, length, access);
	return dv_reg_mr(pd, addr, length, (uintptr_t)addr,
			 (unsigned int)access);
}

struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		int access)
{
	if (!dv_ours_pd(pd))
		return NEXT(ibv_reg_mr_iova, "IBVERBS_1.7",
			    struct ibv_mr *(*)(struct ibv_pd *, void *, size_t,
					       uint64_t, int))(pd, addr, length,
							       iova, access);
	return dv_reg_mr(pd, addr, length, iova, (unsigned int)access);
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	if (!dv_ours_pd(pd))
		return NEXT(ibv_reg_mr_iova2, "IBVERBS_1.8",
			    struct ibv_mr *(*)(struct ibv_pd *, void *, size_t,
					       uint64_t, unsigned int))(pd, addr,
							length, iova, access);
	return dv_reg_mr(pd, addr, length, iova, access);
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	struct dv_mr *m = (struct dv_mr *)mr;
	int ret;

	if (mr == NULL || !dv_ours(mr->context))
		return NEXT(ibv_dereg_mr, "IBVERBS_1.1",
			    int (*)(struct ibv_mr *))(mr);
	ret = dpdat_lmr_free(m->lmr);
	if (ret != 0)
		return -ret;
	free(m);
	return 0;
}

/* Sharing a PD between processes needs the kernel's object handles. */
struct ibv_pd *
ibv_import_pd(struct ibv_context *ctx, uint32_t handle)
{
	static int said;

	if (!dv_ours(ctx))
		return NEXT(ibv_import_pd, "IBVERBS_1.10",
			    struct ibv_pd *(*)(struct ibv_context *,
					       uint32_t))(ctx, handle);
	dv_unsupported("ibv_import_pd", &said, EOPNOTSUPP);
	return NULL;
}
