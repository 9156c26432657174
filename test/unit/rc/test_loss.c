/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Loss recovery on the in-process rig (rig.h), with scripted drops: the
 * round-trip estimator alone; then, for go-back-N and selective repeat,
 * exactly the packet lost, what goes again and what recovers it (a NAK, a
 * SACK, a probe), and that no timeout was needed where the protocol lets
 * a faster mechanism act.
 */

#include <stdbool.h>
#include <string.h>

#include <CUnit/Basic.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <dpdat/dpdat_cm.h>
#include "port_priv.h"
#include "rc_priv.h"
#include "rig.h"
#include "rtt.h"

/* ---- the estimator ---- */

static void
test_rtt_estimator(void)
{
	struct rc_rtt r;

	rc_rtt_init(&r, 100, 100000, 5000);
	CU_ASSERT_EQUAL(r.rto, 5000);
	CU_ASSERT_EQUAL(r.srtt, 0);
	CU_ASSERT_EQUAL(rc_rtt_pto(&r), 2500);	/* half the first guess */
	/* RFC 6298: srtt = R, rttvar = R / 2, rto = R + 4 R / 2 */
	rc_rtt_sample(&r, 1000);
	CU_ASSERT_EQUAL(r.srtt, 1000);
	CU_ASSERT_EQUAL(r.rttvar, 500);
	CU_ASSERT_EQUAL(r.rto, 3000);
	CU_ASSERT_EQUAL(rc_rtt_pto(&r), 2000);
	/* the same sample again and again: the variance fades, the timeout
	 * comes down to the round trip, never under the floor */
	for (int i = 0; i < 100; i++)
		rc_rtt_sample(&r, 1000);
	CU_ASSERT_EQUAL(r.srtt, 1000);
	CU_ASSERT(r.rto >= 1000 && r.rto < 1100);
	for (int i = 0; i < 200; i++)
		rc_rtt_sample(&r, 10);
	CU_ASSERT(r.srtt < 20);
	CU_ASSERT_EQUAL(r.rto, 100);		/* the floor */
	CU_ASSERT_EQUAL(rc_rtt_pto(&r), 100 / 8 > 2 * r.srtt ? 100 / 8 :
			2 * r.srtt);
	/* expiries double it up to the ceiling (the consumer's timeout) */
	rc_rtt_backoff(&r);
	CU_ASSERT_EQUAL(r.rto, 200);
	for (int i = 0; i < 20; i++)
		rc_rtt_backoff(&r);
	CU_ASSERT_EQUAL(r.rto, 100000);
	CU_ASSERT(rc_rtt_pto(&r) <= r.rto);
	/* progress ends the backoff, a sample too */
	rc_rtt_progress(&r);
	CU_ASSERT_EQUAL(r.backoff, 0);
	CU_ASSERT_EQUAL(r.rto, 100);
	rc_rtt_sample(&r, 1000000);		/* a huge one: the ceiling */
	CU_ASSERT_EQUAL(r.rto, 100000);
	/* a floor above the ceiling is the ceiling */
	rc_rtt_init(&r, 500, 300, 0);
	CU_ASSERT_EQUAL(r.rto, 300);
	rc_rtt_sample(&r, 0);			/* never divides by nothing */
	CU_ASSERT_EQUAL(r.srtt, 1);
}

/* ---- frames between A and B ---- */

struct frame {
	uint8_t op;
	uint32_t psn;
	bool ackreq;
	uint32_t paylen;	/* after the extension headers */
	uint32_t dlen;		/* READ request: its RETH length */
	uint8_t syn;		/* ACK: the AETH syndrome */
};

static bool
frame_parse(const struct rte_mbuf *m, struct frame *f)
{
	const struct rte_ether_hdr *eth =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	struct roce_bth bth;
	struct roce_reth reth;
	struct roce_aeth aeth;
	uint32_t len = rte_pktmbuf_pkt_len(m);

	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    len < PORT_HDR_LEN + sizeof(bth) + ROCE_ICRC_LEN)
		return false;
	rc_mbuf_copy(m, PORT_HDR_LEN, (uint8_t *)&bth, sizeof(bth));
	if (roce_bth_qpn(&bth) == ROCE_QP1)
		return false;
	f->op = bth.opcode;
	f->psn = roce_bth_psn(&bth);
	f->ackreq = rte_be_to_cpu_32(bth.apsn) & ROCE_BTH_ACKREQ;
	f->paylen = len - PORT_HDR_LEN - sizeof(bth) - roce_ext_len(f->op) -
		    roce_bth_pad(&bth) - ROCE_ICRC_LEN;
	f->dlen = 0;
	f->syn = 0;
	if (f->op == ROCE_OP_READ_REQUEST) {
		rc_mbuf_copy(m, PORT_HDR_LEN + sizeof(bth), (uint8_t *)&reth,
			     sizeof(reth));
		f->dlen = rte_be_to_cpu_32(reth.dlen);
	}
	if (f->op == ROCE_OP_ACK) {
		rc_mbuf_copy(m, PORT_HDR_LEN + sizeof(bth), (uint8_t *)&aeth,
			     sizeof(aeth));
		f->syn = (uint8_t)(rte_be_to_cpu_32(aeth.smsn) >> 24);
	}
	return true;
}

