/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Shared receive queues over dpdat SRQs.
 *
 * Records. A posted receive is recorded (cookie, length) in a slot taken
 * from the SRQ's free list; its wr_id is DD_WR_ID(DD_MAX_EP + table index,
 * generation, slot), which evd.c tells from an EP's by the index
 * (DD_WR_OWNER()) to call this file's converter.
 * Completions come back in any order (each on the CQ of the EP whose QP
 * took the receive), so each gives its own slot back. The completion's EP
 * is the one whose QP number the native completion carries
 * (dd_ep_of_qpn()).
 *
 * Limits. max_recv_dtos, the DAT limit, counts the receives posted and not
 * completed (outstanding). The native SRQ, and the slot array, are the
 * power of two >= max(2 * max_recv_dtos, 256): dat_srq_resize() moves the
 * DAT limit within that capacity (grows or shrinks, never below the
 * outstanding receives) and refuses beyond it, DAT_INSUFFICIENT_RESOURCES.
 *
 * Asynchronous events, on the IA's async EVD:
 *   - the low watermark (armed by dat_srq_set_lw(), a native
 *     dpdat_srq_arm(); srq_create only records its attribute): once
 *     fewer than low_watermark receives wait in the SRQ, one
 *     DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR with the SRQ as dat_handle
 *     and reason DAT_SRQ_LOW_WATERMARK_EVENT, per setting;
 *   - when an EP on an SRQ is disconnected (DISCONNECTED or BROKEN),
 *     DAT_ASYNC_ERROR_EP_BROKEN with the EP as dat_handle and reason
 *     DAT_EP_TRANSFER_TO_ERROR: no more of the SRQ's receives reach it, as
 *     verbs' "last WQE reached" says (dtestsrq waits for this event after
 *     each disconnection).
 * Both are pushed when the consumer takes the event they follow from its
 * EVD (srq_event_taken(): the DTO completion that shows the crossing,
 * the connection event), with no lock held, so that they come at the pace
 * the consumer reads: a burst of disconnections never overflows a small
 * async EVD.
 *
 * Locks: the SRQ lock is a leaf (taken under EVD locks by
 * srq_dto_event()).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "dd_calls.h"
#include "dd_ep.h"

#define SRQ_NATIVE_MIN	256u

static struct dd_srq *srq_table[DD_MAX_SRQ];
static pthread_mutex_t srq_table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_gen;

static int
srq_index_get(struct dd_srq *srq)
{
	int i;

	pthread_mutex_lock(&srq_table_lock);
	for (i = 0; i < DD_MAX_SRQ && srq_table[i] != NULL; i++)
		;
	if (i < DD_MAX_SRQ)
		srq_table[i] = srq;
	pthread_mutex_unlock(&srq_table_lock);
	return i < DD_MAX_SRQ ? i : -1;
}

static void
srq_index_put(struct dd_srq *srq)
{
	pthread_mutex_lock(&srq_table_lock);
	srq_table[srq->index] = NULL;
	pthread_mutex_unlock(&srq_table_lock);
}

static uint32_t
native_size(DAT_COUNT n)
{
	uint32_t want = RTE_MAX(2 * (uint32_t)n, SRQ_NATIVE_MIN);

	return rte_align32pow2(want);
}

static void
pz_use(struct dd_pz *pz, int d)
{
	__atomic_add_fetch(&pz->users, (uint32_t)d, __ATOMIC_RELAXED);
}

static void
records_free(struct dd_srq *srq)
{
	free(srq->wr);
	free(srq->free_slot);
	srq->wr = NULL;
	srq->free_slot = NULL;
}

static int
records_alloc(struct dd_srq *srq)
{
	srq->wr = calloc(srq->size, sizeof(*srq->wr));
	srq->free_slot = calloc(srq->size, sizeof(*srq->free_slot));
	if (srq->wr == NULL || srq->free_slot == NULL) {
		records_free(srq);
		return -1;
	}
	for (uint32_t i = 0; i < srq->size; i++)
		srq->free_slot[i] = srq->size - 1 - i;
	srq->nfree = srq->size;
	return 0;
}

static DAT_RETURN
check_srq_attr(const DAT_SRQ_ATTR *a)
{
	if (a->max_recv_dtos < 1 || a->max_recv_dtos > DD_MAX_SRQ_DTOS ||
	    a->max_recv_iov < 0 || a->max_recv_iov > DD_MAX_IOV ||
	    a->low_watermark < 0 || a->low_watermark > a->max_recv_dtos)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	return DAT_SUCCESS;
}

