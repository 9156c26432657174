/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* The RC layer's share of the engine: the device's QP table and transmit
 * batch, a received frame to its QP, and every QP's turn to send. The loop
 * that calls these is the device's (lib/dev); dev->busy says who runs it,
 * and the control path takes it too, briefly, to change the QP table. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include <dpdat/dpdat_env.h>
#include <dpdat/dpdat_port.h>

#include "port_priv.h"
#include "rc_priv.h"

RTE_LOG_REGISTER(dpdat_rc_logtype, dpdat.rc, NOTICE);

void
rc_lock_engine(struct rc_dev *dev)
{
	while (__atomic_exchange_n(&dev->busy, 1, __ATOMIC_ACQUIRE) != 0)
		rte_pause();
}

void
rc_unlock_engine(struct rc_dev *dev)
{
	__atomic_store_n(&dev->busy, 0, __ATOMIC_RELEASE);
}

static int
rc_run_cb(void *dev)
{
	struct rc_dev *d = dev;

	return d->run(d);
}

evq_progress_fn
rc_dev_progress_fn(const struct rc_dev *dev)
{
	return dev->progress == DPDAT_PROGRESS_INLINE ? rc_run_cb : NULL;
}

int
rc_dev_poll_run(struct rc_dev *dev)
{
	uint64_t now = rte_get_tsc_cycles();
	/* signed: another poller may have ended one after this read now */
	int64_t gap = (int64_t)(now - __atomic_load_n(&dev->poll_end,
						      __ATOMIC_RELAXED));
	int n;

	/* a long iteration (64 KiB messages to copy) is no gap */
	if (gap > (int64_t)__atomic_load_n(&dev->poll_gap, __ATOMIC_RELAXED))
		__atomic_store_n(&dev->poll_gap, (uint64_t)gap,
				 __ATOMIC_RELAXED);
	__atomic_store_n(&dev->poll_start, now, __ATOMIC_RELAXED);
	n = dev->run(dev);
	__atomic_store_n(&dev->poll_end, rte_get_tsc_cycles(),
			 __ATOMIC_RELAXED);
	return n;
}

/* Send the batch; what the device cannot take now stays for the next
 * iteration (back-pressure instead of loss: producers check rc_tx_room). */
void
rc_tx_flush(struct rc_dev *dev)
{
	uint16_t sent;

	if (dev->n_tx == 0)
		return;
	sent = port_tx_some(dev->port, dev->tx, dev->n_tx);
	if (sent != 0 && sent < dev->n_tx)
		memmove(dev->tx, dev->tx + sent,
			(dev->n_tx - sent) * sizeof(dev->tx[0]));
	dev->n_tx -= sent;
}

/* Drop queued packets of a QP that broke or is going away (the link may be
 * down and the batch stuck): their mbufs, and the zero-copy memory they
 * hold, go back now. Requests only unless all: a NAK telling the peer
 * about the error still goes out. Caller holds the engine. */
void
rc_tx_purge(struct rc_dev *dev, uint32_t dqpn, uint32_t dip, bool all)
{
	const struct rte_ipv4_hdr *ip;
	struct roce_bth b;
	uint16_t i, n = 0;

	for (i = 0; i < dev->n_tx; i++) {
		struct rte_mbuf *m = dev->tx[i];

		ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
					     sizeof(struct rte_ether_hdr));
		rc_mbuf_copy(m, PORT_HDR_LEN, (uint8_t *)&b, sizeof(b));
		if (ip->dst_addr == dip && roce_bth_qpn(&b) == dqpn &&
		    (all || roce_op_request(b.opcode)))
			rte_pktmbuf_free(m);
		else
			dev->tx[n++] = m;
	}
	dev->n_tx = n;
}

bool
rc_tx_room(struct rc_dev *dev)
{
	if (dev->n_tx >= RC_TX_BURST - 1)
		rc_tx_flush(dev);
	return dev->n_tx < RC_TX_BURST - 1;
}

void
rc_tx(struct rc_dev *dev, struct rte_mbuf *m)
{
	if (dev->n_tx == RC_TX_BURST)
		rc_tx_flush(dev);
	if (dev->n_tx == RC_TX_BURST) {
		/* control packets (ACK/NAK) may overflow: the peer retries */
		dev->port->st.drop_tx_full++;
		rte_pktmbuf_free(m);
		return;
	}
	dev->tx[dev->n_tx++] = m;
}