/* A script decides the fate of each frame: false drops it. */
typedef bool (*keep_fn)(const struct frame *f, bool from_a, void *arg);

static void
filter(struct rte_ring *r, bool from_a, keep_fn keep, void *arg)
{
	struct rte_mbuf *pkts[256], *kept[256];
	struct frame f;
	unsigned int n, i, k = 0;

	n = rte_ring_dequeue_burst(r, (void **)pkts, 256, NULL);
	for (i = 0; i < n; i++) {
		if (!frame_parse(pkts[i], &f) || keep(&f, from_a, arg))
			kept[k++] = pkts[i];
		else
			rte_pktmbuf_free(pkts[i]);
	}
	if (k != 0)
		rte_ring_enqueue_bulk(r, (void **)kept, k, NULL);
}

/* Rounds of A then B, the script judging every frame, until e has a
 * completion or ms pass (the probe waits real time). 0, or -1. */
static int
xwait(struct end *e, struct dpdat_wc *wc, unsigned int ms, keep_fn keep,
      void *arg)
{
	const uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() * ms / 1000;

	while (rte_get_tsc_cycles() < end) {
		if (dpdat_cq_poll(e->cq, wc, 1) == 1)
			return 0;
		dpdat_dev_progress(A.dev);
		filter(a2b, true, keep, arg);
		dpdat_dev_progress(B.dev);
		filter(b2a, false, keep, arg);
	}
	return -1;
}

/* What a script saw and did. */
struct script {
	uint32_t first;		/* the PSN of the message's first packet */
	uint32_t drop_k;	/* drop packet first + drop_k from A, once */
	int dropped;
	int drop_naks;		/* B's NAKs to drop */
	bool drop_acks;		/* drop every ACK of B's while set */
	uint32_t drop_resp_k;	/* READ: drop response first + k, once */
	bool drop_req;		/* drop A's first READ request */
	uint32_t drop_lo, drop_hi; /* READ: drop responses first + lo..hi
				    * the first time each comes */
	uint8_t *resp_seen;	/* by k: came once */
	/* seen */
	int naks, sacks, plain_naks, acks;
	int reqs;		/* READ requests from A */
	struct frame req[8];
	int data_from_a;
};

static bool
keep_script(const struct frame *f, bool from_a, void *arg)
{
	struct script *s = arg;
	const uint32_t k = (uint32_t)roce_psn_diff(f->psn, s->first);

	if (from_a) {
		if (f->op == ROCE_OP_READ_REQUEST) {
			if (s->reqs < 8)
				s->req[s->reqs] = *f;
			return s->reqs++ != 0 || !s->drop_req;
		}
		s->data_from_a++;
		if (k == s->drop_k && s->dropped == 0) {
			s->dropped = 1;
			return false;
		}
		return true;
	}
	if (f->op >= ROCE_OP_READ_RESP_FIRST && f->op <= ROCE_OP_READ_RESP_ONLY) {
		if (s->resp_seen != NULL && k >= s->drop_lo &&
		    k <= s->drop_hi && !s->resp_seen[k]) {
			s->resp_seen[k] = 1;
			return false;
		}
		if (k == s->drop_resp_k && s->dropped == 0) {
			s->dropped = 1;
			return false;
		}
		return true;
	}
	if (f->op != ROCE_OP_ACK)
		return true;
	if (f->syn == ROCE_AETH_NAK_PSN) {
		s->naks++;
		if (f->paylen == RC_SACK_LEN)
			s->sacks++;
		else if (f->paylen == 0)
			s->plain_naks++;
		if (s->drop_naks > 0) {
			s->drop_naks--;
			return false;
		}
		return true;
	}
	s->acks++;
	return !s->drop_acks;
}

static void
fill(uint8_t *p, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

static uint32_t
first_psn(struct dpdat_qp *qp)
{
	return qp->req.psn;		/* the next PSN the requester will use */
}

/* A WRITE of len with packet drop_k lost once; returns the stats of A. */
static void
write_one_lost(uint8_t ext, uint32_t len, uint32_t drop_k, struct script *s,
	       struct dpdat_qp_stats *sa)
{
	struct dpdat_wc wc;

	connect_pair_ext(1024, 14, ext);
	s->first = first_psn(A.qp);
	s->drop_k = drop_k;
	fill(A.buf, len, (uint8_t)drop_k);
	memset(B.buf, 0, len);
	CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, len,
			     (uintptr_t)B.buf, B.key) == 0);
	CU_ASSERT_FATAL(xwait(&A, &wc, 2000, keep_script, s) == 0);
	CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(A.buf, B.buf, len), 0);
	CU_ASSERT_EQUAL(s->dropped, 1);
	CU_ASSERT_EQUAL(dpdat_cq_poll(A.cq, &wc, 1), 0);	/* only once */
	dpdat_qp_stats(A.qp, sa);
}

