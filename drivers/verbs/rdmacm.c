/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * libdpdat-rdmacm: the rdma_cm calls of Debian 12's librdmacm on dpdat's
 * connection manager (lib/cm: IB CM in band, rdma_cm's IP header in the
 * REQ), for unmodified programs run through dpdat-run, next to
 * libdpdat-verbs. Every id is dpdat0's; the TCP port space only (RC).
 *
 *   event channel   a dpdat CM event queue; its fd is the queue's, which
 *                   the events made here (address and route resolved)
 *                   also write
 *   rdma_listen     dpdat_cm_listen on the port
 *   rdma_connect    dpdat_cm_connect of the id's QP to (address, port)
 *   rdma_accept     dpdat_cm_accept with the id's QP
 *   events          dpdat CM events translated as they are taken:
 *                   connect request (a new id), established, rejected,
 *                   unreachable, disconnected (also for a broken QP)
 *
 * Address and route resolution complete in the call (the route is the
 * peer's ARP entry, waited for up to the call's timeout); their events are
 * queued for rdma_get_cm_event as librdmacm's are.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ether.h>

#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_port.h>

#include "dpdat_verbs_private.h"

#define CM_LOG(fmt, ...) fprintf(stderr, "dpdat-rdmacm: " fmt "\n", ##__VA_ARGS__)
#define CM_EQ_SIZE 1024
#define CM_RD_ATOMIC 16		/* what a dpdat responder answers */

struct cm_chan;

struct cm_ev {
	struct rdma_cm_event ev;	/* first: rdma_ack_cm_event frees it */
	struct cm_ev *next;
	struct cm_chan *ch;
	uint8_t pdata[DPDAT_CM_DREQ_PDATA_MAX];
};

struct cm_id;

struct cm_chan {
	struct rdma_event_channel ch;
	struct dpdat_cm_eq *eq;
	int eq_fd;			/* the queue's eventfd */
	int local_fd;			/* an eventfd for the events made here */
	struct dpdat_dev *dev;
	pthread_mutex_t lock;		/* ids, local events, below */
	pthread_cond_t acked;		/* an event was acknowledged */
	/* threads inside rdma_get_cm_event, and whether the channel was
	 * destroyed under them: the last of them releases it */
	uint32_t users;
	bool dead;
	bool released;			/* its queue and fds gone (cm_chan_free) */
	struct cm_ev *local, **local_tail;
	struct cm_id *ids;
	struct cm_chan *grave_next;	/* cm_graveyard */
};

/* Destroyed channels: their queues and fds are released, their memory
 * stays for the process's life (a few hundred bytes each), reachable
 * from here. A program's thread may still call rdma_get_cm_event on one
 * it never joined, after the channel's destruction (rping's event thread
 * between two events, while its main thread tears down): it finds the
 * channel dead and blocks for good, instead of reading freed memory (the
 * system's librdmacm reads a freed channel there). */
static struct cm_chan *cm_graveyard;
static pthread_mutex_t cm_graveyard_lock = PTHREAD_MUTEX_INITIALIZER;

struct cm_id {
	struct rdma_cm_id id;		/* first */
	struct cm_chan *ch;
	struct cm_id *next;
	struct dpdat_cm_listener *listener;
	struct dpdat_cm_conn *conn;
	uint16_t port;			/* bound (host order) */
	/* events reported on the id (as id or listen_id) and not yet
	 * acknowledged: rdma_destroy_id waits for them, as librdmacm's */
	uint32_t events_out;
	uint32_t dst_ip;		/* network order */
	uint16_t dst_port;		/* host order */
	struct ibv_pd *own_pd;		/* made by rdma_create_qp */
	struct ibv_cq *own_cq;
};

static int
cm_err(int err)
{
	errno = err;
	return -1;
}

static struct cm_chan *
cm_chan(struct rdma_event_channel *ch)
{
	return (struct cm_chan *)ch;
}

