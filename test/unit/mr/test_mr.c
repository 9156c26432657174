/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Protection zones, LMRs of every memory type, RMR binds, sync calls. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_fbarray.h>
#include <rte_memory.h>

#include "test_mr.h"

#define ALL DPDAT_MEM_PRIV_ALL
#define LR DPDAT_MEM_PRIV_LOCAL_READ
#define LW DPDAT_MEM_PRIV_LOCAL_WRITE
#define RR DPDAT_MEM_PRIV_REMOTE_READ
#define RW DPDAT_MEM_PRIV_REMOTE_WRITE

static size_t pg;

static void *
map_anon(size_t len, int shared)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
		       -1, 0);

	CU_ASSERT_FATAL(p != MAP_FAILED);
	return p;
}

static void
test_pz(void)
{
	struct dpdat_pz_info pi;
	struct dpdat_lmr *lmr;
	char buf[64];

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	CU_ASSERT_EQUAL(dpdat_pz_query(fx.pz1, &pi), 0);
	CU_ASSERT_PTR_EQUAL(pi.domain, fx.dom);
	CU_ASSERT_NOT_EQUAL(pi.id, 0);
	CU_ASSERT_NOT_EQUAL(pi.id, fx.pz2_id);
	CU_ASSERT_EQUAL(pi.ref_count, 0);
	CU_ASSERT_EQUAL(dpdat_pz_query(fx.pz1, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_pz_query(NULL, &pi), -EBADF);
	CU_ASSERT_EQUAL(dpdat_pz_free(NULL), -EBADF);
	/* a handle of another type is refused, not trusted */
	CU_ASSERT_EQUAL(dpdat_pz_free((struct dpdat_pz *)fx.dom), -EBADF);
	CU_ASSERT_PTR_NULL(dpdat_pz_create(NULL));
	CU_ASSERT_EQUAL(rte_errno, EBADF);

	lmr = lmr_virtual(fx.pz1, buf, sizeof(buf), LR);
	CU_ASSERT_FATAL(lmr != NULL);
	CU_ASSERT_EQUAL(dpdat_pz_query(fx.pz1, &pi), 0);
	CU_ASSERT_EQUAL(pi.ref_count, 1);
	CU_ASSERT_EQUAL(dpdat_pz_free(fx.pz1), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_mr_domain_free(fx.dom), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);
	fixture_teardown();
}

static void
test_domain(void)
{
	struct dpdat_mr_domain_conf conf = {
		.max_contexts = DPDAT_MR_MAX_CONTEXTS + 1 };

	CU_ASSERT_PTR_NULL(dpdat_mr_domain_create(&conf));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_EQUAL(dpdat_mr_domain_free(NULL), -EBADF);
	CU_ASSERT_EQUAL(dpdat_mr_domain_count(NULL), 0);
	CU_ASSERT_EQUAL(dpdat_mr_domain_walk(NULL, NULL, NULL), -EBADF);
	/* the EAL is up once: a second bring-up is refused, attaching is fine */
	CU_ASSERT_EQUAL(dpdat_eal_init(NULL), -EALREADY);
	CU_ASSERT_EQUAL(dpdat_eal_attach(), 0);
	CU_ASSERT_NOT_EQUAL(dpdat_eal_mem_mode(), DPDAT_MEM_MODE_NONE);
}

static void
test_lmr_virtual_copy(void)
{
	const size_t off = 100, len = 3 * 4096 + 7;
	char *buf = malloc(len + off + 4096);
	struct dpdat_lmr_info i;
	struct dpdat_lmr *lmr;
	uint64_t a = (uintptr_t)buf + off;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	lmr = lmr_virtual(fx.pz1, buf + off, len, LR | LW);
	CU_ASSERT_FATAL(lmr != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(lmr, &i), 0);
	CU_ASSERT_EQUAL(i.type, DPDAT_MEM_TYPE_VIRTUAL);
	CU_ASSERT_EQUAL(i.kind, DPDAT_MEM_KIND_COPY);
	CU_ASSERT_EQUAL(i.address, a);
	CU_ASSERT_EQUAL(i.length, len);
	/* registration rounded out to whole pages */
	CU_ASSERT_EQUAL(i.registered_address, a & ~(uint64_t)(pg - 1));
	CU_ASSERT_EQUAL(i.registered_size % pg, 0);
	CU_ASSERT(i.registered_address + i.registered_size >= a + len);
	CU_ASSERT(i.registered_address + i.registered_size < a + len + pg);
	CU_ASSERT_EQUAL(i.privileges, LR | LW);
	CU_ASSERT_NOT_EQUAL(i.lmr_context, 0);
	/* no remote privilege asked: no remote context */
	CU_ASSERT_EQUAL(i.rmr_context, 0);
	CU_ASSERT_PTR_EQUAL(i.pz, fx.pz1);
	CU_ASSERT_EQUAL(i.share_count, 1);
	CU_ASSERT_EQUAL(dpdat_lmr_query(lmr, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);

	lmr = lmr_virtual(fx.pz1, buf + off, len, LR | RR);
	CU_ASSERT_FATAL(lmr != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(lmr, &i), 0);
	CU_ASSERT_EQUAL(i.rmr_context, i.lmr_context);
	CU_ASSERT_NOT_EQUAL(i.rmr_context, 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);
	free(buf);
	fixture_teardown();
}

static void
test_lmr_dpdk_memory(void)
{
	const size_t len = 1 << 20;
	void *buf = dpdat_mem_alloc(len, 4096, -1);
	struct dpdat_lmr_info i;
	struct dpdat_lmr *lmr;

	CU_ASSERT_FATAL(buf != NULL);
	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	lmr = lmr_virtual(fx.pz1, buf, len, ALL);
	CU_ASSERT_FATAL(lmr != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(lmr, &i), 0);
	CU_ASSERT_EQUAL(i.kind, DPDAT_MEM_KIND_DPDK);
	CU_ASSERT_EQUAL(i.iova, rte_mem_virt2iova(buf));
	CU_ASSERT_NOT_EQUAL(i.iova, RTE_BAD_IOVA);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);
	fixture_teardown();
	dpdat_mem_free(buf);

	CU_ASSERT_PTR_NULL(dpdat_mem_alloc(0, 0, -1));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(dpdat_mem_alloc(64, 3, -1));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	/* a socket that does not exist: the allocator has nothing to give */
	CU_ASSERT_PTR_NULL(dpdat_mem_alloc(4096, 0, 12345));
	CU_ASSERT_EQUAL(rte_errno, ENOMEM);
	dpdat_mem_free(NULL);
}

static void
test_lmr_extmem(void)
{
	const size_t len = 16 * pg;
	char *buf = map_anon(len, 0);
	struct dpdat_lmr *a, *b, *c;
	struct dpdat_lmr_info i;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	a = lmr_virtual(fx.pz1, buf, len, ALL);
	CU_ASSERT_FATAL(a != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(a, &i), 0);
	CU_ASSERT_EQUAL(i.kind, DPDAT_MEM_KIND_EXTMEM);
	CU_ASSERT_PTR_NOT_NULL(rte_mem_virt2memseg_list(buf));
	/* a second registration of pages inside the first shares it */
	b = lmr_virtual(fx.pz2, buf + pg, 2 * pg, LR);
	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(b, &i), 0);
	CU_ASSERT_EQUAL(i.kind, DPDAT_MEM_KIND_EXTMEM);
	/* an unaligned range inside registered pages shares them too */
	c = lmr_virtual(fx.pz2, buf + 10, 100, LR);
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(c, &i), 0);
	CU_ASSERT_EQUAL(i.kind, DPDAT_MEM_KIND_EXTMEM);
	CU_ASSERT_EQUAL(dpdat_lmr_free(a), 0);
	CU_ASSERT_PTR_NOT_NULL(rte_mem_virt2memseg_list(buf + pg));
	CU_ASSERT_EQUAL(dpdat_lmr_free(b), 0);
	CU_ASSERT_PTR_NOT_NULL(rte_mem_virt2memseg_list(buf + 10));
	CU_ASSERT_EQUAL(dpdat_lmr_free(c), 0);
	/* the last user gone, the pages are unregistered again */
	CU_ASSERT_PTR_NULL(rte_mem_virt2memseg_list(buf));
	fixture_teardown();
	munmap(buf, len);
}

