/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* The RSMAPI export side in one process: every return value the interface
 * lists for create, destroy, publish, republish, unpublish and rebind,
 * provoked for real on a controller whose memif has no peer. */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "unit_run.h"

#include <rsm/rsmapi.h>
#include "rsm_priv.h"

#define MB (1024 * 1024)

static rsmapi_controller_handle_t ctl;
static size_t pg;

static void *
region(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CU_ASSERT_FATAL(p != MAP_FAILED);
	return p;
}

static rsm_memseg_export_handle_t
seg(void *va, size_t len, uint_t flags)
{
	rsm_memseg_export_handle_t h = NULL;

	CU_ASSERT_EQUAL_FATAL(rsm_memseg_export_create(ctl, &h, va, len,
						       flags), 0);
	return h;
}

/* Run f in a child process (another pid than the creator's). */
static int
in_child(int (*f)(rsm_memseg_export_handle_t), rsm_memseg_export_handle_t h)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(f(h));
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
child_publish(rsm_memseg_export_handle_t h)
{
	rsm_memseg_id_t id = 0x600001;

	return rsm_memseg_export_publish(h, &id, NULL, 0);
}

static int
child_republish(rsm_memseg_export_handle_t h)
{
	return rsm_memseg_export_republish(h, NULL, 0);
}

static int
child_unpublish(rsm_memseg_export_handle_t h)
{
	return rsm_memseg_export_unpublish(h);
}

static int
child_rebind(rsm_memseg_export_handle_t h)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return rsm_memseg_export_rebind(h, p, 0, 4096);
}

static void
test_controller(void)
{
	rsmapi_controller_handle_t c2;
	rsmapi_controller_attr_t a;
	rsm_memseg_export_handle_t h;
	void *p = region(pg, PROT_READ | PROT_WRITE);

	CU_ASSERT_EQUAL(rsm_get_controller("nosuch0", &c2),
			RSMERR_CTLR_NOT_PRESENT);
	CU_ASSERT_EQUAL(rsm_get_controller_attr(ctl, &a), 0);
	CU_ASSERT_EQUAL(a.attr_page_size, pg);
	CU_ASSERT_EQUAL(a.attr_max_export_segment_size, 16 * MB);
	CU_ASSERT_EQUAL(a.attr_max_export_segments, 4);
	CU_ASSERT_EQUAL(a.attr_direct_access_sizes, 15);
	CU_ASSERT_EQUAL(rsm_get_controller_attr((void *)&a, &a),
			RSMERR_BAD_CTLR_HNDL);
	/* released: the handle names a controller no longer present */
	CU_ASSERT_EQUAL(rsm_release_controller(ctl), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, p, pg, 0),
			RSMERR_CTLR_NOT_PRESENT);
	CU_ASSERT_EQUAL(rsm_get_controller("dpdat0", &ctl), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, p, pg, 0), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h), 0);
	munmap(p, pg);
}

static void
test_create_errors(void)
{
	rsm_memseg_export_handle_t h, hs[5];
	uint8_t *p = region(64 * MB, PROT_READ | PROT_WRITE);
	void *ro = region(pg, PROT_READ);
	void *hole = region(pg, PROT_READ | PROT_WRITE);
	int i;

	munmap(hole, pg);
	CU_ASSERT_EQUAL(rsm_memseg_export_create((void *)p, &h, p, pg, 0),
			RSMERR_BAD_CTLR_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(NULL, &h, p, pg, 0),
			RSMERR_BAD_CTLR_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, NULL, p, pg, 0),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, p, 0, 0),
			RSMERR_BAD_LENGTH);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, p, 16 * MB + pg, 0),
			RSMERR_BAD_LENGTH);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, p, pg + 1, 0),
			RSMERR_BAD_LENGTH);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, NULL, pg, 0),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, hole, pg, 0),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, p + 8, pg, 0),
			RSMERR_BAD_MEM_ALIGNMENT);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, ro, pg, 0),
			RSMERR_PERM_DENIED);
	/* DPDAT_RSM_TOTAL_EXPORT is 40 MB */
	hs[0] = seg(p, 16 * MB, 0);
	hs[1] = seg(p + 16 * MB, 16 * MB, 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, p + 32 * MB,
						 16 * MB, 0),
			RSMERR_INSUFFICIENT_MEM);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(hs[0]), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(hs[1]), 0);
	/* DPDAT_RSM_MAX_SEGMENTS is 4 */
	for (i = 0; i < 4; i++)
		hs[i] = seg(p + i * pg, pg, 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_create(ctl, &h, p + 4 * pg, pg, 0),
			RSMERR_INSUFFICIENT_RESOURCES);
	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(rsm_memseg_export_destroy(hs[i]), 0);
	munmap(p, 64 * MB);
	munmap(ro, pg);
}

static void
test_destroy_errors(void)
{
	void *p = region(pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t h = seg(p, pg, 0);
	struct pollfd pfd;

	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(NULL), RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy((void *)p),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_get_pollfd(h, &pfd), 0);
	CU_ASSERT(pfd.fd >= 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h), RSMERR_POLLFD_IN_USE);
	CU_ASSERT_EQUAL(rsm_memseg_release_pollfd(h), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h), RSMERR_BAD_SEG_HNDL);
	munmap(p, pg);
}

static void
test_publish_errors(void)
{
	uint8_t *p = region(2 * pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t a = seg(p, pg, 0), b = seg(p + pg, pg, 0);
	rsmapi_access_entry_t acl[2] = { { 2, 0640 }, { 1, 0600 } };
	rsm_memseg_id_t id;

	id = 0x600000;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(NULL, &id, NULL, 0),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, NULL, NULL, 0),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(in_child(child_publish, a), RSMERR_NOT_CREATOR);
	/* ACLs: digits other than 0, 2, 4, 6; unknown or repeated nodes */
	acl[0].ae_permission = 0777;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_BAD_ACL);
	acl[0].ae_permission = 01600;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_BAD_ACL);
	acl[0].ae_permission = 0640;
	acl[0].ae_node = 99;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_BAD_ACL);
	acl[0].ae_node = 1;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_BAD_ACL);
	acl[0].ae_node = 2;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, NULL, 2),
			RSMERR_BAD_ACL);
	/* reserved ranges, and the generated range asked for explicitly */
	id = 0x1234;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_RESERVED_SEGID);
	id = RSM_DLPI_ID_END;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_RESERVED_SEGID);
	id = RSM_OPS_ID_BASE;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_RESERVED_SEGID);
	id = RSM_USER_APP_ID_BASE + 5;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_BAD_SEGID);
	id = RSM_USER_APP_ID_END;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_BAD_SEGID);
	id = RSM_HPC_ID_BASE;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(a, &id, acl, 2),
			RSMERR_SEG_ALREADY_PUBLISHED);
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(b, &id, NULL, 0),
			RSMERR_SEGID_IN_USE);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(a), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(b, &id, NULL, 0), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(a), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(b), 0);
	munmap(p, 2 * pg);
}

