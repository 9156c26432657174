/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Post lists (dpdat_post_send_burst) and selective signalling on the
 * in-process rig (rig.h): the arguments and the exact prefix posted when a
 * list stops (a bad WR, a full queue, a QP not connected), that only the
 * signalled WRs complete, once and in order, that an unsignalled WR that
 * fails still completes, and lists posted by two threads at once. Every
 * byte written or read is checked.
 */

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <CUnit/Basic.h>

#include <rte_common.h>

#include <dpdat/dpdat_qp.h>
#include "rig.h"

#define SLOT 64			/* bytes per WR in the tests below */

static uint8_t
pat(uint32_t seed, uint32_t i)
{
	return (uint8_t)(seed * 31 + i * 7 + (i >> 5));
}

/* WR i of a list: SLOT bytes at A.buf + SLOT * (base + i), to or from the
 * same offset at B; a READ into the upper half of A's buffer. */
static void
list_wr(struct dpdat_send_wr *wr, struct dpdat_sge *sge, uint32_t slot,
	enum dpdat_wr_opcode op, bool signaled)
{
	uint32_t off = slot * SLOT;

	*sge = (struct dpdat_sge){ (uintptr_t)A.buf + off +
		(op == DPDAT_WR_RDMA_READ ? (1u << 19) : 0), SLOT, A.key };
	*wr = (struct dpdat_send_wr){ .wr_id = slot, .opcode = op,
		.flags = signaled ? DPDAT_SEND_SIGNALED : 0, .sg_list = sge,
		.num_sge = 1, .remote_addr = (uintptr_t)B.buf + off,
		.rkey = B.key };
}

static void
fill_slots(struct end *e, uint32_t first, uint32_t n, uint32_t seed)
{
	for (uint32_t i = first * SLOT; i < (first + n) * SLOT; i++)
		e->buf[i] = pat(seed, i);
}

static bool
slots_are(const uint8_t *p, uint32_t first, uint32_t n, uint32_t seed)
{
	for (uint32_t i = first * SLOT; i < (first + n) * SLOT; i++)
		if (p[i] != pat(seed, i))
			return false;
	return true;
}

/* Up to n completions of A within iters rounds, then a few more rounds to
 * catch any that should not be there. */
static int
reap(struct dpdat_wc *wc, int n, int iters)
{
	int got = 0, r;

	for (int i = 0; i < iters && got < n; i++) {
		r = dpdat_cq_poll(A.cq, wc + got, n - got);
		if (r > 0)
			got += r;
		else
			run(1);
	}
	run(20);
	for (; got < n + 8 && (r = dpdat_cq_poll(A.cq, wc + got, 1)) == 1; )
		got++;
	return got;
}

static void
test_args(void)
{
	struct dpdat_send_wr wr;
	struct dpdat_sge sge;
	uint32_t n = 77;

	connect_pair(1024, 14);
	list_wr(&wr, &sge, 0, DPDAT_WR_RDMA_WRITE, true);
	CU_ASSERT_EQUAL(dpdat_post_send_burst(NULL, &wr, 1, &n), -EBADF);
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, &wr, 1, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, NULL, 1, &n), -EINVAL);
	CU_ASSERT_EQUAL(n, 0);
	n = 77;
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, NULL, 0, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, &wr, 0, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(dpdat_post_send(A.qp, NULL), -EINVAL);
	run(20);
	CU_ASSERT_EQUAL(dpdat_cq_poll(A.cq, &(struct dpdat_wc){ 0 }, 1), 0);
	disconnect_pair();
	drain_cqs();
}