/* A frame of the peer's arrived marked CE (congestion on the path): tell
 * the peer with a CNP (BTH opcode 0x81 to the peer's QP, PSN 0, BECN, 16
 * zero bytes; Not-ECT), at most one a QP in RC_CNP_GAP_US, as a RoCE
 * NIC's notification point does. Not for a CNP: that would echo. */
static void
rc_ecn_ce(struct dpdat_qp *qp, const struct roce_bth *bth)
{
	const uint64_t now = rte_get_tsc_cycles();
	struct rte_mbuf *m;
	struct roce_bth *b;

	qp->st.ecn_ce_rcvd++;
	if (bth->opcode == ROCE_OP_CNP ||
	    now - qp->resp.cnp_tsc < qp->dev->cnp_gap_tsc)
		return;
	m = rc_pkt_alloc(qp, ROCE_OP_CNP, 0, false, ROCE_CNP_LEN);
	if (m == NULL)
		return;	/* the next CE frame asks again */
	b = rte_pktmbuf_mtod(m, struct roce_bth *);
	((uint8_t *)&b->qpn)[0] |= ROCE_BTH_BECN;
	memset(b + 1, 0, ROCE_CNP_LEN);
	/* Not-ECT: a notification is not data a queue should mark */
	if (port_frame_tos(qp->dev->port, m, qp->conn.dip, &qp->conn.dmac, qp->conn.sport,
			   0) != 0) {
		rte_pktmbuf_free(m);
		return;
	}
	qp->st.tx_pkts++;
	rc_tx(qp->dev, m);
	qp->resp.cnp_tsc = now;
	qp->st.cnp_sent++;
}

void
rc_input(struct rc_dev *dev, struct rte_mbuf *m, const struct roce_rx *rx)
{
	const struct roce_bth *bth = rx->bth;
	const uint32_t qpn = roce_bth_qpn(bth);
	const struct rte_ipv4_hdr *ip;
	struct dpdat_qp *qp;

	if (qpn < dev->qpn_base || qpn - dev->qpn_base >= dev->max_qps ||
	    (qp = dev->qps[qpn - dev->qpn_base]) == NULL ||
	    (qp->state != DPDAT_QPS_RTR && qp->state != DPDAT_QPS_RTS)) {
		dev->port->st.drop_no_qp++;
		return;
	}
	/* a QP talks to its peer only: anyone else's packet, forged or
	 * misdirected, never reaches the responder or the completer */
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
				     sizeof(struct rte_ether_hdr));
	if (ip->src_addr != qp->conn.dip) {
		dev->port->st.drop_not_peer++;
		return;
	}
	/* an ACK carries a payload only as a SACK, of one size */
	if (bth->opcode == ROCE_OP_ACK && rx->paylen != 0 &&
	    rx->paylen != RC_SACK_LEN) {
		dev->port->st.drop_bad_hdr++;
		return;
	}
	/* an ACK rides only on a request, from a peer that agreed */
	if (unlikely(rx->ride) && !qp->conn.ride_ok) {
		dev->port->st.drop_bad_hdr++;
		return;
	}
	qp->st.rx_pkts++;
	qp->st.rx_bytes += rx->paylen;
	if (unlikely((ip->type_of_service & ROCE_ECN_MASK) == ROCE_ECN_CE))
		rc_ecn_ce(qp, bth);
	rc_qp_kick(qp);
	if (unlikely(rx->ride)) {
		qp->st.acks_ridden_rcvd++;
		rc_completer_ack(qp, rx->ride_psn);
		rc_req_check(qp, "an ACK riding on a request");
	}
	switch (bth->opcode) {
	case ROCE_OP_ACK:
	case ROCE_OP_READ_RESP_FIRST:
	case ROCE_OP_READ_RESP_MIDDLE:
	case ROCE_OP_READ_RESP_LAST:
	case ROCE_OP_READ_RESP_ONLY:
	case ROCE_OP_ATOMIC_ACK:
		rc_completer(qp, m, bth, rx->off, rx->paylen);
		rc_req_check(qp, "an answer");
		break;
	case ROCE_OP_UD_SEND_ONLY:
	case ROCE_OP_UD_SEND_ONLY_IMM:
		dev->port->st.drop_no_qp++;	/* QP1 arrives with the CM */
		break;
	case ROCE_OP_CNP:
		/* the sender's reaction: DCQCN cuts the QP's rate */
		if (rx->paylen != ROCE_CNP_LEN) {
			dev->port->st.drop_bad_hdr++;
			break;
		}
		qp->st.cnp_rcvd++;
		if (!dev->dcqcn.off)
			dcqcn_cnp(&qp->req.cc, &dev->dcqcn, rte_get_tsc_cycles());
		break;
	default:
		rc_responder(qp, m, bth, rx->off, rx->paylen);
		rc_resp_check(qp, "a request");
		break;
	}
}