/* Id 0: generated in [RSM_USER_APP_ID_BASE, RSM_USER_APP_ID_END], the end
 * (0xFFFFFFFF) included, then around to the base. */
static void
test_generated_ids(void)
{
	uint8_t *p = region(4 * pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t h[4];
	rsm_memseg_id_t id[4];
	int i;

	CU_ASSERT(RSM_USER_APP_ID_END > RSM_USER_APP_ID_BASE);
	CU_ASSERT_EQUAL(RSM_USER_APP_ID_END, 0xFFFFFFFFu);
	rsm_ctlr0.next_id = RSM_USER_APP_ID_END - 1;
	for (i = 0; i < 4; i++) {
		h[i] = seg(p + i * pg, pg, 0);
		id[i] = 0;
		CU_ASSERT_EQUAL(rsm_memseg_export_publish(h[i], &id[i], NULL,
							  0), 0);
		CU_ASSERT(id[i] >= RSM_USER_APP_ID_BASE);
	}
	CU_ASSERT_EQUAL(id[0], 0xFFFFFFFEu);
	CU_ASSERT_EQUAL(id[1], 0xFFFFFFFFu);
	CU_ASSERT_EQUAL(id[2], RSM_USER_APP_ID_BASE);
	CU_ASSERT_EQUAL(id[3], RSM_USER_APP_ID_BASE + 1);
	/* in use ids are skipped */
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(h[3]), 0);
	rsm_ctlr0.next_id = RSM_USER_APP_ID_END;
	id[3] = 0;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(h[3], &id[3], NULL, 0), 0);
	CU_ASSERT_EQUAL(id[3], RSM_USER_APP_ID_BASE + 1);
	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h[i]), 0);
	munmap(p, 4 * pg);
}

static void
test_republish_unpublish_errors(void)
{
	void *p = region(pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t h = seg(p, pg, 0);
	rsmapi_access_entry_t acl[1] = { { 2, 0400 } }, bad[1] = { { 2, 0500 } };
	rsm_memseg_id_t id = 0x600010;

	CU_ASSERT_EQUAL(rsm_memseg_export_republish(NULL, acl, 1),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_republish(h, acl, 1),
			RSMERR_SEG_NOT_PUBLISHED);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(NULL),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(h),
			RSMERR_SEG_NOT_PUBLISHED);
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(h, &id, NULL, 0), 0);
	CU_ASSERT_EQUAL(in_child(child_republish, h), RSMERR_NOT_CREATOR);
	CU_ASSERT_EQUAL(in_child(child_unpublish, h), RSMERR_NOT_CREATOR);
	CU_ASSERT_EQUAL(rsm_memseg_export_republish(h, bad, 1),
			RSMERR_BAD_ACL);
	CU_ASSERT_EQUAL(rsm_memseg_export_republish(h, NULL, 1),
			RSMERR_BAD_ACL);
	CU_ASSERT_EQUAL(rsm_memseg_export_republish(h, acl, 1), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(h), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(h),
			RSMERR_SEG_NOT_PUBLISHED);
	CU_ASSERT_EQUAL(rsm_memseg_export_republish(h, acl, 1),
			RSMERR_SEG_NOT_PUBLISHED);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(h), RSMERR_BAD_SEG_HNDL);
	munmap(p, pg);
}

static void
test_rebind_errors(void)
{
	uint8_t *p = region(4 * pg, PROT_READ | PROT_WRITE);
	void *ro = region(pg, PROT_READ);
	void *hole = region(pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t fixed = seg(p, pg, 0);
	rsm_memseg_export_handle_t h = seg(p + pg, pg, RSM_ALLOW_REBIND);

	munmap(hole, pg);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(NULL, p, 0, pg),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(fixed, p + 2 * pg, 0, pg),
			RSMERR_REBIND_NOT_ALLOWED);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(h, p + 2 * pg, 0, 2 * pg),
			RSMERR_BAD_LENGTH);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(h, NULL, 0, pg),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(h, p + 2 * pg + 8, 0, pg),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(h, p + 2 * pg, pg, pg),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(h, hole, 0, pg),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(h, ro, 0, pg),
			RSMERR_PERM_DENIED);
	CU_ASSERT_EQUAL(in_child(child_rebind, h), RSMERR_NOT_CREATOR);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(h, p + 2 * pg, 0, pg), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_rebind(h, p + 3 * pg, 0, pg), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(fixed), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h), 0);
	munmap(p, 4 * pg);
	munmap(ro, pg);
}

static void
test_signal_timeout(void)
{
	void *p = region(pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t h = seg(p, pg, 0);

	CU_ASSERT_EQUAL(rsm_intr_signal_wait(h, 50), RSMERR_TIMEOUT);
	CU_ASSERT_EQUAL(rsm_intr_signal_wait(NULL, 50), RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h), 0);
	munmap(p, pg);
}

/* The node id and the peers, as DPDAT_RSM_NODE and DPDAT_RSM_NODES say. */
static void
test_topology(void)
{
	rsm_topology_t *t = NULL;
	rsm_connections_t *c;

	CU_ASSERT_EQUAL(rsm_get_interconnect_topology(NULL),
			RSMERR_BAD_TOPOLOGY_PTR);
	CU_ASSERT_EQUAL_FATAL(rsm_get_interconnect_topology(&t), 0);
	CU_ASSERT_EQUAL(t->topology_hdr.local_nodeid, 1);
	CU_ASSERT_EQUAL_FATAL(t->topology_hdr.local_cntlr_count, 1);
	c = t->connections[0];
	CU_ASSERT_STRING_EQUAL(c->hdr.cntlr_name, "dpdat0");
	CU_ASSERT_EQUAL(c->hdr.local_hwaddr, htonl(0xc6120001));
	CU_ASSERT_EQUAL_FATAL(c->hdr.remote_cntlr_count, 1);
	CU_ASSERT_EQUAL(c->remote_cntlr[0].remote_nodeid, 2);
	CU_ASSERT_EQUAL(c->remote_cntlr[0].remote_hwaddr, htonl(0xc6120002));
	CU_ASSERT_EQUAL(c->remote_cntlr[0].connection_state,
			RSM_CONNECTION_ACTIVE);
	rsm_free_interconnect_topology(t);
}

