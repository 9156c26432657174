/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Contexts and the access check: generations, exhaustion, every refusal
 * reason, and lookups racing with creation and destruction. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "test_mr.h"

#define ALL DPDAT_MEM_PRIV_ALL
#define LR DPDAT_MEM_PRIV_LOCAL_READ
#define RR DPDAT_MEM_PRIV_REMOTE_READ
#define RW DPDAT_MEM_PRIV_REMOTE_WRITE
#define LW DPDAT_MEM_PRIV_LOCAL_WRITE

static void
test_context_layout(void)
{
	char buf[64];
	struct dpdat_lmr *a, *b;
	uint32_t ca, cb;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	a = lmr_virtual(fx.pz1, buf, sizeof(buf), LR);
	b = lmr_virtual(fx.pz1, buf, sizeof(buf), LR);
	CU_ASSERT_FATAL(a && b);
	ca = lmr_ctx(a);
	cb = lmr_ctx(b);
	/* 24-bit index above an 8-bit generation; index 0 is never used */
	CU_ASSERT_NOT_EQUAL(ca >> 8, 0);
	CU_ASSERT_NOT_EQUAL(ca >> 8, cb >> 8);
	CU_ASSERT_NOT_EQUAL(ca & 0xff, 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(a), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(b), 0);
	fixture_teardown();
}

/* A freed context never resolves again: with two slots, every generation of
 * each is handed out once, then the slots retire and creation reports
 * exhaustion instead of reusing a context. */
static void
test_generations_never_reused(void)
{
	const unsigned int max = 2 * 255;
	uint32_t *seen = calloc(max + 10, sizeof(*seen));
	struct dpdat_lmr *lmr;
	unsigned int n = 0, k, j;
	char buf[64];

	CU_ASSERT_FATAL(seen != NULL);
	CU_ASSERT_FATAL(fixture_setup(2) == 0);
	for (k = 0; k < max + 10; k++) {
		lmr = lmr_virtual(fx.pz1, buf, sizeof(buf), LR | RR);
		if (lmr == NULL) {
			CU_ASSERT_EQUAL(rte_errno, ENOSPC);
			break;
		}
		seen[n++] = lmr_ctx(lmr);
		CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);
	}
	CU_ASSERT_EQUAL(n, max);
	for (k = 0; k < n; k++) {
		CU_ASSERT_NOT_EQUAL(dpdat_mr_access_check(fx.dom, seen[k],
			(uintptr_t)buf, 1, RR, fx.pz1_id, NULL),
			DPDAT_MR_CHECK_OK);
		for (j = k + 1; j < n && seen[j] != seen[k]; j++)
			;
		CU_ASSERT_EQUAL(j, n);	/* all distinct */
	}
	free(seen);
	fixture_teardown();
}

static void
test_exhaustion(void)
{
	struct dpdat_lmr *l[4];
	struct dpdat_rmr *rmr;
	struct dpdat_lmr_triplet seg;
	char buf[64];
	uint32_t win = 0, win2 = 0;
	unsigned int k;

	CU_ASSERT_FATAL(fixture_setup(4) == 0);
	for (k = 0; k < 4; k++) {
		l[k] = lmr_virtual(fx.pz1, buf, sizeof(buf), ALL);
		CU_ASSERT_FATAL(l[k] != NULL);
	}
	CU_ASSERT_PTR_NULL(lmr_virtual(fx.pz1, buf, sizeof(buf), ALL));
	CU_ASSERT_EQUAL(rte_errno, ENOSPC);
	CU_ASSERT_EQUAL(dpdat_mr_domain_count(fx.dom), 4);
	/* a bind needs a context too; a refused bind keeps the old one */
	rmr = dpdat_rmr_create(fx.pz1);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(l[0]), 0, (uintptr_t)buf, 8 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &win), -ENOSPC);
	CU_ASSERT_EQUAL(dpdat_lmr_free(l[3]), 0);
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &win), 0);
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RR, &win2), -ENOSPC);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, win, (uintptr_t)buf, 8,
		RW, fx.pz1_id, NULL), DPDAT_MR_CHECK_OK);
	CU_ASSERT_EQUAL(dpdat_rmr_free(rmr), 0);
	for (k = 0; k < 3; k++)
		CU_ASSERT_EQUAL(dpdat_lmr_free(l[k]), 0);
	fixture_teardown();
}

