/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Endpoints: a dpdat RC QP each, data transfers, and the conversion of
 * dpdat completions into DAT DTO events.
 *
 * A posted WR is recorded in the EP's send or receive queue (cookie,
 * length, operation); its wr_id names the EP (its index in a table), the
 * incarnation of its QP and the slot (DD_WR_ID(), dd.h):
 *     wr_id = index << 48 | generation << 16 | slot
 * Receives of an EP on a shared receive queue are the SRQ's (srq.c): their
 * wr_ids have indices from DD_MAX_EP up, and the EP of their completion is
 * found from the QP number (dd_ep_of_qpn(), a small map of SRQ EPs).
 * Generations come from one process-wide 32-bit counter, so a completion
 * that arrives after its EP was freed, reset, or its memory recycled for
 * another EP (obj.c reuses retired objects) matches nothing and is
 * dropped. Completions of one queue arrive in order, so a completion of
 * slot k also retires the unsignaled WRs before it.
 *
 * The EP state changes on consumer calls and on CM events (drained under
 * an EVD lock); it is an atomic and changes by compare-and-swap, so no EP
 * lock is taken under an EVD lock.
 */

#include <errno.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "dd_calls.h"
#include "dd_ep.h"

#define EP_TABLE_SIZE	DD_MAX_EP
#define QPN_BUCKETS	256

static struct dd_ep *ep_table[EP_TABLE_SIZE];
static pthread_mutex_t ep_table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_gen;
/* SRQ EPs by QP number (and IA: two devices may hand out the same
 * number), under ep_table_lock, a leaf taken under EVD locks */
static struct dd_ep *qpn_map[QPN_BUCKETS];

/* A table index for a new EP; -1 when all are taken. */
static int
ep_index_get(struct dd_ep *ep)
{
	int i;

	pthread_mutex_lock(&ep_table_lock);
	for (i = 0; i < EP_TABLE_SIZE && ep_table[i] != NULL; i++)
		;
	if (i < EP_TABLE_SIZE)
		ep_table[i] = ep;
	pthread_mutex_unlock(&ep_table_lock);
	return i < EP_TABLE_SIZE ? i : -1;
}

static void
ep_index_put(struct dd_ep *ep)
{
	pthread_mutex_lock(&ep_table_lock);
	ep_table[ep->index] = NULL;
	pthread_mutex_unlock(&ep_table_lock);
}

static void
qpn_map_add(struct dd_ep *ep)
{
	struct dd_ep **b = &qpn_map[ep->qpn % QPN_BUCKETS];

	pthread_mutex_lock(&ep_table_lock);
	ep->qpn_next = *b;
	*b = ep;
	pthread_mutex_unlock(&ep_table_lock);
}

static void
qpn_map_del(struct dd_ep *ep)
{
	struct dd_ep **pp = &qpn_map[ep->qpn % QPN_BUCKETS];

	pthread_mutex_lock(&ep_table_lock);
	while (*pp != NULL && *pp != ep)
		pp = &(*pp)->qpn_next;
	if (*pp != NULL)
		*pp = ep->qpn_next;
	ep->qpn_next = NULL;
	pthread_mutex_unlock(&ep_table_lock);
}

struct dd_ep *
dd_ep_of_qpn(const struct dd_ia *ia, uint32_t qpn)
{
	struct dd_ep *ep;

	pthread_mutex_lock(&ep_table_lock);
	for (ep = qpn_map[qpn % QPN_BUCKETS]; ep != NULL; ep = ep->qpn_next)
		if (ep->qpn == qpn && ep->h.ia == ia)
			break;
	pthread_mutex_unlock(&ep_table_lock);
	return ep;
}

static const DAT_EP_ATTR ep_defaults = {
	.service_type = DAT_SERVICE_TYPE_RC,
	.max_message_size = DD_MAX_RDMA_SIZE,
	.max_rdma_size = DD_MAX_RDMA_SIZE,
	.qos = DAT_QOS_BEST_EFFORT,
	.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG,
	.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG,
	.max_recv_dtos = 256,
	.max_request_dtos = 256,
	.max_recv_iov = DD_MAX_IOV,
	.max_request_iov = DD_MAX_IOV,
	.max_rdma_read_in = DD_MAX_RDMA_READ_IN,
	.max_rdma_read_out = DD_MAX_RDMA_READ_IN,
	.max_rdma_read_iov = DD_MAX_IOV,
	.max_rdma_write_iov = DD_MAX_IOV,
};

DAT_EP_STATE
dd_ep_state(const struct dd_ep *ep)
{
	return __atomic_load_n(&ep->state, __ATOMIC_ACQUIRE);
}

