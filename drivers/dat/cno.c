/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Consumer notification objects.
 *
 * A CNO keeps the EVDs that feed it (linked by dat_evd_create and
 * dat_evd_modify_cno). An event arriving on one of them, enabled and with
 * no waiter of its own, triggers the CNO (dd_cno_notify()): its waiters
 * wake, the fd of dat_cno_fd_create becomes readable, the proxy agent is
 * called once (then forgotten, as DAT says).
 *
 * DTO completions become events only when somebody drains the CQ: a
 * dat_cno_wait drains the EVDs that feed it itself, and sleeps at most a
 * slice (1 ms) while any of them has a native source; an fd CNO has a
 * thread that does the same for as long as it lives.
 *
 * dat_cno_wait returns while an enabled EVD feeding it holds events (level,
 * not edge: no notification is lost between a wake-up and the dequeue
 * that follows), with that EVD's handle as the hint; with a NULL handle
 * when the last EVD feeding it goes (the spec: "when all EVDs the CNO is
 * associated with are freed"); on timeout DAT_QUEUE_EMPTY and a NULL handle
 * (the DAT man page, and what the DAPL reference returns).
 *
 * The cost of the slices: a CNO waiter notices a completion up to 1 ms
 * late (dtest -c: 0.6 ms ping-pong latency against 75 us with
 * dat_evd_wait). dpdat cannot yet signal one fd for several CQs; a
 * native completion channel would remove the slices.
 *
 * Locks: an EVD's lock, then its CNO's. A CNO waiter drains EVDs with no
 * CNO lock held.
 */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>

#include "dd_calls.h"
#include "dd_clock.h"
#include "dd_evd.h"

#define CNO_BAD_HANDLE	DD_BAD_HANDLE(DAT_INVALID_HANDLE_CNO)
#define CNO_FIELDS	(DAT_CNO_FIELD_IA_HANDLE | \
			 DAT_CNO_FIELD_PROXY_TYPE | \
			 DAT_CNO_FIELD_PROXY | DAT_CNO_FIELD_ALL)
/* Longest sleeps: with EVDs that have native queues to poll; without,
 * to notice a CNO that ia_close retired under its waiter. */
#define CNO_SLICE_NS	1000000ull
#define CNO_IDLE_NS	100000000ull
#define SNAP		16		/* EVDs polled without malloc */

struct cno {
	struct dd_cno pub;		/* must stay first */
	struct dd_evd **evds;		/* the EVDs that feed it */
	uint32_t n_evds, cap;
	uint32_t waiters;
	uint64_t gen;			/* triggers and unlinks bump it */
	struct dd_evd *last;		/* the latest that triggered it */
	bool dead;			/* being freed */
	bool watched;			/* a watcher thread (fd CNOs) */
	pthread_t watcher;
};

/* Make the fd unreadable again (it is nonblocking: EAGAIN when it was
 * not readable). */
static void
fd_clear(int fd)
{
	uint64_t v;
	ssize_t n = fd >= 0 ? read(fd, &v, sizeof(v)) : 0;

	(void)n;
}

/* ---- the link with EVDs (evd.c) ---- */

bool
dd_cno_link(struct dd_cno *pub, struct dd_evd *evd)
{
	struct cno *c = (struct cno *)pub;
	struct dd_evd **v;
	bool ok = false;

	pthread_mutex_lock(&pub->lock);
	if (c->dead)
		goto out;
	if (c->n_evds == c->cap) {
		v = realloc(c->evds, (c->cap * 2 + 4) * sizeof(*v));
		if (v == NULL)
			goto out;
		c->evds = v;
		c->cap = c->cap * 2 + 4;
	}
	c->evds[c->n_evds++] = evd;
	c->gen++;
	pthread_cond_broadcast(&pub->cond);	/* the watcher polls it */
	ok = true;
out:
	pthread_mutex_unlock(&pub->lock);
	return ok;
}

void
dd_cno_unlink(struct dd_cno *pub, struct dd_evd *evd)
{
	struct cno *c = (struct cno *)pub;

	pthread_mutex_lock(&pub->lock);
	for (uint32_t i = 0; i < c->n_evds; i++)
		if (c->evds[i] == evd) {
			c->evds[i] = c->evds[--c->n_evds];
			break;
		}
	if (c->last == evd)
		c->last = NULL;
	c->gen++;
	pthread_cond_broadcast(&pub->cond);
	pthread_mutex_unlock(&pub->lock);
}

void
dd_cno_notify(struct dd_cno *pub, struct dd_evd *evd,
	      DAT_OS_WAIT_PROXY_AGENT *agent)
{
	struct cno *c = (struct cno *)pub;
	uint64_t one = 1;

	pthread_mutex_lock(&pub->lock);
	if (!c->dead) {
		pub->triggers++;
		c->last = evd;
		c->gen++;
		pthread_cond_broadcast(&pub->cond);
		/* fails only when the counter is full: readable anyway */
		if (pub->fd >= 0 && write(pub->fd, &one, sizeof(one)) < 0)
			one = 0;
		if (pub->agent.proxy_agent_func != NULL) {
			*agent = pub->agent;
			pub->agent.proxy_agent_func = NULL;
			pub->agent.instance_data = NULL;
		}
	}
	pthread_mutex_unlock(&pub->lock);
}