static void
test_lmr_so_virtual(void)
{
	char buf[256];
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_SO_VIRTUAL,
				    .virt = { buf, sizeof(buf) } };
	struct dpdat_lmr_info i;
	struct dpdat_lmr *lmr;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	lmr = dpdat_lmr_create(fx.pz1, &d, ALL);
	CU_ASSERT_FATAL(lmr != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(lmr, &i), 0);
	CU_ASSERT_EQUAL(i.type, DPDAT_MEM_TYPE_SO_VIRTUAL);
	CU_ASSERT_EQUAL(i.length, sizeof(buf));
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, i.lmr_context,
		(uintptr_t)buf, sizeof(buf), RW, fx.pz1_id, NULL),
		DPDAT_MR_CHECK_OK);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);
	fixture_teardown();
}

static void
test_lmr_over_lmr(void)
{
	char buf[8192];
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_LMR };
	struct dpdat_lmr_info pi, ci;
	struct dpdat_lmr *parent, *child;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	parent = lmr_virtual(fx.pz1, buf, sizeof(buf), LR | LW);
	CU_ASSERT_FATAL(parent != NULL);
	d.lmr = parent;
	/* length is ignored for this type */
	child = dpdat_lmr_create(fx.pz2, &d, LR | RR);
	CU_ASSERT_FATAL(child != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(parent, &pi), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_query(child, &ci), 0);
	CU_ASSERT_EQUAL(ci.type, DPDAT_MEM_TYPE_LMR);
	CU_ASSERT_PTR_EQUAL(ci.pz, fx.pz2);
	CU_ASSERT_EQUAL(ci.address, pi.address);
	CU_ASSERT_EQUAL(ci.length, pi.length);
	CU_ASSERT_EQUAL(ci.share_count, 2);
	CU_ASSERT_NOT_EQUAL(ci.lmr_context, pi.lmr_context);
	CU_ASSERT_EQUAL(pi.rmr_context, 0);
	CU_ASSERT_EQUAL(ci.rmr_context, ci.lmr_context);
	/* each context carries its own PZ and privileges */
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, ci.rmr_context,
		pi.address, 16, RR, fx.pz2_id, NULL), DPDAT_MR_CHECK_OK);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, pi.lmr_context,
		pi.address, 16, RR, fx.pz1_id, NULL), DPDAT_MR_CHECK_PRIVILEGE);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, ci.lmr_context,
		pi.address, 16, LR, fx.pz1_id, NULL), DPDAT_MR_CHECK_PZ);
	/* the translation outlives the LMR it was first made for */
	CU_ASSERT_EQUAL(dpdat_lmr_free(parent), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_query(child, &ci), 0);
	CU_ASSERT_EQUAL(ci.share_count, 1);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, ci.rmr_context,
		pi.address, 16, RR, fx.pz2_id, NULL), DPDAT_MR_CHECK_OK);
	/* handles: NULL and wrong type */
	d.lmr = NULL;
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, &d, LR));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	d.lmr = (struct dpdat_lmr *)fx.pz1;
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, &d, LR));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	CU_ASSERT_EQUAL(dpdat_lmr_free(child), 0);
	fixture_teardown();
}

