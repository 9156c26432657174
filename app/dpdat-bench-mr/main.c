/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * dpdat-bench-mr: memory-registration figures (a benchmark, not a test).
 *  1. LMR create + free latency for regions of 4 KiB ... 1 GiB over DPDK
 *     (hugepage) memory and over plain mmap memory.
 *  2. Access-check lookups per second with 1 and 1,000,000 live regions.
 * Prints a table, optionally JSON (--json FILE).
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <rte_errno.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_env.h>

#define MAX_SIZES 16

static unsigned int bench_errors;	/* any failed run: exit status 1 */

struct opts {
	uint64_t sizes[MAX_SIZES];
	unsigned int n_sizes;
	unsigned int iters;
	uint32_t live[4];
	unsigned int n_live;
	double seconds;
	const char *json;
};

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int
parse_list(const char *arg, uint64_t *out, unsigned int max, unsigned int *n)
{
	char *copy = strdup(arg), *tok, *save = NULL, *end;
	uint64_t v;

	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		v = strtoull(tok, &end, 0);
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		else if (*end == 'G' || *end == 'g')
			v <<= 30, end++;
		if (*end != '\0' || v == 0 || *n == max) {
			free(copy);
			return -EINVAL;
		}
		out[(*n)++] = v;
	}
	free(copy);
	return *n ? 0 : -EINVAL;
}

static void
usage(const char *prog)
{
	printf("usage: %s [--sizes 4K,64K,...] [--iters N] "
	       "[--live 1,1000000] [--seconds S] [--json FILE]\n"
	       "  --sizes    region sizes for create+free (default 4K,64K,1M,"
	       "16M,256M,1G)\n"
	       "  --iters    create+free pairs per size (default 200)\n"
	       "  --live     live-region counts for the lookup test\n"
	       "  --seconds  duration of each lookup run (default 1)\n"
	       "  --help-env the DPDAT_* environment settings (DPDAT_HUGE, "
	       "DPDAT_MEM_MB...)\n",
	       prog);
}

static int
parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'i' },
		{ "live", required_argument, NULL, 'l' },
		{ "seconds", required_argument, NULL, 't' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "help-env", no_argument, NULL, 'E' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t live[4];
	unsigned int k;
	int c;

	parse_list("4K,64K,1M,16M,256M,1G", o->sizes, MAX_SIZES, &o->n_sizes);
	o->iters = 200;
	o->live[0] = 1;
	o->live[1] = 1000000;
	o->n_live = 2;
	o->seconds = 1.0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_list(optarg, o->sizes, MAX_SIZES,
				       &o->n_sizes) < 0)
				return -EINVAL;
			break;
		case 'i':
			o->iters = (unsigned int)strtoul(optarg, NULL, 0);
			if (o->iters == 0)
				return -EINVAL;
			break;
		case 'l':
			if (parse_list(optarg, live, 4, &o->n_live) < 0)
				return -EINVAL;
			for (k = 0; k < o->n_live; k++) {
				if (live[k] > DPDAT_MR_MAX_CONTEXTS)
					return -EINVAL;
				o->live[k] = (uint32_t)live[k];
			}
			break;
		case 't':
			o->seconds = strtod(optarg, NULL);
			if (o->seconds <= 0)
				return -EINVAL;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'E':
			dpdat_env_help(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	return 0;
}

struct reg_result {
	uint64_t size;
	const char *memory;
	enum dpdat_mem_kind kind;
	double create_us, free_us;
	int ok;
};

/* iters create+free pairs over one region; averages per call. */
static int
time_reg(struct dpdat_pz *pz, void *buf, uint64_t size, unsigned int iters,
	 struct reg_result *r)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL,
				    .virt = { buf, size } };
	struct dpdat_lmr_info info;
	struct dpdat_lmr *lmr;
	double t0, t1, tc = 0, tf = 0;
	unsigned int k;

	for (k = 0; k < iters; k++) {
		t0 = now_us();
		lmr = dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_ALL);
		t1 = now_us();
		if (lmr == NULL)
			return -rte_errno;
		if (k == 0)
			dpdat_lmr_query(lmr, &info);
		tc += t1 - t0;
		t0 = now_us();
		dpdat_lmr_free(lmr);
		tf += now_us() - t0;
	}
	r->kind = info.kind;
	r->create_us = tc / iters;
	r->free_us = tf / iters;
	r->ok = 1;
	return 0;
}