bool
dd_ep_move(struct dd_ep *ep, DAT_EP_STATE from, DAT_EP_STATE to)
{
	return __atomic_compare_exchange_n(&ep->state, &from, to, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void
dd_ep_set_state(struct dd_ep *ep, DAT_EP_STATE to)
{
	__atomic_store_n(&ep->state, to, __ATOMIC_RELEASE);
}

static uint32_t
pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int
wq_init(struct dd_wr_queue *q, uint32_t n)
{
	uint32_t size = pow2(n);

	if (q->wr == NULL || q->size < size) {
		free(q->wr);
		q->wr = calloc(size, sizeof(*q->wr));
		if (q->wr == NULL)
			return -ENOMEM;
	}
	q->size = size;
	q->head = q->tail = 0;
	return 0;
}

/* Wait until no completion of the EVD is being converted. */
static void
evd_quiesce(struct dd_evd *evd)
{
	if (evd != NULL) {
		pthread_mutex_lock(&evd->lock);
		pthread_mutex_unlock(&evd->lock);
	}
}

/* A new generation: completions of the EP's WRs so far no longer match.
 * They are converted under their EVD's lock after a check of the
 * generation (ep_dto_event()): once each EVD's lock has been taken, none
 * still reads the work-request records, which the caller may then replace
 * or free. Call with ep->lock held, before the EVDs change. */
static void
ep_retire_wrs(struct dd_ep *ep)
{
	__atomic_store_n(&ep->gen, __atomic_add_fetch(&next_gen, 1,
			 __ATOMIC_RELAXED), __ATOMIC_RELEASE);
	evd_quiesce(ep->req_evd);
	evd_quiesce(ep->recv_evd);
}

/* A new QP for the EP (create, reset): the old one's completions still in
 * flight no longer match the generation. Call with ep->lock held. */
static DAT_RETURN
qp_renew(struct dd_ep *ep)
{
	struct dpdat_qp_conf qc = { 0 };
	const DAT_EP_ATTR *a = &ep->param.ep_attr;
	struct dpdat_qp_info qi;

	if (ep->conn != NULL) {
		dd_conn_forget(ep->conn);
		/* one that was established (or accepted), whatever the EP's
		 * state says (its event not taken yet), ends: else it would
		 * stay, and hold its EVD, for good */
		dpdat_cm_disconnect(ep->conn, NULL, 0);
		if (dpdat_cm_conn_free(ep->conn) != 0)
			dd_conn_zombie(ep->conn);	/* freed when closed */
		ep->conn = NULL;
	}
	if (ep->qp != NULL) {
		if (ep->srq != NULL)
			qpn_map_del(ep);
		dpdat_qp_free(ep->qp);
		ep->qp = NULL;
	}
	ep_retire_wrs(ep);
	if (ep->pz == NULL || ep->req_evd == NULL || ep->recv_evd == NULL)
		return DAT_SUCCESS;	/* unconfigured: no QP yet */
	/* with an SRQ the receive queue is the SRQ's (no records here) */
	if (wq_init(&ep->sq, (uint32_t)a->max_request_dtos) != 0 ||
	    wq_init(&ep->rq, ep->srq != NULL ? 1 :
		    (uint32_t)a->max_recv_dtos) != 0)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	qc.pz = ep->pz->pz;
	qc.send_cq = ep->req_evd->cq;
	qc.recv_cq = ep->recv_evd->cq;
	qc.srq = ep->srq != NULL ? ep->srq->srq : NULL;
	/* the EP's own rings enforce the DAT limits; the native queues are
	 * twice as deep, so that they never refuse what the EP admitted
	 * (dapltest -T P posts exactly max_request_dtos) */
	qc.max_send_wr = 2 * ep->sq.size;
	qc.max_recv_wr = 2 * ep->rq.size;
	ep->qp = dpdat_qp_create(ep->h.ia->dev, &qc);
	if (ep->qp == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP;
	if (ep->srq != NULL) {
		dpdat_qp_query(ep->qp, &qi);
		ep->qpn = qi.qpn;
		qpn_map_add(ep);
	}
	return DAT_SUCCESS;
}

static bool
configured(const struct dd_ep *ep)
{
	return ep->qp != NULL && ep->conn_evd != NULL;
}

/* With an SRQ, max_recv_dtos is not the EP's to use (the SRQ's is). An
 * EP without a request EVD may ask for no request DTOs, as OFA DAPL lets
 * it. The IB extension's unreliable datagrams are a service dpdat lacks:
 * DAT_MODEL_NOT_SUPPORTED, not an invalid argument. */
static DAT_RETURN
check_attr(const DAT_EP_ATTR *a, bool srq, bool req_evd)
{
	if (a->service_type == (DAT_SERVICE_TYPE)DAT_IB_SERVICE_TYPE_UD)
		return DAT_MODEL_NOT_SUPPORTED;
	if (a->service_type != DAT_SERVICE_TYPE_RC ||
	    a->max_message_size > DD_MAX_RDMA_SIZE ||
	    a->max_rdma_size > DD_MAX_RDMA_SIZE ||
	    (!srq && (a->max_recv_dtos < 0 ||
		      a->max_recv_dtos > DD_MAX_DTOS)) ||
	    a->max_request_dtos < (req_evd ? 1 : 0) ||
	    a->max_request_dtos > DD_MAX_DTOS ||
	    a->max_recv_iov < 0 || a->max_recv_iov > DD_MAX_IOV ||
	    a->max_request_iov < 0 || a->max_request_iov > DD_MAX_IOV ||
	    a->max_rdma_read_in < 0 ||
	    a->max_rdma_read_in > DD_MAX_RDMA_READ_IN ||
	    a->max_rdma_read_out < 0 ||
	    a->max_rdma_read_out > DD_MAX_RDMA_READ_IN ||
	    (a->qos & ~DD_QOS_ALL) != 0)	/* any class: cm.c */
		return DAT_INVALID_PARAMETER;
	return DAT_SUCCESS;
}

static void
evd_use(struct dd_evd *evd, int d)
{
	if (evd != NULL)
		__atomic_add_fetch(&evd->users, (uint32_t)d, __ATOMIC_RELAXED);
}

static void
pz_use(struct dd_pz *pz, int d)
{
	if (pz != NULL)
		__atomic_add_fetch(&pz->users, (uint32_t)d, __ATOMIC_RELAXED);
}

/* Look up the PZ and EVD handles of create and modify; NULL handles give
 * NULL objects. */
static DAT_RETURN
lookup(DAT_PZ_HANDLE pzh, DAT_EVD_HANDLE recvh, DAT_EVD_HANDLE reqh,
       DAT_EVD_HANDLE connh, struct dd_pz **pz, struct dd_evd **recv,
       struct dd_evd **req, struct dd_evd **conn)
{
	*pz = NULL;
	*recv = *req = *conn = NULL;
	if (pzh != DAT_HANDLE_NULL && (*pz = dd_obj_get(pzh, DD_PZ)) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
	if (recvh != DAT_HANDLE_NULL &&
	    (*recv = dd_evd_get(recvh, DAT_EVD_DTO_FLAG)) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EVD_RECV);
	if (reqh != DAT_HANDLE_NULL &&
	    (*req = dd_evd_get(reqh, DAT_EVD_DTO_FLAG)) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST);
	if (connh != DAT_HANDLE_NULL &&
	    (*conn = dd_evd_get(connh, DAT_EVD_CONNECTION_FLAG)) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EVD_CONN);
	return DAT_SUCCESS;
}

static void
param_sync(struct dd_ep *ep)
{
	DAT_EP_PARAM *p = &ep->param;

	p->ia_handle = dd_consumer_ia(ep->h.ia);
	p->local_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ep->h.ia->addr;
	p->remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ep->remote;
	p->remote_port_qual = ep->remote_qual;
	p->pz_handle = ep->pz;
	p->recv_evd_handle = ep->recv_evd;
	p->request_evd_handle = ep->req_evd;
	p->connect_evd_handle = ep->conn_evd;
	p->srq_handle = ep->srq;
}

/* ep_create and ep_create_with_srq; bad attributes are argument attr_arg,
 * a NULL out argument attr_arg + 1. */
static DAT_RETURN
ep_new(struct dd_ia *ia, DAT_PZ_HANDLE pzh, DAT_EVD_HANDLE recvh,
       DAT_EVD_HANDLE reqh, DAT_EVD_HANDLE connh, struct dd_srq *srq,
       const DAT_EP_ATTR *attr, DAT_RETURN attr_arg, DAT_EP_HANDLE *out)
{
	struct dd_pz *pz;
	struct dd_evd *recv, *req, *conn;
	struct dd_ep *ep;
	DAT_RETURN ret;

	ret = lookup(pzh, recvh, reqh, connh, &pz, &recv, &req, &conn);
	if (ret != DAT_SUCCESS)
		return ret;
	/* the engine checks an SRQ receive's keys with the PZ of the EP
	 * that takes it: they must be the SRQ's */
	if (srq != NULL && pz != NULL && pz != srq->pz)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (attr != NULL) {
		ret = check_attr(attr, srq != NULL, req != NULL);
		if (ret != DAT_SUCCESS)
			return ret == DAT_MODEL_NOT_SUPPORTED ? ret :
			       DD_BAD_PARAM(attr_arg);
	}
	if (out == NULL)
		return DD_BAD_PARAM(attr_arg + 1);
	ep = dd_obj_new(ia, DD_EP, sizeof(*ep));
	if (ep == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	ep->index = ep_index_get(ep);
	if (ep->index < 0) {
		dd_obj_free(ep);
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP;
	}
	pthread_mutex_init(&ep->lock, NULL);
	ep->param.ep_attr = attr != NULL ? *attr : ep_defaults;
	ep->pz = pz;
	ep->recv_evd = recv;
	ep->req_evd = req;
	ep->conn_evd = conn;
	ep->srq = srq;
	ep->hard_hw = DAT_WATERMARK_INFINITE;
	if (srq != NULL) {
		ep->param.ep_attr.max_recv_dtos = 0;	/* the SRQ's */
		ep->param.ep_attr.srq_soft_hw = DAT_WATERMARK_INFINITE;
	}
	ep->remote.sa_family = AF_INET;
	ret = qp_renew(ep);
	if (ret != DAT_SUCCESS) {
		free(ep->sq.wr);
		free(ep->rq.wr);
		ep->sq.wr = ep->rq.wr = NULL;
		ep_index_put(ep);
		dd_obj_free(ep);
		return ret;
	}
	if (srq != NULL)
		dd_srq_use(srq, 1);
	pz_use(pz, 1);
	evd_use(recv, 1);
	evd_use(req, 1);
	evd_use(conn, 1);
	dd_ep_set_state(ep, configured(ep) ? DAT_EP_STATE_UNCONNECTED :
			DAT_EP_STATE_UNCONFIGURED_UNCONNECTED);
	param_sync(ep);
	DD_LOG(DEBUG, "ep %p: %d requests x %d iov, %d "
		"receives x %d iov, RDMA reads %d in %d out",
		(void *)ep, ep->param.ep_attr.max_request_dtos,
		ep->param.ep_attr.max_request_iov,
		ep->param.ep_attr.max_recv_dtos,
		ep->param.ep_attr.max_recv_iov,
		ep->param.ep_attr.max_rdma_read_in,
		ep->param.ep_attr.max_rdma_read_out);
	*out = ep;
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_ep_create(DAT_IA_HANDLE iah, DAT_PZ_HANDLE pzh, DAT_EVD_HANDLE recvh,
	     DAT_EVD_HANDLE reqh, DAT_EVD_HANDLE connh, const DAT_EP_ATTR *attr,
	     DAT_EP_HANDLE *out)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return ep_new(ia, pzh, recvh, reqh, connh, NULL, attr,
		      DAT_INVALID_ARG6, out);
}

DAT_RETURN DAT_API
dd_ep_create_with_srq(DAT_IA_HANDLE iah, DAT_PZ_HANDLE pzh,
		      DAT_EVD_HANDLE recvh, DAT_EVD_HANDLE reqh,
		      DAT_EVD_HANDLE connh, DAT_SRQ_HANDLE srqh,
		      const DAT_EP_ATTR *attr, DAT_EP_HANDLE *out)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	struct dd_srq *srq = dd_obj_get(srqh, DD_SRQ);

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (srq == NULL || srq->h.ia != ia)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	return ep_new(ia, pzh, recvh, reqh, connh, srq, attr,
		      DAT_INVALID_ARG7, out);
}

DAT_RETURN DAT_API
dd_ep_query(DAT_EP_HANDLE h, DAT_EP_PARAM_MASK mask, DAT_EP_PARAM *p)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	(void)mask;	/* everything is cheap: fill it all */
	pthread_mutex_lock(&ep->lock);
	param_sync(ep);
	*p = ep->param;
	p->ep_state = dd_ep_state(ep);
	pthread_mutex_unlock(&ep->lock);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_ep_modify(DAT_EP_HANDLE h, DAT_EP_PARAM_MASK mask, const DAT_EP_PARAM *p)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);
	const DAT_EP_PARAM_MASK can = DAT_EP_FIELD_PZ_HANDLE |
		DAT_EP_FIELD_RECV_EVD_HANDLE | DAT_EP_FIELD_REQUEST_EVD_HANDLE |
		DAT_EP_FIELD_CONNECT_EVD_HANDLE | DAT_EP_FIELD_EP_ATTR_ALL;
	struct dd_pz *pz;
	struct dd_evd *recv, *req, *conn;
	DAT_EP_ATTR attr;
	DAT_EP_STATE st;
	DAT_RETURN ret;

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	if ((mask & ~can) != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	pthread_mutex_lock(&ep->lock);
	st = dd_ep_state(ep);
	if (st != DAT_EP_STATE_UNCONNECTED &&
	    st != DAT_EP_STATE_UNCONFIGURED_UNCONNECTED) {
		pthread_mutex_unlock(&ep->lock);
		return DD_BAD_STATE(DAT_INVALID_STATE_EP_CONNECTED);
	}
	ret = lookup(mask & DAT_EP_FIELD_PZ_HANDLE ? p->pz_handle : ep->pz,
		     mask & DAT_EP_FIELD_RECV_EVD_HANDLE ? p->recv_evd_handle :
		     ep->recv_evd,
		     mask & DAT_EP_FIELD_REQUEST_EVD_HANDLE ?
		     p->request_evd_handle : ep->req_evd,
		     mask & DAT_EP_FIELD_CONNECT_EVD_HANDLE ?
		     p->connect_evd_handle : ep->conn_evd,
		     &pz, &recv, &req, &conn);
	attr = ep->param.ep_attr;
	if (mask & DAT_EP_FIELD_EP_ATTR_ALL) {
		/* the attribute fields the mask names */
		attr = p->ep_attr;
		if (ret == DAT_SUCCESS) {
			ret = check_attr(&attr, ep->srq != NULL, req != NULL);
			if (ret != DAT_SUCCESS && ret != DAT_MODEL_NOT_SUPPORTED)
				ret = DD_BAD_PARAM(DAT_INVALID_ARG3);
		}
		if (ep->srq != NULL)
			attr.max_recv_dtos = 0;	/* the SRQ's */
	}
	/* an SRQ's receives are checked with the EP's PZ: the same */
	if (ret == DAT_SUCCESS && ep->srq != NULL && pz != NULL &&
	    pz != ep->srq->pz)
		ret = DD_BAD_PARAM(DAT_INVALID_ARG3);
	if (ret == DAT_SUCCESS) {
		ep_retire_wrs(ep);	/* the old EVDs are done with them */
		pz_use(ep->pz, -1), pz_use(pz, 1);
		evd_use(ep->recv_evd, -1), evd_use(recv, 1);
		evd_use(ep->req_evd, -1), evd_use(req, 1);
		evd_use(ep->conn_evd, -1), evd_use(conn, 1);
		ep->pz = pz;
		ep->recv_evd = recv;
		ep->req_evd = req;
		ep->conn_evd = conn;
		ep->param.ep_attr = attr;
		ret = qp_renew(ep);
		dd_ep_set_state(ep, configured(ep) ? DAT_EP_STATE_UNCONNECTED :
				DAT_EP_STATE_UNCONFIGURED_UNCONNECTED);
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

DAT_RETURN DAT_API
dd_ep_get_status(DAT_EP_HANDLE h, DAT_EP_STATE *state, DAT_BOOLEAN *recv_idle,
		 DAT_BOOLEAN *req_idle)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (state != NULL)
		*state = dd_ep_state(ep);
	if (recv_idle != NULL)
		*recv_idle = __atomic_load_n(&ep->rq.head, __ATOMIC_ACQUIRE) ==
			     ep->rq.tail;
	if (req_idle != NULL)
		*req_idle = __atomic_load_n(&ep->sq.head, __ATOMIC_ACQUIRE) ==
			    ep->sq.tail;
	return DAT_SUCCESS;
}

/* The receive buffers the EP holds, not yet completed: its own posted
 * ones; on an SRQ, the one it took for a message in progress (0 or 1: a
 * message never spans two buffers). The span is known on an SRQ only. */
DAT_RETURN DAT_API
dd_ep_recv_query(DAT_EP_HANDLE h, DAT_COUNT *nbufs, DAT_COUNT *span)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);
	struct dpdat_qp_info qi = { 0 };
	DAT_COUNT n, sp;

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (nbufs == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (span == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	pthread_mutex_lock(&ep->lock);
	if (ep->srq != NULL) {
		if (ep->qp != NULL)
			dpdat_qp_query(ep->qp, &qi);
		n = sp = (DAT_COUNT)qi.srq_held;
	} else {
		n = (DAT_COUNT)(ep->rq.tail -
				__atomic_load_n(&ep->rq.head, __ATOMIC_ACQUIRE));
		sp = DAT_VALUE_UNKNOWN;
	}
	pthread_mutex_unlock(&ep->lock);
	*nbufs = n;
	*span = sp;
	return DAT_SUCCESS;
}

/* An EP on an SRQ holds at most one of its buffers: a high watermark of 1
 * or more is never exceeded, and is only recorded. 0 would be exceeded by
 * every message, with events this provider does not generate. An EP
 * without an SRQ holds the buffers its consumer posted: no watermarks. */
DAT_RETURN DAT_API
dd_ep_set_watermark(DAT_EP_HANDLE h, DAT_COUNT soft, DAT_COUNT hard)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (soft < 0 && soft != DAT_WATERMARK_INFINITE)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (hard < 0 && hard != DAT_WATERMARK_INFINITE)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	if (ep->srq == NULL || soft == 0 || hard == 0)
		return DAT_MODEL_NOT_SUPPORTED;
	pthread_mutex_lock(&ep->lock);
	ep->param.ep_attr.srq_soft_hw = soft;
	ep->hard_hw = hard;
	pthread_mutex_unlock(&ep->lock);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_ep_reset(DAT_EP_HANDLE h)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);
	DAT_EP_STATE st;
	DAT_RETURN ret;

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	pthread_mutex_lock(&ep->lock);
	st = dd_ep_state(ep);
	if (st != DAT_EP_STATE_DISCONNECTED &&
	    st != DAT_EP_STATE_UNCONNECTED &&
	    st != DAT_EP_STATE_UNCONFIGURED_UNCONNECTED) {
		pthread_mutex_unlock(&ep->lock);
		return DD_BAD_STATE(DAT_INVALID_STATE_EP_CONNECTED);
	}
	ret = qp_renew(ep);
	dd_ep_set_state(ep, configured(ep) ? DAT_EP_STATE_UNCONNECTED :
			DAT_EP_STATE_UNCONFIGURED_UNCONNECTED);
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

DAT_RETURN DAT_API
dd_ep_free(DAT_EP_HANDLE h)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	pthread_mutex_lock(&ep->lock);
	if (ep->conn != NULL &&
	    dd_ep_state(ep) == DAT_EP_STATE_CONNECTED)
		dpdat_cm_disconnect(ep->conn, NULL, 0);	/* abrupt */
	dd_ep_set_state(ep, DAT_EP_STATE_DISCONNECTED);
	pz_use(ep->pz, -1);
	ep->pz = NULL;			/* no new QP */
	qp_renew(ep);
	evd_use(ep->recv_evd, -1);
	evd_use(ep->req_evd, -1);
	evd_use(ep->conn_evd, -1);
	ep->recv_evd = ep->req_evd = ep->conn_evd = NULL;
	if (ep->srq != NULL)		/* its QP is gone: the SRQ may go */
		dd_srq_use(ep->srq, -1);
	ep->srq = NULL;
	pthread_mutex_unlock(&ep->lock);
	ep_index_put(ep);
	/* the generation moved on in qp_renew, which also waited for the
	 * conversions already past the check, and the table no longer names
	 * the EP: no completion reaches its records now */
	free(ep->sq.wr);
	free(ep->rq.wr);
	ep->sq.wr = ep->rq.wr = NULL;
	ep->sq.size = ep->rq.size = 0;
	dd_obj_free(ep);
	return DAT_SUCCESS;
}

/* ---- posting ---- */

static bool
suppressed(const struct dd_ep *ep, DAT_COMPLETION_FLAGS f, bool recv)
{
	DAT_COMPLETION_FLAGS epf = recv ? ep->param.ep_attr.recv_completion_flags
				       : ep->param.ep_attr.request_completion_flags;

	if (f & DAT_COMPLETION_SUPPRESS_FLAG)
		return true;
	return (f & DAT_COMPLETION_UNSIGNALLED_FLAG) &&
	       (epf & DAT_COMPLETION_UNSIGNALLED_FLAG);
}

/* Record a WR in a queue; its wr_id, or 0 when the queue is full. Call
 * with ep->lock held. */
static uint64_t
wq_add(struct dd_ep *ep, struct dd_wr_queue *q, DAT_DTO_COOKIE cookie,
       DAT_SEG_LENGTH len, DAT_DTOS op, bool signaled)
{
	uint32_t head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
	uint32_t slot = q->tail & (q->size - 1);
	struct dd_wr *w = &q->wr[slot];

	if (q->tail - head >= q->size)
		return 0;
	w->cookie = cookie;
	w->length = len;
	w->op = op;
	w->ep = ep;
	w->signaled = signaled;
	return DD_WR_ID(ep->index, ep->gen, slot);
}

/* A native post's result. -EBADF would say that the QP the EP holds
 * under its lock is gone, which does not happen; were it to, the EP is
 * not ready, as for -EBUSY (a QP not in RTS), and not a bad EP handle. */
static DAT_RETURN
post_status(int ret)
{
	static const struct dpdat_dat_sub sub = {
		.res = DAT_RESOURCE_TEP,
		.state = DAT_INVALID_STATE_EP_NOTREADY,
	};

	return dpdat_dat_err(ret == -EBADF ? -EBUSY : ret, &sub);
}

/* The native opcode of a DAT request (DAT's own and the IB extensions'). */
static enum dpdat_wr_opcode
native_op(DAT_DTOS op)
{
	switch ((int)op) {
	case DAT_DTO_SEND: return DPDAT_WR_SEND;
	case DAT_DTO_RDMA_WRITE: return DPDAT_WR_RDMA_WRITE;
	case DAT_IB_DTO_RDMA_WRITE_IMMED: return DPDAT_WR_RDMA_WRITE_IMM;
	case DAT_IB_DTO_CMP_SWAP: return DPDAT_WR_ATOMIC_CMP_SWP;
	case DAT_IB_DTO_FETCH_ADD: return DPDAT_WR_ATOMIC_FETCH_ADD;
	default: return DPDAT_WR_RDMA_READ;
	}
}

static DAT_RETURN
post_request(DAT_EP_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
	     DAT_DTO_COOKIE cookie, const DAT_RMR_TRIPLET *remote,
	     DAT_COMPLETION_FLAGS flags, DAT_DTOS op,
	     const struct dd_post_ext *x)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);
	struct dpdat_sge sge[DD_MAX_IOV];
	struct dpdat_send_wr wr = { .sg_list = sge };
	const bool atomic = op == (DAT_DTOS)DAT_IB_DTO_CMP_SWAP ||
			    op == (DAT_DTOS)DAT_IB_DTO_FETCH_ADD;
	DAT_SEG_LENGTH total;
	DAT_RETURN ret;
	bool sig;

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	ret = dd_to_sges(n, iov, op == DAT_DTO_SEND ?
		      ep->param.ep_attr.max_request_iov : DD_MAX_IOV, sge,
		      &total);
	/* the extensions' count is not the second argument: say which */
	if (ret == DD_BAD_PARAM(DAT_INVALID_ARG2) && x != NULL)
		ret = DD_BAD_PARAM(iov == NULL && n > 0 ? x->iov_arg :
				   x->count_arg);
	if (ret != DAT_SUCCESS)
		return ret;
	/* an atomic's result: one local segment of 8 bytes */
	if (atomic && (n != 1 || total != 8))
		return DD_BAD_PARAM(x->iov_arg);
	if (op != DAT_DTO_SEND && remote == NULL)
		return DD_BAD_PARAM(x != NULL ? x->remote_arg :
				    DAT_INVALID_ARG5);
	if (dd_ep_state(ep) != DAT_EP_STATE_CONNECTED)
		return DD_BAD_STATE(DAT_INVALID_STATE_EP_NOTREADY);
	sig = !suppressed(ep, flags, false);
	wr.num_sge = (uint32_t)n;
	wr.opcode = native_op(op);
	if (x != NULL) {
		wr.imm_data = x->imm;
		wr.compare_add = x->compare_add;
		wr.swap = x->swap;
	}
	wr.flags = (sig ? DPDAT_SEND_SIGNALED : 0) |
		   (flags & DAT_COMPLETION_SOLICITED_WAIT_FLAG ?
		    DPDAT_SEND_SOLICITED : 0) |
		   (flags & DAT_COMPLETION_BARRIER_FENCE_FLAG ?
		    DPDAT_SEND_FENCE : 0);
	if (remote != NULL) {
		wr.remote_addr = remote->virtual_address;
		wr.rkey = remote->rmr_context;
	}
	pthread_mutex_lock(&ep->lock);
	wr.wr_id = ep->qp != NULL ?
		   wq_add(ep, &ep->sq, cookie, total, op, sig) : 0;
	if (wr.wr_id == 0) {
		pthread_mutex_unlock(&ep->lock);
		DD_LOG(DEBUG, "ep %p: send queue full",
			(void *)ep);
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP;
	}
	ret = post_status(dpdat_post_send(ep->qp, &wr));
	if (ret == DAT_SUCCESS)
		ep->sq.tail++;
	pthread_mutex_unlock(&ep->lock);
	if (ret != DAT_SUCCESS && dd_log_debug()) {
		DD_LOG(DEBUG, "ep %p: post of op %d refused (0x%x) with %u "
		       "posted", (void *)ep, op, ret,
		       ep->sq.tail - ep->sq.head);
		dpdat_qp_dump(ep->qp, rte_log_get_stream());
	}
	return ret;
}

