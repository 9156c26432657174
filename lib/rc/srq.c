/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Shared receive queues. Posting threads queue receive WQEs on the SRQ's
 * MPSC ring, as they do on a QP's; the engine is the only consumer: it
 * pulls the ring into the SRQ's array and hands the oldest WQE to the
 * first of its QPs that starts receiving a message (rc_srq_take). That QP
 * keeps the WQE (qp->resp.srq_wqe) until the message completes, so a
 * multi-packet SEND finishes in the WQE it started with while other QPs
 * take the following ones. posted counts the WQEs waiting in the SRQ (ring
 * and array): posting reserves, taking releases. A QP reset or freed with
 * a message half received gives its WQE back (rc_srq_give_back): the
 * message never completed, and the buffer is the application's to reuse.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>

#include "rc_priv.h"

#define SRQ_DEFAULT_WR	256
#define SRQ_MAX_WR	65536

static void
srq_release(struct dpdat_srq *srq)
{
	rte_ring_free(srq->ring);
	free(srq->rq);
	free(srq);
}

struct dpdat_srq *
dpdat_srq_create(struct dpdat_dev *d, const struct dpdat_srq_conf *conf)
{
	struct rc_dev *dev = rc_dev(d);
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];
	struct dpdat_srq *srq;

	if (dev == NULL || dev->magic != RC_MAGIC_DEV) {
		rte_errno = EBADF;
		return NULL;
	}
	if (conf == NULL || conf->max_wr > SRQ_MAX_WR) {
		rte_errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	srq->dev = dev;
	srq->max = conf->max_wr ? conf->max_wr : SRQ_DEFAULT_WR;
	srq->size = rte_align32pow2(srq->max);
	snprintf(name, sizeof(name), "dpdat_srq%u",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	srq->ring = rte_ring_create_elem(name, sizeof(struct rc_rwqe),
		rte_align32pow2(srq->max + 1), SOCKET_ID_ANY, RING_F_SC_DEQ);
	srq->rq = calloc(srq->size, sizeof(*srq->rq));
	if (srq->ring == NULL || srq->rq == NULL) {
		srq_release(srq);
		rte_errno = ENOMEM;
		return NULL;
	}
	srq->magic = RC_MAGIC_SRQ;
	pthread_mutex_lock(&dev->lock);
	dev->n_srqs++;
	pthread_mutex_unlock(&dev->lock);
	return srq;
}

int
dpdat_post_srq_recv(struct dpdat_srq *srq, const struct dpdat_recv_wr *wr)
{
	struct rc_rwqe w;
	int ret;

	if (srq == NULL || srq->magic != RC_MAGIC_SRQ)
		return -EBADF;
	ret = rc_rwqe_fill(&w, wr);
	if (ret != 0)
		return ret;
	return rc_rwqe_post(srq->ring, &srq->posted, srq->max, &w);
}

/* The watermark is crossed when fewer than limit WQEs wait: report it
 * once, and disarm. Any thread (arm) or the engine (take). */
static void
limit_check(struct dpdat_srq *srq)
{
	uint32_t limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);

	if (limit != 0 &&
	    __atomic_load_n(&srq->posted, __ATOMIC_ACQUIRE) < limit &&
	    __atomic_compare_exchange_n(&srq->limit, &limit, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		__atomic_store_n(&srq->limit_reached, 1, __ATOMIC_RELEASE);
}

int
dpdat_srq_arm(struct dpdat_srq *srq, uint32_t limit)
{
	if (srq == NULL || srq->magic != RC_MAGIC_SRQ)
		return -EBADF;
	if (limit > srq->max)
		return -EINVAL;
	__atomic_store_n(&srq->limit_reached, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&srq->limit, limit, __ATOMIC_RELEASE);
	limit_check(srq);
	return 0;
}

int
dpdat_srq_query(const struct dpdat_srq *srq, struct dpdat_srq_info *info)
{
	if (srq == NULL || srq->magic != RC_MAGIC_SRQ)
		return -EBADF;
	if (info == NULL)
		return -EINVAL;
	info->max_wr = srq->max;
	info->posted = __atomic_load_n(&srq->posted, __ATOMIC_ACQUIRE);
	info->limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	info->limit_reached = __atomic_load_n(&srq->limit_reached,
					      __ATOMIC_ACQUIRE);
	info->users = __atomic_load_n(&srq->users, __ATOMIC_RELAXED);
	return 0;
}

int
dpdat_srq_free(struct dpdat_srq *srq)
{
	struct rc_dev *dev;

	if (srq == NULL || srq->magic != RC_MAGIC_SRQ)
		return -EBADF;
	dev = srq->dev;
	pthread_mutex_lock(&dev->lock);
	if (srq->users != 0) {
		pthread_mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	srq->magic = 0;
	dev->n_srqs--;
	pthread_mutex_unlock(&dev->lock);
	/* no QP names it: the engine never touches it again */
	srq_release(srq);
	return 0;
}

/* Engine: pull what posting threads queued. */
static void
srq_pull(struct dpdat_srq *srq)
{
	while (srq->tail - srq->head < srq->size &&
	       rte_ring_dequeue_elem(srq->ring,
				     &srq->rq[srq->tail & (srq->size - 1)],
				     sizeof(struct rc_rwqe)) == 0)
		srq->tail++;
}

bool
rc_srq_take(struct dpdat_qp *qp)
{
	struct dpdat_srq *srq = qp->resp.srq;

	if (srq->head == srq->tail)
		srq_pull(srq);
	if (srq->head == srq->tail)
		return false;
	qp->resp.srq_wqe = srq->rq[srq->head & (srq->size - 1)];
	qp->resp.srq_held = true;
	srq->head++;
	__atomic_sub_fetch(&srq->posted, 1, __ATOMIC_RELEASE);
	limit_check(srq);
	return true;
}

void
rc_srq_give_back(struct dpdat_qp *qp)
{
	struct dpdat_srq *srq = qp->resp.srq;

	if (srq == NULL || !qp->resp.srq_held)
		return;
	qp->resp.srq_held = false;
	/* first in line again, as it was taken; the array is full only when
	 * posting refilled it meanwhile: then behind what was posted */
	if (srq->tail - srq->head < srq->size) {
		srq->head--;
		srq->rq[srq->head & (srq->size - 1)] = qp->resp.srq_wqe;
	} else if (rte_ring_enqueue_elem(srq->ring, &qp->resp.srq_wqe,
					 sizeof(qp->resp.srq_wqe)) != 0) {
		rc_complete_recv(qp, &qp->resp.srq_wqe, DPDAT_WC_WR_FLUSH_ERR,
				 DPDAT_WR_RECV, 0, NULL);
		return;
	}
	__atomic_add_fetch(&srq->posted, 1, __ATOMIC_RELEASE);
}
