/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * RDMA atomics on the in-process rig (rig.h): compare-and-swap and
 * fetch-and-add, their frames (AtomicETH, AtomicAckETH), the responder's
 * checks (alignment, key, bounds, the atomic privilege), and duplicates
 * answered from the responder's resources, never executed twice, under
 * go-back-N and selective repeat.
 */

#include <errno.h>
#include <string.h>

#include <CUnit/Basic.h>

#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_qp.h>
#include "port_priv.h"
#include "roce.h"
#include "rig.h"

#define TGT_OFF	(64 * 1024)	/* the atomic region inside B's buffer */
#define TGT_LEN	4096
#define RES_OFF	(128 * 1024)	/* where A's results land */

static struct dpdat_lmr *atom_lmr;	/* B's, with the atomic privilege */
static uint32_t atom_key;

static uint64_t *
tgt(unsigned int i)
{
	return (uint64_t *)(B.buf + TGT_OFF) + i;
}

static uint64_t *
res(unsigned int i)
{
	return (uint64_t *)(A.buf + RES_OFF) + i;
}

int atomic_suite_init(void);
int atomic_suite_clean(void);

int
atomic_suite_init(void)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;

	if (A.dev == NULL || B.dev == NULL)
		return -1;
	d.virt.addr = B.buf + TGT_OFF;
	d.virt.length = TGT_LEN;
	atom_lmr = dpdat_lmr_create(B.pz, &d, DPDAT_MEM_PRIV_ALL |
				    DPDAT_MEM_PRIV_REMOTE_ATOMIC);
	if (atom_lmr == NULL || dpdat_lmr_query(atom_lmr, &li) != 0)
		return -1;
	atom_key = li.rmr_context;
	return 0;
}

int
atomic_suite_clean(void)
{
	return dpdat_lmr_free(atom_lmr);
}

/* An atomic WR from A to B's word i (byte offset boff from it), its
 * result in A's res(r). */
static int
post_atomic(enum dpdat_wr_opcode op, unsigned int i, uint64_t boff,
	    uint32_t rkey, uint64_t cmp_add, uint64_t swap, unsigned int r)
{
	struct dpdat_sge sge = { (uintptr_t)res(r), 8, A.key };
	struct dpdat_send_wr wr = { .wr_id = 1000 + r, .opcode = op,
		.flags = DPDAT_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
		.remote_addr = (uintptr_t)tgt(i) + boff, .rkey = rkey,
		.compare_add = cmp_add, .swap = swap };

	return dpdat_post_send(A.qp, &wr);
}

static void
expect_wc(enum dpdat_wc_status status, enum dpdat_wr_opcode op,
	  uint64_t wr_id)
{
	struct dpdat_wc wc;

	CU_ASSERT_FATAL(wait_wc(&A, &wc, 2000000) == 0);
	CU_ASSERT_EQUAL(wc.status, status);
	CU_ASSERT_EQUAL(wc.opcode, op);
	CU_ASSERT_EQUAL(wc.wr_id, wr_id);
	if (status == DPDAT_WC_SUCCESS)
		CU_ASSERT_EQUAL(wc.byte_len, 8);
}

/* Compare-and-swap that matches, one that does not, fetch-and-add; the
 * frames as IBTA lays them out. */
