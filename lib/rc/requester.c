/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Requester: turns send work requests into packets, one PMTU each, inside a
 * window of RC_MAX_INFLIGHT unacknowledged PSNs; asks for an ACK on the last
 * packet of every message and every RC_ACKREQ_EVERY packets; goes back N on
 * a sequence NAK or a timeout. Completions are the completer's business.
 */

#include <string.h>

#include <rte_cycles.h>

#include "port_priv.h"
#include "rc_priv.h"

static inline struct rc_swqe *
swqe(struct dpdat_qp *qp, uint32_t idx)
{
	return &qp->req.sq[idx & (qp->req.sq_size - 1)];
}

static uint32_t
npkts_of(const struct dpdat_qp *qp, uint32_t len)
{
	return len == 0 ? 1 : (len + qp->conn.pmtu - 1) / qp->conn.pmtu;
}

/* A packet with its BTH; with inline room for the payload and pad, or only
 * the headers (the payload will be chained after them). */
static struct rte_mbuf *
pkt_alloc(struct dpdat_qp *qp, uint8_t op, uint32_t psn, bool ackreq,
	  unsigned int payload, bool inline_payload, bool ride)
{
	const unsigned int pad = (-payload) & 3;
	const unsigned int len = sizeof(struct roce_bth) +
				 (ride ? ROCE_RIDE_LEN : 0) + roce_ext_len(op) +
				 (inline_payload ? payload + pad : 0);
	struct rte_mbuf *m = rte_pktmbuf_alloc(qp->dev->port->pool);
	struct roce_bth *bth;

	if (m == NULL)
		return NULL;
	bth = (struct roce_bth *)rte_pktmbuf_append(m, len);
	if (bth == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	bth->opcode = op;
	bth->flags = (uint8_t)(pad << ROCE_BTH_PAD_SHIFT);
	bth->pkey = rte_cpu_to_be_16(ROCE_PKEY_DEFAULT);
	bth->qpn = rte_cpu_to_be_32(qp->conn.dqpn);
	bth->apsn = rte_cpu_to_be_32((psn & ROCE_PSN_MASK) |
				     (ackreq ? ROCE_BTH_ACKREQ : 0) |
				     (ride ? ROCE_BTH_RIDE : 0));
	if (ride)	/* the ACK owed: everything before epsn */
		*(rte_be32_t *)(bth + 1) = rte_cpu_to_be_32(
			roce_psn_add(qp->resp.epsn, ROCE_PSN_MASK));
	if (pad != 0 && inline_payload)
		memset((uint8_t *)bth + len - pad, 0, pad);
	return m;
}

struct rte_mbuf *
rc_pkt_alloc(struct dpdat_qp *qp, uint8_t op, uint32_t psn, bool ackreq,
	     unsigned int payload)
{
	return pkt_alloc(qp, op, psn, ackreq, payload, true, false);
}

/* Only the headers: the payload (zero-copy) is chained after them. */
struct rte_mbuf *
rc_pkt_alloc_hdr(struct dpdat_qp *qp, uint8_t op, uint32_t psn, bool ackreq,
		 unsigned int payload)
{
	return pkt_alloc(qp, op, psn, ackreq, payload, false, false);
}

int
rc_pkt_send(struct dpdat_qp *qp, struct rte_mbuf *m)
{
	if (port_frame(qp->dev->port, m, qp->conn.dip, &qp->conn.dmac, qp->conn.sport) != 0) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	qp->st.tx_pkts++;
	rc_tx(qp->dev, m);
	return 0;
}

/* Opcode of packet k of npkts for a SEND or WRITE. */
static uint8_t
msg_opcode(const struct rc_swqe *w, uint32_t k, uint32_t npkts)
{
	const bool write = w->opcode == DPDAT_WR_RDMA_WRITE ||
			   w->opcode == DPDAT_WR_RDMA_WRITE_IMM;
	const bool imm = w->opcode == DPDAT_WR_SEND_IMM ||
			 w->opcode == DPDAT_WR_RDMA_WRITE_IMM;

	if (npkts == 1)
		return write ? (imm ? ROCE_OP_WRITE_ONLY_IMM : ROCE_OP_WRITE_ONLY) :
			       (imm ? ROCE_OP_SEND_ONLY_IMM : ROCE_OP_SEND_ONLY);
	if (k == 0)
		return write ? ROCE_OP_WRITE_FIRST : ROCE_OP_SEND_FIRST;
	if (k + 1 < npkts)
		return write ? ROCE_OP_WRITE_MIDDLE : ROCE_OP_SEND_MIDDLE;
	return write ? (imm ? ROCE_OP_WRITE_LAST_IMM : ROCE_OP_WRITE_LAST) :
		       (imm ? ROCE_OP_SEND_LAST_IMM : ROCE_OP_SEND_LAST);
}

static void go_back(struct dpdat_qp *qp, uint32_t psn);

/* A local failure: the WR completes in error and the QP breaks. */
static void
local_error(struct dpdat_qp *qp, struct rc_swqe *w,
	    enum dpdat_wc_status status)
{
	RC_LOG(INFO, "qp %u: local error %d in WR %u (%u bytes, %u SGEs)",
	       qp->qpn, status, qp->req.sq_send, w->len, w->num_sge);
	rc_qp_fail(qp, qp->req.sq_send, status);
}

/* A packet sent for the first time and answered by an ACK times the round
 * trip, one at a time; a go-back cancels the measure (Karn). */
static inline void
rtt_time(struct dpdat_qp *qp, uint32_t psn, uint64_t now)
{
	if (qp->req.rtt_tsc == 0 && psn == qp->req.max_sent) {
		qp->req.rtt_psn = psn;
		qp->req.rtt_tsc = now;
	}
}

/* Build and queue packet k of w with PSN psn (its place in w: a resend of
 * one packet needs not be the sender's next). 0, or -1 when not now. */
static int
send_data_pkt(struct dpdat_qp *qp, struct rc_swqe *w, uint32_t k,
	      uint32_t psn, uint64_t now)
{
	const uint32_t off = k * qp->conn.pmtu;
	const uint32_t n = RTE_MIN((uint32_t)qp->conn.pmtu, w->len - off);
	const uint8_t op = msg_opcode(w, k, w->npkts);
	const bool last = k + 1 == w->npkts;
	/* a paced QP (DCQCN) asks on every packet: at its rate, 32 packets
	 * without an ACK would look like a lost tail to the probe timer */
	bool ackreq = last || ++qp->req.since_ackreq >= qp->req.ackreq_every ||
		      roce_psn_diff(psn, qp->comp.una) + 1 >= (int32_t)qp->req.wnd ||
		      qp->req.force_ackreq || unlikely(qp->req.cc.rc != 0);
	/* an ACK owed the other way rides along (never past READ answers
	 * still to go: responses leave in PSN order) */
	const bool ride = qp->conn.ack_ride && qp->resp.ack_due && qp->resp.nres == 0 &&
			  RC_L3_HDRS + ROCE_RIDE_LEN + roce_ext_len(op) + n +
			  ((-n) & 3) <= qp->dev->port->mtu;
	struct rte_mbuf *m, *zc;
	enum dpdat_wc_status st;
	uint8_t *p;

	/* zero-copy when the payload can be attached, else copied inline */
	zc = rc_zc_payload(qp, w, off, n, (-n) & 3);
	m = pkt_alloc(qp, op, psn, ackreq, n, zc == NULL, ride);
	if (m == NULL) {
		rte_pktmbuf_free(zc);
		return -1;
	}
	p = rte_pktmbuf_mtod_offset(m, uint8_t *, sizeof(struct roce_bth) +
				    (ride ? ROCE_RIDE_LEN : 0));
	if (roce_op_flags[op] & ROCE_F_RETH) {
		struct roce_reth *reth = (struct roce_reth *)p;

		reth->va = rte_cpu_to_be_64(w->raddr);
		reth->rkey = rte_cpu_to_be_32(w->rkey);
		reth->dlen = rte_cpu_to_be_32(w->len);
		p += sizeof(*reth);
	}
	if (roce_op_flags[op] & ROCE_F_IMM) {
		memcpy(p, &w->imm, 4);	/* already in network order */
		p += 4;
	}
	st = zc != NULL ? DPDAT_WC_SUCCESS :
			  rc_sge_to_buf(qp, w->sge, w->num_sge, off, p, n);
	if (st != DPDAT_WC_SUCCESS) {
		rte_pktmbuf_free(m);
		local_error(qp, w, st);
		return -1;
	}
	if (zc != NULL && rte_pktmbuf_chain(m, zc) != 0) {
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(zc);
		return -1;
	}
	if (w->flags & DPDAT_SEND_SOLICITED && last)
		rte_pktmbuf_mtod(m, struct roce_bth *)->flags |= ROCE_BTH_SE;
	/* the consumer answers requests: its ACKs may wait for a ride. However
	 * late the answer: a consumer that spins on memory for a WRITE gets
	 * it from an engine thread, which may share its core (the ACK goes
	 * alone at once, the answer a scheduler tick later). Timed (8 holds),
	 * ib_write_lat lost its rides for good in half the runs: 4 ms a
	 * round trip. A wrong guess costs one ACK a hold. A resend is no
	 * answer. */
	if (roce_psn_diff(psn, qp->req.max_sent) >= 0) {
		if (qp->conn.ack_ride && qp->resp.asked)
			qp->resp.pingpong = true;
		qp->resp.asked = false;
	}
	if (ackreq) {
		qp->req.since_ackreq = 0;
		qp->req.force_ackreq = false;
		rtt_time(qp, psn, now);
	}
	qp->st.tx_bytes += n;
	if (unlikely(qp->req.cc.rc != 0))	/* paced since a CNP (DCQCN) */
		dcqcn_sent(&qp->req.cc, &qp->dev->dcqcn, n + RC_FRAME_OVERHEAD,
			   now);
	if (roce_psn_diff(psn, qp->req.max_sent) < 0)
		qp->st.tx_resent++;
	if (qp->sr != NULL)
		qp->sr->sent_seq[psn & (RC_SR_WND - 1)] = ++qp->req.tx_seq;
	if (ride) {
		qp->resp.ack_due = false;
		qp->st.acks_ridden++;
	}
	rc_pkt_send(qp, m);
	return 0;
}

/* (Re)send the READ request of w for n response packets from k on (0: to
 * the end); an atomic's request. */
static int
send_read_req(struct dpdat_qp *qp, struct rc_swqe *w, uint32_t k,
	      uint32_t n, uint32_t psn, uint64_t now)
{
	const uint32_t off = k * qp->conn.pmtu;
	const uint32_t len = n == 0 || k + n >= w->npkts ? w->len - off :
			     n * qp->conn.pmtu;
	struct roce_atometh *ae;
	struct roce_reth *reth;
	struct rte_mbuf *m;

	if (rc_wr_atomic(w->opcode)) {
		/* one request, one response: sent again as it was */
		m = rc_pkt_alloc(qp, w->opcode == DPDAT_WR_ATOMIC_CMP_SWP ?
				 ROCE_OP_CMP_SWAP : ROCE_OP_FETCH_ADD, psn,
				 true, 0);
		if (m == NULL)
			return -1;
		ae = rte_pktmbuf_mtod_offset(m, struct roce_atometh *,
					     sizeof(struct roce_bth));
		ae->va = rte_cpu_to_be_64(w->raddr);
		ae->rkey = rte_cpu_to_be_32(w->rkey);
		ae->swap_add = rte_cpu_to_be_64(w->opcode ==
				DPDAT_WR_ATOMIC_CMP_SWP ? w->swap : w->cmp_add);
		ae->compare = rte_cpu_to_be_64(w->opcode ==
				DPDAT_WR_ATOMIC_CMP_SWP ? w->cmp_add : 0);
		goto send;
	}
	m = rc_pkt_alloc(qp, ROCE_OP_READ_REQUEST, psn, true, 0);
	if (m == NULL)
		return -1;
	reth = rte_pktmbuf_mtod_offset(m, struct roce_reth *,
				       sizeof(struct roce_bth));
	reth->va = rte_cpu_to_be_64(w->raddr + off);
	reth->rkey = rte_cpu_to_be_32(w->rkey);
	reth->dlen = rte_cpu_to_be_32(len);
send:
	/* the first response answers it, unless READs before it keep the
	 * responder busy (their answers are not a round trip) */
	if (qp->req.reads_out == 1)
		rtt_time(qp, psn, now);
	qp->req.force_ackreq = false;
	w->sent_seq = ++qp->req.tx_seq;
	rc_pkt_send(qp, m);
	qp->req.since_ackreq = 0;
	return 0;
}

/* The sender's next PSN moves on by n, and the highest sent with it. */
static inline void
psn_advance(struct dpdat_qp *qp, uint32_t n)
{
	qp->req.psn = roce_psn_add(qp->req.psn, n);
	if (roce_psn_diff(qp->req.psn, qp->req.max_sent) > 0)
		qp->req.max_sent = qp->req.psn;
}

/* The one search for the WR holding a PSN. Started WRs hold consecutive
 * PSNs (rc_req_check), so the walk stops at the first WR ending after psn:
 * it holds psn, or nothing does. */
uint32_t
rc_swqe_of_psn_from(const struct dpdat_qp *qp, uint32_t from, uint32_t psn)
{
	const struct rc_swqe *w;
	uint32_t i;

	for (i = from; i != qp->req.sq_started; i++) {
		w = &qp->req.sq[i & (qp->req.sq_size - 1)];
		if (roce_psn_diff(psn, roce_psn_add(w->first_psn,
						     w->npkts)) < 0)
			return roce_psn_diff(psn, w->first_psn) >= 0 ? i :
			       qp->req.sq_started;
	}
	return i;
}

uint32_t
rc_swqe_of_psn(const struct dpdat_qp *qp, uint32_t psn)
{
	return rc_swqe_of_psn_from(qp, qp->comp.sq_head, psn);
}

int
rc_resend(struct dpdat_qp *qp, uint32_t psn, bool ackreq, uint64_t now)
{
	uint32_t i = rc_swqe_of_psn(qp, psn), k;
	struct rc_swqe *w;

	if (i == qp->req.sq_started || !rc_tx_room(qp->dev))
		return -1;
	w = swqe(qp, i);
	k = (uint32_t)roce_psn_diff(psn, w->first_psn);
	qp->req.force_ackreq = ackreq;
	/* Karn: a resend at or before the packet timed spoils its sample */
	if (qp->req.rtt_tsc != 0 && roce_psn_diff(psn, qp->req.rtt_psn) <= 0)
		qp->req.rtt_tsc = 0;
	if (rc_wr_reads(w->opcode)) {
		/* ask from the first response not placed yet */
		k = RTE_MAX(k, w->done_pkts);
		return rc_read_again(qp, w, k, now);
	}
	return send_data_pkt(qp, w, k, psn, now);
}

int
rc_read_again(struct dpdat_qp *qp, struct rc_swqe *w, uint32_t k,
	      uint64_t now)
{
	uint32_t n = 0, e;

	if (qp->sr != NULL) {
		/* under selective repeat only the run not placed yet */
		for (e = k; e < w->npkts && e - k < RC_RD_WND / 2 &&
		     !rc_rd_test(qp->sr, roce_psn_add(w->first_psn, e)); e++)
			;
		n = e - k;
		if (n == 0)
			return 0;	/* all there */
	}
	if (qp->req.rtt_tsc != 0 &&
	    roce_psn_diff(roce_psn_add(w->first_psn, k), qp->req.rtt_psn) <= 0)
		qp->req.rtt_tsc = 0;	/* Karn */
	if (send_read_req(qp, w, k, n, roce_psn_add(w->first_psn, k),
			  now) != 0)
		return -1;
	if (qp->sr != NULL) {
		struct rc_sr *sr = qp->sr;

		if (sr->n_ask == RC_RD_ASKS) {	/* forget the oldest */
			sr->ask_head = (sr->ask_head + 1) % RC_RD_ASKS;
			sr->n_ask--;
		}
		sr->ask[(sr->ask_head + sr->n_ask++) % RC_RD_ASKS] =
			(struct rc_ask){ roce_psn_add(w->first_psn, k), n, now,
					 false };
	}
	return 0;
}

/* Under selective repeat, the READ part at una asked for again: the last
 * request covering it, or NULL. */
static struct rc_ask *
ask_of_una(struct rc_sr *sr, uint32_t una)
{
	struct rc_ask *a;

	for (uint32_t i = sr->n_ask; i-- > 0; ) {
		a = &sr->ask[(sr->ask_head + i) % RC_RD_ASKS];
		if (roce_psn_diff(una, a->psn) >= 0 &&
		    roce_psn_diff(una, a->psn) < (int32_t)a->n)
			return a;
	}
	return NULL;
}

/* A READ part asked for again whose answer is late (qp->comp.ask_rtt.rto) is asked
 * for once more. True when the part at una has a request under way: the
 * probe leaves it alone. */
static bool
read_ask_timer(struct dpdat_qp *qp, uint64_t now)
{
	const uint32_t idx = rc_swqe_of_psn(qp, qp->comp.una);
	struct rc_swqe *w = &qp->req.sq[idx & (qp->req.sq_size - 1)];
	struct rc_ask *a;

	if (idx == qp->req.sq_started || !rc_wr_reads(w->opcode) ||
	    rc_rd_test(qp->sr, qp->comp.una) ||
	    (a = ask_of_una(qp->sr, qp->comp.una)) == NULL)
		return false;
	if (now - a->tsc < qp->comp.ask_rtt.rto)
		return true;
	/* no backoff: one small request, and the estimate is the answer's
	 * wait behind the stream, not a path that may have gone */
	a->again = true;
	qp->st.probes++;
	rc_read_again(qp, w, (uint32_t)roce_psn_diff(qp->comp.una, w->first_psn),
		      now);
	return true;
}

void
rc_requester(struct dpdat_qp *qp, uint64_t now)
{
	unsigned int budget = RC_SEND_BUDGET;
	struct rc_swqe *w;
	uint32_t k;

	if (now < qp->req.rnr_until)
		return;
	/* go-back-N wastes every packet sent between a loss and its NAK:
	 * while losses are recent the sender works in short slices, so the
	 * engine reads the NAK sooner (selective repeat wastes nothing) */
	if (qp->sr == NULL && now - qp->req.gb_tsc < qp->dev->tsc_hz *
	    RC_LOSS_SPELL_US / 1000000)
		budget = RC_SEND_BUDGET_LOSS;
	while (budget != 0 && qp->req.sq_send != qp->req.sq_tail &&
	       qp->state == DPDAT_QPS_RTS) {
		if (roce_psn_diff(qp->req.psn, qp->comp.una) >= (int32_t)qp->req.wnd ||
		    !rc_tx_room(qp->dev) ||
		    unlikely(!dcqcn_may_send(&qp->req.cc, now)))
			break;
		w = swqe(qp, qp->req.sq_send);
		if (qp->req.sq_send == qp->req.sq_started) {
			/* first transmission: the WR gets its PSNs */
			if (rc_wr_reads(w->opcode) &&
			    qp->req.reads_out >= qp->conn.max_rd)
				break;
			if ((w->flags & DPDAT_SEND_FENCE) && qp->req.reads_out)
				break;
			w->first_psn = qp->req.psn;
			w->npkts = npkts_of(qp, w->len);
			qp->req.frontier = roce_psn_add(qp->req.psn, w->npkts);
			w->done_pkts = 0;
			w->placed = 0;
			rc_zc_start(qp, w);
			qp->req.sq_started++;
			if (rc_wr_reads(w->opcode))
				qp->req.reads_out++;
		}
		if (qp->comp.una == qp->req.max_sent)
			qp->req.progress_tsc = now;	/* from idle: the clock starts */
		k = (uint32_t)roce_psn_diff(qp->req.psn, w->first_psn);
		if (unlikely(k >= w->npkts)) {
			/* psn and sq_send disagree: a bug, but never send
			 * garbage; realign on what the peer has */
			RC_LOG(ERR, "qp %u: psn %u outside WR %u (%u+%u)",
			       qp->qpn, qp->req.psn, qp->req.sq_send, w->first_psn,
			       w->npkts);
			go_back(qp, qp->comp.una);
			break;
		}
		if (rc_wr_reads(w->opcode)) {
			if (send_read_req(qp, w, k, 0, qp->req.psn, now) != 0)
				break;
			psn_advance(qp, w->npkts - k);
			qp->req.sq_send++;
			budget--;
			continue;
		}
		if (send_data_pkt(qp, w, k, qp->req.psn, now) != 0)
			break;
		psn_advance(qp, 1);
		budget--;
		if (k + 1 == w->npkts)
			qp->req.sq_send++;
	}
}

/*
 * Going back: every way the sender returns to a PSN sent before is here,
 * and all of them go through go_back(), which moves psn and sq_send
 * together (never below una):
 *   rc_go_back_nak()   a sequence NAK (go-back-N; under selective repeat
 *                      one without a SACK): once a round trip
 *   rc_go_back_rnr()   an RNR NAK: from the PSN refused, after our delay
 *   rc_go_back_read()  go-back-N: a READ response missing, the READ asked
 *                      again from it, then again if the answer is late
 *   probe()            the tail probe (go-back-N: the last packet again)
 *   rc_requester_timer() the retransmit timeout: back to una
 *   rc_catch_up()      the other way: answers came for what the sender was
 *                      about to send again; it moves on to una
 * The completer only reports what came back; it never moves the sender.
 */
static void
go_back(struct dpdat_qp *qp, uint32_t psn)
{
	uint32_t i;

	/* never below what the peer acknowledged (a NAK may name una - 1) */
	if (roce_psn_diff(psn, qp->comp.una) < 0)
		psn = qp->comp.una;
	i = rc_swqe_of_psn(qp, psn);
	/* not inside a started WR: only the PSN after them all is valid */
	if (i == qp->req.sq_started && psn != qp->req.frontier)
		return;
	if (roce_psn_diff(psn, qp->req.psn) < 0) {
		qp->st.retransmits++;
		qp->req.rtt_tsc = 0;	/* Karn: no sample across a resend */
	}
	qp->req.sq_send = i;
	qp->req.psn = psn;
	qp->req.since_ackreq = 0;
}

void
rc_go_back_nak(struct dpdat_qp *qp, uint32_t psn, uint64_t now)
{
	/* the responder repeats its NAK while packets after the gap arrive:
	 * act once a round trip */
	if (psn == qp->req.gb_psn && now - qp->req.gb_tsc < rc_rtt_pto(&qp->comp.rtt)) {
		qp->st.naks_ignored++;
		return;
	}
	qp->req.gb_psn = psn;
	qp->req.gb_tsc = now;
	qp->req.rexmit_tsc = now;
	go_back(qp, psn);
}

void
rc_go_back_rnr(struct dpdat_qp *qp, uint32_t psn, uint64_t now)
{
	/* the peer's timer code is advisory: wait our fixed delay */
	qp->req.rnr_until = now + qp->dev->tsc_hz * RC_RNR_DELAY_US / 1000000;
	/* the peer answers: its RNR budget, not the retry one */
	qp->req.progress_tsc = now;
	go_back(qp, psn);
}

void
rc_go_back_read(struct dpdat_qp *qp, uint32_t expect, uint64_t now)
{
	/* once, and again if the answer is late (it waits behind the
	 * responses on their way, which keep coming out of sequence
	 * meanwhile) */
	if (qp->req.read_gap && now - qp->req.read_gap_tsc < qp->comp.ask_rtt.rto)
		return;
	qp->req.read_gap_again = qp->req.read_gap;
	if (qp->req.read_gap)	/* late again: wait longer */
		rc_rtt_backoff(&qp->comp.ask_rtt);
	qp->req.read_gap = true;
	qp->req.read_gap_tsc = now;
	qp->st.out_of_seq++;
	go_back(qp, expect);
}

void
rc_catch_up(struct dpdat_qp *qp)
{
	/* a go-back rewound the sender below una (or into a WR that has
	 * completed since): move it past what came back, never reusing a
	 * PSN */
	if (roce_psn_diff(qp->comp.una, qp->req.psn) > 0 ||
	    (int32_t)(qp->req.sq_send - qp->comp.sq_head) < 0)
		go_back(qp, qp->comp.una);
}

/* The tail probe: one packet again, asking for an answer.
 * Go-back-N: the last packet sent (or, when a READ holds una, its request
 * from the first missing response); its answer, an ACK or a NAK, tells
 * what the responder lacks. Selective repeat: the last packet and the
 * oldest unacknowledged one (a READ's first missing part): a SACK shows a
 * packet lost only when one sent after it arrived, and a responder out of
 * room to hold the last one would show nothing; if una had arrived, the
 * duplicate brings an ACK. */
static void
probe(struct dpdat_qp *qp, uint64_t now)
{
	const uint32_t idx = rc_swqe_of_psn(qp, qp->comp.una);
	const struct rc_swqe *w = &qp->req.sq[idx & (qp->req.sq_size - 1)];
	const uint32_t psn = (idx != qp->req.sq_started &&
			      rc_wr_reads(w->opcode)) || qp->sr ?
			     qp->comp.una : roce_psn_add(qp->req.max_sent, ROCE_PSN_MASK);

	qp->st.probes++;
	qp->req.read_gap = false;	/* a READ may ask for its gap again */
	if (qp->sr != NULL) {
		const uint32_t last = roce_psn_add(qp->req.max_sent, ROCE_PSN_MASK);
		const uint32_t li = rc_swqe_of_psn(qp, last);

		qp->req.rexmit_tsc = now;
		rc_resend(qp, psn, true, now);
		if (psn != last && li != qp->req.sq_started &&
		    !rc_wr_reads(swqe(qp, li)->opcode))
			rc_resend(qp, last, true, now);
		return;
	}
	qp->req.force_ackreq = true;
	go_back(qp, psn);
}

/*
 * Deadlines of a QP with work outstanding, checked every engine iteration:
 *  - the tail probe (probe()), when nothing was acknowledged for about two
 *    round trips: a lost tail, a lost ACK or a lost NAK costs a round trip
 *    or two, not a timeout. Under selective repeat a probe resends one
 *    packet, so it is the timeout as well, repeated at doubling waits up
 *    to the consumer's local ACK timeout.
 *  - under go-back-N, one probe a stall, then the retransmit timeout
 *    (rtt.rto, from the measured round trip, at most the consumer's local
 *    ACK timeout): go back to the oldest unacknowledged PSN; the next
 *    timeout waits twice as long.
 *  - the retry budget: the QP fails with RETRY_EXC_ERR once nothing moved
 *    for (retry_cnt + 1) local ACK timeouts, as a requester that retried
 *    retry_cnt times at that timeout would: the faster retransmissions
 *    never shorten the time a consumer gives a silent peer.
 */
void
rc_requester_timer(struct dpdat_qp *qp, uint64_t now)
{
	const bool tail = qp->req.psn == qp->req.max_sent && qp->comp.una != qp->req.max_sent;
	uint64_t since, wait;

	if (qp->comp.sq_head == qp->req.sq_started || now < qp->req.rnr_until)
		return;
	if (now - qp->req.progress_tsc >=
	    qp->conn.timeout_tsc * ((uint64_t)qp->conn.retry_cnt + 1)) {
		RC_LOG(NOTICE, "qp %u: retry count exceeded at psn %u",
		       qp->qpn, qp->comp.una);
		rc_qp_fail(qp, qp->comp.sq_head, DPDAT_WC_RETRY_EXC_ERR);
		return;
	}
	since = now - RTE_MAX(qp->req.progress_tsc, qp->req.rexmit_tsc);
	if (qp->sr != NULL && qp->sr->n_ask != 0 && read_ask_timer(qp, now))
		return;
	if (qp->sr != NULL) {
		wait = RTE_MIN(rc_rtt_pto(&qp->comp.rtt) << RTE_MIN(qp->req.nprobe, 12u),
			       qp->conn.timeout_tsc);
		if (since >= wait && tail) {
			if (qp->req.nprobe++ != 0)
				qp->st.timeouts++;
			probe(qp, now);
		}
		return;
	}
	if (qp->req.nprobe == 0 && tail && since >= rc_rtt_pto(&qp->comp.rtt)) {
		qp->req.nprobe = 1;
		probe(qp, now);
		return;
	}
	if (since < qp->comp.rtt.rto)
		return;
	qp->st.timeouts++;
	qp->req.rexmit_tsc = now;
	rc_rtt_backoff(&qp->comp.rtt);
	qp->comp.retries_left = qp->conn.retry_cnt -
		RTE_MIN(qp->conn.retry_cnt, (now - qp->req.progress_tsc) /
				       qp->conn.timeout_tsc);
	RC_LOG(DEBUG, "qp %u: timeout: una %u psn %u frontier %u head %u "
	       "send %u started %u tail %u", qp->qpn, qp->comp.una, qp->req.psn,
	       qp->req.frontier, qp->comp.sq_head, qp->req.sq_send, qp->req.sq_started,
	       qp->req.sq_tail);
	qp->req.force_ackreq = true;
	go_back(qp, qp->comp.una);
}

enum rc_req_state
rc_req_state(const struct dpdat_qp *qp, uint64_t now)
{
	if (qp->state == DPDAT_QPS_ERR)
		return RC_REQ_ERROR;
	if (qp->comp.sq_head == qp->req.sq_started && qp->req.sq_send == qp->req.sq_tail)
		return RC_REQ_IDLE;
	if (now < qp->req.rnr_until)
		return RC_REQ_RNR_WAIT;
	if (qp->req.psn != qp->req.max_sent)
		return RC_REQ_RESENDING;
	if (qp->req.sq_send != qp->req.sq_tail &&
	    roce_psn_diff(qp->req.psn, qp->comp.una) < (int32_t)qp->req.wnd)
		return RC_REQ_SENDING;
	return RC_REQ_WAITING;
}

const char *
rc_req_state_name(enum rc_req_state s)
{
	static const char *const names[] = {
		[RC_REQ_IDLE] = "idle", [RC_REQ_SENDING] = "sending",
		[RC_REQ_RESENDING] = "resending", [RC_REQ_WAITING] = "waiting",
		[RC_REQ_RNR_WAIT] = "rnr-wait", [RC_REQ_ERROR] = "error",
	};

	return s < RTE_DIM(names) ? names[s] : "?";
}

#ifdef DPDAT_DEBUG
#define REQ_ASSERT(cond) do {						\
	if (!(cond))							\
		rte_panic("qp %u: requester invariant '%s' broken after "	\
			  "%s: una %u psn %u max_sent %u frontier %u acked %u "	\
			  "sq head %u send %u started %u tail %u\n",	\
			  qp->qpn, #cond, where, qp->comp.una, qp->req.psn,		\
			  qp->req.max_sent, qp->req.frontier, qp->comp.acked,		\
			  qp->comp.sq_head, qp->req.sq_send, qp->req.sq_started,		\
			  qp->req.sq_tail);					\
} while (0)