/* Selective repeat: a packet lost in the middle goes again, alone, on the
 * responder's SACK; no probe, no timeout. */
static void
test_sr_middle_loss(void)
{
	struct script s = { .drop_resp_k = ~0u };
	struct dpdat_qp_stats sa, sb;

	write_one_lost(DPDAT_QP_EXT_SACK, 8192, 3, &s, &sa);
	dpdat_qp_stats(B.qp, &sb);
	CU_ASSERT(s.sacks >= 1);
	CU_ASSERT_EQUAL(s.plain_naks, 0);
	CU_ASSERT_EQUAL(sa.tx_resent, 1);
	CU_ASSERT_EQUAL(sa.sack_resent, 1);
	CU_ASSERT_EQUAL(sa.timeouts, 0);
	CU_ASSERT_EQUAL(sa.probes, 0);
	CU_ASSERT_EQUAL(sb.held, 4);		/* packets 4..7 waited */
	CU_ASSERT_EQUAL(s.data_from_a, 9);
	disconnect_pair();
}

/* Go-back-N (a peer that is not dpdat): the responder's NAK carries no
 * bitmap and the requester resends from the gap on. */
static void
test_gbn_middle_loss(void)
{
	struct script s = { .drop_resp_k = ~0u };
	struct dpdat_qp_stats sa, sb;

	write_one_lost(0, 8192, 3, &s, &sa);
	dpdat_qp_stats(B.qp, &sb);
	CU_ASSERT(s.naks >= 1);
	CU_ASSERT_EQUAL(s.sacks, 0);
	CU_ASSERT_EQUAL(sa.tx_resent, 5);	/* packets 3..7 */
	CU_ASSERT_EQUAL(sa.sack_resent, 0);
	CU_ASSERT_EQUAL(sa.timeouts, 0);
	CU_ASSERT_EQUAL(sb.held, 0);
	disconnect_pair();
}

/* The last packet lost: nothing follows to reveal it; the tail probe finds
 * it after about two round trips, not a timeout. Both modes. */
static void
test_tail_loss(void)
{
	for (uint8_t ext = 0; ext <= DPDAT_QP_EXT_SACK; ext++) {
		struct script s = { .drop_resp_k = ~0u };
		struct dpdat_qp_stats sa;

		write_one_lost(ext, 4096, 3, &s, &sa);
		CU_ASSERT_EQUAL(sa.probes, 1);
		CU_ASSERT_EQUAL(sa.timeouts, 0);
		/* go-back-N: the last; selective repeat: the first and the
		 * last (the first went through: a duplicate) */
		CU_ASSERT_EQUAL(sa.tx_resent, ext ? 2 : 1);
		disconnect_pair();
	}
}

/* A packet lost and the responder's first NAK too: between dpdat peers the
 * NAK (or SACK) comes again for the next packet asking for an ACK, with no
 * timeout; towards a plain RoCEv2 peer one NAK a gap, the probe and the
 * timeout recover. */
static void
test_lost_nak(void)
{
	static const uint8_t exts[] = { DPDAT_QP_EXT_NAK_REPEAT,
		DPDAT_QP_EXT_SACK | DPDAT_QP_EXT_NAK_REPEAT, 0 };

	for (unsigned int i = 0; i < RTE_DIM(exts); i++) {
		struct script s = { .drop_resp_k = ~0u, .drop_naks = 1 };
		struct dpdat_qp_stats sa;

		write_one_lost(exts[i], 32 * 1024, 2, &s, &sa);
		if (exts[i] == 0) {
			CU_ASSERT_EQUAL(s.naks, 1);	/* never repeated */
			CU_ASSERT(sa.probes + sa.timeouts >= 1);
		} else {
			CU_ASSERT(s.naks >= 2);
			CU_ASSERT_EQUAL(sa.timeouts, 0);
			CU_ASSERT_EQUAL(sa.tx_resent, (exts[i] &
					DPDAT_QP_EXT_SACK) ? 1 : 30);
		}
		disconnect_pair();
	}
}

/* Every ACK of a message lost: the probe resends the last packet, the
 * responder sees a duplicate and acknowledges again. */
