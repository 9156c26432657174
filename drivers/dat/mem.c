/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Memory: protection zones, LMRs and RMRs over lib/mr (dpdat_mr.h), RMR
 * binds and the two LMR synchronisations.
 *
 * lib/mr already has the semantics of dat_lmr_create, dat_rmr_bind and
 * dat_lmr_sync_rdma_read/write; this file checks the DAT arguments in an
 * order that names the faulty one (DAT_INVALID_ARGn, handle subtypes) and
 * converts the rest through dpdat_dat_err().
 *
 * Locking. mem_lock serialises every call that turns a PZ, LMR or RMR
 * handle into its native object and uses it (create, bind, free), so a
 * handle freed by one thread is never used natively by another; it is
 * taken before an EP lock, and an EVD lock may be taken under both. The
 * IA lock (a leaf) is taken under it by dd_obj_new() and dd_obj_free().
 * pz->users counts the LMRs, RMRs and EPs of a PZ; ep.c changes it without
 * mem_lock, so every change is atomic, and dat_pz_free() racing a
 * dat_ep_create() on the same PZ is the consumer's bug (the native QP's
 * reference makes dpdat_pz_free() refuse in most of that window).
 *
 * RMR binds. The bind happens at table level, synchronously, inside
 * dat_rmr_bind(): when the call returns, the new rmr_context resolves and
 * the old one is dead. Later sends and RDMA on the EP are therefore fenced
 * behind it for free. Its completion event goes to the EP's request EVD at
 * once, which has one cost: DTOs posted on the same EP before the bind and
 * still in flight complete later, so their events come after the bind's,
 * not before as on a transport that queues the bind behind them. Ordering
 * it would mean queueing the bind in the EP's send queue (dd_wr.rmr) and
 * converting it in ep.c's converter; the engine has no no-op work request to
 * carry it, so it is not done.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "dd_calls.h"
#include "dd_ep.h"

#define PRIV_REMOTE	(DAT_MEM_PRIV_REMOTE_READ_FLAG | \
			 DAT_MEM_PRIV_REMOTE_WRITE_FLAG | \
			 DAT_IB_MEM_PRIV_REMOTE_ATOMIC)
/* every privilege a consumer may ask for: DAT's and the IB extension's
 * remote atomics (dat_ib_extensions.h) */
#define PRIV_VALID	(DAT_MEM_PRIV_ALL_FLAG | DAT_IB_MEM_PRIV_REMOTE_ATOMIC)
/* privileges that need local write, as on InfiniBand */
#define PRIV_NEED_LW	(DAT_MEM_PRIV_REMOTE_WRITE_FLAG | \
			 DAT_IB_MEM_PRIV_REMOTE_ATOMIC)
#define BIND_FLAGS	(DAT_COMPLETION_SUPPRESS_FLAG | \
			 DAT_COMPLETION_UNSIGNALLED_FLAG | \
			 DAT_COMPLETION_BARRIER_FENCE_FLAG)
#define SYNC_BATCH	32

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

/* Native privileges of DAT ones (checked against DAT_MEM_PRIV_ALL_FLAG). */
static uint32_t
priv_native(DAT_MEM_PRIV_FLAGS p)
{
	uint32_t n = 0;

	if (p & DAT_MEM_PRIV_LOCAL_READ_FLAG)
		n |= DPDAT_MEM_PRIV_LOCAL_READ;
	if (p & DAT_MEM_PRIV_LOCAL_WRITE_FLAG)
		n |= DPDAT_MEM_PRIV_LOCAL_WRITE;
	if (p & DAT_MEM_PRIV_REMOTE_READ_FLAG)
		n |= DPDAT_MEM_PRIV_REMOTE_READ;
	if (p & DAT_MEM_PRIV_REMOTE_WRITE_FLAG)
		n |= DPDAT_MEM_PRIV_REMOTE_WRITE;
	if (p & DAT_IB_MEM_PRIV_REMOTE_ATOMIC)
		n |= DPDAT_MEM_PRIV_REMOTE_ATOMIC;
	return n;
}