static void
test_lmr_shared(void)
{
	const size_t len = 4 * pg;
	char *shm = map_anon(len, 1), *priv = map_anon(len, 0);
	uint8_t c1[DPDAT_LMR_COOKIE_LEN] = { 0 }, c2[DPDAT_LMR_COOKIE_LEN];
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_SHARED_VIRTUAL,
				    .shared = { c1, shm, len } };
	struct dpdat_lmr *a, *b, *c;
	struct dpdat_lmr_info i;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	/* cookies equal as C strings (both start with NUL), different bytes */
	memcpy(c2, c1, sizeof(c2));
	c2[39] = 0x5a;
	a = dpdat_lmr_create(fx.pz1, &d, ALL);
	CU_ASSERT_FATAL(a != NULL);
	b = dpdat_lmr_create(fx.pz2, &d, LR);
	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(b, &i), 0);
	CU_ASSERT_EQUAL(i.type, DPDAT_MEM_TYPE_SHARED_VIRTUAL);
	CU_ASSERT_EQUAL(i.share_count, 2);
	/* the same cookie names one region: another range is refused */
	d.shared.length = len / 2;
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, &d, LR));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	/* a cookie differing in its last byte is another region */
	d.shared.cookie = c2;
	c = dpdat_lmr_create(fx.pz1, &d, LR);
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(dpdat_lmr_query(c, &i), 0);
	CU_ASSERT_EQUAL(i.share_count, 1);
	CU_ASSERT_EQUAL(dpdat_lmr_query(a, &i), 0);
	CU_ASSERT_EQUAL(i.share_count, 2);
	/* memory not created shared: invalid state */
	c2[0] = 1;
	d.shared.addr = priv;
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, &d, LR));
	CU_ASSERT_EQUAL(rte_errno, EBADFD);
	/* shared pages followed by private ones: not shared throughout */
	{
		char *mix = map_anon(2 * pg, 0);
		struct dpdat_lmr *m;

		CU_ASSERT_FATAL(mmap(mix, pg, PROT_READ | PROT_WRITE,
				     MAP_FIXED | MAP_SHARED | MAP_ANONYMOUS,
				     -1, 0) == mix);
		d.shared.addr = mix;
		d.shared.length = 2 * pg;
		CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, &d, LR));
		CU_ASSERT_EQUAL(rte_errno, EBADFD);
		d.shared.length = pg;	/* the shared page alone is fine */
		m = dpdat_lmr_create(fx.pz1, &d, LR);
		CU_ASSERT_PTR_NOT_NULL(m);
		CU_ASSERT_EQUAL(dpdat_lmr_free(m), 0);
		munmap(mix, 2 * pg);
	}
	d.shared.length = len;
	d.shared.cookie = NULL;
	d.shared.addr = shm;
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, &d, LR));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_EQUAL(dpdat_lmr_free(a), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(b), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(c), 0);
	/* all sharers gone: the cookie can name a new range */
	d.shared.cookie = c1;
	d.shared.length = pg;
	a = dpdat_lmr_create(fx.pz1, &d, LR);
	CU_ASSERT_PTR_NOT_NULL(a);
	CU_ASSERT_EQUAL(dpdat_lmr_free(a), 0);
	fixture_teardown();
	munmap(shm, len);
	munmap(priv, len);
}

