/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Queue pairs of dpdat0: RC only. A verbs QP is a dpdat QP, made at
 * ibv_create_qp (dpdat's INIT, our RESET) and walked through verbs' states
 * here:
 *
 *   RESET -> INIT   the access flags: the remote accesses the responder
 *                   allows (dpdat_qp_set_access), beside the MRs' own
 *   INIT  -> RTR    the peer's GID (IPv4-mapped) resolved by ARP, then
 *                   dpdat_qp_connect() with the application's rq_psn: the
 *                   responder answers from here; posting sends waits for RTS;
 *                   dpdat's extensions offered to the peer in band
 *                   (dpdat_cm_offer())
 *   RTR   -> RTS    dpdat_qp_set_send() with the application's sq_psn,
 *                   timeout and retry counts
 *   any   -> ERR    dpdat_qp_set_error(): outstanding work flushed
 *
 *   any   -> RESET  dpdat_qp_reset(): the same QP number, its work gone
 *                   without completions (purged from its CQs), to be
 *                   connected again
 *
 * SQD and SQE are not offered. Posting converts verbs' work
 * requests (ibv_sge is dpdat_sge's layout, so scatter lists pass as they
 * are) and posts lists in one burst. IBV_SEND_INLINE copies the data at
 * post time into a slot of the QP's own registered ring; a slot is reused
 * only after enough later WRs were accepted that, the send queue
 * completing in order, the WR that used it has completed.
 */

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_spinlock.h>

#include <dpdat/dpdat_cm.h>

#include "dpdat_verbs_private.h"
#include "verbs_priv.h"

#define DV_POST_BURST 32
#define DV_MIN_INLINE 64	/* inline bytes of every QP */

_Static_assert(sizeof(struct ibv_sge) == sizeof(struct dpdat_sge) &&
	       offsetof(struct ibv_sge, addr) ==
	       offsetof(struct dpdat_sge, addr) &&
	       offsetof(struct ibv_sge, length) ==
	       offsetof(struct dpdat_sge, length) &&
	       offsetof(struct ibv_sge, lkey) ==
	       offsetof(struct dpdat_sge, lkey),
	       "ibv_sge and dpdat_sge share a layout");

struct dv_qp {
	struct ibv_qp_ex qpx;		/* qpx.qp_base is handed out */
	struct dpdat_qp *dqp;
	struct ibv_qp_attr attr;	/* as set, for ibv_query_qp */
	int sq_sig_all;
	/* connected by rdma_cm (libdpdat-rdmacm): verbs' state follows the
	 * dpdat QP's, read here, never set from the event thread (the
	 * program may destroy the QP before its last event) */
	bool cm;
	rte_spinlock_t inl_lock;	/* posts with inline data */
	/* IBV_SEND_INLINE: slots of inl_size bytes, registered */
	uint8_t *inl;
	struct dpdat_lmr *inl_lmr;
	uint32_t inl_lkey, inl_size, inl_slots;
	uint64_t inl_next;		/* inline WRs accepted */
	/* the new post API: WRs between ibv_wr_start and ibv_wr_complete */
	struct dpdat_send_wr *bwr;
	struct dpdat_sge *bsge;		/* DPDAT_MAX_SGE per WR */
	uint8_t *bdata;			/* inl_size of inline data per WR */
	bool *binl;
	uint32_t n_b, b_max;
	int b_err;
	struct dv_qp_async as;		/* asynchronous events */
};

static inline struct dv_qp *
dv_qp(struct ibv_qp *qp)
{
	return (struct dv_qp *)qp;
}

struct dv_qp_async *
dv_qp_async_of(struct ibv_qp *qp)
{
	return &dv_qp(qp)->as;
}

static inline bool
dv_ours_qp(const struct ibv_qp *qp)
{
	return qp != NULL && dv_ours(qp->context);
}

/* A QP rdma_cm connects: RTS once dpdat's connection manager made the
 * dpdat QP so (verbs' state catches up here). Others: their state. */
static enum ibv_qp_state
dv_cm_state(struct dv_qp *q)
{
	struct dpdat_qp_info qi;

	if (q->cm && q->qpx.qp_base.state == IBV_QPS_INIT &&
	    dpdat_qp_query(q->dqp, &qi) == 0 && qi.state == DPDAT_QPS_RTS)
		q->qpx.qp_base.state = IBV_QPS_RTS;
	return q->qpx.qp_base.state;
}

/* ---- posting ---- */

/* Gather wr's data into an inline slot: 0, or EINVAL (too long). */
static int
dv_inline_copy(struct dv_qp *q, struct dpdat_send_wr *w, uint64_t ticket,
	       struct dpdat_sge *sge)
{
	uint8_t *slot = q->inl + (ticket % q->inl_slots) * q->inl_size;
	uint32_t len = 0, k;

	for (k = 0; k < w->num_sge; k++) {
		if (w->sg_list[k].length > q->inl_size - len)
			return EINVAL;
		memcpy(slot + len, (const void *)(uintptr_t)w->sg_list[k].addr,
		       w->sg_list[k].length);
		len += w->sg_list[k].length;
	}
	sge->addr = (uintptr_t)slot;
	sge->length = len;
	sge->lkey = q->inl_lkey;
	w->sg_list = sge;
	w->num_sge = len != 0;
	return 0;
}

static inline int
dv_post_err(int r)
{
	return r == -EBUSY ? EINVAL : -r;	/* not in RTS: EINVAL */
}

/* Post n WRs (inl[i]: w[i]'s data goes inline). 0 or an errno value, with
 * *posted the number posted. */
static int
dv_post(struct dv_qp *q, struct dpdat_send_wr *w, const bool *inl,
	uint32_t n, uint32_t *posted)
{
	struct dpdat_sge sge[DV_POST_BURST];
	struct dpdat_sge *s = sge;
	uint64_t ticket;
	uint32_t i, k;
	int r, bad = 0;

	if (inl == NULL)
		return dv_post_err(dpdat_post_send_burst(q->dqp, w, n, posted));
	if (n > DV_POST_BURST) {
		s = malloc(n * sizeof(*s));
		if (s == NULL) {
			*posted = 0;
			return ENOMEM;
		}
	}
	rte_spinlock_lock(&q->inl_lock);
	ticket = q->inl_next;
	for (i = 0; i < n; i++)
		if (inl[i] &&
		    (bad = dv_inline_copy(q, &w[i], ticket++, &s[i])) != 0)
			break;	/* post those before it, then say why */
	r = dpdat_post_send_burst(q->dqp, w, i, posted);
	for (k = 0; k < *posted; k++)
		q->inl_next += inl[k];
	rte_spinlock_unlock(&q->inl_lock);
	if (s != sge)
		free(s);
	return r != 0 ? dv_post_err(r) : bad;
}

/* verbs send flags -> dpdat's; -1 for ones dpdat0 lacks */
static inline int
dv_send_flags(unsigned int f)
{
	if (f & ~(unsigned int)(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				IBV_SEND_SOLICITED | IBV_SEND_INLINE))
		return -1;
	return (f & IBV_SEND_FENCE ? DPDAT_SEND_FENCE : 0) |
	       (f & IBV_SEND_SIGNALED ? DPDAT_SEND_SIGNALED : 0) |
	       (f & IBV_SEND_SOLICITED ? DPDAT_SEND_SOLICITED : 0);
}

/* One verbs WR as dpdat's: 0, or an errno value. */
static int
dv_send_wr(const struct ibv_send_wr *v, struct dpdat_send_wr *w, bool *inl)
{
	int fl = dv_send_flags(v->send_flags);

	if (fl < 0 || v->num_sge < 0 ||
	    (v->num_sge > DPDAT_MAX_SGE && !(v->send_flags & IBV_SEND_INLINE)))
		return EINVAL;
	w->wr_id = v->wr_id;
	w->flags = (uint32_t)fl;
	w->sg_list = (const struct dpdat_sge *)v->sg_list;
	w->num_sge = (uint32_t)v->num_sge;
	*inl = (v->send_flags & IBV_SEND_INLINE) != 0;
	switch (v->opcode) {
	case IBV_WR_SEND:
		w->opcode = DPDAT_WR_SEND;
		break;
	case IBV_WR_SEND_WITH_IMM:
		w->opcode = DPDAT_WR_SEND_IMM;
		w->imm_data = v->imm_data;
		break;
	case IBV_WR_RDMA_WRITE:
		w->opcode = DPDAT_WR_RDMA_WRITE;
		goto rdma;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		w->opcode = DPDAT_WR_RDMA_WRITE_IMM;
		w->imm_data = v->imm_data;
		goto rdma;
	case IBV_WR_RDMA_READ:
		w->opcode = DPDAT_WR_RDMA_READ;
		if (*inl)
			return EINVAL;
rdma:
		w->remote_addr = v->wr.rdma.remote_addr;
		w->rkey = v->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->opcode = v->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
			    DPDAT_WR_ATOMIC_CMP_SWP : DPDAT_WR_ATOMIC_FETCH_ADD;
		if (*inl)
			return EINVAL;
		w->remote_addr = v->wr.atomic.remote_addr;
		w->rkey = v->wr.atomic.rkey;
		w->compare_add = v->wr.atomic.compare_add;
		w->swap = v->wr.atomic.swap;
		break;
	default:	/* invalidation, memory windows, TSO, driver ops */
		return EINVAL;
	}
	return 0;
}

static int
dv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
	     struct ibv_send_wr **bad_wr)
{
	struct dv_qp *q = dv_qp(qp);
	struct dpdat_send_wr w[DV_POST_BURST];
	struct ibv_send_wr *v[DV_POST_BURST];
	bool inl[DV_POST_BURST];
	uint32_t n, posted;
	int ret = 0, any_inl;

