/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Transfers on a connection, and their verification. A connection's local
 * LMR is split in two: the first half is the source of WRITEs and SENDs,
 * the second half receives READ answers and SENDs from the peer. A WRITE
 * is verified by reading the remote range back and comparing.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "testpmd.h"

#define OP_TIMEOUT_S 10.0

int
tp_pattern_parse(const char *s, int *pattern)
{
	char *end;
	unsigned long v;

	if (strcmp(s, "inc") == 0) {
		*pattern = TP_PATTERN_INC;
		return 0;
	}
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno != 0 || *end != '\0' || end == s || v > 0xff)
		return -1;
	*pattern = (int)v;
	return 0;
}

void
tp_pattern_fill(uint8_t *p, size_t len, int pattern)
{
	if (pattern != TP_PATTERN_INC) {
		memset(p, pattern, len);
		return;
	}
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)i;
}

int
tp_pattern_check(const uint8_t *p, size_t len, int pattern, size_t *bad)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (pattern == TP_PATTERN_INC ? (uint8_t)i :
			     (uint8_t)pattern)) {
			*bad = i;
			return -1;
		}
	return 0;
}

/* The connection can carry a transfer of size bytes at remote offset off
 * (remote == false: only the local side matters, as for SEND). */
static int
usable(const struct tp_conn *c, uint64_t size, uint64_t off, bool remote)
{
	if (c->state != TP_CONN_ESTABLISHED) {
		printf("error: the connection is not established\n");
		return -1;
	}
	if (size == 0 || size > tp.lmr[c->lmr].len / 2 || size > UINT32_MAX) {
		printf("error: size must be 1 .. %zu (half the local LMR %d)\n",
		       tp.lmr[c->lmr].len / 2, c->lmr);
		return -1;
	}
	if (!remote)
		return 0;
	if (c->remote.magic != TP_PDATA_MAGIC || c->remote.rkey == 0) {
		printf("error: the peer offered no region for RDMA\n");
		return -1;
	}
	if (off > c->remote.len || size > c->remote.len - off) {
		printf("error: %lu bytes at offset %lu leave the peer's region "
		       "of %lu bytes\n", (unsigned long)size,
		       (unsigned long)off, (unsigned long)c->remote.len);
		return -1;
	}
	return 0;
}

static int
post(struct tp_conn *c, enum dpdat_wr_opcode op, uint64_t loff,
     uint64_t size, uint64_t roff, uint64_t id)
{
	const struct tp_lmr *l = &tp.lmr[c->lmr];
	struct dpdat_lmr_info li;
	struct dpdat_sge sge;
	struct dpdat_send_wr wr = { .wr_id = id, .opcode = op,
		.flags = DPDAT_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
		.remote_addr = c->remote.addr + roff, .rkey = c->remote.rkey };

	dpdat_lmr_query(l->lmr, &li);
	sge = (struct dpdat_sge){ (uintptr_t)l->mem + loff, (uint32_t)size,
				  li.lmr_context };
	return dpdat_post_send(c->qp, &wr);
}

/* Post one WR and wait for its completion. */
static int
run_one(struct tp_conn *c, enum dpdat_wr_opcode op, uint64_t loff,
	uint64_t size, uint64_t roff)
{
	struct dpdat_wc wc;
	uint64_t t0 = rte_get_tsc_cycles();
	int ret = post(c, op, loff, size, roff, 1);

	if (ret != 0) {
		printf("error: post: %s\n", strerror(-ret));
		return -1;
	}
	if (tp_conn_poll_wc(c, &wc, OP_TIMEOUT_S) != 1) {
		printf("error: no completion after %.0f s\n", OP_TIMEOUT_S);
		return -1;
	}
	if (wc.status != DPDAT_WC_SUCCESS) {
		printf("error: completion: %s\n",
		       dpdat_wc_status_str(wc.status));
		return -1;
	}
	return (int)((rte_get_tsc_cycles() - t0) * 1000000 /
		     rte_get_tsc_hz());
}

static int
verify(const struct tp_conn *c, uint64_t size, int pattern, const char *what)
{
	const struct tp_lmr *l = &tp.lmr[c->lmr];
	size_t bad;

	if (tp_pattern_check(l->mem + l->len / 2, size, pattern, &bad) != 0) {
		printf("%s: MISMATCH at byte %zu: 0x%02x\n", what, bad,
		       l->mem[l->len / 2 + bad]);
		return -1;
	}
	return 0;
}

int
tp_cmd_write(struct tp_conn *c, uint64_t size, int pattern, uint64_t off)
{
	const struct tp_lmr *l;
	int us_w, us_r;

	if (usable(c, size, off, true) != 0)
		return -1;
	l = &tp.lmr[c->lmr];
	tp_pattern_fill(l->mem, size, pattern);
	memset(l->mem + l->len / 2, ~(pattern & 0xff), size);
	us_w = run_one(c, DPDAT_WR_RDMA_WRITE, 0, size, off);
	if (us_w < 0)
		return -1;
	us_r = run_one(c, DPDAT_WR_RDMA_READ, l->len / 2, size, off);
	if (us_r < 0 || verify(c, size, pattern, "write") != 0)
		return -1;
	printf("write: %lu bytes at remote offset %lu in %d us; read back in "
	       "%d us: verified\n", (unsigned long)size, (unsigned long)off,
	       us_w, us_r);
	return 0;
}