static void
test_lmr_invalid(void)
{
	char buf[64];
	char *hole = map_anon(4 * pg, 0);
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct {
		void *addr;
		size_t len;
		uint32_t priv;
		int err;
	} cases[] = {
		{ buf, 0, LR, EINVAL },			/* zero length */
		{ NULL, 64, LR, EINVAL },		/* no address */
		{ (void *)(UINTPTR_MAX - 10), 100, LR, EINVAL },	/* wraps */
		{ buf, sizeof(buf), 0x04, EINVAL },	/* unknown privilege */
		{ buf, sizeof(buf), 0x40, EINVAL },
		{ buf, (size_t)1 << 62, LR, EINVAL },	/* huge: not mapped */
		{ hole + pg, pg, LR, EINVAL },		/* unmapped page */
		{ hole, 3 * pg, LR, EINVAL },		/* hole inside */
	};
	unsigned int k;

	munmap(hole + pg, pg);
	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	for (k = 0; k < RTE_DIM(cases); k++) {
		d.virt.addr = cases[k].addr;
		d.virt.length = cases[k].len;
		rte_errno = 0;
		CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, &d, cases[k].priv));
		CU_ASSERT_EQUAL(rte_errno, cases[k].err);
	}
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, NULL, LR));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	d.type = (enum dpdat_mem_type)99;
	d.virt.addr = buf;
	d.virt.length = sizeof(buf);
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz1, &d, LR));
	CU_ASSERT_EQUAL(rte_errno, ENOTSUP);
	d.type = DPDAT_MEM_TYPE_VIRTUAL;
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(NULL, &d, LR));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	CU_ASSERT_PTR_NULL(dpdat_lmr_create((struct dpdat_pz *)fx.dom, &d, LR));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	CU_ASSERT_EQUAL(dpdat_lmr_free(NULL), -EBADF);
	CU_ASSERT_EQUAL(dpdat_lmr_query((struct dpdat_lmr *)fx.pz1, NULL),
			-EBADF);
	fixture_teardown();
	munmap(hole, pg);
	munmap(hole + 2 * pg, 2 * pg);
}