DAT_RETURN DAT_API
dd_ep_post_send(DAT_EP_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
		DAT_DTO_COOKIE cookie, DAT_COMPLETION_FLAGS flags)
{
	return post_request(h, n, iov, cookie, NULL, flags, DAT_DTO_SEND,
			    NULL);
}

DAT_RETURN DAT_API
dd_ep_post_rdma_write(DAT_EP_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
		      DAT_DTO_COOKIE cookie, const DAT_RMR_TRIPLET *remote,
		      DAT_COMPLETION_FLAGS flags)
{
	return post_request(h, n, iov, cookie, remote, flags,
			    DAT_DTO_RDMA_WRITE, NULL);
}

DAT_RETURN DAT_API
dd_ep_post_rdma_read(DAT_EP_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
		     DAT_DTO_COOKIE cookie, const DAT_RMR_TRIPLET *remote,
		     DAT_COMPLETION_FLAGS flags)
{
	return post_request(h, n, iov, cookie, remote, flags,
			    DAT_DTO_RDMA_READ, NULL);
}

DAT_RETURN
dd_ep_post_ext(DAT_EP_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
	       DAT_DTO_COOKIE cookie, const DAT_RMR_TRIPLET *remote,
	       DAT_COMPLETION_FLAGS flags, DAT_DTOS op,
	       const struct dd_post_ext *x)
{
	return post_request(h, n, iov, cookie, remote, flags, op, x);
}