	/* verbs: sends are posted in RTS (and flushed in ERR) */
	if (unlikely(qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR) &&
	    dv_cm_state(q) != IBV_QPS_RTS) {
		*bad_wr = wr;
		return EINVAL;
	}
	while (wr != NULL) {
		any_inl = 0;
		for (n = 0; wr != NULL && n < DV_POST_BURST; n++, wr = wr->next) {
			memset(&w[n], 0, sizeof(w[n]));
			v[n] = wr;
			ret = dv_send_wr(wr, &w[n], &inl[n]);
			if (ret != 0)
				break;
			any_inl |= inl[n];
		}
		if (n != 0) {
			int r = dv_post(q, w, any_inl ? inl : NULL, n, &posted);

			if (r != 0) {
				*bad_wr = v[posted];
				return r;
			}
		}
		if (ret != 0) {
			*bad_wr = v[n];
			return ret;
		}
	}
	return 0;
}

static int
dv_qp_recv(void *dqp, const struct dpdat_recv_wr *w)
{
	return dpdat_post_recv(dqp, w);
}

static int
dv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
	     struct ibv_recv_wr **bad_wr)
{
	if (qp->state == IBV_QPS_RESET || qp->srq != NULL) {
		*bad_wr = wr;
		return EINVAL;	/* with an SRQ: post to it */
	}
	return dv_post_recv_list(dv_qp_recv, dv_qp(qp)->dqp, wr, bad_wr);
}

