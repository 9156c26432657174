/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Event queues: connection events of dpdat's CM, converted as they are
 * read (requests on a passive endpoint bound to the queue; established,
 * rejected, unreachable, ended on an endpoint's connection), and the
 * events an application writes itself. Errors (a reject, no answer) wait
 * for fi_eq_readerr; fi_eq_read says -FI_EAVAIL while one is first.
 *
 * A connection whose endpoint was closed before its end is a zombie: its
 * last event frees it, and no event of it reaches the application.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "df.h"

#define DF_ZOMBIES 64

static struct df_eq_ev *
ev_new(uint32_t event)
{
	struct df_eq_ev *e = calloc(1, sizeof(*e));

	if (e != NULL)
		e->event = event;
	return e;
}

static void
ev_push(struct df_eq *eq, struct df_eq_ev *e)
{
	STAILQ_INSERT_TAIL(&eq->evs, e, next);
	eq->n_evs++;
}

static void pull(struct df_eq *eq);
static void ev_free(struct df_eq_ev *e);

struct df_ep *
df_eq_find_ep(struct df_eq *eq, struct dpdat_cm_conn *conn)
{
	struct df_ep *ep;

	LIST_FOREACH(ep, &eq->eps, eq_next)
		if (ep->conn == conn)
			return ep;
	return NULL;
}

static struct df_pep *
find_pep(struct df_eq *eq, struct dpdat_cm_listener *l)
{
	struct df_pep *pep;

	LIST_FOREACH(pep, &eq->peps, eq_next)
		if (pep->listener == l)
			return pep;
	return NULL;
}

size_t
df_cm_unframe(const struct dpdat_cm_event *ev, const uint8_t **data)
{
	const size_t n = ev->private_data_len;

	if (n == 0) {
		*data = ev->private_data;
		return 0;
	}
	if (ev->private_data[0] <= n - 1) {
		*data = ev->private_data + 1;
		return ev->private_data[0];
	}
	/* a peer that does not frame its data: all of it */
	*data = ev->private_data;
	return n;
}

void
df_eq_forget(struct df_eq *eq, const struct fid *fid)
{
	struct df_eq_ev *e, *tmp;

	for (e = STAILQ_FIRST(&eq->evs); e != NULL; e = tmp) {
		tmp = STAILQ_NEXT(e, next);
		const struct fid *of = e->err ? e->u.err_entry.fid :
				       e->event == FI_SHUTDOWN ?
				       e->u.entry.fid : e->u.cm.fid;

		if (of != fid || e->event == FI_CONNREQ)
			continue;
		STAILQ_REMOVE(&eq->evs, e, df_eq_ev, next);
		eq->n_evs--;
		free(e);
	}
}

void
df_eq_drop_pep(struct df_eq *eq, struct df_pep *pep)
{
	struct df_eq_ev *e, *tmp;

	pull(eq);	/* what the CM queued for it, converted */
	for (e = STAILQ_FIRST(&eq->evs); e != NULL; e = tmp) {
		tmp = STAILQ_NEXT(e, next);
		if (e->err || e->event != FI_CONNREQ ||
		    e->u.cm.fid != &pep->pep_fid.fid || e->u.cm.info == NULL)
			continue;
		STAILQ_REMOVE(&eq->evs, e, df_eq_ev, next);
		eq->n_evs--;
		ev_free(e);	/* rejected */
	}
}

/* A connection request: an fi_info for the endpoint that will accept it
 * (its handle is the request), the requester's data. */
static struct df_eq_ev *
conv_request(struct df_eq *eq, const struct dpdat_cm_event *ev)
{
	struct df_pep *pep = find_pep(eq, ev->listener);
	struct df_connreq *cr;
	struct df_eq_ev *e;
	struct fi_info *info;
	const uint8_t *data;
	size_t n;

	if (pep == NULL) {	/* its listener went: no one to ask */
		dpdat_cm_reject(ev->conn, NULL, 0);
		dpdat_cm_conn_free(ev->conn);
		return NULL;
	}
	cr = calloc(1, sizeof(*cr));
	e = ev_new(FI_CONNREQ);
	info = fi_dupinfo(pep->info);
	if (cr == NULL || e == NULL || info == NULL)
		goto nomem;
	cr->fid.fclass = FI_CLASS_CONNREQ;
	cr->conn = ev->conn;
	cr->peer.sin_family = AF_INET;
	cr->peer.sin_addr.s_addr = ev->peer_ipv4;
	free(info->dest_addr);
	info->dest_addr = malloc(sizeof(cr->peer));
	if (info->dest_addr == NULL)
		goto nomem;
	memcpy(info->dest_addr, &cr->peer, sizeof(cr->peer));
	info->dest_addrlen = sizeof(cr->peer);
	info->handle = &cr->fid;
	e->u.cm.fid = &pep->pep_fid.fid;
	e->u.cm.info = info;
	n = df_cm_unframe(ev, &data);
	memcpy(e->u.cm.data, data, n);
	e->len = sizeof(e->u.cm) + n;
	return e;
nomem:
	dpdat_cm_reject(ev->conn, NULL, 0);
	dpdat_cm_conn_free(ev->conn);
	fi_freeinfo(info);
	free(e);
	free(cr);
	return NULL;
}

static struct df_eq_ev *
conv_error(struct df_ep *ep, const struct dpdat_cm_event *ev, int err)
{
	struct df_eq_ev *e = ev_new(0);
	const uint8_t *data;
	size_t n = df_cm_unframe(ev, &data);

	if (e == NULL)
		return NULL;
	e->err = true;
	e->u.err_entry.fid = &ep->ep_fid.fid;
	e->u.err_entry.context = ep->ep_fid.fid.context;
	e->u.err_entry.err = err;
	e->u.err_entry.prov_errno = ev->reason;
	memcpy(e->err_data, data, n);
	e->u.err_entry.err_data_size = n;
	return e;
}

/* One native event: NULL when nothing reaches the application. */
static struct df_eq_ev *
convert(struct df_eq *eq, const struct dpdat_cm_event *ev)
{
	struct df_ep *ep;
	struct df_eq_ev *e = NULL;
	const uint8_t *data;
	size_t n;

	DF_INFO(FI_LOG_EQ, "CM event %d (conn %p, reason %u, %u bytes)\n",
		ev->type, (void *)ev->conn, ev->reason, ev->private_data_len);
	if (ev->type == DPDAT_CM_CONNECT_REQUEST)
		return conv_request(eq, ev);
	ep = df_eq_find_ep(eq, ev->conn);
	if (ep == NULL) {
		/* a zombie's end, or a late event of a connection closed */
		if (ev->type != DPDAT_CM_ESTABLISHED)
			dpdat_cm_conn_free(ev->conn);
		else
			dpdat_cm_disconnect(ev->conn, NULL, 0);
		return NULL;
	}
	switch (ev->type) {
	case DPDAT_CM_ESTABLISHED:
		e = ev_new(FI_CONNECTED);
		if (e == NULL)
			return NULL;
		e->u.cm.fid = &ep->ep_fid.fid;
		n = df_cm_unframe(ev, &data);
		memcpy(e->u.cm.data, data, n);
		e->len = sizeof(e->u.cm) + n;
		break;
	case DPDAT_CM_REJECTED:
		e = conv_error(ep, ev, FI_ECONNREFUSED);
		break;
	case DPDAT_CM_UNREACHABLE:
		e = conv_error(ep, ev, FI_ETIMEDOUT);
		break;
	case DPDAT_CM_DISCONNECTED:
	case DPDAT_CM_BROKEN:
		e = ev_new(FI_SHUTDOWN);
		if (e == NULL)
			return NULL;
		e->u.entry.fid = &ep->ep_fid.fid;
		e->u.entry.context = ep->ep_fid.fid.context;
		e->len = sizeof(e->u.entry);
		break;
	default:
		return NULL;
	}
	df_ep_cm_event(ep, ev);
	return e;
}

/* Native events into the queue. Under the EQ lock. */
static void
pull(struct df_eq *eq)
{
	struct dpdat_cm_event ev;
	struct df_eq_ev *e;

	df_read_mark();
	while (eq->n_evs < DF_EQ_SIZE && dpdat_cm_eq_poll(eq->cmeq, &ev) == 1) {
		e = convert(eq, &ev);
		if (e != NULL)
			ev_push(eq, e);
	}
}

static void
ev_free(struct df_eq_ev *e)
{
	/* a request's info not handed out goes with it */
	if (e->event == FI_CONNREQ && !e->err && !e->written &&
	    e->u.cm.info != NULL) {
		struct df_connreq *cr = (struct df_connreq *)e->u.cm.info->handle;

		if (cr->conn != NULL) {
			dpdat_cm_reject(cr->conn, NULL, 0);
			dpdat_cm_conn_free(cr->conn);
		}
		free(cr);
		fi_freeinfo(e->u.cm.info);
	}
	free(e);
}

static ssize_t
eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf, size_t len,
	uint64_t flags)
{
	struct df_eq *eq = container_of(eq_fid, struct df_eq, eq_fid);
	struct df_eq_ev *e;
	ssize_t ret;

	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->lock);
	pull(eq);
	e = STAILQ_FIRST(&eq->evs);
	if (e == NULL) {
		ret = -FI_EAGAIN;
	} else if (e->err) {
		ret = -FI_EAVAIL;
	} else if (buf == NULL || len < e->len) {
		ret = -FI_ETOOSMALL;
	} else {
		if (event != NULL)
			*event = e->event;
		memcpy(buf, &e->u, e->len);
		ret = (ssize_t)e->len;
		if (!(flags & FI_PEEK)) {
			STAILQ_REMOVE_HEAD(&eq->evs, next);
			eq->n_evs--;
			e->u.cm.info = NULL;	/* the application's now */
			free(e);
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t
eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
	   uint64_t flags)
{
	struct df_eq *eq = container_of(eq_fid, struct df_eq, eq_fid);
	struct df_eq_ev *e;
	void *app_data;
	size_t app_size;

	if (buf == NULL || (flags & ~(uint64_t)FI_PEEK))
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->lock);
	pull(eq);
	e = STAILQ_FIRST(&eq->evs);
	if (e == NULL || !e->err) {
		pthread_mutex_unlock(&eq->lock);
		return -FI_EAGAIN;
	}
	app_data = buf->err_data;
	app_size = buf->err_data_size;
	*buf = e->u.err_entry;
	if (app_data != NULL && app_size > 0) {
		/* the application's buffer (API 1.5 on) */
		buf->err_data = app_data;
		buf->err_data_size = RTE_MIN(app_size,
					     e->u.err_entry.err_data_size);
		memcpy(app_data, e->err_data, buf->err_data_size);
	} else if (flags & FI_PEEK) {
		/* the event stays queued (and may go with its endpoint):
		 * no pointer into it; read it without FI_PEEK for the data */
		buf->err_data = NULL;
		buf->err_data_size = 0;
	} else {
		/* ours, until the next fi_eq_readerr */
		buf->err_data = e->u.err_entry.err_data_size > 0 ?
				e->err_data : NULL;
	}
	if (!(flags & FI_PEEK)) {
		STAILQ_REMOVE_HEAD(&eq->evs, next);
		eq->n_evs--;
		free(eq->err_held);
		eq->err_held = e;
	}
	pthread_mutex_unlock(&eq->lock);
	return sizeof(*buf);
}

