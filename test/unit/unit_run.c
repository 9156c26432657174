/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The CUnit runner of every unit test program. Tests are picked by name:
 * shell patterns (fnmatch), each matched against "suite/test" and against
 * the test's name alone, from the program's arguments (--test PATTERN, or
 * --test=PATTERN, as often as needed: meson test -C build rc
 * --test-args='--test rc_wire/PSN*') and from DPDAT_UNIT_TEST (';' between
 * patterns). A suite none of whose tests is picked does not run (nor its
 * set-up). --list or DPDAT_UNIT_LIST=1 lists the names instead of running
 * anything. The arguments are read from /proc/self/cmdline, so that no
 * program's main() has to pass them (some take arguments of their own).
 */

#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <CUnit/Basic.h>

#include "unit_run.h"

/* The --test patterns of the command line and DPDAT_UNIT_TEST, joined by
 * ';' into buf (NULL when none); *list when --list is there. */
static const char *
cmdline_patterns(char *buf, size_t len, bool *list)
{
	const char *env = getenv("DPDAT_UNIT_TEST");
	char args[8192], *a, *end;
	size_t n = 0, k;
	FILE *f;

	buf[0] = '\0';
	f = fopen("/proc/self/cmdline", "re");
	k = f != NULL ? fread(args, 1, sizeof(args) - 1, f) : 0;
	if (f != NULL)
		fclose(f);
	args[k] = '\0';
	end = args + k;
	for (a = args + strlen(args) + 1; a < end; a += strlen(a) + 1) {
		const char *pat = NULL;

		if (strcmp(a, "--list") == 0)
			*list = true;
		else if (strncmp(a, "--test=", 7) == 0)
			pat = a + 7;
		else if (strcmp(a, "--test") == 0 && a + strlen(a) + 1 < end)
			pat = a += strlen(a) + 1;
		if (pat != NULL && n + strlen(pat) + 2 < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n ? ";" : "", pat);
	}
	if (env != NULL && *env != '\0' && n + strlen(env) + 2 < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ";" : "",
				      env);
	return n != 0 ? buf : NULL;
}

static bool
name_picked(const char *patterns, const char *suite, const char *test)
{
	char full[512], pat[256];
	const char *p = patterns, *end;
	size_t n;

	snprintf(full, sizeof(full), "%s/%s", suite, test);
	while (*p != '\0') {
		end = strchr(p, ';');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n != 0 && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
			if (fnmatch(pat, full, 0) == 0 ||
			    fnmatch(pat, test, 0) == 0)
				return true;
		}
		p += n + (end != NULL);
	}
	return false;
}

/* Leave active only the tests patterns picks (all when NULL); list them
 * when list. How many are active. */
static unsigned int
pick_tests(const char *patterns, bool list)
{
	CU_pTestRegistry reg = CU_get_registry();
	unsigned int picked = 0, in_suite;

	for (CU_pSuite s = reg->pSuite; s != NULL; s = s->pNext) {
		in_suite = 0;
		for (CU_pTest t = s->pTest; t != NULL; t = t->pNext) {
			bool on = patterns == NULL ||
				  name_picked(patterns, s->pName, t->pName);

			CU_set_test_active(t, on ? CU_TRUE : CU_FALSE);
			if (on && list)
				printf("%s/%s\n", s->pName, t->pName);
			in_suite += on;
		}
		CU_set_suite_active(s, in_suite != 0 ? CU_TRUE : CU_FALSE);
		picked += in_suite;
	}
	return picked;
}

int
unit_run(CU_SuiteInfo *suites)
{
	const char *env_list = getenv("DPDAT_UNIT_LIST");
	/* the registry's booleans (lib/conf): 1, yes, true, on */
	bool list = env_list != NULL && (strcmp(env_list, "1") == 0 ||
					 strcasecmp(env_list, "yes") == 0 ||
					 strcasecmp(env_list, "true") == 0 ||
					 strcasecmp(env_list, "on") == 0);
	unsigned int failed, picked;
	const char *patterns;
	CU_RunSummary *sum;
	char buf[4096];

	patterns = cmdline_patterns(buf, sizeof(buf), &list);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 1;
	}
	picked = pick_tests(patterns, list);
	if (list) {
		CU_cleanup_registry();
		return 0;
	}
	if (picked == 0 && patterns != NULL) {
		fprintf(stderr, "tests '%s': none picked (--list or "
			"DPDAT_UNIT_LIST=1 lists them)\n", patterns);
		CU_cleanup_registry();
		return 1;
	}
	/* what was not picked is no failure */
	CU_set_fail_on_inactive(CU_FALSE);
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
	if (patterns != NULL)
		printf("tests '%s': %u of the program's tests ran\n",
		       patterns, sum->nTestsRun);
	CU_cleanup_registry();
	return failed != 0;
}
