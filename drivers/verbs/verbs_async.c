/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Asynchronous events of dpdat0 (ibv_get_async_event). A context's
 * async_fd is an eventfd in semaphore mode: one count per event waiting in
 * the context's queue, so it is readable exactly while one waits, as a
 * kernel device's is. dpdat reports what raises them with counters and
 * flags, not interrupts: the library looks at them
 *   - in ibv_get_async_event, before taking an event and every millisecond
 *     while it waits for one;
 *   - in ibv_poll_cq, each time a poll finds the CQ drained (a CQ that
 *     overran is drained by the program's next polls); its overrun
 *     counter only after polls that took completions, an acknowledged
 *     CQ error or a purge (dv_cq.took): an empty CQ polled in a loop
 *     reads none.
 * Events raised:
 *   IBV_EVENT_CQ_ERR            a CQ lost completions, full
 *                               (dpdat_cq_overruns); again for later
 *                               losses once the last is acknowledged;
 *   IBV_EVENT_SRQ_LIMIT_REACHED an SRQ's armed limit was crossed
 *                               (dpdat_srq_query), once per arming;
 *   IBV_EVENT_QP_LAST_WQE_REACHED a QP with an SRQ is in ERR (broken, or
 *                               moved there) and holds no WQE of the
 *                               SRQ any more: once a QP;
 *   IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE the port's state, as
 *                               ibv_query_port tells it, changed (looked
 *                               at in ibv_get_async_event only: a program
 *                               that wants them waits there).
 * dpdat has no catastrophic QP, CQ or device error: no IBV_EVENT_QP_FATAL,
 * CQ errors other than overruns or IBV_EVENT_DEVICE_FATAL.
 * As with a kernel device, destroying a CQ, an SRQ or a QP drops its
 * events not yet taken and waits until those taken are acknowledged.
 *
 * Locks: the context's async.lock guards the queue, the lists and the
 * objects' event state; under it only lock-free dpdat calls run, and it is
 * never held with a CQ's or SRQ's mutex (the acknowledgement counts) or a
 * CQ's poll lock. A poll takes it only when its counters show an event to
 * raise, and then only if it is free (a scan of the armed SRQs at most
 * once a millisecond): pollers never wait on it.
 */

#include <fcntl.h>
#include <poll.h>
#include <rte_cycles.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_priv.h"

#define DV_ASYNC_WAIT_MS 1	/* a waiter looks at the counters so often */

int
dv_async_init(struct dv_context *c)
{
	struct dv_async *a = &c->async;

	a->efd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (a->efd < 0)
		return errno;
	pthread_mutex_init(&a->lock, NULL);
	return 0;
}

void
dv_async_fini(struct dv_context *c)
{
	close(c->async.efd);
	pthread_mutex_destroy(&c->async.lock);
}

/* Queue an event; a->lock held. false: not queued (a full queue, said). */
static bool
async_push(struct dv_async *a, enum ibv_event_type type, void *obj)
{
	struct ibv_async_event *e;
	uint64_t one = 1;

	if (a->n == DV_ASYNC_MAX) {
		DV_LOG("async event queue full: event %d dropped", (int)type);
		return false;
	}
	/* the count first: the queue never holds more than it says */
	if (write(a->efd, &one, sizeof(one)) != sizeof(one)) {
		DV_LOG("async event not signalled: %s", strerror(errno));
		return false;
	}
	e = &a->q[(a->head + a->n) % DV_ASYNC_MAX];
	memset(e, 0, sizeof(*e));
	e->event_type = type;
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		e->element.cq = obj;
		break;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		e->element.srq = obj;
		break;
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		e->element.qp = obj;
		break;
	default:	/* the port's */
		e->element.port_num = 1;
	}
	a->n++;
	return true;
}

/* A CQ error to raise for c now: losses not yet told, and its last error
 * neither queued nor unacknowledged (the losses of one overrun come in a
 * burst: one event for them). Lock-free; *n the loss count. */
static bool
cq_err_due(struct dv_cq *c, uint64_t *n)
{
	return dpdat_cq_overruns(c->dcq, n) == 0 &&
	       *n != __atomic_load_n(&c->overruns_told, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&c->err_queued, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&c->cq.async_events_completed,
			       __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&c->async_taken, __ATOMIC_RELAXED);
}