/* Import-side checks made before anything goes on the wire. */
static void
test_import_args(void)
{
	rsm_memseg_import_handle_t im = (void *)&pg;
	rsmapi_barrier_t bar;
	rsm_barrier_mode_t mode;
	rsm_scat_gath_t sg;
	uint8_t b;
	void *addr;

	CU_ASSERT_EQUAL(rsm_memseg_import_connect(ctl, 2, 0x600000, 0, &im),
			RSMERR_BAD_PERMS);
	CU_ASSERT_EQUAL(rsm_memseg_import_connect(ctl, 2, 0x600000, 0777,
						  &im), RSMERR_BAD_PERMS);
	CU_ASSERT_EQUAL(rsm_memseg_import_connect(ctl, 99, 0x600000,
						  RSM_PERM_READ, &im),
			RSMERR_REMOTE_NODE_UNREACHABLE);
	CU_ASSERT_EQUAL(rsm_memseg_import_connect(ctl, 2, 0x600000,
						  RSM_PERM_READ, NULL),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_import_connect(NULL, 2, 0x600000,
						  RSM_PERM_READ, &im),
			RSMERR_BAD_CTLR_HNDL);
	im = (void *)&pg;	/* not an import */
	CU_ASSERT_EQUAL(rsm_memseg_import_get8(im, 0, &b, 1),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_import_put8(im, 0, &b, 1),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_import_map(im, &addr, RSM_MAP_NONE,
					      RSM_PERM_READ, 0, 4096),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_import_disconnect(im), RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_import_init_barrier(im, RSM_BARRIER_SEGMENT,
						       &bar),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_import_get_mode(im, &mode),
			RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_intr_signal_post(im, 0), RSMERR_BAD_SEG_HNDL);
	CU_ASSERT_EQUAL(rsm_memseg_import_close_barrier(NULL),
			RSMERR_BAD_BARRIER_PTR);
	memset(&sg, 0, sizeof(sg));
	CU_ASSERT_EQUAL(rsm_memseg_import_getv(&sg), RSMERR_BAD_SGIO);
	CU_ASSERT_EQUAL(rsm_memseg_import_putv(NULL), RSMERR_BAD_SGIO);
}

/* Local memory handles: each error, and an LMR per live handle (one more
 * context in the controller's domain while it lives). */
static void
test_localmemory_handle(void)
{
	struct dpdat_mr_domain *dom = dpdat_dev_domain(rsm_ctlr0.dev);
	uint8_t *p = region(4 * pg, PROT_READ | PROT_WRITE);
	uint8_t *gone = region(pg, PROT_READ | PROT_WRITE);
	rsm_localmemory_handle_t h = NULL, h2 = NULL;
	struct rsm_lmh *l;
	uint32_t n0 = dpdat_mr_domain_count(dom);

	munmap(gone, pg);
	CU_ASSERT_EQUAL(rsm_create_localmemory_handle(NULL, &h, (caddr_t)p,
						      pg),
			RSMERR_BAD_CTLR_HNDL);
	CU_ASSERT_EQUAL(rsm_create_localmemory_handle((void *)&pg, &h,
						      (caddr_t)p, pg),
			RSMERR_BAD_CTLR_HNDL);
	CU_ASSERT_EQUAL(rsm_create_localmemory_handle(ctl, NULL, (caddr_t)p,
						      pg), RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_create_localmemory_handle(ctl, &h, NULL, pg),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_create_localmemory_handle(ctl, &h, (caddr_t)p, 0),
			RSMERR_BAD_LENGTH);
	CU_ASSERT_EQUAL(rsm_create_localmemory_handle(ctl, &h, (caddr_t)p,
						      SIZE_MAX),
			RSMERR_BAD_LENGTH);
	/* registration refuses memory that is not there */
	CU_ASSERT_EQUAL(rsm_create_localmemory_handle(ctl, &h, (caddr_t)gone,
						      pg), RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(dpdat_mr_domain_count(dom), n0);
	/* any range, aligned or not */
	CU_ASSERT_EQUAL_FATAL(rsm_create_localmemory_handle(ctl, &h,
							    (caddr_t)p,
							    4 * pg), 0);
	CU_ASSERT_EQUAL_FATAL(rsm_create_localmemory_handle(ctl, &h2,
							    (caddr_t)p + 3,
							    pg + 5), 0);
	CU_ASSERT_EQUAL(dpdat_mr_domain_count(dom), n0 + 2);
	l = (struct rsm_lmh *)h2;
	CU_ASSERT_PTR_NOT_NULL(l->lmr);
	CU_ASSERT_EQUAL(rsm_free_localmemory_handle(NULL, h),
			RSMERR_BAD_CTLR_HNDL);
	CU_ASSERT_EQUAL(rsm_free_localmemory_handle(ctl, NULL),
			RSMERR_BAD_LOCALMEM_HNDL);
	CU_ASSERT_EQUAL(rsm_free_localmemory_handle(ctl, h), 0);
	CU_ASSERT_EQUAL(rsm_free_localmemory_handle(ctl, h),
			RSMERR_BAD_LOCALMEM_HNDL);
	CU_ASSERT_EQUAL(rsm_free_localmemory_handle(ctl, h2), 0);
	CU_ASSERT_EQUAL(dpdat_mr_domain_count(dom), n0);
	munmap(p, 4 * pg);
}

/* ---- permissions: which digit applies to an importer ---- */

#define OWNER	1000
#define GROUP	100

static const struct {
	const char *what;
	rsm_permission_t perm;		/* node 2's ACL entry */
	uint32_t uid, gid, sup;		/* the importer; sup 0: none */
	uint32_t need;			/* 4 read, 2 write, 6 both */
	int want;
} perm_cases[] = {
	{ "owner rw", 0600, OWNER, GROUP, 0, 6, 0 },
	{ "owner r, asks w", 0400, OWNER, GROUP, 0, 2, RSMERR_PERM_DENIED },
	{ "owner w only", 0200, OWNER, GROUP, 0, 2, 0 },
	{ "owner w, asks r", 0200, OWNER, GROUP, 0, 4, RSMERR_PERM_DENIED },
	/* the owner's digit alone, however generous the others */
	{ "owner 0, group/other 6", 0066, OWNER, GROUP, 0, 4,
	  RSMERR_PERM_DENIED },
	{ "group only rw", 0060, 7, GROUP, 0, 6, 0 },
	{ "group only r", 0040, 7, GROUP, 0, 4, 0 },
	{ "group r, asks rw", 0040, 7, GROUP, 0, 6, RSMERR_PERM_DENIED },
	{ "group by supplementary", 0060, 7, 8, GROUP, 6, 0 },
	{ "group 0, other 6", 0606, 7, GROUP, 0, 4, RSMERR_PERM_DENIED },
	{ "other only r", 0004, 7, 8, 9, 4, 0 },
	{ "other r, asks w", 0004, 7, 8, 9, 2, RSMERR_PERM_DENIED },
	{ "other only w", 0002, 7, 8, 0, 2, 0 },
	{ "other 0, owner/group 6", 0660, 7, 8, 9, 4, RSMERR_PERM_DENIED },
	{ "all 0", 0, OWNER, GROUP, 0, 4, RSMERR_PERM_DENIED },
	{ "nothing asked", 0666, OWNER, GROUP, 0, 0, RSMERR_PERM_DENIED },
};

static void
test_perm_digits(void)
{
	rsmapi_access_entry_t acl[2] = { { 3, 0666 }, { 2, 0 } };
	struct rsm_cred who;
	size_t i;

	for (i = 0; i < RTE_DIM(perm_cases); i++) {
		memset(&who, 0, sizeof(who));
		who.uid = perm_cases[i].uid;
		who.gid = perm_cases[i].gid;
		if (perm_cases[i].sup != 0) {
			who.ngroups = 1;
			who.groups[0] = perm_cases[i].sup;
		}
		acl[1].ae_permission = perm_cases[i].perm;
		if (rsm_perm_check(acl, 2, 0, OWNER, GROUP, 2, &who,
				   perm_cases[i].need) != perm_cases[i].want)
			fprintf(stderr, "case \"%s\" fails\n",
				perm_cases[i].what);
		CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0, OWNER, GROUP, 2,
					       &who, perm_cases[i].need),
				perm_cases[i].want);
	}
	/* a node not in the list, whatever its digits would give */
	who.uid = OWNER;
	CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0666, OWNER, GROUP, 4, &who, 4),
			RSMERR_SEG_NOT_PUBLISHED_TO_NODE);
	CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0666, OWNER, GROUP, 0, &who, 4),
			RSMERR_SEG_NOT_PUBLISHED_TO_NODE);
	/* a supplementary group beyond the ones a REQ carries is not seen */
	who.uid = 7;
	who.gid = 8;
	who.ngroups = RSM_REQ_GROUPS + 1;
	for (i = 0; i < RSM_REQ_GROUPS; i++)
		who.groups[i] = 200 + i;
	acl[1].ae_permission = 0060;
	CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0, OWNER, GROUP, 2, &who, 4),
			RSMERR_PERM_DENIED);
	who.groups[RSM_REQ_GROUPS - 1] = GROUP;
	CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0, OWNER, GROUP, 2, &who, 4),
			0);
	/* ... so such an importer, not in the listed groups, gets what the
	 * group and the other digit both allow: with group r, other rw, a
	 * read and not a write (an importer that listed all its groups and
	 * is not in the owner's gets other's rw) */
	who.groups[RSM_REQ_GROUPS - 1] = 299;
	acl[1].ae_permission = 0046;
	CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0, OWNER, GROUP, 2, &who, 4),
			0);
	CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0, OWNER, GROUP, 2, &who, 2),
			RSMERR_PERM_DENIED);
	who.ngroups = RSM_REQ_GROUPS;
	CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0, OWNER, GROUP, 2, &who, 6),
			0);
	/* the owner is the owner, listed groups or not */
	who.ngroups = 1000;
	who.uid = OWNER;
	acl[1].ae_permission = 0600;
	CU_ASSERT_EQUAL(rsm_perm_check(acl, 2, 0, OWNER, GROUP, 2, &who, 6),
			0);
}

