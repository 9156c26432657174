/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Completion queues: a dpdat CQ, its completions converted to the CQ's
 * format as they are read. An error completion is held for
 * fi_cq_readerr (fi_cq_read says -FI_EAVAIL); the completions read with
 * it in the same batch wait in a backlog, in order. The wait object is
 * the dpdat CQ's eventfd (written for every completion once taken).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "df.h"

static size_t
entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT: return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG: return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA: return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED: return sizeof(struct fi_cq_tagged_entry);
	default: return 0;
	}
}

static uint64_t
wc_flags(const struct dpdat_wc *wc)
{
	uint64_t imm = wc->flags & DPDAT_WC_WITH_IMM ? FI_REMOTE_CQ_DATA : 0;

	switch (wc->opcode) {
	case DPDAT_WR_SEND:
	case DPDAT_WR_SEND_IMM:
		return FI_SEND | FI_MSG;
	case DPDAT_WR_RDMA_WRITE:
	case DPDAT_WR_RDMA_WRITE_IMM:
		return FI_RMA | FI_WRITE;
	case DPDAT_WR_RDMA_READ:
		return FI_RMA | FI_READ;
	case DPDAT_WR_RECV:
		return FI_RECV | FI_MSG | imm;
	case DPDAT_WR_RECV_RDMA_IMM:
		return FI_RMA | FI_REMOTE_WRITE | imm;
	default:
		return 0;
	}
}

static void
wc_to_entry(const struct dpdat_wc *wc, enum fi_cq_format f, void *buf)
{
	struct fi_cq_tagged_entry e = {
		.op_context = (void *)(uintptr_t)wc->wr_id,
		.flags = wc_flags(wc),
		.len = wc->opcode == DPDAT_WR_RECV ||
		       wc->opcode == DPDAT_WR_RECV_RDMA_IMM ? wc->byte_len : 0,
		.data = wc->flags & DPDAT_WC_WITH_IMM ? ntohl(wc->imm_data) : 0,
	};

	/* every format is a prefix of the tagged one */
	memcpy(buf, &e, entry_size(f));
}

/* A failed completion's error, as libfabric names it. */
static int
wc_err(enum dpdat_wc_status s)
{
	switch (s) {
	case DPDAT_WC_WR_FLUSH_ERR: return FI_ECANCELED;
	case DPDAT_WC_LOC_LEN_ERR: return FI_ETRUNC;
	case DPDAT_WC_LOC_PROT_ERR: return FI_EACCES;
	case DPDAT_WC_REM_ACCESS_ERR: return FI_EACCES;
	case DPDAT_WC_REM_INV_REQ_ERR: return FI_EINVAL;
	case DPDAT_WC_RETRY_EXC_ERR: return FI_ETIMEDOUT;
	case DPDAT_WC_RNR_RETRY_EXC_ERR: return FI_ETIMEDOUT;
	default: return FI_EIO;
	}
}

/* Up to count entries into buf; -FI_EAVAIL when an error comes first,
 * -FI_EAGAIN when none. Under the CQ lock. */
static ssize_t
cq_read_locked(struct df_cq *cq, void *buf, size_t count)
{
	const size_t es = entry_size(cq->format);
	struct dpdat_wc wcs[DF_CQ_BACKLOG];
	size_t got = 0;
	int n, i;

	/* what a batch left behind first, in order */
	while (got < count && cq->bl_n > 0) {
		struct dpdat_wc *wc = &cq->backlog[cq->bl_head];

		if (wc->status != DPDAT_WC_SUCCESS)
			return got > 0 ? (ssize_t)got : -FI_EAVAIL;
		wc_to_entry(wc, cq->format, (uint8_t *)buf + got * es);
		cq->bl_head = (cq->bl_head + 1) % DF_CQ_BACKLOG;
		cq->bl_n--;
		got++;
	}
	if (cq->bl_n > 0 || got == count)
		return got > 0 ? (ssize_t)got : -FI_EAGAIN;
	n = dpdat_cq_poll(cq->cq, wcs, (int)RTE_MIN(count - got,
						    (size_t)DF_CQ_BACKLOG));
	df_read_mark();
	if (n < 0)
		return df_errno(-n);
	for (i = 0; i < n; i++) {
		if (wcs[i].status != DPDAT_WC_SUCCESS)
			break;
		wc_to_entry(&wcs[i], cq->format, (uint8_t *)buf + got * es);
		got++;
	}
	/* an error and what came after it wait (the backlog is empty) */
	for (cq->bl_head = 0; i < n; i++)
		cq->backlog[cq->bl_n++] = wcs[i];
	if (got > 0)
		return (ssize_t)got;
	return cq->bl_n > 0 ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t
cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	struct df_cq *cq = container_of(cq_fid, struct df_cq, cq_fid);
	ssize_t ret;

	if (buf == NULL && count > 0)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->lock);
	ret = cq_read_locked(cq, buf, count);
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

