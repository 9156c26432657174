/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The plug-in's one conversion at the DAT boundary (drivers/dat/dat_err.c),
 * case by case: every errno a dpdat function returns, with and without
 * subtypes, with the subtypes each caller of the plug-in passes, and every
 * native completion status.
 *
 *   test_dat_err
 */

#include <errno.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "dat_err.h"
#include "unit_run.h"

/* Subtypes that no two fields share, so a wrong field shows. */
static const struct dpdat_dat_sub every = {
	.handle = DAT_INVALID_HANDLE_EP,
	.param = DAT_INVALID_ARG3,
	.state = DAT_INVALID_STATE_EP_NOTREADY,
	.priv = DAT_PRIVILEGES_RDMA_WRITE,
	.prot = DAT_PROTECTION_RDMA_READ,
	.res = DAT_RESOURCE_TEP,
};

struct err_case {
	int err;
	DAT_RETURN plain;		/* sub NULL */
	DAT_RETURN with_sub;		/* sub = every */
};

static const struct err_case err_cases[] = {
	{ 0, DAT_SUCCESS, DAT_SUCCESS },
	{ -ENOMEM, DAT_INSUFFICIENT_RESOURCES,
	  DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP },
	{ -ENOSPC, DAT_INSUFFICIENT_RESOURCES,
	  DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP },
	{ -EAGAIN, DAT_INSUFFICIENT_RESOURCES,
	  DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP },
	{ -EINVAL, DAT_INVALID_PARAMETER,
	  DAT_INVALID_PARAMETER | DAT_INVALID_ARG3 },
	{ -ERANGE, DAT_INVALID_PARAMETER,
	  DAT_INVALID_PARAMETER | DAT_INVALID_ARG3 },
	{ -EBADF, DAT_INVALID_HANDLE,
	  DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_EP },
	{ -EBUSY, DAT_INVALID_STATE,
	  DAT_INVALID_STATE | DAT_INVALID_STATE_EP_NOTREADY },
	{ -EBADFD, DAT_INVALID_STATE,
	  DAT_INVALID_STATE | DAT_INVALID_STATE_EP_NOTREADY },
	{ -EACCES, DAT_PRIVILEGES_VIOLATION,
	  DAT_PRIVILEGES_VIOLATION | DAT_PRIVILEGES_RDMA_WRITE },
	{ -EPERM, DAT_PROTECTION_VIOLATION,
	  DAT_PROTECTION_VIOLATION | DAT_PROTECTION_RDMA_READ },
	{ -EMSGSIZE, DAT_LENGTH_ERROR, DAT_LENGTH_ERROR },
	{ -EADDRINUSE, DAT_CONN_QUAL_IN_USE, DAT_CONN_QUAL_IN_USE },
	{ -ENOTSUP, DAT_MODEL_NOT_SUPPORTED, DAT_MODEL_NOT_SUPPORTED },
	{ -ETIMEDOUT, DAT_TIMEOUT_EXPIRED, DAT_TIMEOUT_EXPIRED },
	{ -ENOSYS, DAT_NOT_IMPLEMENTED, DAT_NOT_IMPLEMENTED },
	{ -EIO, DAT_INTERNAL_ERROR, DAT_INTERNAL_ERROR },
	{ -ENOENT, DAT_INTERNAL_ERROR, DAT_INTERNAL_ERROR },
};

static void
test_errno_table(void)
{
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *c = &err_cases[i];

		CU_ASSERT_EQUAL(dpdat_dat_err(c->err, NULL), c->plain);
		CU_ASSERT_EQUAL(dpdat_dat_err(c->err, &every), c->with_sub);
	}
}

/* What the plug-in's callers return for each errno their native call
 * documents, through the subtypes they pass. */
struct caller_case {
	const char *what;
	struct dpdat_dat_sub sub;
	int err;
	DAT_RETURN want;
};

static const struct caller_case caller_cases[] = {
	/* ep.c, dat_ep_post_*: dpdat_post_send/recv (-EBADF is posted as
	 * -EBUSY: the EP is not ready) */
#define EP_POST { .res = DAT_RESOURCE_TEP, \
		  .state = DAT_INVALID_STATE_EP_NOTREADY }
	{ "ep post", EP_POST, 0, DAT_SUCCESS },
	{ "ep post", EP_POST, -ENOMEM,
	  DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEP },
	{ "ep post", EP_POST, -EINVAL, DAT_INVALID_PARAMETER },
	{ "ep post", EP_POST, -EMSGSIZE, DAT_LENGTH_ERROR },
	{ "ep post", EP_POST, -EBUSY,
	  DAT_INVALID_STATE | DAT_INVALID_STATE_EP_NOTREADY },
	/* srq.c, dat_srq_post_recv: dpdat_post_srq_recv */
