/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Shared receive queues of dpdat0: a dpdat SRQ. Its limit is armed with
 * ibv_modify_srq(IBV_SRQ_LIMIT) and read back with ibv_query_srq (0 once
 * crossed); the crossing raises IBV_EVENT_SRQ_LIMIT_REACHED
 * (verbs_async.c). Not resizable.
 */

#include <stdlib.h>

#include <rte_errno.h>

#include "verbs_priv.h"

static inline bool
dv_ours_srq(const struct ibv_srq *srq)
{
	return srq != NULL && dv_ours(srq->context);
}

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct dpdat_srq_conf sc = { 0 };
	struct dv_srq *s;

	if (!dv_ours_pd(pd))
		return NEXT(ibv_create_srq, "IBVERBS_1.1",
			    struct ibv_srq *(*)(struct ibv_pd *,
						struct ibv_srq_init_attr *))(pd,
									init);
	if (init == NULL || init->attr.max_wr == 0 ||
	    init->attr.max_wr > DV_MAX_WR ||
	    init->attr.max_sge > DPDAT_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	sc.max_wr = init->attr.max_wr;
	s->dsrq = dpdat_srq_create(dv_ctx(pd->context)->dev, &sc);
	if (s->dsrq == NULL) {
		errno = rte_errno;
		free(s);
		return NULL;
	}
	init->attr.max_sge = DPDAT_MAX_SGE;
	s->srq.context = pd->context;
	s->srq.srq_context = init->srq_context;
	s->srq.pd = pd;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct dv_srq *s = (struct dv_srq *)srq;

	if (!dv_ours_srq(srq))
		return NEXT(ibv_modify_srq, "IBVERBS_1.1",
			    int (*)(struct ibv_srq *, struct ibv_srq_attr *,
				    int))(srq, attr, mask);
	if ((mask & ~IBV_SRQ_LIMIT) != 0)
		return EINVAL;	/* IBV_SRQ_MAX_WR: no resizing */
	if (mask & IBV_SRQ_LIMIT) {
		int ret = dpdat_srq_arm(s->dsrq, attr->srq_limit);

		if (ret != 0)
			return -ret;
		dv_async_arm_srq(s, attr->srq_limit != 0);
	}
	return 0;
}

int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct dv_srq *s = (struct dv_srq *)srq;
	struct dpdat_srq_info si;
	int ret;

	if (!dv_ours_srq(srq))
		return NEXT(ibv_query_srq, "IBVERBS_1.1",
			    int (*)(struct ibv_srq *,
				    struct ibv_srq_attr *))(srq, attr);
	ret = dpdat_srq_query(s->dsrq, &si);
	if (ret != 0)
		return -ret;
	attr->max_wr = si.max_wr;
	attr->max_sge = DPDAT_MAX_SGE;
	attr->srq_limit = si.limit;
	return 0;
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct dv_srq *s = (struct dv_srq *)srq;
	bool armed;
	int ret;

	if (!dv_ours_srq(srq))
		return NEXT(ibv_destroy_srq, "IBVERBS_1.1",
			    int (*)(struct ibv_srq *))(srq);
	/* off the scans first: they read the dpdat SRQ */
	armed = dv_async_arm_srq(s, false);
	ret = dpdat_srq_free(s->dsrq);
	if (ret != 0) {
		dv_async_arm_srq(s, armed);
		return -ret;	/* EBUSY: a QP takes from it */
	}
	dv_async_forget_srq(s);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	free(s);
	return 0;
}

static int
dv_srq_recv(void *dsrq, const struct dpdat_recv_wr *w)
{
	return dpdat_post_srq_recv(dsrq, w);
}

static int
dv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad_wr)
{
	return dv_post_recv_list(dv_srq_recv, ((struct dv_srq *)srq)->dsrq,
				 wr, bad_wr);
}

void
dv_srq_ops(struct verbs_context *vc)
{
	vc->context.ops.post_srq_recv = dv_post_srq_recv;
}