/* dpdat0's IPv4 address (network order), or 0. */
static uint32_t
cm_local_ip(struct dpdat_dev *dev)
{
	struct dpdat_port_info pi;

	return dpdat_port_query(dpdat_dev_port(dev), &pi) == 0 ? pi.ipv4 : 0;
}

/* ---- event channels and events ---- */

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct ibv_context *ctx = dpdat_verbs_context();
	struct epoll_event ev = { .events = EPOLLIN };
	struct cm_chan *c;

	if (ctx == NULL)
		return NULL;	/* errno from opening dpdat0 */
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = dpdat_verbs_dev(ctx);
	c->eq = dpdat_cm_eq_create(c->dev, CM_EQ_SIZE);
	if (c->eq == NULL) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	/* the channel's fd, which the program may make non-blocking or
	 * watch: an epoll set of the queue's eventfd and ours */
	c->eq_fd = dpdat_cm_eq_fd(c->eq);
	c->local_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	c->ch.fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->local_fd < 0 || c->ch.fd < 0 ||
	    epoll_ctl(c->ch.fd, EPOLL_CTL_ADD, c->eq_fd, &ev) != 0 ||
	    epoll_ctl(c->ch.fd, EPOLL_CTL_ADD, c->local_fd, &ev) != 0) {
		int err = errno;

		if (c->local_fd >= 0)
			close(c->local_fd);
		if (c->ch.fd >= 0)
			close(c->ch.fd);
		dpdat_cm_eq_free(c->eq);
		free(c);
		errno = err;
		return NULL;
	}
	c->local_tail = &c->local;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->acked, NULL);
	return &c->ch;
}

/* Release a destroyed channel's queue, events and fds, once; its memory
 * goes to the graveyard. */
static void
cm_chan_free(struct cm_chan *c)
{
	struct cm_ev *e;

	pthread_mutex_lock(&c->lock);
	if (c->released) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->released = true;
	while ((e = c->local) != NULL) {
		c->local = e->next;
		free(e);
	}
	close(c->ch.fd);
	close(c->local_fd);
	c->ch.fd = c->local_fd = -1;
	if (dpdat_cm_eq_free(c->eq) != 0)
		CM_LOG("rdma_destroy_event_channel: ids still use it");
	c->eq = NULL;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&cm_graveyard_lock);
	c->grave_next = cm_graveyard;
	cm_graveyard = c;
	pthread_mutex_unlock(&cm_graveyard_lock);
}

void
rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct cm_chan *c = cm_chan(ch);
	bool now;

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	c->dead = true;
	now = c->users == 0;
	if (!now) {
		uint64_t one = 1;

		/* wake them to see it */
		if (write(c->local_fd, &one, sizeof(one)) < 0)
			CM_LOG("event channel: %s", strerror(errno));
	}
	pthread_mutex_unlock(&c->lock);
	/* a thread still waits in rdma_get_cm_event (rping's event thread,
	 * never joined): it releases the channel and stays blocked, as a
	 * read of librdmacm's closed fd does; one that comes later does the
	 * same (the graveyard) */
	if (now)
		cm_chan_free(c);
}

/* The calling thread leaves rdma_get_cm_event with the channel destroyed
 * under it: the last one frees it; none returns. Lock held. */
static void
cm_chan_orphan(struct cm_chan *c)
{
	bool last = --c->users == 0;

	pthread_mutex_unlock(&c->lock);
	if (last)
		cm_chan_free(c);
	for (;;)
		pause();
}

/* Queue an event made here; lock held. */
static void
cm_local(struct cm_chan *c, struct cm_id *id, enum rdma_cm_event_type type,
	 int status)
{
	struct cm_ev *e = calloc(1, sizeof(*e));
	uint64_t one = 1;

	if (e == NULL)
		return;		/* the caller's call still succeeded: lost */
	e->ch = c;
	e->ev.id = &id->id;
	e->ev.event = type;
	e->ev.status = status;
	*c->local_tail = e;
	c->local_tail = &e->next;
	if (write(c->local_fd, &one, sizeof(one)) < 0)
		CM_LOG("event channel: %s", strerror(errno));
}

