/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <errno.h>
#include <stdlib.h>

#include <rte_errno.h>

#include "rc_priv.h"

struct dpdat_cq *
dpdat_cq_create(struct dpdat_dev *d, uint32_t size)
{
	struct rc_dev *dev = rc_dev(d);
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
	if (evq_init(&cq->evq, "dpdat_cq", sizeof(struct dpdat_wc), size,
		     rc_dev_progress_fn(dev), dev) != 0) {
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
	/* sized by the consumer for its queues: an overrun is a bug of the
	 * consumer, and the completion is lost loudly, and counted */
	if (!evq_push(&cq->evq, wc)) {
		__atomic_fetch_add(&cq->overruns, 1, __ATOMIC_RELEASE);
		RC_LOG(ERR, "CQ overrun: completion of wr_id %lu lost",
		       (unsigned long)wc->wr_id);
	}
}

int
dpdat_cq_overruns(const struct dpdat_cq *cq, uint64_t *count)
{
	if (cq == NULL || cq->magic != RC_MAGIC_CQ)
		return -EBADF;
	if (count == NULL)
		return -EINVAL;
	*count = __atomic_load_n(&cq->overruns, __ATOMIC_ACQUIRE);
	return 0;
}

int
dpdat_cq_poll(struct dpdat_cq *cq, struct dpdat_wc *wc, int n)
{
	if (cq == NULL || cq->magic != RC_MAGIC_CQ)
		return -EBADF;
	if (wc == NULL || n < 0)
		return -EINVAL;
	if (cq->dev->progress == DPDAT_PROGRESS_HYBRID)
		rc_dev_poll_run(cq->dev);
	return (int)evq_poll(&cq->evq, wc, (unsigned int)n);
}

int
dpdat_cq_wait(struct dpdat_cq *cq, int timeout_ms)
{
	if (cq == NULL || cq->magic != RC_MAGIC_CQ)
		return -EBADF;
	return evq_wait(&cq->evq, timeout_ms);
}

int
dpdat_cq_fd(const struct dpdat_cq *cq)
{
	if (cq == NULL || cq->magic != RC_MAGIC_CQ)
		return -EBADF;
	/* whoever asks for the fd watches it: every completion writes it
	 * from now on (the CQ is the caller's, allocated writable; the wake-up
	 * policy is no part of what const promises about its contents) */
	evq_watch(&((struct dpdat_cq *)(uintptr_t)cq)->evq);
	return cq->evq.efd;
}

int
dpdat_cq_free(struct dpdat_cq *cq)
{
	struct rc_dev *dev;

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
	evq_fini(&cq->evq);
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