static unsigned int
iters_for(uint64_t size, unsigned int iters, int plain)
{
	/* plain memory registration walks its pages: fewer rounds when big */
	if (plain && size >= (256u << 20))
		return iters / 20 ? iters / 20 : 1;
	if (plain && size >= (16u << 20))
		return iters / 4 ? iters / 4 : 1;
	return iters;
}

static void
bench_registration(struct dpdat_pz *pz, const struct opts *o,
		   struct reg_result *res)
{
	unsigned int k;
	void *buf;
	int ret;

	for (k = 0; k < o->n_sizes; k++) {
		struct reg_result *h = &res[2 * k], *p = &res[2 * k + 1];

		h->size = p->size = o->sizes[k];
		h->memory = "dpdk";
		p->memory = "mmap";
		fprintf(stderr, "  registering %" PRIu64 " KiB regions...\n",
			o->sizes[k] >> 10);
		buf = dpdat_mem_alloc(o->sizes[k], 4096, -1);
		if (buf == NULL) {
			fprintf(stderr, "  dpdat_mem_alloc(%" PRIu64 "): %s "
				"(raise DPDAT_MEM_MB or hugepages)\n",
				o->sizes[k], rte_strerror(rte_errno));
			bench_errors++;
		} else {
			ret = time_reg(pz, buf, o->sizes[k], o->iters, h);
			if (ret < 0) {
				fprintf(stderr, "  dpdk: %s\n", strerror(-ret));
				bench_errors++;
			}
			dpdat_mem_free(buf);
		}
		buf = mmap(NULL, o->sizes[k], PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf != MAP_FAILED) {
			ret = time_reg(pz, buf, o->sizes[k],
				       iters_for(o->sizes[k], o->iters, 1), p);
			if (ret < 0) {
				fprintf(stderr, "  mmap: %s\n", strerror(-ret));
				bench_errors++;
			}
			munmap(buf, o->sizes[k]);
		}
	}
}

struct lookup_result {
	uint32_t live;
	double setup_s;
	double mlookups;
	int ok;
};

static int
bench_lookup(struct dpdat_mr_domain *dom, struct dpdat_pz *pz, uint32_t live,
	     double seconds, struct lookup_result *r)
{
	static char buf[64];
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL,
				    .virt = { buf, sizeof(buf) } };
	struct dpdat_lmr **lmrs = calloc(live, sizeof(*lmrs));
	uint32_t *ctx = calloc(live, sizeof(*ctx));
	struct dpdat_lmr_info info;
	struct dpdat_pz_info pi;
	uint64_t x = 88172645463325252ull, n = 0, hits = 0;
	double t0, t1;
	uint32_t k;

	if (lmrs == NULL || ctx == NULL)
		return -ENOMEM;
	dpdat_pz_query(pz, &pi);
	t0 = now_us();
	for (k = 0; k < live; k++) {
		lmrs[k] = dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_LOCAL_READ |
					   DPDAT_MEM_PRIV_REMOTE_READ);
		if (lmrs[k] == NULL) {
			live = k;
			break;
		}
		dpdat_lmr_query(lmrs[k], &info);
		ctx[k] = info.rmr_context;
		if (live >= 100000 && k % (live / 10) == 0 && k)
			fprintf(stderr, "  %u/%u live regions\n", k, live);
	}
	r->setup_s = (now_us() - t0) / 1e6;
	r->live = live;
	t0 = now_us();
	do {
		for (k = 0; k < 4096; k++) {
			/* xorshift: random keys defeat the cache as a
			 * responder serving many peers would */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			hits += dpdat_mr_access_check(dom, ctx[x % live],
				(uintptr_t)buf, 8, DPDAT_MEM_PRIV_REMOTE_READ,
				pi.id, NULL) == DPDAT_MR_CHECK_OK;
		}
		n += 4096;
		t1 = now_us();
	} while (t1 - t0 < seconds * 1e6);
	r->mlookups = n / (t1 - t0);
	r->ok = hits == n;
	for (k = 0; k < live; k++)
		dpdat_lmr_free(lmrs[k]);
	free(lmrs);
	free(ctx);
	return r->ok ? 0 : -EIO;
}

