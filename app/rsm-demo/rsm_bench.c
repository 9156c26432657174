/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* rsm-importer's bench mode: N getv/putv of one entry of a size, the local
 * side a local memory handle (zero-copy: the READ or WRITE reaches the
 * handle's registered memory) or a plain address (copied through the
 * import's staging buffer), side by side in one run. putv is timed in
 * implicit barrier mode (each waits for its completion) and in explicit
 * mode (N puts posted between open_barrier and close_barrier). Each figure
 * is the better of two alternating runs. */

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <rsm/rsmapi.h>

#include "rsm_bench.h"

enum bench_op { OP_GETV, OP_PUTV, OP_PUTV_EXPLICIT };

static const char *const op_name[] = { "getv", "putv", "putv-explicit" };

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* MiB/s of n transfers of len bytes, or a negative RSMERR code. */
static double
bench_run(rsm_memseg_import_handle_t seg, enum bench_op op, void *buf,
	  rsm_localmemory_handle_t lh, size_t len, size_t n)
{
	rsm_iovec_t v = { .remote_offset = 0, .transfer_length = len };
	rsm_scat_gath_t sg = { .io_request_count = 1, .remote_handle = seg,
			       .iovec = &v };
	rsmapi_barrier_t bar;
	double t0;
	int r = 0;

	v.io_type = lh != NULL ? RSM_HANDLE_TYPE : RSM_VA_TYPE;
	if (lh != NULL)
		v.local.handle = lh;
	else
		v.local.vaddr = buf;
	if (op == OP_PUTV_EXPLICIT &&
	    ((r = rsm_memseg_import_set_mode(seg,
					RSM_BARRIER_MODE_EXPLICIT)) != 0 ||
	     (r = rsm_memseg_import_init_barrier(seg, RSM_BARRIER_SEGMENT,
						 &bar)) != 0))
		return -r;
	t0 = now();
	if (op == OP_PUTV_EXPLICIT)
		r = rsm_memseg_import_open_barrier(&bar);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = op == OP_GETV ? rsm_memseg_import_getv(&sg) :
				    rsm_memseg_import_putv(&sg);
	if (op == OP_PUTV_EXPLICIT) {
		if (r == 0)
			r = rsm_memseg_import_close_barrier(&bar);
		rsm_memseg_import_destroy_barrier(&bar);
		rsm_memseg_import_set_mode(seg, RSM_BARRIER_MODE_IMPLICIT);
	}
	if (r != 0)
		return -r;
	return (double)len * n / (now() - t0) / (1024 * 1024);
}

int
rsm_bench(rsmapi_controller_handle_t ctl, rsm_memseg_import_handle_t seg,
	  size_t seg_len, unsigned int iters)
{
	static const size_t sizes[] = { 4096, 65536, 1 << 20 };
	rsm_localmemory_handle_t lh;
	void *buf;
	int r;

	buf = mmap(NULL, seg_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return RSMERR_INSUFFICIENT_MEM;
	memset(buf, 0x5a, seg_len);
	r = rsm_create_localmemory_handle(ctl, &lh, buf, seg_len);
	if (r != 0)
		goto out;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		/* above 64 KiB, as many bytes as 64 KiB transfers move */
		size_t n = len <= 65536 ? iters : (size_t)iters * 65536 / len;

		if (len > seg_len)
			break;
		if (n < 4)
			n = 4;
		for (int op = OP_GETV; op <= OP_PUTV_EXPLICIT; op++) {
			double va = 0, hd = 0;

			for (int k = 0; k < 2; k++) {
				double a = bench_run(seg, op, buf, NULL, len,
						     n);
				double b = bench_run(seg, op, NULL, lh, len,
						     n);

				if (a < 0 || b < 0) {
					r = (int)-(a < 0 ? a : b);
					goto out_free;
				}
				va = a > va ? a : va;
				hd = b > hd ? b : hd;
			}
			printf("bench: %-13s %7zu B x %4zu: address %8.1f "
			       "MiB/s, handle %8.1f MiB/s, handle/address "
			       "%.2f\n", op_name[op], len, n, va, hd, hd / va);
			fflush(stdout);
		}
	}
out_free:
	rsm_free_localmemory_handle(ctl, lh);
out:
	munmap(buf, seg_len);
	return r;
}