void
rc_qp_ring(struct dpdat_qp *qp)
{
	/* a full barrier between the posted WR and the flag: the engine
	 * clears the flag before it looks at the QP's rings, so either it
	 * sees this WR or this exchange sees the flag clear (no lost post) */
	if (__atomic_exchange_n(&qp->post.db_rung, 1, __ATOMIC_SEQ_CST) == 0)
		rte_ring_mp_enqueue(qp->dev->db, qp);	/* room for every QP */
}

void
rc_qp_kick(struct dpdat_qp *qp)
{
	struct rc_dev *dev = qp->dev;

	if (qp->on_work)
		return;
	qp->on_work = true;
	dev->work[dev->n_work++] = qp;
}

void
rc_db_drain(struct rc_dev *dev)
{
	struct dpdat_qp *rung[32];
	unsigned int i, n;

	do {
		n = rte_ring_sc_dequeue_burst(dev->db, (void **)rung,
					      RTE_DIM(rung), NULL);
		/* cleared by an exchange: a full barrier before the QP's
		 * rings are read on every CPU (a seq_cst store is not one on
		 * all of them) */
		for (i = 0; i < n; i++) {
			__atomic_exchange_n(&rung[i]->post.db_rung, 0,
					    __ATOMIC_SEQ_CST);
			rc_qp_kick(rung[i]);
		}
	} while (n == RTE_DIM(rung));
}

void
rc_work_remove(struct dpdat_qp *qp)
{
	struct rc_dev *dev = qp->dev;
	uint32_t k;

	rc_db_drain(dev);	/* the QP may be rung: no pointer stays */
	if (!qp->on_work)
		return;
	for (k = 0; dev->work[k] != qp; k++)
		;
	dev->work[k] = dev->work[--dev->n_work];
	qp->on_work = false;
}

/* Nothing outstanding: no WR pulled and not completed (zero-copy ones
 * included), no READ to answer, no READ response to send again (selective
 * repeat's holes). What is posted later rings again, what arrives kicks
 * it. */
static inline bool
rc_qp_idle(const struct dpdat_qp *qp)
{
	return qp->comp.sq_head == qp->req.sq_tail && qp->resp.nres == 0 &&
	       (qp->sr == NULL || qp->sr->n_holes == 0);
}

#ifdef DPDAT_DEBUG
/* The work list's invariant, in the terms of the requester's and the
 * responder's own states (not rc_qp_idle's): a QP off the list is idle on
 * both sides (or in error with nothing left to complete), or its doorbell
 * is rung (its posts are on their way to the list). */
static void
rc_work_check(const struct rc_dev *dev, uint64_t now)
{
	const struct dpdat_qp *qp;
	enum rc_req_state rq;
	enum rc_resp_state rs;

	for (uint32_t k = 0; k < dev->n_qps; k++) {
		qp = dev->active[k];
		if (qp->on_work || __atomic_load_n(&qp->post.db_rung,
						   __ATOMIC_ACQUIRE))
			continue;
		rq = rc_req_state(qp, now);
		rs = rc_resp_state(qp);
		if ((rq != RC_REQ_IDLE && (rq != RC_REQ_ERROR ||
					   qp->comp.sq_head != qp->req.sq_tail)) ||
		    rs == RC_RESP_READING)
			rte_panic("qp %u: off the work list while the requester "
				  "is %s and the responder %s\n", qp->qpn,
				  rc_req_state_name(rq), rc_resp_state_name(rs));
	}
}
#else
#define rc_work_check(dev, now) do { } while (0)
#endif

