/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Responder: requests arriving from the peer. Packets are taken strictly in
 * PSN order (data lands in PSN order); a gap gets one sequence NAK, then
 * silence until the expected PSN arrives; duplicates are re-acknowledged and
 * duplicate READs answered again. Every RETH, and every later packet of a
 * WRITE, passes the registration access check with this QP's PZ: a peer
 * never touches memory outside a valid (key, PZ, bounds, privilege) tuple.
 */

#include <string.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "mr_priv.h"
#include "port_priv.h"
#include "rc_priv.h"

void
rc_send_ack(struct dpdat_qp *qp, uint8_t syndrome, uint32_t psn)
{
	rc_send_ack_data(qp, syndrome, psn, NULL, 0);
}

void
rc_send_ack_data(struct dpdat_qp *qp, uint8_t syndrome, uint32_t psn,
		 const void *data, unsigned int len)
{
	struct rte_mbuf *m;
	struct roce_aeth *aeth;
	uint32_t credit = syndrome == ROCE_AETH_ACK ?
			  ROCE_AETH_CREDIT_INVALID : 0;

	qp->resp.ack_due = false;
	m = rc_pkt_alloc(qp, ROCE_OP_ACK, psn, false, len);
	if (m == NULL)
		return;	/* the peer's timer will ask again */
	aeth = rte_pktmbuf_mtod_offset(m, struct roce_aeth *,
				       sizeof(struct roce_bth));
	aeth->smsn = rte_cpu_to_be_32((uint32_t)(syndrome | credit) << 24 |
				      (qp->resp.msn & ROCE_PSN_MASK));
	if (len != 0)
		memcpy(aeth + 1, data, len);
	if (syndrome != ROCE_AETH_ACK) {
		if ((syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
			qp->st.rnr_naks_sent++;
		else
			qp->st.naks_sent++;
	}
	rc_pkt_send(qp, m);
}

/* The QP breaks or goes (or its connection: a DREQ): its last ACK leaves
 * now. Held for a request to ride on, it completes the peer's last
 * requests. Sent already, it may have been lost, and a peer that hears of
 * the end (the DREQ behind it) or gets no answer to its retries (this QP
 * gone) would fail requests this side received: the repeat costs a frame
 * or two per connection (the DREQ's, the break's), and a requester
 * ignores an ACK it has seen. Not while READ answers are owed before it,
 * which will not go, and not from a QP already broken (its flush forgot
 * them). Caller holds the engine. */
void
rc_ack_last(struct dpdat_qp *qp)
{
	if (qp->state != DPDAT_QPS_ERR && qp->resp.nres == 0 &&
	    (qp->resp.ack_due || qp->resp.msn != 0))
		rc_send_ack(qp, ROCE_AETH_ACK, roce_psn_add(qp->resp.epsn,
							    ROCE_PSN_MASK));
}

/* A remote access the QP allows (dpdat_qp_set_access) to a region that
 * allows it: what every request is checked against. */
static inline enum dpdat_mr_check
resp_access(const struct dpdat_qp *qp, uint32_t key, uint64_t va,
	    uint64_t len, uint32_t priv, struct dpdat_mr_xlat *x)
{
	if (unlikely(!(qp->remote_ok & priv)))
		return DPDAT_MR_CHECK_PRIVILEGE;
	return mr_access_check(qp->dev->dom, key, va, len, priv, qp->pz_id,
			       qp->tag, x);
}

static void
ack_list_add(struct dpdat_qp *qp)
{
	qp->resp.on_ack_list = true;
	qp->resp.ack_next = qp->dev->ack_list;
	qp->dev->ack_list = qp;
}

static void
ack_later(struct dpdat_qp *qp)
{
	if (!qp->resp.ack_due)	/* an older one owed keeps its time */
		qp->resp.ack_tsc = rte_get_tsc_cycles();
	qp->resp.ack_due = true;
	qp->resp.asked = true;
	if (!qp->resp.on_ack_list)
		ack_list_add(qp);
}

/* A fatal request error: NAK it, break the QP. */
static void
fatal(struct dpdat_qp *qp, uint8_t syndrome, uint32_t psn)
{
	rc_send_ack(qp, syndrome, psn);
	RC_LOG(INFO, "qp %u: responder error 0x%02x at psn %u", qp->qpn,
	       syndrome, psn);
	if (rc_rwqe_have(qp) && qp->resp.msg == RC_RESP_MSG_SEND) {
		rc_complete_recv(qp, rc_rwqe_cur(qp), DPDAT_WC_REM_INV_REQ_ERR,
				 DPDAT_WR_RECV, 0, NULL);
		rc_rwqe_next(qp);
	}
	rc_qp_error(qp);
}

/* A request's key, range and privilege against the QP and the region
 * (resp_access); a failure breaks the QP with a remote access NAK at psn.
 * Whether it passed; *x (when not NULL) then holds the translation. */
static bool
resp_check_rkey(struct dpdat_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
		uint32_t priv, struct dpdat_mr_xlat *x, uint32_t psn)
{
	if (likely(resp_access(qp, rkey, va, len, priv, x) ==
		   DPDAT_MR_CHECK_OK))
		return true;
	fatal(qp, ROCE_AETH_NAK_REM_ACC, psn);
	return false;
}

/* Queue a READ to answer (new or duplicate). */
static int
read_enqueue(struct dpdat_qp *qp, uint64_t va, uint32_t rkey, uint32_t len,
	     uint32_t psn, bool dup)
{
	struct rc_read_res *r;

	if (qp->resp.nres == RC_MAX_RD)
		return -1;
	r = &qp->resp.res[(qp->resp.res_head + qp->resp.nres) % RC_MAX_RD];
	r->va = va;
	r->rkey = rkey;
	r->len = len;
	r->psn = psn;
	r->first_psn = psn;
	r->npkts = len == 0 ? 1 : (len + qp->conn.pmtu - 1) / qp->conn.pmtu;
	r->left = r->npkts;
	r->off = 0;
	r->atomic = false;
	r->dup = dup;
	qp->resp.nres++;
	return 0;
}

/* Under selective repeat: a part of an accepted READ asked for again.
 * Only what was sent already is sent again: a part of a READ still being
 * answered that is not out yet comes anyway, and answering it twice would
 * let the requester complete the READ, and post another, while this READ
 * still holds one of our resources. */
static void
hole_enqueue(struct dpdat_qp *qp, uint64_t va, uint32_t rkey, uint32_t len,
	     uint32_t psn)
{
	struct rc_sr *sr = qp->sr;
	struct rc_read_res *r;
	uint32_t i, sent;

	for (i = 0; i < qp->resp.nres; i++) {
		r = &qp->resp.res[(qp->resp.res_head + i) % RC_MAX_RD];
		if (roce_psn_diff(psn, r->first_psn) < 0 ||
		    roce_psn_diff(psn, roce_psn_add(r->first_psn,
						     r->npkts)) >= 0)
			continue;
		if (roce_psn_diff(psn, r->psn) >= 0)
			return;		/* not sent yet: it comes */
		sent = (uint32_t)roce_psn_diff(r->psn, psn);
		if ((uint64_t)sent * qp->conn.pmtu < len)
			len = sent * qp->conn.pmtu;
		break;
	}
	if (sr->n_holes == RC_RD_HOLES)
		return;		/* the requester asks again */
	r = &sr->hole[(sr->hole_head + sr->n_holes) % RC_RD_HOLES];
	*r = (struct rc_read_res){ .va = va, .rkey = rkey, .len = len,
		.psn = psn, .first_psn = psn, .dup = true,
		.npkts = len == 0 ? 1 : (len + qp->conn.pmtu - 1) / qp->conn.pmtu };
	r->left = r->npkts;
	sr->n_holes++;
}

/* A duplicate READ at psn: the requester went back to psn and will ask
 * again for everything after it, so drop the answers queued from there on
 * (the one in progress included) before queueing the new one. */
static void
read_restart(struct dpdat_qp *qp, uint32_t psn)
{
	struct rc_read_res *r;
	uint32_t i;

	for (i = 0; i < qp->resp.nres; i++) {
		r = &qp->resp.res[(qp->resp.res_head + i) % RC_MAX_RD];
		if (roce_psn_diff(psn, roce_psn_add(r->first_psn,
						    r->npkts)) < 0)
			break;
	}
	qp->resp.nres = i;
}

/* Queue a new READ or atomic (not a duplicate). With every resource
 * taken, the oldest may be a duplicate's re-execution that the requester
 * no longer waits for: one that went back after a spurious timeout and
 * then had the first answers after all asks beyond its window only once
 * it completed the oldest. That one is dropped, as a RoCE responder
 * reuses its oldest resource; a full queue of first executions is a
 * requester over its limit. */
static int
read_enqueue_new(struct dpdat_qp *qp, uint64_t va, uint32_t rkey,
		 uint32_t len, uint32_t psn)
{
	if (qp->resp.nres == RC_MAX_RD && qp->resp.res[qp->resp.res_head].dup) {
		qp->resp.res_head = (qp->resp.res_head + 1) % RC_MAX_RD;
		qp->resp.nres--;
	}
	return read_enqueue(qp, va, rkey, len, psn, false);
}

/* Whether every answer of PSNs [psn, psn + npkts) went out already, as a
 * go-back-N responder sends them, in PSN order: an answer still queued
 * did not. Only then did the requester possibly finish that READ. */
static bool
read_all_sent(const struct dpdat_qp *qp, uint32_t psn, uint32_t npkts)
{
	const uint32_t end = roce_psn_add(psn, npkts);
	const struct rc_read_res *r;
	uint32_t i;

	for (i = 0; i < qp->resp.nres; i++) {
		r = &qp->resp.res[(qp->resp.res_head + i) % RC_MAX_RD];
		/* r's answers not sent yet: [r->psn, its end) */
		if (roce_psn_diff(r->psn, end) < 0 &&
		    roce_psn_diff(psn, roce_psn_add(r->first_psn,
						     r->npkts)) < 0)
			return false;
	}
	return true;
}

/* One READ response packet of r: n bytes at x (checked), attached when
 * zero-copy may (rc_zc_read_payload), else copied. 0, or -1: not now. */
static int
read_resp_pkt(struct dpdat_qp *qp, const struct rc_read_res *r, uint8_t op,
	      uint32_t n, const struct dpdat_mr_xlat *x)
{
	struct rte_mbuf *m, *zc;
	uint8_t *p;

	zc = n != 0 ? rc_zc_read_payload(qp, x, n, (-n) & 3) : NULL;
	m = zc != NULL ? rc_pkt_alloc_hdr(qp, op, r->psn, false, n) :
			 rc_pkt_alloc(qp, op, r->psn, false, n);
	if (m == NULL) {
		rte_pktmbuf_free(zc);
		return -1;
	}
	p = rte_pktmbuf_mtod_offset(m, uint8_t *, sizeof(struct roce_bth));
	if (roce_op_flags[op] & ROCE_F_AETH) {
		((struct roce_aeth *)p)->smsn = rte_cpu_to_be_32(
			(uint32_t)ROCE_AETH_CREDIT_INVALID << 24 |
			(qp->resp.msn & ROCE_PSN_MASK));
		p += sizeof(struct roce_aeth);
	}
	if (zc != NULL) {
		if (rte_pktmbuf_chain(m, zc) != 0) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(zc);
			return -1;
		}
	} else if (n != 0) {
		memcpy(p, x->addr, n);
	}
	qp->st.tx_bytes += n;
	rc_pkt_send(qp, m);
	return 0;
}

/* The ATOMIC ACKNOWLEDGE of r: the value its target held before. 0, or
 * -1: not now. */
static int
atomic_ack(struct dpdat_qp *qp, const struct rc_read_res *r)
{
	struct rte_mbuf *m = rc_pkt_alloc(qp, ROCE_OP_ATOMIC_ACK, r->psn,
					  false, 0);
	struct roce_aeth *aeth;
	struct roce_atomackh *ack;

	if (m == NULL)
		return -1;
	aeth = rte_pktmbuf_mtod_offset(m, struct roce_aeth *,
				       sizeof(struct roce_bth));
	aeth->smsn = rte_cpu_to_be_32((uint32_t)ROCE_AETH_CREDIT_INVALID << 24 |
				      (qp->resp.msn & ROCE_PSN_MASK));
	ack = (struct roce_atomackh *)(aeth + 1);
	ack->orig = rte_cpu_to_be_64(r->orig);
	rc_pkt_send(qp, m);
	return 0;
}

/* Send READ responses, a budget at a time. */
void
rc_responder_reads(struct dpdat_qp *qp)
{
	unsigned int budget = RC_SEND_BUDGET;
	struct dpdat_mr_xlat x;
	struct rc_read_res *r;
	bool holes;
	uint32_t n, k;
	uint8_t op;

	while ((qp->resp.nres != 0 || (qp->sr != NULL && qp->sr->n_holes != 0)) &&
	       budget-- != 0 && rc_tx_room(qp->dev)) {
		holes = qp->sr != NULL && qp->sr->n_holes != 0;
		r = holes ? &qp->sr->hole[qp->sr->hole_head] :
			    &qp->resp.res[qp->resp.res_head];
		if (r->atomic) {
			if (atomic_ack(qp, r) != 0)
				return;
			goto answered;
		}
		k = r->npkts - r->left;
		n = RTE_MIN((uint32_t)qp->conn.pmtu, r->len - r->off);
		if (r->npkts == 1)
			op = ROCE_OP_READ_RESP_ONLY;
		else if (k == 0)
			op = ROCE_OP_READ_RESP_FIRST;
		else if (r->left == 1)
			op = ROCE_OP_READ_RESP_LAST;
		else
			op = ROCE_OP_READ_RESP_MIDDLE;
		/* checked again per packet: the memory may be gone. For a
		 * duplicate's answer (all of it sent before) that is a NAK
		 * but no error here: mostly its requester had the answer
		 * meanwhile (a part asked again because it was late came
		 * anyway), finished the READ and let the owner free the
		 * region; the NAK names a PSN it completed, and it ignores
		 * it. One that still waits gets the remote access error.
		 * Breaking this QP for it broke MPI's rendezvous over
		 * ofi_rxm on a loaded machine. */
		if (n != 0 && resp_access(qp, r->rkey, r->va + r->off, n,
				DPDAT_MEM_PRIV_REMOTE_READ, &x) !=
		    DPDAT_MR_CHECK_OK) {
			if (!r->dup) {
				fatal(qp, ROCE_AETH_NAK_REM_ACC, r->psn);
				return;
			}
			rc_send_ack(qp, ROCE_AETH_NAK_REM_ACC, r->psn);
			qp->st.dup_read_dropped++;
			r->left = 1;
			goto answered;
		}
		if (read_resp_pkt(qp, r, op, n, &x) != 0)
			return;
		r->off += n;
answered:
		r->psn = roce_psn_add(r->psn, 1);
		if (--r->left != 0)
			continue;
		if (holes) {
			qp->sr->hole_head = (qp->sr->hole_head + 1) %
					    RC_RD_HOLES;
			qp->sr->n_holes--;
		} else {
			qp->resp.res_head = (qp->resp.res_head + 1) % RC_MAX_RD;
			qp->resp.nres--;
		}
	}
	/* the ACK held back behind these answers: now, or where ACKs that
	 * may ride wait (rc_acks(), after this pass's requests) */
	if (qp->resp.nres == 0 && qp->resp.ack_due) {
		if (!qp->conn.ack_ride)
			rc_send_ack(qp, ROCE_AETH_ACK,
				    roce_psn_add(qp->resp.epsn, ROCE_PSN_MASK));
		else if (!qp->resp.on_ack_list)
			ack_list_add(qp);
	}
}

static bool
read_reth(const struct rte_mbuf *m, unsigned int off, uint64_t *va,
	  uint32_t *rkey, uint32_t *len)
{
	struct roce_reth reth;

	rc_mbuf_copy(m, off, (uint8_t *)&reth, sizeof(reth));
	*va = rte_be_to_cpu_64(reth.va);
	*rkey = rte_be_to_cpu_32(reth.rkey);
	*len = rte_be_to_cpu_32(reth.dlen);
	return true;
}

/* Is op allowed here, and is its payload the size its position demands? */
static bool
seq_ok(struct dpdat_qp *qp, uint8_t op, unsigned int paylen)
{
	const uint16_t f = roce_op_flags[op];
	const bool send = op <= ROCE_OP_SEND_ONLY_IMM;
	const bool write = op >= ROCE_OP_WRITE_FIRST &&
			   op <= ROCE_OP_WRITE_ONLY_IMM;

	if (!send && !write && op != ROCE_OP_READ_REQUEST &&
	    op != ROCE_OP_CMP_SWAP && op != ROCE_OP_FETCH_ADD)
		return false;	/* responses and ACKs never come here */
	switch (qp->resp.msg) {
	case RC_RESP_MSG_SEND:
		if (!send || (f & ROCE_F_FIRST))
			return false;
		break;
	case RC_RESP_MSG_WRITE:
		if (!write || (f & ROCE_F_FIRST))
			return false;
		break;
	default:
		if (!(f & ROCE_F_FIRST))
			return false;
	}
	if (!(f & ROCE_F_LAST))	/* FIRST and MIDDLE carry a full PMTU */
		return paylen == qp->conn.pmtu;
	return paylen <= qp->conn.pmtu;
}

/* SEND and WRITE-with-immediate need a receive WR; false means RNR. A QP
 * on an SRQ takes its WR now, at the start of the message, and keeps it to
 * the end. */
static bool
need_recv(struct dpdat_qp *qp, uint8_t op)
{
	const bool imm_write = op == ROCE_OP_WRITE_ONLY_IMM ||
			       op == ROCE_OP_WRITE_LAST_IMM;
	const bool send_start = op == ROCE_OP_SEND_FIRST ||
				op == ROCE_OP_SEND_ONLY ||
				op == ROCE_OP_SEND_ONLY_IMM;

	if (!imm_write && !send_start)
		return true;
	if (qp->resp.srq != NULL)
		return qp->resp.srq_held || rc_srq_take(qp);
	if (qp->resp.rq_head == qp->resp.rq_tail)
		rc_pull_posted(qp);	/* posted since the last pull? */
	return qp->resp.rq_head != qp->resp.rq_tail;
}

static void
do_send(struct dpdat_qp *qp, struct rte_mbuf *m, uint8_t op, uint32_t psn,
	unsigned int off, unsigned int paylen)
{
	const uint16_t f = roce_op_flags[op];
	struct rc_rwqe *w = rc_rwqe_cur(qp);
	enum dpdat_wc_status st;
	uint32_t imm;

	if (f & ROCE_F_FIRST)
		qp->resp.recv_off = 0;
	if (f & ROCE_F_IMM) {
		rc_mbuf_copy(m, off, (uint8_t *)&imm, 4);
		off += 4;
	}
	if (qp->resp.recv_off + paylen > w->len) {
		rc_complete_recv(qp, w, DPDAT_WC_LOC_LEN_ERR, DPDAT_WR_RECV,
				 qp->resp.recv_off, NULL);
		rc_rwqe_next(qp);
		qp->resp.msg = RC_RESP_MSG_NONE;
		fatal(qp, ROCE_AETH_NAK_INV_REQ, psn);
		return;
	}
	st = rc_mbuf_to_sge(qp, w->sge, w->num_sge, qp->resp.recv_off, m, off,
			    paylen);
	if (st != DPDAT_WC_SUCCESS) {
		rc_complete_recv(qp, w, st, DPDAT_WR_RECV, qp->resp.recv_off, NULL);
		rc_rwqe_next(qp);
		qp->resp.msg = RC_RESP_MSG_NONE;
		fatal(qp, ROCE_AETH_NAK_REM_OP, psn);
		return;
	}
	qp->resp.recv_off += paylen;
	if (f & ROCE_F_LAST) {
		rc_complete_recv(qp, w, DPDAT_WC_SUCCESS, DPDAT_WR_RECV,
				 qp->resp.recv_off, (f & ROCE_F_IMM) ? &imm : NULL);
		rc_rwqe_next(qp);
		qp->resp.msn++;
		qp->resp.msg = RC_RESP_MSG_NONE;
	} else {
		qp->resp.msg = RC_RESP_MSG_SEND;
	}
	qp->resp.epsn = roce_psn_add(psn, 1);
}

static void
do_write(struct dpdat_qp *qp, struct rte_mbuf *m, uint8_t op, uint32_t psn,
	 unsigned int off, unsigned int paylen)
{
	const uint16_t f = roce_op_flags[op];
	struct dpdat_mr_xlat x;
	uint64_t va;
	uint32_t rkey, len, imm;

	if (f & ROCE_F_RETH) {
		read_reth(m, off, &va, &rkey, &len);
		off += sizeof(struct roce_reth);
		if ((f & ROCE_F_LAST) ? paylen != len : len <= qp->conn.pmtu) {
			fatal(qp, ROCE_AETH_NAK_INV_REQ, psn);
			return;
		}
		if (!resp_check_rkey(qp, rkey, va, len,
				     DPDAT_MEM_PRIV_REMOTE_WRITE, NULL, psn))
			return;
		qp->resp.wva = va;
		qp->resp.wrkey = rkey;
		qp->resp.wleft = len;
		qp->resp.wlen = len;
	}
	if (f & ROCE_F_IMM) {
		rc_mbuf_copy(m, off, (uint8_t *)&imm, 4);
		off += 4;
	}
	if (paylen > qp->resp.wleft || ((f & ROCE_F_LAST) && paylen != qp->resp.wleft)) {
		fatal(qp, ROCE_AETH_NAK_INV_REQ, psn);
		return;
	}
	if (paylen != 0) {
		/* per packet: the region may have been freed meanwhile */
		if (!resp_check_rkey(qp, qp->resp.wrkey, qp->resp.wva, paylen,
				     DPDAT_MEM_PRIV_REMOTE_WRITE, &x, psn))
			return;
		rc_mbuf_copy(m, off, x.addr, paylen);
	}
	qp->resp.wva += paylen;
	qp->resp.wleft -= paylen;
	if (f & ROCE_F_LAST) {
		if (f & ROCE_F_IMM) {
			rc_complete_recv(qp, rc_rwqe_cur(qp), DPDAT_WC_SUCCESS,
					 DPDAT_WR_RECV_RDMA_IMM, qp->resp.wlen,
					 &imm);
			rc_rwqe_next(qp);
		}
		qp->resp.msn++;
		qp->resp.msg = RC_RESP_MSG_NONE;
	} else {
		qp->resp.msg = RC_RESP_MSG_WRITE;
	}
	qp->resp.epsn = roce_psn_add(psn, 1);
}

/* A READ accepted: remembered, so that a duplicate can be held to it.
 * One that goes on where the last left off (next PSN, next address, same
 * key, the last one whole PMTUs) joins it: a requester whose READ request
 * was lost asks for it again in parts (selective repeat: at most half its
 * window a time), and here those parts are new READs; its later asks may
 * cross from one part into the next, and must match as one READ. */
static void
read_seen(struct dpdat_qp *qp, uint64_t va, uint32_t rkey, uint32_t len,
	  uint32_t psn, uint32_t npkts)
{
	struct rc_read_seen *e =
		&qp->resp.rd_seen[(qp->resp.rd_seen_next - 1) % RC_RD_SEEN];

	if (qp->resp.rd_seen_next != 0 && e->rkey == rkey &&
	    e->va + e->len == va && e->len == (uint64_t)e->npkts * qp->conn.pmtu &&
	    roce_psn_add(e->first_psn, e->npkts) == psn &&
	    e->npkts + npkts < RC_RD_SEEN_PKTS) {
		e->len += len;
		e->npkts += npkts;
		return;
	}
	qp->resp.rd_seen[qp->resp.rd_seen_next++ % RC_RD_SEEN] =
		(struct rc_read_seen){ .va = va, .len = len, .rkey = rkey,
				       .first_psn = psn, .npkts = npkts };
}

/* Whether a duplicate READ at psn asks for a part of a READ accepted at
 * that PSN's run, as a requester asks again: the same key, the address
 * moved on by the responses before psn. Anything else comes from someone
 * else (and a wrong key on a duplicate breaks nothing, so without this it
 * would be a free way to test keys). *len is cut to the READ's end: a
 * requester that asks in parts after its request was lost may ask across
 * the end of the part taken as a READ here (its next part is taken as a
 * new READ once the responses up to the end are in). */
static bool
read_was_seen(const struct dpdat_qp *qp, uint64_t va, uint32_t rkey,
	      uint32_t *len, uint32_t psn)
{
	const struct rc_read_seen *e;
	uint64_t skip;
	int32_t k;

	/* newest first: after the PSNs wrap, an old READ may cover psn */
	for (unsigned int i = 1; i <= RC_RD_SEEN; i++) {
		e = &qp->resp.rd_seen[(qp->resp.rd_seen_next - i) % RC_RD_SEEN];
		k = roce_psn_diff(psn, e->first_psn);
		if (k < 0 || (uint32_t)k >= e->npkts)
			continue;
		skip = (uint64_t)k * qp->conn.pmtu;
		if (rkey != e->rkey || va != e->va + skip || skip > e->len)
			return false;
		*len = (uint32_t)RTE_MIN((uint64_t)*len, e->len - skip);
		return true;
	}
	return false;
}

/* A READ asked for again (its PSN before epsn): answered again only
 * inside a READ accepted before (read_was_seen, which cuts it to that
 * READ), with the key still valid; anything else is dropped: a wrong key
 * on a duplicate breaks nothing, so answering it would be a free way to
 * test keys. */
static void
read_replay(struct dpdat_qp *qp, struct rte_mbuf *m, uint32_t psn,
	    unsigned int off)
{
	uint64_t va;
	uint32_t rkey, len, npkts;
	bool sent;

	read_reth(m, off, &va, &rkey, &len);
	if (!read_was_seen(qp, va, rkey, &len, psn) || len > (1u << 31) ||
	    resp_access(qp, rkey, va, len, DPDAT_MEM_PRIV_REMOTE_READ,
			NULL) != DPDAT_MR_CHECK_OK)
		return;
	npkts = len == 0 ? 1 : (len + qp->conn.pmtu - 1) / qp->conn.pmtu;
	if (roce_psn_diff(roce_psn_add(psn, npkts), qp->resp.epsn) > 0)
		return;
	if (qp->sr != NULL) {
		/* selective repeat: the part asked for, first; the answers
		 * under way go on */
		hole_enqueue(qp, va, rkey, len, psn);
		return;
	}
	/* a duplicate only if all of it went out before: a part never sent
	 * is still owed, and if its region goes meanwhile the requester gets
	 * the remote access error */
	sent = read_all_sent(qp, psn, npkts);
	read_restart(qp, psn);
	read_enqueue(qp, va, rkey, len, psn, sent);
}

/* A READ at epsn: checked, queued for the answers (rc_responder_reads),
 * remembered for its duplicates (read_seen). */
static void
do_read(struct dpdat_qp *qp, struct rte_mbuf *m, uint32_t psn,
	unsigned int off)
{
	uint64_t va;
	uint32_t rkey, len, npkts;

	read_reth(m, off, &va, &rkey, &len);
	/* a zero-length READ still names a key: it must be valid */
	if (len > (1u << 31)) {
		fatal(qp, ROCE_AETH_NAK_REM_ACC, psn);
		return;
	}
	if (!resp_check_rkey(qp, rkey, va, len, DPDAT_MEM_PRIV_REMOTE_READ,
			     NULL, psn))
		return;
	npkts = len == 0 ? 1 : (len + qp->conn.pmtu - 1) / qp->conn.pmtu;
	if (read_enqueue_new(qp, va, rkey, len, psn) != 0) {
		/* more READs than the resources we offered */
		fatal(qp, ROCE_AETH_NAK_INV_REQ, psn);
		return;
	}
	read_seen(qp, va, rkey, len, psn, npkts);
	qp->resp.msn++;
	qp->resp.epsn = roce_psn_add(psn, npkts);
	/* the READ took those PSNs: nothing legitimate is held there */
	if (qp->sr != NULL && qp->sr->n_held != 0 && npkts > 1)
		rc_sr_drop_range(qp, roce_psn_add(psn, 1), npkts - 1);
}

/* An atomic asked for again: answered with the result kept, never
 * executed again, and only for the same target and key as the one
 * executed at psn (anything else comes from someone else); one not kept,
 * or whose answer is still queued, is dropped (the requester asks again,
 * then gives up). */
static void
atomic_replay(struct dpdat_qp *qp, struct rte_mbuf *m, uint32_t psn,
	      unsigned int off)
{
	struct rc_atomic_res *a;
	struct roce_atometh ae;
	struct rc_read_res *r;
	uint64_t orig;
	uint32_t i;

	rc_mbuf_copy(m, off, (uint8_t *)&ae, sizeof(ae));
	for (i = qp->resp.n_atom; i-- > 0; ) {
		a = &qp->resp.atom[(qp->resp.atom_head + i) % RC_MAX_RD];
		if (a->psn == psn)
			break;
	}
	if (i == UINT32_MAX || a->va != rte_be_to_cpu_64(ae.va) ||
	    a->rkey != rte_be_to_cpu_32(ae.rkey))
		return;
	/* an answer still queued goes out anyway */
	for (i = 0; i < qp->resp.nres; i++) {
		r = &qp->resp.res[(qp->resp.res_head + i) % RC_MAX_RD];
		if (r->first_psn == psn)
			return;
	}
	for (i = 0; qp->sr != NULL && i < qp->sr->n_holes; i++) {
		r = &qp->sr->hole[(qp->sr->hole_head + i) % RC_RD_HOLES];
		if (r->atomic && r->first_psn == psn)
			return;
	}
	orig = a->orig;
	if (qp->sr != NULL) {
		if (qp->sr->n_holes == RC_RD_HOLES)
			return;
		r = &qp->sr->hole[(qp->sr->hole_head +
				   qp->sr->n_holes++) % RC_RD_HOLES];
	} else {
		read_restart(qp, psn);
		if (read_enqueue(qp, 0, 0, 8, psn, true) != 0)
			return;
		r = &qp->resp.res[(qp->resp.res_head + qp->resp.nres - 1) % RC_MAX_RD];
	}
	*r = (struct rc_read_res){ .len = 8, .psn = psn,
		.first_psn = psn, .left = 1, .npkts = 1,
		.atomic = true, .dup = true, .orig = orig };
	qp->st.atomic_replays++;
}

/* An atomic request (CmpSwap, FetchAdd) at epsn: checked (8-byte
 * aligned, key, PZ, bounds, the atomic privilege), executed on the host's
 * memory with the CPU's own atomic instruction (so it is atomic with every
 * other responder, engine and thread touching the word), its result kept
 * for atomic_replay; the answer waits behind the READs being answered. */
static void
do_atomic(struct dpdat_qp *qp, struct rte_mbuf *m, uint8_t op, uint32_t psn,
	  unsigned int off)
{
	struct dpdat_mr_xlat x;
	struct roce_atometh ae;
	struct rc_read_res *r;
	uint64_t va, arg, orig;

	rc_mbuf_copy(m, off, (uint8_t *)&ae, sizeof(ae));
	va = rte_be_to_cpu_64(ae.va);
	if (va % 8 != 0) {
		fatal(qp, ROCE_AETH_NAK_INV_REQ, psn);
		return;
	}
	if (!resp_check_rkey(qp, rte_be_to_cpu_32(ae.rkey), va, 8,
			     DPDAT_MEM_PRIV_REMOTE_ATOMIC, &x, psn))
		return;
	if (read_enqueue_new(qp, 0, 0, 8, psn) != 0) {
		/* more READs and atomics than the resources we offered */
		fatal(qp, ROCE_AETH_NAK_INV_REQ, psn);
		return;
	}
	arg = rte_be_to_cpu_64(ae.swap_add);
	if (op == ROCE_OP_CMP_SWAP) {
		orig = rte_be_to_cpu_64(ae.compare);
		/* on a mismatch orig becomes the word's value */
		__atomic_compare_exchange_n((uint64_t *)x.addr, &orig, arg,
					    false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add((uint64_t *)x.addr, arg,
					  __ATOMIC_SEQ_CST);
	}
	r = &qp->resp.res[(qp->resp.res_head + qp->resp.nres - 1) % RC_MAX_RD];
	r->atomic = true;
	r->orig = orig;
	if (qp->resp.n_atom == RC_MAX_RD) {	/* forget the oldest */
		qp->resp.atom_head = (qp->resp.atom_head + 1) % RC_MAX_RD;
		qp->resp.n_atom--;
	}
	qp->resp.atom[(qp->resp.atom_head + qp->resp.n_atom++) % RC_MAX_RD] =
		(struct rc_atomic_res){ .psn = psn, .orig = orig, .va = va,
					.rkey = rte_be_to_cpu_32(ae.rkey) };
	qp->st.atomics++;
	qp->resp.msn++;
	qp->resp.epsn = roce_psn_add(psn, 1);
}

/* A packet past a gap. Under selective repeat it is held, else dropped;
 * one NAK per gap, and with a dpdat peer again for a packet asking for an
 * answer: the first NAK may have been lost (a dpdat requester acts on a
 * go-back-N repeat at most once a round trip, on a SACK only for what it
 * shows lost; any other would go back at each repeat). */
static void
out_of_order(struct dpdat_qp *qp, struct rte_mbuf *m,
	     const struct roce_bth *bth, uint32_t psn, unsigned int off,
	     unsigned int paylen)
{
	const bool again = (qp->sr != NULL || qp->conn.nak_repeat) &&
			   (rte_be_to_cpu_32(bth->apsn) & ROCE_BTH_ACKREQ);

	qp->st.out_of_seq++;
	if (qp->sr != NULL && rc_sr_hold(qp, m, psn, off, paylen)) {
		if (!qp->resp.nak_sent || again) {
			qp->resp.nak_sent = true;
			rc_sr_send_sack(qp);
		}
		return;
	}
	if (!qp->resp.nak_sent || again) {
		qp->resp.nak_sent = true;
		if (qp->sr != NULL)
			rc_sr_send_sack(qp);
		else
			rc_send_ack(qp, ROCE_AETH_NAK_PSN, qp->resp.epsn);
	}
}

static void in_order(struct dpdat_qp *qp, struct rte_mbuf *m,
		     const struct roce_bth *bth, unsigned int off,
		     unsigned int paylen);

/* The gap filled: the packets held after it, in PSN order. */
static void
replay_held(struct dpdat_qp *qp)
{
	struct roce_bth copy;
	const struct roce_bth *bth;
	unsigned int off, paylen;
	struct rte_mbuf *m;
	bool any = false;

	while (qp->state == DPDAT_QPS_RTS &&
	       (m = rc_sr_next(qp, &off, &paylen)) != NULL) {
		/* where every received frame has it (dev_dispatch): off is
		 * past a riding ACK too */
		bth = rte_pktmbuf_read(m, PORT_HDR_LEN, sizeof(*bth), &copy);
		in_order(qp, m, bth, off, paylen);
		rte_pktmbuf_free(m);
		any = true;
	}
	if (qp->state != DPDAT_QPS_RTS)
		rc_sr_drop_held(qp);
	else if (any)
		ack_later(qp);	/* tell the requester at once */
}

void
rc_responder(struct dpdat_qp *qp, struct rte_mbuf *m,
	     const struct roce_bth *bth, unsigned int off, unsigned int paylen)
{
	const uint32_t psn = roce_bth_psn(bth);
	const int32_t d = roce_psn_diff(psn, qp->resp.epsn);

	if (qp->state != DPDAT_QPS_RTS && qp->state != DPDAT_QPS_RTR)
		return;
	if (d > 0) {
		out_of_order(qp, m, bth, psn, off, paylen);
		return;
	}
	if (d < 0) {
		qp->st.dup_rcvd++;
		if (bth->opcode == ROCE_OP_READ_REQUEST)
			read_replay(qp, m, psn, off);
		else if (bth->opcode == ROCE_OP_CMP_SWAP ||
			 bth->opcode == ROCE_OP_FETCH_ADD)
			atomic_replay(qp, m, psn, off);
		else
			ack_later(qp);
		return;
	}
	qp->resp.nak_sent = false;
	in_order(qp, m, bth, off, paylen);
	if (qp->sr != NULL && qp->sr->n_held != 0)
		replay_held(qp);
}

/* The packet at epsn. */
static void
in_order(struct dpdat_qp *qp, struct rte_mbuf *m, const struct roce_bth *bth,
	 unsigned int off, unsigned int paylen)
{
	const uint32_t psn = roce_bth_psn(bth);
	const uint8_t op = bth->opcode;

	if (!seq_ok(qp, op, paylen)) {
		fatal(qp, ROCE_AETH_NAK_INV_REQ, psn);
		return;
	}
	if (!need_recv(qp, op)) {
		/* the requester goes back to psn: what is held after it
		 * comes again */
		rc_sr_drop_held(qp);
		rc_send_ack(qp, ROCE_AETH_RNR_NAK | RC_RNR_TIMER_CODE, psn);
		return;
	}
	if (op <= ROCE_OP_SEND_ONLY_IMM)
		do_send(qp, m, op, psn, off, paylen);
	else if (op == ROCE_OP_READ_REQUEST)
		do_read(qp, m, psn, off);
	else if (op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD)
		do_atomic(qp, m, op, psn, off);
	else
		do_write(qp, m, op, psn, off, paylen);
	/* a READ's or an atomic's response is its acknowledgement */
	if (qp->state == DPDAT_QPS_RTS &&
	    (rte_be_to_cpu_32(bth->apsn) & ROCE_BTH_ACKREQ) &&
	    op != ROCE_OP_READ_REQUEST && op != ROCE_OP_CMP_SWAP &&
	    op != ROCE_OP_FETCH_ADD)
		ack_later(qp);
}

enum rc_resp_state
rc_resp_state(const struct dpdat_qp *qp)
{
	if (qp->state == DPDAT_QPS_ERR)
		return RC_RESP_ERROR;
	if (qp->sr != NULL && qp->sr->n_held != 0)
		return RC_RESP_HOLDING;
	if (qp->resp.nak_sent)
		return RC_RESP_GAP;
	if (qp->resp.nres != 0 || (qp->sr != NULL && qp->sr->n_holes != 0))
		return RC_RESP_READING;
	if (qp->resp.msg == RC_RESP_MSG_SEND)
		return RC_RESP_SEND;
	if (qp->resp.msg == RC_RESP_MSG_WRITE)
		return RC_RESP_WRITE;
	return RC_RESP_IDLE;
}

const char *
rc_resp_state_name(enum rc_resp_state s)
{
	static const char *const names[] = {
		[RC_RESP_IDLE] = "idle", [RC_RESP_SEND] = "in-send",
		[RC_RESP_WRITE] = "in-write", [RC_RESP_READING] = "reading",
		[RC_RESP_GAP] = "gap-nak-sent", [RC_RESP_HOLDING] = "holding",
		[RC_RESP_ERROR] = "error",
	};

	return s < RTE_DIM(names) ? names[s] : "?";
}

#ifdef DPDAT_DEBUG
#define RESP_ASSERT(cond) do {						\
	if (!(cond))							\
		rte_panic("qp %u: responder invariant '%s' broken "	\
			  "after %s: epsn %u msn %u msg %u "		\
			  "nak_sent %d wleft %u wlen %u recv_off %u "	\
			  "nres %u held %u\n", qp->qpn, #cond, where,	\
			  qp->resp.epsn, qp->resp.msn, qp->resp.msg,		\
			  qp->resp.nak_sent, qp->resp.wleft, qp->resp.wlen,		\
			  qp->resp.recv_off, qp->resp.nres,			\
			  qp->sr != NULL ? qp->sr->n_held : 0);		\
} while (0)

/* a <= b for PSNs modulo 2^24 */
#define PSN_LE(a, b) (roce_psn_diff((b), (a)) >= 0)

/* A READ being answered: its next response is the one after those sent. */
static void
read_res_check(const struct dpdat_qp *qp, const struct rc_read_res *r,
	       const char *where)
{
	RESP_ASSERT(r->left >= 1 && r->left <= r->npkts);
	RESP_ASSERT(r->psn == roce_psn_add(r->first_psn, r->npkts - r->left));
	RESP_ASSERT(r->off <= r->len);
	/* only inside what was accepted */
	RESP_ASSERT(PSN_LE(roce_psn_add(r->first_psn, r->npkts), qp->resp.epsn));
}

/* Selective repeat: what is held lies past the gap, within the window,
 * each packet in the slot of its PSN; the counts agree with the map. */
static void
held_check(const struct dpdat_qp *qp, const char *where)
{
	const struct rc_sr *sr = qp->sr;
	const struct rc_held *h;
	uint32_t i, w, n = 0;
	uint64_t bits;
	int32_t d;

	RESP_ASSERT(sr->n_held <= qp->dev->max_held_qp);
	/* the slots set in the map, a word at a time: the check runs after
	 * every step, so it visits what is held, not the whole window */
	for (w = 0; w < RC_SR_WND / 64; w++) {
		for (bits = sr->map[w]; bits != 0; bits &= bits - 1) {
			i = w * 64 + (uint32_t)__builtin_ctzll(bits);
			n++;
			h = &sr->held[i];
			d = roce_psn_diff(h->psn, qp->resp.epsn);
			RESP_ASSERT(h->m != NULL);
			RESP_ASSERT((h->psn & (RC_SR_WND - 1)) == i);
			RESP_ASSERT(d > 0 && d < RC_SR_WND);
		}
	}
	RESP_ASSERT(n == sr->n_held);
	RESP_ASSERT(sr->n_holes <= RC_RD_HOLES && sr->hole_head < RC_RD_HOLES);
	for (i = 0; i < sr->n_holes; i++)
		read_res_check(qp, &sr->hole[(sr->hole_head + i) %
					     RC_RD_HOLES], where);
}

/* The responder's invariants, written once. */
void
rc_resp_check(const struct dpdat_qp *qp, const char *where)
{
	const struct rc_dev *dev = qp->dev;
	const struct rc_read_res *r, *prev = NULL;
	const struct dpdat_qp *q;
	uint32_t i;

	RESP_ASSERT(dev->n_held <= dev->max_held);
	if (qp->state != DPDAT_QPS_RTS && qp->state != DPDAT_QPS_RTR)
		return;	/* an error flushes; before RTR nothing comes */
	/* the message in progress */
	RESP_ASSERT(qp->resp.msg <= RC_RESP_MSG_WRITE);
	RESP_ASSERT(qp->resp.wleft <= qp->resp.wlen);
	if (qp->resp.msg != RC_RESP_MSG_WRITE)
		RESP_ASSERT(qp->resp.wleft == 0);
	if (qp->resp.msg == RC_RESP_MSG_SEND) {
		/* the receive WR it lands in is held, full PMTUs so far */
		RESP_ASSERT(rc_rwqe_have(qp));
		RESP_ASSERT(qp->resp.recv_off != 0 && qp->resp.recv_off % qp->conn.pmtu == 0);
		RESP_ASSERT(qp->resp.recv_off <=
			    rc_rwqe_cur((struct dpdat_qp *)qp)->len);
	}
	/* receive queues */
	RESP_ASSERT(qp->resp.srq != NULL || !qp->resp.srq_held);
	RESP_ASSERT(qp->resp.rq_tail - qp->resp.rq_head <= qp->resp.rq_size);
	/* READs being answered: oldest first, in PSN order, all accepted */
	RESP_ASSERT(qp->resp.nres <= RC_MAX_RD && qp->resp.res_head < RC_MAX_RD);
	for (i = 0; i < qp->resp.nres; i++) {
		r = &qp->resp.res[(qp->resp.res_head + i) % RC_MAX_RD];
		read_res_check(qp, r, where);
		if (prev != NULL)
			RESP_ASSERT(PSN_LE(roce_psn_add(prev->first_psn,
							prev->npkts),
					   r->first_psn));
		prev = r;
	}
	if (qp->sr != NULL)
		held_check(qp, where);
	/* the ACK list: on it exactly when the flag says so; an ACK owed
	 * is on its way, or waits behind READ responses */
	if (qp->resp.on_ack_list) {
		for (q = dev->ack_list, i = 0; q != NULL && q != qp &&
		     i <= dev->n_qps; q = q->resp.ack_next, i++)
			;
		RESP_ASSERT(q == qp);
	} else {
		RESP_ASSERT(qp->resp.ack_next == NULL);
	}
	RESP_ASSERT(!qp->resp.ack_due || qp->resp.on_ack_list || qp->resp.nres != 0);
}
#endif