/* NULL ACL: any node, with 0666 & ~umask of the exporter at creation; the
 * owner is the creator's effective uid and gid. */
static void
test_null_acl_umask(void)
{
	uint8_t *p = region(2 * pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t h[2];
	struct rsm_export *e[2];
	struct rsm_cred owner = { .uid = geteuid(), .gid = getegid() };
	struct rsm_cred group = { .uid = geteuid() + 1, .gid = getegid() };
	struct rsm_cred other = { .uid = geteuid() + 1, .gid = getegid() + 1 };
	rsm_memseg_id_t id[2] = { 0x600020, 0x600021 };
	mode_t old = umask(027);
	int i;

	h[0] = seg(p, pg, 0);
	umask(002);
	h[1] = seg(p + pg, pg, 0);
	umask(old);
	for (i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(rsm_memseg_export_publish(h[i], &id[i], NULL,
							  0), 0);
		e[i] = (struct rsm_export *)h[i];
	}
	CU_ASSERT_EQUAL(e[0]->uid, geteuid());
	CU_ASSERT_EQUAL(e[0]->gid, getegid());
	CU_ASSERT_EQUAL(e[0]->cmask, 0640);
	CU_ASSERT_EQUAL(e[1]->cmask, 0664);
#define CHECK(i, who, need, want) CU_ASSERT_EQUAL(rsm_perm_check(e[i]->acl, \
	e[i]->nacl, e[i]->cmask, e[i]->uid, e[i]->gid, 2, &who, need), want)
	/* 0640: owner rw, group r, other nothing */
	CHECK(0, owner, 6, 0);
	CHECK(0, group, 4, 0);
	CHECK(0, group, 2, RSMERR_PERM_DENIED);
	CHECK(0, other, 4, RSMERR_PERM_DENIED);
	/* 0664: group rw, other r; any node of DPDAT_RSM_NODES */
	CHECK(1, group, 6, 0);
	CHECK(1, other, 4, 0);
	CHECK(1, other, 2, RSMERR_PERM_DENIED);
	CU_ASSERT_EQUAL(rsm_perm_check(e[1]->acl, e[1]->nacl, e[1]->cmask,
				       e[1]->uid, e[1]->gid, 1, &other, 4), 0);
	/* "any node" is a configured one: a host not in DPDAT_RSM_NODES
	 * (node 0) is refused, even as the owner */
	CU_ASSERT_EQUAL(rsm_perm_check(e[1]->acl, e[1]->nacl, e[1]->cmask,
				       e[1]->uid, e[1]->gid, 0, &owner, 4),
			RSMERR_SEG_NOT_PUBLISHED_TO_NODE);
#undef CHECK
	for (i = 0; i < 2; i++)
		CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h[i]), 0);
	munmap(p, 2 * pg);
}

/* ---- rsm_get_segmentid_range ---- */

static char segid_path[64];

/* Write text as the segment id file the library reads. */
static void
segid_file(const char *text)
{
	FILE *f = fopen(segid_path, "w");

	CU_ASSERT_FATAL(f != NULL);
	fputs(text, f);
	fclose(f);
}

static int
segid_get(const char *text, const char *appid, rsm_memseg_id_t *base,
	  uint32_t *len)
{
	segid_file(text);
	*base = 1;
	*len = 1;
	return rsm_get_segmentid_range(appid, base, len);
}

static const char segid_good[] =
	"# appid     baseid       length\n"
	"\n"
	"   # an indented comment\n"
	"SUNW.demo   0x80000000   0x1000\n"
	"\tcom.example.db\t0x80100000 4096   # trailing comment\n"
	"last        0xFFFFFF00   256";		/* no newline, to the end */

static const struct {
	const char *what;
	const char *text;
} segid_bad_files[] = {
	{ "two fields", "a 0x80000000\n" },
	{ "four fields", "a 0x80000000 16 x\n" },
	{ "base not a number", "a 0x8000000g 16\n" },
	{ "length not a number", "a 0x80000000 sixteen\n" },
	{ "negative length", "a 0x80000000 -16\n" },
	{ "base above 32 bits", "a 0x180000000 16\n" },
	{ "empty range", "a 0x80000000 0\n" },
	{ "below the user range", "a 0x7FFFFFFF 16\n" },
	{ "HPC range", "a 0x400000 16\n" },
	{ "past 0xFFFFFFFF", "a 0xFFFFFF00 257\n" },
	{ "wrapping", "a 0xFFFFFFFF 0xFFFFFFFF\n" },
	{ "repeated appid", "a 0x80000000 16\nb 0x80000100 16\n"
			    "a 0x80000200 16\n" },
	{ "overlap", "a 0x80000000 16\nb 0x8000000F 16\n" },
	{ "bad line after the one asked", "good 0x80000000 16\n junk\n" },
};

