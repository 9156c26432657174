/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * "%l" in device arguments (lib/port/rank.c): the local rank from
 * DPDAT_LOCAL_RANK or an MPI launcher's variable, in that order; every
 * way the expansion can fail, and a port that cannot open for it.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include <rte_errno.h>

#include <dpdat/dpdat_port.h>
#include "port_priv.h"
#include "unit_run.h"

static const char *const vars[] = {
	"DPDAT_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
	"MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PALS_LOCAL_RANKID",
};

static void
no_rank(void)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static int
expand(const char *dev, char *out, size_t len)
{
	memset(out, 0x55, len);
	return port_devargs_expand(dev, out, len);
}

static void
test_plain_copied(void)
{
	char out[64];

	no_rank();
	CU_ASSERT_EQUAL(expand("net_af_xdp0,iface=eth1", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "net_af_xdp0,iface=eth1");
	CU_ASSERT_EQUAL(expand("a%%b", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "a%b");
	CU_ASSERT_EQUAL(expand("", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
}

static void
test_rank_sources(void)
{
	char out[64];

	no_rank();
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
	CU_ASSERT_EQUAL(expand("net_af_xdp0,iface=mv%l", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "net_af_xdp0,iface=mv1");
	/* dpdat's own setting first */
	setenv("DPDAT_LOCAL_RANK", "12", 1);
	CU_ASSERT_EQUAL(expand("net_af_xdp%l,iface=mv%l", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "net_af_xdp12,iface=mv12");
	no_rank();
	setenv("MPI_LOCALRANKID", "0", 1);
	CU_ASSERT_EQUAL(expand("mv%l", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "mv0");
	no_rank();
	setenv("SLURM_LOCALID", "7", 1);
	CU_ASSERT_EQUAL(expand("mv%l", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "mv7");
	no_rank();
}

static void
test_errors(void)
{
	char out[64], small[6];

	no_rank();
	CU_ASSERT_EQUAL(expand("mv%l", out, sizeof(out)), -ENOENT);
	setenv("DPDAT_LOCAL_RANK", "x", 1);
	CU_ASSERT_EQUAL(expand("mv%l", out, sizeof(out)), -EINVAL);
	setenv("DPDAT_LOCAL_RANK", "-1", 1);
	CU_ASSERT_EQUAL(expand("mv%l", out, sizeof(out)), -EINVAL);
	setenv("DPDAT_LOCAL_RANK", "65536", 1);
	CU_ASSERT_EQUAL(expand("mv%l", out, sizeof(out)), -EINVAL);
	setenv("DPDAT_LOCAL_RANK", "2", 1);
	CU_ASSERT_EQUAL(expand("mv%x", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(expand("mv%", out, sizeof(out)), -EINVAL);
	/* no room: "mv" + "2" + NUL fits 4, "mvmv2" does not fit 5 */
	CU_ASSERT_EQUAL(expand("mv%l", small, 4), 0);
	CU_ASSERT_STRING_EQUAL(small, "mv2");
	CU_ASSERT_EQUAL(expand("mvmv%l", small, 5), -EINVAL);
	CU_ASSERT_EQUAL(expand("abcdef", small, sizeof(small)), -EINVAL);
	no_rank();
}

/* A port whose device names the rank when none is known does not open,
 * and says why in rte_errno. */
static void
test_port_refused(void)
{
	struct dpdat_port_conf pc = {
		.device = "net_ring%l", .ipv4 = "198.18.2.1",
	};

	no_rank();
	CU_ASSERT_PTR_NULL(dpdat_port_create(&pc));
	CU_ASSERT_EQUAL(rte_errno, ENOENT);
}

static CU_TestInfo rank_tests[] = {
	{ "no %l: copied, %% is %", test_plain_copied },
	{ "%l from DPDAT_LOCAL_RANK or a launcher", test_rank_sources },
	{ "no rank, a bad rank, another %, no room", test_errors },
	{ "a port naming an unknown rank is refused", test_port_refused },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "port_rank", NULL, NULL, NULL, NULL, rank_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	(void)argc;
	return unit_run_eal(argv[0], suites, NULL, NULL);
}
