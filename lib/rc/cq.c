/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "rc_priv.h"

struct dpdat_cq *
dpdat_cq_create(struct dpdat_dev *dev, uint32_t size)
{
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];
	struct dpdat_cq *cq;

	if (dev == NULL || dev->magic != RC_MAGIC_DEV) {
		rte_errno = EBADF;
		return NULL;
	}
	if (size == 0 || size > (1u << 24)) {
		rte_errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "dpdat_cq%u",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	cq->ring = rte_ring_create_elem(name, sizeof(struct dpdat_wc),
					rte_align32pow2(size + 1), SOCKET_ID_ANY,
					0);
	cq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cq->ring == NULL || cq->efd < 0) {
		rte_ring_free(cq->ring);
		if (cq->efd >= 0)
			close(cq->efd);
		free(cq);
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->dev = dev;
	cq->magic = RC_MAGIC_CQ;
	pthread_mutex_lock(&dev->lock);
	dev->n_cqs++;
	pthread_mutex_unlock(&dev->lock);
	return cq;
}

void
rc_cq_push(struct dpdat_cq *cq, const struct dpdat_wc *wc)
{
	uint64_t one = 1;

	if (rte_ring_enqueue_elem(cq->ring, (void *)(uintptr_t)wc,
				  sizeof(*wc)) != 0) {
		/* sized by the consumer for its queues: an overrun is a bug
		 * of the consumer, and the completion is lost loudly */
		RC_LOG(ERR, "CQ overrun: completion of wr_id %lu lost",
		       (unsigned long)wc->wr_id);
		return;
	}
	/* pairs with the waiter's increment: one of us sees the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cq->waiters, __ATOMIC_RELAXED) != 0 &&
	    write(cq->efd, &one, sizeof(one)) < 0)
		RC_LOG(DEBUG, "eventfd write failed");
}

int
dpdat_cq_poll(struct dpdat_cq *cq, struct dpdat_wc *wc, int n)
{
	if (cq == NULL || cq->magic != RC_MAGIC_CQ)
		return -EBADF;
	if (wc == NULL || n < 0)
		return -EINVAL;
	if (cq->dev->progress == DPDAT_PROGRESS_INLINE)
		rc_engine_run(cq->dev);
	return (int)rte_ring_dequeue_burst_elem(cq->ring, wc, sizeof(*wc),
						(unsigned int)n, NULL);
}

int
dpdat_cq_wait(struct dpdat_cq *cq, int timeout_ms)
{
	uint64_t t0 = rte_get_tsc_cycles(), v;
	uint64_t limit = (uint64_t)timeout_ms * rte_get_tsc_hz() / 1000;
	struct pollfd pfd;
	int ret = 0;

	if (cq == NULL || cq->magic != RC_MAGIC_CQ)
		return -EBADF;
	if (cq->dev->progress == DPDAT_PROGRESS_INLINE) {
		while (rte_ring_count(cq->ring) == 0) {
			if (timeout_ms >= 0 &&
			    rte_get_tsc_cycles() - t0 >= limit)
				return 0;
			rc_engine_run(cq->dev);
		}
		return 1;
	}
	__atomic_add_fetch(&cq->waiters, 1, __ATOMIC_SEQ_CST);
	while (rte_ring_count(cq->ring) == 0) {
		pfd.fd = cq->efd;
		pfd.events = POLLIN;
		ret = poll(&pfd, 1, timeout_ms);
		if (ret <= 0)
			break;
		if (read(cq->efd, &v, sizeof(v)) < 0)
			continue;
	}
	__atomic_sub_fetch(&cq->waiters, 1, __ATOMIC_ACQ_REL);
	return rte_ring_count(cq->ring) != 0 ? 1 : 0;
}

int
dpdat_cq_fd(const struct dpdat_cq *cq)
{
	if (cq == NULL || cq->magic != RC_MAGIC_CQ)
		return -EBADF;
	return cq->efd;
}

int
dpdat_cq_free(struct dpdat_cq *cq)
{
	struct dpdat_dev *dev;

	if (cq == NULL || cq->magic != RC_MAGIC_CQ)
		return -EBADF;
	dev = cq->dev;
	pthread_mutex_lock(&dev->lock);
	if (cq->users != 0) {
		pthread_mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	cq->magic = 0;
	dev->n_cqs--;
	pthread_mutex_unlock(&dev->lock);
	rte_ring_free(cq->ring);
	close(cq->efd);
	free(cq);
	return 0;
}

const char *
dpdat_wc_status_str(enum dpdat_wc_status status)
{
	static const char *const names[] = {
		[DPDAT_WC_SUCCESS] = "success",
		[DPDAT_WC_LOC_LEN_ERR] = "local length error",
		[DPDAT_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[DPDAT_WC_LOC_PROT_ERR] = "local protection error",
		[DPDAT_WC_WR_FLUSH_ERR] = "work request flushed error",
		[DPDAT_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[DPDAT_WC_REM_ACCESS_ERR] = "remote access error",
		[DPDAT_WC_REM_OP_ERR] = "remote operation error",
		[DPDAT_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[DPDAT_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	};

	if ((unsigned int)status >= RTE_DIM(names) || names[status] == NULL)
		return "unknown";
	return names[status];
}