static struct cm_id *
cm_by_conn(struct cm_chan *c, const struct dpdat_cm_conn *conn)
{
	for (struct cm_id *i = c->ids; i != NULL; i = i->next)
		if (i->conn == conn)
			return i;
	return NULL;
}

static struct cm_id *
cm_by_listener(struct cm_chan *c, const struct dpdat_cm_listener *l)
{
	for (struct cm_id *i = c->ids; i != NULL; i = i->next)
		if (i->listener == l)
			return i;
	return NULL;
}

static void
cm_addr(struct sockaddr_storage *s, uint32_t ip, uint16_t port)
{
	struct sockaddr_in *in = (struct sockaddr_in *)s;

	memset(s, 0, sizeof(*s));
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = ip;
	in->sin_port = htons(port);
}

static struct cm_id *cm_id_new(struct cm_chan *c, void *context,
			       enum rdma_port_space ps);

/* A dpdat CM event as rdma_cm's, into e; false when it makes none (its
 * id is gone). Lock held. */
static bool
cm_translate(struct cm_chan *c, const struct dpdat_cm_event *d,
	     struct cm_ev *e)
{
	struct cm_id *id, *l;
	bool final = d->type != DPDAT_CM_CONNECT_REQUEST &&
		     d->type != DPDAT_CM_ESTABLISHED;

	e->ch = c;
	memcpy(e->pdata, d->private_data, d->private_data_len);
	e->ev.param.conn.private_data = d->private_data_len ? e->pdata : NULL;
	e->ev.param.conn.private_data_len = (uint8_t)RTE_MIN(
		d->private_data_len, 255);
	e->ev.param.conn.responder_resources = CM_RD_ATOMIC;
	e->ev.param.conn.initiator_depth = CM_RD_ATOMIC;
	if (d->type == DPDAT_CM_CONNECT_REQUEST) {
		l = cm_by_listener(c, d->listener);
		if (l == NULL)
			goto gone;
		id = cm_id_new(c, l->id.context, l->id.ps);
		if (id == NULL) {
			dpdat_cm_reject(d->conn, NULL, 0);
			dpdat_cm_conn_free(d->conn);
			return false;
		}
		id->conn = d->conn;
		id->port = l->port;
		cm_addr(&id->id.route.addr.src_storage, cm_local_ip(c->dev),
			l->port);
		cm_addr(&id->id.route.addr.dst_storage, d->peer_ipv4, 0);
		e->ev.id = &id->id;
		e->ev.listen_id = &l->id;
		e->ev.event = RDMA_CM_EVENT_CONNECT_REQUEST;
		return true;
	}
	id = cm_by_conn(c, d->conn);
	if (id == NULL)
		goto gone;
	e->ev.id = &id->id;
	switch (d->type) {
	case DPDAT_CM_ESTABLISHED:
		/* the QP's verbs state follows the dpdat QP's by itself:
		 * never touched from here (the program may have destroyed
		 * it already, as rping does before its last event) */
		e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
		break;
	case DPDAT_CM_REJECTED:
		e->ev.event = RDMA_CM_EVENT_REJECTED;
		e->ev.status = d->reason;	/* the IB CM reason, as rdma_cm */
		break;
	case DPDAT_CM_UNREACHABLE:
		e->ev.event = RDMA_CM_EVENT_UNREACHABLE;
		e->ev.status = -ETIMEDOUT;
		break;
	default:	/* disconnected; broken (the peer is gone) */
		e->ev.event = RDMA_CM_EVENT_DISCONNECTED;
		break;
	}
	return true;
gone:
	/* the id (or the listener) was destroyed: a request is rejected,
	 * a connection that got established after all is disconnected, and
	 * one that ended is freed */
	if (d->type == DPDAT_CM_ESTABLISHED)
		dpdat_cm_disconnect(d->conn, NULL, 0);
	else if (final || d->type == DPDAT_CM_CONNECT_REQUEST)
		dpdat_cm_conn_free(d->conn);
	return false;
}