static ssize_t
eq_write(struct fid_eq *eq_fid, uint32_t event, const void *buf, size_t len,
	 uint64_t flags)
{
	struct df_eq *eq = container_of(eq_fid, struct df_eq, eq_fid);
	const uint64_t one = 1;
	struct df_eq_ev *e;

	if (buf == NULL || len > sizeof(e->u) || (flags & ~(uint64_t)FI_PEEK))
		return -FI_EINVAL;
	e = ev_new(event);
	if (e == NULL)
		return -FI_ENOMEM;
	memcpy(&e->u, buf, len);
	e->len = len;
	e->written = true;	/* its info, if any, is not ours to free */
	pthread_mutex_lock(&eq->lock);
	ev_push(eq, e);
	pthread_mutex_unlock(&eq->lock);
	/* a full counter (EAGAIN, the only failure) leaves the fd readable:
	 * the event is queued either way */
	if (eq->wait_obj == FI_WAIT_FD)
		(void)!write(eq->efd, &one, sizeof(one));
	return (ssize_t)len;
}

static ssize_t
eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf, size_t len,
	 int timeout, uint64_t flags)
{
	struct df_eq *eq = container_of(eq_fid, struct df_eq, eq_fid);
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t end = timeout < 0 ? UINT64_MAX :
		rte_get_tsc_cycles() + (uint64_t)timeout * hz / 1000;
	ssize_t ret;

	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	for (;;) {
		ret = eq_read(eq_fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		if (end != UINT64_MAX && rte_get_tsc_cycles() >= end)
			return -FI_EAGAIN;
		/* the engine thread queues the events: a short nap */
		if (eq->wait_obj == FI_WAIT_YIELD)
			sched_yield();
		else
			rte_delay_us_sleep(100);
	}
}

static const char *
eq_strerror(struct fid_eq *eq_fid, int prov_errno, const void *err_data,
	    char *buf, size_t len)
{
	static const char *const reasons[] = {
		[DPDAT_CM_REJ_NO_RESOURCES] = "no resources",
		[DPDAT_CM_REJ_INVALID_SERVICE] = "nobody listens there",
		[DPDAT_CM_REJ_CONSUMER] = "rejected by the peer",
	};
	const char *s = prov_errno > 0 && (size_t)prov_errno < RTE_DIM(reasons)
			&& reasons[prov_errno] != NULL ? reasons[prov_errno] :
			"connection error";

	if (buf != NULL && len > 0) {
		snprintf(buf, len, "%s (IB CM reason %d)", s, prov_errno);
		return buf;
	}
	return s;
}

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

static int
eq_close(struct fid *fid)
{
	struct df_eq *eq = container_of(fid, struct df_eq, eq_fid.fid);
	struct dpdat_cm_event ev;
	struct df_eq_ev *e;
	int i;

	if (eq->refs != 0)
		return -FI_EBUSY;
	/* Whatever the CM queued is answered: a request is rejected (its
	 * requester would wait on it for good), an established zombie
	 * ended, a closing event frees its zombie. Then the zombies' last
	 * events: a DREQ is answered in a round trip, or given up after
	 * the CM's retries (about 6 s, and 2 s of ARP before). */
	for (i = 0; i < 1000; i++) {
		while (dpdat_cm_eq_poll(eq->cmeq, &ev) == 1) {
			if (ev.type == DPDAT_CM_ESTABLISHED)
				dpdat_cm_disconnect(ev.conn, NULL, 0);
			else	/* a request: rejected */
				dpdat_cm_conn_free(ev.conn);
		}
		if (dpdat_cm_eq_free(eq->cmeq) != -EBUSY)
			break;
		rte_delay_us_sleep(10000);
	}
	if (i == 1000) {
		DF_WARN(FI_LOG_EQ, "connections still end on the EQ\n");
		return -FI_EBUSY;
	}
	while ((e = STAILQ_FIRST(&eq->evs)) != NULL) {
		STAILQ_REMOVE_HEAD(&eq->evs, next);
		ev_free(e);
	}
	free(eq->err_held);
	df_fabric_use(eq->fabric, -1);
	pthread_mutex_destroy(&eq->lock);
	free(eq);
	return 0;
}

/* Whether the EQ may be waited on: nothing ready and, with an fd, the fd
 * emptied (the CM's next event, or an fi_eq_write, writes it again). */
int
df_eq_trywait(struct fid *fid)
{
	struct df_eq *eq = container_of(fid, struct df_eq, eq_fid.fid);
	uint64_t v;
	int ret = 0;

	pthread_mutex_lock(&eq->lock);
	if (eq->wait_obj == FI_WAIT_FD && read(eq->efd, &v, sizeof(v)) < 0 &&
	    errno != EAGAIN)
		ret = -FI_EIO;
	if (ret == 0) {
		pull(eq);
		ret = STAILQ_EMPTY(&eq->evs) ? 0 : -FI_EAGAIN;
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static int
eq_control(struct fid *fid, int command, void *arg)
{
	struct df_eq *eq = container_of(fid, struct df_eq, eq_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		if (eq->wait_obj != FI_WAIT_FD || arg == NULL)
			return -FI_ENODATA;
		*(int *)arg = eq->efd;
		return 0;
	case FI_GETWAITOBJ:
		if (arg == NULL)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = eq->wait_obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = df_no_bind,
	.control = eq_control,
	.ops_open = df_no_ops_open,
};

int
df_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
	   struct fid_eq **eq_fid, void *context)
{
	struct df_fabric *f = container_of(fabric, struct df_fabric,
					   fabric_fid);
	struct df_eq *eq;
	enum fi_wait_obj wait;

	/* FI_WRITE: fi_eq_write is always allowed */
	if (attr == NULL || eq_fid == NULL ||
	    (attr->flags & ~(uint64_t)FI_WRITE) || attr->wait_set != NULL)
		return -FI_EINVAL;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_YIELD:
		wait = attr->wait_obj;
		break;
	case FI_WAIT_UNSPEC:
		wait = FI_WAIT_UNSPEC;	/* sread naps between looks */
		break;
	case FI_WAIT_FD:	/* the CM queue's eventfd (dpdat_cm_eq_fd) */
		/* with manual progress nothing would write it while the
		 * application sleeps on it */
		if (!f->dev->auto_progress) {
			DF_WARN(FI_LOG_EQ, "FI_WAIT_FD needs "
				"FI_DPDAT_PROGRESS=auto or thread\n");
			return -FI_ENOSYS;
		}
		wait = FI_WAIT_FD;
		break;
	default:
		return -FI_ENOSYS;	/* wait sets, mutex/cond */
	}
	eq = calloc(1, sizeof(*eq));
	if (eq == NULL)
		return -FI_ENOMEM;
	eq->cmeq = dpdat_cm_eq_create(f->dev->dev, 4 * DF_EQ_SIZE);
	if (eq->cmeq == NULL) {
		int err = rte_errno;

		free(eq);
		return df_errno(err);
	}
	eq->efd = wait == FI_WAIT_FD ? dpdat_cm_eq_fd(eq->cmeq) : -1;
	pthread_mutex_init(&eq->lock, NULL);
	STAILQ_INIT(&eq->evs);
	LIST_INIT(&eq->eps);
	LIST_INIT(&eq->peps);
	eq->fabric = f;
	df_fabric_use(f, 1);
	eq->wait_obj = wait;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &eq_fi_ops;
	eq->eq_fid.ops = &eq_ops;
	*eq_fid = &eq->eq_fid;
	return 0;
}