static void
test_lost_acks(void)
{
	for (uint8_t ext = 0; ext <= DPDAT_QP_EXT_SACK; ext++) {
		struct script s = { .drop_k = ~0u, .drop_resp_k = ~0u,
				    .drop_acks = true };
		struct dpdat_qp_stats sa, sb;
		struct dpdat_wc wc;

		connect_pair_ext(1024, 14, ext);
		s.first = first_psn(A.qp);
		fill(A.buf, 4096, 1);
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 4096,
				     (uintptr_t)B.buf, B.key) == 0);
		/* B takes the whole message, its ACKs vanish */
		CU_ASSERT(xwait(&A, &wc, 2, keep_script, &s) != 0);
		CU_ASSERT(s.acks >= 1);
		CU_ASSERT_EQUAL(memcmp(A.buf, B.buf, 4096), 0);
		s.drop_acks = false;
		CU_ASSERT_FATAL(xwait(&A, &wc, 2000, keep_script, &s) == 0);
		CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
		dpdat_qp_stats(A.qp, &sa);
		dpdat_qp_stats(B.qp, &sb);
		CU_ASSERT(sa.probes >= 1);
		CU_ASSERT_EQUAL(sa.timeouts, 0);
		CU_ASSERT(sb.dup_rcvd >= 1);
		disconnect_pair();
	}
}

/* The responder's last ACK lost, then its QP goes (a program that exits
 * once it has what it waited for, as ibv_rc_pingpong does; a DREQ): the
 * QP repeats its last ACK as it goes, and the requester's WR completes
 * instead of retrying into nothing. */
static void
test_last_ack_repeated(void)
{
	struct script s = { .drop_k = ~0u, .drop_resp_k = ~0u,
			    .drop_acks = true };
	struct dpdat_wc wc;

	connect_pair(1024, 14);
	s.first = first_psn(A.qp);
	fill(A.buf, 256, 5);
	CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 256,
			     (uintptr_t)B.buf, B.key) == 0);
	/* until B has acknowledged (its ACKs dropped): a second at most */
	for (int i = 0; i < 500 && s.acks == 0; i++)
		CU_ASSERT(xwait(&A, &wc, 2, keep_script, &s) != 0);
	CU_ASSERT_FATAL(s.acks >= 1);
	CU_ASSERT_EQUAL(memcmp(A.buf, B.buf, 256), 0);
	CU_ASSERT(dpdat_qp_free(B.qp) == 0);
	B.qp = NULL;
	/* the repeat is on the wire already: A's next round takes it */
	s.drop_acks = false;
	CU_ASSERT_FATAL(xwait(&A, &wc, 2000, keep_script, &s) == 0);
	CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
	CU_ASSERT(dpdat_qp_free(A.qp) == 0);
	A.qp = NULL;
	run(4);
}

/* Mark the RoCEv2 frames waiting in r CE, as a RED or fq_codel queue with
 * ECN does, each first checked to leave ECT(0) (DPDAT_ECN's default);
 * only_op: just frames of that opcode (0: all). Returns how many. */
static unsigned int
mark_ce(struct rte_ring *r, uint8_t only_op)
{
	struct rte_mbuf *m[64];
	struct rte_ipv4_hdr *ip;
	struct roce_bth b;
	unsigned int n, i, k = 0;

	n = rte_ring_dequeue_burst(r, (void **)m, RTE_DIM(m), NULL);
	for (i = 0; i < n; i++) {
		ip = rte_pktmbuf_mtod_offset(m[i], struct rte_ipv4_hdr *,
					     sizeof(struct rte_ether_hdr));
		rc_mbuf_copy(m[i], PORT_HDR_LEN, (uint8_t *)&b, sizeof(b));
		if (ip->next_proto_id != IPPROTO_UDP ||
		    (only_op != 0 && b.opcode != only_op))
			continue;
		/* data ECT(0) as the port says, CNPs Not-ECT */
		CU_ASSERT_EQUAL(ip->type_of_service & ROCE_ECN_MASK,
				b.opcode == ROCE_OP_CNP ? 0 : ROCE_ECN_ECT0);
		ip->type_of_service |= ROCE_ECN_CE;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		k++;
	}
	if (n != 0)
		rte_ring_enqueue_bulk(r, (void **)m, n, NULL);
	return k;
}

/* The CNP waiting in b2a, byte for byte (Annex A17, as RoCE NICs send
 * it): opcode 0x81, no SE/M/pad/TVer, default P_Key, BECN, A's QPN, no
 * AckReq, PSN 0, 16 zero bytes, Not-ECT. */
