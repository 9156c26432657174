/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Completer: ACKs, NAKs and READ responses coming back to the requester.
 * A WR completes only when the peer acknowledged it (or, for a READ, when
 * its last response was placed); completions leave in posting order.
 */

#include <rte_cycles.h>

#include "rc_priv.h"

static inline struct rc_swqe *
swqe(struct dpdat_qp *qp, uint32_t idx)
{
	return &qp->req.sq[idx & (qp->req.sq_size - 1)];
}

/* una moves forward to psn: the peer is alive and taking data. The packet
 * being timed, if now acknowledged, gives a round-trip sample. */
static void
progress(struct dpdat_qp *qp, uint32_t psn, uint64_t now)
{
	if (qp->req.rtt_tsc != 0 && roce_psn_diff(psn, qp->req.rtt_psn) > 0) {
		rc_rtt_sample(&qp->comp.rtt, now - qp->req.rtt_tsc);
		/* delay-based control: the window follows the round trip */
		if (unlikely(qp->dev->swift.on))
			qp->req.wnd = swift_sample(&qp->req.swift, &qp->dev->swift,
					       now - qp->req.rtt_tsc, now);
		qp->req.rtt_tsc = 0;
	}
	rc_rtt_progress(&qp->comp.rtt);
	qp->comp.una = psn;
	/* acked never falls behind una (PSNs wrap): READs move una alone */
	if (roce_psn_diff(roce_psn_add(psn, ROCE_PSN_MASK), qp->comp.acked) > 0)
		qp->comp.acked = roce_psn_add(psn, ROCE_PSN_MASK);
	qp->req.progress_tsc = now;
	qp->req.nprobe = 0;
	qp->comp.retries_left = qp->conn.retry_cnt;
	qp->req.read_gap = false;
}

/* una reached p: the READ parts asked for again below it are done. */
static void
ask_done(struct rc_sr *sr, uint32_t p)
{
	struct rc_ask *a;

	while (sr->n_ask != 0) {
		a = &sr->ask[sr->ask_head];
		if (roce_psn_diff(p, roce_psn_add(a->psn, a->n)) < 0)
			break;
		sr->ask_head = (sr->ask_head + 1) % RC_RD_ASKS;
		sr->n_ask--;
	}
}

/* The first response of a part asked for once came: how long such an
 * answer takes (behind the responses already on their way). */
static void
ask_answered(struct dpdat_qp *qp, uint32_t psn, uint64_t now)
{
	struct rc_sr *sr = qp->sr;
	struct rc_ask *a;

	for (uint32_t i = 0; i < sr->n_ask; i++) {
		a = &sr->ask[(sr->ask_head + i) % RC_RD_ASKS];
		if (a->psn == psn && !a->again) {
			rc_rtt_sample(&qp->comp.ask_rtt, now - a->tsc);
			a->again = true;	/* one sample */
			return;
		}
	}
}

/* Under selective repeat: the READs at the head with all their responses
 * placed complete, una follows their placed responses. True when one
 * completed. */
static bool
read_walk(struct dpdat_qp *qp, uint64_t now)
{
	struct rc_sr *sr = qp->sr;
	struct rc_swqe *w;
	uint32_t p;
	bool done = false;

	while (qp->comp.sq_head != qp->req.sq_started) {
		w = swqe(qp, qp->comp.sq_head);
		if (!rc_wr_reads(w->opcode))
			break;
		while (w->done_pkts < w->npkts &&
		       rc_rd_test(sr, p = roce_psn_add(w->first_psn,
						      w->done_pkts))) {
			rc_rd_set(sr, p, false);
			w->done_pkts++;
		}
		p = roce_psn_add(w->first_psn, w->done_pkts);
		if (roce_psn_diff(p, qp->comp.una) > 0) {
			progress(qp, p, now);
			ask_done(sr, p);
		}
		if (w->done_pkts < w->npkts)
			break;
		rc_complete_send(qp, w, DPDAT_WC_SUCCESS);
		qp->comp.sq_head++;
		qp->req.reads_out--;
		done = true;
	}
	return done;
}