static void
print_results(const struct opts *o, const struct reg_result *res,
	      const struct lookup_result *lr, FILE *json)
{
	unsigned int k;

	printf("\n LMR create+free latency (average of each call)\n");
	printf(" %12s  %-6s %-7s %12s %12s %12s\n", "size[B]", "memory", "kind",
	       "create[us]", "free[us]", "total[us]");
	for (k = 0; k < 2 * o->n_sizes; k++) {
		if (!res[k].ok)
			continue;
		printf(" %12" PRIu64 "  %-6s %-7s %12.2f %12.2f %12.2f\n",
		       res[k].size, res[k].memory,
		       dpdat_mem_kind_str(res[k].kind), res[k].create_us,
		       res[k].free_us, res[k].create_us + res[k].free_us);
	}
	if (res[0].ok && res[2 * (o->n_sizes - 1)].ok)
		printf(" dpdk memory: create %" PRIu64 " B / create %" PRIu64
		       " B = %.2f (1.0 = flat in region size)\n",
		       res[2 * (o->n_sizes - 1)].size, res[0].size,
		       res[2 * (o->n_sizes - 1)].create_us / res[0].create_us);
	printf("\n Access-check lookups (random keys)\n");
	printf(" %12s %12s %14s\n", "live", "setup[s]", "Mlookups/s");
	for (k = 0; k < o->n_live; k++)
		if (lr[k].ok)
			printf(" %12u %12.2f %14.2f\n", lr[k].live,
			       lr[k].setup_s, lr[k].mlookups);
	if (json == NULL)
		return;
	fprintf(json, "{\n  \"mode\": \"%s\",\n  \"registration\": [\n",
		dpdat_mem_mode_str(dpdat_eal_mem_mode()));
	for (k = 0; k < 2 * o->n_sizes; k++)
		if (res[k].ok)
			fprintf(json, "    {\"size\": %" PRIu64 ", \"memory\": "
				"\"%s\", \"kind\": \"%s\", \"create_us\": %.3f,"
				" \"free_us\": %.3f},\n", res[k].size,
				res[k].memory, dpdat_mem_kind_str(res[k].kind),
				res[k].create_us, res[k].free_us);
	fprintf(json, "    null\n  ],\n  \"lookup\": [\n");
	for (k = 0; k < o->n_live; k++)
		if (lr[k].ok)
			fprintf(json, "    {\"live\": %u, \"mlookups_per_s\": "
				"%.3f},\n", lr[k].live, lr[k].mlookups);
	fprintf(json, "    null\n  ]\n}\n");
}

int
main(int argc, char **argv)
{
	struct dpdat_eal_conf ec = { .program = argv[0], .mem_mb = 1536 };
	struct reg_result res[2 * MAX_SIZES] = { 0 };
	struct lookup_result lr[4] = { 0 };
	struct dpdat_mr_domain *dom;
	struct dpdat_pz *pz;
	struct opts o = { 0 };
	FILE *json = NULL;
	unsigned int k;
	int ret;

	if (parse_args(argc, argv, &o) < 0) {
		usage(argv[0]);
		return 2;
	}
	ret = dpdat_eal_init(&ec);
	if (ret < 0) {
		fprintf(stderr, "dpdat_eal_init: %s\n", strerror(-ret));
		return 1;
	}
	printf("dpdat-bench-mr: EAL memory mode %s\n",
	       dpdat_mem_mode_str(dpdat_eal_mem_mode()));
	dom = dpdat_mr_domain_create(NULL);
	pz = dom ? dpdat_pz_create(dom) : NULL;
	if (pz == NULL) {
		fprintf(stderr, "setup: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	fprintf(stderr, "registration latency, %u rounds per size\n", o.iters);
	bench_registration(pz, &o, res);
	for (k = 0; k < o.n_live; k++) {
		fprintf(stderr, "lookups with %u live regions\n", o.live[k]);
		ret = bench_lookup(dom, pz, o.live[k], o.seconds, &lr[k]);
		if (ret < 0) {
			fprintf(stderr, "  lookup run failed: %s\n",
				strerror(-ret));
			bench_errors++;
		}
	}
	if (o.json != NULL && (json = fopen(o.json, "w")) == NULL)
		fprintf(stderr, "%s: %s\n", o.json, strerror(errno));
	print_results(&o, res, lr, json);
	if (json != NULL)
		fclose(json);
	dpdat_pz_free(pz);
	dpdat_mr_domain_free(dom);
	dpdat_eal_cleanup();
	if (bench_errors)
		fprintf(stderr, "dpdat-bench-mr: %u run(s) failed\n",
			bench_errors);
	return bench_errors ? 1 : 0;
}
