/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * A resource ceiling: 1,000,000 LMRs registered at once in one domain,
 * then freed, twice. Contexts go back to the baseline after each round,
 * and the second round leaves the process no larger than the first did
 * (what a round made and did not give back would show there).
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <rte_cycles.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_mr.h>

#include "test_mr.h"

#define N_LMR	1000000u

#if defined(__SANITIZE_ADDRESS__)
#define RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_CHECKED 0
#endif
#endif
#ifndef RSS_CHECKED
#define RSS_CHECKED 1
#endif

/* Resident set, KiB. */
static long
rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void
test_million_lmrs(void)
{
	struct dpdat_lmr **lmrs = calloc(N_LMR, sizeof(*lmrs));
	uint8_t *buf = dpdat_mem_alloc(4096, 4096, -1);
	long rss[2] = { 0, 0 }, peak = 0;
	uint32_t base, made;
	uint64_t t0, t1;

	CU_ASSERT_FATAL(lmrs != NULL && buf != NULL);
	CU_ASSERT_FATAL(fixture_setup(N_LMR + 16) == 0);
	base = dpdat_mr_domain_count(fx.dom);
	for (int round = 0; round < 2; round++) {
		t0 = rte_get_tsc_cycles();
		for (made = 0; made < N_LMR; made++) {
			/* DPDK memory: registered in constant time */
			lmrs[made] = lmr_virtual(round ? fx.pz2 : fx.pz1, buf,
						 4096, DPDAT_MEM_PRIV_ALL);
			if (lmrs[made] == NULL)
				break;
		}
		CU_ASSERT_EQUAL(made, N_LMR);
		CU_ASSERT_EQUAL(dpdat_mr_domain_count(fx.dom), base + made);
		peak = rss_kib();
		t1 = rte_get_tsc_cycles();
		for (uint32_t i = 0; i < made; i++)
			if (dpdat_lmr_free(lmrs[i]) != 0)
				CU_FAIL("lmr_free");
		CU_ASSERT_EQUAL(dpdat_mr_domain_count(fx.dom), base);
		rss[round] = rss_kib();
		printf("\n  round %d: %u LMRs in %.2f s, freed in %.2f s; "
		       "resident %ld KiB with them, %ld KiB after", round,
		       made, (double)(t1 - t0) / rte_get_tsc_hz(),
		       (double)(rte_get_tsc_cycles() - t1) / rte_get_tsc_hz(),
		       peak, rss[round]);
	}
	/* the second round grew nothing the first had not (8 MiB: the
	 * allocator's own slack); not under AddressSanitizer, whose
	 * quarantine holds freed memory (LeakSanitizer checks there) */
	if (RSS_CHECKED)
		CU_ASSERT(rss[1] <= rss[0] + 8192);
	fixture_teardown();
	dpdat_mem_free(buf);
	free(lmrs);
}

CU_TestInfo mr_ceiling_tests[] = {
	{ "1,000,000 LMRs at once, twice: back to the baseline",
	  test_million_lmrs },
	CU_TEST_INFO_NULL,
};
