/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_TEST_UNIT_RUN_H
#define DPDAT_TEST_UNIT_RUN_H

#include <CUnit/CUnit.h>

/* Register the suites and run them verbosely. Returns 0 when every test
 * ran and passed; 1 on any failed assertion, test, suite set-up or
 * clean-up, when nothing ran at all, or when CUnit could not start. */
int unit_run(CU_SuiteInfo *suites);

/* unit_eal.c (unit_eal_dep): bring dpdat's EAL up for program, run
 * setup (may be NULL; non-zero fails), the suites, then teardown (may be
 * NULL), and take the EAL down. Returns what unit_run() does, or 1 when
 * the EAL or setup failed. */
int unit_run_eal(const char *program, CU_SuiteInfo *suites,
		 int (*setup)(void), void (*teardown)(void));

#endif