static void
check_cnp(uint32_t qpn)
{
	static const uint8_t zero[ROCE_CNP_LEN];
	uint8_t want[12] = { ROCE_OP_CNP, 0, 0xff, 0xff, ROCE_BTH_BECN,
			     (uint8_t)(qpn >> 16), (uint8_t)(qpn >> 8),
			     (uint8_t)qpn, 0, 0, 0, 0 };
	uint8_t got[12 + ROCE_CNP_LEN];
	struct rte_mbuf *m[16];
	unsigned int n, i, cnps = 0;

	/* beside the ACK of the WRITE */
	n = rte_ring_dequeue_burst(b2a, (void **)m, RTE_DIM(m), NULL);
	for (i = 0; i < n; i++) {
		rc_mbuf_copy(m[i], PORT_HDR_LEN, got, 1);
		if (got[0] != ROCE_OP_CNP)
			continue;
		cnps++;
		CU_ASSERT_EQUAL(rte_pktmbuf_pkt_len(m[i]),
				PORT_HDR_LEN + sizeof(got) + ROCE_ICRC_LEN);
		rc_mbuf_copy(m[i], PORT_HDR_LEN, got, sizeof(got));
		CU_ASSERT_EQUAL(memcmp(got, want, sizeof(want)), 0);
		CU_ASSERT_EQUAL(memcmp(got + 12, zero, ROCE_CNP_LEN), 0);
		CU_ASSERT_EQUAL(rte_pktmbuf_mtod_offset(m[i],
				struct rte_ipv4_hdr *,
				sizeof(struct rte_ether_hdr))->type_of_service &
				ROCE_ECN_MASK, 0);
	}
	CU_ASSERT_EQUAL(cnps, 1);
	if (n != 0)
		rte_ring_enqueue_bulk(b2a, (void **)m, n, NULL);
}

/* ECN, both ports marking ECT(0): 16 of A's WRITEs marked CE on the way:
 * B counts them and answers the burst with one CNP (at most one a QP in
 * 50 us; a hiccup of the machine may let a second or third through),
 * which A counts. 100 us later the next CE frame gets a CNP of its own,
 * checked byte for byte; a CNP marked CE gets none (no echo). */
static void
test_ecn_cnp(void)
{
	struct dpdat_port *pa = dpdat_dev_port(A.dev);
	struct dpdat_port *pb = dpdat_dev_port(B.dev);
	struct dpdat_qp_info ia;
	struct dpdat_qp_stats sa, sb;
	struct dpdat_wc wc;
	uint64_t cnps;

	pa->tos = pb->tos = ROCE_ECN_ECT0;
	connect_pair(1024, 14);
	dpdat_qp_query(A.qp, &ia);
	for (int i = 0; i < 16; i++)
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, (uint32_t)i * 64,
				     64, (uintptr_t)B.buf, B.key) == 0);
	dpdat_dev_progress(A.dev);
	CU_ASSERT_EQUAL(mark_ce(a2b, 0), 16);
	run(20);
	for (int i = 0; i < 16; i++)
		CU_ASSERT(wait_wc(&A, &wc, 100) == 0 &&
			  wc.status == DPDAT_WC_SUCCESS);
	dpdat_qp_stats(A.qp, &sa);
	dpdat_qp_stats(B.qp, &sb);
	CU_ASSERT_EQUAL(sb.ecn_ce_rcvd, 16);
	CU_ASSERT(sb.cnp_sent >= 1 && sb.cnp_sent <= 3);
	CU_ASSERT_EQUAL(sa.cnp_rcvd, sb.cnp_sent);
	cnps = sb.cnp_sent;
	rte_delay_us_block(100);
	CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 64, (uintptr_t)B.buf,
			     B.key) == 0);
	dpdat_dev_progress(A.dev);
	CU_ASSERT_EQUAL(mark_ce(a2b, 0), 1);
	dpdat_dev_progress(B.dev);
	dpdat_qp_stats(B.qp, &sb);
	CU_ASSERT_EQUAL(sb.cnp_sent, cnps + 1);
	check_cnp(ia.qpn);
	/* B's CNP marked on its way to A: counted, not answered */
	CU_ASSERT_EQUAL(mark_ce(b2a, ROCE_OP_CNP), 1);
	run(20);
	CU_ASSERT(wait_wc(&A, &wc, 100) == 0);
	dpdat_qp_stats(A.qp, &sa);
	CU_ASSERT_EQUAL(sa.ecn_ce_rcvd, 1);
	CU_ASSERT_EQUAL(sa.cnp_sent, 0);
	CU_ASSERT_EQUAL(sa.cnp_rcvd, cnps + 1);
	disconnect_pair();
	pa->tos = pb->tos = 0;
}

/* A READ response lost in the middle. Selective repeat: the requester asks
 * again for that one packet only; go-back-N: from it to the end. */
