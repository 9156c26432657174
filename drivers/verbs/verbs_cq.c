/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Completion queues and completion channels of dpdat0. A CQ is a dpdat
 * CQ; polling converts dpdat's completions to ibv_wc. A completion
 * channel's fd is an epoll set holding the eventfd of each of its CQs
 * one-shot: ibv_req_notify_cq clears the CQ's eventfd and arms it, the
 * next completion makes the channel readable, and ibv_get_cq_event takes
 * that CQ (which stays disarmed until armed again). Solicited-only arming
 * is served as arming for every completion: more events than asked, never
 * fewer.
 */

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_errno.h>

#include "dpdat_verbs_private.h"
#include "verbs_priv.h"

#define DV_POLL_BURST 32


/* ---- completion channels ---- */

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct dv_channel *c;

	if (!dv_ours(ctx))
		return NEXT(ibv_create_comp_channel, "IBVERBS_1.0",
			    struct ibv_comp_channel *(*)(struct ibv_context *))(ctx);
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch.context = ctx;
	c->ch.fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;	/* errno from epoll_create1 */
	}
	return &c->ch;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	if (ch == NULL || !dv_ours(ch->context))
		return NEXT(ibv_destroy_comp_channel, "IBVERBS_1.0",
			    int (*)(struct ibv_comp_channel *))(ch);
	if (__atomic_load_n(&ch->refcnt, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;	/* CQs still use it */
	close(ch->fd);
	free((struct dv_channel *)ch);
	return 0;
}

int
ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
		 void **cq_context)
{
	struct epoll_event ev;
	int fl, n;

	if (ch == NULL || !dv_ours(ch->context))
		return NEXT(ibv_get_cq_event, "IBVERBS_1.1",
			    int (*)(struct ibv_comp_channel *, struct ibv_cq **,
				    void **))(ch, cq, cq_context);
	/* the application may make the channel's fd non-blocking */
	fl = fcntl(ch->fd, F_GETFL);
	n = dpdat_verbs_wait_fd(ch->fd, &ev,
				fl >= 0 && (fl & O_NONBLOCK) ? 0 : -1);
	if (n <= 0) {
		if (n == 0)
			errno = EAGAIN;
		return -1;
	}
	*cq = &((struct dv_cq *)ev.data.ptr)->cq;
	*cq_context = (*cq)->cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (!dv_ours_cq(cq)) {
		NEXT(ibv_ack_cq_events, "IBVERBS_1.1",
		     void (*)(struct ibv_cq *, unsigned int))(cq, nevents);
		return;
	}
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ---- completion queues ---- */

struct ibv_cq *
ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct epoll_event ev = { .events = EPOLLONESHOT };
	struct dv_cq *c;

	if (!dv_ours(ctx))
		return NEXT(ibv_create_cq, "IBVERBS_1.1",
			    struct ibv_cq *(*)(struct ibv_context *, int,
					       void *, struct ibv_comp_channel *,
					       int))(ctx, cqe, cq_context,
						     channel, comp_vector);
	if (cqe < 1 || cqe > DV_MAX_CQE || comp_vector != 0 ||
	    (channel != NULL && channel->context != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->efd = -1;
	c->dcq = dpdat_cq_create(dv_ctx(ctx)->dev, (uint32_t)cqe);
	if (c->dcq == NULL) {
		errno = rte_errno;
		free(c);
		return NULL;
	}
	if (channel != NULL) {
		/* from here every completion writes the eventfd */
		c->efd = dpdat_cq_fd(c->dcq);
		ev.data.ptr = c;
		/* in the set disarmed: one-shot without EPOLLIN */
		if (epoll_ctl(channel->fd, EPOLL_CTL_ADD, c->efd, &ev) != 0) {
			int err = errno;

			dpdat_cq_free(c->dcq);
			free(c);
			errno = err;
			return NULL;
		}
		__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_ACQ_REL);
	}
	c->cq.context = ctx;
	c->cq.channel = channel;
	c->cq.cq_context = cq_context;
	c->cq.cqe = cqe;
	pthread_mutex_init(&c->cq.mutex, NULL);
	pthread_cond_init(&c->cq.cond, NULL);
	pthread_mutex_init(&c->keep_lock, NULL);
	rte_spinlock_init(&c->poll_lock);
	dv_async_add_cq(c);
	return &c->cq;
}

int
ibv_destroy_cq(struct ibv_cq *cq)
{
	struct dv_cq *c = (struct dv_cq *)cq;
	int ret;

	if (!dv_ours_cq(cq))
		return NEXT(ibv_destroy_cq, "IBVERBS_1.1",
			    int (*)(struct ibv_cq *))(cq);
	/* off the scans first: they read the dpdat CQ */
	dv_async_unlink_cq(c);
	ret = dpdat_cq_free(c->dcq);
	if (ret != 0) {
		dv_async_add_cq(c);
		return -ret;	/* EBUSY: a QP uses it */
	}
	dv_async_forget_cq(c);
	if (cq->channel != NULL) {
		/* the eventfd closed with the dpdat CQ left the set */
		__atomic_sub_fetch(&cq->channel->refcnt, 1, __ATOMIC_ACQ_REL);
	}
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	pthread_mutex_destroy(&c->keep_lock);
	free(c->keep);
	free(c);
	return 0;
}

int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	static int said;

	if (!dv_ours_cq(cq))
		return NEXT(ibv_resize_cq, "IBVERBS_1.1",
			    int (*)(struct ibv_cq *, int))(cq, cqe);
	dv_unsupported("ibv_resize_cq", &said, EOPNOTSUPP);
	return EOPNOTSUPP;
}