/* ---- the new post API (ibv_wr_*) ---- */

static inline struct dv_qp *
dv_qpx(struct ibv_qp_ex *qpx)
{
	return (struct dv_qp *)qpx;
}

static void
dv_wr_start(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = dv_qpx(qpx);

	q->n_b = 0;
	q->b_err = 0;
}

/* The next WR of the batch, its common fields set; NULL when full. */
static struct dpdat_send_wr *
dv_wr_new(struct ibv_qp_ex *qpx, enum dpdat_wr_opcode op)
{
	struct dv_qp *q = dv_qpx(qpx);
	struct dpdat_send_wr *w;
	int fl = dv_send_flags(qpx->wr_flags);

	if (q->n_b == q->b_max || fl < 0) {
		q->b_err = q->n_b == q->b_max ? ENOMEM : EINVAL;
		return NULL;
	}
	w = &q->bwr[q->n_b];
	memset(w, 0, sizeof(*w));
	w->wr_id = qpx->wr_id;
	w->opcode = op;
	w->flags = (uint32_t)fl;
	w->sg_list = &q->bsge[q->n_b * DPDAT_MAX_SGE];
	q->binl[q->n_b] = false;
	q->n_b++;
	return w;
}

/* The WR being built, for the wr_set_* calls. */
static struct dpdat_send_wr *
dv_wr_cur(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = dv_qpx(qpx);

	if (q->n_b == 0) {
		q->b_err = EINVAL;
		return NULL;
	}
	return &q->bwr[q->n_b - 1];
}

static void
dv_wr_send(struct ibv_qp_ex *qpx)
{
	dv_wr_new(qpx, DPDAT_WR_SEND);
}

static void
dv_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct dpdat_send_wr *w = dv_wr_new(qpx, DPDAT_WR_SEND_IMM);

	if (w != NULL)
		w->imm_data = imm;
}

static void
dv_wr_rdma(struct ibv_qp_ex *qpx, enum dpdat_wr_opcode op, uint32_t rkey,
	   uint64_t raddr, __be32 imm)
{
	struct dpdat_send_wr *w = dv_wr_new(qpx, op);

	if (w == NULL)
		return;
	w->rkey = rkey;
	w->remote_addr = raddr;
	w->imm_data = imm;
}

static void
dv_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr)
{
	dv_wr_rdma(qpx, DPDAT_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void
dv_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr,
		     __be32 imm)
{
	dv_wr_rdma(qpx, DPDAT_WR_RDMA_WRITE_IMM, rkey, raddr, imm);
}

static void
dv_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr)
{
	dv_wr_rdma(qpx, DPDAT_WR_RDMA_READ, rkey, raddr, 0);
}

static void
dv_wr_atomic(struct ibv_qp_ex *qpx, enum dpdat_wr_opcode op, uint32_t rkey,
	     uint64_t raddr, uint64_t compare_add, uint64_t swap)
{
	struct dpdat_send_wr *w = dv_wr_new(qpx, op);

	if (w == NULL)
		return;
	w->rkey = rkey;
	w->remote_addr = raddr;
	w->compare_add = compare_add;
	w->swap = swap;
}

static void
dv_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr,
		     uint64_t compare, uint64_t swap)
{
	dv_wr_atomic(qpx, DPDAT_WR_ATOMIC_CMP_SWP, rkey, raddr, compare, swap);
}

static void
dv_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr,
		       uint64_t add)
{
	dv_wr_atomic(qpx, DPDAT_WR_ATOMIC_FETCH_ADD, rkey, raddr, add, 0);
}

static void
dv_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *sg)
{
	struct dpdat_send_wr *w = dv_wr_cur(qpx);

	if (w == NULL)
		return;
	if (n > DPDAT_MAX_SGE) {
		dv_qpx(qpx)->b_err = EINVAL;
		return;
	}
	memcpy((struct dpdat_sge *)(uintptr_t)w->sg_list, sg, n * sizeof(*sg));
	w->num_sge = (uint32_t)n;
}

static void
dv_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
	      uint32_t length)
{
	const struct ibv_sge sg = { .addr = addr, .length = length,
				    .lkey = lkey };

	dv_wr_set_sge_list(qpx, 1, &sg);
}

