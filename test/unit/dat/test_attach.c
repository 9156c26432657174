/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The plug-in in a process whose EAL the application brought up itself
 * (with dpdat's native API here; an application of its own DPDK is the
 * same to the plug-in): the first dat_ia_open runs on that EAL instead of
 * starting one. It tried to start its own and failed ("EAL: Operation
 * already in progress"), so an application could not use DAT beside its
 * own DPDK.
 *
 * Through the real registry (dat_test_main: the dat.conf of argv[1], IA
 * "dpdat0" a memif server on a socket of its own).
 */

#include <stdint.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <dat2/udat.h>
#include <dpdat/dpdat.h>

#include "dat_main.h"

static uint8_t buf[4096] __attribute__((aligned(4096)));

static void
test_ia_on_app_eal(void)
{
	struct dpdat_eal_conf ec = { .program = "test_attach", .mem_mb = 256 };
	DAT_EVD_HANDLE async = DAT_EVD_ASYNC_EXISTS;
	DAT_REGION_DESCRIPTION rd = { .for_va = buf };
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_LMR_HANDLE lmr;
	DAT_PZ_HANDLE pz;
	DAT_IA_HANDLE ia;
	enum dpdat_mem_mode mode;

	CU_ASSERT_EQUAL_FATAL(dpdat_eal_init(&ec), 0);
	mode = dpdat_eal_mem_mode();
	CU_ASSERT(mode != DPDAT_MEM_MODE_NONE);
	EXPECT(dat_ia_open("dpdat0", 8, &async, &ia), DAT_SUCCESS);
	if (CU_get_number_of_failures() != 0)
		return;
	/* the IA works on it: memory registered, then all freed */
	EXPECT(dat_pz_create(ia, &pz), DAT_SUCCESS);
	EXPECT(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, sizeof(buf), pz,
			      DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr,
			      &lctx, &rctx, NULL, NULL), DAT_SUCCESS);
	EXPECT(dat_lmr_free(lmr), DAT_SUCCESS);
	EXPECT(dat_pz_free(pz), DAT_SUCCESS);
	EXPECT(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
	/* still the application's EAL, in the mode it chose */
	CU_ASSERT_EQUAL(dpdat_eal_mem_mode(), mode);
}

static CU_TestInfo attach_tests[] = {
	{ "dat_ia_open on the application's EAL", test_ia_on_app_eal },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "dat_attach", NULL, NULL, NULL, NULL, attach_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	dat_test_main(argc, argv, "attach", suites);
}