/* Registration refuses what the data path could not touch: a remote peer
 * must not be able to crash the process through a registered key. */
static void
test_lmr_page_protection(void)
{
	char *ro = map_anon(2 * pg, 0), *none = map_anon(pg, 0);
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_LMR };
	struct dpdat_lmr *a, *b;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	CU_ASSERT_FATAL(mprotect(ro, 2 * pg, PROT_READ) == 0);
	CU_ASSERT_FATAL(mprotect(none, pg, PROT_NONE) == 0);
	a = lmr_virtual(fx.pz1, ro, 2 * pg, LR | RR);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NULL(lmr_virtual(fx.pz1, ro, 2 * pg, LR | LW));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_PTR_NULL(lmr_virtual(fx.pz1, ro + 10, 20, ALL));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	/* a second LMR over read-only memory cannot add write rights */
	d.lmr = a;
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(fx.pz2, &d, LR | LW));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	b = dpdat_lmr_create(fx.pz2, &d, RR);
	CU_ASSERT_PTR_NOT_NULL(b);
	CU_ASSERT_EQUAL(dpdat_lmr_free(b), 0);
	CU_ASSERT_PTR_NULL(lmr_virtual(fx.pz1, none, pg, LR));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	/* no privilege at all: mapped is enough */
	b = lmr_virtual(fx.pz1, none, pg, 0);
	CU_ASSERT_PTR_NOT_NULL(b);
	CU_ASSERT_EQUAL(dpdat_lmr_free(b), 0);
	/* remote write needs local write, as on InfiniBand */
	CU_ASSERT_PTR_NULL(lmr_virtual(fx.pz1, ro, pg, LR | RW));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	CU_ASSERT_EQUAL(dpdat_lmr_free(a), 0);
	fixture_teardown();
	munmap(ro, 2 * pg);
	munmap(none, pg);
}

/* DPDK reserves address space for its memory with holes in it: a range in
 * that space whose pages are not in use is refused, not trusted. */
static void
test_lmr_dpdk_hole(void)
{
	void *buf = dpdat_mem_alloc(4096, 4096, -1);
	const struct rte_memseg_list *msl;
	struct rte_fbarray *arr;
	struct dpdat_lmr *lmr;
	int idx;

	CU_ASSERT_FATAL(buf != NULL);
	msl = rte_mem_virt2memseg_list(buf);
	CU_ASSERT_FATAL(msl != NULL);
	arr = (struct rte_fbarray *)&msl->memseg_arr;
	idx = rte_fbarray_find_next_free(arr, 0);
	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	if (idx >= 0) {
		char *hole = (char *)msl->base_va + (size_t)idx * msl->page_sz;

		CU_ASSERT_PTR_NULL(lmr_virtual(fx.pz1, hole, 64, LR));
		CU_ASSERT_EQUAL(rte_errno, EINVAL);
		if (idx > 0) {	/* in use, then not */
			lmr = lmr_virtual(fx.pz1, hole - 64, 128, LR);
			CU_ASSERT_PTR_NULL(lmr);
			if (lmr != NULL)
				dpdat_lmr_free(lmr);
		}
	}
	fixture_teardown();
	dpdat_mem_free(buf);
}