static void
dv_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
			   const struct ibv_data_buf *buf)
{
	struct dv_qp *q = dv_qpx(qpx);
	struct dpdat_send_wr *w = dv_wr_cur(qpx);
	struct dpdat_sge *sge;
	uint8_t *d;
	size_t len = 0, k;

	if (w == NULL)
		return;
	d = q->bdata + (size_t)(q->n_b - 1) * q->inl_size;
	for (k = 0; k < n; k++) {
		if (buf[k].length > q->inl_size - len) {
			q->b_err = EINVAL;
			return;
		}
		memcpy(d + len, buf[k].addr, buf[k].length);
		len += buf[k].length;
	}
	/* copied again into an inline slot at wr_complete */
	sge = (struct dpdat_sge *)(uintptr_t)w->sg_list;
	sge->addr = (uintptr_t)d;
	sge->length = (uint32_t)len;
	sge->lkey = 0;
	w->num_sge = 1;
	q->binl[q->n_b - 1] = true;
}

static void
dv_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	const struct ibv_data_buf b = { .addr = addr, .length = length };

	dv_wr_set_inline_data_list(qpx, 1, &b);
}

static int
dv_wr_complete(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = dv_qpx(qpx);
	uint32_t posted;
	int ret = q->b_err;

	if (ret == 0 && q->n_b != 0) {
		if (qpx->qp_base.state != IBV_QPS_RTS &&
		    qpx->qp_base.state != IBV_QPS_ERR)
			ret = EINVAL;
		else
			ret = dv_post(q, q->bwr, q->binl, q->n_b, &posted);
	}
	q->n_b = 0;
	q->b_err = 0;
	return ret;
}

static void
dv_wr_abort(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = dv_qpx(qpx);

	q->n_b = 0;
	q->b_err = 0;
}

/* An operation the QP was not created for. */
static void
dv_wr_bad_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
	     const struct ibv_mw_bind_info *b)
{
	(void)mw, (void)rkey, (void)b;
	dv_qpx(qpx)->b_err = EOPNOTSUPP;
}

static void
dv_wr_bad_rkey(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	(void)rkey;
	dv_qpx(qpx)->b_err = EOPNOTSUPP;
}

static void
dv_wr_bad_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz,
	      uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	dv_qpx(qpx)->b_err = EOPNOTSUPP;
}

static void
dv_wr_bad_ud(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn,
	     uint32_t qkey)
{
	(void)ah, (void)qpn, (void)qkey;
	dv_qpx(qpx)->b_err = EOPNOTSUPP;
}

static void
dv_wr_bad_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t raddr,
		       const void *wr)
{
	(void)rkey, (void)raddr, (void)wr;
	dv_qpx(qpx)->b_err = EOPNOTSUPP;
}

/* The batch of the new post API: max_send_wr WRs. 0 or ENOMEM. */
static int
dv_qpx_init(struct dv_qp *q, uint32_t max)
{
	struct ibv_qp_ex *x = &q->qpx;

	q->b_max = max;
	q->bwr = calloc(max, sizeof(*q->bwr));
	q->bsge = calloc((size_t)max * DPDAT_MAX_SGE, sizeof(*q->bsge));
	q->binl = calloc(max, sizeof(*q->binl));
	q->bdata = q->inl_size != 0 ? calloc(max, q->inl_size) : NULL;
	if (q->bwr == NULL || q->bsge == NULL || q->binl == NULL ||
	    (q->inl_size != 0 && q->bdata == NULL))
		return ENOMEM;
	x->wr_atomic_cmp_swp = dv_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = dv_wr_atomic_fetch_add;
	x->wr_bind_mw = dv_wr_bad_mw;
	x->wr_local_inv = dv_wr_bad_rkey;
	x->wr_rdma_read = dv_wr_rdma_read;
	x->wr_rdma_write = dv_wr_rdma_write;
	x->wr_rdma_write_imm = dv_wr_rdma_write_imm;
	x->wr_send = dv_wr_send;
	x->wr_send_imm = dv_wr_send_imm;
	x->wr_send_inv = dv_wr_bad_rkey;
	x->wr_send_tso = dv_wr_bad_tso;
	x->wr_set_ud_addr = dv_wr_bad_ud;
	x->wr_set_xrc_srqn = dv_wr_bad_rkey;
	x->wr_set_inline_data = dv_wr_set_inline_data;
	x->wr_set_inline_data_list = dv_wr_set_inline_data_list;
	x->wr_set_sge = dv_wr_set_sge;
	x->wr_set_sge_list = dv_wr_set_sge_list;
	x->wr_start = dv_wr_start;
	x->wr_complete = dv_wr_complete;
	x->wr_abort = dv_wr_abort;
	x->wr_atomic_write = dv_wr_bad_atomic_write;
	return 0;
}

/* ---- create, destroy ---- */

static void
dv_qp_release(struct dv_qp *q)
{
	if (q->dqp != NULL)
		dpdat_qp_free(q->dqp);
	if (q->inl_lmr != NULL)
		dpdat_lmr_free(q->inl_lmr);
	free(q->inl);
	free(q->bwr);
	free(q->bsge);
	free(q->binl);
	free(q->bdata);
	free(q);
}