/* Take what the dpdat queue holds into the local queue, translated; the
 * queue's eventfd cleared first, so that an event queued after the drain
 * makes the channel readable again. Lock held. 0 or an errno value. */
static int
cm_drain(struct cm_chan *c)
{
	struct dpdat_cm_event d;
	struct cm_ev *e;
	uint64_t v;
	int r;

	if (read(c->eq_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return errno;
	while ((r = dpdat_cm_eq_poll(c->eq, &d)) == 1) {
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			return ENOMEM;	/* d is lost: say so */
		if (!cm_translate(c, &d, e)) {
			free(e);
			continue;
		}
		*c->local_tail = e;
		c->local_tail = &e->next;
	}
	return r < 0 ? -r : 0;
}

/* The channel's fd is readable exactly while an event waits: the local
 * queue holds one (its eventfd set) or the dpdat queue does (its eventfd
 * written since the last drain), as a program that polls the fd and then
 * takes one event expects. */
int
rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	struct cm_chan *c = cm_chan(ch);
	struct epoll_event ev;
	struct cm_ev *e;
	uint64_t v;
	bool ran = false;
	int fl, err;

	if (c == NULL || event == NULL)
		return cm_err(EINVAL);
	fl = fcntl(ch->fd, F_GETFL);
	pthread_mutex_lock(&c->lock);
	c->users++;
	for (;;) {
		if (c->dead)
			cm_chan_orphan(c);
		err = cm_drain(c);
		if (c->local != NULL) {
			e = c->local;
			c->local = e->next;
			if (c->local == NULL) {
				c->local_tail = &c->local;
				if (read(c->local_fd, &v, sizeof(v)) < 0) {}
			}
			((struct cm_id *)e->ev.id)->events_out++;
			if (e->ev.listen_id != NULL)
				((struct cm_id *)e->ev.listen_id)->events_out++;
			c->users--;
			pthread_mutex_unlock(&c->lock);
			*event = &e->ev;
			return 0;
		}
		if (read(c->local_fd, &v, sizeof(v)) < 0) {}
		if (err != 0)
			break;
		if (fl >= 0 && (fl & O_NONBLOCK) && ran) {
			err = EAGAIN;
			break;
		}
		ran = true;
		if (fl >= 0 && (fl & O_NONBLOCK)) {
			/* inline progress: run the engine once, look again */
			pthread_mutex_unlock(&c->lock);
			dpdat_verbs_wait_fd(ch->fd, &ev, 0);
			pthread_mutex_lock(&c->lock);
			continue;
		}
		pthread_mutex_unlock(&c->lock);
		if (dpdat_verbs_wait_fd(ch->fd, &ev, -1) < 0 &&
		    errno != EINTR) {
			err = errno;
			pthread_mutex_lock(&c->lock);
			break;
		}
		pthread_mutex_lock(&c->lock);
	}
	c->users--;
	pthread_mutex_unlock(&c->lock);
	return cm_err(err);
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cm_ev *e = (struct cm_ev *)event;	/* it begins with it */
	struct cm_chan *c;

	if (e == NULL)
		return cm_err(EINVAL);
	c = e->ch;
	pthread_mutex_lock(&c->lock);
	((struct cm_id *)e->ev.id)->events_out--;
	if (e->ev.listen_id != NULL)
		((struct cm_id *)e->ev.listen_id)->events_out--;
	pthread_cond_broadcast(&c->acked);
	pthread_mutex_unlock(&c->lock);
	free(e);
	return 0;
}

/* ---- ids ---- */

/* Lock held. */
static struct cm_id *
cm_id_new(struct cm_chan *c, void *context, enum rdma_port_space ps)
{
	struct cm_id *i = calloc(1, sizeof(*i));

	if (i == NULL)
		return NULL;
	i->ch = c;
	i->id.verbs = dpdat_verbs_context();
	i->id.channel = &c->ch;
	i->id.context = context;
	i->id.ps = ps;
	i->id.port_num = 1;
	i->id.qp_type = IBV_QPT_RC;
	i->next = c->ids;
	c->ids = i;
	return i;
}

int
rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
	       void *context, enum rdma_port_space ps)
{
	static int said;
	struct cm_chan *c = cm_chan(ch);
	struct cm_id *i;

	if (id == NULL)
		return cm_err(EINVAL);
	if (ch == NULL || ps != RDMA_PS_TCP) {
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			CM_LOG("rdma_create_id on dpdat0: %s not supported",
			       ch == NULL ? "synchronous mode (no channel)" :
			       "a port space other than RDMA_PS_TCP");
		return cm_err(EOPNOTSUPP);
	}
	pthread_mutex_lock(&c->lock);
	i = cm_id_new(c, context, ps);
	pthread_mutex_unlock(&c->lock);
	if (i == NULL)
		return cm_err(ENOMEM);
	*id = &i->id;
	return 0;
}

