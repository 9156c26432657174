/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The project's own verbs program, built against Debian's libibverbs and
 * run through dpdat-run: every call dpdat0 answers so far, and every error
 * a program can provoke with them, checked.
 *   verbs_test        (under dpdat-run; exits 0 when every check holds)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static struct ibv_context *
open_dpdat0(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = -1, found = 0;

	list = ibv_get_device_list(&n);
	CHECK(list != NULL && n >= 1, "device list (%d)", n);
	for (int i = 0; list != NULL && i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), "dpdat0") != 0)
			continue;
		found = 1;
		ctx = ibv_open_device(list[i]);
	}
	CHECK(found, "dpdat0 not in the list");
	CHECK(list == NULL || list[n] == NULL, "list not NULL-terminated");
	ibv_free_device_list(list);	/* the context outlives the list */
	return ctx;
}

static void
queries(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge[4];
	union ibv_gid gid;

	CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0, "query_device_ex");
	CHECK(dx.orig_attr.phys_port_cnt == 1, "ports %u",
	      dx.orig_attr.phys_port_cnt);
	CHECK(ibv_query_port(ctx, 1, &pa) == 0, "query_port");
	CHECK(pa.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer %u",
	      pa.link_layer);
	CHECK(ibv_query_port(ctx, 2, &pa) != 0, "port 2 answered");
	CHECK(ibv_query_gid(ctx, 1, 0, &gid) == 0 && gid.raw[10] == 0xff &&
	      gid.raw[11] == 0xff, "GID 0 not IPv4-mapped");
	CHECK(ibv_query_gid_ex(ctx, 1, 0, &ge[0], 0) == 0 &&
	      ge[0].gid_type == IBV_GID_TYPE_ROCE_V2 &&
	      memcmp(&ge[0].gid, &gid, sizeof(gid)) == 0, "query_gid_ex");
	CHECK(ibv_query_gid_ex(ctx, 1, 1, &ge[0], 0) == ENODATA,
	      "query_gid_ex of index 1");
	CHECK(ibv_query_gid_table(ctx, ge, 4, 0) == 1 &&
	      ge[0].port_num == 1, "query_gid_table");
}

static void
memory(struct ibv_context *ctx)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_WRITE;
	char stack_buf[4096];
	struct ibv_mr *heap, *stk, *map, *ro, *bad;
	struct ibv_pd *pd, *pd2;
	void *h = malloc(65536), *m;

	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd != NULL && pd2 != NULL && pd->context == ctx,
	      "alloc_pd: %s", strerror(errno));
	if (pd == NULL || pd2 == NULL || h == NULL)
		exit(1);
	m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mmap");
	/* any memory the program has: heap, stack, an anonymous map */
	heap = ibv_reg_mr(pd, h, 65536, rw | IBV_ACCESS_REMOTE_ATOMIC);
	stk = ibv_reg_mr(pd, stack_buf, sizeof(stack_buf),
			 IBV_ACCESS_LOCAL_WRITE);
	map = ibv_reg_mr(pd2, m, 1 << 20, rw);
	ro = ibv_reg_mr(pd, h, 4096, 0);	/* local read only */
	CHECK(heap != NULL && stk != NULL && map != NULL && ro != NULL,
	      "reg_mr: %s", strerror(errno));
	if (heap == NULL || stk == NULL || map == NULL || ro == NULL)
		exit(1);
	/* one context serves both ways, as mlx5's lkey == rkey */
	CHECK(heap->lkey != 0 && heap->rkey != 0, "heap keys %#x/%#x",
	      heap->lkey, heap->rkey);
	CHECK(heap->addr == h && heap->length == 65536 && heap->pd == pd,
	      "heap MR fields");
	CHECK(heap->lkey != stk->lkey && heap->lkey != map->lkey &&
	      stk->lkey != map->lkey, "keys not distinct");
	/* the errors a program can provoke */
	errno = 0;
	bad = ibv_reg_mr(pd, h, 4096, IBV_ACCESS_REMOTE_WRITE);
	CHECK(bad == NULL && errno == EINVAL,
	      "remote write without local write: %p %s", (void *)bad,
	      strerror(errno));
	errno = 0;
	bad = ibv_reg_mr(pd, h, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_MW_BIND);
	CHECK(bad == NULL && errno == EOPNOTSUPP, "MW_BIND: %s",
	      strerror(errno));
	errno = 0;
	bad = ibv_reg_mr_iova(pd, h, 4096, 0x1000, IBV_ACCESS_LOCAL_WRITE);
	CHECK(bad == NULL && errno == EOPNOTSUPP, "iova != addr: %s",
	      strerror(errno));
	errno = 0;
	bad = ibv_reg_mr(pd, h, 0, IBV_ACCESS_LOCAL_WRITE);
	CHECK(bad == NULL && errno == EINVAL, "zero length: %s",
	      strerror(errno));
	CHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc_pd with MRs: not EBUSY");
	CHECK(ibv_dereg_mr(heap) == 0 && ibv_dereg_mr(stk) == 0 &&
	      ibv_dereg_mr(ro) == 0 && ibv_dereg_mr(map) == 0, "dereg_mr");
	CHECK(ibv_dealloc_pd(pd) == 0 && ibv_dealloc_pd(pd2) == 0,
	      "dealloc_pd");
	munmap(m, 1 << 20);
	free(h);
}

int
main(void)
{
	struct ibv_context *ctx = open_dpdat0();
	struct ibv_cq *cq;

	if (ctx == NULL) {
		fprintf(stderr, "FAIL: dpdat0 did not open: %s\n",
			strerror(errno));
		return 1;
	}
	queries(ctx);
	memory(ctx);
	/* not there yet: refused, not a crash */
	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq == NULL && errno == EOPNOTSUPP, "create_cq: %s",
	      strerror(errno));
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures != 0;
}