/* The inline ring: twice the send queue plus the largest burst, so that a
 * slot's last user is older than max_send_wr accepted WRs (see the top). */
static int
dv_inline_init(struct dv_qp *q, struct dv_pd *p, uint32_t max_send_wr,
	       uint32_t max_inline)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	size_t bytes;

	q->inl_size = RTE_ALIGN_CEIL(max_inline, 64);
	q->inl_slots = 2 * max_send_wr + DV_POST_BURST;
	bytes = (size_t)q->inl_slots * q->inl_size;
	q->inl = aligned_alloc(64, bytes);
	if (q->inl == NULL)
		return ENOMEM;
	d.virt.addr = q->inl;
	d.virt.length = bytes;
	q->inl_lmr = dpdat_lmr_create(p->pz, &d, DPDAT_MEM_PRIV_LOCAL_READ |
				      DPDAT_MEM_PRIV_LOCAL_WRITE);
	if (q->inl_lmr == NULL)
		return rte_errno;
	if (dpdat_lmr_query(q->inl_lmr, &li) != 0)
		return EIO;
	q->inl_lkey = li.lmr_context;
	return 0;
}

static struct ibv_qp *
dv_create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	static int said_type;
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	const uint64_t ops = IBV_QP_EX_WITH_RDMA_WRITE |
		IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
		IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
		IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	struct dpdat_qp_conf qc = { 0 };
	struct dpdat_qp_info qi;
	struct dv_pd *p;
	struct dv_qp *q;
	int ret;

	if (a->qp_type != IBV_QPT_RC) {
		dv_unsupported("ibv_create_qp of a QP type other than RC",
			       &said_type, EOPNOTSUPP);
		return NULL;
	}
	if (a->srq != NULL && a->srq->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	if ((a->comp_mask & ~known) || !(a->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    !dv_ours_pd(a->pd) || a->pd->context != ctx ||
	    a->send_cq == NULL || a->send_cq->context != ctx ||
	    a->recv_cq == NULL || a->recv_cq->context != ctx ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (a->send_ops_flags & ~ops)) ||
	    a->cap.max_send_wr > DV_MAX_WR || a->cap.max_recv_wr > DV_MAX_WR ||
	    a->cap.max_send_sge > DPDAT_MAX_SGE ||
	    a->cap.max_recv_sge > DPDAT_MAX_SGE ||
	    a->cap.max_inline_data > DV_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p = (struct dv_pd *)a->pd;
	rte_spinlock_init(&q->inl_lock);
	a->cap.max_send_wr = RTE_MAX(a->cap.max_send_wr, 1U);
	a->cap.max_recv_wr = RTE_MAX(a->cap.max_recv_wr, 1U);
	/* every QP takes some inline data, as NICs do */
	ret = dv_inline_init(q, p, a->cap.max_send_wr,
			     RTE_MAX(a->cap.max_inline_data, (uint32_t)DV_MIN_INLINE));
	if (ret != 0)
		goto fail;
	a->cap.max_inline_data = q->inl_size;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (ret = dv_qpx_init(q, a->cap.max_send_wr)) != 0)
		goto fail;
	qc.pz = p->pz;
	qc.send_cq = ((struct dv_cq *)a->send_cq)->dcq;
	qc.recv_cq = ((struct dv_cq *)a->recv_cq)->dcq;
	qc.max_send_wr = a->cap.max_send_wr;
	qc.max_recv_wr = a->cap.max_recv_wr;
	qc.sq_sig_all = a->sq_sig_all;
	qc.srq = a->srq != NULL ? ((struct dv_srq *)a->srq)->dsrq : NULL;
	q->dqp = dpdat_qp_create(dv_ctx(ctx)->dev, &qc);
	if (q->dqp == NULL || dpdat_qp_query(q->dqp, &qi) != 0) {
		ret = q->dqp == NULL ? rte_errno : EIO;
		goto fail;
	}
	/* what the QP takes, told back as verbs does */
	a->cap.max_send_sge = DPDAT_MAX_SGE;
	a->cap.max_recv_sge = DPDAT_MAX_SGE;
	q->attr.cap = a->cap;
	q->attr.qp_state = IBV_QPS_RESET;
	q->sq_sig_all = a->sq_sig_all;
	q->qpx.qp_base.context = ctx;
	q->qpx.qp_base.qp_context = a->qp_context;
	q->qpx.qp_base.pd = a->pd;
	q->qpx.qp_base.send_cq = a->send_cq;
	q->qpx.qp_base.recv_cq = a->recv_cq;
	q->qpx.qp_base.srq = a->srq;
	q->qpx.qp_base.handle = qi.qpn;
	q->qpx.qp_base.qp_num = qi.qpn;
	q->qpx.qp_base.state = IBV_QPS_RESET;
	q->qpx.qp_base.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&q->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&q->qpx.qp_base.cond, NULL);
	q->as.qp = &q->qpx.qp_base;
	q->as.dqp = q->dqp;
	if (a->srq != NULL)
		dv_async_add_qp(&q->as);
	return &q->qpx.qp_base;