/* The queued events of an id that goes: dropped; a connection request to
 * it as a listener is rejected with its new id. Lock held. */
static void
cm_drop_events(struct cm_chan *c, struct cm_id *i)
{
	struct cm_ev **p = &c->local, *e;
	struct cm_id *child, **q;

	c->local_tail = &c->local;
	while ((e = *p) != NULL) {
		if (e->ev.id != &i->id && e->ev.listen_id != &i->id) {
			c->local_tail = &e->next;
			p = &e->next;
			continue;
		}
		*p = e->next;
		child = (struct cm_id *)e->ev.id;
		if (e->ev.listen_id == &i->id && child != i) {
			for (q = &c->ids; *q != NULL; q = &(*q)->next)
				if (*q == child) {
					*q = child->next;
					break;
				}
			dpdat_cm_conn_free(child->conn);	/* rejects it */
			free(child);
		}
		free(e);
	}
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id *i = (struct cm_id *)id, **p;
	struct cm_chan *c;

	if (i == NULL)
		return cm_err(EINVAL);
	c = i->ch;
	pthread_mutex_lock(&c->lock);
	for (p = &c->ids; *p != NULL; p = &(*p)->next)
		if (*p == i) {
			*p = i->next;
			break;
		}
	cm_drop_events(c, i);
	/* librdmacm's rdma_destroy_id waits for the id's events to be
	 * acknowledged: a thread may still be handling one */
	while (i->events_out != 0)
		pthread_cond_wait(&c->acked, &c->lock);
	if (i->listener != NULL)
		dpdat_cm_listen_free(i->listener);
	/* still connected: disconnect; the connection is freed with its
	 * last event (cm_translate) */
	if (i->conn != NULL && dpdat_cm_conn_free(i->conn) != 0)
		dpdat_cm_disconnect(i->conn, NULL, 0);
	pthread_mutex_unlock(&c->lock);
	if (i->own_cq != NULL)
		ibv_destroy_cq(i->own_cq);
	if (i->own_pd != NULL)
		ibv_dealloc_pd(i->own_pd);
	free(i);
	return 0;
}

