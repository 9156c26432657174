/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * lib/evq on its own: events come out in the order they went in, a full
 * queue refuses an event and keeps what it holds, a wait returns after
 * about the time asked, a sleeper in another thread is woken by a push
 * (and the eventfd is written only while someone waits), a progress
 * callback runs from poll and from wait, and events of several producers
 * all arrive, each producer's in its order. Timing bounds are loose: the
 * machines that run this are shared.
 */

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include <rte_common.h>

#include <dpdat/dpdat.h>

#include "evq.h"
#include "unit_run.h"

struct ev {
	uint32_t producer;
	uint32_t seq;
	uint64_t pad;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Is the queue's eventfd readable right now? */
static bool
fd_readable(const struct evq *q)
{
	struct pollfd pfd = { .fd = q->efd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static void
test_order(void)
{
	struct evq q;
	struct ev e = { 0 }, out[3];
	uint32_t next = 0;
	unsigned int n;

	CU_ASSERT_FATAL(evq_init(&q, "t_ord", sizeof(e), 16, NULL, NULL) == 0);
	CU_ASSERT_EQUAL(evq_poll(&q, out, 3), 0);
	for (e.seq = 0; e.seq < 10; e.seq++)
		CU_ASSERT(evq_push(&q, &e));
	CU_ASSERT_EQUAL(evq_count(&q), 10);
	while ((n = evq_poll(&q, out, 3)) != 0) {
		CU_ASSERT(n <= 3);
		for (unsigned int i = 0; i < n; i++)
			CU_ASSERT_EQUAL(out[i].seq, next++);
	}
	CU_ASSERT_EQUAL(next, 10);
	CU_ASSERT_EQUAL(evq_count(&q), 0);
	evq_fini(&q);
}

static void
test_full(void)
{
	struct evq q;
	struct ev e = { .producer = 7 }, out;
	uint32_t pushed = 0;

	CU_ASSERT_FATAL(evq_init(&q, "t_full", sizeof(e), 5, NULL, NULL) == 0);
	/* "at least size": it may hold more, but not without bound */
	for (e.seq = 0; e.seq < 1000 && evq_push(&q, &e); e.seq++)
		pushed++;
	CU_ASSERT(pushed >= 5);
	CU_ASSERT(pushed < 1000);
	e.seq = 0xdead;
	CU_ASSERT_FALSE(evq_push(&q, &e));	/* still full */
	CU_ASSERT_EQUAL(evq_count(&q), pushed);
	for (uint32_t i = 0; i < pushed; i++) {
		CU_ASSERT_EQUAL_FATAL(evq_poll(&q, &out, 1), 1);
		CU_ASSERT_EQUAL(out.seq, i);	/* the refused ones left no trace */
		CU_ASSERT_EQUAL(out.producer, 7);
	}
	CU_ASSERT_EQUAL(evq_poll(&q, &out, 1), 0);
	CU_ASSERT(evq_push(&q, &e));		/* room again */
	evq_fini(&q);
}

static void
test_wait_timeout(void)
{
	struct evq q;
	struct ev e = { 0 };
	double t0, dt;

	CU_ASSERT_FATAL(evq_init(&q, "t_to", sizeof(e), 4, NULL, NULL) == 0);
	t0 = now_ms();
	CU_ASSERT_EQUAL(evq_wait(&q, 200), 0);
	dt = now_ms() - t0;
	CU_ASSERT(dt >= 190);
	CU_ASSERT(dt < 2000);
	t0 = now_ms();
	CU_ASSERT_EQUAL(evq_wait(&q, 0), 0);
	CU_ASSERT(now_ms() - t0 < 1000);
	/* an event already there: at once, and not taken */
	CU_ASSERT(evq_push(&q, &e));
	t0 = now_ms();
	CU_ASSERT_EQUAL(evq_wait(&q, 5000), 1);
	CU_ASSERT(now_ms() - t0 < 1000);
	CU_ASSERT_EQUAL(evq_count(&q), 1);
	CU_ASSERT_EQUAL(q.waiters, 0);
	evq_fini(&q);
}

struct waiter {
	struct evq *q;
	int timeout_ms;
	int ret;
	double took_ms;
};

static void *
wait_thread(void *arg)
{
	struct waiter *w = arg;
	double t0 = now_ms();

	w->ret = evq_wait(w->q, w->timeout_ms);
	w->took_ms = now_ms() - t0;
	return NULL;
}

/* No one waits: a push costs no write (the fd stays quiet). Someone
 * waits: the push writes it. */
static void
test_eventfd_only_for_waiters(void)
{
	struct evq q;
	struct ev e = { 0 }, out;
	uint64_t v;

	CU_ASSERT_FATAL(evq_init(&q, "t_efd", sizeof(e), 4, NULL, NULL) == 0);
	CU_ASSERT(evq_push(&q, &e));
	CU_ASSERT_FALSE(fd_readable(&q));
	CU_ASSERT_EQUAL(evq_poll(&q, &out, 1), 1);
	/* a waiter as evq_wait announces itself, without blocking here */
	__atomic_add_fetch(&q.waiters, 1, __ATOMIC_SEQ_CST);
	CU_ASSERT(evq_push(&q, &e));
	CU_ASSERT(fd_readable(&q));
	CU_ASSERT_EQUAL(read(q.efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v, 1);
	__atomic_sub_fetch(&q.waiters, 1, __ATOMIC_SEQ_CST);
	CU_ASSERT(evq_push(&q, &e));
	CU_ASSERT_FALSE(fd_readable(&q));
	evq_fini(&q);
}

/* Once watched (its eventfd handed out to be polled), every event writes
 * the eventfd, with nobody inside evq_wait. */
static void
test_watched(void)
{
	struct evq q;
	struct ev e = { 0 }, out[2];
	uint64_t v;

	CU_ASSERT_FATAL(evq_init(&q, "t_watch", sizeof(e), 4, NULL, NULL) == 0);
	CU_ASSERT(evq_push(&q, &e));
	CU_ASSERT_FALSE(fd_readable(&q));
	evq_watch(&q);
	CU_ASSERT(evq_push(&q, &e));
	CU_ASSERT(evq_push(&q, &e));
	CU_ASSERT(fd_readable(&q));
	CU_ASSERT_EQUAL(read(q.efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CU_ASSERT_EQUAL(v, 2);
	CU_ASSERT_EQUAL(evq_poll(&q, out, 2), 2);
	CU_ASSERT_EQUAL(evq_poll(&q, out, 2), 1);
	evq_fini(&q);
}

static void
test_waiter_woken(void)
{
	struct evq q;
	struct ev e = { .seq = 42 }, out;
	struct waiter w = { .q = &q, .timeout_ms = 20000, .ret = -1 };
	pthread_t t;
	double t0;

	CU_ASSERT_FATAL(evq_init(&q, "t_wake", sizeof(e), 4, NULL, NULL) == 0);
	CU_ASSERT_FATAL(pthread_create(&t, NULL, wait_thread, &w) == 0);
	/* until it sleeps (the push must wake it, not precede it) */
	t0 = now_ms();
	while (__atomic_load_n(&q.waiters, __ATOMIC_ACQUIRE) == 0 &&
	       now_ms() - t0 < 10000)
		sched_yield();
	CU_ASSERT_EQUAL(q.waiters, 1);
	usleep(20 * 1000);			/* let it reach poll() */
	CU_ASSERT(evq_push(&q, &e));
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(w.ret, 1);
	/* woken, not timed out: well under its 20 s */
	CU_ASSERT(w.took_ms < 5000);
	CU_ASSERT_EQUAL(q.waiters, 0);
	CU_ASSERT_EQUAL(evq_poll(&q, &out, 1), 1);
	CU_ASSERT_EQUAL(out.seq, 42);
	evq_fini(&q);
}

/* ---- inline progress ---- */

struct prog {
	struct evq *q;
	unsigned int calls;
	unsigned int push_at;	/* push an event on this call (0: never) */
};

static int
progress(void *ctx)
{
	struct prog *p = ctx;
	struct ev e = { .seq = 1000 + p->calls };

	if (++p->calls == p->push_at)
		CU_ASSERT(evq_push(p->q, &e));
	return 0;
}

static void
test_progress(void)
{
	struct prog p = { 0 };
	struct evq q;
	struct ev out;
	double t0;

	p.q = &q;
	CU_ASSERT_FATAL(evq_init(&q, "t_prog", sizeof(out), 4, progress,
				 &p) == 0);
	/* poll runs it once, first: what it produces is returned at once */
	p.push_at = 1;
	CU_ASSERT_EQUAL(evq_poll(&q, &out, 1), 1);
	CU_ASSERT_EQUAL(p.calls, 1);
	CU_ASSERT_EQUAL(out.seq, 1000);
	CU_ASSERT_EQUAL(evq_poll(&q, &out, 1), 0);
	CU_ASSERT_EQUAL(p.calls, 2);
	/* wait runs it until an event is there */
	p.calls = 0;
	p.push_at = 5;
	CU_ASSERT_EQUAL(evq_wait(&q, 10000), 1);
	CU_ASSERT_EQUAL(p.calls, 5);
	CU_ASSERT_EQUAL(evq_count(&q), 1);
	CU_ASSERT_FALSE(fd_readable(&q));	/* no sleeper, no write */
	CU_ASSERT_EQUAL(evq_poll(&q, &out, 1), 1);
	/* ... or until the time is up, running it meanwhile */
	p.calls = 0;
	p.push_at = 0;
	t0 = now_ms();
	CU_ASSERT_EQUAL(evq_wait(&q, 100), 0);
	CU_ASSERT(now_ms() - t0 >= 95);
	CU_ASSERT(now_ms() - t0 < 2000);
	CU_ASSERT(p.calls > 1);
	evq_fini(&q);
}

/* ---- several producers, one consumer ---- */

/* No more producers than this machine's two CPUs: a producer preempted
 * between taking its slot of a multi-producer ring and publishing it makes
 * the others spin on it for their whole time slice (DPDK's rings are not
 * preemption-safe), and with four the test ran at 500 events/s. dpdat's own
 * producers are serialised (the engine, or cm->lock). */
#define PRODUCERS	2
#define PER_PRODUCER	20000u

struct producer {
	struct evq *q;
	uint32_t id;
	uint64_t refused;
};

static void *
produce(void *arg)
{
	struct producer *p = arg;
	struct ev e = { .producer = p->id };

	for (e.seq = 0; e.seq < PER_PRODUCER; e.seq++)
		while (!evq_push(p->q, &e)) {
			p->refused++;
			sched_yield();
		}
	return NULL;
}

static void
test_many_producers(void)
{
	struct producer pr[PRODUCERS];
	pthread_t t[PRODUCERS];
	uint32_t next[PRODUCERS] = { 0 };
	uint64_t got = 0, disorder = 0;
	struct ev out[32];
	struct evq q;
	double t0 = now_ms();

	CU_ASSERT_FATAL(evq_init(&q, "t_mp", sizeof(out[0]), 256, NULL,
				 NULL) == 0);
	for (uint32_t i = 0; i < PRODUCERS; i++) {
		pr[i] = (struct producer){ .q = &q, .id = i };
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, produce, &pr[i]) == 0);
	}
	while (got < PRODUCERS * PER_PRODUCER && now_ms() - t0 < 60000) {
		unsigned int n = evq_poll(&q, out, RTE_DIM(out));

		if (n == 0)
			(void)evq_wait(&q, 10);
		for (unsigned int i = 0; i < n; i++) {
			uint32_t id = out[i].producer;

			CU_ASSERT_FATAL(id < PRODUCERS);
			disorder += out[i].seq != next[id];
			next[id] = out[i].seq + 1;
		}
		got += n;
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(t[i], NULL);
	CU_ASSERT_EQUAL(got, PRODUCERS * PER_PRODUCER);
	CU_ASSERT_EQUAL(disorder, 0);
	for (int i = 0; i < PRODUCERS; i++)
		CU_ASSERT_EQUAL(next[i], PER_PRODUCER);
	CU_ASSERT_EQUAL(evq_count(&q), 0);
	evq_fini(&q);
}

static CU_TestInfo evq_tests[] = {
	{ "events come out in order", test_order },
	{ "a full queue refuses and keeps what it has", test_full },
	{ "wait: timeout, and an event already there", test_wait_timeout },
	{ "eventfd written only while someone waits", test_eventfd_only_for_waiters },
	{ "a watched queue writes its eventfd for every event", test_watched },
	{ "a waiting thread is woken by a push", test_waiter_woken },
	{ "progress callback from poll and wait", test_progress },
	{ "two producers, one consumer", test_many_producers },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "evq", NULL, NULL, NULL, NULL, evq_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	(void)argc;
	return unit_run_eal(argv[0], suites, NULL, NULL);
}