static void
test_read_resp_loss(void)
{
	for (uint8_t ext = 0; ext <= DPDAT_QP_EXT_SACK; ext++) {
		struct script s = { .drop_k = ~0u, .drop_resp_k = 3 };
		struct dpdat_qp_stats sa;
		struct dpdat_wc wc;

		connect_pair_ext(1024, 14, ext);
		s.first = first_psn(A.qp);
		fill(B.buf, 8192, 9);
		memset(A.buf, 0, 8192);
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_READ, 0, 8192,
				     (uintptr_t)B.buf, B.key) == 0);
		CU_ASSERT_FATAL(xwait(&A, &wc, 2000, keep_script, &s) == 0);
		CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
		CU_ASSERT_EQUAL(wc.opcode, DPDAT_WR_RDMA_READ);
		CU_ASSERT_EQUAL(memcmp(A.buf, B.buf, 8192), 0);
		CU_ASSERT_EQUAL(s.dropped, 1);
		CU_ASSERT_FATAL(s.reqs >= 2);
		CU_ASSERT_EQUAL(s.req[0].psn, s.first);
		CU_ASSERT_EQUAL(s.req[0].dlen, 8192);
		CU_ASSERT_EQUAL(s.req[1].psn, roce_psn_add(s.first, 3));
		CU_ASSERT_EQUAL(s.req[1].dlen, ext ? 1024 : 8192 - 3 * 1024);
		dpdat_qp_stats(A.qp, &sa);
		CU_ASSERT_EQUAL(sa.timeouts, 0);
		if (ext)
			CU_ASSERT_EQUAL(s.reqs, 2);
		disconnect_pair();
	}
}

/* The last READ response lost: the probe asks for it (selective repeat:
 * that packet only). */
static void
test_read_tail_loss(void)
{
	struct script s = { .drop_k = ~0u, .drop_resp_k = 7 };
	struct dpdat_wc wc;

	connect_pair_ext(1024, 14, DPDAT_QP_EXT_SACK);
	s.first = first_psn(A.qp);
	fill(B.buf, 8192, 5);
	memset(A.buf, 0, 8192);
	CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_READ, 0, 8192,
			     (uintptr_t)B.buf, B.key) == 0);
	CU_ASSERT_FATAL(xwait(&A, &wc, 2000, keep_script, &s) == 0);
	CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(A.buf, B.buf, 8192), 0);
	CU_ASSERT_FATAL(s.reqs >= 2);
	CU_ASSERT_EQUAL(s.req[1].psn, roce_psn_add(s.first, 7));
	CU_ASSERT_EQUAL(s.req[1].dlen, 1024);
	disconnect_pair();
}

/* Selective repeat asks for at most half its READ window at a time. When
 * the request of a longer READ is lost, the first ask is a new READ to the
 * responder, of that part only; when the ask's responses from some point
 * on are lost (or late: the timer fires first), the next ask runs from
 * there across the part's end. The responder answers it up to that end,
 * and the READ goes on. It dropped it once (an ask beyond what it had
 * accepted), every time, until the retries ran out: rc-loss-sr-1pct's
 * 16 MiB READ failed that way on a loaded machine. */
static void
test_read_lost_request_in_parts(void)
{
	static uint8_t seen[4096];
	struct script s = { .drop_k = ~0u, .drop_resp_k = ~0u,
			    .drop_req = true, .drop_lo = 1000,
			    .drop_hi = RC_RD_WND / 2 - 1, .resp_seen = seen };
	const uint32_t len = 4096 * 256;	/* 4096 responses */
	struct dpdat_wc wc;

	memset(seen, 0, sizeof(seen));
	connect_pair_ext(256, 14, DPDAT_QP_EXT_SACK);
	s.first = first_psn(A.qp);
	fill(B.buf, len, 3);
	memset(A.buf, 0, len);
	CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_READ, 0, len,
			     (uintptr_t)B.buf, B.key) == 0);
	CU_ASSERT_FATAL(xwait(&A, &wc, 5000, keep_script, &s) == 0);
	CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(A.buf, B.buf, len), 0);
	CU_ASSERT_FATAL(s.reqs >= 3);
	/* the request lost, then the first part asked again */
	CU_ASSERT_EQUAL(s.req[1].psn, s.first);
	CU_ASSERT_EQUAL(s.req[1].dlen, RC_RD_WND / 2 * 256);
	disconnect_pair();
}

/* The responder holds what its device allows, no more; the rest is
 * dropped as under go-back-N and comes again. */
static void
test_sr_hold_bound(void)
{
	struct script s = { .drop_resp_k = ~0u };
	struct dpdat_qp_stats sa, sb;
	const uint32_t max = rc_dev(B.dev)->max_held;

	rc_dev(B.dev)->max_held = 2;
	write_one_lost(DPDAT_QP_EXT_SACK, 8192, 1, &s, &sa);
	dpdat_qp_stats(B.qp, &sb);
	/* packets 2 and 3, then what the probe brought; never more than
	 * two at once: 4 to 7 came again */
	CU_ASSERT(sb.held >= 2);
	CU_ASSERT(sa.tx_resent >= 5);
	CU_ASSERT_EQUAL(rc_dev(B.dev)->n_held, 0);	/* all given back */
	CU_ASSERT_EQUAL(sa.timeouts, 0);
	rc_dev(B.dev)->max_held = max;
	disconnect_pair();
}