/* A QP in INIT posts nothing; a malformed first WR is reported first. */
static void
test_not_rts(void)
{
	struct dpdat_qp_conf qc = { .pz = A.pz, .send_cq = A.cq,
				    .recv_cq = A.cq };
	struct dpdat_send_wr wr[2];
	struct dpdat_sge sge[2];
	struct dpdat_qp *qp = dpdat_qp_create(A.dev, &qc);
	uint32_t n = 77;

	CU_ASSERT_FATAL(qp != NULL);
	list_wr(&wr[0], &sge[0], 0, DPDAT_WR_RDMA_WRITE, true);
	list_wr(&wr[1], &sge[1], 1, DPDAT_WR_RDMA_WRITE, true);
	CU_ASSERT_EQUAL(dpdat_post_send_burst(qp, wr, 2, &n), -EBUSY);
	CU_ASSERT_EQUAL(n, 0);
	wr[0].flags = 0x80;
	CU_ASSERT_EQUAL(dpdat_post_send_burst(qp, wr, 2, &n), -EINVAL);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(dpdat_post_send(qp, &wr[0]), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_qp_free(qp), 0);
	CU_ASSERT_EQUAL(dpdat_cq_poll(A.cq, &(struct dpdat_wc){ 0 }, 1), 0);
}

/* Each kind of bad WR in the middle: the prefix goes, and only it. */
static void
test_bad_in_middle(void)
{
	struct dpdat_send_wr wr[8];
	struct dpdat_sge sge[8];
	struct dpdat_wc wc[16];
	uint32_t n;
	int got;

	for (int kind = 0; kind < 4; kind++) {
		connect_pair(1024, 14);
		memset(B.buf, 0, 8 * SLOT);
		fill_slots(&A, 0, 8, 10 + kind);
		for (uint32_t i = 0; i < 8; i++)
			list_wr(&wr[i], &sge[i], i, DPDAT_WR_RDMA_WRITE, true);
		if (kind == 0)
			wr[5].num_sge = DPDAT_MAX_SGE + 1;
		else if (kind == 1)
			wr[5].opcode = DPDAT_WR_RECV;
		else if (kind == 2)
			wr[5].sg_list = NULL;
		else
			wr[5].flags |= 0x100;
		n = 77;
		CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, wr, 8, &n),
				-EINVAL);
		CU_ASSERT_EQUAL(n, 5);
		got = reap(wc, 5, 2000);
		CU_ASSERT_EQUAL(got, 5);
		for (int i = 0; i < got; i++) {
			CU_ASSERT_EQUAL(wc[i].wr_id, (uint64_t)i);
			CU_ASSERT_EQUAL(wc[i].status, DPDAT_WC_SUCCESS);
		}
		CU_ASSERT(slots_are(B.buf, 0, 5, 10 + kind));
		for (uint32_t i = 5 * SLOT; i < 8 * SLOT; i++)
			if (B.buf[i] != 0) {
				CU_FAIL("a WR after the bad one was posted");
				break;
			}
		disconnect_pair();
		drain_cqs();
	}
}

/* Room for 4 of 10: -ENOMEM, 4 posted; the unsignalled WRs that filled
 * the queue give their room back without a completion. */
static void
test_queue_full(void)
{
	struct dpdat_qp_info qi;
	struct dpdat_send_wr wr[10], one;
	struct dpdat_sge sge[10], s1;
	struct dpdat_wc wc[16];
	uint32_t n, i;
	int got;

	connect_pair(1024, 14);
	CU_ASSERT_FATAL(dpdat_qp_query(A.qp, &qi) == 0);
	fill_slots(&A, 0, 16, 3);
	memset(B.buf, 0, 16 * SLOT);
	/* 1020 unsignalled WRITEs of slot 0, engines held: the queue of 1024
	 * has room for 4 */
	list_wr(&one, &s1, 0, DPDAT_WR_RDMA_WRITE, false);
	for (i = 0; i < 1020; i++)
		CU_ASSERT_FATAL(dpdat_post_send(A.qp, &one) == 0);
	for (i = 0; i < 10; i++)
		list_wr(&wr[i], &sge[i], 1 + i, DPDAT_WR_RDMA_WRITE, true);
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, wr, 10, &n), -ENOMEM);
	CU_ASSERT_EQUAL(n, 4);
	/* full, with a malformed WR next: the WR's own error */
	wr[4].num_sge = DPDAT_MAX_SGE + 1;
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, wr + 4, 6, &n), -EINVAL);
	CU_ASSERT_EQUAL(n, 0);
	wr[4].num_sge = 1;
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, wr + 4, 6, &n), -ENOMEM);
	CU_ASSERT_EQUAL(n, 0);
	got = reap(wc, 4, 20000);
	CU_ASSERT_EQUAL(got, 4);
	for (int k = 0; k < got; k++) {
		CU_ASSERT_EQUAL(wc[k].wr_id, (uint64_t)(1 + k));
		CU_ASSERT_EQUAL(wc[k].status, DPDAT_WC_SUCCESS);
	}
	CU_ASSERT(slots_are(B.buf, 0, 5, 3));
	/* all room back: the rest of the list goes now */
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, wr + 4, 6, &n), 0);
	CU_ASSERT_EQUAL(n, 6);
	got = reap(wc, 6, 2000);
	CU_ASSERT_EQUAL(got, 6);
	for (int k = 0; k < got; k++)
		CU_ASSERT_EQUAL(wc[k].wr_id, (uint64_t)(5 + k));
	CU_ASSERT(slots_are(B.buf, 0, 11, 3));
	disconnect_pair();
	drain_cqs();
}

