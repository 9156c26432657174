/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The plug-in's memory calls through the real DAT registry (libdat2 reads
 * the dat.conf given as argv[1] through DAT_OVERRIDE): every return code
 * that the dat_lmr_create, dat_rmr_bind and dat_lmr_sync_rdma_write man
 * pages name, provoked for real, plus the PZ, RMR and sync_rdma_read calls.
 *
 * libdat2 reads DAT_OVERRIDE when it is loaded: main() sets it and
 * executes itself again. One process, IA "dpdat0" as a memif server with
 * a socket of its own. The binds that need a connected EP open "dpdat1"
 * as the memif client of the same socket and connect the two IAs through
 * the CM; they report
 * "skipped" (and pass) only while dat_ep_create or dat_evd_create answer
 * DAT_NOT_IMPLEMENTED, and fail otherwise if the connection does not come
 * up.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <CUnit/Basic.h>
#include <dat2/udat.h>
#include <dat2/dat_registry.h>	/* the DAT_*() provider-table macros */

#include "dat_main.h"

#define PG		4096
#define QUAL		4711
#define WAIT_US		(10 * 1000 * 1000)

#define LR		DAT_MEM_PRIV_LOCAL_READ_FLAG
#define LW		DAT_MEM_PRIV_LOCAL_WRITE_FLAG
#define RR		DAT_MEM_PRIV_REMOTE_READ_FLAG
#define RW		DAT_MEM_PRIV_REMOTE_WRITE_FLAG
#define ALL		DAT_MEM_PRIV_ALL_FLAG

static DAT_IA_HANDLE ia;
static DAT_PZ_HANDLE pz1, pz2;
static uint8_t buf[8 * PG] __attribute__((aligned(PG)));

/* The type alone, where the subtype is not ours to choose (registry). */
#define EXPECT_TYPE(got, want) do {					\
	DAT_RETURN g_ = (got);						\
	if (DAT_GET_TYPE(g_) != (DAT_RETURN)(want))			\
		printf("\n  %s:%d: got %s", __FILE__, __LINE__,	\
		       dat_test_ret_str(g_));					\
	CU_ASSERT_EQUAL(DAT_GET_TYPE(g_), (DAT_RETURN)(want));		\
} while (0)

static void
skip(const char *why)
{
	printf("\n  skipped: %s ", why);
	CU_PASS(why);
}

static DAT_RETURN
lmr_va(DAT_PZ_HANDLE pz, void *addr, DAT_VLEN len, DAT_MEM_PRIV_FLAGS priv,
       DAT_LMR_HANDLE *lmr, DAT_LMR_CONTEXT *ctx)
{
	DAT_REGION_DESCRIPTION rd = { .for_va = addr };

	return dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, len, pz, priv,
			      DAT_VA_TYPE_VA, lmr, ctx, NULL, NULL, NULL);
}

static DAT_RETURN
lmr_over(DAT_LMR_HANDLE parent, DAT_PZ_HANDLE pz, DAT_MEM_PRIV_FLAGS priv,
	 DAT_LMR_HANDLE *lmr)
{
	DAT_REGION_DESCRIPTION rd = { .for_lmr_handle = parent };

	return dat_lmr_create(ia, DAT_MEM_TYPE_LMR, rd, 0, pz, priv,
			      DAT_VA_TYPE_VA, lmr, NULL, NULL, NULL, NULL);
}

static DAT_RETURN
lmr_shared(void *addr, DAT_VLEN len, const char *cookie, DAT_LMR_HANDLE *lmr)
{
	DAT_REGION_DESCRIPTION rd;

	rd.for_shared_memory.virtual_address = addr;
	rd.for_shared_memory.shared_memory_id = (DAT_LMR_COOKIE)cookie;
	return dat_lmr_create(ia, DAT_MEM_TYPE_SHARED_VIRTUAL, rd, len, pz1,
			      LR | LW, DAT_VA_TYPE_VA, lmr, NULL, NULL, NULL,
			      NULL);
}

static DAT_RETURN
rmr_bind(DAT_RMR_HANDLE rmr, DAT_LMR_HANDLE lmr, const DAT_LMR_TRIPLET *t,
     DAT_MEM_PRIV_FLAGS priv, DAT_EP_HANDLE ep, uintptr_t cookie,
     DAT_COMPLETION_FLAGS flags, DAT_RMR_CONTEXT *ctx)
{
	DAT_RMR_COOKIE c = { .as_64 = cookie };

	return dat_rmr_bind(rmr, lmr, t, priv, DAT_VA_TYPE_VA, ep, c, flags,
			    ctx);
}

static DAT_LMR_TRIPLET
seg(DAT_LMR_CONTEXT ctx, const void *addr, DAT_SEG_LENGTH len)
{
	return (DAT_LMR_TRIPLET){ .lmr_context = ctx, .segment_length = len,
				  .virtual_address = (uintptr_t)addr };
}

/* A second open of dpdat0: its own registry handle on the same device. */
static DAT_IA_HANDLE
ia_open_another(void)
{
	DAT_EVD_HANDLE async = DAT_EVD_ASYNC_EXISTS;	/* none needed */
	DAT_IA_HANDLE h = DAT_HANDLE_NULL;

	if (dat_ia_open("dpdat0", 8, &async, &h) != DAT_SUCCESS)
		return DAT_HANDLE_NULL;
	return h;
}

/* Close an IA and check that its handle is dead. dat_ia_close() itself
 * may answer DAT_PROVIDER_NOT_FOUND after the provider closed the IA: the
 * registry then failed to find the provider's entry again (ia.c reports
 * is_thread_safe TRUE, dat.conf registers it nonthreadsafe). That is not a
 * memory matter: noted, not failed. */
static void
ia_close_checked(DAT_IA_HANDLE h)
{
	DAT_RETURN r = dat_ia_close(h, DAT_CLOSE_GRACEFUL_FLAG);
	DAT_EVD_HANDLE async;

	if (DAT_GET_TYPE(r) == DAT_PROVIDER_NOT_FOUND)
		printf("\n  note: dat_ia_close: %s ", dat_test_ret_str(r));
	else
		EXPECT(r, DAT_SUCCESS);
	EXPECT_TYPE(dat_ia_query(h, &async, 0, NULL, 0, NULL),
		    DAT_INVALID_HANDLE);
}

/* ---- protection zones ---- */