/* Coalesced ACKs, before the requests fill the transmit batch: one per QP
 * per pass; one that finds no room stays owed on the list for the next
 * pass (the batch drops control packets it cannot take). Between peers
 * that agreed on riding ACKs, one may wait up to the device's ack hold for
 * a request (the consumer's answer) to carry it, while the consumer
 * answers requests (qp->resp.pingpong), and past the hold when something
 * is posted (up to RC_ACK_RIDE_HOLDS holds: this pass's requests carry it;
 * a consumer whose engine thread received the request answers after the
 * thread leaves the core); one that waited it out in vain ends that until
 * the consumer answers again, so that a consumer that does not answer (a
 * stream, a WRITE waited for) gets its ACKs at once. (After the requests, a full batch
 * dropped ACKs of other QPs under load.) */
static void
rc_acks(struct rc_dev *dev, uint64_t now)
{
	struct dpdat_qp **pp = &dev->ack_list, *qp;

	while ((qp = *pp) != NULL) {
		if (!rc_tx_room(dev))
			return;
		if (qp->resp.ack_due && qp->resp.pingpong) {
			if (now - qp->resp.ack_tsc < dev->ack_hold_tsc ||
			    (now - qp->resp.ack_tsc < RC_ACK_RIDE_HOLDS *
			     dev->ack_hold_tsc &&
			     __atomic_load_n(&qp->post.db_rung,
					     __ATOMIC_ACQUIRE) != 0)) {
				pp = &qp->resp.ack_next;	/* held */
				continue;
			}
			qp->resp.pingpong = false;	/* no answer in time */
		}
		*pp = qp->resp.ack_next;
		qp->resp.ack_next = NULL;
		qp->resp.on_ack_list = false;
		/* responses leave in PSN order: an ACK covering PSNs after a
		 * READ waits until the READ's answers are out */
		if (qp->resp.ack_due && qp->resp.nres == 0)
			rc_send_ack(qp, ROCE_AETH_ACK, roce_psn_add(qp->resp.epsn,
							ROCE_PSN_MASK));
	}
}

void
rc_progress(struct rc_dev *dev, uint64_t now)
{
	struct dpdat_qp *qp;
	uint32_t i, k, n;

	if (dev->ack_list != NULL)
		rc_acks(dev, now);
	if (!rte_ring_empty(dev->db))
		rc_db_drain(dev);
	/* each pass starts one QP further: the first ones fill the transmit
	 * batch, and what the device cannot take stops the rest (a QP first
	 * in every pass took all of a full link) */
	n = dev->n_work;
	k = n != 0 ? dev->work_rr++ % n : 0;
	for (i = 0; i < n && k < dev->n_work; i++, k = k + 1 == n ? 0 : k + 1) {
		qp = dev->work[k];
		rc_pull_posted(qp);
		if (qp->comp.zc_check && qp->state == DPDAT_QPS_RTS)
			rc_complete_acked(qp);
		if (qp->state == DPDAT_QPS_RTS) {
			rc_responder_reads(qp);
			/* deadlines are scanned, no timer per packet */
			if (qp->comp.sq_head != qp->req.sq_started)
				rc_requester_timer(qp, now);
			rc_requester(qp, now);
			rc_req_check(qp, "sending");
			rc_resp_check(qp, "sending");
		}
	}
	for (k = 0; k < dev->n_work; ) {
		qp = dev->work[k];
		if (rc_qp_idle(qp)) {
			qp->on_work = false;
			dev->work[k] = dev->work[--dev->n_work];
		} else {
			k++;
		}
	}
	rc_work_check(dev, now);
}

/* The ACK hold of a device, in TSC cycles: what the consumer asked for (at
 * most RC_ACK_HOLD_MAX_NS), or by default RC_ACK_HOLD_NS with an engine
 * thread and none with inline progress, where a held ACK waits for the
 * consumer's next poll: one that stops polling after a request it does
 * not answer would keep its peer's WR from completing, its QP retrying. */