/* The low watermark event, when the native SRQ says it was crossed since
 * it was armed and nobody reported it yet. No lock held. */
static void
lw_report(struct dd_srq *srq)
{
	struct dpdat_srq_info si;
	struct dd_evd *async;
	DAT_EVENT ev;
	bool fire;

	pthread_mutex_lock(&srq->lock);
	fire = srq->lw_armed && dpdat_srq_query(srq->srq, &si) == 0 &&
	       si.limit_reached;
	if (fire)
		srq->lw_armed = false;
	pthread_mutex_unlock(&srq->lock);
	async = __atomic_load_n(&srq->h.ia->async_evd, __ATOMIC_ACQUIRE);
	if (!fire || async == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR;
	ev.event_data.asynch_error_event_data.dat_handle = (DAT_HANDLE)srq;
	ev.event_data.asynch_error_event_data.reason =
		DAT_SRQ_LOW_WATERMARK_EVENT;
	DD_LOG(DEBUG, "srq %p: below the low watermark %d",
		(void *)srq, srq->param.low_watermark);
	dd_evd_push(async, &ev);
}

/* Arm the native watermark (lw 0 disarms). SRQ lock held. */
static int
lw_arm(struct dd_srq *srq, DAT_COUNT lw)
{
	int ret = dpdat_srq_arm(srq->srq, (uint32_t)lw);

	if (ret == 0) {
		srq->param.low_watermark = lw;
		srq->lw_armed = lw != 0;
	}
	return ret;
}

DAT_RETURN DAT_API
dd_srq_create(DAT_IA_HANDLE iah, DAT_PZ_HANDLE pzh, DAT_SRQ_ATTR *attr,
	      DAT_SRQ_HANDLE *out)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	struct dd_pz *pz = dd_obj_get(pzh, DD_PZ);
	struct dpdat_srq_conf sc = { 0 };
	struct dd_srq *srq;
	DAT_RETURN ret;

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (pz == NULL || pz->h.ia != ia)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
	if (attr == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	ret = check_srq_attr(attr);
	if (ret != DAT_SUCCESS)
		return ret;
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	srq = dd_obj_new(ia, DD_SRQ, sizeof(*srq));
	if (srq == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	srq->index = srq_index_get(srq);
	if (srq->index < 0) {
		ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_SRQ;
		goto err_obj;
	}
	pthread_mutex_init(&srq->lock, NULL);
	srq->gen = __atomic_add_fetch(&next_gen, 1, __ATOMIC_RELAXED);
	srq->size = native_size(attr->max_recv_dtos);
	if (records_alloc(srq) != 0) {
		ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
		goto err_index;
	}
	sc.max_wr = srq->size;
	srq->srq = dpdat_srq_create(ia->dev, &sc);
	if (srq->srq == NULL) {
		ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_SRQ;
		goto err_records;
	}
	srq->pz = pz;
	srq->param.max_recv_dtos = attr->max_recv_dtos;
	srq->param.max_recv_iov = attr->max_recv_iov;
	/* recorded, not armed: with nothing posted yet any watermark would
	 * be crossed at once; dat_srq_set_lw() arms it */
	srq->param.low_watermark = attr->low_watermark;
	pz_use(pz, 1);
	DD_LOG(DEBUG, "srq %p: %d receives x %d iov, "
		"native %u", (void *)srq, attr->max_recv_dtos,
		attr->max_recv_iov, srq->size);
	*out = srq;
	return DAT_SUCCESS;

err_records:
	records_free(srq);
err_index:
	srq_index_put(srq);
err_obj:
	dd_obj_free(srq);
	return ret;
}

DAT_RETURN DAT_API
dd_srq_free(DAT_SRQ_HANDLE h)
{
	struct dd_srq *srq = dd_obj_get(h, DD_SRQ);

	if (srq == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE) != 0 ||
	    dpdat_srq_free(srq->srq) != 0)
		return DD_BAD_STATE(DAT_INVALID_STATE_SRQ_IN_USE);
	srq->srq = NULL;
	/* completions still queued for its slots match no table entry */
	srq_index_put(srq);
	pz_use(srq->pz, -1);
	pthread_mutex_lock(&srq->lock);
	records_free(srq);
	pthread_mutex_unlock(&srq->lock);
	dd_obj_free(srq);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_srq_post_recv(DAT_SRQ_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
		 DAT_DTO_COOKIE cookie)
{
	/* -EBADF: the native SRQ was freed under us, as when srq->wr is
	 * found NULL */
	static const struct dpdat_dat_sub post_sub = {
		.handle = DAT_INVALID_HANDLE_SRQ,
		.res = DAT_RESOURCE_SRQ,
	};
	struct dd_srq *srq = dd_obj_get(h, DD_SRQ);
	struct dpdat_sge sge[DD_MAX_IOV];
	struct dpdat_recv_wr wr = { .sg_list = sge };
	DAT_SEG_LENGTH total;
	DAT_RETURN ret;
	struct dd_wr *w;
	uint32_t slot;
	int rc;

	if (srq == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	ret = dd_to_sges(n, iov, srq->param.max_recv_iov, sge, &total);
	if (ret != DAT_SUCCESS)
		return ret;
	wr.num_sge = (uint32_t)n;
	pthread_mutex_lock(&srq->lock);
	if (srq->wr == NULL) {		/* freed meanwhile */
		pthread_mutex_unlock(&srq->lock);
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	}
	if (srq->outstanding >= (uint32_t)srq->param.max_recv_dtos ||
	    srq->nfree == 0) {
		pthread_mutex_unlock(&srq->lock);
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_SRQ;
	}
	slot = srq->free_slot[--srq->nfree];
	w = &srq->wr[slot];
	memset(w, 0, sizeof(*w));
	w->cookie = cookie;
	w->length = total;
	w->op = DAT_DTO_RECEIVE;
	w->signaled = true;
	wr.wr_id = DD_WR_ID(DD_MAX_EP + srq->index, srq->gen, slot);
	rc = dpdat_post_srq_recv(srq->srq, &wr);
	if (rc == 0) {
		srq->outstanding++;
	} else {
		srq->free_slot[srq->nfree++] = slot;
		ret = dpdat_dat_err(rc, &post_sub);
	}
	pthread_mutex_unlock(&srq->lock);
	return ret;
}

DAT_RETURN DAT_API
dd_srq_query(DAT_SRQ_HANDLE h, DAT_SRQ_PARAM_MASK mask, DAT_SRQ_PARAM *p)
{
	struct dd_srq *srq = dd_obj_get(h, DD_SRQ);
	struct dpdat_srq_info si = { 0 };

	if (srq == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	if (mask & ~(DAT_SRQ_PARAM_MASK)DAT_SRQ_FIELD_ALL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	pthread_mutex_lock(&srq->lock);
	dpdat_srq_query(srq->srq, &si);
	*p = srq->param;
	p->ia_handle = dd_consumer_ia(srq->h.ia);
	p->srq_state = DAT_SRQ_STATE_OPERATIONAL;
	p->pz_handle = srq->pz;
	p->available_dto_count = (DAT_COUNT)si.posted;	/* not taken */
	p->outstanding_dto_count = (DAT_COUNT)srq->outstanding;
	pthread_mutex_unlock(&srq->lock);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_srq_resize(DAT_SRQ_HANDLE h, DAT_COUNT n)
{
	struct dd_srq *srq = dd_obj_get(h, DD_SRQ);
	DAT_RETURN ret = DAT_SUCCESS;

	if (srq == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	if (n < 1 || n > DD_MAX_SRQ_DTOS)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	pthread_mutex_lock(&srq->lock);
	if ((uint32_t)n < srq->outstanding)
		ret = DD_BAD_STATE(0);	/* would drop posted receives */
	else if ((uint32_t)n > srq->size)
		ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_SRQ;
	else
		srq->param.max_recv_dtos = n;
	pthread_mutex_unlock(&srq->lock);
	return ret;
}

DAT_RETURN DAT_API
dd_srq_set_lw(DAT_SRQ_HANDLE h, DAT_COUNT lw)
{
	struct dd_srq *srq = dd_obj_get(h, DD_SRQ);
	int rc;

	if (srq == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	pthread_mutex_lock(&srq->lock);
	rc = lw < 0 || lw > srq->param.max_recv_dtos ? -EINVAL :
	     lw_arm(srq, lw);
	pthread_mutex_unlock(&srq->lock);
	if (rc != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	lw_report(srq);		/* below it already: at once */
	return DAT_SUCCESS;
}

/* ---- completions and the events that follow ---- */

/* The converter of an SRQ's completions (wr_ids from DD_MAX_EP up), which
 * evd.c calls with the EVD lock held. */
static bool
srq_dto_event(struct dd_evd *evd, const struct dpdat_wc *wc, DAT_EVENT *ev)
{
	uint64_t index = DD_WR_INDEX(wc->wr_id) - DD_MAX_EP;
	uint32_t slot = DD_WR_SLOT(wc->wr_id);
	struct dd_srq *srq = index < DD_MAX_SRQ ?
			     __atomic_load_n(&srq_table[index],
					     __ATOMIC_ACQUIRE) : NULL;
	struct dd_ep *ep;
	struct dd_wr w;

	if (srq == NULL || dd_obj_get(srq, DD_SRQ) == NULL ||
	    srq->gen != DD_WR_GEN(wc->wr_id))
		return false;	/* freed or recycled since */
	pthread_mutex_lock(&srq->lock);
	if (srq->wr == NULL || slot >= srq->size) {
		pthread_mutex_unlock(&srq->lock);
		return false;
	}
	w = srq->wr[slot];
	srq->free_slot[srq->nfree++] = slot;
	srq->outstanding--;
	pthread_mutex_unlock(&srq->lock);
	ep = dd_ep_of_qpn(evd->h.ia, wc->qp_num);
	DD_LOG(DEBUG, "srq %p recv completion slot %u "
		"(qp %u, ep %p, %u bytes): %s", (void *)srq, slot,
		wc->qp_num, (void *)ep, wc->byte_len,
		dpdat_wc_status_str(wc->status));
	if (ep == NULL || dd_obj_get(ep, DD_EP) == NULL)
		return false;	/* its EP went away */
	memset(ev, 0, sizeof(*ev));
	ev->event_number = DAT_DTO_COMPLETION_EVENT;
	ev->event_data.dto_completion_event_data = (DAT_DTO_COMPLETION_EVENT_DATA){
		.ep_handle = ep,
		.user_cookie = w.cookie,
		.status = dpdat_dat_dto_status(wc->status),
		.transfered_length = wc->byte_len,
		.operation = DAT_DTO_RECEIVE,
	};
	dd_dto_ext(ev, wc);
	return true;
}

static void
ep_broken(struct dd_ep *ep)
{
	struct dd_evd *async = __atomic_load_n(&ep->h.ia->async_evd,
					       __ATOMIC_ACQUIRE);
	DAT_EVENT ev;

	if (async == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_ASYNC_ERROR_EP_BROKEN;
	ev.event_data.asynch_error_event_data.dat_handle = (DAT_HANDLE)ep;
	ev.event_data.asynch_error_event_data.reason = DAT_EP_TRANSFER_TO_ERROR;
	DD_LOG(DEBUG, "ep %p: off its SRQ (EP_BROKEN)",
		(void *)ep);
	dd_evd_push(async, &ev);
}

/* An event the consumer took from an EVD (evd.c's taken hook). */
static void
srq_event_taken(const DAT_EVENT *ev)
{
	struct dd_srq *srq;
	struct dd_ep *ep;

	switch ((int)ev->event_number) {
	case DAT_DTO_COMPLETION_EVENT:
	case DAT_IB_DTO_EVENT:		/* a receive with immediate data */
		if (ev->event_data.dto_completion_event_data.operation !=
		    DAT_DTO_RECEIVE &&
		    ev->event_data.dto_completion_event_data.operation !=
		    (DAT_DTOS)DAT_IB_DTO_RECV_IMMED &&
		    ev->event_data.dto_completion_event_data.operation !=
		    (DAT_DTOS)DAT_IB_DTO_RECV_MSG_IMMED)
			return;
		ep = dd_obj_get(ev->event_data.dto_completion_event_data.ep_handle,
				DD_EP);
		srq = ep != NULL ? __atomic_load_n(&ep->srq, __ATOMIC_ACQUIRE) :
		      NULL;
		if (srq != NULL && dd_obj_get(srq, DD_SRQ) != NULL)
			lw_report(srq);
		return;
	case DAT_CONNECTION_EVENT_DISCONNECTED:
	case DAT_CONNECTION_EVENT_BROKEN:
		ep = dd_obj_get(ev->event_data.connect_event_data.ep_handle,
				DD_EP);
		if (ep != NULL && __atomic_load_n(&ep->srq, __ATOMIC_ACQUIRE))
			ep_broken(ep);
		return;
	default:
		return;
	}
}

RTE_INIT(dd_srq_init)
{
	dd_evd_set_dto_conv(DD_DTO_SRQ, srq_dto_event);
	dd_evd_set_taken(srq_event_taken);
}