static void
test_cas_faa(void)
{
	const struct roce_atometh *ae;
	const struct roce_atomackh *ack;
	struct rte_mbuf *m = NULL;

	connect_pair(1024, 14);
	*tgt(0) = 0x1122334455667788ull;
	*res(0) = *res(1) = *res(2) = 0;
	CU_ASSERT_FATAL(post_atomic(DPDAT_WR_ATOMIC_CMP_SWP, 0, 0, atom_key,
				    0x1122334455667788ull, 42, 0) == 0);
	/* the request on the wire */
	dpdat_dev_progress(A.dev);
	CU_ASSERT_FATAL(rte_ring_count(a2b) == 1);
	CU_ASSERT_FATAL(rte_ring_dequeue(a2b, (void **)&m) == 0);
	CU_ASSERT_EQUAL(rte_pktmbuf_mtod_offset(m, struct roce_bth *,
				PORT_HDR_LEN)->opcode, ROCE_OP_CMP_SWAP);
	ae = rte_pktmbuf_mtod_offset(m, const struct roce_atometh *,
				     PORT_HDR_LEN + sizeof(struct roce_bth));
	CU_ASSERT_EQUAL(rte_be_to_cpu_64(ae->va), (uintptr_t)tgt(0));
	CU_ASSERT_EQUAL(rte_be_to_cpu_32(ae->rkey), atom_key);
	CU_ASSERT_EQUAL(rte_be_to_cpu_64(ae->swap_add), 42);
	CU_ASSERT_EQUAL(rte_be_to_cpu_64(ae->compare), 0x1122334455667788ull);
	CU_ASSERT_EQUAL(rte_pktmbuf_pkt_len(m), PORT_HDR_LEN +
			sizeof(struct roce_bth) + 28 + ROCE_ICRC_LEN);
	CU_ASSERT_FATAL(rte_ring_enqueue(a2b, m) == 0);
	/* the answer on the wire */
	dpdat_dev_progress(B.dev);
	CU_ASSERT_FATAL(rte_ring_dequeue(b2a, (void **)&m) == 0);
	CU_ASSERT_EQUAL(rte_pktmbuf_mtod_offset(m, struct roce_bth *,
				PORT_HDR_LEN)->opcode, ROCE_OP_ATOMIC_ACK);
	ack = rte_pktmbuf_mtod_offset(m, const struct roce_atomackh *,
				      PORT_HDR_LEN + sizeof(struct roce_bth) +
				      sizeof(struct roce_aeth));
	CU_ASSERT_EQUAL(rte_be_to_cpu_64(ack->orig), 0x1122334455667788ull);
	CU_ASSERT_FATAL(rte_ring_enqueue(b2a, m) == 0);
	expect_wc(DPDAT_WC_SUCCESS, DPDAT_WR_ATOMIC_CMP_SWP, 1000);
	CU_ASSERT_EQUAL(*tgt(0), 42);
	CU_ASSERT_EQUAL(*res(0), 0x1122334455667788ull);	/* host order */

	/* no match: nothing swapped, the value returned */
	CU_ASSERT_FATAL(post_atomic(DPDAT_WR_ATOMIC_CMP_SWP, 0, 0, atom_key,
				    41, 7, 1) == 0);
	expect_wc(DPDAT_WC_SUCCESS, DPDAT_WR_ATOMIC_CMP_SWP, 1001);
	CU_ASSERT_EQUAL(*tgt(0), 42);
	CU_ASSERT_EQUAL(*res(1), 42);

	/* fetch-and-add wraps at 64 bits */
	*tgt(1) = UINT64_MAX - 1;
	CU_ASSERT_FATAL(post_atomic(DPDAT_WR_ATOMIC_FETCH_ADD, 1, 0, atom_key,
				    3, 0, 2) == 0);
	expect_wc(DPDAT_WC_SUCCESS, DPDAT_WR_ATOMIC_FETCH_ADD, 1002);
	CU_ASSERT_EQUAL(*tgt(1), 1);
	CU_ASSERT_EQUAL(*res(2), UINT64_MAX - 1);
	disconnect_pair();
}

/* READs, atomics and WRITEs mixed: answers in order, every value right. */
static void
test_mixed_with_reads(void)
{
	struct dpdat_wc wc;
	unsigned int i;

	connect_pair(1024, 14);
	*tgt(2) = 0;
	memset(B.buf + 8192, 0x5a, 3000);
	memset(A.buf, 0, 3000);
	for (i = 0; i < 8; i++) {
		CU_ASSERT_FATAL(post_atomic(DPDAT_WR_ATOMIC_FETCH_ADD, 2, 0,
					    atom_key, 1, 0, i) == 0);
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_READ, i * 300, 300,
				     (uintptr_t)B.buf + 8192 + i * 300,
				     B.key) == 0);
	}
	for (i = 0; i < 16; i++) {
		CU_ASSERT_FATAL(wait_wc(&A, &wc, 2000000) == 0);
		CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
		CU_ASSERT_EQUAL(wc.opcode, i % 2 ? DPDAT_WR_RDMA_READ :
				DPDAT_WR_ATOMIC_FETCH_ADD);
	}
	CU_ASSERT_EQUAL(*tgt(2), 8);
	for (i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(*res(i), i);	/* each saw the one before */
	CU_ASSERT_EQUAL(A.buf[2399], 0x5a);
	disconnect_pair();
}

