/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Connections: service points (PSP, RSP), connection requests (CR),
 * connect, accept, reject, disconnect, and the conversion of dpdat CM
 * events into DAT connection events.
 *
 * A small map links native objects (listeners, connections) to the DAT
 * objects that own them; its lock is a leaf. A connection whose EP went
 * away (freed or reset while the peer still talked) stays in the map as a
 * zombie and is freed when its last event is drained.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_random.h>

#include "dd_calls.h"
#include "dd_ep.h"

#define MAP_SIZE	1024

static struct {
	const void *key;	/* dpdat listener or connection */
	void *obj;		/* struct dd_sp, struct dd_ep, or NULL: zombie */
} map[MAP_SIZE];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static int
map_set(const void *key, void *obj)
{
	int ret = -1;

	pthread_mutex_lock(&map_lock);
	for (int i = 0; i < MAP_SIZE; i++)
		if (map[i].key == key || (ret < 0 && map[i].key == NULL))
			ret = i;
	if (ret >= 0) {
		map[ret].key = key;
		map[ret].obj = obj;
	}
	pthread_mutex_unlock(&map_lock);
	return ret < 0 ? -1 : 0;
}

/* The owner of key; *found says whether key is known at all. */
static void *
map_get(const void *key, bool *found)
{
	void *obj = NULL;

	*found = false;
	pthread_mutex_lock(&map_lock);
	for (int i = 0; i < MAP_SIZE; i++)
		if (map[i].key == key) {
			obj = map[i].obj;
			*found = true;
			break;
		}
	pthread_mutex_unlock(&map_lock);
	return obj;
}

static void
map_del(const void *key)
{
	pthread_mutex_lock(&map_lock);
	for (int i = 0; i < MAP_SIZE; i++)
		if (map[i].key == key)
			map[i].key = map[i].obj = NULL;
	pthread_mutex_unlock(&map_lock);
}

void
dd_conn_forget(struct dpdat_cm_conn *conn)
{
	map_del(conn);
}

void
dd_conn_zombie(struct dpdat_cm_conn *conn)
{
	map_set(conn, NULL);
}

static void
sockaddr_of(uint32_t ipv4, DAT_SOCK_ADDR *sa)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)sa;

	memset(sa, 0, sizeof(*sa));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = ipv4;
}

/* ---- service points ---- */

static DAT_RETURN
sp_create(struct dd_ia *ia, enum dd_type type, DAT_CONN_QUAL qual,
	  struct dd_evd *evd, struct dd_ep *ep, struct dd_sp **out)
{
	static const struct dpdat_dat_sub listen_sub = {
		.handle = DAT_INVALID_HANDLE_EVD_CR,
		.res = DAT_RESOURCE_MEMORY,
	};
	struct dd_sp *sp = dd_obj_new(ia, type, sizeof(*sp));

	if (sp == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	sp->qual = qual;
	sp->evd = evd;
	sp->ep = ep;
	sp->listener = dpdat_cm_listen(ia->dev, qual, evd->eq);
	if (sp->listener == NULL) {
		int err = rte_errno;

		dd_obj_free(sp);
		/* EADDRINUSE: DAT_CONN_QUAL_IN_USE; EBADF: the EVD's queue
		 * was freed under us */
		return dpdat_dat_err(-err, &listen_sub);
	}
	if (map_set(sp->listener, sp) != 0) {
		dpdat_cm_listen_free(sp->listener);
		dd_obj_free(sp);
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	}
	__atomic_add_fetch(&evd->users, 1, __ATOMIC_RELAXED);
	*out = sp;
	return DAT_SUCCESS;
}

static void
sp_free(struct dd_sp *sp)
{
	map_del(sp->listener);
	dpdat_cm_listen_free(sp->listener);
	__atomic_sub_fetch(&sp->evd->users, 1, __ATOMIC_RELAXED);
	dd_obj_free(sp);
}

DAT_RETURN DAT_API
dd_psp_create(DAT_IA_HANDLE iah, DAT_CONN_QUAL qual, DAT_EVD_HANDLE evdh,
	      DAT_PSP_FLAGS flags, DAT_PSP_HANDLE *out)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	struct dd_evd *evd = dd_evd_get(evdh, DAT_EVD_CR_FLAG);
	struct dd_sp *sp;
	DAT_RETURN ret;

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (evd == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EVD_CR);
	if (flags != DAT_PSP_CONSUMER_FLAG && flags != DAT_PSP_PROVIDER_FLAG)
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	if (flags == DAT_PSP_PROVIDER_FLAG)
		return DAT_MODEL_NOT_SUPPORTED;	/* ep_creator is NEVER */
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG5);
	ret = sp_create(ia, DD_PSP, qual, evd, NULL, &sp);
	if (ret == DAT_SUCCESS) {
		sp->flags = flags;
		*out = sp;
	}
	return ret;
}