/* The peer has everything up to and including psn: complete the WRs it
 * covers, stopping at a READ whose responses are not all in. */
static void
ack_upto(struct dpdat_qp *qp, uint32_t psn, uint64_t now)
{
	struct rc_swqe *w;
	uint32_t end;

	/* kept: WRs after a READ still answering complete once it does */
	if (roce_psn_diff(psn, qp->comp.acked) > 0)
		qp->comp.acked = psn;
	psn = qp->comp.acked;
	do {
		while (qp->comp.sq_head != qp->req.sq_started) {
			w = swqe(qp, qp->comp.sq_head);
			if (rc_wr_reads(w->opcode)) {
				/* responses acknowledge a READ, nothing
				 * else */
				break;
			}
			end = roce_psn_add(w->first_psn, w->npkts - 1);
			if (roce_psn_diff(end, psn) > 0)
				break;
			/* zero-copy: also wait until the device let go */
			if (!rc_zc_done(w))
				break;
			rc_complete_send(qp, w, DPDAT_WC_SUCCESS);
			qp->comp.sq_head++;
		}
	} while (qp->sr != NULL && read_walk(qp, now));
	/* una never passes a READ still waiting for responses: the one at
	 * the head, or one behind a WR acknowledged but not complete (its
	 * zero-copy memory still in the device) that this ACK goes past */
	for (uint32_t i = qp->comp.sq_head; i != qp->req.sq_started; i++) {
		w = swqe(qp, i);
		if (rc_wr_reads(w->opcode)) {
			if (roce_psn_diff(psn, w->first_psn) >= 0)
				psn = roce_psn_add(w->first_psn, w->done_pkts +
						   ROCE_PSN_MASK);
			break;
		}
		if (roce_psn_diff(psn, roce_psn_add(w->first_psn,
						     w->npkts)) < 0)
			break;	/* the ACK ends inside it: no READ passed */
	}
	if (roce_psn_diff(roce_psn_add(psn, 1), qp->comp.una) > 0) {
		progress(qp, roce_psn_add(psn, 1), now);
		qp->comp.rnr_left = qp->conn.rnr_retry;
	}
	/* a go-back rewound below what the peer now has: skip ahead */
	rc_catch_up(qp);
}

/* Complete what was acknowledged but waited for its zero-copy buffers. */
void
rc_complete_acked(struct dpdat_qp *qp)
{
	qp->comp.zc_check = false;
	ack_upto(qp, roce_psn_add(qp->comp.una, ROCE_PSN_MASK), rte_get_tsc_cycles());
}

/* The WR holding psn fails with status (those before it were answered
 * or are flushed); the QP breaks. A NAK for a PSN no WR holds any more
 * is stale and ignored: a responder answers so a duplicate READ whose
 * region went after the READ completed here. */
static void
remote_error(struct dpdat_qp *qp, uint32_t psn, enum dpdat_wc_status status)
{
	uint32_t i;

	i = rc_swqe_of_psn(qp, psn);
	if (i == qp->req.sq_started) {
		RC_LOG(DEBUG, "qp %u: stale NAK (status %d) at psn %u: "
		       "nothing outstanding there", qp->qpn, status, psn);
		return;
	}
	ack_upto(qp, roce_psn_add(psn, ROCE_PSN_MASK), rte_get_tsc_cycles());
	i = rc_swqe_of_psn(qp, psn);
	RC_LOG(INFO, "qp %u: remote error %d at psn %u", qp->qpn, status, psn);
	rc_qp_fail(qp, i != qp->req.sq_started ? i : qp->comp.sq_head, status);
}

