/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef TEST_MR_H
#define TEST_MR_H

#include <CUnit/CUnit.h>

#include <dpdat/dpdat.h>

/* A domain and two PZs, fresh for each test. */
struct mr_fixture {
	struct dpdat_mr_domain *dom;
	struct dpdat_pz *pz1, *pz2;
	uint32_t pz1_id, pz2_id;
};

extern struct mr_fixture fx;

int fixture_setup(uint32_t max_contexts);
void fixture_teardown(void);
struct dpdat_lmr *lmr_virtual(struct dpdat_pz *pz, void *addr, size_t len,
			      uint32_t priv);
uint32_t lmr_ctx(const struct dpdat_lmr *lmr);

extern CU_TestInfo mr_tests[];
extern CU_TestInfo mr_table_tests[];
extern CU_TestInfo mr_dat_tests[];
extern CU_TestInfo mr_ceiling_tests[];

#endif