static void
test_pz(void)
{
	DAT_PZ_HANDLE pz;
	DAT_PZ_PARAM p;
	DAT_LMR_HANDLE lmr;
	DAT_RMR_HANDLE rmr;

	EXPECT(dat_pz_create(ia, NULL), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_pz_create(ia, &pz), DAT_SUCCESS);
	memset(&p, 0, sizeof(p));
	EXPECT(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_PTR_NOT_NULL(p.ia_handle);
	EXPECT(dat_pz_query(pz, DAT_PZ_FIELD_ALL, NULL),
	       BAD_PARAM(DAT_INVALID_ARG3));
	/* LMRs and RMRs keep it in use */
	EXPECT(lmr_va(pz, buf, 64, LR, &lmr, NULL), DAT_SUCCESS);
	EXPECT(dat_pz_free(pz), BAD_STATE(DAT_INVALID_STATE_PZ_IN_USE));
	EXPECT(dat_lmr_free(lmr), DAT_SUCCESS);
	EXPECT(dat_rmr_create(pz, &rmr), DAT_SUCCESS);
	EXPECT(dat_pz_free(pz), BAD_STATE(DAT_INVALID_STATE_PZ_IN_USE));
	EXPECT(dat_rmr_free(rmr), DAT_SUCCESS);
	EXPECT(dat_pz_free(pz), DAT_SUCCESS);
	/* stale, and of the wrong type */
	EXPECT(dat_pz_free(pz), BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &p),
	       BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(lmr_va(pz1, buf, 64, LR, &lmr, NULL), DAT_SUCCESS);
	EXPECT(dat_pz_free(lmr), BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(dat_lmr_free(lmr), DAT_SUCCESS);
}

/* ---- dat_lmr_create: DAT_SUCCESS ---- */

static void
test_lmr_create_success(void)
{
	static char cookie_a[DAT_LMR_COOKIE_SIZE] = { 0, 1, 2, 3 };
	static char cookie_b[DAT_LMR_COOKIE_SIZE] = { 0, 9, 9, 9 };
	DAT_REGION_DESCRIPTION rd = { .for_va = buf + 100 };
	DAT_LMR_HANDLE l, l2, l3, s1, s2, s3;
	DAT_LMR_CONTEXT lc = 0, lc3 = 0;
	DAT_RMR_CONTEXT rc = 1;
	DAT_VLEN rs = 0;
	DAT_VADDR ra = 0;
	DAT_LMR_PARAM p;
	uint8_t *shm;

	/* local privileges only: no rmr_context; registration in pages */
	EXPECT(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 5000, pz1, LR | LW,
			      DAT_VA_TYPE_VA, &l, &lc, &rc, &rs, &ra),
	       DAT_SUCCESS);
	CU_ASSERT_NOT_EQUAL(lc, 0);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(ra, (uintptr_t)buf);
	CU_ASSERT_EQUAL(rs, 2 * PG);
	memset(&p, 0, sizeof(p));
	EXPECT(dat_lmr_query(l, DAT_LMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.mem_type, DAT_MEM_TYPE_VIRTUAL);
	CU_ASSERT_PTR_EQUAL(p.region_desc.for_va, buf + 100);
	CU_ASSERT_EQUAL(p.length, 5000);
	CU_ASSERT_PTR_EQUAL(p.pz_handle, pz1);
	CU_ASSERT_EQUAL(p.mem_priv, LR | LW);
	CU_ASSERT_EQUAL(p.lmr_context, lc);
	CU_ASSERT_EQUAL(p.rmr_context, 0);
	CU_ASSERT_EQUAL(p.registered_size, rs);
	CU_ASSERT_EQUAL(p.registered_address, ra);
	/* a remote privilege: an rmr_context; NULL for unwanted outputs */
	EXPECT(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 5000, pz1, ALL,
			      DAT_VA_TYPE_VA, &l2, NULL, &rc, NULL, NULL),
	       DAT_SUCCESS);
	CU_ASSERT_NOT_EQUAL(rc, 0);
	/* over an existing LMR, in another PZ with other privileges */
	EXPECT(lmr_over(l, pz2, LR | RR, &l3), DAT_SUCCESS);
	EXPECT(dat_lmr_query(l3, DAT_LMR_FIELD_ALL, &p), DAT_SUCCESS);
	lc3 = p.lmr_context;
	CU_ASSERT_NOT_EQUAL(lc3, lc);
	CU_ASSERT_NOT_EQUAL(p.rmr_context, 0);
	CU_ASSERT_EQUAL(p.length, 5000);
	CU_ASSERT_PTR_EQUAL(p.pz_handle, pz2);
	CU_ASSERT_EQUAL(p.registered_address, ra);
	/* shared memory: one cookie names one region, compared in full (the
	 * two cookies are equal as C strings) */
	shm = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(shm != MAP_FAILED);
	EXPECT(lmr_shared(shm, 2 * PG, cookie_a, &s1), DAT_SUCCESS);
	EXPECT(lmr_shared(shm, 2 * PG, cookie_a, &s2), DAT_SUCCESS);
	EXPECT(lmr_shared(shm, PG, cookie_b, &s3), DAT_SUCCESS);
	EXPECT(dat_lmr_query(s2, DAT_LMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.mem_type, DAT_MEM_TYPE_SHARED_VIRTUAL);
	CU_ASSERT_EQUAL(p.registered_address, (uintptr_t)shm);
	CU_ASSERT_EQUAL(p.registered_size, 2 * PG);
	EXPECT(dat_lmr_free(s3), DAT_SUCCESS);
	EXPECT(dat_lmr_free(s2), DAT_SUCCESS);
	EXPECT(dat_lmr_free(s1), DAT_SUCCESS);
	munmap(shm, 2 * PG);
	/* the parent may go first: the child keeps the translation */
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
	EXPECT(dat_lmr_query(l3, DAT_LMR_FIELD_ALL, &p), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l3), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l2), DAT_SUCCESS);
}

/* ---- dat_lmr_create: DAT_INVALID_PARAMETER ---- */

static void
test_lmr_create_invalid_parameter(void)
{
	static char cookie[DAT_LMR_COOKIE_SIZE] = "invalid-parameter";
	DAT_REGION_DESCRIPTION rd = { .for_va = buf };
	DAT_LMR_HANDLE l, s;
	uint8_t *hole, *shm;

	rd.for_va = NULL;
	EXPECT(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 64, pz1, LR,
			      DAT_VA_TYPE_VA, &l, NULL, NULL, NULL, NULL),
	       BAD_PARAM(DAT_INVALID_ARG3));
	EXPECT(lmr_va(pz1, buf, 0, LR, &l, NULL), BAD_PARAM(DAT_INVALID_ARG4));
	EXPECT(lmr_va(pz1, (void *)(UINTPTR_MAX - 100), PG, LR, &l, NULL),
	       BAD_PARAM(DAT_INVALID_ARG4));
	/* memory that is not there */
	hole = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(hole != MAP_FAILED);
	munmap(hole, PG);
	EXPECT(lmr_va(pz1, hole, PG, LR, &l, NULL),
	       BAD_PARAM(DAT_INVALID_ARG3));
	/* privileges: unknown bits; remote write without local write */
	EXPECT(lmr_va(pz1, buf, 64, (DAT_MEM_PRIV_FLAGS)0x44, &l, NULL),
	       BAD_PARAM(DAT_INVALID_ARG6));
	EXPECT(lmr_va(pz1, buf, 64, LR | RW, &l, NULL),
	       BAD_PARAM(DAT_INVALID_ARG6));
	rd.for_va = buf;
	EXPECT(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 64, pz1, LR,
			      (DAT_VA_TYPE)7, &l, NULL, NULL, NULL, NULL),
	       BAD_PARAM(DAT_INVALID_ARG7));
	EXPECT(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 64, pz1, LR,
			      DAT_VA_TYPE_VA, NULL, NULL, NULL, NULL, NULL),
	       BAD_PARAM(DAT_INVALID_ARG8));
	/* shared: no cookie; a cookie that names another range */
	shm = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(shm != MAP_FAILED);
	EXPECT(lmr_shared(shm, PG, NULL, &s), BAD_PARAM(DAT_INVALID_ARG3));
	EXPECT(lmr_shared(shm, 2 * PG, cookie, &s), DAT_SUCCESS);
	EXPECT(lmr_shared(shm + PG, PG, cookie, &l),
	       BAD_PARAM(DAT_INVALID_ARG3));
	EXPECT(dat_lmr_free(s), DAT_SUCCESS);
	munmap(shm, 2 * PG);
}

/* ---- dat_lmr_create: DAT_INVALID_HANDLE ---- */