/* Lists of WRITEs and READs, one WR in k signalled: exactly those complete,
 * in order; every byte where it belongs. */
static void
test_selective_signalling(void)
{
	static const uint32_t lens[] = { 1, 7, 2, 16, 3, 32, 5 };
	struct dpdat_send_wr wr[32];
	struct dpdat_sge sge[32];
	struct dpdat_wc wc[64];
	uint32_t slot = 0, n, want = 0, k = 3;
	int got;

	connect_pair(1024, 14);
	/* B holds pattern 5 in the READ slots, A pattern 6 for the WRITEs */
	fill_slots(&B, 0, 128, 5);
	fill_slots(&A, 0, 128, 6);
	memset(A.buf + (1u << 19), 0, 128 * SLOT);
	for (unsigned int l = 0; l < RTE_DIM(lens); l++) {
		for (uint32_t i = 0; i < lens[l]; i++, slot++)
			list_wr(&wr[i], &sge[i], slot, slot % 3 == 1 ?
				DPDAT_WR_RDMA_READ : DPDAT_WR_RDMA_WRITE,
				slot % k == k - 1);
		CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, wr, lens[l], &n),
				0);
		CU_ASSERT_EQUAL(n, lens[l]);
	}
	got = reap(wc, (int)(slot / k), 5000);
	CU_ASSERT_EQUAL(got, (int)(slot / k));
	for (int i = 0; i < got; i++, want += k) {
		CU_ASSERT_EQUAL(wc[i].wr_id, want + k - 1);
		CU_ASSERT_EQUAL(wc[i].status, DPDAT_WC_SUCCESS);
		CU_ASSERT_EQUAL(wc[i].opcode, (want + k - 1) % 3 == 1 ?
				DPDAT_WR_RDMA_READ : DPDAT_WR_RDMA_WRITE);
	}
	for (uint32_t s = 0; s < slot; s++) {
		bool ok = s % 3 == 1 ? slots_are(A.buf + (1u << 19), s, 1, 5) :
				       slots_are(B.buf, s, 1, 6);

		CU_ASSERT(ok);
	}
	disconnect_pair();
	drain_cqs();
}

/* An unsignalled WR that fails completes with its error; those behind it
 * are flushed, each with a completion too. */