static void
test_segmentid_range(void)
{
	rsm_memseg_id_t base;
	uint32_t len;
	char *longline;
	size_t i;

	/* every line of a good file, and its ends */
	CU_ASSERT_EQUAL(segid_get(segid_good, "SUNW.demo", &base, &len), 0);
	CU_ASSERT_EQUAL(base, 0x80000000u);
	CU_ASSERT_EQUAL(len, 0x1000u);
	CU_ASSERT_EQUAL(segid_get(segid_good, "com.example.db", &base, &len),
			0);
	CU_ASSERT_EQUAL(base, 0x80100000u);
	CU_ASSERT_EQUAL(len, 4096u);
	CU_ASSERT_EQUAL(segid_get(segid_good, "last", &base, &len), 0);
	CU_ASSERT_EQUAL(base, 0xFFFFFF00u);
	CU_ASSERT_EQUAL(len, 256u);
	CU_ASSERT_EQUAL(segid_get("all 0x80000000 0x80000000\n", "all", &base,
				  &len), 0);
	CU_ASSERT_EQUAL(base, RSM_USER_APP_ID_BASE);
	CU_ASSERT_EQUAL(len, 0x80000000u);
	/* RSMERR_BAD_APPID: not there, case differs, a prefix, a comment */
	CU_ASSERT_EQUAL(segid_get(segid_good, "nosuch", &base, &len),
			RSMERR_BAD_APPID);
	CU_ASSERT_EQUAL(base, 1);	/* untouched on error */
	CU_ASSERT_EQUAL(len, 1);
	CU_ASSERT_EQUAL(segid_get(segid_good, "sunw.demo", &base, &len),
			RSMERR_BAD_APPID);
	CU_ASSERT_EQUAL(segid_get(segid_good, "SUNW", &base, &len),
			RSMERR_BAD_APPID);
	CU_ASSERT_EQUAL(segid_get(segid_good, "appid", &base, &len),
			RSMERR_BAD_APPID);
	CU_ASSERT_EQUAL(segid_get(segid_good, "", &base, &len),
			RSMERR_BAD_APPID);
	CU_ASSERT_EQUAL(segid_get("# only comments\n\n", "a", &base, &len),
			RSMERR_BAD_APPID);
	/* RSMERR_BAD_ADDR */
	CU_ASSERT_EQUAL(rsm_get_segmentid_range(NULL, &base, &len),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_get_segmentid_range("last", NULL, &len),
			RSMERR_BAD_ADDR);
	CU_ASSERT_EQUAL(rsm_get_segmentid_range("last", &base, NULL),
			RSMERR_BAD_ADDR);
	/* RSMERR_BAD_CONF: malformed, whichever appid is asked for */
	for (i = 0; i < RTE_DIM(segid_bad_files); i++) {
		int r = segid_get(segid_bad_files[i].text, "good", &base,
				  &len);

		if (r != RSMERR_BAD_CONF)
			fprintf(stderr, "\"%s\": %d\n", segid_bad_files[i].what,
				r);
		CU_ASSERT_EQUAL(r, RSMERR_BAD_CONF);
	}
	/* lines of up to 1023 characters */
	longline = malloc(1100);
	CU_ASSERT_FATAL(longline != NULL);
	memset(longline, ' ', 1100);
	memcpy(longline, "good 0x80000000 16", 18);
	strcpy(longline + 1023, "\n");
	CU_ASSERT_EQUAL(segid_get(longline, "good", &base, &len), 0);
	CU_ASSERT_EQUAL(len, 16);
	longline[1023] = ' ';
	strcpy(longline + 1024, "\n");
	CU_ASSERT_EQUAL(segid_get(longline, "good", &base, &len),
			RSMERR_BAD_CONF);
	free(longline);
	/* RSMERR_BAD_CONF: missing, unreadable (a directory) */
	unlink(segid_path);
	CU_ASSERT_EQUAL(rsm_get_segmentid_range("last", &base, &len),
			RSMERR_BAD_CONF);
	setenv("DPDAT_RSM_SEGMENTID_FILE", "/", 1);
	CU_ASSERT_EQUAL(rsm_get_segmentid_range("last", &base, &len),
			RSMERR_BAD_CONF);
	setenv("DPDAT_RSM_SEGMENTID_FILE", segid_path, 1);
}

/* ---- publish and the segment id file ---- */

static int
publish_id(rsm_memseg_export_handle_t h, rsm_memseg_id_t *id,
	   rsm_memseg_id_t want)
{
	*id = want;
	return rsm_memseg_export_publish(h, id, NULL, 0);
}

/* Explicit ids of the user-application range: accepted inside a range the
 * file reserves, RSMERR_BAD_SEGID elsewhere; no file or a malformed one
 * authorizes none. */
static void
test_publish_reserved(void)
{
	uint8_t *p = region(2 * pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t a = seg(p, pg, 0), b = seg(p + pg, pg, 0);
	rsm_memseg_id_t id;

	segid_file("app.a 0x90000000 16\n"
		   "app.b 0x90000100 0x100   # a comment\n");
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x90000000u), 0);
	CU_ASSERT_EQUAL(id, 0x90000000u);
	CU_ASSERT_EQUAL(publish_id(b, &id, 0x90000000u), RSMERR_SEGID_IN_USE);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(a), 0);
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x9000000Fu), 0);	/* a's last */
	CU_ASSERT_EQUAL(publish_id(b, &id, 0x900001FFu), 0);	/* b's last */
	CU_ASSERT_EQUAL(id, 0x900001FFu);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(a), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(b), 0);
	/* around the ranges and elsewhere in the user range */
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x8FFFFFFFu), RSMERR_BAD_SEGID);
	CU_ASSERT_EQUAL(id, 0x8FFFFFFFu);	/* untouched on error */
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x90000010u), RSMERR_BAD_SEGID);
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x900000FFu), RSMERR_BAD_SEGID);
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x90000200u), RSMERR_BAD_SEGID);
	CU_ASSERT_EQUAL(publish_id(a, &id, RSM_USER_APP_ID_BASE),
			RSMERR_BAD_SEGID);
	CU_ASSERT_EQUAL(publish_id(a, &id, RSM_USER_APP_ID_END),
			RSMERR_BAD_SEGID);
	/* the file leaves the other ranges as they were */
	CU_ASSERT_EQUAL(publish_id(a, &id, RSM_DLPI_ID_END),
			RSMERR_RESERVED_SEGID);
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x600000), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(a), 0);
	/* read on every publish: a range added counts at once */
	segid_file("app.a 0x90000000 16\napp.c 0x90000010 1\n");
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x90000010u), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(a), 0);
	/* malformed (a bad line after a good one): nothing is authorized */
	segid_file("app.a 0x90000000 16\n junk\n");
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x90000000u), RSMERR_BAD_SEGID);
	segid_file("app.a 0x90000000 16\napp.b 0x90000008 16\n");
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x90000000u), RSMERR_BAD_SEGID);
	/* no file: nothing is authorized */
	unlink(segid_path);
	CU_ASSERT_EQUAL(publish_id(a, &id, 0x90000000u), RSMERR_BAD_SEGID);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(a), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(b), 0);
	munmap(p, 2 * pg);
}