/* a <= b for PSNs modulo 2^24, and for free-running SQ indices */
#define PSN_LE(a, b) (roce_psn_diff((b), (a)) >= 0)
#define IDX_LE(a, b) ((int32_t)((b) - (a)) >= 0)

/* The requester's invariants, written once. */
void
rc_req_check(const struct dpdat_qp *qp, const char *where)
{
	const struct rc_swqe *w;
	uint32_t i, reads = 0;

	if (qp->state != DPDAT_QPS_RTS)
		return;		/* an error flushes; INIT/RTR send nothing */
	/* the send queue, oldest to newest */
	REQ_ASSERT(IDX_LE(qp->comp.sq_head, qp->req.sq_send));
	REQ_ASSERT(IDX_LE(qp->req.sq_send, qp->req.sq_started));
	REQ_ASSERT(IDX_LE(qp->req.sq_started, qp->req.sq_tail));
	REQ_ASSERT(qp->req.sq_tail - qp->comp.sq_head <= qp->req.sq_size);
	/* PSNs: acknowledged < sent again <= sent once <= given to WRs */
	REQ_ASSERT(PSN_LE(qp->comp.una, qp->req.psn));
	REQ_ASSERT(PSN_LE(qp->req.psn, qp->req.max_sent));
	REQ_ASSERT(PSN_LE(qp->req.max_sent, qp->req.frontier));
	REQ_ASSERT(PSN_LE(roce_psn_add(qp->comp.una, ROCE_PSN_MASK), qp->comp.acked) ||
		   qp->comp.sq_head != qp->req.sq_started);
	/* nothing outstanding: everything given out was answered */
	if (qp->comp.sq_head == qp->req.sq_started)
		REQ_ASSERT(qp->comp.una == qp->req.frontier && qp->req.psn == qp->req.frontier);
	/* started WRs hold consecutive PSNs; a READ at the head holds una
	 * right after its responses placed in a row */
	for (i = qp->comp.sq_head; i != qp->req.sq_started; i++) {
		w = &qp->req.sq[i & (qp->req.sq_size - 1)];
		if (i + 1 != qp->req.sq_started)
			REQ_ASSERT(roce_psn_add(w->first_psn, w->npkts) ==
				   qp->req.sq[(i + 1) & (qp->req.sq_size - 1)].first_psn);
		if (rc_wr_reads(w->opcode)) {
			reads++;
			REQ_ASSERT(w->done_pkts < w->npkts);
			if (i == qp->comp.sq_head)
				REQ_ASSERT(qp->comp.una == roce_psn_add(w->first_psn,
								   w->done_pkts));
		}
	}
	REQ_ASSERT(reads == qp->req.reads_out);
	if (qp->comp.sq_head != qp->req.sq_started) {
		/* una is never before the oldest WR (rc_swqe_of_psn() of a
		 * PSN from una on starts its walk there) */
		w = &qp->req.sq[qp->comp.sq_head & (qp->req.sq_size - 1)];
		REQ_ASSERT(PSN_LE(w->first_psn, qp->comp.una));
		w = &qp->req.sq[(qp->req.sq_started - 1) & (qp->req.sq_size - 1)];
		REQ_ASSERT(roce_psn_add(w->first_psn, w->npkts) ==
			   qp->req.frontier);
	}
	/* selective repeat: READ parts asked for again (what the responder
	 * holds is rc_resp_check()'s) */
	if (qp->sr != NULL)
		REQ_ASSERT(qp->sr->n_ask <= RC_RD_ASKS);
}
#endif