static int
cm_sin(const struct sockaddr *a, uint32_t *ip, uint16_t *port)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)a;

	if (a == NULL || a->sa_family != AF_INET)
		return -1;
	*ip = in->sin_addr.s_addr;
	*port = ntohs(in->sin_port);
	return 0;
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cm_id *i = (struct cm_id *)id;
	uint32_t ip, mine;
	uint16_t port;

	if (i == NULL || cm_sin(addr, &ip, &port) != 0)
		return cm_err(addr != NULL && addr->sa_family == AF_INET6 ?
			      EAFNOSUPPORT : EINVAL);
	mine = cm_local_ip(i->ch->dev);
	if (ip != INADDR_ANY && ip != mine)
		return cm_err(EADDRNOTAVAIL);
	i->port = port;
	cm_addr(&id->route.addr.src_storage, mine, port);
	return 0;
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cm_id *i = (struct cm_id *)id;
	struct dpdat_cm_listener *l;

	(void)backlog;	/* dpdat's queue holds what arrives */
	if (i == NULL || i->port == 0 || i->listener != NULL)
		return cm_err(EINVAL);
	l = dpdat_cm_listen(i->ch->dev, i->port, i->ch->eq);
	if (l == NULL)
		return cm_err(rte_errno);
	pthread_mutex_lock(&i->ch->lock);
	i->listener = l;
	pthread_mutex_unlock(&i->ch->lock);
	return 0;
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
		  struct sockaddr *dst, int timeout_ms)
{
	struct cm_id *i = (struct cm_id *)id;
	uint32_t ip, sip;
	uint16_t port, sport;

	(void)timeout_ms;
	if (i == NULL || cm_sin(dst, &ip, &port) != 0)
		return cm_err(dst != NULL && dst->sa_family == AF_INET6 ?
			      EAFNOSUPPORT : EINVAL);
	if (src != NULL && rdma_bind_addr(id, src) != 0)
		return -1;
	if (src == NULL) {
		sip = cm_local_ip(i->ch->dev);
		sport = 0;
		cm_addr(&id->route.addr.src_storage, sip, sport);
	}
	i->dst_ip = ip;
	i->dst_port = port;
	cm_addr(&id->route.addr.dst_storage, ip, port);
	pthread_mutex_lock(&i->ch->lock);
	cm_local(i->ch, i, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	pthread_mutex_unlock(&i->ch->lock);
	return 0;
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cm_id *i = (struct cm_id *)id;
	struct rte_ether_addr mac;
	int ret;

	if (i == NULL || i->dst_ip == 0)
		return cm_err(EINVAL);
	ret = dpdat_dev_resolve(i->ch->dev, i->dst_ip, &mac,
				timeout_ms > 0 ? timeout_ms : 2000);
	pthread_mutex_lock(&i->ch->lock);
	cm_local(i->ch, i, ret == 0 ? RDMA_CM_EVENT_ROUTE_RESOLVED :
		 RDMA_CM_EVENT_ROUTE_ERROR, ret);
	pthread_mutex_unlock(&i->ch->lock);
	return 0;
}

/* ---- QPs ---- */

static int
cm_qp_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *i = (struct cm_id *)id;
	struct ibv_qp *qp;
	int ret;

	if (i == NULL || attr == NULL || id->qp != NULL)
		return cm_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		if (i->own_pd == NULL)
			i->own_pd = ibv_alloc_pd(id->verbs);
		if (i->own_pd == NULL)
			return -1;
		attr->pd = i->own_pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (attr->send_cq == NULL || attr->recv_cq == NULL) {
		if (i->own_cq == NULL)
			i->own_cq = ibv_create_cq(id->verbs,
				(int)(attr->cap.max_send_wr +
				      attr->cap.max_recv_wr + 1), NULL, NULL,
				0);
		if (i->own_cq == NULL)
			return -1;
		if (attr->send_cq == NULL)
			attr->send_cq = i->own_cq;
		if (attr->recv_cq == NULL)
			attr->recv_cq = i->own_cq;
	}
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (qp == NULL)
		return -1;
	ret = cm_qp_init(qp);
	if (ret != 0) {
		ibv_destroy_qp(qp);
		return cm_err(ret);
	}
	dpdat_verbs_qp_cm(qp);
	id->qp = qp;
	id->pd = attr->pd;
	id->send_cq = attr->send_cq;
	id->recv_cq = attr->recv_cq;
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *init)
{
	struct ibv_qp_init_attr_ex a;
	int ret;

	if (init == NULL)
		return cm_err(EINVAL);
	memset(&a, 0, sizeof(a));
	memcpy(&a, init, sizeof(*init));
	a.pd = pd;
	a.comp_mask = pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	ret = rdma_create_qp_ex(id, &a);
	if (ret == 0)
		init->cap = a.cap;
	return ret;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct cm_id *i = (struct cm_id *)id;
	struct ibv_qp *qp;

	if (i == NULL || id->qp == NULL)
		return;
	/* the event thread reads id->qp under the lock (cm_translate) */
	pthread_mutex_lock(&i->ch->lock);
	qp = id->qp;
	id->qp = NULL;
	pthread_mutex_unlock(&i->ch->lock);
	ibv_destroy_qp(qp);
	if (i->own_cq != NULL && ibv_destroy_cq(i->own_cq) == 0)
		i->own_cq = NULL;
	if (i->own_pd != NULL && ibv_dealloc_pd(i->own_pd) == 0)
		i->own_pd = NULL;
}