static void
test_access_check(void)
{
	char buf[4096];
	const uint64_t b = (uintptr_t)buf, n = sizeof(buf);
	struct dpdat_lmr *rw, *ro, *loc;
	struct dpdat_mr_xlat x;
	uint32_t crw, cro, cloc;
	struct {
		const char *what;
		uint32_t *ctx;
		uint64_t addr, len;
		uint32_t access;
		int other_pz;
		enum dpdat_mr_check want;
	} cases[] = {
		{ "whole region", &crw, b, n, RW, 0, DPDAT_MR_CHECK_OK },
		{ "last byte", &crw, b + n - 1, 1, RR | RW, 0, DPDAT_MR_CHECK_OK },
		{ "zero length at end", &crw, b + n, 0, RW, 0, DPDAT_MR_CHECK_OK },
		{ "one byte long", &crw, b, n + 1, RW, 0, DPDAT_MR_CHECK_BOUNDS },
		{ "one byte early", &crw, b - 1, 1, RW, 0, DPDAT_MR_CHECK_BOUNDS },
		{ "zero length past end", &crw, b + n + 1, 0, RW, 0,
		  DPDAT_MR_CHECK_BOUNDS },
		{ "address + length wraps", &crw, b + 8, UINT64_MAX - 4, RW, 0,
		  DPDAT_MR_CHECK_BOUNDS },
		{ "huge length", &crw, b, UINT64_MAX, RW, 0,
		  DPDAT_MR_CHECK_BOUNDS },
		{ "top of address space", &crw, UINT64_MAX, 1, RW, 0,
		  DPDAT_MR_CHECK_BOUNDS },
		{ "write to read-only", &cro, b, 8, RW, 0,
		  DPDAT_MR_CHECK_PRIVILEGE },
		{ "read from read-only", &cro, b, 8, RR, 0, DPDAT_MR_CHECK_OK },
		{ "remote read, local-only", &cloc, b, 8, RR, 0,
		  DPDAT_MR_CHECK_PRIVILEGE },
		{ "local read, local-only", &cloc, b, 8, LR, 0,
		  DPDAT_MR_CHECK_OK },
		{ "no access bits", &crw, b, 8, 0, 0, DPDAT_MR_CHECK_PRIVILEGE },
		{ "other protection zone", &crw, b, 8, RW, 1, DPDAT_MR_CHECK_PZ },
	};
	unsigned int k;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	rw = lmr_virtual(fx.pz1, buf, n, ALL);
	ro = lmr_virtual(fx.pz1, buf, n, LR | RR);
	loc = lmr_virtual(fx.pz1, buf, n, LR);
	CU_ASSERT_FATAL(rw && ro && loc);
	crw = lmr_ctx(rw);
	cro = lmr_ctx(ro);
	cloc = lmr_ctx(loc);
	for (k = 0; k < RTE_DIM(cases); k++) {
		enum dpdat_mr_check r = dpdat_mr_access_check(fx.dom,
			*cases[k].ctx, cases[k].addr, cases[k].len,
			cases[k].access,
			cases[k].other_pz ? fx.pz2_id : fx.pz1_id, NULL);
		if (r != cases[k].want)
			printf("\n    %s: got '%s', want '%s'", cases[k].what,
			       dpdat_mr_check_str(r),
			       dpdat_mr_check_str(cases[k].want));
		CU_ASSERT_EQUAL(r, cases[k].want);
	}
	/* keys that never existed */
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, 0, b, 1, RR, fx.pz1_id,
		NULL), DPDAT_MR_CHECK_UNKNOWN_KEY);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, 0xff, b, 1, RR,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_UNKNOWN_KEY);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, 0xffffff01, b, 1, RR,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_UNKNOWN_KEY);
	/* the right index with another generation */
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, (crw & ~0xffu) |
		((crw & 0xff) % 255 + 1), b, 1, RR, fx.pz1_id, NULL),
		DPDAT_MR_CHECK_STALE_KEY);
	/* translation */
	memset(&x, 0, sizeof(x));
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, crw, b + 100, 8, RR,
		fx.pz1_id, &x), DPDAT_MR_CHECK_OK);
	CU_ASSERT_PTR_EQUAL(x.addr, buf + 100);
	/* stack memory: copy-only, or extmem when the 4 KiB array happens
	 * to be page-aligned (then it registers whole pages) */
	CU_ASSERT(x.kind == DPDAT_MEM_KIND_COPY ||
		  x.kind == DPDAT_MEM_KIND_EXTMEM);
	CU_ASSERT_EQUAL(dpdat_lmr_free(rw), 0);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, crw, b, 1, RR, fx.pz1_id,
		NULL), DPDAT_MR_CHECK_STALE_KEY);
	CU_ASSERT_EQUAL(dpdat_lmr_free(ro), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(loc), 0);
	CU_ASSERT_STRING_EQUAL(dpdat_mr_check_str(DPDAT_MR_CHECK_PZ),
			       "protection zone mismatch");
	fixture_teardown();
}