DAT_RETURN DAT_API
dd_ep_post_send_with_invalidate(DAT_EP_HANDLE h, DAT_COUNT n,
				DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				DAT_COMPLETION_FLAGS flags, DAT_BOOLEAN inv,
				DAT_RMR_CONTEXT ctx)
{
	(void)n;
	(void)iov;
	(void)cookie;
	(void)flags;
	(void)inv;
	(void)ctx;
	return dd_obj_get(h, DD_EP) == NULL ?
	       DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP) : DAT_MODEL_NOT_SUPPORTED;
}

DAT_RETURN DAT_API
dd_ep_post_rdma_read_to_rmr(DAT_EP_HANDLE h, const DAT_RMR_TRIPLET *local,
			    DAT_DTO_COOKIE cookie,
			    const DAT_RMR_TRIPLET *remote,
			    DAT_COMPLETION_FLAGS flags)
{
	(void)local;
	(void)cookie;
	(void)remote;
	(void)flags;
	return dd_obj_get(h, DD_EP) == NULL ?
	       DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP) : DAT_MODEL_NOT_SUPPORTED;
}

DAT_RETURN DAT_API
dd_ep_post_recv(DAT_EP_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
		DAT_DTO_COOKIE cookie, DAT_COMPLETION_FLAGS flags)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);
	struct dpdat_sge sge[DD_MAX_IOV];
	struct dpdat_recv_wr wr = { .sg_list = sge };
	DAT_SEG_LENGTH total;
	DAT_RETURN ret;

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	/* an EP on an SRQ receives into the SRQ's buffers only */
	if (ep->srq != NULL)
		return DAT_INVALID_STATE;
	ret = dd_to_sges(n, iov, ep->param.ep_attr.max_recv_iov, sge, &total);
	if (ret != DAT_SUCCESS)
		return ret;
	if (flags & ~(DAT_COMPLETION_SUPPRESS_FLAG |
		      DAT_COMPLETION_UNSIGNALLED_FLAG |
		      DAT_COMPLETION_EVD_THRESHOLD_FLAG))
		return DD_BAD_PARAM(DAT_INVALID_ARG5);
	wr.num_sge = (uint32_t)n;
	pthread_mutex_lock(&ep->lock);
	wr.wr_id = ep->qp != NULL ? wq_add(ep, &ep->rq, cookie, total,
					   DAT_DTO_RECEIVE, true) : 0;
	if (wr.wr_id == 0) {
		pthread_mutex_unlock(&ep->lock);
		return ep->qp == NULL ?
		       DD_BAD_STATE(DAT_INVALID_STATE_EP_UNCONFIGURED) :
		       DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP;
	}
	ret = post_status(dpdat_post_recv(ep->qp, &wr));
	if (ret == DAT_SUCCESS)
		ep->rq.tail++;
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