static ssize_t
cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
	    fi_addr_t *src_addr)
{
	ssize_t ret = cq_read(cq_fid, buf, count);

	/* connected endpoints: no source addresses */
	for (ssize_t i = 0; src_addr != NULL && i < ret; i++)
		src_addr[i] = FI_ADDR_NOTAVAIL;
	return ret;
}

static ssize_t
cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *e, uint64_t flags)
{
	struct df_cq *cq = container_of(cq_fid, struct df_cq, cq_fid);
	struct dpdat_wc *wc;

	if (e == NULL)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->lock);
	if (cq->bl_n == 0 ||
	    cq->backlog[cq->bl_head].status == DPDAT_WC_SUCCESS) {
		pthread_mutex_unlock(&cq->lock);
		return -FI_EAGAIN;
	}
	wc = &cq->backlog[cq->bl_head];
	/* err_data_size is the caller's (API 1.5 on): keep its buffer */
	e->op_context = (void *)(uintptr_t)wc->wr_id;
	e->flags = wc_flags(wc);
	e->len = 0;
	e->buf = NULL;
	e->data = 0;
	e->tag = 0;
	e->olen = 0;
	e->err = wc_err(wc->status);
	e->prov_errno = (int)wc->status;
	e->err_data_size = 0;
	cq->bl_head = (cq->bl_head + 1) % DF_CQ_BACKLOG;
	cq->bl_n--;
	pthread_mutex_unlock(&cq->lock);
	return 1;
}

static ssize_t
cq_sread(struct fid_cq *cq_fid, void *buf, size_t count, const void *cond,
	 int timeout)
{
	struct df_cq *cq = container_of(cq_fid, struct df_cq, cq_fid);
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t end = timeout < 0 ? UINT64_MAX :
		rte_get_tsc_cycles() + (uint64_t)timeout * hz / 1000;
	ssize_t ret;
	int left;

	if (cq->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	for (;;) {
		ret = cq_read(cq_fid, buf, count);
		if (ret != -FI_EAGAIN)
			return ret;
		if (__atomic_exchange_n(&cq->signaled, false,
					__ATOMIC_ACQ_REL))
			return -FI_EAGAIN;
		if (end != UINT64_MAX && rte_get_tsc_cycles() >= end)
			return -FI_EAGAIN;
		if (cq->wait_obj == FI_WAIT_YIELD) {
			sched_yield();
			continue;
		}
		left = end == UINT64_MAX ? 100 :
		       (int)RTE_MIN((end - rte_get_tsc_cycles()) * 1000 / hz + 1,
				    (uint64_t)100);
		/* a bounded wait: fi_cq_signal from another thread is seen */
		dpdat_cq_wait(cq->cq, left);
	}
}

static ssize_t
cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
	     fi_addr_t *src_addr, const void *cond, int timeout)
{
	ssize_t ret = cq_sread(cq_fid, buf, count, cond, timeout);

	for (ssize_t i = 0; src_addr != NULL && i < ret; i++)
		src_addr[i] = FI_ADDR_NOTAVAIL;
	return ret;
}

static int
cq_signal(struct fid_cq *cq_fid)
{
	struct df_cq *cq = container_of(cq_fid, struct df_cq, cq_fid);
	uint64_t one = 1;

	__atomic_store_n(&cq->signaled, true, __ATOMIC_RELEASE);
	if (cq->wait_obj == FI_WAIT_FD &&
	    write(dpdat_cq_fd(cq->cq), &one, sizeof(one)) < 0)
		return -FI_EIO;
	return 0;
}

static const char *
cq_strerror(struct fid_cq *cq_fid, int prov_errno, const void *err_data,
	    char *buf, size_t len)
{
	const char *s = dpdat_wc_status_str((enum dpdat_wc_status)prov_errno);

	if (buf != NULL && len > 0) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	return s;
}

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int
cq_close(struct fid *fid)
{
	struct df_cq *cq = container_of(fid, struct df_cq, cq_fid.fid);

	if (__atomic_load_n(&cq->refs, __ATOMIC_ACQUIRE) != 0)
		return -FI_EBUSY;
	if (dpdat_cq_free(cq->cq) != 0)
		return -FI_EBUSY;
	pthread_mutex_lock(&cq->domain->lock);
	cq->domain->refs--;
	pthread_mutex_unlock(&cq->domain->lock);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return 0;
}

