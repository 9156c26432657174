/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Event dispatchers.
 *
 * An EVD is a ring of ready DAT_EVENTs (qlen of them) and, by its flags,
 * the native sources that feed it:
 *   DTO, RMR_BIND      a dpdat CQ, a power of two >= max(2 * qlen, 1024);
 *   CONNECTION, CR     a dpdat CM event queue, a power of two
 *                      >= max(2 * qlen, 256);
 *   SOFTWARE, ASYNC    nothing but the ring (dat_evd_post_se(), dd_evd_push()).
 * Native queues cannot grow (QPs, listeners and connections hold them), so
 * dat_evd_resize() refuses, DAT_INSUFFICIENT_RESOURCES, a qlen whose double
 * a native queue cannot hold: an EVD created with qlen <= 512 and a CQ can
 * grow to 512, one with a CM queue to 128.
 *
 * Draining converts what the native sources hold into ring events with
 * the EVD lock held, as far as the ring has room: what does not fit stays
 * in the native queue, nothing is lost. The converters are registered at
 * load by the modules that own the objects (dd_evd_set_dto_conv(): ep.c,
 * srq.c; dd_evd_set_cm_conv(): cm.c), so this file calls none of them.
 * dequeue and wait drain, then take from the ring; an event taken goes
 * to the taken hook once unlocked (srq.c: SRQ asynchronous events).
 *
 * Waiting. One waiter owns the EVD (DAT: any other wait or dequeue gets
 * DAT_INVALID_STATE meanwhile). It drains, and when fewer than threshold
 * events are ready it sleeps: on the CQ's eventfd (dpdat_cq_wait()) after a
 * short spin when there is a CQ, so a DTO completion wakes it at once; on
 * its condition variable otherwise, which pushes, post_se and
 * set_unwaitable signal. Sleeps on a native source last at most a slice
 * (1 ms): software events and CM events (polled between sleeps) wait that
 * long at worst while a CQ sleep is in progress.
 *
 * CNO. An event arriving on an enabled EVD with no waiter triggers its CNO
 * (cno.c). DTO completions only arrive when somebody drains: a CNO waiter
 * drains the EVDs that feed it itself (dd_evd_cno_poll()).
 *
 * Handles: a bad EVD handle is DAT_INVALID_HANDLE with the subtype the
 * registry gives a NULL one (DAT_INVALID_HANDLE_EVD_REQUEST), a bad CNO
 * handle DAT_INVALID_HANDLE_CNO. An EVD is in use, and dat_evd_free
 * refuses, while EPs, PSPs or RSPs name it (users), while a thread waits
 * on it, and while it is its IA's async EVD (ia_close frees that one).
 *
 * Locks: the EVD lock, then the CNO lock (cno.c). An EVD lock is never
 * taken with the IA lock held (cm.c's converter allocates CRs, which takes
 * the IA lock, under the EVD lock). Agents (DAT_OS_WAIT_PROXY_AGENT) are
 * called with no lock held.
 */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_pause.h>

#include "dd_calls.h"
#include "dd_clock.h"
#include "dd_evd.h"

/* The registry's own answer for a NULL EVD handle: a stale one reads the
 * same. */
#define EVD_BAD_HANDLE	DD_BAD_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST)
#define EVD_NO_ROOM	((DAT_RETURN)(DAT_INSUFFICIENT_RESOURCES | \
				      DAT_RESOURCE_TEVD))

#define EVD_FLAGS_ALL	(DAT_EVD_SOFTWARE_FLAG | DAT_EVD_CR_FLAG | \
			 DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG | \
			 DAT_EVD_RMR_BIND_FLAG | DAT_EVD_ASYNC_FLAG)
#define EVD_CQ_FLAGS	(DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG)
#define EVD_EQ_FLAGS	(DAT_EVD_CONNECTION_FLAG | DAT_EVD_CR_FLAG)