DAT_RETURN DAT_API
dd_psp_create_any(DAT_IA_HANDLE iah, DAT_CONN_QUAL *qual, DAT_EVD_HANDLE evdh,
		  DAT_PSP_FLAGS flags, DAT_PSP_HANDLE *out)
{
	DAT_RETURN ret = DAT_CONN_QUAL_UNAVAILABLE;

	if (qual == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	/* the dynamic port range of the TCP port space */
	for (int tries = 0; tries < 64; tries++) {
		*qual = 49152 + rte_rand() % 16384;
		ret = dd_psp_create(iah, *qual, evdh, flags, out);
		if (ret != DAT_CONN_QUAL_IN_USE)
			return ret;
	}
	return DAT_CONN_QUAL_UNAVAILABLE;
}

DAT_RETURN DAT_API
dd_psp_query(DAT_PSP_HANDLE h, DAT_PSP_PARAM_MASK mask, DAT_PSP_PARAM *p)
{
	struct dd_sp *sp = dd_obj_get(h, DD_PSP);

	(void)mask;
	if (sp == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_PSP);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	*p = (DAT_PSP_PARAM){ .ia_handle = dd_consumer_ia(sp->h.ia), .conn_qual = sp->qual,
			      .evd_handle = sp->evd, .psp_flags = sp->flags };
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_psp_free(DAT_PSP_HANDLE h)
{
	struct dd_sp *sp = dd_obj_get(h, DD_PSP);

	if (sp == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_PSP);
	sp_free(sp);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_rsp_create(DAT_IA_HANDLE iah, DAT_CONN_QUAL qual, DAT_EP_HANDLE eph,
	      DAT_EVD_HANDLE evdh, DAT_RSP_HANDLE *out)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	struct dd_ep *ep = dd_obj_get(eph, DD_EP);
	struct dd_evd *evd = dd_evd_get(evdh, DAT_EVD_CR_FLAG);
	struct dd_sp *sp;
	DAT_RETURN ret;

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (evd == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EVD_CR);
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG5);
	if (!dd_ep_move(ep, DAT_EP_STATE_UNCONNECTED, DAT_EP_STATE_RESERVED))
		return DD_BAD_STATE(DAT_INVALID_STATE_EP_NOTREADY);
	ret = sp_create(ia, DD_RSP, qual, evd, ep, &sp);
	if (ret != DAT_SUCCESS)
		dd_ep_set_state(ep, DAT_EP_STATE_UNCONNECTED);
	else
		*out = sp;
	return ret;
}

DAT_RETURN DAT_API
dd_rsp_query(DAT_RSP_HANDLE h, DAT_RSP_PARAM_MASK mask, DAT_RSP_PARAM *p)
{
	struct dd_sp *sp = dd_obj_get(h, DD_RSP);

	(void)mask;
	if (sp == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_RSP);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	*p = (DAT_RSP_PARAM){ .ia_handle = dd_consumer_ia(sp->h.ia), .conn_qual = sp->qual,
			      .evd_handle = sp->evd, .ep_handle = sp->ep };
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_rsp_free(DAT_RSP_HANDLE h)
{
	struct dd_sp *sp = dd_obj_get(h, DD_RSP);

	if (sp == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_RSP);
	if (dd_obj_get(sp->ep, DD_EP) != NULL)
		dd_ep_move(sp->ep, DAT_EP_STATE_RESERVED,
			   DAT_EP_STATE_UNCONNECTED);
	sp_free(sp);
	return DAT_SUCCESS;
}

/* Common service points (DAT 2.0 CSP) need a transport-independent
 * addressing model dpdat does not have. */
DAT_RETURN DAT_API
dd_csp_create(DAT_IA_HANDLE iah, DAT_COMM *comm, DAT_IA_ADDRESS_PTR addr,
	      DAT_EVD_HANDLE evdh, DAT_CSP_HANDLE *out)
{
	(void)comm;
	(void)addr;
	(void)evdh;
	(void)out;
	return dd_obj_get(iah, DD_IA) == NULL ?
	       DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA) : DAT_MODEL_NOT_SUPPORTED;
}

DAT_RETURN DAT_API
dd_csp_query(DAT_CSP_HANDLE h, DAT_CSP_PARAM_MASK mask, DAT_CSP_PARAM *p)
{
	(void)h;
	(void)mask;
	(void)p;
	return DD_BAD_HANDLE(DAT_INVALID_HANDLE_CSP);	/* none exist */
}

DAT_RETURN DAT_API
dd_csp_free(DAT_CSP_HANDLE h)
{
	(void)h;
	return DD_BAD_HANDLE(DAT_INVALID_HANDLE_CSP);
}

/* ---- connection requests ---- */

DAT_RETURN DAT_API
dd_cr_query(DAT_CR_HANDLE h, DAT_CR_PARAM_MASK mask, DAT_CR_PARAM *p)
{
	struct dd_cr *cr = dd_obj_get(h, DD_CR);

	(void)mask;
	if (cr == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_CR);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	*p = (DAT_CR_PARAM){
		.remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&cr->remote,
		.remote_port_qual = 0,
		.private_data_size = cr->pdata_len,
		.private_data = cr->pdata,
		.local_ep_handle = cr->ep,
	};
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_cr_accept(DAT_CR_HANDLE h, DAT_EP_HANDLE eph, DAT_COUNT plen,
	     const DAT_PVOID pdata)
{
	struct dd_cr *cr = dd_obj_get(h, DD_CR);
	struct dd_ep *ep;
	DAT_EP_STATE from;
	int ret;

	if (cr == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_CR);
	ep = dd_obj_get(eph != DAT_HANDLE_NULL ? eph : cr->ep, DD_EP);
	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (plen < 0 || plen > DPDAT_CM_REP_PDATA_MAX ||
	    (plen > 0 && pdata == NULL))
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	pthread_mutex_lock(&ep->lock);
	from = ep == cr->ep ? DAT_EP_STATE_RESERVED : DAT_EP_STATE_UNCONNECTED;
	if (ep->qp == NULL || ep->conn_evd == NULL ||
	    !dd_ep_move(ep, from, DAT_EP_STATE_PASSIVE_CONNECTION_PENDING)) {
		pthread_mutex_unlock(&ep->lock);
		return DD_BAD_STATE(DAT_INVALID_STATE_EP_NOTREADY);
	}
	map_set(cr->conn, ep);
	ret = dpdat_cm_accept(cr->conn, ep->qp, pdata, (uint16_t)plen,
			      ep->conn_evd->eq);
	if (ret != 0) {
		map_del(cr->conn);
		dd_ep_set_state(ep, from);
		pthread_mutex_unlock(&ep->lock);
		return dpdat_dat_err(ret, NULL);
	}
	ep->conn = cr->conn;
	ep->remote = cr->remote;
	ep->remote_qual = cr->sp != NULL ? cr->sp->qual : 0;
	pthread_mutex_unlock(&ep->lock);
	dd_obj_free(cr);	/* the connection is the EP's now */
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_cr_reject(DAT_CR_HANDLE h, DAT_COUNT plen, const DAT_PVOID pdata)
{
	struct dd_cr *cr = dd_obj_get(h, DD_CR);
	int ret;

	if (cr == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_CR);
	if (plen < 0 || plen > DPDAT_CM_REJ_PDATA_MAX ||
	    (plen > 0 && pdata == NULL))
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	ret = dpdat_cm_reject(cr->conn, pdata, (uint16_t)plen);
	dpdat_cm_conn_free(cr->conn);
	if (cr->ep != NULL && dd_obj_get(cr->ep, DD_EP) != NULL)
		dd_ep_move(cr->ep, DAT_EP_STATE_RESERVED,
			   DAT_EP_STATE_UNCONNECTED);
	dd_obj_free(cr);
	return ret == 0 ? DAT_SUCCESS : dpdat_dat_err(ret, NULL);
}

DAT_RETURN DAT_API
dd_cr_handoff(DAT_CR_HANDLE h, DAT_CONN_QUAL qual)
{
	(void)qual;
	return dd_obj_get(h, DD_CR) == NULL ?
	       DD_BAD_HANDLE(DAT_INVALID_HANDLE_CR) : DAT_NOT_IMPLEMENTED;
}

/* ---- connect and disconnect ---- */

DAT_RETURN DAT_API
dd_ep_connect(DAT_EP_HANDLE h, DAT_IA_ADDRESS_PTR addr, DAT_CONN_QUAL qual,
	      DAT_TIMEOUT timeout, DAT_COUNT plen, const DAT_PVOID pdata,
	      DAT_QOS qos, DAT_CONNECT_FLAGS flags)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);
	struct sockaddr_in in;
	const struct sockaddr_in *sin = &in;
	DAT_RETURN ret = DAT_SUCCESS;

	(void)timeout;	/* the CM's own retries bound it (about 6 s) */
	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (addr == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	memcpy(&in, addr, sizeof(in));	/* the consumer's may be unaligned */
	if (in.sin_family != AF_INET)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (plen < 0 || plen > DD_MAX_PDATA ||
	    (plen > 0 && pdata == NULL))
		return DD_BAD_PARAM(DAT_INVALID_ARG5);
	/* every class the spec names is taken, as OFA DAPL does: dpdat has
	 * one class of service on the wire, so each is served as best
	 * effort (the IA's dat_qos_supported says so) */
	if ((qos & ~DD_QOS_ALL) != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG7);
	if (flags != DAT_CONNECT_DEFAULT_FLAG &&
	    flags != DAT_CONNECT_MULTIPATH_FLAG)
		return DD_BAD_PARAM(DAT_INVALID_ARG8);
	pthread_mutex_lock(&ep->lock);
	if (ep->qp == NULL || ep->conn_evd == NULL) {
		ret = DD_BAD_STATE(DAT_INVALID_STATE_EP_UNCONFIGURED);
	} else if (!dd_ep_move(ep, DAT_EP_STATE_UNCONNECTED,
			       DAT_EP_STATE_ACTIVE_CONNECTION_PENDING)) {
		ret = DD_BAD_STATE(DAT_INVALID_STATE_EP_NOTREADY);
	} else {
		sockaddr_of(sin->sin_addr.s_addr, &ep->remote);
		ep->remote_qual = qual;
		ep->conn = dpdat_cm_connect(ep->qp, sin->sin_addr.s_addr, qual,
					    pdata, (uint16_t)plen,
					    ep->conn_evd->eq);
		if (ep->conn == NULL || map_set(ep->conn, ep) != 0) {
			ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP;
			dd_ep_set_state(ep, DAT_EP_STATE_UNCONNECTED);
		}
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

DAT_RETURN DAT_API
dd_ep_dup_connect(DAT_EP_HANDLE h, DAT_EP_HANDLE dup, DAT_TIMEOUT timeout,
		  DAT_COUNT plen, const DAT_PVOID pdata, DAT_QOS qos)
{
	struct dd_ep *other = dd_obj_get(dup, DD_EP);
	DAT_SOCK_ADDR remote;
	DAT_CONN_QUAL qual;

	if (dd_obj_get(h, DD_EP) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (other == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	/* this call's own argument numbers (dd_ep_connect's differ) */
	if (plen < 0 || plen > DD_MAX_PDATA || (plen > 0 && pdata == NULL))
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	if ((qos & ~DD_QOS_ALL) != 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG6);
	pthread_mutex_lock(&other->lock);
	remote = other->remote;
	qual = other->remote_qual;
	pthread_mutex_unlock(&other->lock);
	if (dd_ep_state(other) != DAT_EP_STATE_CONNECTED)
		return DD_BAD_STATE(DAT_INVALID_STATE_EP_NOTREADY);
	return dd_ep_connect(h, (DAT_IA_ADDRESS_PTR)&remote, qual, timeout,
			     plen, pdata, qos, DAT_CONNECT_DEFAULT_FLAG);
}

DAT_RETURN DAT_API
dd_ep_common_connect(DAT_EP_HANDLE h, DAT_IA_ADDRESS_PTR addr,
		     DAT_TIMEOUT timeout, DAT_COUNT plen, const DAT_PVOID pdata)
{
	(void)addr;
	(void)timeout;
	(void)plen;
	(void)pdata;
	return dd_obj_get(h, DD_EP) == NULL ?
	       DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP) : DAT_MODEL_NOT_SUPPORTED;
}

DAT_RETURN DAT_API
dd_ep_disconnect(DAT_EP_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	struct dd_ep *ep = dd_obj_get(h, DD_EP);
	DAT_RETURN ret = DAT_SUCCESS;
	DAT_EP_STATE st;

	if (ep == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	if (flags != DAT_CLOSE_ABRUPT_FLAG && flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	pthread_mutex_lock(&ep->lock);
	st = dd_ep_state(ep);
	if ((st == DAT_EP_STATE_CONNECTED ||
	     st == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING ||
	     st == DAT_EP_STATE_PASSIVE_CONNECTION_PENDING) &&
	    dd_ep_move(ep, st, DAT_EP_STATE_DISCONNECT_PENDING)) {
		/* the DISCONNECTED event follows on the connect EVD. -EBUSY:
		 * the peer disconnected first, and that event is on its way
		 * (both sides of dapltest disconnect at once) */
		int err = dpdat_cm_disconnect(ep->conn, NULL, 0);

		if (err != 0 && err != -EBUSY) {
			dd_ep_set_state(ep, st);
			ret = dpdat_dat_err(err, NULL);
		}
	}
	/* unconnected or already disconnecting: nothing to do */
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

/* ---- CM events ---- */

static bool
request_event(struct dd_evd *evd, const struct dpdat_cm_event *cm,
	      DAT_EVENT *ev)
{
	bool found;
	struct dd_sp *sp = map_get(cm->listener, &found);
	struct dd_cr *cr;

	if (sp == NULL || dd_obj_any(sp) == NULL) {
		dpdat_cm_reject(cm->conn, NULL, 0);
		dpdat_cm_conn_free(cm->conn);
		return false;
	}
	cr = dd_obj_new(sp->h.ia, DD_CR, sizeof(*cr));
	if (cr == NULL) {
		dpdat_cm_reject(cm->conn, NULL, 0);
		dpdat_cm_conn_free(cm->conn);
		return false;
	}
	cr->sp = sp;
	cr->ep = sp->h.type == DD_RSP ? sp->ep : NULL;
	cr->conn = cm->conn;
	sockaddr_of(cm->peer_ipv4, &cr->remote);
	cr->pdata_len = RTE_MIN(cm->private_data_len, sizeof(cr->pdata));
	memcpy(cr->pdata, cm->private_data, cr->pdata_len);
	memset(ev, 0, sizeof(*ev));
	ev->event_number = DAT_CONNECTION_REQUEST_EVENT;
	ev->evd_handle = evd;
	ev->event_data.cr_arrival_event_data = (DAT_CR_ARRIVAL_EVENT_DATA){
		.local_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&sp->h.ia->addr,
		.conn_qual = sp->qual,
		.cr_handle = cr,
	};
	if (sp->h.type == DD_RSP) {
		/* a reserved point serves one request, then goes */
		ev->event_data.cr_arrival_event_data.sp_handle.rsp_handle =
			DAT_HANDLE_NULL;
		sp_free(sp);
	} else {
		ev->event_data.cr_arrival_event_data.sp_handle.psp_handle = sp;
	}
	return true;
}

/* The converter of CM events, which evd.c calls with the EVD lock held. */
static bool
cm_event(struct dd_evd *evd, const struct dpdat_cm_event *cm, DAT_EVENT *ev)
{
	DAT_EVENT_NUMBER num;
	struct dd_ep *ep;
	bool found, last = cm->type != DPDAT_CM_ESTABLISHED;

	if (cm->type == DPDAT_CM_CONNECT_REQUEST)
		return request_event(evd, cm, ev);
	ep = map_get(cm->conn, &found);
	if (ep == NULL || dd_obj_get(ep, DD_EP) == NULL) {
		/* a zombie (in the map, no EP) is freed by its end; one the
		 * map does not know was freed by its EP already (ep_free,
		 * ep_reset): its late events name freed memory, untouched */
		if (last && found) {
			map_del(cm->conn);
			dpdat_cm_conn_free(cm->conn);
		}
		return false;
	}
	switch (cm->type) {
	case DPDAT_CM_ESTABLISHED:
		num = DAT_CONNECTION_EVENT_ESTABLISHED;
		dd_ep_set_state(ep, DAT_EP_STATE_CONNECTED);
		break;
	case DPDAT_CM_REJECTED:
		/* "nobody listens" too: dapltest retries only on this one */
		num = DAT_CONNECTION_EVENT_PEER_REJECTED;
		break;
	case DPDAT_CM_UNREACHABLE:
		num = DAT_CONNECTION_EVENT_UNREACHABLE;
		break;
	case DPDAT_CM_BROKEN:
		num = DAT_CONNECTION_EVENT_BROKEN;
		if (dd_log_debug() && ep->qp != NULL)
			dpdat_qp_dump(ep->qp, rte_log_get_stream());
		break;
	default:
		num = DAT_CONNECTION_EVENT_DISCONNECTED;
		break;
	}
	if (last)
		dd_ep_set_state(ep, DAT_EP_STATE_DISCONNECTED);
	/* the peer's private data lives in the EP until the next event */
	ep->pdata_len = RTE_MIN(cm->private_data_len, sizeof(ep->pdata));
	memcpy(ep->pdata, cm->private_data, ep->pdata_len);
	DD_LOG(DEBUG, "ep %p: connection event 0x%x, %u "
		"bytes of private data", (void *)ep, num,
		ep->pdata_len);
	memset(ev, 0, sizeof(*ev));
	ev->event_number = num;
	ev->evd_handle = evd;
	ev->event_data.connect_event_data = (DAT_CONNECTION_EVENT_DATA){
		.ep_handle = ep,
		.private_data_size = ep->pdata_len,
		.private_data = ep->pdata_len ? ep->pdata : NULL,
	};
	return true;
}

RTE_INIT(dd_cm_init)
{
	dd_evd_set_cm_conv(cm_event);
}