/* ---- completions ---- */

/* The converter of an EP's completions (wr_ids below DD_MAX_EP), which
 * evd.c calls with the EVD lock held. */
static bool
ep_dto_event(struct dd_evd *evd, const struct dpdat_wc *wc, DAT_EVENT *ev)
{
	uint64_t index = DD_WR_INDEX(wc->wr_id);
	uint32_t slot = DD_WR_SLOT(wc->wr_id);
	uint32_t gen = DD_WR_GEN(wc->wr_id);
	struct dd_ep *ep;
	bool recv = wc->opcode == DPDAT_WR_RECV ||
		    wc->opcode == DPDAT_WR_RECV_RDMA_IMM;
	struct dd_wr_queue *q;
	struct dd_wr *w;
	uint32_t head;

	(void)evd;
	if (index >= EP_TABLE_SIZE)
		return false;	/* not an EP's */
	ep = __atomic_load_n(&ep_table[index], __ATOMIC_ACQUIRE);
	if (ep == NULL || dd_obj_get(ep, DD_EP) == NULL ||
	    __atomic_load_n(&ep->gen, __ATOMIC_ACQUIRE) != gen)
		return false;	/* freed, reset or recycled since */
	q = recv ? &ep->rq : &ep->sq;
	if (slot >= q->size)
		return false;
	w = &q->wr[slot];
	/* in order: everything up to this slot is done */
	head = q->head;
	while ((head & (q->size - 1)) != slot && head != q->tail)
		head++;
	__atomic_store_n(&q->head, head + 1, __ATOMIC_RELEASE);
	DD_LOG(DEBUG, "ep %p %s completion slot %u (qp %u,"
		" op %d, %u bytes): %s", (void *)ep,
		recv ? "recv" : "send", slot, wc->qp_num, wc->opcode,
		wc->byte_len, dpdat_wc_status_str(wc->status));
	if (wc->status == DPDAT_WC_SUCCESS && !w->signaled)
		return false;
	memset(ev, 0, sizeof(*ev));
	ev->event_number = DAT_DTO_COMPLETION_EVENT;
	ev->event_data.dto_completion_event_data = (DAT_DTO_COMPLETION_EVENT_DATA){
		.ep_handle = ep,
		.user_cookie = w->cookie,
		.status = dpdat_dat_dto_status(wc->status),
		.transfered_length = recv || w->op == DAT_DTO_RDMA_READ ?
				     wc->byte_len : w->length,
		.operation = w->op,
	};
	dd_dto_ext(ev, wc);
	return true;
}

