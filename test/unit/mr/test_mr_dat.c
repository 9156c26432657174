/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Every return code that the dat_lmr_create, dat_rmr_bind and
 * dat_lmr_sync_rdma_write man pages name, provoked for real through the
 * native API and converted by the plug-in's one mapping function. */

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <rte_errno.h>

#include "test_mr.h"

#ifdef HAVE_DAT
#include "dat_err.h"

#define ALL DPDAT_MEM_PRIV_ALL
#define LR DPDAT_MEM_PRIV_LOCAL_READ
#define RR DPDAT_MEM_PRIV_REMOTE_READ
#define RW DPDAT_MEM_PRIV_REMOTE_WRITE

/* What dat_lmr_create would return for this native call. */
static DAT_RETURN
lmr_create_dat(struct dpdat_pz *pz, const struct dpdat_mem_desc *d,
	       uint32_t priv, struct dpdat_lmr **out)
{
	const struct dpdat_dat_sub sub = { .handle = DAT_INVALID_HANDLE_PZ };

	*out = dpdat_lmr_create(pz, d, priv);
	return dpdat_dat_err(*out ? 0 : -rte_errno, &sub);
}

static void
test_dat_lmr_create(void)
{
	char buf[256], *priv_mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t cookie[DPDAT_LMR_COOKIE_LEN] = { 1 };
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL,
				    .virt = { buf, sizeof(buf) } };
	struct dpdat_lmr *l, *keep;
	DAT_RETURN r;

	CU_ASSERT_FATAL(fixture_setup(1) == 0);
	r = lmr_create_dat(fx.pz1, &d, ALL, &keep);
	CU_ASSERT_EQUAL(r, DAT_SUCCESS);
	/* one context allowed: the table is full */
	r = lmr_create_dat(fx.pz1, &d, ALL, &l);
	CU_ASSERT_EQUAL(DAT_GET_TYPE(r), DAT_INSUFFICIENT_RESOURCES);
	d.virt.length = 0;
	r = lmr_create_dat(fx.pz1, &d, ALL, &l);
	CU_ASSERT_EQUAL(DAT_GET_TYPE(r), DAT_INVALID_PARAMETER);
	d.virt.length = sizeof(buf);
	r = lmr_create_dat(NULL, &d, ALL, &l);
	CU_ASSERT_EQUAL(r, DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_PZ);
	d = (struct dpdat_mem_desc){ .type = DPDAT_MEM_TYPE_SHARED_VIRTUAL,
				     .shared = { cookie, priv_mem, 4096 } };
	r = lmr_create_dat(fx.pz1, &d, ALL, &l);
	CU_ASSERT_EQUAL(DAT_GET_TYPE(r), DAT_INVALID_STATE);
	d.type = (enum dpdat_mem_type)42;
	r = lmr_create_dat(fx.pz1, &d, ALL, &l);
	CU_ASSERT_EQUAL(r, DAT_MODEL_NOT_SUPPORTED);
	CU_ASSERT_EQUAL(dpdat_lmr_free(keep), 0);
	fixture_teardown();
	munmap(priv_mem, 4096);
}

