/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "unit_run.h"
#include <rte_errno.h>

#include "test_mr.h"

struct mr_fixture fx;

int
fixture_setup(uint32_t max_contexts)
{
	struct dpdat_mr_domain_conf conf = { .max_contexts = max_contexts,
					     .name = "test" };
	struct dpdat_pz_info pi;

	fx.dom = dpdat_mr_domain_create(&conf);
	if (fx.dom == NULL)
		return -1;
	fx.pz1 = dpdat_pz_create(fx.dom);
	fx.pz2 = dpdat_pz_create(fx.dom);
	if (fx.pz1 == NULL || fx.pz2 == NULL)
		return -1;
	dpdat_pz_query(fx.pz1, &pi);
	fx.pz1_id = pi.id;
	dpdat_pz_query(fx.pz2, &pi);
	fx.pz2_id = pi.id;
	return 0;
}

/* Every test frees what it made: the teardown fails the test otherwise. */
void
fixture_teardown(void)
{
	CU_ASSERT_EQUAL(dpdat_mr_domain_count(fx.dom), 0);
	CU_ASSERT_EQUAL(dpdat_pz_free(fx.pz1), 0);
	CU_ASSERT_EQUAL(dpdat_pz_free(fx.pz2), 0);
	CU_ASSERT_EQUAL(dpdat_mr_domain_free(fx.dom), 0);
	fx.dom = NULL;
}

struct dpdat_lmr *
lmr_virtual(struct dpdat_pz *pz, void *addr, size_t len, uint32_t priv)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL,
				    .virt = { addr, len } };

	return dpdat_lmr_create(pz, &d, priv);
}

uint32_t
lmr_ctx(const struct dpdat_lmr *lmr)
{
	struct dpdat_lmr_info i;

	if (dpdat_lmr_query(lmr, &i) != 0)
		return 0;
	return i.lmr_context;
}

static CU_SuiteInfo suites[] = {
	{ "mr", NULL, NULL, NULL, NULL, mr_tests },
	{ "mr_table", NULL, NULL, NULL, NULL, mr_table_tests },
	{ "mr_dat", NULL, NULL, NULL, NULL, mr_dat_tests },
	{ "mr_ceiling", NULL, NULL, NULL, NULL, mr_ceiling_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	struct dpdat_eal_conf ec = { .program = argv[0], .mem_mb = 256 };
	int failed, ret;

	(void)argc;
	ret = dpdat_eal_init(&ec);
	if (ret < 0) {
		fprintf(stderr, "dpdat_eal_init: %s\n", rte_strerror(-ret));
		return 1;
	}
	failed = unit_run(suites);
	dpdat_eal_cleanup();
	return failed;
}