#define SRQ_POST { .handle = DAT_INVALID_HANDLE_SRQ, \
		   .res = DAT_RESOURCE_SRQ }
	{ "srq post", SRQ_POST, -ENOMEM,
	  DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_SRQ },
	{ "srq post", SRQ_POST, -EINVAL, DAT_INVALID_PARAMETER },
	{ "srq post", SRQ_POST, -EBADF,
	  DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_SRQ },
	/* cm.c, dat_psp_create and dat_rsp_create: dpdat_cm_listen */
#define LISTEN { .handle = DAT_INVALID_HANDLE_EVD_CR, \
		 .res = DAT_RESOURCE_MEMORY }
	{ "listen", LISTEN, -EADDRINUSE, DAT_CONN_QUAL_IN_USE },
	{ "listen", LISTEN, -ENOMEM,
	  DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY },
	{ "listen", LISTEN, -EBADF,
	  DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_EVD_CR },
	/* evd.c, dat_evd_create: dpdat_cq_create, dpdat_cm_eq_create */
	{ "evd create", { .res = DAT_RESOURCE_TEVD }, -ENOMEM,
	  DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_TEVD },
	{ "evd create", { .res = DAT_RESOURCE_TEVD }, -EINVAL,
	  DAT_INVALID_PARAMETER },
	/* mem.c, dat_pz_free and dat_lmr_free */
	{ "pz free", { .state = DAT_INVALID_STATE_PZ_IN_USE }, -EBUSY,
	  DAT_INVALID_STATE | DAT_INVALID_STATE_PZ_IN_USE },
	{ "pz free", { .state = DAT_INVALID_STATE_PZ_IN_USE }, -EBADF,
	  DAT_INVALID_HANDLE },
	{ "lmr free", { .state = DAT_INVALID_STATE_LMR_IN_USE }, -EBUSY,
	  DAT_INVALID_STATE | DAT_INVALID_STATE_LMR_IN_USE },
};

static void
test_callers(void)
{
	for (size_t i = 0; i < sizeof(caller_cases) / sizeof(caller_cases[0]);
	     i++) {
		const struct caller_case *c = &caller_cases[i];
		DAT_RETURN got = dpdat_dat_err(c->err, &c->sub);

		if (got != c->want)
			CU_FAIL(c->what);
		CU_ASSERT_EQUAL(got, c->want);
	}
}

static void
test_dto_status(void)
{
	static const struct {
		enum dpdat_wc_status s;
		DAT_DTO_COMPLETION_STATUS want;
	} cases[] = {
		{ DPDAT_WC_SUCCESS, DAT_DTO_SUCCESS },
		{ DPDAT_WC_LOC_LEN_ERR, DAT_DTO_ERR_LOCAL_LENGTH },
		{ DPDAT_WC_LOC_QP_OP_ERR, DAT_DTO_ERR_LOCAL_EP },
		{ DPDAT_WC_LOC_PROT_ERR, DAT_DTO_ERR_LOCAL_PROTECTION },
		{ DPDAT_WC_WR_FLUSH_ERR, DAT_DTO_ERR_FLUSHED },
		{ DPDAT_WC_REM_INV_REQ_ERR, DAT_DTO_ERR_REMOTE_RESPONDER },
		{ DPDAT_WC_REM_ACCESS_ERR, DAT_DTO_ERR_REMOTE_ACCESS },
		{ DPDAT_WC_REM_OP_ERR, DAT_DTO_ERR_REMOTE_RESPONDER },
		{ DPDAT_WC_RETRY_EXC_ERR, DAT_DTO_ERR_TRANSPORT },
		{ DPDAT_WC_RNR_RETRY_EXC_ERR, DAT_DTO_ERR_RECEIVER_NOT_READY },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(dpdat_dat_dto_status(cases[i].s),
				cases[i].want);
}

static CU_TestInfo err_tests[] = {
	{ "errno -> DAT_RETURN, every errno", test_errno_table },
	{ "the subtypes each caller passes", test_callers },
	{ "completion status -> DAT DTO status", test_dto_status },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "dat_err", NULL, NULL, NULL, NULL, err_tests },
	CU_SUITE_INFO_NULL,
};

int
main(void)
{
	return unit_run(suites) != 0;
}