static void
test_lmr_create_invalid_handle(void)
{
	DAT_REGION_DESCRIPTION rd = { .for_va = buf };
	DAT_LMR_HANDLE l, parent;
	DAT_PZ_HANDLE pz, pz_other;
	DAT_IA_HANDLE other;

	/* a freed PZ, and handles of the wrong type */
	EXPECT(dat_pz_create(ia, &pz), DAT_SUCCESS);
	EXPECT(dat_pz_free(pz), DAT_SUCCESS);
	EXPECT(lmr_va(pz, buf, 64, LR, &l, NULL),
	       BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(lmr_va(pz1, buf, 64, LR, &parent, NULL), DAT_SUCCESS);
	EXPECT(lmr_va(parent, buf, 64, LR, &l, NULL),
	       BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(lmr_over(pz1, pz1, LR, &l), BAD_HANDLE(DAT_INVALID_HANDLE_LMR));
	/* a freed parent LMR */
	EXPECT(dat_lmr_free(parent), DAT_SUCCESS);
	EXPECT(lmr_over(parent, pz1, LR, &l),
	       BAD_HANDLE(DAT_INVALID_HANDLE_LMR));
	/* the PZ of another IA */
	other = ia_open_another();
	CU_ASSERT_PTR_NOT_NULL_FATAL(other);
	EXPECT(dat_pz_create(other, &pz_other), DAT_SUCCESS);
	EXPECT(lmr_va(pz_other, buf, 64, LR, &l, NULL),
	       BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(dat_pz_free(pz_other), DAT_SUCCESS);
	/* a closed IA: the registry answers */
	ia_close_checked(other);
	EXPECT_TYPE(dat_lmr_create(other, DAT_MEM_TYPE_VIRTUAL, rd, 64, pz1,
				   LR, DAT_VA_TYPE_VA, &l, NULL, NULL, NULL,
				   NULL), DAT_INVALID_HANDLE);
	/* not an IA, through the provider's table: the provider answers */
	EXPECT(DAT_LMR_CREATE(pz1, DAT_MEM_TYPE_VIRTUAL, rd, 64, pz1, LR,
			      DAT_VA_TYPE_VA, &l, NULL, NULL, NULL, NULL),
	       BAD_HANDLE(DAT_INVALID_HANDLE_IA));
}

/* ---- dat_lmr_create: DAT_INVALID_STATE ---- */

static void
test_lmr_create_invalid_state(void)
{
	static char cookie[DAT_LMR_COOKIE_SIZE] = "private";
	uint8_t *priv;
	DAT_LMR_HANDLE l;

	/* "shared virtual buffer was not created shared by the platform" */
	priv = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(priv != MAP_FAILED);
	EXPECT(lmr_shared(priv, PG, cookie, &l), DAT_INVALID_STATE);
	munmap(priv, PG);
}

/* ---- dat_lmr_create: DAT_MODEL_NOT_SUPPORTED ---- */

static void
test_lmr_create_model_not_supported(void)
{
	/* 3 is Solaris' SO_VIRTUAL, absent from these headers; 0x10 and up
	 * are kDAPL's types */
	static const int types[] = { 3, 0x10, 0x40, 0x7fffffff };
	DAT_REGION_DESCRIPTION rd = { .for_va = buf };
	DAT_LMR_HANDLE l;

	for (unsigned int i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		EXPECT(dat_lmr_create(ia, (DAT_MEM_TYPE)types[i], rd, 64, pz1,
				      LR, DAT_VA_TYPE_VA, &l, NULL, NULL, NULL,
				      NULL), DAT_MODEL_NOT_SUPPORTED);
	/* zero-based virtual addresses */
	EXPECT(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 64, pz1, LR,
			      DAT_VA_TYPE_ZB, &l, NULL, NULL, NULL, NULL),
	       DAT_MODEL_NOT_SUPPORTED);
}

/* ---- dat_lmr_create: DAT_INSUFFICIENT_RESOURCES ---- */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_CLANG 1
#endif
#endif
#ifndef ASAN_CLANG
#define ASAN_CLANG 0
#endif

struct hog {
	struct hog *next;
};

/* Take every byte malloc can still give (under RLIMIT_AS, so the heap
 * cannot grow): big blocks, then smaller, then the per-size caches. A
 * failing malloc retries in another arena, so a size is done only after
 * many failures in a row. */
static __attribute__((unused)) struct hog *
hog_heap(void)
{
	static const size_t sizes[] = {
		1 << 24, 1 << 20, 1 << 16, 1 << 12, 1 << 10, 256, 64, 16 };
	struct hog *list = NULL, *h;
	unsigned int miss;

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (miss = 0; miss < 64;) {
			h = malloc(sizes[i]);
			if (h == NULL) {
				miss++;
				continue;
			}
			miss = 0;
			h->next = list;
			list = h;
		}
	for (size_t sz = 16; sz <= 1040; sz += 16)
		while ((h = malloc(sz)) != NULL) {
			h->next = list;
			list = h;
		}
	return list;
}
static __attribute__((unused)) uint64_t
vm_size(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The process is out of memory for real: its address space may not grow
 * (RLIMIT_AS at its current size) and malloc has nothing left. Nothing in
 * between may allocate: CUnit asserts only after the limit is lifted. */
static void
test_lmr_create_insufficient_resources(void)
{
#if defined(__SANITIZE_ADDRESS__) || ASAN_CLANG
	skip("the ASan allocator aborts where malloc returns NULL");
#else
	struct rlimit old, lim;
	struct hog *hogs, *h;
	DAT_LMR_HANDLE parent, l = DAT_HANDLE_NULL;
	DAT_RETURN r;
	uint64_t vm;

	EXPECT(lmr_va(pz1, buf, PG, LR | LW, &parent, NULL), DAT_SUCCESS);
	CU_ASSERT_FATAL(getrlimit(RLIMIT_AS, &old) == 0);
	vm = vm_size();
	CU_ASSERT_FATAL(vm != 0);
	lim = old;
	if (old.rlim_cur == RLIM_INFINITY || old.rlim_cur > vm)
		lim.rlim_cur = vm;
	CU_ASSERT_FATAL(setrlimit(RLIMIT_AS, &lim) == 0);
	hogs = hog_heap();
	r = lmr_over(parent, pz1, LR, &l);
	while (hogs != NULL) {
		h = hogs;
		hogs = h->next;
		free(h);
	}
	CU_ASSERT_FATAL(setrlimit(RLIMIT_AS, &old) == 0);
	EXPECT_TYPE(r, DAT_INSUFFICIENT_RESOURCES);
	CU_ASSERT(DAT_GET_SUBTYPE(r) == DAT_RESOURCE_MEMORY ||
		  DAT_GET_SUBTYPE(r) == DAT_RESOURCE_MEMORY_REGION);
	if (r == DAT_SUCCESS)
		dat_lmr_free(l);
	/* and it works again */
	EXPECT(lmr_over(parent, pz1, LR, &l), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
	EXPECT(dat_lmr_free(parent), DAT_SUCCESS);
#endif
}

/* ---- dat_lmr_query, dat_lmr_free ---- */

static void
test_lmr_query_free(void)
{
	DAT_LMR_HANDLE l;
	DAT_LMR_PARAM p;

	EXPECT(lmr_va(pz1, buf, 64, LR, &l, NULL), DAT_SUCCESS);
	EXPECT(dat_lmr_query(l, DAT_LMR_FIELD_ALL, NULL),
	       BAD_PARAM(DAT_INVALID_ARG3));
	EXPECT(dat_lmr_query(l, (DAT_LMR_PARAM_MASK)0x800, &p),
	       BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_lmr_query(pz1, DAT_LMR_FIELD_ALL, &p),
	       BAD_HANDLE(DAT_INVALID_HANDLE_LMR));
	EXPECT(dat_lmr_free(pz1), BAD_HANDLE(DAT_INVALID_HANDLE_LMR));
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l), BAD_HANDLE(DAT_INVALID_HANDLE_LMR));
	EXPECT(dat_lmr_query(l, DAT_LMR_FIELD_ALL, &p),
	       BAD_HANDLE(DAT_INVALID_HANDLE_LMR));
}

/* ---- dat_lmr_sync_rdma_write and _read ---- */

typedef DAT_RETURN (*sync_fn)(DAT_IA_HANDLE, const DAT_LMR_TRIPLET *,
			      DAT_VLEN);

static void
sync_codes(sync_fn sync, bool write)
{
	DAT_LMR_HANDLE a, b, gone;
	DAT_LMR_CONTEXT ca, cb, cgone;
	DAT_LMR_TRIPLET t[40];
	DAT_IA_HANDLE other;

	EXPECT(lmr_va(pz1, buf, 2 * PG, LR | LW, &a, &ca), DAT_SUCCESS);
	EXPECT(lmr_va(pz2, buf + 4 * PG, PG, LR | LW, &b, &cb), DAT_SUCCESS);
	EXPECT(lmr_va(pz1, buf, PG, LR, &gone, &cgone), DAT_SUCCESS);
	EXPECT(dat_lmr_free(gone), DAT_SUCCESS);
	/* DAT_SUCCESS: segments of several LMRs and PZs, more than one
	 * batch of them; none at all; a zero-length one names nothing */
	for (unsigned int i = 0; i < 40; i++)
		t[i] = i % 2 ? seg(ca, buf + i, 100) :
			       seg(cb, buf + 4 * PG, PG);
	EXPECT(sync(ia, t, 40), DAT_SUCCESS);
	EXPECT(sync(ia, NULL, 0), DAT_SUCCESS);
	t[0] = seg(0xdeadbeef, NULL, 0);
	EXPECT(sync(ia, t, 1), DAT_SUCCESS);
	/* DAT_INVALID_PARAMETER: outside the LMR, an LMR that is gone or
	 * never was, no array */
	t[0] = seg(ca, buf + 2 * PG - 10, 11);
	EXPECT(sync(ia, t, 1), BAD_PARAM(DAT_INVALID_ARG2));
	t[0] = seg(cb, buf + 4 * PG - 1, 2);
	EXPECT(sync(ia, t, 1), BAD_PARAM(DAT_INVALID_ARG2));
	t[0] = seg(ca, (void *)(UINTPTR_MAX - 4), 10);
	EXPECT(sync(ia, t, 1), BAD_PARAM(DAT_INVALID_ARG2));
	t[0] = seg(cgone, buf, 10);
	EXPECT(sync(ia, t, 1), BAD_PARAM(DAT_INVALID_ARG2));
	t[0] = seg(0xdeadbeef, buf, 10);
	EXPECT(sync(ia, t, 1), BAD_PARAM(DAT_INVALID_ARG2));
	t[0] = seg(ca, buf, 10);
	t[39] = seg(cgone, buf, 10);	/* the last of two batches */
	EXPECT(sync(ia, t, 40), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(sync(ia, NULL, 1), BAD_PARAM(DAT_INVALID_ARG2));
	/* DAT_INVALID_HANDLE: a closed IA (the registry answers), and a
	 * handle that is not an IA (the provider answers) */
	t[0] = seg(ca, buf, 10);
	other = ia_open_another();
	CU_ASSERT_PTR_NOT_NULL_FATAL(other);
	EXPECT(sync(other, t, 1), DAT_SUCCESS);	/* the device's LMRs */
	ia_close_checked(other);
	EXPECT_TYPE(sync(other, t, 1), DAT_INVALID_HANDLE);
	EXPECT(write ? DAT_LMR_SYNC_RDMA_WRITE(pz1, t, 1) :
		       DAT_LMR_SYNC_RDMA_READ(pz1, t, 1),
	       BAD_HANDLE(DAT_INVALID_HANDLE_IA));
	EXPECT(dat_lmr_free(a), DAT_SUCCESS);
	EXPECT(dat_lmr_free(b), DAT_SUCCESS);
}

static void
test_lmr_sync_rdma_write(void)
{
	sync_codes(dat_lmr_sync_rdma_write, true);
}

static void
test_lmr_sync_rdma_read(void)
{
	sync_codes(dat_lmr_sync_rdma_read, false);
}

/* ---- RMRs ---- */

static void
test_rmr_create_query_free(void)
{
	DAT_RMR_HANDLE r, r2;
	DAT_RMR_PARAM p;
	DAT_PZ_HANDLE pz;

	EXPECT(dat_rmr_create(pz1, NULL), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_rmr_create(pz1, &r), DAT_SUCCESS);
	memset(&p, 0xff, sizeof(p));
	EXPECT(dat_rmr_query(r, DAT_RMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_PTR_EQUAL(p.pz_handle, pz1);
	CU_ASSERT_EQUAL(p.rmr_context, 0);	/* unbound */
	CU_ASSERT_EQUAL(p.lmr_triplet.segment_length, 0);
	CU_ASSERT_EQUAL(p.rmr_scope, DAT_RMR_SCOPE_PZ);
	EXPECT(dat_rmr_query(r, DAT_RMR_FIELD_ALL, NULL),
	       BAD_PARAM(DAT_INVALID_ARG3));
	EXPECT(dat_rmr_query(r, (DAT_RMR_PARAM_MASK)0x80, &p),
	       BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_rmr_query(pz1, DAT_RMR_FIELD_ALL, &p),
	       BAD_HANDLE(DAT_INVALID_HANDLE_RMR));
	/* libdat2 2.1.10 exports no dat_rmr_create_for_ep(): through the
	 * provider's table, as its DAT_RMR_CREATE_FOR_EP() macro does */
	EXPECT(DAT_RMR_CREATE_FOR_EP(pz1, &r2), DAT_SUCCESS);
	EXPECT(dat_rmr_query(r2, DAT_RMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_PTR_EQUAL(p.pz_handle, pz1);
	CU_ASSERT_EQUAL(p.rmr_context, 0);
	CU_ASSERT_EQUAL(p.rmr_scope, DAT_RMR_SCOPE_EP);
	EXPECT(dat_rmr_free(r2), DAT_SUCCESS);
	EXPECT(DAT_RMR_CREATE_FOR_EP(pz1, NULL), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(DAT_RMR_CREATE_FOR_EP(r, &r2),
	       BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(dat_rmr_free(pz1), BAD_HANDLE(DAT_INVALID_HANDLE_RMR));
	EXPECT(dat_rmr_free(r), DAT_SUCCESS);
	EXPECT(dat_rmr_free(r), BAD_HANDLE(DAT_INVALID_HANDLE_RMR));
	EXPECT(dat_rmr_query(r, DAT_RMR_FIELD_ALL, &p),
	       BAD_HANDLE(DAT_INVALID_HANDLE_RMR));
	EXPECT(dat_pz_create(ia, &pz), DAT_SUCCESS);
	EXPECT(dat_pz_free(pz), DAT_SUCCESS);
	EXPECT(dat_rmr_create(pz, &r), BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(DAT_RMR_CREATE_FOR_EP(pz, &r),
	       BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
}

/* ---- dat_rmr_bind: the codes decided before the EP is looked at ---- */

/* The memory checks come first, so a bind with no EP at all reports them;
 * with every argument right, the missing EP is the error. */
static void
test_rmr_bind_memory_codes(void)
{
	DAT_LMR_HANDLE l, ro, wo, l2;
	DAT_LMR_CONTEXT c, cro, cwo, c2;
	DAT_RMR_HANDLE r, r2, gone;
	DAT_LMR_TRIPLET t = { 0 };
	DAT_RMR_COOKIE ck = { .as_64 = 1 };
	DAT_RMR_CONTEXT rc;

	EXPECT(lmr_va(pz1, buf, 2 * PG, ALL, &l, &c), DAT_SUCCESS);
	EXPECT(lmr_va(pz1, buf, PG, LR | RR, &ro, &cro), DAT_SUCCESS);
	EXPECT(lmr_va(pz1, buf, PG, LW, &wo, &cwo), DAT_SUCCESS);
	EXPECT(lmr_va(pz2, buf, PG, ALL, &l2, &c2), DAT_SUCCESS);
	EXPECT(dat_rmr_create(pz1, &r), DAT_SUCCESS);
	EXPECT(dat_rmr_create(pz2, &r2), DAT_SUCCESS);
	EXPECT(dat_rmr_create(pz1, &gone), DAT_SUCCESS);
	EXPECT(dat_rmr_free(gone), DAT_SUCCESS);
	t = seg(c, buf + 10, 100);

	/* DAT_INVALID_HANDLE */
	EXPECT(rmr_bind(gone, l, &t, RR, NULL, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_RMR));
	EXPECT(rmr_bind(pz1, l, &t, RR, NULL, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_RMR));
	EXPECT(rmr_bind(r, pz1, &t, RR, NULL, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_LMR));
	EXPECT(rmr_bind(r, DAT_HANDLE_NULL, &t, RR, NULL, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_LMR));
	EXPECT(rmr_bind(r, l, &t, RR, NULL, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_EP));
	EXPECT(rmr_bind(r, l, &t, RR, pz1, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_EP));
	t.segment_length = 0;	/* unbind: the EP is still needed */
	EXPECT(rmr_bind(r, DAT_HANDLE_NULL, &t, 0, NULL, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_EP));
	t.segment_length = 100;

	/* DAT_INVALID_PARAMETER: the seed's "target_address or
	 * segment_length exceeded the limits of the existing LMR", a
	 * triplet of another LMR, bad privileges, va_type, flags */
	EXPECT(rmr_bind(r, l, NULL, RR, NULL, 1, 0, &rc),
	       BAD_PARAM(DAT_INVALID_ARG3));
	t = seg(c, buf + 2 * PG - 50, 51);
	EXPECT(rmr_bind(r, l, &t, RR, NULL, 1, 0, &rc),
	       BAD_PARAM(DAT_INVALID_ARG3));
	t = seg(c, (void *)((uintptr_t)buf - 1), 10);
	EXPECT(rmr_bind(r, l, &t, RR, NULL, 1, 0, &rc),
	       BAD_PARAM(DAT_INVALID_ARG3));
	t = seg(cro, buf, 10);
	EXPECT(rmr_bind(r, l, &t, RR, NULL, 1, 0, &rc),
	       BAD_PARAM(DAT_INVALID_ARG3));
	t = seg(c, buf, 10);
	EXPECT(rmr_bind(r, l, &t, (DAT_MEM_PRIV_FLAGS)0x80, NULL, 1, 0, &rc),
	       BAD_PARAM(DAT_INVALID_ARG4));
	EXPECT(dat_rmr_bind(r, l, &t, RR, (DAT_VA_TYPE)9, NULL, ck, 0, &rc),
	       BAD_PARAM(DAT_INVALID_ARG5));
	EXPECT(rmr_bind(r, l, &t, RR, NULL, 1,
			DAT_COMPLETION_SOLICITED_WAIT_FLAG, &rc),
	       BAD_PARAM(DAT_INVALID_ARG8));

	/* DAT_MODEL_NOT_SUPPORTED: zero-based addresses */
	EXPECT(dat_rmr_bind(r, l, &t, RR, DAT_VA_TYPE_ZB, NULL, ck, 0, &rc),
	       DAT_MODEL_NOT_SUPPORTED);

	/* DAT_PRIVILEGES_VIOLATION: remote read needs the LMR's local read,
	 * remote write its local write */
	t = seg(cwo, buf, 10);
	EXPECT(rmr_bind(r, wo, &t, RR, NULL, 1, 0, &rc),
	       DAT_PRIVILEGES_VIOLATION | DAT_PRIVILEGES_RDMA_READ);
	t = seg(cro, buf, 10);
	EXPECT(rmr_bind(r, ro, &t, RW, NULL, 1, 0, &rc),
	       DAT_PRIVILEGES_VIOLATION | DAT_PRIVILEGES_RDMA_WRITE);
	EXPECT(rmr_bind(r, ro, &t, RR, NULL, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_EP));	/* that one is fine */

	/* DAT_PROTECTION_VIOLATION: the RMR's PZ is not the LMR's */
	t = seg(c2, buf, 10);
	EXPECT(rmr_bind(r, l2, &t, RR, NULL, 1, 0, &rc),
	       DAT_PROTECTION_VIOLATION);
	t = seg(c, buf, 10);
	EXPECT(rmr_bind(r2, l, &t, RR | RW, NULL, 1, 0, &rc),
	       DAT_PROTECTION_VIOLATION);

	EXPECT(dat_rmr_free(r), DAT_SUCCESS);
	EXPECT(dat_rmr_free(r2), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
	EXPECT(dat_lmr_free(ro), DAT_SUCCESS);
	EXPECT(dat_lmr_free(wo), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l2), DAT_SUCCESS);
}

/* ---- dat_rmr_bind on an EP that is not connected ---- */

/* Needs dat_ep_create only (no EVD, no connection). */
static void
test_rmr_bind_unconnected_ep(void)
{
	DAT_EP_ATTR attr = { 0 };
	DAT_LMR_HANDLE l;
	DAT_LMR_CONTEXT c;
	DAT_RMR_HANDLE r;
	DAT_EP_HANDLE ep, ep2;
	DAT_LMR_TRIPLET t;
	DAT_RMR_CONTEXT rc;
	DAT_RETURN ret;

	ret = dat_ep_create(ia, pz1, NULL, NULL, NULL, NULL, &ep);
	if (ret == DAT_NOT_IMPLEMENTED) {
		skip("needs an EP (dat_ep_create: DAT_NOT_IMPLEMENTED)");
		return;
	}
	EXPECT(ret, DAT_SUCCESS);
	if (ret != DAT_SUCCESS)
		return;
	EXPECT(lmr_va(pz1, buf, PG, ALL, &l, &c), DAT_SUCCESS);
	EXPECT(dat_rmr_create(pz1, &r), DAT_SUCCESS);
	t = seg(c, buf, 64);

	/* DAT_INVALID_STATE: "Endpoint was not in the a
	 * DAT_EP_STATE_CONNECTED or DAT_EP_STATE_DISCONNECTED state" */
	EXPECT_TYPE(rmr_bind(r, l, &t, RR | RW, ep, 1, 0, &rc),
		    DAT_INVALID_STATE);
	t.segment_length = 0;
	EXPECT_TYPE(rmr_bind(r, DAT_HANDLE_NULL, &t, 0, ep, 1, 0, &rc),
		    DAT_INVALID_STATE);
	t.segment_length = 64;

	/* DAT_INVALID_PARAMETER: UNSIGNALLED on an EP whose request
	 * completion flags do not have it */
	EXPECT(rmr_bind(r, l, &t, RR, ep, 1, DAT_COMPLETION_UNSIGNALLED_FLAG,
		    &rc), BAD_PARAM(DAT_INVALID_ARG8));

	/* DAT_PROTECTION_VIOLATION: the EP's PZ is not the RMR's */
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = 4096;
	attr.max_rdma_size = 4096;
	attr.qos = DAT_QOS_BEST_EFFORT;
	attr.request_completion_flags = DAT_COMPLETION_UNSIGNALLED_FLAG;
	attr.max_recv_dtos = 4;
	attr.max_request_dtos = 4;
	attr.max_recv_iov = 1;
	attr.max_request_iov = 1;
	/* every QoS class the spec names is taken; other bits are not */
	attr.qos = 0x100;
	EXPECT(dat_ep_create(ia, pz2, NULL, NULL, NULL, &attr, &ep2),
	       BAD_PARAM(DAT_INVALID_ARG6));
	attr.qos = DAT_QOS_PREMIUM | DAT_QOS_LOW_LATENCY;
	EXPECT(dat_ep_create(ia, pz2, NULL, NULL, NULL, &attr, &ep2),
	       DAT_SUCCESS);
	EXPECT(rmr_bind(r, l, &t, RR, ep2, 1, 0, &rc),
	       DAT_PROTECTION_VIOLATION);

	/* the EP holds its PZ */
	EXPECT(dat_pz_free(pz2), BAD_STATE(DAT_INVALID_STATE_PZ_IN_USE));
	EXPECT(dat_ep_free(ep2), DAT_SUCCESS);
	EXPECT(dat_ep_free(ep), DAT_SUCCESS);
	/* a freed EP */
	EXPECT(rmr_bind(r, l, &t, RR, ep, 1, 0, &rc),
	       BAD_HANDLE(DAT_INVALID_HANDLE_EP));
	EXPECT(dat_rmr_free(r), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
}

/* ---- dat_rmr_bind on a connected EP ---- */

/* Server EP on dpdat0 (in pz1, where the binds happen) connected to a
 * client EP on dpdat1, the other end of the same memif socket. */
struct conn {
	DAT_IA_HANDLE cia;
	DAT_PZ_HANDLE cpz;
	DAT_EVD_HANDLE s_cr, s_conn, s_req, s_recv;
	DAT_EVD_HANDLE c_conn, c_req, c_recv;
	DAT_PSP_HANDLE psp;
	DAT_EP_HANDLE sep, cep;
};

#define evd(...)		dat_test_evd(__VA_ARGS__)
#define next_event(e, ev)	dat_test_next_event(e, ev, WAIT_US)

static void
conn_down(struct conn *c)
{
	DAT_EVD_HANDLE *evds[] = { &c->s_cr, &c->s_conn, &c->s_req,
				   &c->s_recv, &c->c_conn, &c->c_req,
				   &c->c_recv };

	if (c->sep != DAT_HANDLE_NULL)
		EXPECT(dat_ep_free(c->sep), DAT_SUCCESS);
	if (c->cep != DAT_HANDLE_NULL)
		EXPECT(dat_ep_free(c->cep), DAT_SUCCESS);
	if (c->psp != DAT_HANDLE_NULL)
		EXPECT(dat_psp_free(c->psp), DAT_SUCCESS);
	for (unsigned int i = 0; i < sizeof(evds) / sizeof(evds[0]); i++)
		if (*evds[i] != DAT_HANDLE_NULL)
			EXPECT(dat_evd_free(*evds[i]), DAT_SUCCESS);
	if (c->cpz != DAT_HANDLE_NULL)
		EXPECT(dat_pz_free(c->cpz), DAT_SUCCESS);
	if (c->cia != DAT_HANDLE_NULL)
		dat_ia_close(c->cia, DAT_CLOSE_ABRUPT_FLAG);
	memset(c, 0, sizeof(*c));
}

static int
conn_objects(struct conn *c, DAT_CONN_QUAL qual)
{
	const DAT_EVD_FLAGS req = DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG;
	DAT_RETURN r = dat_test_open_client(&c->cia);

	EXPECT(r, DAT_SUCCESS);
	if (r != DAT_SUCCESS)
		return -1;
	if (dat_pz_create(c->cia, &c->cpz) != DAT_SUCCESS ||
	    evd(ia, 4, DAT_EVD_CR_FLAG, &c->s_cr) != DAT_SUCCESS ||
	    evd(ia, 8, DAT_EVD_CONNECTION_FLAG, &c->s_conn) != DAT_SUCCESS ||
	    evd(ia, 8, req, &c->s_req) != DAT_SUCCESS ||
	    evd(ia, 8, DAT_EVD_DTO_FLAG, &c->s_recv) != DAT_SUCCESS ||
	    evd(c->cia, 8, DAT_EVD_CONNECTION_FLAG, &c->c_conn) !=
	    DAT_SUCCESS ||
	    evd(c->cia, 8, req, &c->c_req) != DAT_SUCCESS ||
	    evd(c->cia, 8, DAT_EVD_DTO_FLAG, &c->c_recv) != DAT_SUCCESS ||
	    dat_ep_create(ia, pz1, c->s_recv, c->s_req, c->s_conn, NULL,
			  &c->sep) != DAT_SUCCESS ||
	    dat_ep_create(c->cia, c->cpz, c->c_recv, c->c_req, c->c_conn,
			  NULL, &c->cep) != DAT_SUCCESS ||
	    dat_psp_create(ia, qual, c->s_cr, DAT_PSP_CONSUMER_FLAG,
			   &c->psp) != DAT_SUCCESS) {
		CU_FAIL("objects for a connection");
		return -1;
	}
	return 0;
}

/* 0: connected; 1: skip (EPs or EVDs not implemented yet); -1: failed. */
static int
conn_up(struct conn *c, DAT_CONN_QUAL qual)
{
	DAT_EVD_HANDLE e = DAT_HANDLE_NULL;
	DAT_EP_HANDLE ep = DAT_HANDLE_NULL;

	memset(c, 0, sizeof(*c));
	if (dat_ep_create(ia, pz1, NULL, NULL, NULL, NULL, &ep) ==
	    DAT_NOT_IMPLEMENTED)
		return 1;
	dat_ep_free(ep);
	if (evd(ia, 4, DAT_EVD_DTO_FLAG, &e) == DAT_NOT_IMPLEMENTED)
		return 1;
	dat_evd_free(e);
	if (conn_objects(c, qual) != 0)
		goto err;
	if (dat_test_connect(c->cep, c->sep, qual, c->s_cr, c->s_conn,
			     c->c_conn) != 0) {
		CU_FAIL("connection between dpdat0 and dpdat1");
		goto err;
	}
	return 0;
err:
	conn_down(c);
	return -1;
}

/* The bind's completion event on the server's request EVD. */
static void
expect_bind_event(struct conn *c, DAT_RMR_HANDLE r, uintptr_t cookie,
		  DAT_DTO_COMPLETION_STATUS status)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	EXPECT(dat_evd_dequeue(c->s_req, &ev), DAT_SUCCESS);
	CU_ASSERT_EQUAL(ev.event_number, DAT_RMR_BIND_COMPLETION_EVENT);
	CU_ASSERT_PTR_EQUAL(ev.evd_handle, c->s_req);
	CU_ASSERT_PTR_EQUAL(ev.event_data.rmr_completion_event_data.rmr_handle,
			    r);
	CU_ASSERT_EQUAL(
		ev.event_data.rmr_completion_event_data.user_cookie.as_64,
		cookie);
	CU_ASSERT_EQUAL(ev.event_data.rmr_completion_event_data.status,
			status);
}

static void
expect_no_event(struct conn *c)
{
	DAT_EVENT ev;

	EXPECT_TYPE(dat_evd_dequeue(c->s_req, &ev), DAT_QUEUE_EMPTY);
}

/* DAT_SUCCESS, its event and the flag rules; a bind kills the old context;
 * an LMR with a bound RMR stays; zero length unbinds. */
static void
bind_success(struct conn *c, DAT_RMR_HANDLE r, DAT_LMR_HANDLE l,
	     DAT_LMR_CONTEXT lc)
{
	DAT_LMR_TRIPLET t = seg(lc, buf + 64, 256);
	DAT_RMR_CONTEXT rc = 0, rc2 = 0;
	DAT_RMR_PARAM p;

	EXPECT(rmr_bind(r, l, &t, RR | RW, c->sep, 11, 0, &rc), DAT_SUCCESS);
	CU_ASSERT_NOT_EQUAL(rc, 0);
	expect_bind_event(c, r, 11, DAT_RMR_BIND_SUCCESS);
	EXPECT(dat_rmr_query(r, DAT_RMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.rmr_context, rc);
	CU_ASSERT_EQUAL(p.lmr_triplet.virtual_address, t.virtual_address);
	CU_ASSERT_EQUAL(p.lmr_triplet.segment_length, 256);
	CU_ASSERT_EQUAL(p.mem_priv, RR | RW);
	EXPECT(dat_lmr_free(l), BAD_STATE(DAT_INVALID_STATE_LMR_IN_USE));
	/* local bits are accepted (DAT_MEM_PRIV_ALL_FLAG, as dapltest
	 * passes); a fence costs nothing: the bind is done on return */
	EXPECT(rmr_bind(r, l, &t, ALL, c->sep, 12,
		    DAT_COMPLETION_BARRIER_FENCE_FLAG, &rc2), DAT_SUCCESS);
	CU_ASSERT_NOT_EQUAL(rc2, rc);
	expect_bind_event(c, r, 12, DAT_RMR_BIND_SUCCESS);
	/* suppressed: bound, no event */
	EXPECT(rmr_bind(r, l, &t, RR, c->sep, 13, DAT_COMPLETION_SUPPRESS_FLAG,
		    &rc), DAT_SUCCESS);
	expect_no_event(c);
	EXPECT(dat_rmr_query(r, DAT_RMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.rmr_context, rc);
	CU_ASSERT_EQUAL(p.mem_priv, RR);
	/* unbind: zero length, no LMR */
	t = seg(0, NULL, 0);
	EXPECT(rmr_bind(r, DAT_HANDLE_NULL, &t, 0, c->sep, 14, 0, &rc),
	       DAT_SUCCESS);
	expect_bind_event(c, r, 14, DAT_RMR_BIND_SUCCESS);
	EXPECT(dat_rmr_query(r, DAT_RMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.rmr_context, 0);
	CU_ASSERT_EQUAL(p.lmr_triplet.segment_length, 0);
}

/* DAT_INSUFFICIENT_RESOURCES: the request EVD has no room for the
 * completion. */
static void
bind_insufficient_resources(struct conn *c, DAT_RMR_HANDLE r,
			    DAT_LMR_HANDLE l, DAT_LMR_CONTEXT lc)
{
	DAT_LMR_TRIPLET t = seg(lc, buf, 64);
	DAT_RETURN ret = DAT_SUCCESS;
	DAT_RMR_CONTEXT rc;
	DAT_EVENT ev;
	int n;

	for (n = 0; n < 4096 && ret == DAT_SUCCESS; n++)
		ret = rmr_bind(r, l, &t, RR, c->sep, 100 + n, 0, &rc);
	EXPECT(ret, DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEVD);
	CU_ASSERT(n > 1);
	while (dat_evd_dequeue(c->s_req, &ev) == DAT_SUCCESS)
		n--;
	CU_ASSERT_EQUAL(n, 1);	/* every bind that succeeded reported */
	EXPECT(rmr_bind(r, l, &t, RR, c->sep, 7, 0, &rc), DAT_SUCCESS);
	expect_bind_event(c, r, 7, DAT_RMR_BIND_SUCCESS);
}

/* Seed: "If the operation returns successfully for the Endpoint in
 * DAT_EP_STATE_DISCONNECTED state, the posted RMR Bind is immediately
 * flushed to request_evd_handle." The RMR stays as it was. */
static void
bind_flushed(struct conn *c, DAT_RMR_HANDLE r, DAT_LMR_HANDLE l,
	     DAT_LMR_CONTEXT lc)
{
	DAT_LMR_TRIPLET t = seg(lc, buf, 64);
	DAT_RMR_CONTEXT before, rc = 1;
	DAT_RMR_PARAM p;
	DAT_EP_STATE st = DAT_EP_STATE_CONNECTED;
	DAT_EVENT ev;

	EXPECT(dat_rmr_query(r, DAT_RMR_FIELD_ALL, &p), DAT_SUCCESS);
	before = p.rmr_context;
	EXPECT(dat_ep_disconnect(c->sep, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	CU_ASSERT_EQUAL(next_event(c->s_conn, &ev),
			DAT_CONNECTION_EVENT_DISCONNECTED);
	dat_ep_get_status(c->sep, &st, NULL, NULL);
	CU_ASSERT_EQUAL_FATAL(st, DAT_EP_STATE_DISCONNECTED);
	/* suppression does not hide a flush: it is not a success */
	EXPECT(rmr_bind(r, l, &t, RR, c->sep, 21, DAT_COMPLETION_SUPPRESS_FLAG,
		    &rc), DAT_SUCCESS);
	expect_bind_event(c, r, 21, DAT_RMR_BIND_FAILURE);
	CU_ASSERT_EQUAL(rc, 0);
	EXPECT(dat_rmr_query(r, DAT_RMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.rmr_context, before);
}

static void
test_rmr_bind_connected_ep(void)
{
	struct conn c;
	DAT_LMR_HANDLE l;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_HANDLE r;
	int ret;

	ret = conn_up(&c, QUAL);
	if (ret == 1) {
		skip("needs connected EP (dat_ep_create or dat_evd_create: "
		     "DAT_NOT_IMPLEMENTED)");
		return;
	}
	if (ret != 0)
		return;
	printf("(connected) ");
	EXPECT(lmr_va(pz1, buf, 2 * PG, ALL, &l, &lc), DAT_SUCCESS);
	EXPECT(dat_rmr_create(pz1, &r), DAT_SUCCESS);
	bind_success(&c, r, l, lc);
	bind_insufficient_resources(&c, r, l, lc);
	bind_flushed(&c, r, l, lc);
	EXPECT(dat_rmr_free(r), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
	conn_down(&c);
}

/* ---- an RMR of EP scope ---- */

/* An RDMA WRITE of 64 bytes of fill from the client of c to the server's
 * memory at to, through an RMR context; the status of its completion. */
static DAT_DTO_COMPLETION_STATUS
write_through(struct conn *c, DAT_RMR_CONTEXT ctx, const void *to,
	      uint8_t fill)
{
	static uint8_t src[64] __attribute__((aligned(64)));
	DAT_REGION_DESCRIPTION rd = { .for_va = src };
	DAT_RMR_TRIPLET remote = { .rmr_context = ctx, .segment_length = 64,
				   .virtual_address = (uintptr_t)to };
	DAT_DTO_COOKIE cookie = { .as_64 = fill };
	DAT_DTO_COMPLETION_STATUS st = (DAT_DTO_COMPLETION_STATUS)-1;
	DAT_LMR_CONTEXT lc;
	DAT_LMR_HANDLE l;
	DAT_LMR_TRIPLET t;
	DAT_EVENT ev;

	memset(src, fill, sizeof(src));
	if (dat_lmr_create(c->cia, DAT_MEM_TYPE_VIRTUAL, rd, sizeof(src),
			   c->cpz, ALL, DAT_VA_TYPE_VA, &l, &lc, NULL, NULL,
			   NULL) != DAT_SUCCESS) {
		CU_FAIL("client LMR");
		return st;
	}
	t = seg(lc, src, sizeof(src));
	EXPECT(dat_ep_post_rdma_write(c->cep, 1, &t, cookie, &remote,
				      DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	if (next_event(c->c_req, &ev) == DAT_DTO_COMPLETION_EVENT &&
	    ev.event_data.dto_completion_event_data.user_cookie.as_64 == fill)
		st = ev.event_data.dto_completion_event_data.status;
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
	return st;
}

/* A graceful disconnection from the client, seen by both ends. */
static void
conn_disconnect(struct conn *c)
{
	DAT_EVENT ev;

	EXPECT(dat_ep_disconnect(c->cep, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
	CU_ASSERT_EQUAL(next_event(c->c_conn, &ev),
			DAT_CONNECTION_EVENT_DISCONNECTED);
	CU_ASSERT_EQUAL(next_event(c->s_conn, &ev),
			DAT_CONNECTION_EVENT_DISCONNECTED);
}

/* dat_rmr_create_for_ep: the context resolves for remote accesses through
 * the connection of the EP it was bound on, and no other, even one in the
 * same PZ; a PZ-scope RMR beside it resolves through both. */
static void
test_rmr_ep_scope(void)
{
	struct conn a, b;
	DAT_LMR_HANDLE l;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_HANDLE er, pr;
	DAT_RMR_CONTEXT ectx = 0, pctx = 0;
	DAT_LMR_TRIPLET t;
	DAT_RMR_PARAM p;
	DAT_EVENT ev;
	int ret;

	ret = conn_up(&a, QUAL);
	if (ret == 1)
		skip("needs connected EP");
	if (ret != 0)
		return;
	if (conn_up(&b, QUAL + 1) != 0) {
		conn_down(&a);
		return;
	}
	printf("(two connections) ");
	memset(buf, 0, 2 * PG);
	EXPECT(lmr_va(pz1, buf, 2 * PG, ALL, &l, &lc), DAT_SUCCESS);
	EXPECT(DAT_RMR_CREATE_FOR_EP(pz1, &er), DAT_SUCCESS);
	EXPECT(dat_rmr_create(pz1, &pr), DAT_SUCCESS);
	t = seg(lc, buf, 64);
	EXPECT(rmr_bind(er, l, &t, RW, a.sep, 1, DAT_COMPLETION_SUPPRESS_FLAG,
			&ectx), DAT_SUCCESS);
	t = seg(lc, buf + PG, 64);
	EXPECT(rmr_bind(pr, l, &t, RW, a.sep, 2, DAT_COMPLETION_SUPPRESS_FLAG,
			&pctx), DAT_SUCCESS);
	EXPECT(dat_rmr_query(er, DAT_RMR_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.rmr_scope, DAT_RMR_SCOPE_EP);
	CU_ASSERT_EQUAL(p.rmr_context, ectx);
	CU_ASSERT_EQUAL(p.mem_priv, RW);

	/* PZ scope: through either connection */
	CU_ASSERT_EQUAL(write_through(&a, pctx, buf + PG, 0xa1),
			DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL(buf[PG + 63], 0xa1);
	CU_ASSERT_EQUAL(write_through(&b, pctx, buf + PG, 0xb1),
			DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL(buf[PG + 63], 0xb1);
	/* EP scope: through a, where it was bound; refused through b, and
	 * not a byte written */
	CU_ASSERT_EQUAL(write_through(&a, ectx, buf, 0xa2), DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL(buf[0], 0xa2);
	CU_ASSERT_EQUAL(buf[63], 0xa2);
	CU_ASSERT_EQUAL(write_through(&b, ectx, buf, 0xb2),
			DAT_DTO_ERR_REMOTE_ACCESS);
	CU_ASSERT_EQUAL(buf[0], 0xa2);
	CU_ASSERT_EQUAL(buf[63], 0xa2);
	/* the refusal broke b only: a still writes */
	CU_ASSERT_EQUAL(write_through(&a, ectx, buf, 0xa3), DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL(buf[63], 0xa3);

	EXPECT(dat_rmr_free(er), DAT_SUCCESS);
	EXPECT(dat_rmr_free(pr), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
	/* the refused access broke b's QPs (the responder's and, with its
	 * NAK, the requester's): both ends learn it as a broken connection,
	 * with nobody disconnecting */
	CU_ASSERT_EQUAL(next_event(b.c_conn, &ev),
			DAT_CONNECTION_EVENT_BROKEN);
	CU_ASSERT_EQUAL(next_event(b.s_conn, &ev),
			DAT_CONNECTION_EVENT_BROKEN);
	conn_disconnect(&a);
	conn_down(&b);
	conn_down(&a);
}

/* ---- threads ---- */

#define THREADS	4
#define ROUNDS	200

struct race {
	pthread_barrier_t *start;
	DAT_LMR_HANDLE *victims;	/* every thread frees all of them */
	unsigned int idx;
	unsigned int bad;		/* calls that answered wrong */
	unsigned int freed;		/* victims this thread freed */
};

/* Each thread registers, binds nothing, queries and frees its own LMRs and
 * RMRs, then all race to free the same LMRs: one free per LMR succeeds,
 * every other answers DAT_INVALID_HANDLE, nothing crashes. */
static void *
race_main(void *arg)
{
	struct race *r = arg;
	uint8_t *mine = buf + r->idx * PG;
	DAT_LMR_HANDLE l;
	DAT_RMR_HANDLE m;
	DAT_LMR_PARAM p;
	DAT_RETURN ret;

	pthread_barrier_wait(r->start);
	for (unsigned int i = 0; i < ROUNDS; i++) {
		ret = lmr_va(pz1, mine, 64 + i, ALL, &l, NULL);
		r->bad += ret != DAT_SUCCESS;
		ret = dat_lmr_query(l, DAT_LMR_FIELD_ALL, &p);
		r->bad += ret != DAT_SUCCESS || p.length != 64 + i;
		r->bad += dat_rmr_create(pz1, &m) != DAT_SUCCESS;
		r->bad += dat_rmr_free(m) != DAT_SUCCESS;
		r->bad += dat_lmr_free(l) != DAT_SUCCESS;
	}
	pthread_barrier_wait(r->start);
	for (unsigned int i = 0; i < ROUNDS; i++) {
		ret = dat_lmr_free(r->victims[i]);
		if (ret == DAT_SUCCESS)
			r->freed++;
		else if (ret != BAD_HANDLE(DAT_INVALID_HANDLE_LMR))
			r->bad++;
	}
	return NULL;
}

static void
test_threads(void)
{
	static DAT_LMR_HANDLE victims[ROUNDS];
	struct race r[THREADS];
	pthread_barrier_t start;
	pthread_t t[THREADS];
	unsigned int freed = 0;

	for (unsigned int i = 0; i < ROUNDS; i++)
		EXPECT(lmr_va(pz2, buf, 64, LR, &victims[i], NULL),
		       DAT_SUCCESS);
	pthread_barrier_init(&start, NULL, THREADS);
	for (unsigned int i = 0; i < THREADS; i++) {
		r[i] = (struct race){ .start = &start, .victims = victims,
				      .idx = i };
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, race_main,
					       &r[i]) == 0);
	}
	for (unsigned int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(r[i].bad, 0);
		freed += r[i].freed;
	}
	pthread_barrier_destroy(&start);
	CU_ASSERT_EQUAL(freed, ROUNDS);
}

/* ---- the suite ---- */

static int
suite_init(void)
{
	DAT_EVD_HANDLE async = DAT_EVD_ASYNC_EXISTS;	/* none needed */

	return dat_test_ia_pzs(&ia, &async, &pz1, &pz2);
}

static int
suite_clean(void)
{
	return dat_test_ia_pzs_close(ia, pz1, pz2);
}

static CU_TestInfo mem_tests[] = {
	{ "pz create, query, free", test_pz },
	{ "lmr_create: DAT_SUCCESS", test_lmr_create_success },
	{ "lmr_create: DAT_INVALID_PARAMETER",
	  test_lmr_create_invalid_parameter },
	{ "lmr_create: DAT_INVALID_HANDLE", test_lmr_create_invalid_handle },
	{ "lmr_create: DAT_INVALID_STATE", test_lmr_create_invalid_state },
	{ "lmr_create: DAT_MODEL_NOT_SUPPORTED",
	  test_lmr_create_model_not_supported },
	{ "lmr_create: DAT_INSUFFICIENT_RESOURCES",
	  test_lmr_create_insufficient_resources },
	{ "lmr query, free", test_lmr_query_free },
	{ "lmr_sync_rdma_write: each code", test_lmr_sync_rdma_write },
	{ "lmr_sync_rdma_read: each code", test_lmr_sync_rdma_read },
	{ "rmr create, query, free", test_rmr_create_query_free },
	{ "rmr_bind: handle, parameter, model, privileges, protection",
	  test_rmr_bind_memory_codes },
	{ "rmr_bind: unconnected EP", test_rmr_bind_unconnected_ep },
	{ "rmr_bind: connected EP (success, resources, flush)",
	  test_rmr_bind_connected_ep },
	{ "rmr_create_for_ep: EP scope against PZ scope", test_rmr_ep_scope },
	{ "threads: create, query, free; racing frees", test_threads },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "dat_mem", suite_init, suite_clean, NULL, NULL, mem_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	dat_test_main(argc, argv, "mem", suites);
}
