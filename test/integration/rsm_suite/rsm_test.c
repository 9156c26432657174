/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* RSMAPI between two processes over memif (run2.sh): the server is node 1
 * and exports, the client is node 2 and imports. Usage:
 *   rsm_test server|client <memif socket> acl|readonly|republish|rebind|
 *            destroy|barrier|signals|perms|segid|lmh
 * The two sides keep step with files next to the socket. */

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rsm/rsmapi.h>

#define SEG_LEN		(256 * 1024)
#define SEG_ID		0x600100
#define SEG_ID2		0x600101
#define SEG_ID3		0x600102
#define SEG_ID4		0x600103

static const char *role, *sock;
static int server;
static rsmapi_controller_handle_t ctl;

/* a failure also stops the peer at its next step */
#define FAIL(...) do { fprintf(stderr, "%s: ", role); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failed(); } while (0)
#define EXPECT(call, want) do { int r_ = (call); \
	if (r_ != (want)) FAIL("%s:%d: %s = %d, wanted %d (%s)", __FILE__, \
			       __LINE__, #call, r_, (want), #want); } while (0)

static void
failed(void)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s.failed", sock);
	f = fopen(path, "w");
	if (f != NULL)
		fclose(f);
	_exit(1);
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Both sides reach the step called name. */
static void
step(const char *name)
{
	char me[512], peer[512];
	FILE *f;
	double t0 = now();

	snprintf(me, sizeof(me), "%s.%s.%s", sock, name, role);
	snprintf(peer, sizeof(peer), "%s.%s.%s", sock, name,
		 server ? "client" : "server");
	f = fopen(me, "w");
	if (f == NULL)
		FAIL("cannot write %s", me);
	fclose(f);
	snprintf(me, sizeof(me), "%s.failed", sock);
	while (access(peer, F_OK) != 0) {
		if (access(me, F_OK) == 0) {
			fprintf(stderr, "%s: the peer failed\n", role);
			_exit(1);
		}
		if (now() - t0 > 45)
			FAIL("peer never reached step %s", name);
		usleep(5000);
	}
}

static uint8_t
pattern(size_t i, int gen)
{
	return (uint8_t)(i * 131 + (i >> 8) * 7 + gen * 29 + 1);
}

static uint8_t *
memory(int gen)
{
	uint8_t *p = mmap(NULL, SEG_LEN, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		FAIL("mmap");
	for (size_t i = 0; i < SEG_LEN; i++)
		p[i] = pattern(i, gen);
	return p;
}

static void
check(const uint8_t *p, size_t len, size_t off, int gen, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern(off + i, gen))
			FAIL("%s: byte %zu is %#x, wanted %#x", what, off + i,
			     p[i], pattern(off + i, gen));
}

static rsm_memseg_export_handle_t
export(uint8_t *mem, rsm_memseg_id_t id, rsmapi_access_entry_t *acl,
       uint_t n, uint_t flags)
{
	rsm_memseg_export_handle_t h;

	EXPECT(rsm_memseg_export_create(ctl, &h, mem, SEG_LEN, flags), 0);
	EXPECT(rsm_memseg_export_publish(h, &id, acl, n), 0);
	return h;
}

static rsm_memseg_import_handle_t
import(rsm_memseg_id_t id, rsm_permission_t perm)
{
	rsm_memseg_import_handle_t h = NULL;

	EXPECT(rsm_memseg_import_connect(ctl, 1, id, perm, &h), 0);
	return h;
}

/* ---- acl: read and write from an allowed node, refusals elsewhere ---- */

static void
acl_server(void)
{
	rsmapi_access_entry_t acl[2] = { { 2, 0600 }, { 3, 0400 } };
	rsmapi_access_entry_t other[1] = { { 3, 0600 } };
	uint8_t *m = memory(0), *m2 = memory(0);
	rsm_memseg_export_handle_t h = export(m, SEG_ID, acl, 2, 0);
	rsm_memseg_export_handle_t h2 = export(m2, SEG_ID2, other, 1, 0);

	step("published");
	step("written");
	/* the importer wrote generation 1 over [4096, SEG_LEN) and the
	 * sized forms at the start */
	check(m + 4096, SEG_LEN - 4096, 4096, 1, "exporter after put");
	if (m[0] != 0xab || *(uint16_t *)(m + 2) != 0xbeef ||
	    *(uint32_t *)(m + 4) != 0xdeadbeef ||
	    *(uint64_t *)(m + 8) != 0x0123456789abcdefULL)
		FAIL("sized puts not in the exporter's memory");
	check(m + 16, 4096 - 16, 16, 0, "exporter bytes not written");
	step("done");
	EXPECT(rsm_memseg_export_destroy(h), 0);
	EXPECT(rsm_memseg_export_destroy(h2), 0);
}

static void
acl_client(void)
{
	rsm_memseg_import_handle_t h = NULL;
	uint8_t *buf = malloc(SEG_LEN), *gen1 = memory(1);
	rsm_localmemory_handle_t lh;
	rsm_scat_gath_t sg;
	rsm_iovec_t iov[2];
	uint8_t v8 = 0xab, r8;
	uint16_t v16 = 0xbeef, r16;
	uint32_t v32 = 0xdeadbeef, r32;
	uint64_t v64 = 0x0123456789abcdefULL, r64;
	void *addr;

	step("published");
	EXPECT(rsm_memseg_import_connect(ctl, 1, SEG_ID2, RSM_PERM_READ, &h),
	       RSMERR_SEG_NOT_PUBLISHED_TO_NODE);
	EXPECT(rsm_memseg_import_connect(ctl, 1, 0x600999, RSM_PERM_READ, &h),
	       RSMERR_SEG_NOT_PUBLISHED);
	EXPECT(rsm_memseg_import_connect(ctl, 1, SEG_ID, 0777, &h),
	       RSMERR_BAD_PERMS);
	h = import(SEG_ID, RSM_PERM_RDWR);
	EXPECT(rsm_memseg_import_get(h, 0, buf, SEG_LEN), 0);
	check(buf, SEG_LEN, 0, 0, "get of the whole segment");
	EXPECT(rsm_memseg_import_get(h, 1000, buf, 3), 0);
	check(buf, 3, 1000, 0, "get of 3 bytes at 1000");
	EXPECT(rsm_memseg_import_get(h, SEG_LEN - 1, buf, 2),
	       RSMERR_BAD_LENGTH);
	EXPECT(rsm_memseg_import_get(h, SEG_LEN + 1, buf, 0),
	       RSMERR_BAD_OFFSET);
	EXPECT(rsm_memseg_import_get32(h, 2, &r32, 1),
	       RSMERR_MISALIGNED_OFFSET);
	EXPECT(rsm_memseg_import_map(h, &addr, RSM_MAP_NONE, RSM_PERM_READ,
				     0, SEG_LEN), RSMERR_UNSUPPORTED_OPERATION);
	/* the sized forms, each read back */
	EXPECT(rsm_memseg_import_put8(h, 0, &v8, 1), 0);
	EXPECT(rsm_memseg_import_put16(h, 2, &v16, 1), 0);
	EXPECT(rsm_memseg_import_put32(h, 4, &v32, 1), 0);
	EXPECT(rsm_memseg_import_put64(h, 8, &v64, 1), 0);
	EXPECT(rsm_memseg_import_get8(h, 0, &r8, 1), 0);
	EXPECT(rsm_memseg_import_get16(h, 2, &r16, 1), 0);
	EXPECT(rsm_memseg_import_get32(h, 4, &r32, 1), 0);
	EXPECT(rsm_memseg_import_get64(h, 8, &r64, 1), 0);
	if (r8 != v8 || r16 != v16 || r32 != v32 || r64 != v64)
		FAIL("sized get after put: %#x %#x %#x %#llx", r8, r16, r32,
		     (unsigned long long)r64);
	/* generation 1 over [4096, SEG_LEN): half by put, half by putv */
	EXPECT(rsm_memseg_import_put(h, 4096, gen1 + 4096,
				     SEG_LEN / 2 - 4096), 0);
	EXPECT(rsm_create_localmemory_handle(ctl, &lh, (caddr_t)gen1,
					     SEG_LEN), 0);
	memset(&sg, 0, sizeof(sg));
	iov[0].io_type = RSM_HANDLE_TYPE;
	iov[0].local.handle = lh;
	iov[0].local_offset = SEG_LEN / 2;
	iov[0].remote_offset = SEG_LEN / 2;
	iov[0].transfer_length = SEG_LEN / 4;
	iov[1].io_type = RSM_VA_TYPE;
	iov[1].local.vaddr = (caddr_t)gen1;
	iov[1].local_offset = SEG_LEN * 3 / 4;
	iov[1].remote_offset = SEG_LEN * 3 / 4;
	iov[1].transfer_length = SEG_LEN / 4;
	sg.io_request_count = 2;
	sg.remote_handle = h;
	sg.iovec = iov;
	EXPECT(rsm_memseg_import_putv(&sg), 0);
	if (sg.io_residual_count != 0)
		FAIL("putv residual %lu", sg.io_residual_count);
	/* and back with getv */
	memset(buf, 0, SEG_LEN);
	iov[0].local.handle = NULL;
	iov[0].io_type = RSM_VA_TYPE;
	iov[0].local.vaddr = (caddr_t)buf;
	iov[1].local.vaddr = (caddr_t)buf;
	EXPECT(rsm_memseg_import_getv(&sg), 0);
	check(buf + SEG_LEN / 2, SEG_LEN / 2, SEG_LEN / 2, 1, "getv");
	EXPECT(rsm_free_localmemory_handle(ctl, lh), 0);
	step("written");
	step("done");
	EXPECT(rsm_memseg_import_disconnect(h), 0);
	EXPECT(rsm_memseg_import_get(h, 0, buf, 1), RSMERR_BAD_SEG_HNDL);
}

/* ---- readonly: the rkey itself refuses writes ---- */

static void
readonly_server(void)
{
	rsmapi_access_entry_t acl[1] = { { 2, 0400 } };
	uint8_t *m = memory(0);
	rsm_memseg_export_handle_t h = export(m, SEG_ID, acl, 1, 0);

	step("published");
	step("done");
	check(m, SEG_LEN, 0, 0, "read-only segment after the puts");
	EXPECT(rsm_memseg_export_destroy(h), 0);
}

static void
readonly_client(void)
{
	rsm_memseg_import_handle_t h = NULL;
	uint8_t *buf = malloc(SEG_LEN), *gen1 = memory(1);
	uint64_t v = 42;

	step("published");
	EXPECT(rsm_memseg_import_connect(ctl, 1, SEG_ID, RSM_PERM_RDWR, &h),
	       RSMERR_PERM_DENIED);
	EXPECT(rsm_memseg_import_connect(ctl, 1, SEG_ID, RSM_PERM_WRITE, &h),
	       RSMERR_PERM_DENIED);
	h = import(SEG_ID, RSM_PERM_READ);
	/* issued for real: the exporter's RC engine refuses the WRITE */
	EXPECT(rsm_memseg_import_put(h, 0, gen1, SEG_LEN), RSMERR_PERM_DENIED);
	EXPECT(rsm_memseg_import_put64(h, 64, &v, 1), RSMERR_PERM_DENIED);
	EXPECT(rsm_memseg_import_get(h, 0, buf, SEG_LEN), 0);
	check(buf, SEG_LEN, 0, 0, "read-only import read back");
	step("done");
	EXPECT(rsm_memseg_import_disconnect(h), 0);
}

/* ---- republish narrows new imports; unpublish ends them ---- */

static void
republish_server(void)
{
	rsmapi_access_entry_t acl[1] = { { 2, 0600 } };
	rsmapi_access_entry_t ro[1] = { { 2, 0400 } };
	uint8_t *m = memory(0);
	rsm_memseg_export_handle_t h = export(m, SEG_ID, acl, 1, 0);

	step("published");
	step("imported");
	EXPECT(rsm_memseg_export_republish(h, ro, 1), 0);
	step("republished");
	step("checked");
	if (m[100] != 0x5a)
		FAIL("the existing read-write import's put is missing");
	EXPECT(rsm_memseg_export_unpublish(h), 0);
	step("unpublished");
	step("done");
	EXPECT(rsm_memseg_export_destroy(h), 0);
}

static void
republish_client(void)
{
	rsm_memseg_import_handle_t rw, h = NULL, r;
	uint8_t b = 0x5a, buf[64];

	step("published");
	rw = import(SEG_ID, RSM_PERM_RDWR);
	step("imported");
	step("republished");
	EXPECT(rsm_memseg_import_connect(ctl, 1, SEG_ID, RSM_PERM_RDWR, &h),
	       RSMERR_PERM_DENIED);
	r = import(SEG_ID, RSM_PERM_READ);
	EXPECT(rsm_memseg_import_put8(rw, 100, &b, 1), 0);
	EXPECT(rsm_memseg_import_get(r, 128, buf, sizeof(buf)), 0);
	check(buf, sizeof(buf), 128, 0, "new read-only import");
	EXPECT(rsm_memseg_import_get8(r, 100, buf, 1), 0);
	if (buf[0] != 0x5a)
		FAIL("the read-write import's put not seen: %#x", buf[0]);
	EXPECT(rsm_memseg_import_put8(r, 100, &b, 1), RSMERR_PERM_DENIED);
	step("checked");
	step("unpublished");
	EXPECT(rsm_memseg_import_connect(ctl, 1, SEG_ID, RSM_PERM_READ, &h),
	       RSMERR_SEG_NOT_PUBLISHED);
	EXPECT(rsm_memseg_import_get(rw, 0, buf, 8), RSMERR_CONN_ABORTED);
	EXPECT(rsm_memseg_import_get(r, 0, buf, 8), RSMERR_CONN_ABORTED);
	EXPECT(rsm_memseg_import_disconnect(rw), 0);
	EXPECT(rsm_memseg_import_disconnect(r), 0);
	step("done");
}

/* ---- rebind while the importer reads ---- */

static void
rebind_server(void)
{
	uint8_t *m = memory(0), *m2 = memory(2);
	rsm_memseg_export_handle_t h = export(m, SEG_ID, NULL, 0,
					      RSM_ALLOW_REBIND);

	step("published");
	step("reading");
	usleep(200000);
	EXPECT(rsm_memseg_export_rebind(h, m2, 0, SEG_LEN), 0);
	/* the old memory is the application's again: spoil it */
	memset(m, 0xee, SEG_LEN);
	step("rebound");
	step("done");
	check(m2 + 4096, 4096, 4096, 3, "put after rebind, new memory");
	check(m2 + 8192, 4096, 8192, 3, "putv from a handle after rebind");
	EXPECT(rsm_memseg_export_destroy(h), 0);
}

static void
rebind_client(void)
{
	rsm_memseg_import_handle_t h;
	uint8_t *buf = memory(0), *gen3 = memory(3);
	unsigned long reads = 0, old = 0;
	rsm_localmemory_handle_t lb, lg;
	rsm_iovec_t v = { .io_type = RSM_HANDLE_TYPE,
			  .transfer_length = SEG_LEN };
	rsm_scat_gath_t sg = { .io_request_count = 1, .iovec = &v };
	double t0;

	step("published");
	h = import(SEG_ID, RSM_PERM_RDWR);
	EXPECT(rsm_create_localmemory_handle(ctl, &lb, (caddr_t)buf, SEG_LEN),
	       0);
	EXPECT(rsm_create_localmemory_handle(ctl, &lg, (caddr_t)gen3,
					     SEG_LEN), 0);
	sg.remote_handle = h;
	v.local.handle = lb;
	step("reading");
	/* every other read straight into a local memory handle: the one
	 * that meets the dead key is repeated on the new memory either way */
	for (t0 = now(); now() - t0 < 20; reads++) {
		if (reads % 2 == 0)
			EXPECT(rsm_memseg_import_get(h, 0, buf, SEG_LEN), 0);
		else
			EXPECT(rsm_memseg_import_getv(&sg), 0);
		if (buf[0] == pattern(0, 2))
			break;
		check(buf, SEG_LEN, 0, 0, "read before the rebind");
		old++;
	}
	check(buf, SEG_LEN, 0, 2, "read after the rebind");
	printf("client: %lu reads of the old memory, then the new one\n", old);
	step("rebound");
	EXPECT(rsm_memseg_import_get(h, 0, buf, SEG_LEN), 0);
	check(buf, SEG_LEN, 0, 2, "read after rebind returned");
	EXPECT(rsm_memseg_import_put(h, 4096, gen3 + 4096, 4096), 0);
	v.local.handle = lg;
	v.local_offset = v.remote_offset = 8192;
	v.transfer_length = 4096;
	EXPECT(rsm_memseg_import_putv(&sg), 0);
	EXPECT(rsm_free_localmemory_handle(ctl, lb), 0);
	EXPECT(rsm_free_localmemory_handle(ctl, lg), 0);
	step("done");
	EXPECT(rsm_memseg_import_disconnect(h), 0);
}

/* ---- destroy while imported ---- */

static void
destroy_server(void)
{
	uint8_t *m = memory(0);
	rsm_memseg_export_handle_t h = export(m, SEG_ID, NULL, 0, 0);

	step("published");
	step("imported");
	EXPECT(rsm_memseg_export_destroy(h), 0);
	step("destroyed");
	step("done");
}

static void
destroy_client(void)
{
	rsm_memseg_import_handle_t h;
	uint8_t buf[64];
	rsmapi_barrier_t bar;

	step("published");
	h = import(SEG_ID, RSM_PERM_RDWR);
	EXPECT(rsm_memseg_import_get(h, 0, buf, sizeof(buf)), 0);
	check(buf, sizeof(buf), 0, 0, "before destroy");
	step("imported");
	step("destroyed");
	EXPECT(rsm_memseg_import_get(h, 0, buf, sizeof(buf)),
	       RSMERR_CONN_ABORTED);
	EXPECT(rsm_memseg_import_put(h, 0, buf, sizeof(buf)),
	       RSMERR_CONN_ABORTED);
	EXPECT(rsm_memseg_import_init_barrier(h, RSM_BARRIER_SEGMENT, &bar), 0);
	EXPECT(rsm_memseg_import_open_barrier(&bar),
	       RSMERR_BARRIER_OPEN_FAILED);
	EXPECT(rsm_intr_signal_post(h, 0), RSMERR_CONN_ABORTED);
	EXPECT(rsm_memseg_import_disconnect(h), 0);
	step("done");
}

/* ---- barriers: explicit mode, a failure reported at close ---- */

static void
barrier_server(void)
{
	rsmapi_access_entry_t acl[1] = { { 2, 0600 } };
	uint8_t *m = memory(0), *m2 = memory(0);
	rsm_memseg_export_handle_t h = export(m, SEG_ID, acl, 1, 0);
	rsm_memseg_export_handle_t h2 = export(m2, SEG_ID2, NULL, 0, 0);

	/* the second one: read-only for node 2 */
	rsmapi_access_entry_t ro[1] = { { 2, 0400 } };

	EXPECT(rsm_memseg_export_republish(h2, ro, 1), 0);
	step("published");
	step("done");
	check(m, 8192, 0, 1, "explicit-mode puts");
	check(m2, SEG_LEN, 0, 0, "read-only segment");
	EXPECT(rsm_memseg_export_destroy(h), 0);
	EXPECT(rsm_memseg_export_destroy(h2), 0);
}

static void
barrier_client(void)
{
	rsm_memseg_import_handle_t h, ro;
	uint8_t *gen1 = memory(1), buf[8192];
	rsmapi_barrier_t bar, bar2, none;
	rsm_barrier_mode_t mode;

	step("published");
	h = import(SEG_ID, RSM_PERM_RDWR);
	ro = import(SEG_ID2, RSM_PERM_READ);
	memset(&none, 0, sizeof(none));
	EXPECT(rsm_memseg_import_open_barrier(&none),
	       RSMERR_BARRIER_UNINITIALIZED);
	EXPECT(rsm_memseg_import_open_barrier(NULL), RSMERR_BAD_BARRIER_PTR);
	EXPECT(rsm_memseg_import_get_mode(h, &mode), 0);
	if (mode != RSM_BARRIER_MODE_IMPLICIT)
		FAIL("default mode %d", mode);
	EXPECT(rsm_memseg_import_set_mode(h, RSM_BARRIER_MODE_EXPLICIT), 0);
	EXPECT(rsm_memseg_import_set_mode(ro, RSM_BARRIER_MODE_EXPLICIT), 0);
	EXPECT(rsm_memseg_import_init_barrier(h, RSM_BARRIER_SEGMENT, &bar), 0);
	EXPECT(rsm_memseg_import_close_barrier(&bar),
	       RSMERR_BARRIER_NOT_OPENED);
	EXPECT(rsm_memseg_import_open_barrier(&bar), 0);
	for (int i = 0; i < 8; i++)
		EXPECT(rsm_memseg_import_put(h, i * 1024, gen1 + i * 1024,
					     1024), 0);
	EXPECT(rsm_memseg_import_order_barrier(&bar), 0);
	EXPECT(rsm_memseg_import_get(h, 0, buf, 8192), 0);
	check(buf, 8192, 0, 1, "read after order barrier");
	EXPECT(rsm_memseg_import_close_barrier(&bar), 0);
	/* a put the exporter's rkey refuses: deferred, so reported by the
	 * barrier that covers it */
	EXPECT(rsm_memseg_import_init_barrier(ro, RSM_BARRIER_SEGMENT, &bar2),
	       0);
	EXPECT(rsm_memseg_import_open_barrier(&bar2), 0);
	EXPECT(rsm_memseg_import_put(ro, 0, gen1, 4096), 0);
	EXPECT(rsm_memseg_import_close_barrier(&bar2), RSMERR_BARRIER_FAILURE);
	/* and the next barrier, with nothing failing, is clean again */
	EXPECT(rsm_memseg_import_open_barrier(&bar2), 0);
	EXPECT(rsm_memseg_import_get(ro, 0, buf, 4096), 0);
	check(buf, 4096, 0, 0, "read-only import after the failure");
	EXPECT(rsm_memseg_import_close_barrier(&bar2), 0);
	EXPECT(rsm_memseg_import_destroy_barrier(&bar), 0);
	EXPECT(rsm_memseg_import_destroy_barrier(&bar2), 0);
	EXPECT(rsm_memseg_import_open_barrier(&bar),
	       RSMERR_BARRIER_UNINITIALIZED);
	step("done");
	EXPECT(rsm_memseg_import_disconnect(h), 0);
	EXPECT(rsm_memseg_import_disconnect(ro), 0);
}

/* ---- signals ---- */

static void
signals_server(void)
{
	uint8_t *m = memory(0);
	rsm_memseg_export_handle_t h = export(m, SEG_ID, NULL, 0, 0);
	double t0;

	step("published");
	step("imported");
	t0 = now();
	EXPECT(rsm_intr_signal_wait(h, 200), RSMERR_TIMEOUT);
	if (now() - t0 < 0.15)
		FAIL("signal wait returned before its timeout");
	step("post");
	for (int i = 0; i < 3; i++)
		EXPECT(rsm_intr_signal_wait(h, 10000), 0);
	EXPECT(rsm_intr_signal_wait(h, 100), RSMERR_TIMEOUT);
	/* six posted before any wait: the fifth and sixth wait for room */
	step("burst");
	usleep(500000);
	for (int i = 0; i < 6; i++)
		EXPECT(rsm_intr_signal_wait(h, 10000), 0);
	EXPECT(rsm_intr_signal_wait(h, 100), RSMERR_TIMEOUT);
	step("done");
	EXPECT(rsm_memseg_export_destroy(h), 0);
}

static void
signals_client(void)
{
	rsm_memseg_import_handle_t h;

	step("published");
	h = import(SEG_ID, RSM_PERM_READ);
	step("imported");
	step("post");
	for (int i = 0; i < 3; i++)
		EXPECT(rsm_intr_signal_post(h, 0), 0);
	step("burst");
	for (int i = 0; i < 6; i++)
		EXPECT(rsm_intr_signal_post(h, 0), 0);
	step("done");
	EXPECT(rsm_memseg_import_disconnect(h), 0);
}

/* ---- perms: the owner, group and other digits, and the NULL ACL ----
 *
 * Both processes run as root; the importer takes other effective ids (and
 * supplementary groups) around its connects, so that the exporter's group
 * or other digit applies. Needs root: skipped (77) otherwise. */

#define NOBODY	((uid_t)65534)	/* neither the exporter's uid nor gid */

static void
perms_server(void)
{
	rsmapi_access_entry_t grp[1] = { { 2, 0060 } };	/* group: rw */
	rsmapi_access_entry_t oth[1] = { { 2, 0004 } };	/* other: r */
	uint8_t *ma = memory(0), *mb = memory(0), *mc = memory(0);
	uint8_t *md = memory(0);
	rsm_memseg_export_handle_t a, b, c, d;
	mode_t old;

	a = export(ma, SEG_ID, grp, 1, 0);
	b = export(mb, SEG_ID2, oth, 1, 0);
	/* NULL ACLs: 0666 & ~umask at creation, 0640 and 0666 */
	old = umask(027);
	c = export(mc, SEG_ID3, NULL, 0, 0);
	umask(0);
	d = export(md, SEG_ID4, NULL, 0, 0);
	umask(old);
	step("published");
	step("done");
	/* a and d took a page of generation 1 (by group and by other) */
	check(ma, 4096, 0, 1, "group-granted put");
	check(ma + 4096, SEG_LEN - 4096, 4096, 0, "segment a after the put");
	check(mb, SEG_LEN, 0, 0, "other read-only segment after the puts");
	check(mc, SEG_LEN, 0, 0, "umask 027 segment after the group's puts");
	check(md, 4096, 0, 1, "other's put with umask 0");
	check(md + 4096, SEG_LEN - 4096, 4096, 0, "segment d after the put");
	EXPECT(rsm_memseg_export_destroy(a), 0);
	EXPECT(rsm_memseg_export_destroy(b), 0);
	EXPECT(rsm_memseg_export_destroy(c), 0);
	EXPECT(rsm_memseg_export_destroy(d), 0);
}

/* Take effective ids uid:gid with the one supplementary group sup (root
 * again first: only root may change them). */
static void
become(uid_t uid, gid_t gid, gid_t sup)
{
	if (seteuid(0) != 0 || setgroups(1, &sup) != 0 || setegid(gid) != 0 ||
	    seteuid(uid) != 0)
		FAIL("cannot become %u:%u (group %u)", uid, gid, sup);
}

/* Import for writing: a page of generation 1 at 0, read back. */
static void
perms_write(rsm_memseg_id_t id, const uint8_t *gen1, const char *what)
{
	rsm_memseg_import_handle_t h = import(id, RSM_PERM_RDWR);
	uint8_t buf[4096];

	EXPECT(rsm_memseg_import_put(h, 0, (void *)gen1, 4096), 0);
	EXPECT(rsm_memseg_import_get(h, 0, buf, 4096), 0);
	check(buf, 4096, 0, 1, what);
	EXPECT(rsm_memseg_import_disconnect(h), 0);
}

/* Import read-only: gets work, the exporter's rkey refuses the puts. */
static void
perms_read(rsm_memseg_id_t id, const uint8_t *gen1, const char *what)
{
	rsm_memseg_import_handle_t h = NULL;
	uint8_t buf[4096];

	EXPECT(rsm_memseg_import_connect(ctl, 1, id, RSM_PERM_RDWR, &h),
	       RSMERR_PERM_DENIED);
	EXPECT(rsm_memseg_import_connect(ctl, 1, id, RSM_PERM_WRITE, &h),
	       RSMERR_PERM_DENIED);
	h = import(id, RSM_PERM_READ);
	EXPECT(rsm_memseg_import_get(h, 8192, buf, 4096), 0);
	check(buf, 4096, 8192, 0, what);
	EXPECT(rsm_memseg_import_put(h, 0, (void *)gen1, 4096),
	       RSMERR_PERM_DENIED);
	EXPECT(rsm_memseg_import_disconnect(h), 0);
}

static void
perms_denied(rsm_memseg_id_t id)
{
	rsm_memseg_import_handle_t h = NULL;

	EXPECT(rsm_memseg_import_connect(ctl, 1, id, RSM_PERM_READ, &h),
	       RSMERR_PERM_DENIED);
	EXPECT(rsm_memseg_import_connect(ctl, 1, id, RSM_PERM_RDWR, &h),
	       RSMERR_PERM_DENIED);
}

static void
perms_client(void)
{
	uint8_t *gen1 = memory(1);
	rsm_memseg_import_handle_t h;

	step("published");
	/* the owner (same uid): the owner digit alone, though root's gid
	 * is the segment's and b's other digit allows reads */
	become(0, 0, 0);
	perms_denied(SEG_ID);
	perms_denied(SEG_ID2);
	h = import(SEG_ID3, RSM_PERM_RDWR);	/* 0640: owner rw */
	EXPECT(rsm_memseg_import_disconnect(h), 0);
	/* group by the effective gid */
	become(NOBODY, 0, 0);
	perms_write(SEG_ID, gen1, "group (egid) read-write import");
	perms_denied(SEG_ID2);			/* group digit 0 */
	perms_read(SEG_ID3, gen1, "group read-only import (umask 027)");
	/* group by a supplementary group only */
	become(NOBODY, NOBODY, 0);
	perms_write(SEG_ID, gen1, "group (supplementary) import");
	/* other */
	become(NOBODY, NOBODY, NOBODY);
	perms_denied(SEG_ID);			/* other digit 0 */
	perms_read(SEG_ID2, gen1, "other read-only import");
	perms_denied(SEG_ID3);			/* 0640: other none */
	perms_write(SEG_ID4, gen1, "other read-write import (umask 0)");
	become(0, 0, 0);
	step("done");
}

/* ---- segid: ids from a range the segment id file reserves ---- */

#define SEGID_APP	"com.example.rsmtest"

/* Both sides read the file the server writes next to the socket. */
static void
segid_env(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s.segmentid", sock);
	setenv("DPDAT_RSM_SEGMENTID_FILE", path, 1);
}

static void
segid_server(void)
{
	rsmapi_access_entry_t acl[1] = { { 2, 0600 } };
	uint8_t *m = memory(0), *m2 = memory(2);
	rsm_memseg_export_handle_t h, h2;
	rsm_memseg_id_t base, id;
	uint32_t len;
	FILE *f;

	segid_env();
	f = fopen(getenv("DPDAT_RSM_SEGMENTID_FILE"), "w");
	if (f == NULL)
		FAIL("cannot write the segment id file");
	/* at the base of the user range: where generation would start */
	fputs(SEGID_APP " 0x80000000 16\n", f);
	fclose(f);
	EXPECT(rsm_get_segmentid_range(SEGID_APP, &base, &len), 0);
	h = export(m, base + len - 1, acl, 1, 0);	/* authorized */
	EXPECT(rsm_memseg_export_create(ctl, &h2, m2, SEG_LEN, 0), 0);
	id = base + len;				/* not authorized */
	EXPECT(rsm_memseg_export_publish(h2, &id, acl, 1), RSMERR_BAD_SEGID);
	id = 0;
	EXPECT(rsm_memseg_export_publish(h2, &id, acl, 1), 0);
	if (id != base + len)
		FAIL("generated %#x, wanted %#x past the range", id,
		     base + len);
	step("published");
	step("done");
	EXPECT(rsm_memseg_export_destroy(h), 0);
	EXPECT(rsm_memseg_export_destroy(h2), 0);
	unlink(getenv("DPDAT_RSM_SEGMENTID_FILE"));
}

static void
segid_client(void)
{
	uint8_t *buf = malloc(SEG_LEN);
	rsm_memseg_import_handle_t h;
	rsm_memseg_id_t base;
	uint32_t len;

	if (buf == NULL)
		FAIL("malloc");
	segid_env();
	step("published");
	/* the importer finds the id from the application's range */
	EXPECT(rsm_get_segmentid_range(SEGID_APP, &base, &len), 0);
	EXPECT(rsm_memseg_import_connect(ctl, 1, base, RSM_PERM_READ, &h),
	       RSMERR_SEG_NOT_PUBLISHED);
	h = import(base + len - 1, RSM_PERM_READ);
	EXPECT(rsm_memseg_import_get(h, 0, buf, SEG_LEN), 0);
	check(buf, SEG_LEN, 0, 0, "get of the segment of a reserved id");
	EXPECT(rsm_memseg_import_disconnect(h), 0);
	h = import(base + len, RSM_PERM_READ);
	EXPECT(rsm_memseg_import_get(h, 0, buf, SEG_LEN), 0);
	check(buf, SEG_LEN, 0, 2, "get of the segment of a generated id");
	EXPECT(rsm_memseg_import_disconnect(h), 0);
	free(buf);
	step("done");
}

/* ---- lmh: getv/putv straight from local memory handles ---- */

#define KB	1024

static void
iov_set(rsm_iovec_t *v, rsm_localmemory_handle_t lh, void *va, size_t loff,
	size_t roff, size_t len)
{
	memset(v, 0, sizeof(*v));
	v->io_type = lh != NULL ? RSM_HANDLE_TYPE : RSM_VA_TYPE;
	if (lh != NULL)
		v->local.handle = lh;
	else
		v->local.vaddr = va;
	v->local_offset = loff;
	v->remote_offset = roff;
	v->transfer_length = len;
}

static void
lmh_server(void)
{
	uint8_t *m = memory(0);
	rsm_memseg_export_handle_t h = export(m, SEG_ID, NULL, 0, 0);

	step("published");
	step("written");
	/* [0, 192K) by the importer's putv (implicit, then explicit), the
	 * rest refused entries only */
	check(m, 192 * KB, 0, 1, "exporter after putv");
	check(m + 192 * KB, SEG_LEN - 192 * KB, 192 * KB, 0,
	      "exporter after refused putv");
	EXPECT(rsm_memseg_export_destroy(h), 0);
}

static void
lmh_client(void)
{
	uint8_t *gen1 = memory(1), *rbuf = memory(0);
	rsm_localmemory_handle_t lh, lh2, rh;
	rsm_memseg_import_handle_t h;
	rsmapi_barrier_t bar;
	rsm_scat_gath_t sg;
	rsm_iovec_t iov[16];

	step("published");
	h = import(SEG_ID, RSM_PERM_RDWR);
	memset(rbuf, 0, SEG_LEN);
	EXPECT(rsm_create_localmemory_handle(ctl, &lh, (caddr_t)gen1,
					     SEG_LEN), 0);
	/* unaligned at both ends */
	EXPECT(rsm_create_localmemory_handle(ctl, &lh2, (caddr_t)gen1 + 70001,
					     128 * KB - 70001 + 13), 0);
	EXPECT(rsm_create_localmemory_handle(ctl, &rh, (caddr_t)rbuf,
					     SEG_LEN), 0);
	memset(&sg, 0, sizeof(sg));
	sg.remote_handle = h;
	sg.iovec = iov;
	/* [0, 128K): handle, address, the other handle, in one list */
	iov_set(&iov[0], lh, NULL, 0, 0, 40000);
	iov_set(&iov[1], NULL, gen1, 40000, 40000, 30001);
	iov_set(&iov[2], lh2, NULL, 0, 70001, 128 * KB - 70001);
	sg.io_request_count = 3;
	EXPECT(rsm_memseg_import_putv(&sg), 0);
	if (sg.io_residual_count != 0)
		FAIL("putv residual %lu", sg.io_residual_count);
	/* out of a handle's range: refused before anything moves, whatever
	 * entry it is */
	iov_set(&iov[0], lh, NULL, 192 * KB, 192 * KB, 4 * KB);
	iov_set(&iov[1], lh, NULL, SEG_LEN - 100, 200 * KB, 200);
	sg.io_request_count = 2;
	EXPECT(rsm_memseg_import_putv(&sg), RSMERR_BAD_LENGTH);
	if (sg.io_residual_count != 2)
		FAIL("refused putv residual %lu", sg.io_residual_count);
	iov_set(&iov[1], lh2, NULL, 128 * KB - 70001 + 14, 200 * KB, 0);
	EXPECT(rsm_memseg_import_putv(&sg), RSMERR_BAD_LENGTH);
	iov_set(&iov[0], rh, NULL, 0, 0, 4 * KB);
	iov_set(&iov[1], rh, NULL, SEG_LEN - 10, 0, 11);
	EXPECT(rsm_memseg_import_getv(&sg), RSMERR_BAD_LENGTH);
	for (size_t i = 0; i < 4 * KB; i++)
		if (rbuf[i] != 0)
			FAIL("refused getv wrote byte %zu", i);
	/* [128K, 192K): explicit mode, 16 puts from the handle in flight
	 * when it is freed: the free waits for them, the barrier is clean */
	EXPECT(rsm_memseg_import_set_mode(h, RSM_BARRIER_MODE_EXPLICIT), 0);
	EXPECT(rsm_memseg_import_init_barrier(h, RSM_BARRIER_SEGMENT, &bar), 0);
	EXPECT(rsm_memseg_import_open_barrier(&bar), 0);
	for (int i = 0; i < 16; i++)
		iov_set(&iov[i], lh, NULL, 128 * KB + i * 4 * KB,
			128 * KB + i * 4 * KB, 4 * KB);
	sg.io_request_count = 16;
	EXPECT(rsm_memseg_import_putv(&sg), 0);
	EXPECT(rsm_free_localmemory_handle(ctl, lh), 0);
	EXPECT(rsm_free_localmemory_handle(ctl, lh), RSMERR_BAD_LOCALMEM_HNDL);
	EXPECT(rsm_memseg_import_putv(&sg), RSMERR_BAD_LOCALMEM_HNDL);
	EXPECT(rsm_memseg_import_close_barrier(&bar), 0);
	EXPECT(rsm_memseg_import_destroy_barrier(&bar), 0);
	EXPECT(rsm_memseg_import_set_mode(h, RSM_BARRIER_MODE_IMPLICIT), 0);
	/* [0, 192K) back, through the handle and by address */
	iov_set(&iov[0], rh, NULL, 0, 0, 65 * KB + 3);
	iov_set(&iov[1], NULL, rbuf, 65 * KB + 3, 65 * KB + 3, 60 * KB);
	iov_set(&iov[2], rh, NULL, 125 * KB + 3, 125 * KB + 3,
		67 * KB - 3);
	sg.io_request_count = 3;
	EXPECT(rsm_memseg_import_getv(&sg), 0);
	check(rbuf, 192 * KB, 0, 1, "getv of the putv");
	for (size_t i = 192 * KB; i < SEG_LEN; i++)
		if (rbuf[i] != 0)
			FAIL("getv wrote byte %zu past its range", i);
	EXPECT(rsm_free_localmemory_handle(ctl, lh2), 0);
	EXPECT(rsm_free_localmemory_handle(ctl, rh), 0);
	step("written");
	EXPECT(rsm_memseg_import_disconnect(h), 0);
}

static const struct {
	const char *name;
	void (*server)(void), (*client)(void);
} cases[] = {
	{ "acl", acl_server, acl_client },
	{ "readonly", readonly_server, readonly_client },
	{ "republish", republish_server, republish_client },
	{ "rebind", rebind_server, rebind_client },
	{ "destroy", destroy_server, destroy_client },
	{ "barrier", barrier_server, barrier_client },
	{ "signals", signals_server, signals_client },
	{ "perms", perms_server, perms_client },
	{ "segid", segid_server, segid_client },
	{ "lmh", lmh_server, lmh_client },
};

int
main(int argc, char **argv)
{
	char dev[300];
	size_t i;

	if (argc < 4)
		return 2;
	role = argv[1];
	sock = argv[2];
	server = strcmp(role, "server") == 0;
	if (strcmp(argv[3], "perms") == 0 && geteuid() != 0) {
		printf("%s: perms skipped: changing ids needs root\n", role);
		fflush(stdout);
		_exit(77);
	}
	snprintf(dev, sizeof(dev), "net_memif0,role=%s,socket=%s", role, sock);
	setenv("DPDAT_RSM_DEVICE", dev, 1);
	setenv("DPDAT_RSM_NODES", "1=198.18.0.1,2=198.18.0.2,3=198.18.0.3", 1);
	setenv("DPDAT_RSM_NODE", server ? "1" : "2", 1);
	EXPECT(rsm_get_controller("dpdat0", &ctl), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(cases[i].name, argv[3]) == 0)
			break;
	if (i == sizeof(cases) / sizeof(cases[0]))
		FAIL("unknown case %s", argv[3]);
	if (server)
		cases[i].server();
	else
		cases[i].client();
	printf("%s: %s passed\n", role, argv[3]);
	fflush(stdout);
	/* let the last CM messages go out before the port closes */
	usleep(200000);
	_exit(0);
}