fail:
	dv_qp_release(q);
	errno = ret;
	return NULL;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	if (!dv_ours_pd(pd))
		return NEXT(ibv_create_qp, "IBVERBS_1.1",
			    struct ibv_qp *(*)(struct ibv_pd *,
					       struct ibv_qp_init_attr *))(pd,
									init);
	memset(&a, 0, sizeof(a));
	memcpy(&a, init, sizeof(*init));
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	qp = dv_create_qp(pd->context, &a);
	if (qp != NULL)
		init->cap = a.cap;
	return qp;
}

static struct ibv_qp *
dv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	return dv_create_qp(ctx, a);
}

struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	if (!dv_ours_qp(qp))
		return NEXT(ibv_qp_to_qp_ex, "IBVERBS_1.6",
			    struct ibv_qp_ex *(*)(struct ibv_qp *))(qp);
	/* only a QP made with send_ops_flags has the new post API */
	return dv_qp(qp)->bwr != NULL ? &dv_qp(qp)->qpx : NULL;
}

/* DPDAT_VERBS_QP_STATS: a QP's counters, on stderr, as it goes. */
static void
dv_qp_say_stats(const struct dpdat_qp *dqp)
{
	struct dpdat_qp_stats st;
	struct dpdat_qp_info qi;

	if (dpdat_qp_query(dqp, &qi) != 0 || dpdat_qp_stats(dqp, &st) != 0)
		return;
	DV_LOG("%s qp %u: ext 0x%x, pkts tx %" PRIu64 " rx %" PRIu64
	       ", acks ridden %" PRIu64 " sent %" PRIu64 " rcvd"
	       ", retransmits %" PRIu64 ", timeouts %" PRIu64, DV_NAME,
	       qi.qpn, qi.ext, st.tx_pkts, st.rx_pkts, st.acks_ridden,
	       st.acks_ridden_rcvd, st.retransmits, st.timeouts);
}

/* The dpdat QP freed (destroy: q with it) or reset, with no poller on
 * the QP's CQs meanwhile (their poll locks, in address order: no deadlock
 * between two callers): none sees a going QP's completions or takes a
 * live QP's out of order; verbs leaves none of the QP's in its CQs. */
static int
dv_qp_drop(struct dv_qp *q, bool destroy)
{
	struct ibv_cq *scq = q->qpx.qp_base.send_cq;
	struct ibv_cq *rcq = q->qpx.qp_base.recv_cq;
	const uint32_t qpn = q->qpx.qp_base.qp_num;
	struct dv_cq *lo, *hi;
	int ret = 0;

	lo = (struct dv_cq *)(scq < rcq ? scq : rcq);
	hi = (struct dv_cq *)(scq < rcq ? rcq : scq);
	rte_spinlock_lock(&lo->poll_lock);
	if (hi != lo)
		rte_spinlock_lock(&hi->poll_lock);
	if (destroy)
		dv_qp_release(q);	/* flushes what is outstanding */
	else
		ret = -dpdat_qp_reset(q->dqp);
	dv_cq_purge(scq, qpn);
	if (rcq != scq)
		dv_cq_purge(rcq, qpn);
	if (hi != lo)
		rte_spinlock_unlock(&hi->poll_lock);
	rte_spinlock_unlock(&lo->poll_lock);
	return ret;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct dv_qp *q = dv_qp(qp);

	if (!dv_ours_qp(qp))
		return NEXT(ibv_destroy_qp, "IBVERBS_1.1",
			    int (*)(struct ibv_qp *))(qp);
	if (dv_qp_stats)
		dv_qp_say_stats(q->dqp);
	/* no scan reaches the dpdat QP from now on; the events the program
	 * took are acknowledged before the mutex goes */
	dv_async_forget_qp(&q->as);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	dv_qp_drop(q, true);
	return 0;
}

/* Any state -> RESET: the dpdat QP reset in place (same number), its work
 * gone without completions, its attributes as created. */
static int
dv_to_reset(struct dv_qp *q)
{
	const struct ibv_qp_cap cap = q->attr.cap;
	int ret;

	/* the reset's passage through ERR is not a last WQE to tell */
	dv_async_unlist_qp(&q->as);
	ret = dv_qp_drop(q, false);
	if (ret != 0)
		return ret;
	memset(&q->attr, 0, sizeof(q->attr));
	q->attr.cap = cap;
	q->n_b = 0;
	q->b_err = 0;
	if (q->qpx.qp_base.srq != NULL)
		dv_async_add_qp(&q->as);	/* a last WQE to tell again */
	return 0;
}

/* ---- the state machine ---- */

/* Attributes an RC QP's transition needs, and may take (IBTA 11.2.4.2) */
static bool
dv_mask_ok(enum ibv_qp_state cur, enum ibv_qp_state next, unsigned int mask)
{
	unsigned int req = 0, opt = 0;

	mask &= ~(unsigned int)IBV_QP_STATE;
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
		return true;	/* anything else given is ignored */
	switch (cur * 16 + next) {
	case IBV_QPS_RESET * 16 + IBV_QPS_INIT:
		req = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_INIT * 16 + IBV_QPS_INIT:
		opt = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_INIT * 16 + IBV_QPS_RTR:
		req = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		      IBV_QP_MIN_RNR_TIMER;
		opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
		      IBV_QP_PKEY_INDEX;
		break;
	case IBV_QPS_RTR * 16 + IBV_QPS_RTS:
		req = IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
		      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT;
		opt = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH |
		      IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
		      IBV_QP_PATH_MIG_STATE;
		break;
	case IBV_QPS_RTS * 16 + IBV_QPS_RTS:
		opt = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
		      IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
		      IBV_QP_MIN_RNR_TIMER;
		break;
	default:
		return false;
	}
	return (mask & req) == req && (mask & ~(req | opt)) == 0;
}