/* ---- connecting ---- */

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cm_id *i = (struct cm_id *)id;
	struct dpdat_qp *nqp;
	struct dpdat_cm_conn *conn;

	if (i == NULL || i->dst_ip == 0 || i->conn != NULL)
		return cm_err(EINVAL);
	nqp = dpdat_verbs_qp(id->qp);
	if (nqp == NULL)
		return cm_err(EINVAL);	/* no QP: not supported */
	conn = dpdat_cm_connect(nqp, i->dst_ip, i->dst_port,
				param != NULL ? param->private_data : NULL,
				param != NULL ? param->private_data_len : 0,
				i->ch->eq);
	if (conn == NULL)
		return cm_err(rte_errno);
	pthread_mutex_lock(&i->ch->lock);
	i->conn = conn;
	pthread_mutex_unlock(&i->ch->lock);
	return 0;
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cm_id *i = (struct cm_id *)id;
	struct dpdat_qp *nqp;
	int ret;

	if (i == NULL || i->conn == NULL)
		return cm_err(EINVAL);
	nqp = dpdat_verbs_qp(id->qp);
	if (nqp == NULL)
		return cm_err(EINVAL);
	ret = dpdat_cm_accept(i->conn, nqp,
			      param != NULL ? param->private_data : NULL,
			      param != NULL ? param->private_data_len : 0,
			      i->ch->eq);
	if (ret != 0)
		return cm_err(-ret);
	/* as librdmacm, which moves the QP to RTS before it answers: the
	 * program may post before the established event */
	dpdat_verbs_qp_state(id->qp, IBV_QPS_RTS);
	return 0;
}

int
rdma_reject(struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	struct cm_id *i = (struct cm_id *)id;
	int ret;

	if (i == NULL || i->conn == NULL)
		return cm_err(EINVAL);
	ret = dpdat_cm_reject(i->conn, pdata, len);
	return ret == 0 ? 0 : cm_err(-ret);
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cm_id *i = (struct cm_id *)id;
	int ret;

	if (i == NULL || i->conn == NULL)
		return cm_err(EINVAL);
	ret = dpdat_cm_disconnect(i->conn, NULL, 0);
	if (id->qp != NULL)
		dpdat_verbs_qp_state(id->qp, IBV_QPS_ERR);
	return ret == 0 ? 0 : cm_err(-ret);
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		size_t optlen)
{
	(void)optname, (void)optval, (void)optlen;
	if (id == NULL)
		return cm_err(EINVAL);
	/* type of service, address reuse, ACK timeout: taken, not used */
	return level == RDMA_OPTION_ID ? 0 : cm_err(ENOSYS);
}

int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{
	struct cm_id *i = (struct cm_id *)id;

	if (i == NULL || ch == NULL)
		return cm_err(EINVAL);
	if (cm_chan(ch) == i->ch)
		return 0;
	CM_LOG("rdma_migrate_id to another channel: not supported");
	return cm_err(ENOSYS);
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *attr,
		  int *mask)
{
	(void)id, (void)attr, (void)mask;
	CM_LOG("rdma_init_qp_attr (a QP the program moves itself): not "
	       "supported");
	return cm_err(ENOSYS);
}