#define EVD_CQ_MIN	1024u
#define EVD_EQ_MIN	256u		/* CM events are 264 bytes */
#define EVD_MAX		(4 * DD_MAX_EP)	/* ia_query's max_evds */
#define EVD_BURST	16
#define EVD_SLICE_NS	DD_NS_PER_MS	/* longest native sleep */
#define EVD_SPIN_NS	(20 * DD_NS_PER_US) /* polls a CQ, then sleeps */

struct evd {
	struct dd_evd pub;		/* must stay first */
	pthread_cond_t cond;		/* the waiter sleeps on it */
	uint32_t cq_size, eq_size;	/* native capacities, 0: none */
	uint64_t serial;		/* tells a reused object from ours */
	bool dead;			/* being freed */
};

static uint64_t evd_serial;

/* The converters and the taken hook, set once at load (dd.h). */
static dd_dto_conv_t *dto_conv[DD_DTO_OWNERS];
static dd_cm_conv_t *cm_conv;
static dd_taken_t *taken_hook;

/* ---- helpers ---- */

static bool
live(const struct evd *e)
{
	return dd_obj_get((void *)(uintptr_t)e, DD_EVD) != NULL && !e->dead;
}

/* The EVD of a handle, locked; NULL when the handle is not a live EVD. */
static struct evd *
evd_lock(DAT_EVD_HANDLE h)
{
	struct evd *e = dd_obj_get(h, DD_EVD);

	if (e == NULL)
		return NULL;
	pthread_mutex_lock(&e->pub.lock);
	if (!live(e)) {		/* freed while we waited for the lock */
		pthread_mutex_unlock(&e->pub.lock);
		return NULL;
	}
	return e;
}

static void
ring_put(struct dd_evd *evd, const DAT_EVENT *ev)
{
	DAT_EVENT *slot = &evd->ring[(evd->head + evd->count) %
				     (uint32_t)evd->qlen];

	*slot = *ev;
	slot->evd_handle = (DAT_EVD_HANDLE)evd;
	evd->count++;
}

static void
ring_take(struct dd_evd *evd, DAT_EVENT *ev)
{
	*ev = evd->ring[evd->head];
	evd->head = (evd->head + 1) % (uint32_t)evd->qlen;
	if (--evd->count == 0)
		evd->overflowed = false;	/* the next overflow reports */
}

static uint32_t
ring_room(const struct dd_evd *evd)
{
	return evd->count < (uint32_t)evd->qlen ?
	       (uint32_t)evd->qlen - evd->count : 0;
}

/* A native completion as a DAT event, by the owner of its wr_id. */
static bool
dto_event(struct dd_evd *evd, const struct dpdat_wc *wc, DAT_EVENT *ev)
{
	dd_dto_conv_t *conv = dto_conv[DD_WR_OWNER(wc->wr_id)];

	return conv != NULL && conv(evd, wc, ev);
}

static bool
cm_event(struct dd_evd *evd, const struct dpdat_cm_event *cm, DAT_EVENT *ev)
{
	return cm_conv != NULL && cm_conv(evd, cm, ev);
}

static void
event_taken(const DAT_EVENT *ev)
{
	if (taken_hook != NULL)
		taken_hook(ev);
}

/* Move what the native sources hold into the ring while it has room.
 * EVD lock held. Returns the events added. */
static uint32_t
drain(struct evd *e)
{
	struct dd_evd *evd = &e->pub;
	struct dpdat_wc wc[EVD_BURST];
	struct dpdat_cm_event cm;
	DAT_EVENT ev;
	uint32_t added = 0, want;
	int n, i;

	while (evd->cq != NULL && (want = RTE_MIN(ring_room(evd),
						   (uint32_t)EVD_BURST)) > 0) {
		/* no more than the ring takes: each wc makes one event */
		n = dpdat_cq_poll(evd->cq, wc, (int)want);
		for (i = 0; i < n; i++)
			if (dto_event(evd, &wc[i], &ev)) {
				ring_put(evd, &ev);
				added++;
			}
		if (n < (int)want)
			break;
	}
	while (evd->eq != NULL && ring_room(evd) > 0 &&
	       dpdat_cm_eq_poll(evd->eq, &cm) == 1)
		if (cm_event(evd, &cm, &ev)) {
			ring_put(evd, &ev);
			added++;
		}
	return added;
}