static void
test_dat_rmr_bind(void)
{
	const struct dpdat_dat_sub sub = { .handle = DAT_INVALID_HANDLE_RMR };
	char buf[1024], ro[64];
	struct dpdat_lmr *lmr, *lro, *other;
	struct dpdat_lmr_triplet seg;
	struct dpdat_rmr *rmr, *r2;
	uint32_t c;

	CU_ASSERT_FATAL(fixture_setup(4) == 0);
	lmr = lmr_virtual(fx.pz1, buf, sizeof(buf), ALL);
	lro = lmr_virtual(fx.pz1, ro, sizeof(ro), LR);
	other = lmr_virtual(fx.pz2, buf, sizeof(buf), ALL);
	rmr = dpdat_rmr_create(fx.pz1);
	r2 = dpdat_rmr_create(fx.pz1);
	CU_ASSERT_FATAL(lmr && lro && other && rmr && r2);

	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lmr), 0, (uintptr_t)buf, 64 };
	CU_ASSERT_EQUAL(dpdat_dat_err(dpdat_rmr_bind(rmr, &seg, RW, &c), &sub),
			DAT_SUCCESS);
	/* the fourth context is taken: the second window finds no room */
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dpdat_dat_err(
		dpdat_rmr_bind(r2, &seg, RW, &c), &sub)),
		DAT_INSUFFICIENT_RESOURCES);
	seg.segment_length = sizeof(buf) + 1;
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dpdat_dat_err(
		dpdat_rmr_bind(rmr, &seg, RW, &c), &sub)),
		DAT_INVALID_PARAMETER);
	CU_ASSERT_EQUAL(dpdat_dat_err(dpdat_rmr_bind(NULL, &seg, RW, &c), &sub),
			DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_RMR);
	/* an LMR in use by a window cannot go: invalid state */
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dpdat_dat_err(dpdat_lmr_free(lmr), NULL)),
			DAT_INVALID_STATE);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lro), 0, (uintptr_t)ro, 8 };
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dpdat_dat_err(
		dpdat_rmr_bind(rmr, &seg, RW, &c), &sub)),
		DAT_PRIVILEGES_VIOLATION);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(other), 0,
					  (uintptr_t)buf, 8 };
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dpdat_dat_err(
		dpdat_rmr_bind(rmr, &seg, RW, &c), &sub)),
		DAT_PROTECTION_VIOLATION);
	/* DAT_INVALID_STATE for an endpoint state and DAT_MODEL_NOT_SUPPORTED
	 * for a bind model need the endpoint that the transport brings. */
	CU_ASSERT_EQUAL(dpdat_rmr_free(rmr), 0);
	CU_ASSERT_EQUAL(dpdat_rmr_free(r2), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lro), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(other), 0);
	fixture_teardown();
}

static void
test_dat_sync(void)
{
	char buf[128];
	struct dpdat_lmr *lmr;
	struct dpdat_lmr_triplet seg;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	lmr = lmr_virtual(fx.pz1, buf, sizeof(buf), LR);
	CU_ASSERT_FATAL(lmr != NULL);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lmr), 0, (uintptr_t)buf, 16 };
	CU_ASSERT_EQUAL(dpdat_dat_err(
		dpdat_lmr_sync_rdma_write(fx.dom, &seg, 1), NULL), DAT_SUCCESS);
	seg.segment_length = sizeof(buf) + 1;
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dpdat_dat_err(
		dpdat_lmr_sync_rdma_write(fx.dom, &seg, 1), NULL)),
		DAT_INVALID_PARAMETER);
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dpdat_dat_err(
		dpdat_lmr_sync_rdma_read(NULL, &seg, 1), NULL)),
		DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);
	fixture_teardown();
}

static void
test_dat_mapping_table(void)
{
	const struct dpdat_dat_sub sub = {
		.handle = DAT_INVALID_HANDLE_LMR, .param = DAT_INVALID_ARG3,
		.state = DAT_INVALID_STATE_LMR_IN_USE,
		.priv = DAT_PRIVILEGES_RDMA_WRITE,
		.prot = DAT_PROTECTION_RDMA_READ };

	CU_ASSERT_EQUAL(dpdat_dat_err(-EINVAL, &sub),
			DAT_INVALID_PARAMETER | DAT_INVALID_ARG3);
	CU_ASSERT_EQUAL(dpdat_dat_err(-EBUSY, &sub),
			DAT_INVALID_STATE | DAT_INVALID_STATE_LMR_IN_USE);
	CU_ASSERT_EQUAL(dpdat_dat_err(-EACCES, &sub),
			DAT_PRIVILEGES_VIOLATION | DAT_PRIVILEGES_RDMA_WRITE);
	CU_ASSERT_EQUAL(dpdat_dat_err(-EPERM, &sub),
			DAT_PROTECTION_VIOLATION | DAT_PROTECTION_RDMA_READ);
	CU_ASSERT_EQUAL(dpdat_dat_err(-ENOMEM, &sub),
			DAT_INSUFFICIENT_RESOURCES);
	CU_ASSERT_EQUAL(dpdat_dat_err(-ENOSYS, NULL), DAT_NOT_IMPLEMENTED);
	CU_ASSERT_EQUAL(dpdat_dat_err(-EIO, NULL), DAT_INTERNAL_ERROR);
}

CU_TestInfo mr_dat_tests[] = {
	{ "dat_lmr_create return codes", test_dat_lmr_create },
	{ "dat_rmr_bind return codes", test_dat_rmr_bind },
	{ "dat_lmr_sync_rdma_* return codes", test_dat_sync },
	{ "errno -> DAT_RETURN with subtypes", test_dat_mapping_table },
	CU_TEST_INFO_NULL,
};
#else
CU_TestInfo mr_dat_tests[] = { CU_TEST_INFO_NULL };
#endif