/* What the responder refuses, and what posting refuses. */
static void
test_errors(void)
{
	struct dpdat_sge sge = { (uintptr_t)res(0), 8, A.key };
	struct dpdat_send_wr wr = { .opcode = DPDAT_WR_ATOMIC_FETCH_ADD,
		.sg_list = &sge, .num_sge = 1,
		.remote_addr = (uintptr_t)tgt(0), .rkey = atom_key };
	struct dpdat_sge two[2] = { sge, sge };
	static const struct {
		uint64_t boff;
		int key;		/* 0: atom_key, 1: B.key (no atomic) */
		enum dpdat_wc_status st;
	} cases[] = {
		{ 4, 0, DPDAT_WC_REM_INV_REQ_ERR },	/* misaligned */
		{ 0, 1, DPDAT_WC_REM_ACCESS_ERR },	/* no privilege */
		{ TGT_LEN, 0, DPDAT_WC_REM_ACCESS_ERR },	/* past the end */
		{ (uint64_t)-8, 0, DPDAT_WC_REM_ACCESS_ERR },	/* before */
	};

	/* posting: one SGE of 8 bytes */
	connect_pair(1024, 14);
	*tgt(0) = 5;
	sge.length = 4;
	CU_ASSERT_EQUAL(dpdat_post_send(A.qp, &wr), -EINVAL);
	sge.length = 8;
	wr.num_sge = 0;
	CU_ASSERT_EQUAL(dpdat_post_send(A.qp, &wr), -EINVAL);
	wr.num_sge = 2;
	wr.sg_list = two;
	CU_ASSERT_EQUAL(dpdat_post_send(A.qp, &wr), -EINVAL);
	wr.opcode = (enum dpdat_wr_opcode)(0x100 + DPDAT_WR_ATOMIC_CMP_SWP);
	wr.num_sge = 1;
	CU_ASSERT_EQUAL(dpdat_post_send(A.qp, &wr), -EINVAL);
	/* the result buffer must be writable at once: the peer would
	 * execute the atomic before the answer failed to land */
	wr.opcode = DPDAT_WR_ATOMIC_FETCH_ADD;
	wr.sg_list = &sge;
	sge.lkey = A.key + 1;
	CU_ASSERT_EQUAL(dpdat_post_send(A.qp, &wr), -EINVAL);
	sge.lkey = A.key;
	sge.addr = (uintptr_t)A.buf + (1u << 20) - 4;	/* past the end */
	CU_ASSERT_EQUAL(dpdat_post_send(A.qp, &wr), -EINVAL);
	run(4);
	CU_ASSERT_EQUAL(*tgt(0), 5);	/* nothing was sent */
	disconnect_pair();

	for (size_t i = 0; i < RTE_DIM(cases); i++) {
		connect_pair(1024, 14);
		*tgt(0) = 5;
		CU_ASSERT_FATAL(post_atomic(DPDAT_WR_ATOMIC_FETCH_ADD, 0,
				cases[i].boff, cases[i].key ? B.key : atom_key,
				1, 0, 0) == 0);
		expect_wc(cases[i].st, DPDAT_WR_ATOMIC_FETCH_ADD, 1000);
		CU_ASSERT_EQUAL(*tgt(0), 5);	/* untouched */
		drain_cqs();
		disconnect_pair();
	}
}

/* The answer lost, or the request duplicated: the responder answers the
 * repeat with the value it kept and never adds twice. */