int
tp_cmd_read(struct tp_conn *c, uint64_t size, int pattern, uint64_t off)
{
	const struct tp_lmr *l;
	int us;

	if (usable(c, size, off, true) != 0)
		return -1;
	l = &tp.lmr[c->lmr];
	memset(l->mem + l->len / 2, ~(pattern & 0xff), size);
	us = run_one(c, DPDAT_WR_RDMA_READ, l->len / 2, size, off);
	if (us < 0 || (pattern >= 0 && verify(c, size, pattern, "read") != 0))
		return -1;
	printf("read: %lu bytes from remote offset %lu in %d us%s\n",
	       (unsigned long)size, (unsigned long)off, us,
	       pattern >= 0 ? ": verified" : "");
	return 0;
}

int
tp_cmd_send(struct tp_conn *c, uint64_t size, int pattern)
{
	int us;

	if (usable(c, size, 0, false) != 0)
		return -1;
	tp_pattern_fill(tp.lmr[c->lmr].mem, size, pattern);
	us = run_one(c, DPDAT_WR_SEND, 0, size, 0);
	if (us < 0)
		return -1;
	printf("send: %lu bytes delivered in %d us\n", (unsigned long)size, us);
	return 0;
}

int
tp_cmd_recv(struct tp_conn *c, uint64_t size, int pattern)
{
	const struct tp_lmr *l;
	struct dpdat_lmr_info li;
	struct dpdat_sge sge;
	struct dpdat_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	int ret;

	if (usable(c, size, 0, false) != 0)
		return -1;
	l = &tp.lmr[c->lmr];
	dpdat_lmr_query(l->lmr, &li);
	sge = (struct dpdat_sge){ (uintptr_t)l->mem + l->len / 2,
				  (uint32_t)size, li.lmr_context };
	ret = dpdat_post_recv(c->qp, &wr);
	if (ret != 0) {
		printf("error: post_recv: %s\n", strerror(-ret));
		return -1;
	}
	c->recv_posted++;
	c->recv_pattern = pattern;
	printf("recv: a buffer of %lu bytes posted (%u waiting)\n",
	       (unsigned long)size, c->recv_posted);
	return 0;
}

/* Keep depth WRs in flight for secs seconds; a rate line every second. */
int
tp_cmd_stream(struct tp_conn *c, bool read, uint64_t size, uint32_t depth,
	      double secs)
{
	const enum dpdat_wr_opcode op = read ? DPDAT_WR_RDMA_READ :
					       DPDAT_WR_RDMA_WRITE;
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t loff = read ? tp.lmr[c->lmr].len / 2 : 0;
	uint64_t t0, tl, now, done = 0, last = 0, id = 0;
	uint32_t out = 0;
	struct dpdat_wc wc;
	int err = 0;

	if (usable(c, size, 0, true) != 0)
		return -1;
	if (depth == 0 || depth > 256) {
		printf("error: depth must be 1 .. 256\n");
		return -1;
	}
	printf("stream: RDMA %s of %lu bytes, %u in flight, %.0f s\n",
	       read ? "READ" : "WRITE", (unsigned long)size, depth, secs);
	t0 = tl = rte_get_tsc_cycles();
	for (now = t0; out > 0 || now - t0 < (uint64_t)(secs * hz);
	     now = rte_get_tsc_cycles()) {
		while (!err && out < depth && now - t0 < (uint64_t)(secs * hz) &&
		       post(c, op, loff, size, 0, ++id) == 0)
			out++;
		while (out > 0 && tp_conn_poll_wc(c, &wc, 0) == 1) {
			out--;
			if (wc.status == DPDAT_WC_SUCCESS) {
				done++;
			} else if (!err) {
				printf("stream: completion: %s\n",
				       dpdat_wc_status_str(wc.status));
				err = 1;
			}
		}
		if (now - tl >= hz) {
			double s = (double)(now - tl) / hz;

			printf("stream: %4.1f s  %9.1f MiB/s  %7.2f Gb/s  "
			       "%8.3f Mpps\n", (double)(now - t0) / hz,
			       (done - last) * size / s / (1 << 20),
			       (done - last) * size * 8 / s / 1e9,
			       (done - last) / s / 1e6);
			tl = now;
			last = done;
		}
		if (err && now - t0 > (uint64_t)(secs + OP_TIMEOUT_S) * hz)
			break;	/* the QP failed and does not flush */
		if (out == depth || err)
			dpdat_cq_wait(c->cq, 1);
	}
	double s = (double)(now - t0) / hz;

	printf("stream: total %lu x %lu bytes in %.2f s: %.1f MiB/s, %.2f Gb/s"
	       "%s\n", (unsigned long)done, (unsigned long)size, s,
	       done * size / s / (1 << 20), done * size * 8 / s / 1e9,
	       err ? " (FAILED)" : "");
	return err ? -1 : 0;
}
