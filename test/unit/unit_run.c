/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <stdio.h>

#include <CUnit/Basic.h>

#include "unit_run.h"

int
unit_run(CU_SuiteInfo *suites)
{
	unsigned int failed;
	CU_RunSummary *sum;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	sum = CU_get_run_summary();
	failed = CU_get_number_of_failures() +
		 CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	if (sum->nTestsRun == 0) {
		fprintf(stderr, "no test ran: that is a failure too\n");
		failed++;
	}
	CU_cleanup_registry();
	return failed != 0;
}