/*
 * What an LMR grants natively. Local read always: verbs have no local
 * read right (a NIC may always read registered memory for a send), and
 * uDAPL programs rely on it: dtest sends from memory it registered with
 * DAT_MEM_PRIV_LOCAL_WRITE_FLAG alone. The DAT privileges stay as asked
 * in the LMR's parameters, and rmr_bind checks those.
 */
static uint32_t
lmr_native_priv(DAT_MEM_PRIV_FLAGS p)
{
	return priv_native(p) | DPDAT_MEM_PRIV_LOCAL_READ;
}

/* A native failure as a DAT_RETURN; a resource failure says which. */
static DAT_RETURN
native_err(int err, const struct dpdat_dat_sub *sub)
{
	DAT_RETURN r = dpdat_dat_err(err, sub);

	if (r == DAT_INSUFFICIENT_RESOURCES)
		r |= err == -ENOSPC ? DAT_RESOURCE_MEMORY_REGION :
				      DAT_RESOURCE_MEMORY;
	return r;
}

/* DAT_VA_TYPE_VA only: zero-based addressing is a model we do not have. */
static DAT_RETURN
va_check(DAT_VA_TYPE va, DAT_RETURN_SUBTYPE arg)
{
	if (va == DAT_VA_TYPE_VA)
		return DAT_SUCCESS;
	return va == DAT_VA_TYPE_ZB ? DAT_MODEL_NOT_SUPPORTED :
				      DD_BAD_PARAM(arg);
}

static void
pz_use(struct dd_pz *pz, int d)
{
	__atomic_add_fetch(&pz->users, (uint32_t)d, __ATOMIC_RELAXED);
}

/* ---- protection zones ---- */