static const enum ibv_wc_opcode dv_wc_op[] = {
	[DPDAT_WR_SEND] = IBV_WC_SEND,
	[DPDAT_WR_SEND_IMM] = IBV_WC_SEND,
	[DPDAT_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[DPDAT_WR_RDMA_WRITE_IMM] = IBV_WC_RDMA_WRITE,
	[DPDAT_WR_RDMA_READ] = IBV_WC_RDMA_READ,
	[DPDAT_WR_RECV] = IBV_WC_RECV,
	[DPDAT_WR_RECV_RDMA_IMM] = IBV_WC_RECV_RDMA_WITH_IMM,
	[DPDAT_WR_ATOMIC_CMP_SWP] = IBV_WC_COMP_SWAP,
	[DPDAT_WR_ATOMIC_FETCH_ADD] = IBV_WC_FETCH_ADD,
};

/* dpdat's status values are ibv_wc_status's */
_Static_assert(DPDAT_WC_SUCCESS == (int)IBV_WC_SUCCESS &&
	       DPDAT_WC_LOC_LEN_ERR == (int)IBV_WC_LOC_LEN_ERR &&
	       DPDAT_WC_LOC_QP_OP_ERR == (int)IBV_WC_LOC_QP_OP_ERR &&
	       DPDAT_WC_LOC_PROT_ERR == (int)IBV_WC_LOC_PROT_ERR &&
	       DPDAT_WC_WR_FLUSH_ERR == (int)IBV_WC_WR_FLUSH_ERR &&
	       DPDAT_WC_REM_INV_REQ_ERR == (int)IBV_WC_REM_INV_REQ_ERR &&
	       DPDAT_WC_REM_ACCESS_ERR == (int)IBV_WC_REM_ACCESS_ERR &&
	       DPDAT_WC_REM_OP_ERR == (int)IBV_WC_REM_OP_ERR &&
	       DPDAT_WC_RETRY_EXC_ERR == (int)IBV_WC_RETRY_EXC_ERR &&
	       DPDAT_WC_RNR_RETRY_EXC_ERR == (int)IBV_WC_RNR_RETRY_EXC_ERR,
	       "completion status values");

void
dv_cq_purge(struct ibv_cq *cq, uint32_t qpn)
{
	struct dv_cq *c = (struct dv_cq *)cq;
	struct dpdat_wc w[DV_POLL_BURST], *keep;
	uint32_t i, n = 0, cap;
	int k;

	pthread_mutex_lock(&c->keep_lock);
	/* the kept ones first, in order, then what dcq holds */
	cap = c->n_keep + (uint32_t)cq->cqe + DV_POLL_BURST;
	keep = malloc(cap * sizeof(*keep));
	if (keep == NULL) {
		pthread_mutex_unlock(&c->keep_lock);
		return;	/* the destroyed QP's completions stay: harmless */
	}
	for (i = 0; i < c->n_keep; i++)
		if (c->keep[c->keep_head + i].qp_num != qpn)
			keep[n++] = c->keep[c->keep_head + i];
	while (n + DV_POLL_BURST <= cap &&
	       (k = dpdat_cq_poll(c->dcq, w, DV_POLL_BURST)) > 0)
		for (i = 0; i < (uint32_t)k; i++)
			if (w[i].qp_num != qpn)
				keep[n++] = w[i];
	free(c->keep);
	c->keep = keep;
	c->keep_head = 0;
	__atomic_store_n(&c->n_keep, n, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->keep_lock);
	/* completions went without a poll taking them: an overrun they
	 * filled the CQ for is looked for at the next drained poll */
	__atomic_store_n(&c->took, true, __ATOMIC_RELEASE);
}

/* Take up to n of the kept completions. */
static int
dv_cq_kept(struct dv_cq *c, struct dpdat_wc *w, int n)
{
	int k;

	pthread_mutex_lock(&c->keep_lock);
	k = (int)RTE_MIN((uint32_t)n, c->n_keep);
	memcpy(w, c->keep + c->keep_head, (size_t)k * sizeof(*w));
	c->keep_head += (uint32_t)k;
	__atomic_store_n(&c->n_keep, c->n_keep - (uint32_t)k, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->keep_lock);
	return k;
}

static int
dv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct dv_cq *c = (struct dv_cq *)cq;
	struct dpdat_wc w[DV_POLL_BURST];
	int got = 0, k, i;

	rte_spinlock_lock(&c->poll_lock);
	while (got < n) {
		if (unlikely(__atomic_load_n(&c->n_keep, __ATOMIC_ACQUIRE)))
			k = dv_cq_kept(c, w, RTE_MIN(n - got, DV_POLL_BURST));
		else
			k = dpdat_cq_poll(c->dcq, w,
					  RTE_MIN(n - got, DV_POLL_BURST));
		if (k < 0) {
			rte_spinlock_unlock(&c->poll_lock);
			return got != 0 ? got : -1;
		}
		for (i = 0; i < k; i++) {
			struct ibv_wc *o = &wc[got + i];

			o->wr_id = w[i].wr_id;
			o->status = (enum ibv_wc_status)w[i].status;
			o->opcode = (unsigned int)w[i].opcode <
				    RTE_DIM(dv_wc_op) ?
				    dv_wc_op[w[i].opcode] : IBV_WC_SEND;
			o->vendor_err = 0;
			o->byte_len = w[i].byte_len;
			o->imm_data = w[i].imm_data;
			o->qp_num = w[i].qp_num;
			o->src_qp = 0;
			o->wc_flags = w[i].flags & DPDAT_WC_WITH_IMM ?
				      IBV_WC_WITH_IMM : 0;
			o->pkey_index = 0;
			o->slid = 0;
			o->sl = 0;
			o->dlid_path_bits = 0;
		}
		got += k;
		if (k < DV_POLL_BURST)
			break;
	}
	rte_spinlock_unlock(&c->poll_lock);
	/* drained: an overrun (or a crossed SRQ limit) is an event now. Its
	 * counters are read only after polls that took completions: an
	 * empty CQ polled in a loop (perftest's receiver) costs no more
	 * than the poll (the reads were 0.5 % of ib_send_bw's samples) */
	if (got < n)
		dv_async_cq_drained(c, got > 0 ||
				    (__atomic_load_n(&c->took,
						     __ATOMIC_RELAXED) &&
				     __atomic_exchange_n(&c->took, false,
							 __ATOMIC_ACQUIRE)));
	else if (!__atomic_load_n(&c->took, __ATOMIC_RELAXED))
		__atomic_store_n(&c->took, true, __ATOMIC_RELAXED);
	return got;
}

static int
dv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct dv_cq *c = (struct dv_cq *)cq;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
				  .data.ptr = c };
	uint64_t v;

	(void)solicited_only;	/* served as every completion */
	if (cq->channel == NULL)
		return EINVAL;
	/* completions before arming make no event: the caller polls them */
	if (read(c->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return errno;
	if (epoll_ctl(cq->channel->fd, EPOLL_CTL_MOD, c->efd, &ev) != 0)
		return errno;
	return 0;
}

void
dv_cq_ops(struct verbs_context *vc)
{
	vc->context.ops.poll_cq = dv_poll_cq;
	vc->context.ops.req_notify_cq = dv_req_notify_cq;
}
