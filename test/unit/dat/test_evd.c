/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Event dispatchers and CNOs of the DAT plug-in, through the real registry
 * (libdat2): dat.conf from argv[1] (or DAT_OVERRIDE), an IA over a memif
 * server with no peer (its own socket, so tests may run side by side).
 * Software events stand in for completions in the "evd" and "cno"
 * suites; "evd-dto" (evd_dto.c) connects dpdat0 to dpdat1, the client end
 * of the same memif socket, for real completions.
 *
 *   test_evd [path/to/dat.conf]
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <dat2/udat.h>
#include <dat2/dat_registry.h>	/* DAT_PROVIDER, for the table */

#include "dat_main.h"
#include "evd_test.h"

/* libdat2 exports it without declaring it: registry IA handle -> the
 * provider's, for the DAT 2.0 calls the registry does not export
 * (dat_cno_fd_create, dat_cno_trigger). */
extern DAT_RETURN dats_get_ia_handle(DAT_IA_HANDLE, DAT_IA_HANDLE *);

static DAT_IA_HANDLE ia;
static DAT_EVD_HANDLE async_evd;

uint64_t
evd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static DAT_RETURN
post(DAT_EVD_HANDLE evd, uintptr_t value)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	ev.event_data.software_event_data.pointer = (DAT_PVOID)value;
	return dat_evd_post_se(evd, &ev);
}

static uintptr_t
value_of(const DAT_EVENT *ev)
{
	return (uintptr_t)ev->event_data.software_event_data.pointer;
}

static DAT_EVD_HANDLE
evd_new(DAT_COUNT qlen, DAT_CNO_HANDLE cno, DAT_EVD_FLAGS flags)
{
	DAT_EVD_HANDLE h = DAT_HANDLE_NULL;

	CU_ASSERT_EQUAL_FATAL(dat_evd_create(ia, qlen, cno, flags, &h),
			      DAT_SUCCESS);
	return h;
}

/* The provider's own table, for the calls libdat2 does not export. */
static const DAT_PROVIDER *
provider(DAT_IA_HANDLE *pia)
{
	if (dats_get_ia_handle(ia, pia) != DAT_SUCCESS)
		return NULL;
	return *(DAT_PROVIDER **)*pia;
}

/* ---- a thread that does one thing later ---- */

enum act { ACT_POST, ACT_UNWAITABLE, ACT_WAIT, ACT_CNO_WAIT };

struct later {
	pthread_t tid;
	enum act act;
	DAT_HANDLE h;
	unsigned int delay_ms;
	uintptr_t value;
	DAT_TIMEOUT timeout;
	DAT_RETURN ret;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_EVD_HANDLE evd;
	uint64_t act_ms;	/* when it acted (after the delay) */
	uint64_t done_ms;
};

static void *
later_run(void *arg)
{
	struct later *l = arg;

	sleep_ms(l->delay_ms);
	l->act_ms = evd_now_ms();
	switch (l->act) {
	case ACT_POST:
		l->ret = post(l->h, l->value);
		break;
	case ACT_UNWAITABLE:
		l->ret = dat_evd_set_unwaitable(l->h);
		break;
	case ACT_WAIT:
		l->ret = dat_evd_wait(l->h, l->timeout, 1, &l->ev, &l->nmore);
		break;
	case ACT_CNO_WAIT:
		l->ret = dat_cno_wait(l->h, l->timeout, &l->evd);
		break;
	}
	l->done_ms = evd_now_ms();
	return NULL;
}

static void
later_start(struct later *l, enum act act, DAT_HANDLE h, unsigned int delay)
{
	l->act = act;
	l->h = h;
	l->delay_ms = delay;
	if (l->timeout == 0)
		l->timeout = LONG;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&l->tid, NULL, later_run, l), 0);
}

/* ---- EVD ---- */

static const DAT_EVD_FLAGS flag_sets[] = {
	DAT_EVD_SOFTWARE_FLAG,
	DAT_EVD_CR_FLAG,
	DAT_EVD_DTO_FLAG,
	DAT_EVD_CONNECTION_FLAG,
	DAT_EVD_RMR_BIND_FLAG,
	DAT_EVD_ASYNC_FLAG,
	DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,	/* dapltest */
	DAT_EVD_CR_FLAG | DAT_EVD_CONNECTION_FLAG,
	DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG | DAT_EVD_CR_FLAG,
	DAT_EVD_DEFAULT_FLAG,
	DAT_EVD_DEFAULT_FLAG | DAT_EVD_SOFTWARE_FLAG,
};