static void
dup_case(uint8_t ext)
{
	struct dpdat_qp_stats st;
	struct rte_mbuf *m = NULL, *copy, *forged;
	struct roce_atometh *other;
	uint64_t replays;
	uint32_t icrc;

	connect_pair_ext(1024, 8, ext);		/* 1 ms timeout */
	*tgt(3) = 100;
	/* 1: the request arrives twice */
	CU_ASSERT_FATAL(post_atomic(DPDAT_WR_ATOMIC_FETCH_ADD, 3, 0, atom_key,
				    10, 0, 0) == 0);
	dpdat_dev_progress(A.dev);
	CU_ASSERT_FATAL(rte_ring_dequeue(a2b, (void **)&m) == 0);
	copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	forged = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	CU_ASSERT_FATAL(copy != NULL && forged != NULL);
	other = rte_pktmbuf_mtod_offset(forged, struct roce_atometh *,
					PORT_HDR_LEN + sizeof(struct roce_bth));
	CU_ASSERT(rte_ring_enqueue(a2b, m) == 0);
	CU_ASSERT(rte_ring_enqueue(a2b, copy) == 0);
	expect_wc(DPDAT_WC_SUCCESS, DPDAT_WR_ATOMIC_FETCH_ADD, 1000);
	CU_ASSERT_EQUAL(*res(0), 100);
	CU_ASSERT_EQUAL(*tgt(3), 110);
	/* a "duplicate" at that PSN naming another word is someone else's:
	 * not answered (the value kept is not handed out) */
	dpdat_qp_stats(B.qp, &st);
	replays = st.atomic_replays;
	other->va = rte_cpu_to_be_64(rte_be_to_cpu_64(other->va) + 8);
	icrc = roce_icrc_mbuf(forged, sizeof(struct rte_ether_hdr));
	memcpy(rte_pktmbuf_mtod_offset(forged, uint8_t *,
		rte_pktmbuf_pkt_len(forged) - ROCE_ICRC_LEN), &icrc, 4);
	CU_ASSERT(rte_ring_enqueue(a2b, forged) == 0);
	run(4);
	dpdat_qp_stats(B.qp, &st);
	CU_ASSERT_EQUAL(st.atomic_replays, replays);
	CU_ASSERT(st.dup_rcvd >= 1);

	/* 2: the answer is lost; the requester asks again */
	CU_ASSERT_FATAL(post_atomic(DPDAT_WR_ATOMIC_FETCH_ADD, 3, 0, atom_key,
				    10, 0, 1) == 0);
	dpdat_dev_progress(A.dev);
	dpdat_dev_progress(B.dev);
	CU_ASSERT_FATAL(rte_ring_dequeue(b2a, (void **)&m) == 0);
	CU_ASSERT_EQUAL(rte_pktmbuf_mtod_offset(m, struct roce_bth *,
				PORT_HDR_LEN)->opcode, ROCE_OP_ATOMIC_ACK);
	rte_pktmbuf_free(m);		/* the wire ate it */
	CU_ASSERT_EQUAL(*tgt(3), 120);
	expect_wc(DPDAT_WC_SUCCESS, DPDAT_WR_ATOMIC_FETCH_ADD, 1001);
	CU_ASSERT_EQUAL(*res(1), 110);
	CU_ASSERT_EQUAL(*tgt(3), 120);	/* once */
	dpdat_qp_stats(B.qp, &st);
	CU_ASSERT_EQUAL(st.atomics, 2);
	CU_ASSERT(st.atomic_replays >= 1);	/* the lost answer's */
	disconnect_pair();
}

static void
test_dup_gbn(void)
{
	dup_case(0);
}

static void
test_dup_sr(void)
{
	dup_case(DPDAT_QP_EXT_SACK);
}

/* The answer to an atomic lost behind later WRITEs: the WRITEs complete
 * only after it (completions in order), the word changed once. */