/* Take the SRQ at *ps off the armed list; a->lock held. */
static void
armed_unlink(struct dv_async *a, struct dv_srq **ps)
{
	struct dv_srq *s = *ps;

	*ps = s->armed_next;
	s->armed_next = NULL;
	s->armed = false;
	__atomic_sub_fetch(&a->n_armed, 1, __ATOMIC_RELEASE);
}

/* Until the program has acknowledged the events it took of an object. */
static void
wait_acked(pthread_mutex_t *mu, pthread_cond_t *cv, const uint32_t *acked,
	   uint32_t taken)
{
	pthread_mutex_lock(mu);
	while (*acked != taken)
		pthread_cond_wait(cv, mu);
	pthread_mutex_unlock(mu);
}

/* Take the QP at *pq off the list; a->lock held. */
static void
qp_unlink(struct dv_async *a, struct dv_qp_async **pq)
{
	struct dv_qp_async *q = *pq;

	*pq = q->next;
	q->next = NULL;
	q->listed = false;
	__atomic_sub_fetch(&a->n_srq_qps, 1, __ATOMIC_RELEASE);
}

/* Its last WQE reached: in ERR, holding none of the SRQ's. */
static bool
last_wqe_reached(const struct dv_qp_async *q)
{
	struct dpdat_qp_info qi;

	return dpdat_qp_query(q->dqp, &qi) == 0 &&
	       qi.state == DPDAT_QPS_ERR && qi.srq_held == 0;
}

/* Raise what the counters and flags show; a->lock held. */
static void
async_scan_locked(struct dv_async *a)
{
	struct dv_qp_async **pq, *q;
	struct dpdat_srq_info si;
	struct dv_srq **ps, *s;
	struct dv_cq *c;
	uint64_t n;

	for (c = a->cqs; c != NULL; c = c->async_next)
		if (cq_err_due(c, &n) &&
		    async_push(a, IBV_EVENT_CQ_ERR, &c->cq)) {
			__atomic_store_n(&c->overruns_told, n,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&c->err_queued, true,
					 __ATOMIC_RELAXED);
		}
	for (ps = &a->armed; (s = *ps) != NULL; ) {
		if (dpdat_srq_query(s->dsrq, &si) == 0 && si.limit_reached &&
		    async_push(a, IBV_EVENT_SRQ_LIMIT_REACHED, &s->srq))
			armed_unlink(a, ps);
		else
			ps = &s->armed_next;
	}
	for (pq = &a->srq_qps; (q = *pq) != NULL; ) {
		if (last_wqe_reached(q) &&
		    async_push(a, IBV_EVENT_QP_LAST_WQE_REACHED, q->qp))
			qp_unlink(a, pq);
		else
			pq = &q->next;
	}
}

/* The port's state, against what was last told; a->lock held. */
static void
async_port_locked(struct dv_context *ctx)
{
	struct dv_async *a = &ctx->async;
	const bool up = dv_port_active(ctx->dev);

	if (up != a->port_active &&
	    async_push(a, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR,
		       NULL))
		a->port_active = up;
}

void
dv_async_cq_drained(struct dv_cq *c, bool took)
{
	struct dv_async *a = &dv_ctx(c->cq.context)->async;
	uint64_t n, now = 0;
	bool srqs = false;

	if (__atomic_load_n(&a->n_armed, __ATOMIC_ACQUIRE) != 0 ||
	    __atomic_load_n(&a->n_srq_qps, __ATOMIC_ACQUIRE) != 0) {
		now = rte_get_tsc_cycles();
		srqs = now >= __atomic_load_n(&a->next_scan,
					      __ATOMIC_RELAXED);
	}
	if (!srqs && !(took && cq_err_due(c, &n)))
		return;
	if (pthread_mutex_trylock(&a->lock) != 0) {
		/* another thread scans, or the next drained poll will */
		if (took)
			__atomic_store_n(&c->took, true, __ATOMIC_RELEASE);
		return;
	}
	if (srqs)
		__atomic_store_n(&a->next_scan, now + rte_get_tsc_hz() / 1000,
				 __ATOMIC_RELAXED);
	async_scan_locked(a);
	pthread_mutex_unlock(&a->lock);
}