static void
test_create_flags(void)
{
	DAT_EVD_PARAM p;
	DAT_EVD_HANDLE h;
	DAT_EVENT ev;
	unsigned int i;

	for (i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]); i++) {
		h = evd_new(16, DAT_HANDLE_NULL, flag_sets[i]);
		memset(&p, 0xa5, sizeof(p));
		ASSERT_OK(dat_evd_query(h, DAT_EVD_FIELD_ALL, &p));
		CU_ASSERT_EQUAL(p.evd_flags, flag_sets[i]);
		CU_ASSERT_EQUAL(p.ia_handle, ia);	/* the registry's */
		CU_ASSERT(p.evd_qlen >= 16);
		CU_ASSERT_EQUAL(p.cno_handle, DAT_HANDLE_NULL);
		CU_ASSERT(p.evd_state & DAT_EVD_STATE_ENABLED);
		CU_ASSERT(p.evd_state & DAT_EVD_STATE_WAITABLE);
		CU_ASSERT_EQUAL(dat_evd_dequeue(h, &ev), DAT_QUEUE_EMPTY);
		ASSERT_OK(dat_evd_free(h));
	}
}

static void
test_create_bad(void)
{
	DAT_EVD_HANDLE h = DAT_HANDLE_NULL, other;
	DAT_CNO_HANDLE cno;

	ASSERT_RET(dat_evd_create(ia, 8, DAT_HANDLE_NULL, 0x2, &h),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	ASSERT_RET(dat_evd_create(ia, 8, DAT_HANDLE_NULL,
				  DAT_EVD_DTO_FLAG | 0x1000, &h),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	ASSERT_RET(dat_evd_create(ia, 0, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &h),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ASSERT_RET(dat_evd_create(ia, -5, DAT_HANDLE_NULL,
				  DAT_EVD_SOFTWARE_FLAG, &h),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	CU_ASSERT_EQUAL(TYPE(dat_evd_create(ia, QLEN_MAX + 1, DAT_HANDLE_NULL,
					    DAT_EVD_SOFTWARE_FLAG, &h)),
			DAT_INSUFFICIENT_RESOURCES);
	ASSERT_RET(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
				  NULL),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	/* the largest queue works, and its CQ */
	other = evd_new(QLEN_MAX, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
	ASSERT_OK(dat_evd_free(other));
	/* a CNO handle that is an EVD, a freed CNO */
	other = evd_new(4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	ASSERT_RET(dat_evd_create(ia, 8, other, DAT_EVD_DTO_FLAG, &h),
		   DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	ASSERT_OK(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	ASSERT_OK(dat_cno_free(cno));
	ASSERT_RET(dat_evd_create(ia, 8, cno, DAT_EVD_DTO_FLAG, &h),
		   DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	ASSERT_OK(dat_evd_free(other));
}

/* Every EVD call on a handle that is no (live) EVD. */
static void
all_calls_refuse(DAT_EVD_HANDLE bad)
{
	DAT_EVD_PARAM p;
	DAT_EVENT ev;
	DAT_COUNT n;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	CU_ASSERT_EQUAL(TYPE(dat_evd_query(bad, DAT_EVD_FIELD_ALL, &p)),
			DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_modify_cno(bad, DAT_HANDLE_NULL)),
			DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_enable(bad)), DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_disable(bad)), DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_wait(bad, 0, 1, &ev, &n)),
			DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_resize(bad, 8)), DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_post_se(bad, &ev)), DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_dequeue(bad, &ev)), DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_set_unwaitable(bad)), DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_clear_unwaitable(bad)),
			DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(TYPE(dat_evd_free(bad)), DAT_INVALID_HANDLE);
}

static void
test_bad_handles(void)
{
	DAT_EVD_HANDLE h = evd_new(4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_CNO_HANDLE cno;
	DAT_EVD_PARAM p;
	DAT_EVENT ev;
	DAT_COUNT n;

	/* NULL out-pointers */
	ASSERT_RET(dat_evd_query(h, DAT_EVD_FIELD_ALL, NULL),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	ASSERT_RET(dat_evd_query(h, 0x100, &p),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ASSERT_RET(dat_evd_dequeue(h, NULL),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ASSERT_RET(dat_evd_wait(h, 0, 1, NULL, &n),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	ASSERT_RET(dat_evd_wait(h, 0, 1, &ev, NULL),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	ASSERT_RET(dat_evd_post_se(h, NULL),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	/* a live handle of another type */
	ASSERT_OK(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	all_calls_refuse((DAT_EVD_HANDLE)cno);
	ASSERT_OK(dat_cno_free(cno));
	/* freed */
	ASSERT_OK(dat_evd_free(h));
	all_calls_refuse(h);
	/* and NULL, which the registry answers itself */
	all_calls_refuse(DAT_HANDLE_NULL);
}

static void
test_post_dequeue(void)
{
	DAT_EVD_HANDLE h = evd_new(4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE dto = evd_new(4, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
	DAT_EVENT ev;
	uintptr_t v;

	for (v = 1; v <= 4; v++)
		ASSERT_OK(post(h, v));
	CU_ASSERT_EQUAL(post(h, 5), DAT_QUEUE_FULL);
	for (v = 1; v <= 4; v++) {
		memset(&ev, 0, sizeof(ev));
		ASSERT_OK(dat_evd_dequeue(h, &ev));
		CU_ASSERT_EQUAL(ev.event_number, DAT_SOFTWARE_EVENT);
		CU_ASSERT_EQUAL(ev.evd_handle, h);
		CU_ASSERT_EQUAL(value_of(&ev), v);
	}
	CU_ASSERT_EQUAL(dat_evd_dequeue(h, &ev), DAT_QUEUE_EMPTY);
	/* wraps around */
	for (v = 10; v < 30; v++) {
		ASSERT_OK(post(h, v));
		ASSERT_OK(dat_evd_dequeue(h, &ev));
		CU_ASSERT_EQUAL(value_of(&ev), v);
	}
	/* software events only, and only on software EVDs */
	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_DTO_COMPLETION_EVENT;
	ASSERT_RET(dat_evd_post_se(h, &ev),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	CU_ASSERT_EQUAL(TYPE(post(dto, 1)), DAT_INVALID_PARAMETER);
	/* dequeue works on any EVD */
	CU_ASSERT_EQUAL(dat_evd_dequeue(dto, &ev), DAT_QUEUE_EMPTY);
	CU_ASSERT_EQUAL(dat_evd_dequeue(async_evd, &ev), DAT_QUEUE_EMPTY);
	ASSERT_OK(dat_evd_free(h));
	ASSERT_OK(dat_evd_free(dto));
}

static void
test_wait_threshold_timeout(void)
{
	DAT_EVD_HANDLE h = evd_new(8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n = -1;
	uint64_t t0;

	ASSERT_RET(dat_evd_wait(h, 0, 0, &ev, &n),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	ASSERT_RET(dat_evd_wait(h, 0, 9, &ev, &n),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	CU_ASSERT_EQUAL(dat_evd_wait(h, 0, 1, &ev, &n), DAT_TIMEOUT_EXPIRED);
	CU_ASSERT_EQUAL(n, 0);
	t0 = evd_now_ms();
	CU_ASSERT_EQUAL(dat_evd_wait(h, 50 * MS, 1, &ev, &n),
			DAT_TIMEOUT_EXPIRED);
	CU_ASSERT(evd_now_ms() - t0 >= 45);
	CU_ASSERT(evd_now_ms() - t0 < 1000);
	/* below the threshold: no event taken, nmore tells how many */
	ASSERT_OK(post(h, 1));
	ASSERT_OK(post(h, 2));
	n = -1;
	CU_ASSERT_EQUAL(dat_evd_wait(h, 20 * MS, 3, &ev, &n),
			DAT_TIMEOUT_EXPIRED);
	CU_ASSERT_EQUAL(n, 2);
	n = -1;
	ASSERT_OK(dat_evd_wait(h, 20 * MS, 2, &ev, &n));
	CU_ASSERT_EQUAL(value_of(&ev), 1);
	CU_ASSERT_EQUAL(ev.evd_handle, h);
	CU_ASSERT_EQUAL(n, 1);
	ASSERT_OK(dat_evd_wait(h, DAT_TIMEOUT_INFINITE, 1, &ev, &n));
	CU_ASSERT_EQUAL(value_of(&ev), 2);
	CU_ASSERT_EQUAL(n, 0);
	ASSERT_OK(dat_evd_free(h));
}

/* A blocked wait returns soon after another thread posts, whatever native
 * sources the EVD also has. */
static void
test_wait_woken(void)
{
	static const DAT_EVD_FLAGS sets[] = {
		DAT_EVD_SOFTWARE_FLAG,
		DAT_EVD_SOFTWARE_FLAG | DAT_EVD_DTO_FLAG,
		DAT_EVD_SOFTWARE_FLAG | DAT_EVD_CR_FLAG,
		DAT_EVD_SOFTWARE_FLAG | DAT_EVD_DEFAULT_FLAG,
	};
	struct later l;
	DAT_EVD_HANDLE h;
	DAT_EVENT ev;
	DAT_COUNT n;
	uint64_t t0, t1;

	for (unsigned int i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		h = evd_new(8, DAT_HANDLE_NULL, sets[i]);
		memset(&l, 0, sizeof(l));
		l.value = 77 + i;
		t0 = evd_now_ms();
		later_start(&l, ACT_POST, h, 50);
		ASSERT_OK(dat_evd_wait(h, LONG, 1, &ev, &n));
		t1 = evd_now_ms();
		pthread_join(l.tid, NULL);
		ASSERT_OK(l.ret);
		CU_ASSERT_EQUAL(value_of(&ev), 77 + i);
		CU_ASSERT(t1 - t0 >= 45);
		CU_ASSERT(t1 - l.act_ms < WOKEN_MS);
		ASSERT_OK(dat_evd_free(h));
	}
}

static void
test_resize(void)
{
	DAT_EVD_HANDLE h = evd_new(4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE dto = evd_new(16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
	DAT_EVD_HANDLE cr = evd_new(16, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG);
	DAT_EVD_PARAM p;
	DAT_EVENT ev;
	uintptr_t v;

	/* wrap the ring first, so that the copy has to unwrap it */
	ASSERT_OK(post(h, 100));
	ASSERT_OK(post(h, 101));
	ASSERT_OK(dat_evd_dequeue(h, &ev));
	ASSERT_OK(dat_evd_dequeue(h, &ev));
	for (v = 1; v <= 3; v++)
		ASSERT_OK(post(h, v));
	CU_ASSERT_EQUAL(TYPE(dat_evd_resize(h, 2)), DAT_INVALID_STATE);
	ASSERT_RET(dat_evd_resize(h, 0), DAT_INVALID_PARAMETER,
		   DAT_INVALID_ARG2);
	CU_ASSERT_EQUAL(TYPE(dat_evd_resize(h, QLEN_MAX + 1)),
			DAT_INSUFFICIENT_RESOURCES);
	ASSERT_OK(dat_evd_resize(h, 8));
	ASSERT_OK(dat_evd_query(h, DAT_EVD_FIELD_EVD_QLEN, &p));
	CU_ASSERT_EQUAL(p.evd_qlen, 8);
	for (v = 4; v <= 8; v++)
		ASSERT_OK(post(h, v));
	CU_ASSERT_EQUAL(post(h, 9), DAT_QUEUE_FULL);
	for (v = 1; v <= 8; v++) {
		ASSERT_OK(dat_evd_dequeue(h, &ev));
		CU_ASSERT_EQUAL(value_of(&ev), v);
	}
	ASSERT_OK(dat_evd_resize(h, 3));	/* shrinking an empty one */
	ASSERT_OK(dat_evd_query(h, DAT_EVD_FIELD_EVD_QLEN, &p));
	CU_ASSERT_EQUAL(p.evd_qlen, 3);
	/* native queues do not grow: a CQ of 1024 holds twice 512 */
	ASSERT_OK(dat_evd_resize(dto, 512));
	CU_ASSERT_EQUAL(TYPE(dat_evd_resize(dto, 513)),
			DAT_INSUFFICIENT_RESOURCES);
	ASSERT_OK(dat_evd_resize(cr, 128));
	CU_ASSERT_EQUAL(TYPE(dat_evd_resize(cr, 129)),
			DAT_INSUFFICIENT_RESOURCES);
	ASSERT_OK(dat_evd_query(dto, DAT_EVD_FIELD_EVD_QLEN, &p));
	CU_ASSERT_EQUAL(p.evd_qlen, 512);
	ASSERT_OK(dat_evd_free(h));
	ASSERT_OK(dat_evd_free(dto));
	ASSERT_OK(dat_evd_free(cr));
}

static void
test_unwaitable(void)
{
	static const DAT_EVD_FLAGS sets[] = {
		DAT_EVD_SOFTWARE_FLAG,
		DAT_EVD_SOFTWARE_FLAG | DAT_EVD_DTO_FLAG,
		DAT_EVD_CONNECTION_FLAG,
	};
	struct later l, u;
	DAT_EVD_HANDLE h;
	DAT_EVD_PARAM p;
	DAT_EVENT ev;
	DAT_COUNT n;

	for (unsigned int i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		h = evd_new(8, DAT_HANDLE_NULL, sets[i]);
		ASSERT_OK(dat_evd_set_unwaitable(h));
		ASSERT_OK(dat_evd_query(h, DAT_EVD_FIELD_EVD_STATE, &p));
		CU_ASSERT(p.evd_state & DAT_EVD_STATE_UNWAITABLE);
		CU_ASSERT(!(p.evd_state & DAT_EVD_STATE_WAITABLE));
		ASSERT_RET(dat_evd_wait(h, 0, 1, &ev, &n), DAT_INVALID_STATE,
			   DAT_INVALID_STATE_EVD_UNWAITABLE);
		ASSERT_OK(dat_evd_clear_unwaitable(h));
		CU_ASSERT_EQUAL(dat_evd_wait(h, 0, 1, &ev, &n),
				DAT_TIMEOUT_EXPIRED);
		/* a blocked waiter is woken and told */
		memset(&l, 0, sizeof(l));
		memset(&u, 0, sizeof(u));
		later_start(&l, ACT_WAIT, h, 0);
		later_start(&u, ACT_UNWAITABLE, h, 50);
		pthread_join(u.tid, NULL);
		pthread_join(l.tid, NULL);
		ASSERT_OK(u.ret);
		ASSERT_RET(l.ret, DAT_INVALID_STATE,
			   DAT_INVALID_STATE_EVD_UNWAITABLE);
		CU_ASSERT(l.done_ms - u.act_ms < WOKEN_MS);
		/* events still arrive and can be dequeued */
		if (sets[i] & DAT_EVD_SOFTWARE_FLAG) {
			ASSERT_OK(post(h, 5));
			ASSERT_OK(dat_evd_dequeue(h, &ev));
		}
		ASSERT_OK(dat_evd_free(h));
	}
}

/* The waiter owns the EVD: other waits, dequeues and the free are refused
 * until it returns. */
static void
test_one_waiter(void)
{
	DAT_EVD_HANDLE h = evd_new(8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	struct later l;
	DAT_EVENT ev;
	DAT_COUNT n;

	memset(&l, 0, sizeof(l));
	later_start(&l, ACT_WAIT, h, 0);
	sleep_ms(50);
	ASSERT_RET(dat_evd_wait(h, 0, 1, &ev, &n), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_WAITER);
	ASSERT_RET(dat_evd_dequeue(h, &ev), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_WAITER);
	ASSERT_RET(dat_evd_free(h), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_IN_USE);
	ASSERT_OK(post(h, 9));
	pthread_join(l.tid, NULL);
	ASSERT_OK(l.ret);
	CU_ASSERT_EQUAL(value_of(&l.ev), 9);
	CU_ASSERT_EQUAL(l.nmore, 0);
	ASSERT_OK(dat_evd_free(h));
}

/* Several threads post while one waits: every event arrives once, each
 * poster's in its order. */
#define POSTERS		4
#define PER_POSTER	2000

static void *
poster(void *arg)
{
	DAT_EVD_HANDLE h = ((DAT_EVD_HANDLE *)arg)[0];
	uintptr_t id = (uintptr_t)((DAT_EVD_HANDLE *)arg)[1];
	DAT_RETURN r;

	for (uintptr_t i = 0; i < PER_POSTER; i++) {
		while ((r = post(h, id << 32 | i)) == DAT_QUEUE_FULL)
			sched_yield();
		if (r != DAT_SUCCESS)
			return (void *)1;
	}
	return NULL;
}

static void
test_concurrent_posts(void)
{
	DAT_EVD_HANDLE h = evd_new(64, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE args[POSTERS][2];
	pthread_t tid[POSTERS];
	uintptr_t next[POSTERS] = { 0 }, v;
	unsigned int got = 0, bad = 0;
	DAT_EVENT ev;
	DAT_COUNT n;
	void *res;

	for (uintptr_t i = 0; i < POSTERS; i++) {
		args[i][0] = h;
		args[i][1] = (DAT_EVD_HANDLE)i;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&tid[i], NULL, poster,
						     args[i]), 0);
	}
	while (got < POSTERS * PER_POSTER) {
		if (dat_evd_wait(h, LONG, 1, &ev, &n) != DAT_SUCCESS)
			break;
		v = value_of(&ev);
		if ((v >> 32) >= POSTERS || (v & 0xffffffff) != next[v >> 32])
			bad++;
		else
			next[v >> 32]++;
		got++;
	}
	CU_ASSERT_EQUAL(got, POSTERS * PER_POSTER);
	CU_ASSERT_EQUAL(bad, 0);
	for (unsigned int i = 0; i < POSTERS; i++) {
		pthread_join(tid[i], &res);
		CU_ASSERT_PTR_NULL(res);
	}
	CU_ASSERT_EQUAL(dat_evd_dequeue(h, &ev), DAT_QUEUE_EMPTY);
	ASSERT_OK(dat_evd_free(h));
}

/* EVDs that something uses cannot go: a PSP's CR EVD, the IA's async
 * EVD. */
static void
test_free_in_use(void)
{
	DAT_EVD_HANDLE cr = evd_new(8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG);
	DAT_PSP_HANDLE psp;
	DAT_EVD_PARAM p;

	ASSERT_OK(dat_evd_query(async_evd, DAT_EVD_FIELD_ALL, &p));
	CU_ASSERT_EQUAL(p.evd_flags, DAT_EVD_ASYNC_FLAG);
	CU_ASSERT(p.evd_qlen >= 8);
	ASSERT_RET(dat_evd_free(async_evd), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_IN_USE);
	ASSERT_OK(dat_psp_create(ia, 4711, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	ASSERT_RET(dat_evd_free(cr), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_IN_USE);
	ASSERT_OK(dat_psp_free(psp));
	ASSERT_OK(dat_evd_free(cr));
	CU_ASSERT_EQUAL(TYPE(dat_evd_free(cr)), DAT_INVALID_HANDLE);
}

/* ---- CNO ---- */

static void
test_cno_basic(void)
{
	DAT_CNO_HANDLE cno, other;
	DAT_EVD_HANDLE h, got = (DAT_EVD_HANDLE)1;
	DAT_CNO_PARAM cp;
	DAT_EVD_PARAM p;
	uint64_t t0;

	ASSERT_OK(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	ASSERT_OK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cp));
	CU_ASSERT_EQUAL(cp.proxy_type, DAT_PROXY_TYPE_NONE);
	CU_ASSERT_EQUAL(cp.ia_handle, ia);
	ASSERT_RET(dat_cno_query(cno, DAT_CNO_FIELD_ALL, NULL),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	h = evd_new(8, cno, DAT_EVD_SOFTWARE_FLAG);
	ASSERT_OK(dat_evd_query(h, DAT_EVD_FIELD_CNO, &p));
	CU_ASSERT_EQUAL(p.cno_handle, cno);
	/* nothing yet: the timeout, and no EVD */
	t0 = evd_now_ms();
	CU_ASSERT_EQUAL(dat_cno_wait(cno, 30 * MS, &got), DAT_QUEUE_EMPTY);
	CU_ASSERT_EQUAL(got, DAT_HANDLE_NULL);
	CU_ASSERT(evd_now_ms() - t0 >= 25);
	ASSERT_RET(dat_cno_wait(cno, 0, NULL), DAT_INVALID_PARAMETER,
		   DAT_INVALID_ARG3);
	/* a CNO nothing ever fed: empty (its EVD list was copied from NULL,
	 * undefined behaviour UBSan halted on: found by fuzz_dat) */
	ASSERT_OK(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &other));
	CU_ASSERT_EQUAL(dat_cno_wait(other, 0, &got), DAT_QUEUE_EMPTY);
	ASSERT_OK(dat_cno_free(other));
	/* fed by an EVD: cannot go */
	ASSERT_RET(dat_cno_free(cno), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_CNO_IN_USE);
	/* moving the EVD to another CNO and back */
	ASSERT_OK(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &other));
	ASSERT_OK(dat_evd_modify_cno(h, other));
	ASSERT_OK(dat_evd_query(h, DAT_EVD_FIELD_CNO, &p));
	CU_ASSERT_EQUAL(p.cno_handle, other);
	ASSERT_OK(dat_cno_free(cno));		/* nothing feeds it now */
	ASSERT_RET(dat_evd_modify_cno(h, cno), DAT_INVALID_HANDLE,
		   DAT_INVALID_HANDLE_CNO);
	ASSERT_RET(dat_evd_modify_cno(h, h), DAT_INVALID_HANDLE,
		   DAT_INVALID_HANDLE_CNO);
	ASSERT_OK(dat_evd_modify_cno(h, DAT_HANDLE_NULL));
	ASSERT_OK(dat_evd_query(h, DAT_EVD_FIELD_CNO, &p));
	CU_ASSERT_EQUAL(p.cno_handle, DAT_HANDLE_NULL);
	ASSERT_OK(dat_cno_free(other));
	/* freed CNO */
	CU_ASSERT_EQUAL(TYPE(dat_cno_query(other, DAT_CNO_FIELD_ALL, &cp)),
			DAT_INVALID_HANDLE);
	ASSERT_RET(dat_cno_wait(other, 0, &got), DAT_INVALID_HANDLE,
		   DAT_INVALID_HANDLE_CNO);
	ASSERT_RET(dat_cno_free(other), DAT_INVALID_HANDLE,
		   DAT_INVALID_HANDLE_CNO);
	ASSERT_RET(dat_cno_free((DAT_CNO_HANDLE)h), DAT_INVALID_HANDLE,
		   DAT_INVALID_HANDLE_CNO);
	ASSERT_OK(dat_evd_free(h));
}

/* A post on one of its EVDs from another thread wakes a CNO waiter with
 * that EVD; a disabled EVD does not. */
static void
test_cno_wait(void)
{
	DAT_EVD_HANDLE a, b, got;
	DAT_CNO_HANDLE cno;
	struct later l;
	DAT_EVENT ev;
	uint64_t t0;

	ASSERT_OK(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	a = evd_new(8, cno, DAT_EVD_SOFTWARE_FLAG);
	b = evd_new(8, cno, DAT_EVD_SOFTWARE_FLAG | DAT_EVD_DTO_FLAG);
	memset(&l, 0, sizeof(l));
	later_start(&l, ACT_POST, b, 50);
	got = DAT_HANDLE_NULL;
	ASSERT_OK(dat_cno_wait(cno, LONG, &got));
	pthread_join(l.tid, NULL);
	CU_ASSERT(evd_now_ms() - l.act_ms < WOKEN_MS);
	CU_ASSERT_EQUAL(got, b);
	ASSERT_OK(dat_evd_dequeue(b, &ev));
	/* a disabled EVD does not wake it, enabled again it does */
	ASSERT_OK(dat_evd_disable(a));
	ASSERT_OK(post(a, 1));
	CU_ASSERT_EQUAL(dat_cno_wait(cno, 30 * MS, &got), DAT_QUEUE_EMPTY);
	ASSERT_OK(dat_evd_enable(a));
	ASSERT_OK(dat_cno_wait(cno, 30 * MS, &got));
	CU_ASSERT_EQUAL(got, a);
	ASSERT_OK(dat_evd_dequeue(a, &ev));
	CU_ASSERT_EQUAL(value_of(&ev), 1);
	/* the last EVD goes: a waiter returns, with no EVD */
	memset(&l, 0, sizeof(l));
	l.timeout = 2000 * MS;
	later_start(&l, ACT_CNO_WAIT, cno, 0);
	sleep_ms(30);
	ASSERT_OK(dat_evd_free(a));
	ASSERT_OK(dat_evd_modify_cno(b, DAT_HANDLE_NULL));
	t0 = evd_now_ms();
	pthread_join(l.tid, NULL);
	ASSERT_OK(l.ret);
	CU_ASSERT_EQUAL(l.evd, DAT_HANDLE_NULL);
	CU_ASSERT((int64_t)(l.done_ms - t0) < WOKEN_MS);
	/* a waiter keeps the CNO */
	memset(&l, 0, sizeof(l));
	l.timeout = 300 * MS;
	later_start(&l, ACT_CNO_WAIT, cno, 0);
	sleep_ms(30);
	ASSERT_RET(dat_cno_free(cno), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_CNO_IN_USE);
	pthread_join(l.tid, NULL);
	CU_ASSERT_EQUAL(l.ret, DAT_QUEUE_EMPTY);
	ASSERT_OK(dat_cno_free(cno));
	ASSERT_OK(dat_evd_free(b));
}

static unsigned int agent_calls;
static DAT_EVD_HANDLE agent_evd;

static void DAT_API
agent(DAT_PVOID data, DAT_EVD_HANDLE evd)
{
	CU_ASSERT_EQUAL(data, &agent_calls);
	agent_evd = evd;
	agent_calls++;
}

/* The proxy agent is called on the first trigger, then forgotten. */
static void
test_cno_agent(void)
{
	DAT_OS_WAIT_PROXY_AGENT pa = { &agent_calls, agent };
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE h;
	DAT_CNO_PARAM cp;
	DAT_EVENT ev;

	agent_calls = 0;
	ASSERT_OK(dat_cno_create(ia, pa, &cno));
	ASSERT_OK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cp));
	CU_ASSERT_EQUAL(cp.proxy_type, DAT_PROXY_TYPE_AGENT);
	h = evd_new(8, cno, DAT_EVD_SOFTWARE_FLAG);
	ASSERT_OK(post(h, 1));
	CU_ASSERT_EQUAL(agent_calls, 1);
	CU_ASSERT_EQUAL(agent_evd, h);
	ASSERT_OK(post(h, 2));
	CU_ASSERT_EQUAL(agent_calls, 1);
	ASSERT_OK(dat_cno_modify_agent(cno, pa));
	ASSERT_OK(post(h, 3));
	CU_ASSERT_EQUAL(agent_calls, 2);
	while (dat_evd_dequeue(h, &ev) == DAT_SUCCESS)
		;
	ASSERT_OK(dat_evd_free(h));
	ASSERT_OK(dat_cno_free(cno));
}

/* dat_cno_fd_create and dat_cno_trigger (DAT 2.0, reached through the
 * provider's table: libdat2 2.1.10 does not export them). */
static void
test_cno_fd(void)
{
	DAT_IA_HANDLE pia;
	const DAT_PROVIDER *p = provider(&pia);
	DAT_EVD_HANDLE h, got;
	DAT_CNO_HANDLE cno;
	DAT_CNO_PARAM cp;
	struct pollfd pfd;
	DAT_FD fd = -1;
	DAT_EVENT ev;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	ASSERT_RET(p->cno_fd_create_func(pia, NULL, &cno),
		   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ASSERT_OK(p->cno_fd_create_func(pia, &fd, &cno));
	CU_ASSERT(fd >= 0);
	ASSERT_OK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cp));
	CU_ASSERT_EQUAL(cp.proxy_type, DAT_PROXY_TYPE_FD);
	CU_ASSERT_EQUAL(cp.proxy.fd, fd);
	h = evd_new(8, cno, DAT_EVD_SOFTWARE_FLAG | DAT_EVD_DTO_FLAG);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	CU_ASSERT_EQUAL(poll(&pfd, 1, 20), 0);
	got = (DAT_EVD_HANDLE)1;
	ASSERT_OK(p->cno_trigger_func(cno, &got));
	CU_ASSERT_EQUAL(got, DAT_HANDLE_NULL);
	ASSERT_OK(post(h, 1));
	CU_ASSERT_EQUAL(poll(&pfd, 1, 1000), 1);
	ASSERT_OK(p->cno_trigger_func(cno, &got));
	CU_ASSERT_EQUAL(got, h);
	CU_ASSERT_EQUAL(poll(&pfd, 1, 20), 0);	/* answered */
	ASSERT_RET(p->cno_trigger_func(cno, NULL), DAT_INVALID_PARAMETER,
		   DAT_INVALID_ARG2);
	ASSERT_OK(dat_evd_dequeue(h, &ev));
	ASSERT_OK(dat_evd_free(h));
	ASSERT_OK(dat_cno_free(cno));
	ASSERT_RET(p->cno_trigger_func(cno, &got), DAT_INVALID_HANDLE,
		   DAT_INVALID_HANDLE_CNO);
}

/* ---- setup ---- */

static int
suite_init(void)
{
	async_evd = DAT_HANDLE_NULL;
	return dat_ia_open(IA_NAME, 8, &async_evd, &ia) == DAT_SUCCESS ? 0 : 1;
}

static int
suite_clean(void)
{
	return dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG) == DAT_SUCCESS ? 0 : 1;
}

static CU_TestInfo evd_tests[] = {
	{ "create with each flag set", test_create_flags },
	{ "create refuses bad arguments", test_create_bad },
	{ "bad, freed and other handles", test_bad_handles },
	{ "post_se and dequeue", test_post_dequeue },
	{ "wait: threshold and timeout", test_wait_threshold_timeout },
	{ "wait woken by another thread", test_wait_woken },
	{ "resize", test_resize },
	{ "set_unwaitable wakes a waiter", test_unwaitable },
	{ "one waiter owns the EVD", test_one_waiter },
	{ "concurrent posts, one waiter", test_concurrent_posts },
	{ "free while in use", test_free_in_use },
	CU_TEST_INFO_NULL,
};

static CU_TestInfo cno_tests[] = {
	{ "create, query, link, free", test_cno_basic },
	{ "wait woken by a post", test_cno_wait },
	{ "proxy agent", test_cno_agent },
	{ "fd and trigger", test_cno_fd },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "evd", suite_init, suite_clean, NULL, NULL, evd_tests },
	{ "cno", suite_init, suite_clean, NULL, NULL, cno_tests },
	{ "evd-dto", evd_dto_init, evd_dto_clean, NULL, NULL, evd_dto_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	setenv("DPDAT_MEM_MB", "256", 0);
	dat_test_main(argc, argv, "evd", suites);
}