/* ---- polling the EVDs that feed a CNO ---- */

/* The EVDs feeding c, copied (CNO lock held); *v is buf or malloc'd. */
static uint32_t
snapshot(struct cno *c, struct dd_evd **buf, struct dd_evd ***v)
{
	uint32_t n = c->n_evds;

	*v = buf;
	if (n > SNAP) {
		*v = malloc(n * sizeof(**v));
		if (*v == NULL) {
			*v = buf;
			n = SNAP;	/* the others at the next round */
		}
	}
	if (n > 0)	/* c->evds is NULL before the first EVD */
		memcpy(*v, c->evds, n * sizeof(**v));
	return n;
}

/* Drain the EVDs feeding c (CNO lock held, released meanwhile). Returns
 * the first that holds events, or NULL; *native tells whether one of them
 * has a native source to poll. */
static struct dd_evd *
poll_evds(struct cno *c, bool *native)
{
	struct dd_evd *buf[SNAP], **v, *found = NULL;
	uint32_t i, n = snapshot(c, buf, &v);

	pthread_mutex_unlock(&c->pub.lock);
	*native = false;
	for (i = 0; i < n; i++)
		if (dd_evd_cno_poll(v[i], &c->pub, native) > 0 &&
		    found == NULL)
			found = v[i];
	if (v != buf)
		free(v);
	pthread_mutex_lock(&c->pub.lock);
	return found;
}

/* The fd CNO's thread: what a waiter would do, for the fd. */
static void *
watch(void *arg)
{
	struct cno *c = arg;
	bool native;

	pthread_mutex_lock(&c->pub.lock);
	while (!c->dead) {
		poll_evds(c, &native);
		if (c->dead || dd_obj_get(c, DD_CNO) == NULL)
			break;
		dd_cond_wait_until(&c->pub.cond, &c->pub.lock, dd_now_ns() +
				(native ? CNO_SLICE_NS : CNO_IDLE_NS));
	}
	pthread_mutex_unlock(&c->pub.lock);
	return NULL;
}

/* ---- DAT calls ---- */