/* Events arrived (EVD lock held): wake the waiter, or trigger the CNO when
 * nobody waits (a waiter preempts the CNO). The agent to call once
 * unlocked lands in *agent. */
static void
arrived(struct evd *e, DAT_OS_WAIT_PROXY_AGENT *agent)
{
	struct dd_evd *evd = &e->pub;

	if (evd->waiters > 0)
		pthread_cond_signal(&e->cond);
	else if (evd->enabled && evd->cno != NULL)
		dd_cno_notify(evd->cno, evd, agent);
}

static void
call_agent(const DAT_OS_WAIT_PROXY_AGENT *agent, struct dd_evd *evd)
{
	if (agent->proxy_agent_func != NULL)
		agent->proxy_agent_func(agent->instance_data, evd);
}

/* Queue one event; on a full ring, DAT_QUEUE_FULL and, when report, one
 * DAT_ASYNC_ERROR_EVD_OVERFLOW on the IA's async EVD. */
static DAT_RETURN
put(struct dd_evd *evd, const DAT_EVENT *ev, bool report)
{
	DAT_OS_WAIT_PROXY_AGENT agent = { NULL, NULL };
	DAT_EVENT overflow;
	struct dd_evd *async;
	struct evd *e = evd_lock(evd);
	bool first;

	if (e == NULL)
		return EVD_BAD_HANDLE;
	if (ring_room(evd) == 0) {
		first = report && !evd->overflowed;
		evd->overflowed = true;
		pthread_mutex_unlock(&evd->lock);
		/* set once by ia_open; a freed async EVD reads as dead */
		async = __atomic_load_n(&evd->h.ia->async_evd,
					__ATOMIC_ACQUIRE);
		if (first && async != NULL && async != evd) {
			memset(&overflow, 0, sizeof(overflow));
			overflow.event_number = DAT_ASYNC_ERROR_EVD_OVERFLOW;
			overflow.event_data.asynch_error_event_data.dat_handle =
				(DAT_HANDLE)evd;
			put(async, &overflow, false);
		}
		return DAT_QUEUE_FULL;
	}
	ring_put(evd, ev);
	arrived(e, &agent);
	pthread_mutex_unlock(&evd->lock);
	call_agent(&agent, evd);
	return DAT_SUCCESS;
}

static unsigned int
count_evds(struct dd_ia *ia)
{
	struct dd_obj *o;
	unsigned int n = 0;

	pthread_mutex_lock(&ia->lock);
	TAILQ_FOREACH(o, &ia->objs, next)
		n += o->type == DD_EVD;
	pthread_mutex_unlock(&ia->lock);
	return n;
}

/* A CNO handle for an EVD of ia: a live CNO of the same IA, else NULL. */
static struct dd_cno *
cno_of(DAT_CNO_HANDLE h, const struct dd_ia *ia)
{
	struct dd_cno *cno = dd_obj_get(h, DD_CNO);

	return cno != NULL && cno->h.ia == ia ? cno : NULL;
}

static DAT_RETURN
native_err(void)
{
	static const struct dpdat_dat_sub sub = { .res = DAT_RESOURCE_TEVD };

	return dpdat_dat_err(-rte_errno, &sub);
}

/* ---- the internal contract (dd.h) ---- */