void
dv_async_add_cq(struct dv_cq *c)
{
	struct dv_async *a = &dv_ctx(c->cq.context)->async;

	pthread_mutex_lock(&a->lock);
	c->async_next = a->cqs;
	a->cqs = c;
	pthread_mutex_unlock(&a->lock);
}

/* Drop the queued events of obj (not taken yet); a->lock held. */
static void
async_drop(struct dv_async *a, const void *obj)
{
	uint32_t i, k = 0;
	uint64_t v;

	for (i = 0; i < a->n; i++) {
		struct ibv_async_event *e = &a->q[(a->head + i) % DV_ASYNC_MAX];

		/* element is a union: the object's pointer either way */
		if (e->element.cq == obj) {
			/* one count less: readable while any is left */
			if (read(a->efd, &v, sizeof(v)) != sizeof(v))
				DV_LOG("async event count: %s",
				       strerror(errno));
			continue;
		}
		a->q[(a->head + k++) % DV_ASYNC_MAX] = *e;
	}
	a->n = k;
}

void
dv_async_unlink_cq(struct dv_cq *c)
{
	struct dv_async *a = &dv_ctx(c->cq.context)->async;
	struct dv_cq **pc;

	pthread_mutex_lock(&a->lock);
	for (pc = &a->cqs; *pc != NULL; pc = &(*pc)->async_next)
		if (*pc == c) {
			*pc = c->async_next;
			break;
		}
	pthread_mutex_unlock(&a->lock);
}

/* Drop obj's queued events, then wait until the program acknowledged
 * those it took (taken, read under a->lock). */
static void
async_forget(struct dv_async *a, const void *obj, pthread_mutex_t *mu,
	     pthread_cond_t *cv, const uint32_t *acked, const uint32_t *taken)
{
	uint32_t n;

	pthread_mutex_lock(&a->lock);
	async_drop(a, obj);
	n = *taken;
	pthread_mutex_unlock(&a->lock);
	wait_acked(mu, cv, acked, n);
}

void
dv_async_forget_cq(struct dv_cq *c)
{
	async_forget(&dv_ctx(c->cq.context)->async, &c->cq, &c->cq.mutex,
		     &c->cq.cond, &c->cq.async_events_completed,
		     &c->async_taken);
}

bool
dv_async_arm_srq(struct dv_srq *s, bool armed)
{
	struct dv_async *a = &dv_ctx(s->srq.context)->async;
	struct dv_srq **ps;
	bool was;

	pthread_mutex_lock(&a->lock);
	was = s->armed;
	if (armed && !s->armed) {
		s->armed_next = a->armed;
		a->armed = s;
		s->armed = true;
		__atomic_add_fetch(&a->n_armed, 1, __ATOMIC_RELEASE);
	} else if (!armed && s->armed) {
		for (ps = &a->armed; *ps != s; ps = &(*ps)->armed_next)
			;
		armed_unlink(a, ps);
	}
	pthread_mutex_unlock(&a->lock);
	return was;
}

void
dv_async_forget_srq(struct dv_srq *s)
{
	async_forget(&dv_ctx(s->srq.context)->async, &s->srq, &s->srq.mutex,
		     &s->srq.cond, &s->srq.events_completed, &s->async_taken);
}