static void
test_lost_answer_then_writes(void)
{
	struct rte_mbuf *pkts[16];
	struct dpdat_wc wc;
	unsigned int n, i, kept = 0;

	connect_pair_ext(1024, 8, DPDAT_QP_EXT_SACK);
	*tgt(4) = 0;
	CU_ASSERT_FATAL(post_atomic(DPDAT_WR_ATOMIC_CMP_SWP, 4, 0, atom_key,
				    0, 9, 0) == 0);
	for (i = 0; i < 3; i++)
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 100,
				     (uintptr_t)B.buf + 16384, B.key) == 0);
	dpdat_dev_progress(A.dev);
	dpdat_dev_progress(B.dev);
	n = rte_ring_dequeue_burst(b2a, (void **)pkts, 16, NULL);
	for (i = 0; i < n; i++) {
		if (rte_pktmbuf_mtod_offset(pkts[i], struct roce_bth *,
				PORT_HDR_LEN)->opcode == ROCE_OP_ATOMIC_ACK)
			rte_pktmbuf_free(pkts[i]);
		else
			pkts[kept++] = pkts[i];
	}
	CU_ASSERT_EQUAL(n, kept + 1);
	if (kept != 0)
		CU_ASSERT(rte_ring_enqueue_bulk(b2a, (void **)pkts, kept,
						NULL) == kept);
	expect_wc(DPDAT_WC_SUCCESS, DPDAT_WR_ATOMIC_CMP_SWP, 1000);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_FATAL(wait_wc(&A, &wc, 2000000) == 0);
		CU_ASSERT_EQUAL(wc.opcode, DPDAT_WR_RDMA_WRITE);
		CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(*res(0), 0);
	CU_ASSERT_EQUAL(*tgt(4), 9);
	disconnect_pair();
}

/* An LMR's and an RMR's atomic privilege: it needs local write. */
static void
test_privilege_rules(void)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_triplet seg;
	struct dpdat_lmr_info li;
	struct dpdat_lmr *ro, *rw;
	struct dpdat_rmr *rmr;

	d.virt.addr = B.buf + TGT_OFF;
	d.virt.length = TGT_LEN;
	CU_ASSERT_PTR_NULL(dpdat_lmr_create(B.pz, &d,
		DPDAT_MEM_PRIV_LOCAL_READ | DPDAT_MEM_PRIV_REMOTE_ATOMIC));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	ro = dpdat_lmr_create(B.pz, &d, DPDAT_MEM_PRIV_LOCAL_READ);
	rw = dpdat_lmr_create(B.pz, &d, DPDAT_MEM_PRIV_LOCAL_READ |
			      DPDAT_MEM_PRIV_LOCAL_WRITE);
	rmr = dpdat_rmr_create(B.pz);
	CU_ASSERT_FATAL(ro != NULL && rw != NULL && rmr != NULL);
	dpdat_lmr_query(ro, &li);
	seg = (struct dpdat_lmr_triplet){ .lmr_context = li.lmr_context,
		.virtual_address = (uintptr_t)B.buf + TGT_OFF,
		.segment_length = 8 };
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg,
			DPDAT_MEM_PRIV_REMOTE_ATOMIC, NULL), -EACCES);
	dpdat_lmr_query(rw, &li);
	seg.lmr_context = li.lmr_context;
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg,
			DPDAT_MEM_PRIV_REMOTE_ATOMIC, NULL), 0);
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, 0x80, NULL), -EINVAL);
	seg.segment_length = 0;
	CU_ASSERT_EQUAL(dpdat_rmr_bind(rmr, &seg, 0, NULL), 0);
	CU_ASSERT_EQUAL(dpdat_rmr_free(rmr), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(ro), 0);
	CU_ASSERT_EQUAL(dpdat_lmr_free(rw), 0);
}

CU_TestInfo rc_atomic_tests[] = {
	{ "compare-and-swap, fetch-and-add, their frames", test_cas_faa },
	{ "atomics among READs, in order", test_mixed_with_reads },
	{ "misaligned, no privilege, out of bounds, bad WRs", test_errors },
	{ "duplicate and lost answer: once (go-back-N)", test_dup_gbn },
	{ "duplicate and lost answer: once (selective repeat)", test_dup_sr },
	{ "a lost answer holds later WRITEs' completions",
	  test_lost_answer_then_writes },
	{ "the atomic privilege needs local write", test_privilege_rules },
	CU_TEST_INFO_NULL,
};