DAT_RETURN
dd_evd_push(struct dd_evd *evd, const DAT_EVENT *ev)
{
	if (ev == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	return put(evd, ev, true);
}

void
dd_evd_set_dto_conv(enum dd_dto_owner owner, dd_dto_conv_t *conv)
{
	dto_conv[owner] = conv;
}

void
dd_evd_set_cm_conv(dd_cm_conv_t *conv)
{
	cm_conv = conv;
}

void
dd_evd_set_taken(dd_taken_t *taken)
{
	taken_hook = taken;
}

struct dd_evd *
dd_evd_get(DAT_EVD_HANDLE h, DAT_EVD_FLAGS need)
{
	struct evd *e = dd_obj_get(h, DD_EVD);

	if (e == NULL || e->dead || (e->pub.flags & need) != need)
		return NULL;
	return &e->pub;
}

DAT_COUNT
dd_evd_cno_poll(struct dd_evd *evd, const struct dd_cno *cno, bool *native)
{
	DAT_OS_WAIT_PROXY_AGENT agent = { NULL, NULL };
	struct evd *e = (struct evd *)evd;
	DAT_COUNT n = 0;

	pthread_mutex_lock(&evd->lock);
	if (!live(e) || evd->cno != cno) {	/* freed or moved since */
		pthread_mutex_unlock(&evd->lock);
		return 0;
	}
	*native = *native || evd->cq != NULL || evd->eq != NULL;
	if (evd->enabled && evd->waiters == 0) {
		if (drain(e) > 0)
			arrived(e, &agent);
		n = (DAT_COUNT)evd->count;
	}
	pthread_mutex_unlock(&evd->lock);
	call_agent(&agent, evd);
	return n;
}

/* ---- DAT calls ---- */

static DAT_RETURN
native_create(struct evd *e, struct dd_ia *ia, DAT_EVD_FLAGS flags)
{
	uint32_t twice = 2 * (uint32_t)e->pub.qlen;

	if (flags & EVD_CQ_FLAGS) {
		e->cq_size = rte_align32pow2(RTE_MAX(twice, EVD_CQ_MIN));
		e->pub.cq = dpdat_cq_create(ia->dev, e->cq_size);
		if (e->pub.cq == NULL)
			return native_err();
	}
	if (flags & EVD_EQ_FLAGS) {
		e->eq_size = rte_align32pow2(RTE_MAX(twice, EVD_EQ_MIN));
		e->pub.eq = dpdat_cm_eq_create(ia->dev, e->eq_size);
		if (e->pub.eq == NULL)
			return native_err();
	}
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_evd_create(DAT_IA_HANDLE iah, DAT_COUNT qlen, DAT_CNO_HANDLE cnoh,
	      DAT_EVD_FLAGS flags, DAT_EVD_HANDLE *out)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	pthread_condattr_t ca;
	struct dd_cno *cno = NULL;
	struct evd *e;
	DAT_RETURN ret;

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (qlen <= 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (qlen > DD_MAX_EVD_QLEN)
		return EVD_NO_ROOM;
	if (cnoh != DAT_HANDLE_NULL && (cno = cno_of(cnoh, ia)) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_CNO);
	/* the IB extension's EVD flag (OFA DAPL takes it): the extensions'
	 * events are DTO events here, so such an EVD is a DTO EVD */
	if (flags & (DAT_EVD_FLAGS)DAT_IB_EVD_EXTENSION_FLAG)
		flags = (flags & ~(DAT_EVD_FLAGS)DAT_IB_EVD_EXTENSION_FLAG) |
			DAT_EVD_DTO_FLAG;
	if (flags & ~(DAT_EVD_FLAGS)EVD_FLAGS_ALL)
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG5);
	if (count_evds(ia) >= EVD_MAX)
		return EVD_NO_ROOM;
	e = dd_obj_new(ia, DD_EVD, sizeof(*e));
	if (e == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	pthread_mutex_init(&e->pub.lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	e->serial = __atomic_add_fetch(&evd_serial, 1, __ATOMIC_RELAXED);
	e->pub.flags = flags;
	e->pub.qlen = qlen;
	e->pub.enabled = true;
	e->pub.waitable = true;
	e->pub.ring = calloc((size_t)qlen, sizeof(DAT_EVENT));
	if (e->pub.ring == NULL) {
		ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
		goto err_free;
	}
	ret = native_create(e, ia, flags);
	if (ret != DAT_SUCCESS)
		goto err_native;
	if (cno != NULL) {
		pthread_mutex_lock(&e->pub.lock);
		if (dd_cno_link(cno, &e->pub))
			e->pub.cno = cno;
		pthread_mutex_unlock(&e->pub.lock);
		if (e->pub.cno == NULL) {	/* freed meanwhile */
			ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_CNO);
			goto err_native;
		}
	}
	*out = (DAT_EVD_HANDLE)e;
	return DAT_SUCCESS;
err_native:
	if (e->pub.eq != NULL)
		dpdat_cm_eq_free(e->pub.eq);
	if (e->pub.cq != NULL)
		dpdat_cq_free(e->pub.cq);
	free(e->pub.ring);
err_free:
	e->dead = true;
	dd_obj_free(e);
	return ret;
}

DAT_RETURN DAT_API
dd_evd_query(DAT_EVD_HANDLE h, DAT_EVD_PARAM_MASK mask, DAT_EVD_PARAM *p)
{
	struct evd *e;

	if (dd_obj_get(h, DD_EVD) == NULL)
		return EVD_BAD_HANDLE;
	if (mask & ~(DAT_EVD_PARAM_MASK)DAT_EVD_FIELD_ALL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	e = evd_lock(h);
	if (e == NULL)
		return EVD_BAD_HANDLE;
	/* every field, whatever the mask: the spec allows more */
	p->ia_handle = dd_consumer_ia(e->pub.h.ia);
	p->evd_qlen = e->pub.qlen;
	p->evd_state = (DAT_EVD_STATE)(DAT_EVD_STATE_CONFIG_THRESHOLD |
		(e->pub.enabled ? DAT_EVD_STATE_ENABLED :
				  DAT_EVD_STATE_DISABLED) |
		(e->pub.waitable ? DAT_EVD_STATE_WAITABLE :
				   DAT_EVD_STATE_UNWAITABLE));
	p->cno_handle = (DAT_CNO_HANDLE)e->pub.cno;
	p->evd_flags = e->pub.flags;
	pthread_mutex_unlock(&e->pub.lock);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_evd_modify_cno(DAT_EVD_HANDLE h, DAT_CNO_HANDLE cnoh)
{
	struct evd *e = dd_obj_get(h, DD_EVD);
	struct dd_cno *cno = NULL, *old;

	if (e == NULL)
		return EVD_BAD_HANDLE;
	if (cnoh != DAT_HANDLE_NULL &&
	    (cno = cno_of(cnoh, e->pub.h.ia)) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_CNO);
	e = evd_lock(h);
	if (e == NULL)
		return EVD_BAD_HANDLE;
	old = e->pub.cno;
	if (cno != old) {
		if (cno != NULL && !dd_cno_link(cno, &e->pub)) {
			pthread_mutex_unlock(&e->pub.lock);
			return DD_BAD_HANDLE(DAT_INVALID_HANDLE_CNO);
		}
		if (old != NULL)
			dd_cno_unlink(old, &e->pub);
		e->pub.cno = cno;
	}
	pthread_mutex_unlock(&e->pub.lock);
	return DAT_SUCCESS;
}

/* Turn one of the EVD's switches; a waiter sees the change at once. */
static DAT_RETURN
set_switch(DAT_EVD_HANDLE h, bool waitable, bool on)
{
	struct evd *e = evd_lock(h);

	if (e == NULL)
		return EVD_BAD_HANDLE;
	if (waitable)
		e->pub.waitable = on;
	else
		e->pub.enabled = on;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->pub.lock);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_evd_enable(DAT_EVD_HANDLE h)
{
	return set_switch(h, false, true);
}

DAT_RETURN DAT_API
dd_evd_disable(DAT_EVD_HANDLE h)
{
	return set_switch(h, false, false);
}

/* Waiters already blocked return DAT_INVALID_STATE (woken at once from
 * the condition variable, within a slice from a CQ sleep). */
DAT_RETURN DAT_API
dd_evd_set_unwaitable(DAT_EVD_HANDLE h)
{
	return set_switch(h, true, false);
}

DAT_RETURN DAT_API
dd_evd_clear_unwaitable(DAT_EVD_HANDLE h)
{
	return set_switch(h, true, true);
}

/* Sleep a little for the waiter (EVD lock held, and held again on
 * return): spin on a CQ at first, then sleep on its eventfd for a slice,
 * or on the condition variable. */
static void
sleep_some(struct evd *e, uint64_t now, uint64_t deadline, uint64_t spin_end)
{
	struct dd_evd *evd = &e->pub;
	struct dpdat_cq *cq = evd->cq;
	uint64_t until = deadline;
	int i, r;

	if (cq != NULL && now < spin_end) {
		pthread_mutex_unlock(&evd->lock);
		for (i = 0; i < 32; i++)
			rte_pause();
		pthread_mutex_lock(&evd->lock);
		return;
	}
	if (cq != NULL && deadline - now >= DD_NS_PER_MS) {
		pthread_mutex_unlock(&evd->lock);
		r = dpdat_cq_wait(cq, (int)(EVD_SLICE_NS / DD_NS_PER_MS));
		pthread_mutex_lock(&evd->lock);
		if (r >= 0)
			return;
	}
	/* CM events are only seen by polling: sleep a slice at most */
	if ((cq != NULL || evd->eq != NULL) && deadline - now > EVD_SLICE_NS)
		until = now + EVD_SLICE_NS;
	dd_cond_wait_until(&e->cond, &evd->lock, until);
}

/* The waiter's loop (EVD lock held, this thread the waiter). */
static DAT_RETURN
wait_loop(struct evd *e, DAT_TIMEOUT timeout, uint32_t threshold,
	  DAT_EVENT *event, DAT_COUNT *nmore)
{
	struct dd_evd *evd = &e->pub;
	uint64_t serial = e->serial, now = dd_now_ns();
	uint64_t deadline = timeout == DAT_TIMEOUT_INFINITE ? DD_NEVER :
			    now + (uint64_t)timeout * DD_NS_PER_US;
	uint64_t spin_end = now + EVD_SPIN_NS;

	for (;;) {
		drain(e);	/* ours: the waiter preempts the CNO */
		if (evd->count >= threshold) {
			ring_take(evd, event);
			*nmore = (DAT_COUNT)evd->count;
			return DAT_SUCCESS;
		}
		if (!evd->waitable)
			return DD_BAD_STATE(DAT_INVALID_STATE_EVD_UNWAITABLE);
		now = dd_now_ns();
		if (now >= deadline) {
			*nmore = (DAT_COUNT)evd->count;
			return DAT_TIMEOUT_EXPIRED;
		}
		sleep_some(e, now, deadline, spin_end);
		if (!live(e) || e->serial != serial)
			return DAT_ABORT;	/* the IA closed under us */
	}
}

DAT_RETURN DAT_API
dd_evd_wait(DAT_EVD_HANDLE h, DAT_TIMEOUT timeout, DAT_COUNT threshold,
	    DAT_EVENT *event, DAT_COUNT *nmore)
{
	struct evd *e;
	DAT_RETURN ret;

	if (dd_obj_get(h, DD_EVD) == NULL)
		return EVD_BAD_HANDLE;
	if (event == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	if (nmore == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG5);
	e = evd_lock(h);
	if (e == NULL)
		return EVD_BAD_HANDLE;
	if (threshold <= 0 || threshold > e->pub.qlen)
		ret = DD_BAD_PARAM(DAT_INVALID_ARG3);
	else if (!e->pub.waitable)
		ret = DD_BAD_STATE(DAT_INVALID_STATE_EVD_UNWAITABLE);
	else if (e->pub.waiters > 0)
		ret = DD_BAD_STATE(DAT_INVALID_STATE_EVD_WAITER);
	else {
		e->pub.waiters = 1;
		ret = wait_loop(e, timeout, (uint32_t)threshold, event, nmore);
		if (ret == DAT_ABORT) {
			/* retired under us, maybe reused: its state is
			 * not ours to touch any more */
			pthread_mutex_unlock(&e->pub.lock);
			return ret;
		}
		e->pub.waiters = 0;
	}
	pthread_mutex_unlock(&e->pub.lock);
	if (ret == DAT_SUCCESS)
		event_taken(event);
	return ret;
}

/* Refuses to shrink below the events queued (DAT_INVALID_STATE) or to grow
 * beyond what the native queues hold (DAT_INSUFFICIENT_RESOURCES). */
DAT_RETURN DAT_API
dd_evd_resize(DAT_EVD_HANDLE h, DAT_COUNT qlen)
{
	struct evd *e;
	DAT_EVENT *ring;
	uint32_t i, twice;

	if (dd_obj_get(h, DD_EVD) == NULL)
		return EVD_BAD_HANDLE;
	if (qlen <= 0)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (qlen > DD_MAX_EVD_QLEN)
		return EVD_NO_ROOM;
	e = evd_lock(h);
	if (e == NULL)
		return EVD_BAD_HANDLE;
	twice = 2 * (uint32_t)qlen;
	if ((uint32_t)qlen < e->pub.count) {
		pthread_mutex_unlock(&e->pub.lock);
		return DD_BAD_STATE(0);
	}
	if ((e->cq_size != 0 && twice > e->cq_size) ||
	    (e->eq_size != 0 && twice > e->eq_size)) {
		pthread_mutex_unlock(&e->pub.lock);
		return EVD_NO_ROOM;
	}
	ring = calloc((size_t)qlen, sizeof(*ring));
	if (ring == NULL) {
		pthread_mutex_unlock(&e->pub.lock);
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	}
	for (i = 0; i < e->pub.count; i++)
		ring[i] = e->pub.ring[(e->pub.head + i) %
				      (uint32_t)e->pub.qlen];
	free(e->pub.ring);
	e->pub.ring = ring;
	e->pub.head = 0;
	e->pub.qlen = qlen;
	pthread_mutex_unlock(&e->pub.lock);
	return DAT_SUCCESS;
}

/* Software events only. A full queue is the consumer's own business:
 * DAT_QUEUE_FULL and no overflow on the async EVD. */
DAT_RETURN DAT_API
dd_evd_post_se(DAT_EVD_HANDLE h, const DAT_EVENT *ev)
{
	struct evd *e = dd_obj_get(h, DD_EVD);

	if (e == NULL)
		return EVD_BAD_HANDLE;
	if (!(e->pub.flags & DAT_EVD_SOFTWARE_FLAG))
		return DD_BAD_PARAM(DAT_INVALID_ARG1);
	if (ev == NULL || ev->event_number != DAT_SOFTWARE_EVENT)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	return put(&e->pub, ev, false);
}

DAT_RETURN DAT_API
dd_evd_dequeue(DAT_EVD_HANDLE h, DAT_EVENT *ev)
{
	DAT_OS_WAIT_PROXY_AGENT agent = { NULL, NULL };
	struct evd *e;
	DAT_RETURN ret = DAT_SUCCESS;

	if (dd_obj_get(h, DD_EVD) == NULL)
		return EVD_BAD_HANDLE;
	if (ev == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	e = evd_lock(h);
	if (e == NULL)
		return EVD_BAD_HANDLE;
	if (e->pub.waiters > 0) {	/* DAT: the waiter owns the EVD */
		pthread_mutex_unlock(&e->pub.lock);
		return DD_BAD_STATE(DAT_INVALID_STATE_EVD_WAITER);
	}
	if (drain(e) > 0)
		arrived(e, &agent);
	if (e->pub.count > 0)
		ring_take(&e->pub, ev);
	else
		ret = DAT_QUEUE_EMPTY;
	pthread_mutex_unlock(&e->pub.lock);
	call_agent(&agent, &e->pub);
	if (ret == DAT_SUCCESS)
		event_taken(ev);
	return ret;
}

/* Connection requests lost with a freed EVD are rejected, not left for
 * the peer to time out (through the provider's table, as the consumer
 * would). */
static void
reject_crs(const DAT_PROVIDER *prov, DAT_CR_HANDLE *crs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		prov->cr_reject_func(crs[i], 0, NULL);
	free(crs);
}

/* Empty a CM event queue that is being freed (EVD lock held): its events
 * go nowhere, but converting them lets cm.c release what it keeps for
 * them (connections whose last event this is). New requests are kept in
 * *crs to be rejected. */
static void
discard_eq(struct evd *e, DAT_CR_HANDLE **crs, uint32_t *n, uint32_t *cap)
{
	struct dpdat_cm_event cm;
	DAT_CR_HANDLE *v;
	DAT_EVENT ev;

	while (dpdat_cm_eq_poll(e->pub.eq, &cm) == 1) {
		if (!cm_event(&e->pub, &cm, &ev) ||
		    ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
			continue;
		if (*n == *cap) {
			v = realloc(*crs, (*cap * 2 + 8) * sizeof(*v));
			if (v == NULL)
				continue;	/* ia_close rejects it */
			*crs = v;
			*cap = *cap * 2 + 8;
		}
		(*crs)[(*n)++] = ev.event_data.cr_arrival_event_data.cr_handle;
	}
}

/* Free the native queues (EVD lock held). A CM queue that a connection
 * still holds after discarding its events, or a CQ that a QP holds, makes
 * the EVD in use; what was freed by then stays freed. */
static DAT_RETURN
native_free(struct evd *e, DAT_CR_HANDLE **crs, uint32_t *n, uint32_t *cap)
{
	struct dd_evd *evd = &e->pub;

	if (evd->cq != NULL) {
		if (dpdat_cq_free(evd->cq) != 0)
			return DD_BAD_STATE(DAT_INVALID_STATE_EVD_IN_USE);
		evd->cq = NULL;
	}
	if (evd->eq != NULL) {
		if (dpdat_cm_eq_free(evd->eq) != 0) {
			discard_eq(e, crs, n, cap);
			if (dpdat_cm_eq_free(evd->eq) != 0)
				return DD_BAD_STATE(
					DAT_INVALID_STATE_EVD_IN_USE);
		}
		evd->eq = NULL;
	}
	return DAT_SUCCESS;
}

/* The requests among the events still queued (EVD lock held). */
static void
ring_crs(struct dd_evd *evd, DAT_CR_HANDLE **crs, uint32_t *n, uint32_t *cap)
{
	DAT_EVENT ev;
	DAT_CR_HANDLE *v;

	while (evd->count > 0) {
		ring_take(evd, &ev);
		if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
			continue;
		if (*n == *cap) {
			v = realloc(*crs, (*cap * 2 + 8) * sizeof(*v));
			if (v == NULL)
				continue;
			*crs = v;
			*cap = *cap * 2 + 8;
		}
		(*crs)[(*n)++] = ev.event_data.cr_arrival_event_data.cr_handle;
	}
}

/* In use (DAT_INVALID_STATE_EVD_IN_USE): while EPs, PSPs or RSPs name it
 * (users), while a thread waits on it, and while it is the async EVD that
 * its IA reports (ia_close frees that one). */
DAT_RETURN DAT_API
dd_evd_free(DAT_EVD_HANDLE h)
{
	DAT_CR_HANDLE *crs = NULL;
	uint32_t n = 0, cap = 0;
	struct dd_evd *evd;
	struct evd *e;
	DAT_RETURN ret;

	e = evd_lock(h);
	if (e == NULL)
		return EVD_BAD_HANDLE;
	evd = &e->pub;
	if (__atomic_load_n(&evd->users, __ATOMIC_ACQUIRE) > 0 ||
	    evd->waiters > 0 ||
	    __atomic_load_n(&evd->h.ia->async_evd, __ATOMIC_ACQUIRE) == evd) {
		pthread_mutex_unlock(&evd->lock);
		return DD_BAD_STATE(DAT_INVALID_STATE_EVD_IN_USE);
	}
	ret = native_free(e, &crs, &n, &cap);
	if (ret != DAT_SUCCESS) {
		pthread_mutex_unlock(&evd->lock);
		reject_crs(evd->h.provider, crs, n);
		return ret;
	}
	ring_crs(evd, &crs, &n, &cap);
	if (evd->cno != NULL)
		dd_cno_unlink(evd->cno, evd);
	evd->cno = NULL;
	free(evd->ring);
	evd->ring = NULL;
	evd->qlen = 0;		/* a late pusher finds it full */
	e->dead = true;
	pthread_mutex_unlock(&evd->lock);
	reject_crs(evd->h.provider, crs, n);
	dd_obj_free(e);
	return DAT_SUCCESS;
}
