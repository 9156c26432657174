/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_EVQ_H
#define DPDAT_EVQ_H

/*
 * An event queue: the one way dpdat hands events from the engine to the
 * threads that consume them (completion queues, CM event queues). A ring of
 * fixed-size events, multi-producer (the engine; control paths) and
 * multi-consumer; an eventfd to sleep on; and the rule that wakes sleepers:
 *
 *   the producer writes the eventfd only while someone waits (waiters != 0),
 *   after a full fence that pairs with the waiter's increment, so either the
 *   producer sees the waiter or the waiter sees the event. A queue nobody
 *   sleeps on costs no system call per event; one whose eventfd was handed
 *   out to be watched with poll(2)/epoll (evq_watch) has it written for
 *   every event from then on.
 *
 * With a progress callback (inline progress: no engine thread), waiting
 * runs the engine through it instead of sleeping, and polling runs it once
 * first. The queue knows nothing of who produces its events: it sits below
 * every layer that uses it.
 */

#include <stdbool.h>
#include <stdint.h>

struct rte_ring;

/* Run the engine once (inline progress); ctx is the queue's progress_ctx. */
typedef int (*evq_progress_fn)(void *ctx);

struct evq {
	struct rte_ring *ring;
	int efd;			/* non-blocking eventfd */
	uint32_t waiters;		/* threads inside evq_wait (atomic) */
	bool watched;			/* someone polls efd itself (atomic) */
	uint32_t esize;			/* bytes of one event */
	evq_progress_fn progress;	/* NULL: a thread makes progress */
	void *progress_ctx;
};

/* Set up q for at least size events of esize bytes; name_prefix names the
 * ring (a sequence number is added). 0, or -ENOMEM. */
int evq_init(struct evq *q, const char *name_prefix, uint32_t esize,
	     uint32_t size, evq_progress_fn progress, void *progress_ctx);
void evq_fini(struct evq *q);

/* Producer: queue one event and wake a sleeper; false when full (the
 * event is not queued: the caller says so). */
bool evq_push(struct evq *q, const void *ev);

/* Consumer: up to n events into ev[] (after one progress run, if any);
 * returns how many. */
unsigned int evq_poll(struct evq *q, void *ev, unsigned int n);

/* Consumer: wait until an event is there or timeout_ms passed (< 0:
 * forever). 1 when an event is there, 0 on timeout. Nothing is taken. */
int evq_wait(struct evq *q, int timeout_ms);

/* From now on every event written to the eventfd: someone watches it
 * with poll(2) or epoll rather than through evq_wait(). */
void evq_watch(struct evq *q);

/* Events queued now. */
unsigned int evq_count(const struct evq *q);

#endif /* DPDAT_EVQ_H */