static void
test_unsignalled_error(void)
{
	struct dpdat_send_wr wr[3];
	struct dpdat_sge sge[3];
	struct dpdat_wc wc[8];
	uint32_t n;
	int got;

	connect_pair(1024, 14);
	for (uint32_t i = 0; i < 3; i++)
		list_wr(&wr[i], &sge[i], i, DPDAT_WR_RDMA_WRITE, i == 2);
	sge[0].lkey = A.key ^ 0x5a5a00;	/* no such LMR */
	CU_ASSERT_EQUAL(dpdat_post_send_burst(A.qp, wr, 3, &n), 0);
	got = reap(wc, 3, 2000);
	CU_ASSERT_EQUAL(got, 3);
	if (got == 3) {
		CU_ASSERT_EQUAL(wc[0].wr_id, 0);
		CU_ASSERT_EQUAL(wc[0].status, DPDAT_WC_LOC_PROT_ERR);
		CU_ASSERT_EQUAL(wc[1].wr_id, 1);
		CU_ASSERT_EQUAL(wc[1].status, DPDAT_WC_WR_FLUSH_ERR);
		CU_ASSERT_EQUAL(wc[2].wr_id, 2);
		CU_ASSERT_EQUAL(wc[2].status, DPDAT_WC_WR_FLUSH_ERR);
	}
	disconnect_pair();
	drain_cqs();
}

/* ---- two threads posting lists to one QP ---- */

#define T_LISTS 48
#define T_LEN 8

struct poster {
	uint32_t id;
	int err;
};

/* wr_id: thread << 32 | WR number; all signalled so the order shows. */
static void *
poster_run(void *arg)
{
	struct poster *p = arg;
	struct dpdat_send_wr wr[T_LEN];
	struct dpdat_sge sge[T_LEN];
	uint32_t n, off;
	int ret;

	for (uint32_t l = 0; l < T_LISTS; l++) {
		for (uint32_t i = 0; i < T_LEN; i++) {
			list_wr(&wr[i], &sge[i], p->id * T_LEN + i,
				DPDAT_WR_RDMA_WRITE, true);
			wr[i].wr_id = (uint64_t)p->id << 32 | (l * T_LEN + i);
		}
		for (off = 0; off < T_LEN; off += n) {
			ret = dpdat_post_send_burst(A.qp, wr + off,
						    T_LEN - off, &n);
			if (ret != 0 && ret != -ENOMEM) {
				p->err = ret;
				return NULL;
			}
		}
	}
	return NULL;
}

static void
test_two_threads(void)
{
	struct poster p[2] = { { .id = 0 }, { .id = 1 } };
	pthread_t t[2];
	uint32_t next[2] = { 0, 0 };
	struct dpdat_wc wc[32];
	int got = 0, r;

	connect_pair(1024, 14);
	fill_slots(&A, 0, 2 * T_LEN, 9);
	for (int i = 0; i < 2; i++)
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, poster_run,
					       &p[i]) == 0);
	for (int it = 0; it < 200000 && got < 2 * T_LISTS * T_LEN; it++) {
		r = dpdat_cq_poll(A.cq, wc, 32);
		if (r <= 0) {
			run(1);
			continue;
		}
		for (int i = 0; i < r; i++) {
			uint32_t who = (uint32_t)(wc[i].wr_id >> 32);

			CU_ASSERT_EQUAL(wc[i].status, DPDAT_WC_SUCCESS);
			CU_ASSERT_FATAL(who < 2);
			/* each thread's WRs complete once, in its order */
			CU_ASSERT_EQUAL((uint32_t)wc[i].wr_id, next[who]);
			next[who]++;
		}
		got += r;
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(p[i].err, 0);
	}
	CU_ASSERT_EQUAL(got, 2 * T_LISTS * T_LEN);
	CU_ASSERT(slots_are(B.buf, 0, 2 * T_LEN, 9));
	disconnect_pair();
	drain_cqs();
}

int
post_suite_init(void)
{
	return A.dev != NULL && B.dev != NULL ? 0 : -1;
}

CU_TestInfo rc_post_tests[] = {
	{ "post list: arguments, n 0", test_args },
	{ "post list: QP not connected", test_not_rts },
	{ "post list: a bad WR inside, the prefix posted", test_bad_in_middle },
	{ "post list: queue full inside, as much as fits", test_queue_full },
	{ "post list: one WR in k signalled", test_selective_signalling },
	{ "post list: an unsignalled WR fails, completes", test_unsignalled_error },
	{ "post list: two threads, one QP", test_two_threads },
	CU_TEST_INFO_NULL,
};
