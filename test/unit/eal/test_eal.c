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

#include <rte_common.h>

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

/* extra_words (split at ';') then DPDAT_EAL (at blanks), in one buffer:
 * words keep their blanks, a failed add leaves u as it was */
static void
test_user_add(void)
{
	struct eal_user u = { .n = 0 };
	char big[2048];

	CU_ASSERT_EQUAL(eal_user_add(&u, ";-l 1;;--log-level=7;", ";"), 0);
	CU_ASSERT_EQUAL_FATAL(u.n, 2);
	CU_ASSERT_STRING_EQUAL(u.args[0], "-l 1");
	CU_ASSERT_STRING_EQUAL(u.args[1], "--log-level=7");
	CU_ASSERT_EQUAL(eal_user_add(&u, NULL, ";"), 0);
	CU_ASSERT_EQUAL(eal_user_add(&u, "--no-huge -m 64", " "), 0);
	CU_ASSERT_EQUAL_FATAL(u.n, 5);
	CU_ASSERT_STRING_EQUAL(u.args[0], "-l 1");
	CU_ASSERT_STRING_EQUAL(u.args[4], "64");
	/* 2040 bytes no longer fit beside what is there */
	memset(big, 'x', 2040);
	big[2040] = '\0';
	CU_ASSERT_EQUAL(eal_user_add(&u, big, ";"), -EINVAL);
	CU_ASSERT_EQUAL(u.n, 5);
	/* 30 more words do not fit beside 5 */
	for (size_t i = 0; i < 60; i += 2)
		big[i] = 'a', big[i + 1] = ';';
	big[60] = '\0';
	CU_ASSERT_EQUAL(eal_user_add(&u, big, ";"), -EINVAL);
	CU_ASSERT_EQUAL(u.n, 5);
	CU_ASSERT_STRING_EQUAL(u.args[4], "64");
}

/* a prefix, a log level and a memory size of the conf's own */
static void
test_conf_values(void)
{
	struct dpdat_eal_conf c = { .file_prefix = "mine", .log_level = 7 };
	struct eal_user u = { .n = 0 };

	build(&c, NULL, DPDAT_MEM_MODE_HUGE);
	CU_ASSERT(has("--file-prefix=mine"));
	CU_ASSERT_EQUAL(count("--file-prefix="), 1);
	CU_ASSERT(has("--log-level=7"));
	CU_ASSERT_STRING_EQUAL(argv[0], "dpdat");	/* no program name */
	c.log_level = 0;
	build(&c, NULL, DPDAT_MEM_MODE_HUGE);
	CU_ASSERT_EQUAL(count("--log-level"), 0);
	/* the size asked for goes to -m in no-huge mode */
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	argc = 0;
	CU_ASSERT_EQUAL_FATAL(eal_args_build(&c, &u, DPDAT_MEM_MODE_NOHUGE,
					     1500, argv, &argc), 0);
	CU_ASSERT(has("-m1500"));
	CU_ASSERT(!has("-m256"));
}

/* The most a conf and DPDAT_EAL may hold (16 devices, a full DPDAT_EAL,
 * a log level) still fits the EAL's argv, in full. */
static void
test_largest_fits(void)
{
	struct dpdat_eal_conf c = { .program = "x", .log_level = 8 };
	struct eal_user u = { .n = 0 };

	for (int i = 0; i < argc; i++)
		free(argv[i]);
	argc = 0;
	while (u.n < RTE_DIM(u.args))
		u.args[u.n++] = (char *)"--vdev=net_null0";
	c.devices = (const char *[]){ "a", "b", "c", "d", "e", "f", "g",
		"h", "i", "j", "k", "l", "m", "n", "o", "p" };
	c.n_devices = 16;
	CU_ASSERT_EQUAL_FATAL(eal_args_build(&c, &u, DPDAT_MEM_MODE_NOHUGE,
					     256, argv, &argc), 0);
	CU_ASSERT(argc <= EAL_MAX_ARGS);
	/* program, cores, prefix, 3 of memory, 16 -a, log level, the user's */
	CU_ASSERT_EQUAL(argc, 1 + 1 + 1 + 3 + 16 + 1 + (int)RTE_DIM(u.args));
	CU_ASSERT_STRING_EQUAL(argv[argc - 1], "--vdev=net_null0");
	CU_ASSERT(has("-ap"));
}

/* Malformed settings: dpdat_eal_init refuses them before the EAL starts
 * (so each case here can run in one process). */
static void
test_malformed_env(void)
{
	static const char *const huge[] = { "sometimes", "", "2", "NEVERX",
		"on" };
	static const char *const mb[] = { "0", "-5", "12x", "1048577",
		"99999999999999999999" };
	struct dpdat_eal_conf c = { .program = "t",
				    .huge = DPDAT_HUGE_NEVER };
	char big[4096];

	for (size_t i = 0; i < RTE_DIM(huge); i++) {
		if (huge[i][0] == '\0')
			continue;	/* empty: the default */
		setenv("DPDAT_HUGE", huge[i], 1);
		CU_ASSERT_EQUAL(dpdat_eal_init(&c), -EINVAL);
	}
	unsetenv("DPDAT_HUGE");
	for (size_t i = 0; i < RTE_DIM(mb); i++) {
		setenv("DPDAT_MEM_MB", mb[i], 1);
		CU_ASSERT_EQUAL(dpdat_eal_init(&c), -EINVAL);
	}
	unsetenv("DPDAT_MEM_MB");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	setenv("DPDAT_EAL", big, 1);
	CU_ASSERT_EQUAL(dpdat_eal_init(&c), -EINVAL);
	unsetenv("DPDAT_EAL");
	/* and a conf that cannot be right */
	c.huge = (enum dpdat_huge_policy)77;
	CU_ASSERT_EQUAL(dpdat_eal_init(&c), -EINVAL);
	c.huge = DPDAT_HUGE_NEVER;
	c.n_devices = 17;
	c.devices = (const char *[17]){ 0 };
	CU_ASSERT_EQUAL(dpdat_eal_init(&c), -EINVAL);
	c.n_devices = 1;
	c.devices = NULL;
	CU_ASSERT_EQUAL(dpdat_eal_init(&c), -EINVAL);
	c.n_devices = 0;
	c.n_extra_args = 2;
	CU_ASSERT_EQUAL(dpdat_eal_init(&c), -EINVAL);
}

static CU_TestInfo eal_tests[] = {
	{ "defaults: --no-pci, one memory mode", test_defaults },
	{ "a PCI device: -a, no --no-pci", test_pci_device },
	{ "the user's -a/--allow: no --no-pci", test_user_allow_list },
	{ "the user's cores, prefix and memory win", test_user_wins },
	{ "DPDAT_EAL splitting and its limits", test_split_limits },
	{ "extra_words and DPDAT_EAL in one buffer", test_user_add },
	{ "the conf's prefix, log level and size", test_conf_values },
	{ "the largest input fits in full", test_largest_fits },
	{ "malformed DPDAT_HUGE, DPDAT_MEM_MB, DPDAT_EAL, conf", test_malformed_env },
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