/* Publish h with id 0 after setting where the generator starts. */
static rsm_memseg_id_t
generate_from(rsm_memseg_export_handle_t h, rsm_memseg_id_t next)
{
	rsm_memseg_id_t id = 0;

	rsm_ctlr0.next_id = next;
	CU_ASSERT_EQUAL(rsm_memseg_export_publish(h, &id, NULL, 0), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(h), 0);
	return id;
}

/* Id 0 never hands out an id of a reserved range: the generator jumps
 * over each, at the base and the end of the user range too. */
static void
test_generated_skip_reserved(void)
{
	uint8_t *p = region(2 * pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t a = seg(p, pg, 0), b = seg(p + pg, pg, 0);
	rsm_memseg_id_t id;

	segid_file("bottom 0x80000000 4\n"
		   "app.a  0x90000000 16\n"
		   "app.b  0x90000100 0x100\n"
		   "top    0xFFFFFFF0 16\n");
	/* just before, at the start and inside a range: past its end */
	CU_ASSERT_EQUAL(generate_from(a, 0x8FFFFFFFu), 0x8FFFFFFFu);
	CU_ASSERT_EQUAL(generate_from(a, 0x90000000u), 0x90000010u);
	CU_ASSERT_EQUAL(generate_from(a, 0x9000000Eu), 0x90000010u);
	CU_ASSERT_EQUAL(generate_from(a, 0x90000100u), 0x90000200u);
	/* the generator goes on from there: a whole range skipped in turn */
	rsm_ctlr0.next_id = 0x900000FEu;
	CU_ASSERT_EQUAL(publish_id(a, &id, 0), 0);
	CU_ASSERT_EQUAL(id, 0x900000FEu);
	CU_ASSERT_EQUAL(publish_id(b, &id, 0), 0);
	CU_ASSERT_EQUAL(id, 0x900000FFu);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(b), 0);
	CU_ASSERT_EQUAL(publish_id(b, &id, 0), 0);
	CU_ASSERT_EQUAL(id, 0x90000200u);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(a), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(b), 0);
	/* the end of the user range reserved, then its base: wraps past both */
	CU_ASSERT_EQUAL(generate_from(a, 0xFFFFFFEFu), 0xFFFFFFEFu);
	CU_ASSERT_EQUAL(generate_from(a, 0xFFFFFFF0u), 0x80000004u);
	/* an id in use next to a range: both skipped */
	CU_ASSERT_EQUAL(publish_id(b, &id, 0x90000000u), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(b), 0);
	rsm_ctlr0.next_id = 0x9000000Fu;
	CU_ASSERT_EQUAL(publish_id(b, &id, 0), 0);
	CU_ASSERT_EQUAL(id, 0x90000010u);
	CU_ASSERT_EQUAL(generate_from(a, 0x90000000u), 0x90000011u);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(b), 0);
	/* every id reserved: nothing to generate, explicit ids accepted */
	segid_file("all 0x80000000 0x80000000\n");
	rsm_ctlr0.next_id = 0xC0000000u;
	CU_ASSERT_EQUAL(publish_id(a, &id, 0), RSMERR_INSUFFICIENT_RESOURCES);
	CU_ASSERT_EQUAL(id, 0);
	CU_ASSERT_EQUAL(publish_id(a, &id, 0xC0000000u), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_unpublish(a), 0);
	/* malformed: generated as if there were no file */
	segid_file("app.a 0x90000000 16\nno numbers here\n");
	CU_ASSERT_EQUAL(generate_from(a, 0x90000000u), 0x90000000u);
	/* no file: as before */
	unlink(segid_path);
	CU_ASSERT_EQUAL(generate_from(a, 0x90000000u), 0x90000000u);
	rsm_ctlr0.next_id = RSM_USER_APP_ID_BASE;
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(a), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(b), 0);
	munmap(p, 2 * pg);
}

/* Tickets (the rights an import keeps across reconnections) are random,
 * distinct, and found only from the importer's own address. */
static void
test_tickets(void)
{
	uint8_t *p = region(pg, PROT_READ | PROT_WRITE);
	rsm_memseg_export_handle_t h = seg(p, pg, 0);
	struct rsm_export *e = (struct rsm_export *)h;
	struct rsm_ticket *t[64];
	const uint32_t ip = 0x0200a8c0, other_ip = 0x0300a8c0;
	int i, j;

	CU_ASSERT_FATAL(h != NULL);
	pthread_mutex_lock(&e->ctlr->lock);
	for (i = 0; i < 64; i++) {
		t[i] = rsm_ticket_add(e, ip, 4);
		CU_ASSERT_FATAL(t[i] != NULL);
		CU_ASSERT_NOT_EQUAL(t[i]->id, 0);
		for (j = 0; j < i; j++)
			CU_ASSERT_NOT_EQUAL(t[i]->id, t[j]->id);
	}
	/* not a counter: consecutive tickets are not one apart */
	CU_ASSERT(t[1]->id != t[0]->id + 1 || t[2]->id != t[1]->id + 1);
	CU_ASSERT_PTR_EQUAL(rsm_ticket_find(e, t[5]->id, ip, false), t[5]);
	CU_ASSERT_PTR_NULL(rsm_ticket_find(e, t[5]->id, other_ip, false));
	CU_ASSERT_PTR_NULL(rsm_ticket_find(e, t[5]->id + 1, ip, false));
	CU_ASSERT_PTR_EQUAL(rsm_ticket_find(e, t[5]->id, other_ip, true),
			    t[5]);
	pthread_mutex_unlock(&e->ctlr->lock);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(h), 0);	/* frees them */
	munmap(p, pg);
}

/* ---- misuse, table-driven: every call that takes a handle, given a live
 * handle of each other kind, a freed one of its kind and NULL ---- */

enum mk { MK_CTLR, MK_EXPORT, MK_LMH, MK_IMPORT, MK_N };
static const char *const mk_name[MK_N] = { "controller", "export segment",
	"local memory handle", "import segment" };
static void *mk_live[MK_N];	/* no live import: no peer here */
static void *mk_freed[MK_N];
static void *mk_page;