/* Whether the CQ may be waited on: nothing ready, and the eventfd
 * emptied (a completion after this writes it again). */
int
df_cq_trywait(struct fid *fid)
{
	struct df_cq *cq = container_of(fid, struct df_cq, cq_fid.fid);
	struct pollfd p = { .events = POLLIN };
	uint64_t v;
	int ret = 0, n;

	if (cq->wait_obj != FI_WAIT_FD)
		return -FI_EINVAL;	/* nothing to wait on */
	p.fd = dpdat_cq_fd(cq->cq);
	pthread_mutex_lock(&cq->lock);
	/* another thread's wait may have emptied it meanwhile (EAGAIN) */
	if (poll(&p, 1, 0) == 1 && read(p.fd, &v, sizeof(v)) < 0 &&
	    errno != EAGAIN)
		ret = -FI_EIO;
	if (ret == 0 && cq->bl_n > 0)
		ret = -FI_EAGAIN;
	if (ret == 0) {
		n = dpdat_cq_poll(cq->cq, cq->backlog, DF_CQ_BACKLOG);
		if (n > 0) {
			cq->bl_head = 0;
			cq->bl_n = (unsigned int)n;
			ret = -FI_EAGAIN;
		}
	}
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

static int
cq_control(struct fid *fid, int command, void *arg)
{
	struct df_cq *cq = container_of(fid, struct df_cq, cq_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		if (cq->wait_obj != FI_WAIT_FD || arg == NULL)
			return -FI_ENODATA;
		*(int *)arg = dpdat_cq_fd(cq->cq);
		return 0;
	case FI_GETWAITOBJ:
		if (arg == NULL)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = cq->wait_obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = df_no_bind,
	.control = cq_control,
	.ops_open = df_no_ops_open,
};

int
df_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
	   struct fid_cq **cq_fid, void *context)
{
	struct df_domain *dom = container_of(domain, struct df_domain,
					     domain_fid);
	struct df_cq *cq;
	enum fi_cq_format fmt;
	enum fi_wait_obj wait;

	if (attr == NULL || cq_fid == NULL)
		return -FI_EINVAL;
	fmt = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT :
						    attr->format;
	if (entry_size(fmt) == 0 || attr->flags != 0 ||
	    attr->wait_cond != FI_CQ_COND_NONE || attr->wait_set != NULL)
		return -FI_EINVAL;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_YIELD:
		wait = attr->wait_obj;
		break;
	case FI_WAIT_FD:
		/* with manual progress nothing would write it while the
		 * application sleeps on it */
		if (!dom->dev->auto_progress) {
			DF_WARN(FI_LOG_CQ, "FI_WAIT_FD needs "
				"FI_DPDAT_PROGRESS=auto or thread\n");
			return -FI_ENOSYS;
		}
		wait = FI_WAIT_FD;
		break;
	case FI_WAIT_UNSPEC:
		/* sread: the eventfd, or (manual) a wait that runs the
		 * engine */
		wait = dom->dev->auto_progress ? FI_WAIT_FD : FI_WAIT_UNSPEC;
		break;
	default:
		return -FI_ENOSYS;	/* wait sets, mutex/cond */
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return -FI_ENOMEM;
	/* a size asked for every connection there might be (ofi_rxm asks
	 * 2 x 1024 x the queue depth) is cut to DF_CQ_MAX: a CQ holds the
	 * completions of the work posted, which the queues bound */
	cq->cq = dpdat_cq_create(dom->dev->dev, attr->size == 0 ? DF_CQ_SIZE :
				 (uint32_t)RTE_MIN(attr->size,
						   (size_t)DF_CQ_MAX));
	if (cq->cq == NULL) {
		int err = rte_errno;

		free(cq);
		return df_errno(err);
	}
	if (wait == FI_WAIT_FD)	/* written for every completion from now */
		(void)dpdat_cq_fd(cq->cq);
	pthread_mutex_init(&cq->lock, NULL);
	cq->domain = dom;
	cq->format = fmt;
	cq->wait_obj = wait;
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &cq_fi_ops;
	cq->cq_fid.ops = &cq_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*cq_fid = &cq->cq_fid;
	return 0;
}