static DAT_RETURN
cno_new(DAT_IA_HANDLE iah, const DAT_OS_WAIT_PROXY_AGENT *agent, bool fd,
	DAT_CNO_HANDLE *out)
{
	struct dd_ia *ia = dd_obj_get(iah, DD_IA);
	pthread_condattr_t ca;
	struct cno *c;

	c = dd_obj_new(ia, DD_CNO, sizeof(*c));
	if (c == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	pthread_mutex_init(&c->pub.lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->pub.cond, &ca);
	pthread_condattr_destroy(&ca);
	c->pub.agent = *agent;
	c->pub.fd = -1;
	if (fd) {
		c->pub.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (c->pub.fd < 0)
			goto err;
		if (pthread_create(&c->watcher, NULL, watch, c) != 0) {
			close(c->pub.fd);
			goto err;
		}
		c->watched = true;
	}
	*out = (DAT_CNO_HANDLE)c;
	return DAT_SUCCESS;
err:
	c->dead = true;
	dd_obj_free(c);
	return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
}

DAT_RETURN DAT_API
dd_cno_create(DAT_IA_HANDLE iah, DAT_OS_WAIT_PROXY_AGENT agent,
	      DAT_CNO_HANDLE *out)
{
	if (dd_obj_get(iah, DD_IA) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	return cno_new(iah, &agent, false, out);
}

/* dat_cno_fd_create (DAT 2.0): fd becomes readable when the CNO triggers;
 * dat_cno_trigger says by which EVD and makes it unreadable again. The
 * fd belongs to the CNO: dat_cno_free closes it. */
DAT_RETURN DAT_API
dd_cno_fd_create(DAT_IA_HANDLE iah, DAT_FD *fd, DAT_CNO_HANDLE *out)
{
	static const DAT_OS_WAIT_PROXY_AGENT none = { NULL, NULL };
	DAT_RETURN ret;

	if (dd_obj_get(iah, DD_IA) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (fd == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	ret = cno_new(iah, &none, true, out);
	if (ret == DAT_SUCCESS)
		*fd = ((struct cno *)*out)->pub.fd;
	return ret;
}

/* Lock a CNO handle's object; NULL when it is not a live CNO. */
static struct cno *
cno_lock(DAT_CNO_HANDLE h)
{
	struct cno *c = dd_obj_get(h, DD_CNO);

	if (c == NULL)
		return NULL;
	pthread_mutex_lock(&c->pub.lock);
	if (dd_obj_get(h, DD_CNO) == NULL || c->dead) {
		pthread_mutex_unlock(&c->pub.lock);
		return NULL;
	}
	return c;
}

DAT_RETURN DAT_API
dd_cno_modify_agent(DAT_CNO_HANDLE h, DAT_OS_WAIT_PROXY_AGENT agent)
{
	struct cno *c = cno_lock(h);

	if (c == NULL)
		return CNO_BAD_HANDLE;
	c->pub.agent = agent;
	pthread_mutex_unlock(&c->pub.lock);
	return DAT_SUCCESS;
}

/* Every field, whatever the mask (DAT_CNO_FIELD_ALL is 0x4 in the
 * headers, not a union of the others). */
DAT_RETURN DAT_API
dd_cno_query(DAT_CNO_HANDLE h, DAT_CNO_PARAM_MASK mask, DAT_CNO_PARAM *p)
{
	struct cno *c;

	if (dd_obj_get(h, DD_CNO) == NULL)
		return CNO_BAD_HANDLE;
	if (mask & ~(DAT_CNO_PARAM_MASK)CNO_FIELDS)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	if (p == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	c = cno_lock(h);
	if (c == NULL)
		return CNO_BAD_HANDLE;
	memset(p, 0, sizeof(*p));
	p->ia_handle = dd_consumer_ia(c->pub.h.ia);
	if (c->pub.fd >= 0) {
		p->proxy_type = DAT_PROXY_TYPE_FD;
		p->proxy.fd = c->pub.fd;
	} else if (c->pub.agent.proxy_agent_func != NULL) {
		p->proxy_type = DAT_PROXY_TYPE_AGENT;
		p->proxy.agent = c->pub.agent;
	} else {
		p->proxy_type = DAT_PROXY_TYPE_NONE;
	}
	pthread_mutex_unlock(&c->pub.lock);
	return DAT_SUCCESS;
}

/* In use (DAT_INVALID_STATE_CNO_IN_USE) while EVDs feed it or a thread
 * waits on it. */
DAT_RETURN DAT_API
dd_cno_free(DAT_CNO_HANDLE h)
{
	struct cno *c = cno_lock(h);

	if (c == NULL)
		return CNO_BAD_HANDLE;
	if (c->n_evds > 0 || c->waiters > 0) {
		pthread_mutex_unlock(&c->pub.lock);
		return DD_BAD_STATE(DAT_INVALID_STATE_CNO_IN_USE);
	}
	c->dead = true;
	pthread_cond_broadcast(&c->pub.cond);
	pthread_mutex_unlock(&c->pub.lock);
	if (c->watched) {
		if (pthread_equal(c->watcher, pthread_self()))
			pthread_detach(c->watcher);	/* from an agent */
		else
			pthread_join(c->watcher, NULL);
	}
	if (c->pub.fd >= 0)
		close(c->pub.fd);
	free(c->evds);
	dd_obj_free(c);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_cno_wait(DAT_CNO_HANDLE h, DAT_TIMEOUT timeout, DAT_EVD_HANDLE *out)
{
	struct cno *c;
	struct dd_evd *found = NULL;
	bool had = false, native;
	uint64_t now = dd_now_ns(), deadline, gen;
	DAT_RETURN ret = DAT_SUCCESS;

	if (dd_obj_get(h, DD_CNO) == NULL)
		return CNO_BAD_HANDLE;
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	c = cno_lock(h);
	if (c == NULL)
		return CNO_BAD_HANDLE;
	deadline = timeout == DAT_TIMEOUT_INFINITE ? DD_NEVER :
		   now + (uint64_t)timeout * DD_NS_PER_US;
	c->waiters++;
	for (;;) {
		gen = c->gen;
		had = had || c->n_evds > 0;
		found = poll_evds(c, &native);
		/* an EVD with events; the last EVD gone; or the CNO
		 * retired by ia_close */
		if (found != NULL || (had && c->n_evds == 0) ||
		    dd_obj_get(c, DD_CNO) == NULL)
			break;
		now = dd_now_ns();
		if (now >= deadline) {
			ret = DAT_QUEUE_EMPTY;
			break;
		}
		if (gen != c->gen)
			continue;	/* triggered while we polled */
		dd_cond_wait_until(&c->pub.cond, &c->pub.lock,
				RTE_MIN(deadline, now + (native ? CNO_SLICE_NS :
							       CNO_IDLE_NS)));
	}
	/* the notifications so far are answered */
	c->pub.triggers = 0;
	c->last = NULL;
	fd_clear(c->pub.fd);
	c->waiters--;
	pthread_mutex_unlock(&c->pub.lock);
	*out = (DAT_EVD_HANDLE)found;
	return ret;
}

/* dat_cno_trigger (DAT 2.0): the latest EVD that triggered the CNO since
 * the last answer (NULL when none did), and the fd unreadable again. */
DAT_RETURN DAT_API
dd_cno_trigger(DAT_CNO_HANDLE h, DAT_EVD_HANDLE *out)
{
	struct cno *c;

	if (dd_obj_get(h, DD_CNO) == NULL)
		return CNO_BAD_HANDLE;
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	c = cno_lock(h);
	if (c == NULL)
		return CNO_BAD_HANDLE;
	*out = c->pub.triggers > 0 ? (DAT_EVD_HANDLE)c->last : DAT_HANDLE_NULL;
	c->pub.triggers = 0;
	c->last = NULL;
	fd_clear(c->pub.fd);
	pthread_mutex_unlock(&c->pub.lock);
	return DAT_SUCCESS;
}