static void
test_rmr_bind(void)
{
	char buf[4096], ro[512];
	struct dpdat_lmr *lmr, *lmr_ro, *other;
	struct dpdat_lmr_triplet seg;
	struct dpdat_rmr_info ri;
	struct dpdat_lmr_info li;
	struct dpdat_rmr *rmr;
	uint32_t c1 = 0, c2 = 0, c3 = 7;
	uint64_t base = (uintptr_t)buf;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	lmr = lmr_virtual(fx.pz1, buf, sizeof(buf), LR | LW);
	lmr_ro = lmr_virtual(fx.pz1, ro, sizeof(ro), LR);
	other = lmr_virtual(fx.pz2, buf, sizeof(buf), ALL);
	rmr = dpdat_rmr_create(fx.pz1);
	CU_ASSERT_FATAL(lmr && lmr_ro && other && rmr);
	CU_ASSERT_EQUAL(dpdat_rmr_query(rmr, &ri), 0);
	CU_ASSERT_EQUAL(ri.rmr_context, 0);
	CU_ASSERT_PTR_NULL(ri.lmr);

	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lmr), 0, base + 100, 200 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RR | RW, &c1), 0);
	CU_ASSERT_NOT_EQUAL(c1, 0);
	CU_ASSERT_EQUAL(dpdat_rmr_query(rmr, &ri), 0);
	CU_ASSERT_EQUAL(ri.rmr_context, c1);
	CU_ASSERT_PTR_EQUAL(ri.lmr, lmr);
	CU_ASSERT_EQUAL(ri.address, base + 100);
	CU_ASSERT_EQUAL(ri.length, 200);
	CU_ASSERT_EQUAL(ri.privileges, RR | RW);
	CU_ASSERT_EQUAL(dpdat_lmr_query(lmr, &li), 0);
	CU_ASSERT_EQUAL(li.rmr_count, 1);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c1, base + 100, 200, RW,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_OK);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c1, base + 99, 2, RW,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_BOUNDS);
	/* a window grants only remote access */
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c1, base + 100, 2, LR,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_PRIVILEGE);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), -EBUSY);

	/* re-bind: fresh context, the old one dies */
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &c2), 0);
	CU_ASSERT_NOT_EQUAL(c2, c1);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c1, base + 100, 8, RW,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_STALE_KEY);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c2, base + 100, 8, RR,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_PRIVILEGE);

	/* refusals keep the current binding */
	seg.segment_length = sizeof(buf);		/* past the LMR */
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &c3), -EINVAL);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lmr), 0, base - 1, 2 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &c3), -EINVAL);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lmr), 0, UINT64_MAX, 2 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &c3), -EINVAL);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lmr) ^ 0x100, 0, base, 2 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &c3), -EINVAL);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lmr), 0, base, 2 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, LR | RW, &c3), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, NULL, RW, &c3), -EINVAL);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(other), 0, base, 2 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &c3), -EPERM);
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(lmr_ro), 0,
					  (uintptr_t)ro, 2 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &c3), -EACCES);
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RR | RW, &c3), -EACCES);
	CU_ASSERT_EQUAL(c3, 7);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c2, base + 100, 8, RW,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_OK);
	/* remote read needs local read, remote write needs local write */
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RR, &c3), 0);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c2, base + 100, 8, RW,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_STALE_KEY);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr), 0);	/* moved to lmr_ro */
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr_ro), -EBUSY);

	/* length 0 unbinds */
	seg.segment_length = 0;
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RR, &c1), 0);
	CU_ASSERT_EQUAL(c1, 0);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c3, (uintptr_t)ro, 8, RR,
		fx.pz1_id, NULL), DPDAT_MR_CHECK_STALE_KEY);
	CU_ASSERT_EQUAL(dpdat_rmr_query(rmr, &ri), 0);
	CU_ASSERT_PTR_NULL(ri.lmr);
	CU_ASSERT_EQUAL(ri.rmr_context, 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(lmr_ro), 0);

	/* free unbinds */
	seg = (struct dpdat_lmr_triplet){ lmr_ctx(other), 0, base, 64 };
	CU_ASSERT_EQUAL(dpdat_pz_free(fx.pz1), -EBUSY);	/* the RMR holds it */
	CU_ASSERT_EQUAL(dpdat_rmr_free(rmr), 0);
	rmr = dpdat_rmr_create(fx.pz2);
	CU_ASSERT_FATAL(rmr != NULL);
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, RW, &c1), 0);
	CU_ASSERT_EQUAL(dpdat_rmr_free(rmr), 0);
	CU_ASSERT_EQUAL(dpdat_mr_access_check(fx.dom, c1, base, 8, RW,
		fx.pz2_id, NULL), DPDAT_MR_CHECK_STALE_KEY);
	CU_ASSERT_EQUAL(dpdat_lmr_free(other), 0);

	CU_ASSERT_PTR_NULL(dpdat_rmr_create(NULL));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	CU_ASSERT_EQUAL(dpdat_rmr_bind(NULL, &seg, RW, NULL), -EBADF);
	CU_ASSERT_EQUAL(dpdat_rmr_query(NULL, &ri), -EBADF);
	CU_ASSERT_EQUAL(dpdat_rmr_free((struct dpdat_rmr *)fx.pz1), -EBADF);
	fixture_teardown();
}

