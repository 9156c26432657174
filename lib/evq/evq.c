/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "evq.h"

int
evq_init(struct evq *q, const char *name_prefix, uint32_t esize,
	 uint32_t size, evq_progress_fn progress, void *progress_ctx)
{
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "%s%u", name_prefix,
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	q->ring = rte_ring_create_elem(name, esize, rte_align32pow2(size + 1),
				       SOCKET_ID_ANY, 0);
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->ring == NULL || q->efd < 0) {
		evq_fini(q);
		return -ENOMEM;
	}
	q->waiters = 0;
	q->watched = false;
	q->esize = esize;
	q->progress = progress;
	q->progress_ctx = progress_ctx;
	return 0;
}

void
evq_fini(struct evq *q)
{
	rte_ring_free(q->ring);
	q->ring = NULL;
	if (q->efd >= 0)
		close(q->efd);
	q->efd = -1;
}

bool
evq_push(struct evq *q, const void *ev)
{
	uint64_t one = 1;

	if (rte_ring_enqueue_elem(q->ring, (void *)(uintptr_t)ev,
				  q->esize) != 0)
		return false;
	/* pairs with the waiter's increment: one of us sees the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if ((__atomic_load_n(&q->waiters, __ATOMIC_RELAXED) != 0 ||
	     __atomic_load_n(&q->watched, __ATOMIC_RELAXED)) &&
	    write(q->efd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow from one write: nothing to
		 * do but let the waiter's timeout run */
	}
	return true;
}

unsigned int
evq_poll(struct evq *q, void *ev, unsigned int n)
{
	if (q->progress != NULL)
		q->progress(q->progress_ctx);
	return rte_ring_dequeue_burst_elem(q->ring, ev, q->esize, n, NULL);
}

void
evq_watch(struct evq *q)
{
	__atomic_store_n(&q->watched, true, __ATOMIC_SEQ_CST);
}

unsigned int
evq_count(const struct evq *q)
{
	return rte_ring_count(q->ring);
}

int
evq_wait(struct evq *q, int timeout_ms)
{
	const uint64_t hz = rte_get_tsc_hz(), t0 = rte_get_tsc_cycles();
	const uint64_t limit = timeout_ms < 0 ? UINT64_MAX :
			       (uint64_t)timeout_ms * hz / 1000;
	struct pollfd pfd = { .fd = q->efd, .events = POLLIN };
	uint64_t v, spent, one = 1;
	int ms;

	if (q->progress != NULL) {
		while (rte_ring_count(q->ring) == 0) {
			if (rte_get_tsc_cycles() - t0 >= limit)
				return 0;
			q->progress(q->progress_ctx);
		}
		return 1;
	}
	__atomic_add_fetch(&q->waiters, 1, __ATOMIC_SEQ_CST);
	/* pairs with the producer's fence: one of us sees the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	while (rte_ring_count(q->ring) == 0) {
		spent = rte_get_tsc_cycles() - t0;
		if (spent >= limit)
			break;
		ms = timeout_ms < 0 ? -1 :
		     (int)RTE_MIN((limit - spent) * 1000 / hz + 1,
				  (uint64_t)INT_MAX);
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
			break;
		if (read(q->efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another waiter took the wake-up */
		}
	}
	/* the eventfd counts wake-ups, it does not share them out: one
	 * waiter may have read what was meant for several. Events left and
	 * others waiting: pass the wake-up on */
	if (__atomic_sub_fetch(&q->waiters, 1, __ATOMIC_ACQ_REL) != 0 &&
	    rte_ring_count(q->ring) != 0 && write(q->efd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow from one write */
	}
	return rte_ring_count(q->ring) != 0 ? 1 : 0;
}