/* The peer's IPv4 address from an IPv4-mapped GID; false if it is not. */
static bool
dv_gid_ipv4(const union ibv_gid *g, uint32_t *ipv4)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0xff, 0xff };

	if (memcmp(g->raw, pfx, sizeof(pfx)) != 0)
		return false;
	memcpy(ipv4, &g->raw[12], 4);
	return true;
}

/* INIT -> RTR: resolve the peer and connect the receive side. */
static int
dv_to_rtr(struct dv_qp *q, const struct ibv_qp_attr *a)
{
	static int said_lid;
	struct dpdat_qp_remote r = { .retry_cnt = 7, .rnr_retry = 7 };
	struct dpdat_dev *dev = dv_ctx(q->qpx.qp_base.context)->dev;
	int ret;

	if (!a->ah_attr.is_global || !dv_gid_ipv4(&a->ah_attr.grh.dgid,
						  &r.ipv4)) {
		/* RoCE has no LIDs: the peer is its GID (-g 0 in the
		 * rdma-core examples) */
		dv_unsupported("ibv_modify_qp to RTR without an IPv4 GID "
			       "(RoCE v2: give the peer's GID)", &said_lid,
			       EINVAL);
		return EINVAL;
	}
	if (a->ah_attr.grh.sgid_index != 0 || a->path_mtu < IBV_MTU_256 ||
	    a->path_mtu > IBV_MTU_4096)
		return EINVAL;
	r.pmtu = (uint16_t)(128u << a->path_mtu);
	r.qpn = a->dest_qp_num;
	r.psn = a->rq_psn & 0xffffff;
	ret = dpdat_dev_resolve(dev, r.ipv4, &r.mac, DV_RESOLVE_MS);
	if (ret != 0) {
		char ip[16];
		const uint8_t *b = (const uint8_t *)&r.ipv4;

		snprintf(ip, sizeof(ip), "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
		DV_LOG("ibv_modify_qp to RTR: peer %s: %s", ip,
		       strerror(-ret));
		return -ret;
	}
	ret = dpdat_qp_connect(q->dqp, &r);
	/* a dpdat peer's QP that offers too agrees, before the program's
	 * first message if it can; a failed offer costs only that */
	if (ret == 0 && dv_offer)
		(void)dpdat_cm_offer(q->dqp);
	return ret == -EBUSY ? EINVAL : -ret;
}

/* RTR -> RTS: the application's send PSN, timeout and retries. */
static int
dv_to_rts(struct dv_qp *q, const struct ibv_qp_attr *a)
{
	const struct dpdat_qp_send_attr s = {
		.sq_psn = a->sq_psn & 0xffffff,
		.retry_cnt = a->retry_cnt, .rnr_retry = a->rnr_retry,
		.timeout = a->timeout, .max_rd_atomic = a->max_rd_atomic,
	};
	int ret = dpdat_qp_set_send(q->dqp, &s);

	return ret == -EBUSY ? EINVAL : -ret;
}

/* Keep what was set, for ibv_query_qp. */
static void
dv_attr_keep(struct ibv_qp_attr *k, const struct ibv_qp_attr *a,
	     unsigned int mask)
{
#define KEEP(bit, field) do { if (mask & (bit)) k->field = a->field; } while (0)
	KEEP(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	KEEP(IBV_QP_PKEY_INDEX, pkey_index);
	KEEP(IBV_QP_PORT, port_num);
	KEEP(IBV_QP_AV, ah_attr);
	KEEP(IBV_QP_PATH_MTU, path_mtu);
	KEEP(IBV_QP_DEST_QPN, dest_qp_num);
	KEEP(IBV_QP_RQ_PSN, rq_psn);
	KEEP(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	KEEP(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	KEEP(IBV_QP_SQ_PSN, sq_psn);
	KEEP(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	KEEP(IBV_QP_RETRY_CNT, retry_cnt);
	KEEP(IBV_QP_RNR_RETRY, rnr_retry);
	KEEP(IBV_QP_TIMEOUT, timeout);
#undef KEEP
}

/* The state the QP is in: dpdat's error (a retry exhausted, a remote
 * error) shows through. */
static enum ibv_qp_state
dv_state(struct dv_qp *q)
{
	struct dpdat_qp_info qi;

	if (dpdat_qp_query(q->dqp, &qi) == 0 && qi.state == DPDAT_QPS_ERR)
		q->qpx.qp_base.state = IBV_QPS_ERR;
	return dv_cm_state(q);
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	static int said_state;
	struct dv_qp *q = dv_qp(qp);
	const unsigned int mask = (unsigned int)attr_mask;
	enum ibv_qp_state cur, next;
	int ret = 0;

	if (!dv_ours_qp(qp))
		return NEXT(ibv_modify_qp, "IBVERBS_1.1",
			    int (*)(struct ibv_qp *, struct ibv_qp_attr *,
				    int))(qp, attr, attr_mask);
	pthread_mutex_lock(&qp->mutex);
	cur = dv_state(q);
	next = mask & IBV_QP_STATE ? attr->qp_state : cur;
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ret = EINVAL;
		goto out;
	}
	if (next == IBV_QPS_SQD || next == IBV_QPS_SQE ||
	    next == IBV_QPS_UNKNOWN) {
		dv_unsupported("ibv_modify_qp to SQD or SQE", &said_state,
			       EOPNOTSUPP);
		ret = EOPNOTSUPP;
		goto out;
	}
	if (!dv_mask_ok(cur, next, mask) ||
	    /* more READs and atomics than ibv_query_device's */
	    ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	     attr->max_dest_rd_atomic > DV_MAX_RD) ||
	    ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	     attr->max_rd_atomic > DV_MAX_RD) ||
	    ((mask & IBV_QP_PORT) && attr->port_num != 1) ||
	    ((mask & IBV_QP_PKEY_INDEX) && attr->pkey_index != 0)) {
		ret = EINVAL;
		goto out;
	}
	switch (next) {
	case IBV_QPS_RESET:
		if (cur != IBV_QPS_RESET)
			ret = dv_to_reset(q);
		break;
	case IBV_QPS_RTR:
		if (cur == IBV_QPS_INIT)
			ret = dv_to_rtr(q, attr);
		break;
	case IBV_QPS_RTS:
		if (cur == IBV_QPS_RTR)
			ret = dv_to_rts(q, attr);
		break;
	case IBV_QPS_ERR:
		ret = -dpdat_qp_set_error(q->dqp);
		if (ret == 0 && qp->srq != NULL)
			dv_async_qp_erred(qp->context);	/* last WQE */
		break;
	default:
		break;
	}
	if (ret == 0 && (mask & IBV_QP_ACCESS_FLAGS))
		ret = -dpdat_qp_set_access(q->dqp,
			(attr->qp_access_flags & IBV_ACCESS_REMOTE_READ ?
			 DPDAT_MEM_PRIV_REMOTE_READ : 0) |
			(attr->qp_access_flags & IBV_ACCESS_REMOTE_WRITE ?
			 DPDAT_MEM_PRIV_REMOTE_WRITE : 0) |
			(attr->qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC ?
			 DPDAT_MEM_PRIV_REMOTE_ATOMIC : 0));
	if (ret == 0) {
		dv_attr_keep(&q->attr, attr, mask);
		qp->state = next;
		q->attr.qp_state = next;
	}
out:
	pthread_mutex_unlock(&qp->mutex);
	return ret;
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init)
{
	struct dv_qp *q = dv_qp(qp);

	if (!dv_ours_qp(qp))
		return NEXT(ibv_query_qp, "IBVERBS_1.1",
			    int (*)(struct ibv_qp *, struct ibv_qp_attr *, int,
				    struct ibv_qp_init_attr *))(qp, attr,
								attr_mask,
								init);
	(void)attr_mask;	/* everything is told */
	pthread_mutex_lock(&qp->mutex);
	*attr = q->attr;
	attr->qp_state = dv_state(q);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	pthread_mutex_unlock(&qp->mutex);
	memset(init, 0, sizeof(*init));
	init->qp_context = qp->qp_context;
	init->send_cq = qp->send_cq;
	init->recv_cq = qp->recv_cq;
	init->srq = qp->srq;
	init->cap = q->attr.cap;
	init->qp_type = qp->qp_type;
	init->sq_sig_all = q->sq_sig_all;
	return 0;
}

void
dv_qp_ops(struct verbs_context *vc)
{
	vc->context.ops.post_send = dv_post_send;
	vc->context.ops.post_recv = dv_post_recv;
	vc->create_qp_ex = dv_create_qp_ex;
}

/* ---- for libdpdat-rdmacm (version DPDAT_VERBS_PRIVATE) ---- */

struct dpdat_qp *
dpdat_verbs_qp(struct ibv_qp *qp)
{
	return dv_ours_qp(qp) ? dv_qp(qp)->dqp : NULL;
}

/* A QP rdma_cm connects: its verbs state follows the dpdat QP's. From
 * the thread that made it, before it is connected. */
void
dpdat_verbs_qp_cm(struct ibv_qp *qp)
{
	if (dv_ours_qp(qp))
		dv_qp(qp)->cm = true;
}

/* The program's rdma_cm call moved the dpdat QP (accepted: RTS;
 * disconnected: ERR): verbs' state follows. From the program's thread
 * (never the event thread's: the QP may be gone by then). */
void
dpdat_verbs_qp_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	if (!dv_ours_qp(qp))
		return;
	pthread_mutex_lock(&qp->mutex);
	qp->state = state;
	dv_qp(qp)->attr.qp_state = state;
	pthread_mutex_unlock(&qp->mutex);
}