/* A responder with no room to hold: its SACKs are empty, the requester goes
 * back N instead of waiting for a timeout. */
static void
test_sr_no_room(void)
{
	struct script s = { .drop_resp_k = ~0u };
	struct dpdat_qp_stats sa, sb;
	const uint32_t max = rc_dev(B.dev)->max_held;

	rc_dev(B.dev)->max_held = 0;
	write_one_lost(DPDAT_QP_EXT_SACK, 8192, 1, &s, &sa);
	dpdat_qp_stats(B.qp, &sb);
	CU_ASSERT_EQUAL(sb.held, 0);
	CU_ASSERT(s.sacks >= 1);
	CU_ASSERT_EQUAL(sa.tx_resent, 7);	/* packets 1..7 */
	CU_ASSERT_EQUAL(sa.timeouts, 0);
	rc_dev(B.dev)->max_held = max;
	disconnect_pair();
}

/* A WRITE then a READ, and every ACK lost: the READ's responses
 * acknowledge the WRITE (IBTA: a response acknowledges every request
 * before it). Both modes. */
static void
test_read_acks_before(void)
{
	for (uint8_t ext = 0; ext <= DPDAT_QP_EXT_SACK; ext++) {
		struct script s = { .drop_k = ~0u, .drop_resp_k = ~0u,
				    .drop_acks = true };
		struct dpdat_qp_stats sa;
		struct dpdat_wc wc[2];
		int n = 0;

		connect_pair_ext(1024, 14, ext);
		s.first = first_psn(A.qp);
		fill(A.buf, 4096, 3);
		fill(B.buf + 65536, 4096, 4);
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 4096,
				     (uintptr_t)B.buf, B.key) == 0);
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_READ, 8192, 4096,
				     (uintptr_t)B.buf + 65536, B.key) == 0);
		while (n < 2 && xwait(&A, &wc[n], 2000, keep_script, &s) == 0)
			n++;
		CU_ASSERT_FATAL(n == 2);
		CU_ASSERT_EQUAL(wc[0].status, DPDAT_WC_SUCCESS);
		CU_ASSERT_EQUAL(wc[0].opcode, DPDAT_WR_RDMA_WRITE);
		CU_ASSERT_EQUAL(wc[1].status, DPDAT_WC_SUCCESS);
		CU_ASSERT_EQUAL(wc[1].opcode, DPDAT_WR_RDMA_READ);
		CU_ASSERT_EQUAL(memcmp(A.buf + 8192, B.buf + 65536, 4096), 0);
		dpdat_qp_stats(A.qp, &sa);
		CU_ASSERT_EQUAL(sa.timeouts, 0);
		disconnect_pair();
	}
}

/* Through the CM, dpdat peers agree on selective repeat; a device that
 * refuses it (go_back_n) makes both ends speak go-back-N. */