static void
test_sync(void)
{
	char a[1024], b[1024];
	struct dpdat_lmr *la, *lb;
	struct dpdat_rmr *rmr;
	struct dpdat_lmr_triplet segs[2];
	uint32_t win;

	CU_ASSERT_FATAL(fixture_setup(0) == 0);
	la = lmr_virtual(fx.pz1, a, sizeof(a), ALL);
	lb = lmr_virtual(fx.pz2, b, sizeof(b), LR);
	CU_ASSERT_FATAL(la && lb);
	/* segments of different LMRs in different PZs, one call */
	segs[0] = (struct dpdat_lmr_triplet){ lmr_ctx(la), 0,
					      (uintptr_t)a + 10, 100 };
	segs[1] = (struct dpdat_lmr_triplet){ lmr_ctx(lb), 0,
					      (uintptr_t)b, sizeof(b) };
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_write(fx.dom, segs, 2), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_read(fx.dom, segs, 2), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_read(fx.dom, NULL, 0), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_read(fx.dom, NULL, 1), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_write(NULL, segs, 1), -EBADF);
	/* one byte past the LMR */
	segs[1].segment_length++;
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_write(fx.dom, segs, 2), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_read(fx.dom, segs, 2), -EINVAL);
	segs[1] = (struct dpdat_lmr_triplet){ lmr_ctx(lb), 0, UINT64_MAX, 2 };
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_write(fx.dom, segs, 2), -EINVAL);
	/* an RMR context is not an LMR */
	rmr = dpdat_rmr_create(fx.pz1);
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &segs[0], RR, &win), 0);
	segs[1] = (struct dpdat_lmr_triplet){ win, 0, (uintptr_t)a + 10, 1 };
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_write(fx.dom, segs, 2), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_rmr_free(rmr), 0);
	/* a freed LMR's context */
	segs[1] = (struct dpdat_lmr_triplet){ lmr_ctx(lb), 0, (uintptr_t)b, 1 };
	CU_ASSERT_EQUAL(dpdat_lmr_free(lb), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_sync_rdma_write(fx.dom, segs, 2), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_lmr_free(la), 0);
	fixture_teardown();
}

CU_TestInfo mr_tests[] = {
	{ "pz create/query/free/busy", test_pz },
	{ "domain and EAL helper", test_domain },
	{ "lmr VIRTUAL over malloc (copy, rounded)", test_lmr_virtual_copy },
	{ "lmr over DPDK memory (zero-copy)", test_lmr_dpdk_memory },
	{ "lmr over mmap pages (extmem)", test_lmr_extmem },
	{ "lmr SO_VIRTUAL", test_lmr_so_virtual },
	{ "lmr over lmr", test_lmr_over_lmr },
	{ "lmr SHARED_VIRTUAL cookies", test_lmr_shared },
	{ "lmr invalid parameters", test_lmr_invalid },
	{ "lmr refuses pages it could not access", test_lmr_page_protection },
	{ "lmr refuses unused DPDK pages", test_lmr_dpdk_hole },
	{ "rmr bind/rebind/unbind", test_rmr_bind },
	{ "sync_rdma_read/write", test_sync },
	CU_TEST_INFO_NULL,
};

static void __attribute__((constructor))
init_page_size(void)
{
	pg = (size_t)sysconf(_SC_PAGESIZE);
}
