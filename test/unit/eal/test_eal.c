/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The EAL command line dpdat builds (lib/eal): --no-pci only when nobody
 * names a PCI device, a PCI device named to dpdat becomes -a, the user's
 * own EAL arguments (conf or DPDAT_EAL) replace dpdat's defaults for the
 * same option instead of clashing with them. No EAL is brought up.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "eal_priv.h"
#include "unit_run.h"

static char *argv[EAL_MAX_ARGS];
static int argc;

static void
build(const struct dpdat_eal_conf *c, const char *env,
      enum dpdat_mem_mode mode)
{
	struct eal_user u;

	for (int i = 0; i < argc; i++)
		free(argv[i]);
	argc = 0;
	CU_ASSERT_EQUAL_FATAL(eal_user_split(env, &u), 0);
	for (unsigned int i = 0; i < c->n_extra_args; i++)
		u.args[u.n++] = (char *)c->extra_args[i];
	CU_ASSERT_EQUAL_FATAL(eal_args_build(c, &u, mode, 256, argv, &argc), 0);
}

/* How many arguments start with prefix. */
static int
count(const char *prefix)
{
	int n = 0;

	for (int i = 0; i < argc; i++)
		n += strncmp(argv[i], prefix, strlen(prefix)) == 0;
	return n;
}

static bool
has(const char *arg)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], arg) == 0)
			return true;
	return false;
}

static void
test_defaults(void)
{
	struct dpdat_eal_conf c = { .program = "t" };

	build(&c, NULL, DPDAT_MEM_MODE_HUGE);
	CU_ASSERT_STRING_EQUAL(argv[0], "t");
	CU_ASSERT(has("--no-pci"));
	CU_ASSERT(has("--in-memory"));
	CU_ASSERT_EQUAL(count("--lcores=0@("), 1);
	CU_ASSERT_EQUAL(count("--file-prefix=dpdat-"), 1);
	build(&c, NULL, DPDAT_MEM_MODE_NOHUGE);
	CU_ASSERT(has("--no-huge") && has("--no-shconf") && has("-m256"));
	CU_ASSERT(!has("--in-memory"));
}

static void
test_pci_device(void)
{
	const char *devs[] = { "0000:3b:00.0", "vdev:net_ring0" };
	struct dpdat_eal_conf c = { .devices = devs, .n_devices = 2 };

	build(&c, NULL, DPDAT_MEM_MODE_HUGE);
	CU_ASSERT(has("-a0000:3b:00.0"));
	CU_ASSERT(has("--vdev=net_ring0"));
	CU_ASSERT(!has("--no-pci"));
	c.n_devices = 1;
	c.devices = devs + 1;	/* a virtual device only */
	build(&c, NULL, DPDAT_MEM_MODE_HUGE);
	CU_ASSERT(has("--no-pci"));
}

/* -a in the user's arguments is a PCI device too: no --no-pci */
static void
test_user_allow_list(void)
{
	const char *extra[] = { "-a", "0000:3b:00.0" };
	struct dpdat_eal_conf c = { .extra_args = extra, .n_extra_args = 2 };

	build(&c, NULL, DPDAT_MEM_MODE_HUGE);
	CU_ASSERT(!has("--no-pci"));
	CU_ASSERT(has("-a") && has("0000:3b:00.0"));
	build(&(struct dpdat_eal_conf){ 0 }, "--allow=0000:5e:00.1",
	      DPDAT_MEM_MODE_HUGE);
	CU_ASSERT(!has("--no-pci"));
	CU_ASSERT(has("--allow=0000:5e:00.1"));
}

/* the user's cores, prefix and memory replace dpdat's */
static void
test_user_wins(void)
{
	struct dpdat_eal_conf c = { .lcores = "0" };

	build(&c, "-l 1 --file-prefix=mine --no-huge -m 512",
	      DPDAT_MEM_MODE_HUGE);
	CU_ASSERT_EQUAL(count("--lcores"), 0);
	CU_ASSERT_EQUAL(count("-l0"), 0);
	CU_ASSERT(has("-l") && has("1"));
	CU_ASSERT_EQUAL(count("--file-prefix="), 1);
	CU_ASSERT(has("--file-prefix=mine"));
	CU_ASSERT(!has("--in-memory"));
	CU_ASSERT_EQUAL(count("--no-huge"), 1);
	CU_ASSERT(has("--no-pci"));
	build(&c, "-l2", DPDAT_MEM_MODE_HUGE);	/* glued value */
	CU_ASSERT(!has("-l0"));
	CU_ASSERT(has("-l2"));
	build(&c, "--lcores=3", DPDAT_MEM_MODE_HUGE);
	CU_ASSERT(!has("-l0"));
	/* a size is not a mode: dpdat's mode stays, only its -m goes */
	build(&c, "-m 512", DPDAT_MEM_MODE_HUGE);
	CU_ASSERT(has("--in-memory"));
	build(&c, "-m 512", DPDAT_MEM_MODE_NOHUGE);
	CU_ASSERT(has("--no-huge") && !has("-m256"));
	/* a block list keeps --no-pci (else every other device is probed) */
	build(&c, "-b 0000:00:03.0", DPDAT_MEM_MODE_HUGE);
	CU_ASSERT(has("--no-pci"));
}

static void
test_split_limits(void)
{
	struct eal_user u;
	char big[4096];

	CU_ASSERT_EQUAL(eal_user_split("  -l 1\t--no-huge \n", &u), 0);
	CU_ASSERT_EQUAL(u.n, 3);
	CU_ASSERT_STRING_EQUAL(u.args[2], "--no-huge");
	CU_ASSERT_EQUAL(eal_user_split(NULL, &u), 0);
	CU_ASSERT_EQUAL(u.n, 0);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CU_ASSERT_EQUAL(eal_user_split(big, &u), -EINVAL);
	for (size_t i = 0; i + 2 < sizeof(big); i += 2)
		big[i] = 'a', big[i + 1] = ' ';
	big[200] = '\0';	/* 100 words: more than fit */
	CU_ASSERT_EQUAL(eal_user_split(big, &u), -EINVAL);
}

static CU_TestInfo eal_tests[] = {
	{ "defaults: --no-pci, one memory mode", test_defaults },
	{ "a PCI device: -a, no --no-pci", test_pci_device },
	{ "the user's -a/--allow: no --no-pci", test_user_allow_list },
	{ "the user's cores, prefix and memory win", test_user_wins },
	{ "DPDAT_EAL splitting and its limits", test_split_limits },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "eal_args", NULL, NULL, NULL, NULL, eal_tests },
	CU_SUITE_INFO_NULL,
};

int
main(void)
{
	int failed = unit_run(suites);

	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return failed;
}