DAT_RETURN DAT_API
dd_pz_create(DAT_IA_HANDLE iah, DAT_PZ_HANDLE *out)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	struct dd_pz *pz;
	DAT_RETURN ret;

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	pz = dd_obj_new(ia, DD_PZ, sizeof(*pz));
	if (pz == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	pz->pz = dpdat_pz_create(dpdat_dev_domain(ia->dev));
	if (pz->pz == NULL) {
		ret = native_err(-rte_errno, NULL);
		dd_obj_free(pz);
		return ret;
	}
	*out = pz;
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_pz_query(DAT_PZ_HANDLE h, DAT_PZ_PARAM_MASK mask, DAT_PZ_PARAM *p)
{
	struct dd_pz *pz = dd_obj_get(h, DD_PZ);

	if (pz == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
	if ((mask & ~DAT_PZ_FIELD_ALL) != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	p->ia_handle = dd_consumer_ia(pz->h.ia);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_pz_free(DAT_PZ_HANDLE h)
{
	static const struct dpdat_dat_sub sub = {
		.state = DAT_INVALID_STATE_PZ_IN_USE,
	};
	struct dd_pz *pz;
	DAT_RETURN ret = DAT_SUCCESS;
	int err;

	pthread_mutex_lock(&mem_lock);
	pz = dd_obj_get(h, DD_PZ);
	if (pz == NULL) {
		ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
		goto out;
	}
	if (__atomic_load_n(&pz->users, __ATOMIC_ACQUIRE) != 0) {
		ret = DD_BAD_STATE(DAT_INVALID_STATE_PZ_IN_USE);
		goto out;
	}
	/* -EBUSY: a QP of an EP still in creation holds it */
	err = dpdat_pz_free(pz->pz);
	if (err != 0) {
		ret = native_err(err, &sub);
		goto out;
	}
	pz->pz = NULL;
	dd_obj_free(pz);
out:
	pthread_mutex_unlock(&mem_lock);
	return ret;
}

/* ---- LMRs ---- */

/* The native description of the memory dat_lmr_create() names. The parent
 * of DAT_MEM_TYPE_LMR must be an LMR of the same IA. Call with mem_lock. */
static DAT_RETURN
lmr_desc(const struct dd_ia *ia, DAT_MEM_TYPE type,
	 const DAT_REGION_DESCRIPTION *rd, DAT_VLEN len,
	 struct dpdat_mem_desc *d)
{
	const DAT_SHARED_MEMORY *sm = &rd->for_shared_memory;
	const struct dd_lmr *parent;
	void *addr;

	memset(d, 0, sizeof(*d));
	switch ((int)type) {
	case DAT_MEM_TYPE_VIRTUAL:
#ifdef HAVE_DAT_MEM_TYPE_SO_VIRTUAL	/* Solaris-derived headers */
	case DAT_MEM_TYPE_SO_VIRTUAL:
#endif
		addr = rd->for_va;
		d->type = type == DAT_MEM_TYPE_VIRTUAL ?
			  DPDAT_MEM_TYPE_VIRTUAL : DPDAT_MEM_TYPE_SO_VIRTUAL;
		d->virt.addr = addr;
		d->virt.length = len;
		break;
	case DAT_MEM_TYPE_LMR:
		parent = dd_obj_get(rd->for_lmr_handle, DD_LMR);
		if (parent == NULL || parent->h.ia != ia)
			return DD_BAD_HANDLE(DAT_INVALID_HANDLE_LMR);
		d->type = DPDAT_MEM_TYPE_LMR;
		d->lmr = parent->lmr;
		return DAT_SUCCESS;	/* the length is the parent's */
	case DAT_MEM_TYPE_SHARED_VIRTUAL:
		if (sm->shared_memory_id == NULL)
			return DD_BAD_PARAM(DAT_INVALID_ARG3);
		addr = sm->virtual_address;
		d->type = DPDAT_MEM_TYPE_SHARED_VIRTUAL;
		/* 40 bytes compared in full, never as a string */
		d->shared.cookie = (const uint8_t *)sm->shared_memory_id;
		d->shared.addr = addr;
		d->shared.length = len;
		break;
	default:
		return DAT_MODEL_NOT_SUPPORTED;	/* not a type we have */
	}
	if (addr == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	if (len == 0 || (uintptr_t)addr + len < len)	/* wraps */
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	return DAT_SUCCESS;
}

/* Register under mem_lock; the LMR, or NULL and *ret. */
static struct dd_lmr *
lmr_new(struct dd_ia *ia, DAT_MEM_TYPE type, DAT_REGION_DESCRIPTION rd,
	DAT_VLEN len, DAT_PZ_HANDLE pzh, DAT_MEM_PRIV_FLAGS priv,
	DAT_VA_TYPE va, DAT_RETURN *ret)
{
	const struct dpdat_dat_sub sub = {
		.handle = type == DAT_MEM_TYPE_LMR ? DAT_INVALID_HANDLE_LMR :
						     DAT_INVALID_HANDLE_PZ,
		/* EINVAL: unmapped memory, a cookie naming another range */
		.param = DAT_INVALID_ARG3,
	};
	struct dpdat_lmr_info info;
	struct dpdat_mem_desc d;
	struct dd_pz *pz;
	struct dd_lmr *l;

	pz = dd_obj_get(pzh, DD_PZ);
	if (pz == NULL || pz->h.ia != ia) {
		*ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
		return NULL;
	}
	*ret = lmr_desc(ia, type, &rd, len, &d);
	if (*ret != DAT_SUCCESS)
		return NULL;
	l = dd_obj_new(ia, DD_LMR, sizeof(*l));
	if (l == NULL) {
		*ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
		return NULL;
	}
	l->lmr = dpdat_lmr_create(pz->pz, &d, lmr_native_priv(priv));
	if (l->lmr == NULL) {
		/* EBADFD: SHARED_VIRTUAL over memory that is not shared */
		*ret = native_err(-rte_errno, &sub);
		dd_obj_free(l);
		return NULL;
	}
	dpdat_lmr_query(l->lmr, &info);
	l->pz = pz;
	pz_use(pz, 1);
	l->param = (DAT_LMR_PARAM){
		.ia_handle = dd_consumer_ia(ia),
		.mem_type = type,
		.region_desc = rd,
		.length = type == DAT_MEM_TYPE_LMR ? info.length : len,
		.pz_handle = pz,
		.mem_priv = priv,
		.va_type = va,
		.lmr_context = info.lmr_context,
		/* 0 unless a remote privilege was asked for */
		.rmr_context = info.rmr_context,
		.registered_size = info.registered_size,
		.registered_address = info.registered_address,
	};
	DD_LOG(DEBUG, "lmr %p: context 0x%08x, %#lx+%lu",
		(void *)l, info.lmr_context,
		(unsigned long)info.address, (unsigned long)info.length);
	return l;
}

/* The outputs after lmr_handle may be NULL, as in the DAPL reference
 * provider (consumers pass NULL for what they do not want). */
DAT_RETURN DAT_API
dd_lmr_create(DAT_IA_HANDLE iah,
	DAT_MEM_TYPE type,
	DAT_REGION_DESCRIPTION rd,
	DAT_VLEN len,
	DAT_PZ_HANDLE pzh,
	DAT_MEM_PRIV_FLAGS priv,
	DAT_VA_TYPE va,
	DAT_LMR_HANDLE *out,
	DAT_LMR_CONTEXT *lmr_ctx,
	DAT_RMR_CONTEXT *rmr_ctx,
	DAT_VLEN *reg_size,
	DAT_VADDR *reg_addr)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	struct dd_lmr *l;
	DAT_RETURN ret;

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	/* remote write and atomics need local write, as on InfiniBand */
	if ((priv & ~PRIV_VALID) != 0 ||
	    ((priv & PRIV_NEED_LW) && !(priv & DAT_MEM_PRIV_LOCAL_WRITE_FLAG)))
		return DD_BAD_PARAM(DAT_INVALID_ARG6);
	ret = va_check(va, DAT_INVALID_ARG7);
	if (ret != DAT_SUCCESS)
		return ret;
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG8);
	pthread_mutex_lock(&mem_lock);
	l = lmr_new(ia, type, rd, len, pzh, priv, va, &ret);
	pthread_mutex_unlock(&mem_lock);
	if (l == NULL)
		return ret;
	*out = l;
	if (lmr_ctx != NULL)
		*lmr_ctx = l->param.lmr_context;
	if (rmr_ctx != NULL)
		*rmr_ctx = l->param.rmr_context;
	if (reg_size != NULL)
		*reg_size = l->param.registered_size;
	if (reg_addr != NULL)
		*reg_addr = l->param.registered_address;
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_lmr_query(DAT_LMR_HANDLE h, DAT_LMR_PARAM_MASK mask, DAT_LMR_PARAM *p)
{
	struct dd_lmr *l = dd_obj_get(h, DD_LMR);

	if (l == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_LMR);
	if ((mask & ~DAT_LMR_FIELD_ALL) != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	*p = l->param;	/* fixed at creation: every field is cheap */
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_lmr_free(DAT_LMR_HANDLE h)
{
	static const struct dpdat_dat_sub sub = {
		.state = DAT_INVALID_STATE_LMR_IN_USE,
	};
	struct dd_lmr *l;
	DAT_RETURN ret = DAT_SUCCESS;
	int err;

	pthread_mutex_lock(&mem_lock);
	l = dd_obj_get(h, DD_LMR);
	if (l == NULL) {
		ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_LMR);
		goto out;
	}
	/* returns once no access checked through the context is running */
	DD_LOG(DEBUG, "lmr %p: free context 0x%08x",
		(void *)l, l->param.lmr_context);
	err = dpdat_lmr_free(l->lmr);
	if (err != 0) {
		ret = native_err(err, &sub);
		goto out;
	}
	l->lmr = NULL;
	pz_use(l->pz, -1);
	dd_obj_free(l);
out:
	pthread_mutex_unlock(&mem_lock);
	return ret;
}

/* ---- LMR synchronisation ---- */

/* Validate every segment against a live LMR of the IA's device (IAs of one
 * name share it and its contexts), then the barrier. A zero-length
 * segment's other fields are irrelevant (dat.h) and are not looked at.
 * Memory is coherent: nothing is flushed, the native call is the barrier. */
static DAT_RETURN
lmr_sync(DAT_IA_HANDLE iah, const DAT_LMR_TRIPLET *segs, DAT_VLEN n,
	 bool rdma_write)
{
	static const struct dpdat_dat_sub sub = {
		.handle = DAT_INVALID_HANDLE_IA,
		.param = DAT_INVALID_ARG2,
	};
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	int (*sync)(struct dpdat_mr_domain *, const struct dpdat_lmr_triplet *,
		    size_t) = rdma_write ? dpdat_lmr_sync_rdma_write :
					   dpdat_lmr_sync_rdma_read;
	struct dpdat_lmr_triplet t[SYNC_BATCH];
	struct dpdat_mr_domain *dom;
	size_t k = 0;
	int err = 0;

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (segs == NULL && n != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	dom = dpdat_dev_domain(ia->dev);
	for (DAT_VLEN i = 0; i < n && err == 0; i++) {
		if (segs[i].segment_length == 0)
			continue;
		t[k++] = (struct dpdat_lmr_triplet){
			.lmr_context = segs[i].lmr_context,
			.virtual_address = segs[i].virtual_address,
			.segment_length = segs[i].segment_length,
		};
		if (k == RTE_DIM(t)) {
			err = sync(dom, t, k);
			k = 0;
		}
	}
	if (err == 0)
		err = sync(dom, t, k);	/* k = 0: the barrier alone */
	return err == 0 ? DAT_SUCCESS : native_err(err, &sub);
}

DAT_RETURN DAT_API
dd_lmr_sync_rdma_read(DAT_IA_HANDLE iah,
	const DAT_LMR_TRIPLET *segs,
	DAT_VLEN n)
{
	return lmr_sync(iah, segs, n, false);
}

DAT_RETURN DAT_API
dd_lmr_sync_rdma_write(DAT_IA_HANDLE iah, const DAT_LMR_TRIPLET *segs,
		       DAT_VLEN n)
{
	return lmr_sync(iah, segs, n, true);
}

/* ---- RMRs ---- */

/* An RMR of PZ scope (rmr_create) or EP scope (rmr_create_for_ep). */
static DAT_RETURN
rmr_new(DAT_PZ_HANDLE pzh, DAT_RMR_HANDLE *out, bool ep_scope)
{
	struct dd_pz *pz;
	struct dd_rmr *r = NULL;
	DAT_RETURN ret = DAT_SUCCESS;

	pthread_mutex_lock(&mem_lock);
	pz = dd_obj_get(pzh, DD_PZ);
	if (pz == NULL) {
		ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
		goto out;
	}
	if (out == NULL) {
		ret = DD_BAD_PARAM(DAT_INVALID_ARG2);
		goto out;
	}
	r = dd_obj_new(pz->h.ia, DD_RMR, sizeof(*r));
	if (r == NULL) {
		ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
		goto out;
	}
	r->rmr = dpdat_rmr_create(pz->pz);
	if (r->rmr == NULL) {
		ret = native_err(-rte_errno, NULL);
		dd_obj_free(r);
		goto out;
	}
	r->pz = pz;
	r->ep_scope = ep_scope;
	pz_use(pz, 1);
	/* PZ scope: a remote access through any QP of the PZ resolves. EP
	 * scope: only through the QP of the EP it was last bound on (bind_do),
	 * and only while that QP lives (a reset or a new connection gives the
	 * EP a new QP) */
	r->param = (DAT_RMR_PARAM){
		.ia_handle = dd_consumer_ia(pz->h.ia),
		.pz_handle = pz,
		.mem_priv = DAT_MEM_PRIV_NONE_FLAG,
		.rmr_scope = ep_scope ? DAT_RMR_SCOPE_EP : DAT_RMR_SCOPE_PZ,
		.va_type = DAT_VA_TYPE_VA,
	};
	*out = r;
out:
	pthread_mutex_unlock(&mem_lock);
	return ret;
}

DAT_RETURN DAT_API
dd_rmr_create(DAT_PZ_HANDLE pzh, DAT_RMR_HANDLE *out)
{
	return rmr_new(pzh, out, false);
}

DAT_RETURN DAT_API
dd_rmr_create_for_ep(DAT_PZ_HANDLE pzh, DAT_RMR_HANDLE *out)
{
	return rmr_new(pzh, out, true);
}

DAT_RETURN DAT_API
dd_rmr_query(DAT_RMR_HANDLE h, DAT_RMR_PARAM_MASK mask, DAT_RMR_PARAM *p)
{
	struct dd_rmr *r;
	DAT_RETURN ret = DAT_SUCCESS;

	pthread_mutex_lock(&mem_lock);	/* a bind changes the param */
	r = dd_obj_get(h, DD_RMR);
	if (r == NULL)
		ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_RMR);
	else if ((mask & ~DAT_RMR_FIELD_ALL) != 0)
		ret = DD_BAD_PARAM(DAT_INVALID_ARG2);
	else if (p == NULL)
		ret = DD_BAD_PARAM(DAT_INVALID_ARG3);
	else
		*p = r->param;
	pthread_mutex_unlock(&mem_lock);
	return ret;
}

DAT_RETURN DAT_API
dd_rmr_free(DAT_RMR_HANDLE h)
{
	struct dd_rmr *r;
	DAT_RETURN ret = DAT_SUCCESS;
	int err;

	pthread_mutex_lock(&mem_lock);
	r = dd_obj_get(h, DD_RMR);
	if (r == NULL) {
		ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_RMR);
		goto out;
	}
	err = dpdat_rmr_free(r->rmr);	/* unbinds first */
	if (err != 0) {
		ret = native_err(err, NULL);
		goto out;
	}
	r->rmr = NULL;
	pz_use(r->pz, -1);
	dd_obj_free(r);
out:
	pthread_mutex_unlock(&mem_lock);
	return ret;
}

/* ---- RMR bind ---- */

/* One dat_rmr_bind() call, as its checks fill it in. */
struct bind {
	struct dd_rmr *rmr;
	const DAT_LMR_TRIPLET *seg;
	DAT_MEM_PRIV_FLAGS remote;	/* the remote privileges asked for */
	DAT_VA_TYPE va;
	DAT_COMPLETION_FLAGS flags;
	DAT_RMR_COOKIE cookie;
	struct dd_evd *evd;		/* where the event goes, or NULL */
	struct dpdat_qp *qp;		/* the EP's, for an EP-scope RMR */
	bool flush;			/* EP disconnected: flushed */
};

/* The INVALID_STATE subtype of an EP state. */
static DAT_RETURN_SUBTYPE
ep_state_sub(DAT_EP_STATE st)
{
	switch (st) {
	case DAT_EP_STATE_UNCONNECTED:
		return DAT_INVALID_STATE_EP_UNCONNECTED;
	case DAT_EP_STATE_UNCONFIGURED_UNCONNECTED:
		return DAT_INVALID_STATE_EP_UNCONFIGURED;
	case DAT_EP_STATE_RESERVED:
		return DAT_INVALID_STATE_EP_RESERVED;
	case DAT_EP_STATE_UNCONFIGURED_RESERVED:
		return DAT_INVALID_STATE_EP_UNCONFRESERVED;
	case DAT_EP_STATE_PASSIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_PASSCONNPENDING;
	case DAT_EP_STATE_UNCONFIGURED_PASSIVE:
		return DAT_INVALID_STATE_EP_UNCONFPASSIVE;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_ACTCONNPENDING;
	case DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_TENTCONNPENDING;
	case DAT_EP_STATE_UNCONFIGURED_TENTATIVE:
		return DAT_INVALID_STATE_EP_UNCONFTENTATIVE;
	case DAT_EP_STATE_DISCONNECT_PENDING:
		return DAT_INVALID_STATE_EP_DISCPENDING;
	case DAT_EP_STATE_COMPLETION_PENDING:
		return DAT_INVALID_STATE_EP_COMPLPENDING;
	default:
		return DAT_INVALID_STATE_EP_NOTREADY;
	}
}

/* The checks that need no EP: handles, triplet, privileges, the PZs of
 * the RMR and the LMR. A zero length unbinds: the LMR handle, the other
 * triplet fields and the privileges are then irrelevant. Call with
 * mem_lock. */
static DAT_RETURN
bind_check_mem(struct bind *b, DAT_LMR_HANDLE lh, DAT_MEM_PRIV_FLAGS priv)
{
	const DAT_LMR_TRIPLET *seg = b->seg;
	struct dpdat_lmr_info info;
	struct dd_lmr *l;
	uint64_t end;
	DAT_RETURN ret;

	if (seg == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	ret = va_check(b->va, DAT_INVALID_ARG5);
	if (ret != DAT_SUCCESS)
		return ret;
	if ((b->flags & ~BIND_FLAGS) != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG8);
	if (seg->segment_length == 0)
		return DAT_SUCCESS;
	/* local bits are accepted (DAT_MEM_PRIV_ALL_FLAG) and mean nothing
	 * to an RMR */
	if ((priv & ~PRIV_VALID) != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	b->remote = (DAT_MEM_PRIV_FLAGS)(priv & PRIV_REMOTE);
	l = dd_obj_get(lh, DD_LMR);
	if (l == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_LMR);
	if (seg->lmr_context != l->param.lmr_context ||
	    dpdat_lmr_query(l->lmr, &info) != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	end = seg->virtual_address + seg->segment_length;
	if (seg->virtual_address < info.address || end < seg->virtual_address ||
	    end > info.address + info.length)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);	/* outside */
	if (l->pz != b->rmr->pz)
		return DAT_PROTECTION_VIOLATION;
	/* the privileges the consumer asked for (local read is granted
	 * natively to every LMR, see lmr_native_priv()) */
	if ((b->remote & DAT_MEM_PRIV_REMOTE_READ_FLAG) &&
	    !(l->param.mem_priv & DAT_MEM_PRIV_LOCAL_READ_FLAG))
		return DAT_PRIVILEGES_VIOLATION | DAT_PRIVILEGES_RDMA_READ;
	if ((b->remote & PRIV_NEED_LW) &&
	    !(info.privileges & DPDAT_MEM_PRIV_LOCAL_WRITE))
		return DAT_PRIVILEGES_VIOLATION | DAT_PRIVILEGES_RDMA_WRITE;
	return DAT_SUCCESS;
}

/* The checks of the EP the bind is posted on; decides whether it binds or
 * is flushed, and where its event goes. Call with the EP lock held. */
static DAT_RETURN
bind_check_ep(struct bind *b, struct dd_ep *ep)
{
	DAT_EP_STATE st = dd_ep_state(ep);
	bool quiet;

	if (ep->pz != b->rmr->pz)
		return DAT_PROTECTION_VIOLATION;
	/* seed: UNSIGNALLED only if the EP's request flags have it */
	if ((b->flags & DAT_COMPLETION_UNSIGNALLED_FLAG) &&
	    !(ep->param.ep_attr.request_completion_flags &
	      DAT_COMPLETION_UNSIGNALLED_FLAG))
		return DD_BAD_PARAM(DAT_INVALID_ARG8);
	switch (st) {
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_CONNECTED_SINGLE_PATH:
	case DAT_EP_STATE_CONNECTED_MULTI_PATH:
		b->flush = false;
		b->qp = ep->qp;
		if (b->qp == NULL)	/* a connected EP has its QP */
			return DD_BAD_STATE(DAT_INVALID_STATE_EP_NOTREADY);
		break;
	case DAT_EP_STATE_DISCONNECTED:
		b->flush = true;	/* seed: flushed to the request EVD */
		break;
	default:
		return DD_BAD_STATE(ep_state_sub(st));
	}
	/* as ep.c: SUPPRESS, or UNSIGNALLED on an EP that allows it, leave a
	 * success unreported; a flush is an error and always reported */
	quiet = !b->flush && (b->flags & (DAT_COMPLETION_SUPPRESS_FLAG |
					  DAT_COMPLETION_UNSIGNALLED_FLAG));
	if (quiet)
		return DAT_SUCCESS;
	b->evd = ep->req_evd;
	if (b->evd == NULL)
		return DD_BAD_STATE(DAT_INVALID_STATE_EP_EVD_REQUEST);
	/* the event must fit: an RMR bind fails for want of room rather than
	 * overflow the EVD (which would break the IA, see dd_evd_push()) */
	pthread_mutex_lock(&b->evd->lock);
	quiet = b->evd->count >= (uint32_t)b->evd->qlen;
	pthread_mutex_unlock(&b->evd->lock);
	if (quiet)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEVD;
	return DAT_SUCCESS;
}

/* Bind (or flush) and report. Call with mem_lock and the EP lock held. */
static DAT_RETURN
bind_do(struct bind *b, DAT_RMR_CONTEXT *ctx)
{
	static const struct dpdat_dat_sub sub = {
		.handle = DAT_INVALID_HANDLE_RMR,
		.param = DAT_INVALID_ARG3,
	};
	const DAT_LMR_TRIPLET *seg = b->seg;
	struct dpdat_lmr_triplet t = {
		.lmr_context = seg->lmr_context,
		.virtual_address = seg->virtual_address,
		.segment_length = seg->segment_length,
	};
	DAT_RMR_PARAM *p = &b->rmr->param;
	DAT_EVENT ev;
	uint32_t c = 0;
	int err;

	if (!b->flush) {
		if (b->rmr->ep_scope && t.segment_length != 0)
			err = dpdat_rmr_bind_qp(b->rmr->rmr, b->qp, &t,
						priv_native(b->remote), &c);
		else
			err = dpdat_rmr_bind(b->rmr->rmr, &t,
					     priv_native(b->remote), &c);
		if (err != 0)
			return native_err(err, &sub);
		if (t.segment_length != 0) {
			p->lmr_triplet = *seg;
			p->mem_priv = b->remote;
		} else {
			memset(&p->lmr_triplet, 0, sizeof(p->lmr_triplet));
			p->mem_priv = DAT_MEM_PRIV_NONE_FLAG;
		}
		p->rmr_context = c;
		p->va_type = b->va;
	}
	/* a flushed bind leaves the RMR as it was; 0 never resolves */
	if (ctx != NULL)
		*ctx = c;
	if (b->evd == NULL)
		return DAT_SUCCESS;
	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_RMR_BIND_COMPLETION_EVENT;
	ev.evd_handle = b->evd;
	ev.event_data.rmr_completion_event_data =
		(DAT_RMR_BIND_COMPLETION_EVENT_DATA){
			.rmr_handle = b->rmr,
			.user_cookie = b->cookie,
			.status = b->flush ? DAT_RMR_BIND_FAILURE :
					     DAT_RMR_BIND_SUCCESS,
		};
	/* room was checked; if another producer took it meanwhile the
	 * overflow goes to the async EVD, and the bind stands */
	dd_evd_push(b->evd, &ev);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_rmr_bind(DAT_RMR_HANDLE rh,
	DAT_LMR_HANDLE lh,
	const DAT_LMR_TRIPLET *seg,
	DAT_MEM_PRIV_FLAGS priv,
	DAT_VA_TYPE va,
	DAT_EP_HANDLE eh,
	DAT_RMR_COOKIE cookie,
	DAT_COMPLETION_FLAGS flags,
	DAT_RMR_CONTEXT *ctx)
{
	struct bind b = {
		.seg = seg, .va = va, .flags = flags, .cookie = cookie,
	};
	struct dd_ep *ep;
	DAT_RETURN ret;

	pthread_mutex_lock(&mem_lock);
	b.rmr = dd_obj_get(rh, DD_RMR);
	if (b.rmr == NULL) {
		ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_RMR);
		goto out;
	}
	ret = bind_check_mem(&b, lh, priv);
	if (ret != DAT_SUCCESS)
		goto out;
	ep = dd_obj_get(eh, DD_EP);
	if (ep == NULL) {
		ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
		goto out;
	}
	pthread_mutex_lock(&ep->lock);
	ret = bind_check_ep(&b, ep);
	if (ret == DAT_SUCCESS)
		ret = bind_do(&b, ctx);
	pthread_mutex_unlock(&ep->lock);
out:
	pthread_mutex_unlock(&mem_lock);
	return ret;
}