void
dv_async_add_qp(struct dv_qp_async *q)
{
	struct dv_async *a = &dv_ctx(q->qp->context)->async;

	pthread_mutex_lock(&a->lock);
	if (!q->listed) {
		q->next = a->srq_qps;
		a->srq_qps = q;
		q->listed = true;
		__atomic_add_fetch(&a->n_srq_qps, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&a->lock);
}

void
dv_async_unlist_qp(struct dv_qp_async *q)
{
	struct dv_async *a = &dv_ctx(q->qp->context)->async;
	struct dv_qp_async **pq;

	pthread_mutex_lock(&a->lock);
	if (q->listed) {
		for (pq = &a->srq_qps; *pq != q; pq = &(*pq)->next)
			;
		qp_unlink(a, pq);
	}
	pthread_mutex_unlock(&a->lock);
}

void
dv_async_forget_qp(struct dv_qp_async *q)
{
	dv_async_unlist_qp(q);
	async_forget(&dv_ctx(q->qp->context)->async, q->qp, &q->qp->mutex,
		     &q->qp->cond, &q->qp->events_completed, &q->taken);
}

void
dv_async_qp_erred(struct ibv_context *ctx)
{
	__atomic_store_n(&dv_ctx(ctx)->async.next_scan, 0, __ATOMIC_RELAXED);
}

/* Take the oldest event, counted on its object: 0, or -1 (none). */
static int
async_take(struct dv_context *ctx, struct ibv_async_event *ev)
{
	struct dv_async *a = &ctx->async;
	uint64_t v;

	pthread_mutex_lock(&a->lock);
	async_scan_locked(a);
	async_port_locked(ctx);
	if (a->n == 0) {
		pthread_mutex_unlock(&a->lock);
		return -1;
	}
	*ev = a->q[a->head];
	a->head = (a->head + 1) % DV_ASYNC_MAX;
	a->n--;
	if (read(a->efd, &v, sizeof(v)) != sizeof(v))
		DV_LOG("async event count: %s", strerror(errno));
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct dv_cq *c = (struct dv_cq *)ev->element.cq;

		__atomic_store_n(&c->async_taken, c->async_taken + 1,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&c->err_queued, false, __ATOMIC_RELAXED);
		break;
	}
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		((struct dv_srq *)ev->element.srq)->async_taken++;
		break;
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		dv_qp_async_of(ev->element.qp)->taken++;
		break;
	default:	/* the port's: nothing to acknowledge */
		break;
	}
	pthread_mutex_unlock(&a->lock);
	return 0;
}

int
ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	struct dv_async *a;
	struct pollfd p;
	int fl;

	if (!dv_ours(ctx))
		return NEXT(ibv_get_async_event, "IBVERBS_1.1",
			    int (*)(struct ibv_context *,
				    struct ibv_async_event *))(ctx, ev);
	a = &dv_ctx(ctx)->async;
	/* the application may make async_fd non-blocking, as with a kernel
	 * device */
	fl = fcntl(a->efd, F_GETFL);
	p.fd = a->efd;
	p.events = POLLIN;
	while (async_take(dv_ctx(ctx), ev) != 0) {
		if (fl >= 0 && (fl & O_NONBLOCK)) {
			errno = EAGAIN;
			return -1;
		}
		if (poll(&p, 1, DV_ASYNC_WAIT_MS) < 0 && errno != EINTR)
			return -1;
	}
	return 0;
}

void
ibv_ack_async_event(struct ibv_async_event *ev)
{
	pthread_mutex_t *mu;
	pthread_cond_t *cv;
	uint32_t *done;

	if (ev->event_type == IBV_EVENT_CQ_ERR && dv_ours_cq(ev->element.cq)) {
		mu = &ev->element.cq->mutex;
		cv = &ev->element.cq->cond;
		done = &ev->element.cq->async_events_completed;
	} else if (ev->event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		   ev->element.srq != NULL &&
		   dv_ours(ev->element.srq->context)) {
		mu = &ev->element.srq->mutex;
		cv = &ev->element.srq->cond;
		done = &ev->element.srq->events_completed;
	} else if (ev->event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
		   ev->element.qp != NULL &&
		   dv_ours(ev->element.qp->context)) {
		mu = &ev->element.qp->mutex;
		cv = &ev->element.qp->cond;
		done = &ev->element.qp->events_completed;
	} else {
		NEXT(ibv_ack_async_event, "IBVERBS_1.1",
		     void (*)(struct ibv_async_event *))(ev);
		return;
	}
	pthread_mutex_lock(mu);
	__atomic_add_fetch(done, 1, __ATOMIC_RELEASE);	/* read by scans */
	/* an overrun since waits for this: the next drained poll looks */
	if (ev->event_type == IBV_EVENT_CQ_ERR)
		__atomic_store_n(&((struct dv_cq *)ev->element.cq)->took, true,
				 __ATOMIC_RELEASE);
	pthread_cond_signal(cv);
	pthread_mutex_unlock(mu);
}