static int m_ctlr_attr(void *h)
{
	rsmapi_controller_attr_t a;

	return rsm_get_controller_attr(h, &a);
}
static int m_export_create(void *h)
{
	rsm_memseg_export_handle_t e;

	return rsm_memseg_export_create(h, &e, mk_page, pg, 0);
}
static int m_import_connect(void *h)
{
	rsm_memseg_import_handle_t im;

	return rsm_memseg_import_connect(h, 1, 0x80000001, RSM_PERM_RDWR,
					 &im);
}
static int m_lmh_create(void *h)
{
	rsm_localmemory_handle_t l;

	return rsm_create_localmemory_handle(h, &l, mk_page, pg);
}
static int m_lmh_free_ctlr(void *h)
{
	return rsm_free_localmemory_handle(h, mk_live[MK_LMH]);
}
static int m_lmh_free(void *h)
{
	return rsm_free_localmemory_handle(ctl, h);
}
static int m_publish(void *h)
{
	rsm_memseg_id_t id = 0x600042;

	return rsm_memseg_export_publish(h, &id, NULL, 0);
}
static int m_republish(void *h)
{
	return rsm_memseg_export_republish(h, NULL, 0);
}
static int m_unpublish(void *h)
{
	return rsm_memseg_export_unpublish(h);
}
static int m_rebind(void *h)
{
	return rsm_memseg_export_rebind(h, mk_page, 0, pg);
}
static int m_export_destroy(void *h)
{
	return rsm_memseg_export_destroy(h);
}
static int m_disconnect(void *h)
{
	return rsm_memseg_import_disconnect(h);
}
static int m_get(void *h)
{
	uint64_t v[2];

	return rsm_memseg_import_get(h, 0, v, sizeof(v));
}
static int m_put(void *h)
{
	uint64_t v[2] = { 0 };

	return rsm_memseg_import_put(h, 0, v, sizeof(v));
}
static int m_get8(void *h)
{
	uint8_t v;

	return rsm_memseg_import_get8(h, 0, &v, 1);
}
static int m_put16(void *h)
{
	uint16_t v = 0;

	return rsm_memseg_import_put16(h, 0, &v, 1);
}
static int m_get32(void *h)
{
	uint32_t v;

	return rsm_memseg_import_get32(h, 0, &v, 1);
}
static int m_put64(void *h)
{
	uint64_t v = 0;

	return rsm_memseg_import_put64(h, 0, &v, 1);
}
static int m_map(void *h)
{
	void *a;

	return rsm_memseg_import_map(h, &a, RSM_MAP_NONE, RSM_PERM_RDWR, 0,
				     pg);
}
static int m_unmap(void *h)
{
	return rsm_memseg_import_unmap(h);
}
static int m_get_mode(void *h)
{
	rsm_barrier_mode_t m;

	return rsm_memseg_import_get_mode(h, &m);
}
static int m_set_mode(void *h)
{
	return rsm_memseg_import_set_mode(h, RSM_BARRIER_MODE_IMPLICIT);
}
static int m_init_barrier(void *h)
{
	rsmapi_barrier_t b;

	return rsm_memseg_import_init_barrier(h, RSM_BARRIER_SEGMENT, &b);
}
static int m_getv(void *h)
{
	uint64_t v = 0;
	rsm_iovec_t io = { .io_type = RSM_VA_TYPE, .local.vaddr = (caddr_t)&v,
			   .transfer_length = 8 };
	rsm_scat_gath_t sg = { .remote_handle = h, .io_request_count = 1,
			       .iovec = &io };

	return rsm_memseg_import_getv(&sg);
}
static int m_signal_post(void *h)
{
	return rsm_intr_signal_post(h, 0);
}

/* What a bad handle of each call's kind must give. */
static const struct mcall {
	const char *name;
	enum mk kind;
	int (*fn)(void *h);
	int want;
} mcalls[] = {
	{ "get_controller_attr", MK_CTLR, m_ctlr_attr, RSMERR_BAD_CTLR_HNDL },
	{ "memseg_export_create", MK_CTLR, m_export_create,
	  RSMERR_BAD_CTLR_HNDL },
	{ "memseg_import_connect", MK_CTLR, m_import_connect,
	  RSMERR_BAD_CTLR_HNDL },
	{ "create_localmemory_handle", MK_CTLR, m_lmh_create,
	  RSMERR_BAD_CTLR_HNDL },
	{ "free_localmemory_handle (controller)", MK_CTLR, m_lmh_free_ctlr,
	  RSMERR_BAD_CTLR_HNDL },
	{ "free_localmemory_handle", MK_LMH, m_lmh_free,
	  RSMERR_BAD_LOCALMEM_HNDL },
	{ "memseg_export_publish", MK_EXPORT, m_publish, RSMERR_BAD_SEG_HNDL },
	{ "memseg_export_republish", MK_EXPORT, m_republish,
	  RSMERR_BAD_SEG_HNDL },
	{ "memseg_export_unpublish", MK_EXPORT, m_unpublish,
	  RSMERR_BAD_SEG_HNDL },
	{ "memseg_export_rebind", MK_EXPORT, m_rebind, RSMERR_BAD_SEG_HNDL },
	{ "memseg_export_destroy", MK_EXPORT, m_export_destroy,
	  RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_disconnect", MK_IMPORT, m_disconnect,
	  RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_get", MK_IMPORT, m_get, RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_put", MK_IMPORT, m_put, RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_get8", MK_IMPORT, m_get8, RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_put16", MK_IMPORT, m_put16, RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_get32", MK_IMPORT, m_get32, RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_put64", MK_IMPORT, m_put64, RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_map", MK_IMPORT, m_map, RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_unmap", MK_IMPORT, m_unmap, RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_get_mode", MK_IMPORT, m_get_mode,
	  RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_set_mode", MK_IMPORT, m_set_mode,
	  RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_init_barrier", MK_IMPORT, m_init_barrier,
	  RSMERR_BAD_SEG_HNDL },
	{ "memseg_import_getv", MK_IMPORT, m_getv, RSMERR_BAD_SEG_HNDL },
	{ "intr_signal_post", MK_IMPORT, m_signal_post, RSMERR_BAD_SEG_HNDL },
};

static void
m_expect(const struct mcall *c, const char *what, void *h, int *tried)
{
	int r = c->fn(h);

	(*tried)++;
	if (r == c->want)
		return;
	printf("\n  rsm_%s with %s: %d, want %d", c->name, what, r, c->want);
	CU_FAIL("a bad handle was not refused as it should be");
}