static void
test_cm_negotiation(void)
{
	struct dpdat_cm_eq *ea = dpdat_cm_eq_create(A.dev, 64);
	struct dpdat_cm_eq *eb = dpdat_cm_eq_create(B.dev, 64);
	struct dpdat_qp_conf qc = { .max_send_wr = 16, .max_recv_wr = 16 };
	struct dpdat_cm_listener *l;
	struct dpdat_cm_conn *ca, *cb;
	struct dpdat_cm_event ev;
	struct dpdat_qp_info ia, ib;
	struct dpdat_qp *qa, *qb;

	CU_ASSERT_FATAL(ea != NULL && eb != NULL);
	l = dpdat_cm_listen(B.dev, 4712, eb);
	CU_ASSERT_FATAL(l != NULL);
	for (int gbn = 0; gbn <= 2; gbn++) {
		/* 0: both offer; 1: the passive side refuses; 2: the active */
		rc_dev(B.dev)->go_back_n = gbn == 1;
		rc_dev(A.dev)->go_back_n = gbn == 2;
		qc.pz = A.pz;
		qc.send_cq = qc.recv_cq = A.cq;
		qa = dpdat_qp_create(A.dev, &qc);
		qc.pz = B.pz;
		qc.send_cq = qc.recv_cq = B.cq;
		qb = dpdat_qp_create(B.dev, &qc);
		CU_ASSERT_FATAL(qa != NULL && qb != NULL);
		ca = dpdat_cm_connect(qa, B.pi.ipv4, 4712, NULL, 0, ea);
		CU_ASSERT_FATAL(ca != NULL);
		CU_ASSERT_FATAL(cm_next(eb, &ev, 200000) ==
				DPDAT_CM_CONNECT_REQUEST);
		cb = ev.conn;
		CU_ASSERT_FATAL(dpdat_cm_accept(cb, qb, NULL, 0, eb) == 0);
		CU_ASSERT_FATAL(cm_next(ea, &ev, 200000) ==
				DPDAT_CM_ESTABLISHED);
		CU_ASSERT_FATAL(cm_next(eb, &ev, 200000) ==
				DPDAT_CM_ESTABLISHED);
		dpdat_qp_query(qa, &ia);
		dpdat_qp_query(qb, &ib);
		/* repeated NAKs between dpdat peers whatever the mode;
		 * selective repeat and riding ACKs unless a side refuses */
		CU_ASSERT_EQUAL(ia.ext, (gbn ? 0 : DPDAT_QP_EXT_SACK |
					 DPDAT_QP_EXT_ACK_RIDE) |
				DPDAT_QP_EXT_NAK_REPEAT);
		CU_ASSERT_EQUAL(ib.ext, (gbn ? 0 : DPDAT_QP_EXT_SACK |
					 DPDAT_QP_EXT_ACK_RIDE) |
				DPDAT_QP_EXT_NAK_REPEAT);
		CU_ASSERT(dpdat_cm_disconnect(ca, NULL, 0) == 0);
		CU_ASSERT_EQUAL(cm_next(ea, &ev, 200000),
				DPDAT_CM_DISCONNECTED);
		CU_ASSERT_EQUAL(cm_next(eb, &ev, 200000),
				DPDAT_CM_DISCONNECTED);
		CU_ASSERT(dpdat_cm_conn_free(ca) == 0);
		CU_ASSERT(dpdat_cm_conn_free(cb) == 0);
		CU_ASSERT(dpdat_qp_free(qa) == 0);
		CU_ASSERT(dpdat_qp_free(qb) == 0);
	}
	rc_dev(A.dev)->go_back_n = rc_dev(B.dev)->go_back_n = false;
	CU_ASSERT(dpdat_cm_listen_free(l) == 0);
	run(10);
	drain_cqs();
	CU_ASSERT(dpdat_cm_eq_free(ea) == 0);
	CU_ASSERT(dpdat_cm_eq_free(eb) == 0);
}

/* An unknown extension bit is refused, not ignored. */
static void
test_unknown_ext(void)
{
	struct dpdat_qp_conf qc = { .pz = A.pz, .send_cq = A.cq,
				    .recv_cq = A.cq };
	struct dpdat_qp_remote r = { .qpn = 0x20, .pmtu = 1024,
				     .ipv4 = B.pi.ipv4, .mac = B.pi.mac,
				     .ext = 0x80 };
	struct dpdat_qp *qp = dpdat_qp_create(A.dev, &qc);

	CU_ASSERT_FATAL(qp != NULL);
	CU_ASSERT_EQUAL(dpdat_qp_connect(qp, &r), -EINVAL);
	r.ext = DPDAT_QP_EXT_SACK;
	CU_ASSERT_EQUAL(dpdat_qp_connect(qp, &r), 0);
	CU_ASSERT(dpdat_qp_free(qp) == 0);
}

int
loss_suite_init(void)
{
	return A.dev != NULL && B.dev != NULL ? 0 : -1;
}

CU_TestInfo rc_loss_tests[] = {
	{ "RTT estimator, timeout and probe waits", test_rtt_estimator },
	{ "SR: a lost packet resent alone on a SACK", test_sr_middle_loss },
	{ "GBN: a lost packet resent with all after it", test_gbn_middle_loss },
	{ "lost last packet: a probe, no timeout", test_tail_loss },
	{ "lost NAK: repeated, no timeout", test_lost_nak },
	{ "every ACK lost: a probe, a duplicate, an ACK", test_lost_acks },
	{ "last ACK lost, QP gone: repeated as it goes",
	  test_last_ack_repeated },
	{ "ECN: CE answered by a CNP, at most one in 50 us",
	  test_ecn_cnp },
	{ "lost READ response: asked again", test_read_resp_loss },
	{ "SR: lost last READ response: the probe", test_read_tail_loss },
	{ "SR: a lost READ request asked again in parts",
	  test_read_lost_request_in_parts },
	{ "SR: the responder holds within its bound", test_sr_hold_bound },
	{ "SR: no room to hold: back N, no timeout", test_sr_no_room },
	{ "READ responses acknowledge what precedes", test_read_acks_before },
	{ "CM: selective repeat agreed or refused", test_cm_negotiation },
	{ "unknown extension refused", test_unknown_ext },
	CU_TEST_INFO_NULL,
};
