/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * dpdat-demo: the quick-start walk through memory registration. Until the
 * transport lands it shows, step by step, what lib/mr does: protection
 * zones, hugepage and plain LMRs, an LMR over an LMR, a shared region named
 * by a cookie, an RMR bound and re-bound, the access check the responder
 * will run, and the table of live contexts. Exits non-zero on any surprise.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_errno.h>

#include <dpdat/dpdat_env.h>

#include "demo.h"

static int failures;

#define STEP(fmt, ...) printf("\n== " fmt "\n", ##__VA_ARGS__)

static void
expect(int ok, const char *what)
{
	printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok)
		failures++;
}

static void
show_lmr(const char *name, const struct dpdat_lmr *lmr)
{
	struct dpdat_lmr_info i;
	char pbuf[32];

	if (lmr == NULL || dpdat_lmr_query(lmr, &i) != 0) {
		printf("  %s: not created (%s)\n", name, rte_strerror(rte_errno));
		failures++;
		return;
	}
	printf("  %s: lmr_context 0x%08x rmr_context 0x%08x kind %s privs %s\n"
	       "      range 0x%" PRIx64 " +%" PRIu64 ", registered 0x%" PRIx64
	       " +%" PRIu64 "\n", name, i.lmr_context, i.rmr_context,
	       dpdat_mem_kind_str(i.kind),
	       demo_priv_str(i.privileges, pbuf, sizeof(pbuf)), i.address,
	       i.length, i.registered_address, i.registered_size);
}

static void
check(struct dpdat_mr_domain *dom, const char *what, uint32_t ctx,
      uint64_t addr, uint64_t len, uint32_t access, uint32_t pz_id,
      enum dpdat_mr_check want)
{
	enum dpdat_mr_check r =
		dpdat_mr_access_check(dom, ctx, addr, len, access, pz_id, NULL);
	char line[160];

	snprintf(line, sizeof(line), "%-44s -> %s", what, dpdat_mr_check_str(r));
	expect(r == want, line);
}

/* Run "self part" and wait: the EAL can live once per process. */
static int
run_part(const char *self, const char *part)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", self, part, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 1;
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