static void
test_access_dpdk_iova(void)
{
	const size_t len = 64 << 10;
	char *buf = dpdat_mem_alloc(len, 4096, -1);
	struct dpdat_lmr_info i;
	struct dpdat_mr_xlat x;
	struct dpdat_lmr *lmr;

	CU_ASSERT_FATAL(buf != NULL);
	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	lmr = lmr_virtual(fx.pz1, buf, len, ALL);
	CU_ASSERT_FATAL(lmr != NULL);
	dpdat_lmr_query(lmr, &i);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, i.rmr_context,
		(uintptr_t)buf + 4000, 100, RW, fx.pz1_id, &x),
		DPDAT_MR_CHECK_OK);
	CU_ASSERT_EQUAL(x.kind, DPDAT_MEM_KIND_DPDK);
	if (x.iova != UINT64_MAX)
		CU_ASSERT_EQUAL(x.iova, rte_mem_virt2iova(buf + 4000));
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);
	fixture_teardown();
	dpdat_mem_free(buf);
}

/* Lookups on one thread while another creates and frees. Each generation
 * of a slot gets a different tuple (PZ, privileges, half of the buffer), and
 * the writer records the tuple of every context it hands out. The reader
 * asserts that an OK answer always matches the recorded tuple of that very
 * context (no torn read of a slot being re-published) and that a context
 * whose free had returned never resolves. Bounded in time. */
#define RACE_SLOTS 64
struct race_tuple {
	uint32_t ctx;
	uint32_t pz_id;
	uint32_t priv;
	uint64_t addr;
	uint64_t len;
};
static struct {
	struct race_tuple live[RACE_SLOTS];	/* seqlock'd by ctx */
	uint32_t dead[RACE_SLOTS];
	int stop;
	unsigned long lookups, ok_hits, stale_hits, torn;
} race;
static char race_buf[8192];

static void
race_probe(const struct race_tuple *t)
{
	/* ask for every tuple variant: only the recorded one may pass */
	const uint32_t pzs[2] = { fx.pz1_id, fx.pz2_id };
	const uint64_t base = (uintptr_t)race_buf;
	unsigned int p, h;

	for (p = 0; p < 2; p++) {
		for (h = 0; h < 2; h++) {
			uint64_t a = base + h * 4096;
			enum dpdat_mr_check r = dpdat_mr_access_check(fx.dom,
				t->ctx, a, 4096, RR, pzs[p], NULL);

			race.lookups++;
			if (r != DPDAT_MR_CHECK_OK)
				continue;
			race.ok_hits++;
			if (pzs[p] != t->pz_id || a != t->addr ||
			    !(t->priv & RR))
				race.torn++;
		}
	}
}