uint64_t
rc_ack_hold_tsc(const struct dpdat_dev_conf *conf, uint64_t tsc_hz)
{
	uint64_t ns = conf->ack_hold_ns;

	if (ns == DPDAT_ACK_HOLD_OFF)
		return 0;
	if (ns == 0)
		ns = conf->progress != DPDAT_PROGRESS_INLINE ?
		     RC_ACK_HOLD_NS : 0;
	ns = RTE_MIN(ns, (uint64_t)RC_ACK_HOLD_MAX_NS);
	return tsc_hz / 1000 * ns / 1000000;
}

/* DPDAT_DCQCN over the defaults, at the port's line rate; DPDAT_SWIFT. */
static int
rc_dcqcn_init(struct rc_dev *dev)
{
	struct dpdat_port_info pi = { 0 };
	struct swift_conf s;
	struct dcqcn_conf c;

	dcqcn_conf_default(&c);
	if (dcqcn_conf_parse(&c, dpdat_env_str("DPDAT_DCQCN")) != 0)
		return -EINVAL;
	dpdat_port_query(dev->port, &pi);
	dcqcn_dev_init(&dev->dcqcn, &c, dev->tsc_hz, pi.link_speed);
	swift_conf_default(&s);
	if (swift_conf_parse(&s, dpdat_env_str("DPDAT_SWIFT")) != 0)
		return -EINVAL;
	swift_dev_init(&dev->swift, &s, dev->tsc_hz);
	return 0;
}

int
rc_dev_init(struct rc_dev *dev, const struct dpdat_dev_conf *conf)
{
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];
	int ret;

	dev->max_qps = conf->max_qps ? conf->max_qps : 1024;
	dev->qpn_base = RC_QPN_BASE +
		((uint32_t)dev->port->queue << PORT_QPN_QUEUE_SHIFT);
	/* QP numbers are not the first thing a stranger guesses right */
	dev->next_qpn = (uint32_t)(rte_rand() % dev->max_qps);
	dev->qps = calloc(dev->max_qps, sizeof(*dev->qps));
	dev->active = calloc(dev->max_qps, sizeof(*dev->active));
	dev->work = calloc(dev->max_qps, sizeof(*dev->work));
	snprintf(name, sizeof(name), "dpdat_db_%u",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	dev->db = rte_ring_create(name, dev->max_qps, SOCKET_ID_ANY,
				  RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (dev->qps == NULL || dev->active == NULL || dev->work == NULL ||
	    dev->db == NULL) {
		rc_dev_fini(dev);
		return -ENOMEM;
	}
	pthread_mutex_init(&dev->lock, NULL);
	dev->progress = conf->progress;
	dev->tsc_hz = rte_get_tsc_hz();
	dev->ack_hold_tsc = rc_ack_hold_tsc(conf, dev->tsc_hz);
	dev->cnp_gap_tsc = dev->tsc_hz * RC_CNP_GAP_US / 1000000;
	ret = rc_dcqcn_init(dev);
	if (ret != 0) {
		rc_dev_fini(dev);
		return ret;
	}
	dev->go_back_n = conf->go_back_n;
	/* selective repeat holds received mbufs: at most a quarter of the
	 * pool, the rest keeps receiving */
	dev->max_held = dev->port->pool->size / 4;
	/* one QP (one peer) never takes all of it; less than a window made
	 * a fast sender's packets beyond it come again (1 MiB write_bw at
	 * 5 % loss: 0.14 of lossless with 255, 0.89 with a window) */
	dev->max_held_qp = RTE_MIN((uint32_t)RC_SR_WND - 1, dev->max_held / 2);
	ret = rc_zc_pool_create(dev);
	if (ret != 0)
		rc_dev_fini(dev);
	return ret;
}

/* Before the port goes: the transmit batch lets go of its mbufs. */
void
rc_dev_drain(struct rc_dev *dev)
{
	rte_pktmbuf_free_bulk(dev->tx, dev->n_tx);
	dev->n_tx = 0;
}

/* After the port went (its mbufs may have held zero-copy buffers): what
 * rc_dev_init() set up. */
void
rc_dev_fini(struct rc_dev *dev)
{
	rte_mempool_free(dev->zc_pool);
	dev->zc_pool = NULL;
	free(dev->qps);
	free(dev->active);
	free(dev->work);
	rte_ring_free(dev->db);
	dev->qps = NULL;
	dev->active = NULL;
	dev->work = NULL;
	dev->db = NULL;
}
