/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <dpdat/dpdat.h>

#include "unit_run.h"

int
unit_run_eal(const char *program, CU_SuiteInfo *suites, int (*setup)(void),
	     void (*teardown)(void))
{
	struct dpdat_eal_conf ec = { .program = program };
	int failed;

	if (dpdat_eal_init(&ec) < 0)
		return 1;
	if (setup != NULL && setup() != 0) {
		dpdat_eal_cleanup();
		return 1;
	}
	failed = unit_run(suites);
	if (teardown != NULL)
		teardown();
	dpdat_eal_cleanup();
	return failed;
}