static void *
race_reader(void *arg)
{
	struct race_tuple t;
	unsigned int k = 0;
	uint32_t ctx;

	(void)arg;
	while (!__atomic_load_n(&race.stop, __ATOMIC_ACQUIRE)) {
		k = (k + 1) % RACE_SLOTS;
		ctx = __atomic_load_n(&race.dead[k], __ATOMIC_ACQUIRE);
		if (ctx != 0 && dpdat_mr_access_check(fx.dom, ctx,
				(uintptr_t)race_buf, 1, RR, fx.pz1_id,
				NULL) != DPDAT_MR_CHECK_STALE_KEY)
			race.stale_hits++;
		if (ctx != 0 && dpdat_mr_access_check(fx.dom, ctx,
				(uintptr_t)race_buf + 4096, 1, RR, fx.pz2_id,
				NULL) != DPDAT_MR_CHECK_STALE_KEY)
			race.stale_hits++;
		/* snapshot the recorded tuple consistently */
		ctx = __atomic_load_n(&race.live[k].ctx, __ATOMIC_ACQUIRE);
		t.pz_id = __atomic_load_n(&race.live[k].pz_id, __ATOMIC_RELAXED);
		t.priv = __atomic_load_n(&race.live[k].priv, __ATOMIC_RELAXED);
		t.addr = __atomic_load_n(&race.live[k].addr, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		t.ctx = __atomic_load_n(&race.live[k].ctx, __ATOMIC_RELAXED);
		if (ctx != 0 && t.ctx == ctx)
			race_probe(&t);
	}
	return NULL;
}

static void
race_record(unsigned int k, struct dpdat_lmr *lmr, uint32_t pz_id,
	    uint32_t priv, uint64_t addr)
{
	struct race_tuple *t = &race.live[k];

	__atomic_store_n(&t->ctx, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&t->pz_id, pz_id, __ATOMIC_RELAXED);
	__atomic_store_n(&t->priv, priv, __ATOMIC_RELAXED);
	__atomic_store_n(&t->addr, addr, __ATOMIC_RELAXED);
	if (lmr != NULL)
		__atomic_store_n(&t->ctx, lmr_ctx(lmr), __ATOMIC_RELEASE);
}

static void
test_concurrent_lookup(void)
{
	struct dpdat_lmr *held[RACE_SLOTS] = { NULL };
	struct timespec t0, t;
	unsigned long ops = 0;
	pthread_t th;
	unsigned int k, v;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	memset(&race, 0, sizeof(race));
	CU_ASSERT_FATAL(pthread_create(&th, NULL, race_reader, NULL) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		k = ops % RACE_SLOTS;
		v = (unsigned int)(ops / RACE_SLOTS) + k;
		if (held[k] != NULL) {
			uint32_t c = lmr_ctx(held[k]);

			race_record(k, NULL, 0, 0, 0);
			CU_ASSERT_EQUAL(dpdat_lmr_free(held[k]), 0);
			__atomic_store_n(&race.dead[k], c, __ATOMIC_RELEASE);
		}
		/* the freed slot comes back with another tuple */
		held[k] = lmr_virtual(v & 1 ? fx.pz2 : fx.pz1,
				      race_buf + (v & 2 ? 4096 : 0), 4096,
				      v & 4 ? LR : LR | RR);
		CU_ASSERT_FATAL(held[k] != NULL);
		race_record(k, held[k], v & 1 ? fx.pz2_id : fx.pz1_id,
			    v & 4 ? LR : LR | RR,
			    (uintptr_t)race_buf + (v & 2 ? 4096 : 0));
		ops++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L +
		 (t.tv_nsec - t0.tv_nsec) < 1500000000L);
	__atomic_store_n(&race.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("\n    %lu create/free, %lu lookups, %lu hits, %lu torn, "
	       "%lu stale hits ", ops, race.lookups, race.ok_hits, race.torn,
	       race.stale_hits);
	CU_ASSERT_EQUAL(race.stale_hits, 0);
	CU_ASSERT_EQUAL(race.torn, 0);
	CU_ASSERT(race.ok_hits > 0);
	CU_ASSERT(ops > RACE_SLOTS);
	for (k = 0; k < RACE_SLOTS; k++)
		if (held[k] != NULL)
			CU_ASSERT_EQUAL(dpdat_lmr_free(held[k]), 0);
	fixture_teardown();
}

/* A free must not return while a registered reader may still be touching
 * memory it checked before: it waits for the reader's quiescent state. */
static struct {
	struct dpdat_lmr *lmr;
	int freed;
} qs;

static void *
qs_freer(void *arg)
{
	(void)arg;
	CU_ASSERT_EQUAL(dpdat_lmr_free(qs.lmr), 0);
	__atomic_store_n(&qs.freed, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
test_free_waits_for_readers(void)
{
	struct timespec pause = { 0, 200 * 1000 * 1000 };
	unsigned int id, id2, ids[DPDAT_MR_DEFAULT_READERS], k;
	char buf[256];
	pthread_t th;
	uint32_t ctx;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	CU_ASSERT_EQUAL(dpdat_mr_reader_register(fx.dom, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_mr_reader_register(NULL, &id), -EBADF);
	CU_ASSERT_EQUAL_FATAL(dpdat_mr_reader_register(fx.dom, &id), 0);
	qs.lmr = lmr_virtual(fx.pz1, buf, sizeof(buf), LR | RR);
	qs.freed = 0;
	CU_ASSERT_FATAL(qs.lmr != NULL);
	ctx = lmr_ctx(qs.lmr);
	/* online reader checks, then "copies" for a while */
	dpdat_mr_reader_online(fx.dom, id);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, ctx, (uintptr_t)buf, 8,
		RR, fx.pz1_id, NULL), DPDAT_MR_CHECK_OK);
	CU_ASSERT_FATAL(pthread_create(&th, NULL, qs_freer, NULL) == 0);
	nanosleep(&pause, NULL);
	CU_ASSERT_EQUAL(__atomic_load_n(&qs.freed, __ATOMIC_ACQUIRE), 0);
	/* already dead for new checks, though the free has not returned */
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, ctx, (uintptr_t)buf, 8,
		RR, fx.pz1_id, NULL), DPDAT_MR_CHECK_STALE_KEY);
	dpdat_mr_reader_quiescent(fx.dom, id);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(qs.freed, 1);
	/* an offline reader does not hold frees up */
	dpdat_mr_reader_offline(fx.dom, id);
	qs.lmr = lmr_virtual(fx.pz1, buf, sizeof(buf), LR);
	CU_ASSERT_EQUAL(dpdat_lmr_free(qs.lmr), 0);
	CU_ASSERT_EQUAL(dpdat_mr_domain_free(fx.dom), -EBUSY);
	/* capacity */
	for (k = 0; k < DPDAT_MR_DEFAULT_READERS - 1; k++)
		CU_ASSERT_EQUAL(dpdat_mr_reader_register(fx.dom, &ids[k]), 0);
	CU_ASSERT_EQUAL(dpdat_mr_reader_register(fx.dom, &id2), -ENOSPC);
	for (k = 0; k < DPDAT_MR_DEFAULT_READERS - 1; k++)
		CU_ASSERT_EQUAL(dpdat_mr_reader_unregister(fx.dom, ids[k]), 0);
	CU_ASSERT_EQUAL(dpdat_mr_reader_unregister(fx.dom, id), 0);
	CU_ASSERT_EQUAL(dpdat_mr_reader_unregister(fx.dom, id), -EINVAL);
	fixture_teardown();
}

static int
count_cb(uint32_t ctx, struct dpdat_lmr *lmr, struct dpdat_rmr *rmr,
	 void *arg)
{
	unsigned int *n = arg;

	n[lmr != NULL ? 0 : 1]++;
	return ctx == 0;	/* never 0: the walk must go on */
}

static void
test_walk(void)
{
	char buf[128];
	struct dpdat_lmr *a, *b;
	struct dpdat_rmr *r;
	struct dpdat_lmr_triplet seg;
	unsigned int n[2] = { 0, 0 };

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	a = lmr_virtual(fx.pz1, buf, sizeof(buf), ALL);
	b = lmr_virtual(fx.pz1, buf, 64, LR);
	r = dpdat_rmr_create(fx.pz1);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(a), 0, (uintptr_t)buf, 64 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(r, &seg, RR, NULL), 0);
	CU_ASSERT_EQUAL(dpdat_mr_domain_walk(fx.dom, count_cb, n), 0);
	CU_ASSERT_EQUAL(n[0], 2);
	CU_ASSERT_EQUAL(n[1], 1);
	CU_ASSERT_EQUAL(dpdat_mr_domain_count(fx.dom), 3);
	CU_ASSERT_EQUAL(dpdat_mr_domain_walk(fx.dom, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_rmr_free(r), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(a), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(b), 0);
	fixture_teardown();
}

CU_TestInfo mr_table_tests[] = {
	{ "context layout", test_context_layout },
	{ "freed contexts never resolve again", test_generations_never_reused },
	{ "table exhaustion", test_exhaustion },
	{ "access check: every reason", test_access_check },
	{ "access check: DPDK memory IOVA", test_access_dpdk_iova },
	{ "lookups racing create/free", test_concurrent_lookup },
	{ "free waits for readers", test_free_waits_for_readers },
	{ "walk", test_walk },
	CU_TEST_INFO_NULL,
};