static int
demo_mr(char **argv)
{
	struct dpdat_eal_conf ec = { .program = argv[0] };
	struct dpdat_mem_desc d;
	struct dpdat_pz_info pi1, pi2;
	struct dpdat_lmr *huge, *plain, *page, *over, *sh1, *sh2, *bad;
	struct dpdat_lmr_info hi;
	struct dpdat_lmr_triplet seg;
	struct dpdat_mr_domain *dom;
	struct dpdat_pz *pz1, *pz2;
	struct dpdat_rmr *rmr;
	uint32_t win1, win2;
	uint8_t cookie[DPDAT_LMR_COOKIE_LEN];
	const size_t huge_len = 2u << 20, pg_len = 64u << 10;
	void *hbuf, *pbuf, *pgbuf, *shbuf;
	int ret;

	printf("dpdat %s memory-registration walk-through\n", DPDAT_VERSION_STR);
	ret = dpdat_eal_init(&ec);
	if (ret < 0) {
		fprintf(stderr, "dpdat_eal_init: %s\n", strerror(-ret));
		return 1;
	}
	printf("EAL memory mode: %s\n",
	       dpdat_mem_mode_str(dpdat_eal_mem_mode()));

	STEP("a registration domain and two protection zones");
	dom = dpdat_mr_domain_create(NULL);
	pz1 = dpdat_pz_create(dom);
	pz2 = dpdat_pz_create(dom);
	if (dom == NULL || pz1 == NULL || pz2 == NULL) {
		fprintf(stderr, "setup: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	dpdat_pz_query(pz1, &pi1);
	dpdat_pz_query(pz2, &pi2);
	printf("  pz%u, pz%u\n", pi1.id, pi2.id);

	STEP("LMR over 2 MiB of DPDK memory (dpdat_mem_alloc): zero-copy");
	hbuf = dpdat_mem_alloc(huge_len, 4096, -1);
	d = (struct dpdat_mem_desc){ .type = DPDAT_MEM_TYPE_VIRTUAL,
		.virt = { hbuf, huge_len } };
	huge = dpdat_lmr_create(pz1, &d, DPDAT_MEM_PRIV_ALL);
	show_lmr("huge", huge);

	STEP("LMR over 10000 unaligned malloc'd bytes: rounded to pages, copy path");
	pbuf = malloc(10000 + 100);
	d = (struct dpdat_mem_desc){ .type = DPDAT_MEM_TYPE_VIRTUAL,
		.virt = { (char *)pbuf + 100, 10000 } };
	plain = dpdat_lmr_create(pz1, &d, DPDAT_MEM_PRIV_LOCAL_READ |
				 DPDAT_MEM_PRIV_LOCAL_WRITE);
	show_lmr("plain", plain);
	printf("  no remote privilege asked -> no rmr_context\n");

	STEP("LMR over 64 KiB of page-aligned mmap memory: rte_extmem_register");
	pgbuf = mmap(NULL, pg_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	d = (struct dpdat_mem_desc){ .type = DPDAT_MEM_TYPE_SO_VIRTUAL,
		.virt = { pgbuf, pg_len } };
	page = dpdat_lmr_create(pz1, &d, DPDAT_MEM_PRIV_ALL);
	show_lmr("page (SO_VIRTUAL)", page);

	STEP("LMR over the huge LMR, in pz%u, remote read only", pi2.id);
	d = (struct dpdat_mem_desc){ .type = DPDAT_MEM_TYPE_LMR, .lmr = huge };
	over = dpdat_lmr_create(pz2, &d, DPDAT_MEM_PRIV_LOCAL_READ |
				DPDAT_MEM_PRIV_REMOTE_READ);
	show_lmr("over", over);

	STEP("two consumers share a MAP_SHARED region by a 40-byte cookie");
	memset(cookie, 0, sizeof(cookie));
	memcpy(cookie, "demo\0cookie", 11);	/* NUL inside: bytes, not a string */
	shbuf = mmap(NULL, pg_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	d = (struct dpdat_mem_desc){ .type = DPDAT_MEM_TYPE_SHARED_VIRTUAL,
		.shared = { cookie, shbuf, pg_len } };
	sh1 = dpdat_lmr_create(pz1, &d, DPDAT_MEM_PRIV_ALL);
	sh2 = dpdat_lmr_create(pz2, &d, DPDAT_MEM_PRIV_LOCAL_READ);
	show_lmr("shared#1", sh1);
	show_lmr("shared#2", sh2);
	cookie[39] ^= 1;
	d.shared.addr = pbuf;
	d.shared.length = 4096;
	bad = dpdat_lmr_create(pz1, &d, DPDAT_MEM_PRIV_ALL);
	expect(bad == NULL && rte_errno == EBADFD,
	       "private malloc memory as SHARED_VIRTUAL -> invalid state");

	STEP("an RMR (memory window) bound to 4 KiB of the huge LMR");
	dpdat_lmr_query(huge, &hi);
	rmr = dpdat_rmr_create(pz1);
	seg = (struct dpdat_lmr_triplet){ .lmr_context = hi.lmr_context,
		.virtual_address = hi.address + 8192, .segment_length = 4096 };
	ret = dpdat_rmr_bind(rmr, &seg, DPDAT_MEM_PRIV_REMOTE_WRITE, &win1);
	expect(ret == 0, "bind remote write");
	printf("  window context 0x%08x\n", win1);
	check(dom, "remote write inside the window", win1, seg.virtual_address,
	      4096, DPDAT_MEM_PRIV_REMOTE_WRITE, pi1.id, DPDAT_MR_CHECK_OK);
	check(dom, "remote read through a write-only window", win1,
	      seg.virtual_address, 8, DPDAT_MEM_PRIV_REMOTE_READ, pi1.id,
	      DPDAT_MR_CHECK_PRIVILEGE);
	check(dom, "one byte past the window", win1, seg.virtual_address + 1,
	      4096, DPDAT_MEM_PRIV_REMOTE_WRITE, pi1.id, DPDAT_MR_CHECK_BOUNDS);
	check(dom, "window used from the other PZ", win1, seg.virtual_address,
	      8, DPDAT_MEM_PRIV_REMOTE_WRITE, pi2.id, DPDAT_MR_CHECK_PZ);
	ret = dpdat_rmr_bind(rmr, &seg, DPDAT_MEM_PRIV_REMOTE_WRITE, &win2);
	printf("  re-bound: new context 0x%08x\n", win2);
	check(dom, "old window context after the re-bind", win1,
	      seg.virtual_address, 8, DPDAT_MEM_PRIV_REMOTE_WRITE, pi1.id,
	      DPDAT_MR_CHECK_STALE_KEY);
	expect(dpdat_lmr_free(huge) == -EBUSY,
	       "freeing the LMR under a bound RMR -> busy");

	STEP("the context table");
	demo_print_table(dom);

	STEP("teardown");
	expect(dpdat_pz_free(pz1) == -EBUSY, "freeing a PZ still in use -> busy");
	expect(dpdat_rmr_free(rmr) == 0, "free RMR");
	expect(dpdat_lmr_free(over) == 0 && dpdat_lmr_free(huge) == 0 &&
	       dpdat_lmr_free(plain) == 0 && dpdat_lmr_free(page) == 0 &&
	       dpdat_lmr_free(sh1) == 0 && dpdat_lmr_free(sh2) == 0,
	       "free the LMRs");
	check(dom, "huge LMR context after its free", hi.lmr_context,
	      hi.address, 8, DPDAT_MEM_PRIV_REMOTE_READ, pi1.id,
	      DPDAT_MR_CHECK_STALE_KEY);
	expect(dpdat_mr_domain_count(dom) == 0, "table empty");
	expect(dpdat_pz_free(pz1) == 0 && dpdat_pz_free(pz2) == 0, "free PZs");
	expect(dpdat_mr_domain_free(dom) == 0, "free the domain");
	dpdat_mem_free(hbuf);
	free(pbuf);
	munmap(pgbuf, pg_len);
	munmap(shbuf, pg_len);
	dpdat_eal_cleanup();
	printf("\n%s: %d failure%s\n", failures ? "FAILED" : "done", failures,
	       failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}

int
main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";

	setvbuf(stdout, NULL, _IOLBF, 0);	/* two processes, one terminal */

	if (strcmp(what, "mr") == 0)
		return demo_mr(argv);
	if (strcmp(what, "rdma") == 0)
		return demo_rdma();
	if (strcmp(what, "--help-env") == 0)
		return dpdat_env_help(stdout);
	if (strcmp(what, "all") != 0) {
		fprintf(stderr, "usage: %s [mr|rdma|all|--help-env]\n"
			"  mr    memory registration walk-through\n"
			"  rdma  two processes over memif: WRITE, READ, SEND\n"
			"  all   both, one after the other (default)\n"
			"  --help-env  the DPDAT_* environment settings\n",
			argv[0]);
		return 2;
	}
	/* each part brings up its own EAL: run them in child processes */
	return run_part(argv[0], "mr") || run_part(argv[0], "rdma");
}
