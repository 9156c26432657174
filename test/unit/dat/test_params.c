/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * ia_params (drivers/dat/params.c) on their own: every key, every way a
 * value can be wrong, and nothing cut short. A device= or ipv4= value too
 * long for the plug-in was once silently cut to fit (an IA then opened a
 * device nobody named); it is refused now.
 */

#include <string.h>

#include <CUnit/CUnit.h>

#include "dd_params.h"
#include "unit_run.h"

static void
test_good(void)
{
	struct dd_ia_conf c;

	CU_ASSERT_EQUAL_FATAL(dd_ia_params_parse("device=net_memif0,role=client"
		" ipv4=198.18.0.2 mtu=4200 cpu=1 eal=-l1;--no-pci", &c), 0);
	CU_ASSERT_STRING_EQUAL(c.device, "net_memif0,role=client");
	CU_ASSERT_STRING_EQUAL(c.ipv4, "198.18.0.2");
	CU_ASSERT_EQUAL(c.mtu, 4200);
	CU_ASSERT_EQUAL(c.cpu, 1);
	CU_ASSERT_STRING_EQUAL(c.eal, "-l1;--no-pci");
	/* quotes and tabs separate words as spaces do; ipv4 defaults */
	CU_ASSERT_EQUAL_FATAL(dd_ia_params_parse("\"device=net_af_xdp0\t\"",
						 &c), 0);
	CU_ASSERT_STRING_EQUAL(c.device, "net_af_xdp0");
	CU_ASSERT_STRING_EQUAL(c.ipv4, "auto");
	CU_ASSERT_EQUAL(c.cpu, -1);
}

static void
test_bad(void)
{
	static const char *const bad[] = {
		"", "ipv4=198.18.0.1", "device=x speed=10", "device=x mtu=9601",
		"device=x mtu=12a", "device=x mtu=", "device=x mtu=-1",
		"device=x mtu=4294968796", "device=x mtu=-4294967296",
		"device=x cpu=-1", "device=x cpu=",
		"device=x cpu=99999999999999999999", "device=x cpu=1x",
	};
	struct dd_ia_conf c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dd_ia_params_parse(bad[i], &c) != -1)
			CU_FAIL(bad[i]);
	CU_ASSERT_EQUAL(dd_ia_params_parse(NULL, &c), -1);
}

/* Values that do not fit: refused, never cut. */
static void
test_too_long(void)
{
	char p[1100];
	struct dd_ia_conf c;

	memcpy(p, "device=", 7);
	memset(p + 7, 'd', sizeof(c.device) - 1);	/* fits exactly */
	p[7 + sizeof(c.device) - 1] = '\0';
	CU_ASSERT_EQUAL(dd_ia_params_parse(p, &c), 0);
	CU_ASSERT_EQUAL(strlen(c.device), sizeof(c.device) - 1);
	memset(p + 7, 'd', sizeof(c.device));		/* one more */
	p[7 + sizeof(c.device)] = '\0';
	CU_ASSERT_EQUAL(dd_ia_params_parse(p, &c), -1);
	CU_ASSERT_EQUAL(dd_ia_params_parse("device=x ipv4=198.118.100.200.1",
					   &c), -1);
	memcpy(p, "device=x eal=", 13);
	memset(p + 13, 'e', sizeof(c.eal));
	p[13 + sizeof(c.eal)] = '\0';
	CU_ASSERT_EQUAL(dd_ia_params_parse(p, &c), -1);
	/* the whole line longer than the parser's buffer */
	memset(p, ' ', sizeof(p) - 1);
	memcpy(p, "device=x", 8);
	p[sizeof(p) - 1] = '\0';
	CU_ASSERT_EQUAL(dd_ia_params_parse(p, &c), -1);
}

static CU_TestInfo params_tests[] = {
	{ "every key", test_good },
	{ "bad keys and values", test_bad },
	{ "too long: refused, never cut", test_too_long },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "dat_params", NULL, NULL, NULL, NULL, params_tests },
	CU_SUITE_INFO_NULL,
};

int
main(void)
{
	return unit_run(suites) != 0;
}