/* An IB extension's DTO event (dat_ib_extensions.h): its event number is
 * DAT_IB_DTO_EVENT, and the extension data say which operation completed;
 * a receive that carried immediate data becomes one too. */
void
dd_dto_ext(DAT_EVENT *ev, const struct dpdat_wc *wc)
{
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev->event_data.dto_completion_event_data;
	DAT_IB_EXTENSION_EVENT_DATA *x =
		(DAT_IB_EXTENSION_EVENT_DATA *)ev->event_extension_data;
	DAT_IB_EXT_TYPE type;

	switch ((int)d->operation) {
	case DAT_IB_DTO_RDMA_WRITE_IMMED: type = DAT_IB_RDMA_WRITE_IMMED; break;
	case DAT_IB_DTO_CMP_SWAP: type = DAT_IB_CMP_AND_SWAP; break;
	case DAT_IB_DTO_FETCH_ADD: type = DAT_IB_FETCH_AND_ADD; break;
	case DAT_DTO_RECEIVE:
		if (!(wc->flags & DPDAT_WC_WITH_IMM))
			return;
		/* the value as it came, as OFA's providers hand it over */
		x->val.immed.data = wc->imm_data;
		if (wc->opcode == DPDAT_WR_RECV_RDMA_IMM) {
			type = DAT_IB_RDMA_WRITE_IMMED_DATA;
			d->operation = (DAT_DTOS)DAT_IB_DTO_RECV_IMMED;
		} else {
			type = DAT_IB_RECV_IMMED_DATA;
			d->operation = (DAT_DTOS)DAT_IB_DTO_RECV_MSG_IMMED;
		}
		break;
	default:
		return;
	}
	ev->event_number = (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT;
	x->type = type;
	x->status = wc->status == DPDAT_WC_SUCCESS ? DAT_OP_SUCCESS :
						     DAT_IB_OP_ERR;
}

RTE_INIT(dd_ep_init)
{
	dd_evd_set_dto_conv(DD_DTO_EP, ep_dto_event);
}