static void
test_misuse_table(void)
{
	rsm_memseg_export_handle_t e;
	rsm_localmemory_handle_t l;
	rsmapi_controller_attr_t a;
	char what[64];
	int tried = 0;

	mk_page = region(pg, PROT_READ | PROT_WRITE);
	mk_live[MK_CTLR] = ctl;
	mk_live[MK_EXPORT] = seg(mk_page, pg, 0);
	CU_ASSERT_EQUAL_FATAL(rsm_create_localmemory_handle(ctl, &l,
					(caddr_t)mk_page, pg), 0);
	mk_live[MK_LMH] = l;
	/* freed ones: made and freed after the live ones (no kind is made
	 * again after, so no freed pointer comes back to life) */
	e = seg(mk_page, pg, 0);
	CU_ASSERT_EQUAL_FATAL(rsm_memseg_export_destroy(e), 0);
	mk_freed[MK_EXPORT] = e;
	CU_ASSERT_EQUAL_FATAL(rsm_create_localmemory_handle(ctl, &l,
					(caddr_t)mk_page, pg), 0);
	CU_ASSERT_EQUAL_FATAL(rsm_free_localmemory_handle(ctl, l), 0);
	mk_freed[MK_LMH] = l;
	for (size_t i = 0; i < RTE_DIM(mcalls); i++) {
		const struct mcall *c = &mcalls[i];

		for (int k = 0; k < MK_N; k++) {
			if (k == (int)c->kind || mk_live[k] == NULL)
				continue;
			snprintf(what, sizeof(what), "a live %s", mk_name[k]);
			m_expect(c, what, mk_live[k], &tried);
		}
		if (mk_freed[c->kind] != NULL)
			m_expect(c, "a freed handle", mk_freed[c->kind],
				 &tried);
		m_expect(c, "NULL", NULL, &tried);
	}
	printf("\n  %d calls with a bad handle, each refused", tried);
	/* the live ones still work */
	CU_ASSERT_EQUAL(rsm_get_controller_attr(ctl, &a), 0);
	CU_ASSERT_EQUAL(rsm_memseg_export_destroy(mk_live[MK_EXPORT]), 0);
	CU_ASSERT_EQUAL(rsm_free_localmemory_handle(ctl, mk_live[MK_LMH]), 0);
	munmap(mk_page, pg);
}

/* The importer's reading of the exporter's answer (rsm_import_reply): a
 * REP of RSM's is taken; a REJ's code is returned when it is one of the
 * interface's, and a REJ that says "0" or a code of no meaning is no grant
 * (found by fuzz_rsm: the importer took a REJ of status 0 for a connect
 * that succeeded, and returned 258 to the application). */
static const struct {
	const char *what;
	enum dpdat_cm_event_type type;
	uint16_t reason, len;
	uint32_t magic, status;
	int want;
} replies[] = {
	{ "REP", DPDAT_CM_ESTABLISHED, 0, 40, RSM_WIRE_MAGIC, 0, 0 },
	{ "REP, not RSM's", DPDAT_CM_ESTABLISHED, 0, 40, 0x1234, 0,
	  RSMERR_REMOTE_NODE_UNREACHABLE },
	{ "REJ with a code", DPDAT_CM_REJECTED, 28, 40, RSM_WIRE_MAGIC,
	  RSMERR_PERM_DENIED, RSMERR_PERM_DENIED },
	{ "REJ, status 0", DPDAT_CM_REJECTED, 28, 40, RSM_WIRE_MAGIC, 0,
	  RSMERR_REMOTE_NODE_UNREACHABLE },
	{ "REJ, code 258", DPDAT_CM_REJECTED, 28, 40, RSM_WIRE_MAGIC, 258,
	  RSMERR_REMOTE_NODE_UNREACHABLE },
	{ "REJ, code -1", DPDAT_CM_REJECTED, 28, 40, RSM_WIRE_MAGIC,
	  0xffffffffu, RSMERR_REMOTE_NODE_UNREACHABLE },
	{ "REJ, no service", DPDAT_CM_REJECTED, DPDAT_CM_REJ_INVALID_SERVICE, 0,
	  0, 0, RSMERR_SEG_NOT_PUBLISHED },
	{ "REJ, short", DPDAT_CM_REJECTED, 28, 8, RSM_WIRE_MAGIC,
	  RSMERR_PERM_DENIED, RSMERR_REMOTE_NODE_UNREACHABLE },
	{ "no answer", DPDAT_CM_UNREACHABLE, 0, 0, 0, 0,
	  RSMERR_REMOTE_NODE_UNREACHABLE },
};

static void
test_import_reply(void)
{
	for (unsigned int i = 0; i < RTE_DIM(replies); i++) {
		struct rsm_rep rep = { .magic = replies[i].magic,
				       .status = replies[i].status,
				       .addr = 0x1000, .len = 0x2000,
				       .rkey = 77, .gen = 3, .ticket = 99 };
		struct dpdat_cm_event ev = { .type = replies[i].type,
					     .reason = replies[i].reason,
					     .private_data_len = replies[i].len };
		struct rsm_import m = { .broken = 1 };
		int r;

		memcpy(ev.private_data, &rep, sizeof(rep));
		r = rsm_import_reply(&m, &ev);
		if (r != replies[i].want)
			printf("\n  %s: %d, want %d", replies[i].what, r,
			       replies[i].want);
		CU_ASSERT_EQUAL(r, replies[i].want);
		if (r == 0) {
			CU_ASSERT(m.rkey == 77 && m.rlen == 0x2000 &&
				  m.ticket == 99 && !m.broken);
		} else {
			CU_ASSERT(m.rkey == 0 && m.broken);
		}
	}
}

static CU_TestInfo tests[] = {
	{ "import reply", test_import_reply },
	{ "import arguments", test_import_args },
	{ "local memory handles", test_localmemory_handle },
	{ "misuse: wrong-type, freed and NULL handles", test_misuse_table },
	{ "topology", test_topology },
	{ "controller", test_controller },
	{ "create errors", test_create_errors },
	{ "destroy errors", test_destroy_errors },
	{ "publish errors", test_publish_errors },
	{ "generated ids", test_generated_ids },
	{ "republish/unpublish errors", test_republish_unpublish_errors },
	{ "rebind errors", test_rebind_errors },
	{ "signal wait timeout", test_signal_timeout },
	{ "permission digits", test_perm_digits },
	{ "NULL ACL and umask", test_null_acl_umask },
	{ "tickets", test_tickets },
	{ "segment id ranges", test_segmentid_range },
	{ "publish in reserved ranges", test_publish_reserved },
	{ "generated ids skip reserved ranges", test_generated_skip_reserved },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "rsm export", NULL, NULL, NULL, NULL, tests },
	CU_SUITE_INFO_NULL,
};

int
main(void)
{
	char dev[200];
	int fails;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	snprintf(segid_path, sizeof(segid_path),
		 "/tmp/dpdat-rsm-unit-%d.segmentid", (int)getpid());
	setenv("DPDAT_RSM_SEGMENTID_FILE", segid_path, 1);
	snprintf(dev, sizeof(dev),
		 "net_memif0,role=server,socket=/tmp/dpdat-rsm-unit-%d.sock",
		 (int)getpid());
	setenv("DPDAT_RSM_DEVICE", dev, 1);
	setenv("DPDAT_RSM_NODE", "1", 1);
	setenv("DPDAT_RSM_NODES", "1=198.18.0.1,2=198.18.0.2", 1);
	setenv("DPDAT_RSM_MAX_SEGMENT_SIZE", "16777216", 1);
	setenv("DPDAT_RSM_TOTAL_EXPORT", "41943040", 1);
	setenv("DPDAT_RSM_MAX_SEGMENTS", "4", 1);
	if (rsm_get_controller("dpdat0", &ctl) != 0) {
		fprintf(stderr, "no controller\n");
		return 1;
	}
	fails = unit_run(suites);
	unlink(dev + strlen("net_memif0,role=server,socket="));
	unlink(segid_path);
	_exit(fails != 0);
}