static void
on_ack(struct dpdat_qp *qp, uint32_t psn, uint8_t syn, const uint8_t *sack,
       uint64_t now)
{
	const uint32_t prev = roce_psn_add(psn, ROCE_PSN_MASK);

	/* only PSNs we have sent and not yet seen acknowledged: an ACK for a
	 * PSN never sent (a ghost) must not complete anything */
	if (roce_psn_diff(psn, qp->comp.una) < -1 ||
	    roce_psn_diff(psn, qp->req.max_sent) >= 0)
		return;
	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		ack_upto(qp, psn, now);
		break;
	case ROCE_AETH_RNR_NAK:
		qp->st.rnr_naks_rcvd++;
		ack_upto(qp, prev, now);
		if (qp->conn.rnr_retry != 7 && qp->comp.rnr_left-- == 0) {
			remote_error(qp, psn, DPDAT_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		rc_go_back_rnr(qp, psn, now);
		break;
	default:	/* NAKs */
		qp->st.naks_rcvd++;
		switch (syn) {
		case ROCE_AETH_NAK_PSN:
			ack_upto(qp, prev, now);
			if (sack != NULL && qp->state == DPDAT_QPS_RTS &&
			    rc_sr_on_sack(qp, psn, sack, now))
				break;
			rc_go_back_nak(qp, psn, now);
			break;
		case ROCE_AETH_NAK_INV_REQ:
			remote_error(qp, psn, DPDAT_WC_REM_INV_REQ_ERR);
			break;
		case ROCE_AETH_NAK_REM_ACC:
			remote_error(qp, psn, DPDAT_WC_REM_ACCESS_ERR);
			break;
		default:
			remote_error(qp, psn, DPDAT_WC_REM_OP_ERR);
			break;
		}
	}
}

/* An ATOMIC ACKNOWLEDGE answers an atomic, READ responses a READ. */
static inline bool
resp_fits(const struct rc_swqe *w, uint8_t op)
{
	return rc_wr_atomic(w->opcode) == (op == ROCE_OP_ATOMIC_ACK);
}

/* The response run missing just before psn, inside its READ and from una
 * on, is asked for again: once, when the first response after it came
 * (responses come in order but for those asked again). */
static void
read_hole(struct dpdat_qp *qp, uint32_t psn, uint64_t now)
{
	const uint32_t p = roce_psn_add(psn, ROCE_PSN_MASK);
	uint32_t idx, s, lo;
	struct rc_swqe *w;

	if (roce_psn_diff(p, qp->comp.una) < 0 || rc_rd_test(qp->sr, p))
		return;
	idx = rc_swqe_of_psn(qp, p);
	if (idx == qp->req.sq_started)
		return;
	w = swqe(qp, idx);
	if (!rc_wr_reads(w->opcode))
		return;
	lo = roce_psn_diff(qp->comp.una, w->first_psn) > 0 ? qp->comp.una :
	     w->first_psn;
	for (s = p; s != lo && !rc_rd_test(qp->sr, roce_psn_add(s,
					   ROCE_PSN_MASK)); )
		s = roce_psn_add(s, ROCE_PSN_MASK);
	if (rc_tx_room(qp->dev) &&
	    rc_read_again(qp, w, (uint32_t)roce_psn_diff(s, w->first_psn),
			  now) == 0) {
		qp->st.sack_resent++;
		qp->req.rexmit_tsc = now;
	}
}

/* A READ response under selective repeat: placed where its PSN says, in
 * any order, within RC_RD_WND PSNs of una. */
static void
on_read_resp_sr(struct dpdat_qp *qp, struct rte_mbuf *m, uint8_t op,
		uint32_t psn, unsigned int off, unsigned int paylen,
		const uint8_t *flat, uint64_t now)
{
	const int32_t d = roce_psn_diff(psn, qp->comp.una);
	enum dpdat_wc_status st;
	struct rc_swqe *w;
	uint32_t idx, k, want;

	if (d < 0 || d >= RC_RD_WND || rc_rd_test(qp->sr, psn))
		return;		/* placed already, or too far ahead */
	/* the walk starts at the head READ: nearly always the one */
	idx = rc_swqe_of_psn(qp, psn);
	if (idx == qp->req.sq_started)
		return;
	w = swqe(qp, idx);
	if (!rc_wr_reads(w->opcode))
		return;
	/* a response acknowledges every request before its READ */
	if (idx != qp->comp.sq_head)
		ack_upto(qp, roce_psn_add(w->first_psn, ROCE_PSN_MASK), now);
	k = (uint32_t)roce_psn_diff(psn, w->first_psn);
	want = w->len == 0 ? 0 : RTE_MIN((uint32_t)qp->conn.pmtu,
					 w->len - k * qp->conn.pmtu);
	/* the size asked for; the last response ends the message (a part
	 * asked again may end anywhere) */
	if (paylen != want || !resp_fits(w, op) ||
	    (k + 1 == w->npkts && op != ROCE_OP_READ_RESP_LAST &&
	     op != ROCE_OP_READ_RESP_ONLY && op != ROCE_OP_ATOMIC_ACK)) {
		qp->st.out_of_seq++;
		return;
	}
	st = flat != NULL ?
	     rc_buf_to_sge(qp, w->sge, w->num_sge, 0, flat, paylen) :
	     rc_mbuf_to_sge(qp, w->sge, w->num_sge, k * qp->conn.pmtu, m, off,
			    paylen);
	if (st != DPDAT_WC_SUCCESS) {
		rc_qp_fail(qp, idx, st);
		return;
	}
	rc_rd_set(qp->sr, psn, true);
	w->placed++;
	/* below the highest placed: it fills a gap, maybe asked for */
	if (roce_psn_diff(psn, qp->sr->rd_top) < 0) {
		if (qp->sr->n_ask != 0)
			ask_answered(qp, psn, now);
	} else {
		qp->sr->rd_top = roce_psn_add(psn, 1);
	}
	if (d != 0)
		read_hole(qp, psn, now);
	if (read_walk(qp, now))
		ack_upto(qp, qp->comp.acked, now);
	rc_catch_up(qp);
}

/* A READ response: placed only when it is the next one expected. */
static void
on_read_resp(struct dpdat_qp *qp, struct rte_mbuf *m, uint8_t op,
	     uint32_t psn, unsigned int off, unsigned int paylen,
	     const uint8_t *flat, uint64_t now)
{
	struct rc_swqe *w;
	enum dpdat_wc_status st;
	uint32_t k, want, expect;

	if (qp->comp.sq_head == qp->req.sq_started)
		return;
	w = swqe(qp, qp->comp.sq_head);
	if (!rc_wr_reads(w->opcode)) {
		/* a response acknowledges every request before its READ
		 * (the ACK for them may have been lost) */
		uint32_t idx = rc_swqe_of_psn(qp, psn);

		if (idx == qp->req.sq_started ||
		    !rc_wr_reads(swqe(qp, idx)->opcode))
			return;
		ack_upto(qp, roce_psn_add(swqe(qp, idx)->first_psn,
					  ROCE_PSN_MASK), now);
		w = swqe(qp, qp->comp.sq_head);
		if (qp->comp.sq_head == qp->req.sq_started ||
		    !rc_wr_reads(w->opcode))
			return;
	}
	expect = roce_psn_add(w->first_psn, w->done_pkts);
	if (psn != expect) {
		/* a response went missing: ask again from the gap */
		if (roce_psn_diff(psn, expect) > 0)
			rc_go_back_read(qp, expect, now);
		return;
	}
	if (qp->req.read_gap && !qp->req.read_gap_again)	/* answered: timed */
		rc_rtt_sample(&qp->comp.ask_rtt, now - qp->req.read_gap_tsc);
	else if (qp->req.read_gap)
		rc_rtt_progress(&qp->comp.ask_rtt);
	k = w->done_pkts;
	want = RTE_MIN((uint32_t)qp->conn.pmtu, w->len - k * qp->conn.pmtu);
	if (w->len == 0)
		want = 0;
	/* size must match what we asked for, and only the last response
	 * may end the message. A READ asked again from the middle is
	 * answered with a fresh FIRST (or ONLY), so the start may be any. */
	if (paylen != want || !resp_fits(w, op) ||
	    ((k + 1 == w->npkts) != (op == ROCE_OP_READ_RESP_LAST ||
				     op == ROCE_OP_READ_RESP_ONLY ||
				     op == ROCE_OP_ATOMIC_ACK))) {
		qp->st.out_of_seq++;
		return;
	}
	st = flat != NULL ?
	     rc_buf_to_sge(qp, w->sge, w->num_sge, 0, flat, paylen) :
	     rc_mbuf_to_sge(qp, w->sge, w->num_sge, k * qp->conn.pmtu, m, off,
			    paylen);
	if (st != DPDAT_WC_SUCCESS) {
		rc_qp_fail(qp, qp->comp.sq_head, st);
		return;
	}
	w->done_pkts++;
	progress(qp, roce_psn_add(psn, 1), now);
	if (w->done_pkts == w->npkts) {
		rc_complete_send(qp, w, DPDAT_WC_SUCCESS);
		qp->comp.sq_head++;
		qp->req.reads_out--;
		ack_upto(qp, qp->comp.acked, now);	/* WRs acknowledged meanwhile */
	}
	/* a go-back may have rewound the sender into this READ: the answers
	 * came anyway, so move it past them */
	rc_catch_up(qp);
}

void
rc_completer_ack(struct dpdat_qp *qp, uint32_t psn)
{
	if (qp->state == DPDAT_QPS_RTS)
		on_ack(qp, psn, ROCE_AETH_ACK, NULL, rte_get_tsc_cycles());
}

void
rc_completer(struct dpdat_qp *qp, struct rte_mbuf *m,
	     const struct roce_bth *bth, unsigned int hdr_off,
	     unsigned int paylen)
{
	const uint64_t now = rte_get_tsc_cycles();
	const uint32_t psn = roce_bth_psn(bth);
	const uint8_t op = bth->opcode;
	uint8_t sack[RC_SACK_LEN];
	struct roce_aeth aeth;
	uint8_t syn = ROCE_AETH_ACK;

	if (qp->state != DPDAT_QPS_RTS)
		return;
	if (roce_op_flags[op] & ROCE_F_AETH) {
		rc_mbuf_copy(m, hdr_off, (uint8_t *)&aeth, sizeof(aeth));
		syn = rte_be_to_cpu_32(aeth.smsn) >> 24;
	}
	if (op == ROCE_OP_ACK) {
		/* a SACK only from a peer that agreed to selective repeat;
		 * from any other an ACK has no payload (the dispatcher) */
		if (paylen == RC_SACK_LEN && qp->sr != NULL) {
			rc_mbuf_copy(m, hdr_off + sizeof(aeth), sack,
				     RC_SACK_LEN);
			on_ack(qp, psn, syn, sack, now);
		} else if (paylen == 0) {
			on_ack(qp, psn, syn, NULL, now);
		}
		return;
	}
	if (op == ROCE_OP_ATOMIC_ACK) {
		/* the value before the atomic, placed in host order as an
		 * 8-byte response (only an ACK syndrome answers one) */
		struct roce_atomackh ack;
		uint64_t orig;

		if ((syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK || paylen != 0)
			return;
		rc_mbuf_copy(m, hdr_off + sizeof(aeth), (uint8_t *)&ack,
			     sizeof(ack));
		orig = rte_be_to_cpu_64(ack.orig);
		if (qp->sr != NULL)
			on_read_resp_sr(qp, m, op, psn, 0, sizeof(orig),
					(const uint8_t *)&orig, now);
		else
			on_read_resp(qp, m, op, psn, 0, sizeof(orig),
				     (const uint8_t *)&orig, now);
		return;
	}
	if (qp->sr != NULL)
		on_read_resp_sr(qp, m, op, psn, hdr_off + roce_ext_len(op),
				paylen, NULL, now);
	else
		on_read_resp(qp, m, op, psn, hdr_off + roce_ext_len(op),
			     paylen, NULL, now);
}