int
rdma_establish(struct rdma_cm_id *id)
{
	(void)id;
	CM_LOG("rdma_establish (a QP the program moves itself): not "
	       "supported");
	return cm_err(ENOSYS);
}

int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id, (void)event;
	return 0;	/* dpdat's CM sees the first packet itself */
}

/* ---- addresses ---- */

int
rdma_getaddrinfo(const char *node, const char *service,
		 const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_family = AF_INET,
			      .ai_socktype = SOCK_STREAM }, *ai;
	struct rdma_addrinfo *r;
	bool passive = hints != NULL && (hints->ai_flags & RAI_PASSIVE);
	struct sockaddr_in *sa;
	int ret;

	if (res == NULL || (node == NULL && service == NULL))
		return cm_err(EINVAL);
	if (hints != NULL && hints->ai_port_space != 0 &&
	    hints->ai_port_space != RDMA_PS_TCP)
		return cm_err(EOPNOTSUPP);
	h.ai_flags = passive ? AI_PASSIVE : 0;
	if (hints != NULL && (hints->ai_flags & RAI_NUMERICHOST))
		h.ai_flags |= AI_NUMERICHOST;
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret != 0)
		return cm_err(ret == EAI_SYSTEM ? errno : EADDRNOTAVAIL);
	r = calloc(1, sizeof(*r));
	sa = calloc(1, sizeof(*sa));
	if (r == NULL || sa == NULL) {
		free(r);
		free(sa);
		freeaddrinfo(ai);
		return cm_err(ENOMEM);
	}
	memcpy(sa, ai->ai_addr, sizeof(*sa));
	freeaddrinfo(ai);
	r->ai_flags = hints != NULL ? hints->ai_flags : 0;
	r->ai_family = AF_INET;
	r->ai_qp_type = IBV_QPT_RC;
	r->ai_port_space = RDMA_PS_TCP;
	if (passive) {
		r->ai_src_addr = (struct sockaddr *)sa;
		r->ai_src_len = sizeof(*sa);
	} else {
		r->ai_dst_addr = (struct sockaddr *)sa;
		r->ai_dst_len = sizeof(*sa);
	}
	*res = r;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *n = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res);
		res = n;
	}
}

/* ---- what dpdat0 does not offer: refused, never the system's ---- */

/* librdmacm's own calls would take our id for theirs: each is refused */
static int
cm_nosys(const char *call)
{
	CM_LOG("%s on dpdat0: not supported", call);
	return cm_err(ENOSYS);
}

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
	       struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	(void)id, (void)res, (void)pd, (void)qp_init_attr;
	return cm_nosys("rdma_create_ep");
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	(void)id;
	cm_nosys("rdma_destroy_ep");
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	(void)listen, (void)id;
	return cm_nosys("rdma_get_request");
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
		struct ibv_srq_init_attr *attr)
{
	(void)id, (void)pd, (void)attr;
	return cm_nosys("rdma_create_srq (ibv_create_srq works)");
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id, (void)attr;
	return cm_nosys("rdma_create_srq_ex");
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	(void)id;
	cm_nosys("rdma_destroy_srq");
}

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
		    void *context)
{
	(void)id, (void)addr, (void)context;
	return cm_nosys("rdma_join_multicast");
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id,
		       struct rdma_cm_join_mc_attr_ex *attr, void *context)
{
	(void)id, (void)attr, (void)context;
	return cm_nosys("rdma_join_multicast_ex");
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	return cm_nosys("rdma_leave_multicast");
}

int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return cm_nosys("rdma_set_local_ece");
}

int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	return cm_nosys("rdma_get_remote_ece");
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	(void)id, (void)pdata, (void)len;
	return cm_nosys("rdma_reject_ece");
}
