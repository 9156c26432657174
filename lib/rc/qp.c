/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* QP life cycle and posting. Posting threads validate work requests and
 * write them into the slots of the QP's MPSC ring, a post list at once;
 * the engine pulls them into its own arrays (rc_pull_posted) where the
 * requester and responder own them. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_jhash.h>
#include <rte_random.h>

#include "mr_priv.h"
#include "port_priv.h"
#include "rc_priv.h"

static int
qp_rings(struct dpdat_qp *qp)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "dpdat_sq%p", (void *)qp);
	/* producers serialised (HTS): a post list is written straight into
	 * its slots between a zero-copy start and finish */
	qp->post.sq_ring = rte_ring_create_elem(name, sizeof(struct rc_swqe),
		rte_align32pow2(qp->post.sq_max + 1), SOCKET_ID_ANY,
		RING_F_MP_HTS_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "dpdat_rq%p", (void *)qp);
	qp->post.rq_ring = rte_ring_create_elem(name, sizeof(struct rc_rwqe),
		rte_align32pow2(qp->post.rq_max + 1), SOCKET_ID_ANY,
		RING_F_SC_DEQ);
	qp->req.sq_size = rte_align32pow2(qp->post.sq_max);
	qp->resp.rq_size = rte_align32pow2(qp->post.rq_max);
	qp->req.sq = calloc(qp->req.sq_size, sizeof(*qp->req.sq));
	qp->resp.rq = calloc(qp->resp.rq_size, sizeof(*qp->resp.rq));
	if (qp->post.sq_ring == NULL || qp->post.rq_ring == NULL || qp->req.sq == NULL ||
	    qp->resp.rq == NULL)
		return -ENOMEM;
	return 0;
}

static void
qp_release(struct dpdat_qp *qp)
{
	rte_ring_free(qp->post.sq_ring);
	rte_ring_free(qp->post.rq_ring);
	rc_sr_disable(qp);
	free(qp->req.sq);
	free(qp->resp.rq);
	free(qp);
}

/* Engine held, before the QP sends: its first PSN. */
static void
qp_set_isn(struct dpdat_qp *qp, uint32_t isn)
{
	qp->req.isn = isn;
	qp->req.psn = qp->comp.una = qp->req.frontier = qp->req.max_sent = qp->req.isn;
	qp->comp.acked = roce_psn_add(qp->req.isn, ROCE_PSN_MASK);
	if (qp->sr != NULL)
		qp->sr->rd_top = qp->req.isn;
}

/* A tag for a new QP: never 0; 64 bits do not wrap in a process's life. */
static uint64_t
qp_tag_new(void)
{
	static uint64_t last;

	return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

struct dpdat_qp *
dpdat_qp_create(struct dpdat_dev *d, const struct dpdat_qp_conf *conf)
{
	struct rc_dev *dev = rc_dev(d);
	struct dpdat_pz_info pi;
	struct dpdat_qp *qp;
	uint32_t k, idx;

	if (dev == NULL || dev->magic != RC_MAGIC_DEV || conf == NULL ||
	    dpdat_pz_query(conf->pz, &pi) != 0 || pi.domain != dev->dom ||
	    conf->send_cq == NULL || conf->send_cq->magic != RC_MAGIC_CQ ||
	    conf->recv_cq == NULL || conf->recv_cq->magic != RC_MAGIC_CQ ||
	    (conf->srq != NULL && conf->srq->magic != RC_MAGIC_SRQ)) {
		rte_errno = EBADF;
		return NULL;
	}
	if (conf->max_send_wr > 65536 ||
	    (conf->srq == NULL && conf->max_recv_wr > 65536) ||
	    conf->send_cq->dev != dev || conf->recv_cq->dev != dev ||
	    (conf->srq != NULL && conf->srq->dev != dev)) {
		rte_errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	qp->dev = dev;
	qp->pz = conf->pz;
	qp->pz_id = pi.id;
	qp->tag = qp_tag_new();
	qp->scq = conf->send_cq;
	qp->rcq = conf->recv_cq;
	qp->sig_all = conf->sq_sig_all;
	qp->post.sq_max = conf->max_send_wr ? conf->max_send_wr : 256;
	/* with an SRQ the QP's own receive queue stays empty */
	qp->post.rq_max = conf->srq != NULL ? 1 :
		     conf->max_recv_wr ? conf->max_recv_wr : 256;
	if (qp_rings(qp) != 0) {
		qp_release(qp);
		rte_errno = ENOMEM;
		return NULL;
	}
	qp_set_isn(qp, (uint32_t)rte_rand() & ROCE_PSN_MASK);
	qp->remote_ok = RC_REMOTE_ALL;
	qp->state = DPDAT_QPS_INIT;
	qp->magic = RC_MAGIC_QP;

	pthread_mutex_lock(&dev->lock);
	for (k = 0; k < dev->max_qps; k++) {
		idx = (dev->next_qpn + k) % dev->max_qps;
		if (dev->qps[idx] == NULL)
			break;
	}
	if (k == dev->max_qps) {
		pthread_mutex_unlock(&dev->lock);
		qp_release(qp);
		rte_errno = ENOSPC;
		return NULL;
	}
	dev->next_qpn = idx + 1;
	qp->qpn = dev->qpn_base + idx;
	/* the UDP source port spreads QPs over RSS queues, as rxe does */
	qp->conn.sport = 0xc000 | (rte_jhash_1word(qp->qpn, 0) & 0x3fff);
	qp->scq->users++;
	qp->rcq->users++;
	mr_pz_hold(qp->pz, 1);	/* the PZ cannot go while a QP uses it */
	if (conf->srq != NULL) {
		qp->resp.srq = conf->srq;
		qp->resp.srq->users++;	/* dev->lock: srq_free checks it */
	}
	rc_lock_engine(dev);
	dev->qps[idx] = qp;
	dev->active[dev->n_qps++] = qp;
	rc_unlock_engine(dev);
	pthread_mutex_unlock(&dev->lock);
	return qp;
}

static bool
pmtu_ok(uint16_t pmtu)
{
	return pmtu == 256 || pmtu == 512 || pmtu == 1024 || pmtu == 2048 ||
	       pmtu == 4096;
}

int
dpdat_qp_connect(struct dpdat_qp *qp, const struct dpdat_qp_remote *r)
{
	struct rc_dev *dev;

	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	dev = qp->dev;
	if (rc_qp_remote_check(qp, r) != 0)
		return -EINVAL;
	if (__atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) != DPDAT_QPS_INIT)
		return -EBUSY;
	rc_lock_engine(dev);
	rc_qp_set_remote(qp, r);
	rc_unlock_engine(dev);
	return 0;
}

/* Engine held: retries, timeout and READs in flight of the requester. */
static void
qp_send_params(struct dpdat_qp *qp, uint8_t retry_cnt, uint8_t rnr_retry,
	       uint8_t timeout, uint8_t max_rd_atomic)
{
	const uint64_t hz = qp->dev->tsc_hz;
	uint64_t us;

	qp->conn.retry_cnt = retry_cnt;
	qp->conn.rnr_retry = rnr_retry;
	qp->comp.retries_left = retry_cnt;
	qp->comp.rnr_left = rnr_retry;
	/* never more than a dpdat responder holds (RC_MAX_RD): it keeps
	 * that many atomic results to answer duplicates from */
	qp->conn.max_rd = max_rd_atomic ? RTE_MIN(max_rd_atomic,
					     (uint8_t)RC_MAX_RD) : RC_MAX_RD;
	/* IB encoding: 4.096 us * 2^timeout; 14 is 67 ms */
	us = (4096ull << (timeout ? timeout : 14)) / 1000;
	qp->conn.timeout_tsc = (uint64_t)((double)us * hz / 1e6);
	/* the consumer's timeout bounds the estimated one from above */
	/* a spurious timeout resends one packet under selective repeat, a
	 * window under go-back-N: the floors differ */
	rc_rtt_init(&qp->comp.rtt, hz * (qp->sr != NULL ?
		    RC_RTO_FLOOR_SR_US : RC_RTO_FLOOR_US) / 1000000,
		    qp->conn.timeout_tsc, hz * RC_RTO_INIT_US / 1000000);
	rc_rtt_init(&qp->comp.ask_rtt, hz * RC_RTO_FLOOR_SR_US / 4000000,
		    qp->conn.timeout_tsc, qp->comp.rtt.rto);
}

/* Engine held, r checked: the QP takes its peer and goes to RTS. */
void
rc_qp_set_remote(struct dpdat_qp *qp, const struct dpdat_qp_remote *r)
{
	struct rc_dev *dev = qp->dev;

	qp->conn.dqpn = r->qpn;
	qp->conn.peer_isn = r->psn & ROCE_PSN_MASK;
	qp->conn.dip = r->ipv4;
	qp->conn.dmac = r->mac;
	qp->conn.pmtu = r->pmtu;
	qp->req.wnd = RC_MAX_INFLIGHT;
	qp->req.ackreq_every = RC_ACKREQ_EVERY;
	qp->conn.nak_repeat = (r->ext & DPDAT_QP_EXT_NAK_REPEAT) != 0;
	qp->conn.ack_ride = (r->ext & DPDAT_QP_EXT_ACK_RIDE) && !dev->go_back_n;
	qp->conn.ride_ok = qp->conn.ack_ride;
	/* selective repeat when agreed, and memory for it; else go-back-N */
	if ((r->ext & DPDAT_QP_EXT_SACK) && !dev->go_back_n &&
	    rc_sr_enable(qp) != 0)
		RC_LOG(WARNING, "qp %u: no memory for selective repeat: "
		       "go-back-N", qp->qpn);
	if (qp->sr != NULL)
		qp->sr->rd_top = qp->req.isn;
	qp_send_params(qp, r->retry_cnt, r->rnr_retry, r->timeout,
		       r->max_rd_atomic);
	qp->resp.epsn = r->psn;
	__atomic_store_n(&qp->state, DPDAT_QPS_RTS, __ATOMIC_RELEASE);
}

int
dpdat_qp_set_access(struct dpdat_qp *qp, uint32_t privileges)
{
	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (privileges & ~RC_REMOTE_ALL)
		return -EINVAL;
	/* read by the engine at each request: a plain store suffices */
	__atomic_store_n(&qp->remote_ok, privileges, __ATOMIC_RELEASE);
	return 0;
}

int
dpdat_qp_set_send(struct dpdat_qp *qp, const struct dpdat_qp_send_attr *a)
{
	int ret = 0;

	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (a == NULL || a->sq_psn > ROCE_PSN_MASK || a->retry_cnt > 7 ||
	    a->rnr_retry > 7 || a->timeout > 31)
		return -EINVAL;
	rc_lock_engine(qp->dev);
	/* sq_out counts every WR posted and not yet completed; psn moves
	 * with every one the engine took */
	if (__atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) != DPDAT_QPS_RTS ||
	    __atomic_load_n(&qp->post.sq_out, __ATOMIC_ACQUIRE) != 0 ||
	    qp->req.psn != qp->req.isn) {
		ret = -EBUSY;
	} else {
		qp_set_isn(qp, a->sq_psn);
		qp_send_params(qp, a->retry_cnt, a->rnr_retry, a->timeout,
			       a->max_rd_atomic);
	}
	rc_unlock_engine(qp->dev);
	return ret;
}

int
rc_qp_remote_check(const struct dpdat_qp *qp, const struct dpdat_qp_remote *r)
{
	const unsigned int hdrs = 20 + 8 + 12 + 16 + 4 + 4;	/* IP..ICRC */

	if (r == NULL || !pmtu_ok(r->pmtu) || r->qpn > ROCE_QPN_MASK ||
	    r->qpn < 2 || r->psn > ROCE_PSN_MASK || r->retry_cnt > 7 ||
	    r->rnr_retry > 7 || r->timeout > 31 ||
	    (r->ext & ~(DPDAT_QP_EXT_SACK | DPDAT_QP_EXT_NAK_REPEAT |
			DPDAT_QP_EXT_ACK_RIDE)) != 0 ||
	    r->pmtu + hdrs > qp->dev->port->mtu)
		return -EINVAL;
	return 0;
}

int
dpdat_rmr_bind_qp(struct dpdat_rmr *rmr, struct dpdat_qp *qp,
		  const struct dpdat_lmr_triplet *seg, uint32_t privileges,
		  uint32_t *rmr_context)
{
	if (rmr == NULL || rmr->magic != MR_MAGIC_RMR || qp == NULL ||
	    qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (seg != NULL && seg->segment_length != 0 && rmr->pz != qp->pz)
		return -EPERM;
	return mr_rmr_bind(rmr, seg, privileges, qp->tag, rmr_context);
}

int
dpdat_qp_query(const struct dpdat_qp *qp, struct dpdat_qp_info *info)
{
	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (info == NULL)
		return -EINVAL;
	info->qpn = qp->qpn;
	info->sq_psn = qp->req.isn;
	info->ext = (qp->sr != NULL ? DPDAT_QP_EXT_SACK : 0) |
		    (qp->conn.nak_repeat ? DPDAT_QP_EXT_NAK_REPEAT : 0) |
		    (qp->conn.ack_ride ? DPDAT_QP_EXT_ACK_RIDE : 0);
	info->state = (enum dpdat_qp_state)__atomic_load_n(&qp->state,
							    __ATOMIC_ACQUIRE);
	info->pmtu = qp->conn.pmtu;
	info->pz_id = qp->pz_id;
	info->srq_held = __atomic_load_n(&qp->resp.srq_held, __ATOMIC_RELAXED);
	return 0;
}

int
dpdat_qp_stats(const struct dpdat_qp *qp, struct dpdat_qp_stats *st)
{
	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (st == NULL)
		return -EINVAL;
	*st = qp->st;	/* counters: a slightly torn snapshot is fine */
	st->cc_rate_mbps = qp->req.cc.rc / 1000000;
	st->cc_cuts = qp->req.cc.cuts;
	st->cc_wnd = qp->req.swift.wnd / SWIFT_ONE;
	st->cc_wnd_cuts = qp->req.swift.cuts;
	if (qp->dev->tsc_hz != 0) {
		st->srtt_ns = (uint64_t)((double)qp->comp.rtt.srtt * 1e9 /
					 qp->dev->tsc_hz);
		st->rto_ns = (uint64_t)((double)qp->comp.rtt.rto * 1e9 /
					qp->dev->tsc_hz);
	}
	return 0;
}

void
rc_complete_send(struct dpdat_qp *qp, const struct rc_swqe *w,
		 enum dpdat_wc_status status)
{
	struct dpdat_wc wc = {
		.wr_id = w->wr_id, .status = status,
		.opcode = (enum dpdat_wr_opcode)w->opcode,
		.byte_len = w->len, .qp_num = qp->qpn,
	};
	bool push;

	/* only reached with the zero-copy memory released (rc_zc_done) or
	 * on teardown, where whatever is still out goes back to the pool */
	rc_zc_abandon((struct rc_swqe *)(uintptr_t)w);

	push = w->signaled || status != DPDAT_WC_SUCCESS;
	/* room first: a consumer that sees the completion may post at once
	 * (w is the engine's copy, which no poster writes) */
	__atomic_sub_fetch(&qp->post.sq_out, 1, __ATOMIC_RELEASE);
	if (push)
		rc_cq_push(qp->scq, &wc);
}

void
rc_complete_recv(struct dpdat_qp *qp, const struct rc_rwqe *w,
		 enum dpdat_wc_status status, enum dpdat_wr_opcode op,
		 uint32_t len, const uint32_t *imm)
{
	struct dpdat_wc wc = {
		.wr_id = w->wr_id, .status = status, .opcode = op,
		.byte_len = len, .qp_num = qp->qpn,
	};

	if (imm != NULL) {
		wc.imm_data = *imm;
		wc.flags = DPDAT_WC_WITH_IMM;
	}
	/* room first, as for sends */
	if (qp->resp.srq == NULL)
		__atomic_sub_fetch(&qp->post.rq_out, 1, __ATOMIC_RELEASE);
	rc_cq_push(qp->rcq, &wc);
}

/* Engine: take what posting threads queued. */
void
rc_pull_posted(struct dpdat_qp *qp)
{
	unsigned int n, idx, room;

	/* in bursts, as posted: up to the free space before the array wraps */
	do {
		idx = qp->req.sq_tail & (qp->req.sq_size - 1);
		room = RTE_MIN(qp->req.sq_size - (qp->req.sq_tail - qp->comp.sq_head),
			       qp->req.sq_size - idx);
		n = room == 0 ? 0 : rte_ring_dequeue_burst_elem(qp->post.sq_ring,
				&qp->req.sq[idx], sizeof(struct rc_swqe), room,
				NULL);
		qp->req.sq_tail += n;
	} while (n != 0 && n == room);
	while (qp->resp.srq == NULL && qp->resp.rq_tail - qp->resp.rq_head < qp->resp.rq_size) {
		n = rte_ring_dequeue_elem(qp->post.rq_ring,
					  &qp->resp.rq[qp->resp.rq_tail & (qp->resp.rq_size - 1)],
					  sizeof(struct rc_rwqe));
		if (n != 0)
			break;
		qp->resp.rq_tail++;
	}
	if (qp->state == DPDAT_QPS_ERR)
		rc_qp_flush(qp);
}

/* Engine: everything outstanding completes, in order: with its failure
 * status if it has one, else as flushed. Stops at a zero-copy WR whose
 * memory the device still holds; the engine calls again. */
void
rc_qp_flush(struct dpdat_qp *qp)
{
	struct rc_swqe *w;

	if (qp->comp.sq_head != qp->req.sq_tail)
		rc_tx_purge(qp->dev, qp->conn.dqpn, qp->conn.dip, false);
	for (; qp->comp.sq_head != qp->req.sq_tail; qp->comp.sq_head++) {
		w = &qp->req.sq[qp->comp.sq_head & (qp->req.sq_size - 1)];
		/* a zero-copy WR waits until the device released it */
		if (!rc_zc_done(w))
			break;
		rc_complete_send(qp, w, w->fail ? (enum dpdat_wc_status)w->fail :
				 DPDAT_WC_WR_FLUSH_ERR);
	}
	/* with an SRQ only the WQE this QP took: the rest stay for others */
	for (; rc_rwqe_have(qp); rc_rwqe_next(qp))
		rc_complete_recv(qp, rc_rwqe_cur(qp), DPDAT_WC_WR_FLUSH_ERR,
				 DPDAT_WR_RECV, 0, NULL);
	qp->req.sq_send = qp->req.sq_started = qp->comp.sq_head;
	qp->req.reads_out = 0;
	qp->resp.nres = 0;
	if (qp->sr != NULL)
		qp->sr->n_holes = 0;
	rc_sr_drop_held(qp);
}

/* Engine: the QP breaks. */
void
rc_qp_error(struct dpdat_qp *qp)
{
	rc_ack_last(qp);
	__atomic_store_n(&qp->state, DPDAT_QPS_ERR, __ATOMIC_RELEASE);
	rc_qp_flush(qp);
	rc_qp_kick(qp);		/* held zero-copy WRs complete later */
}

void
rc_qp_fail(struct dpdat_qp *qp, uint32_t idx, enum dpdat_wc_status st)
{
	if ((int32_t)(idx - qp->comp.sq_head) >= 0 &&
	    (int32_t)(qp->req.sq_tail - idx) > 0)
		qp->req.sq[idx & (qp->req.sq_size - 1)].fail = (uint8_t)st;
	rc_qp_error(qp);
}

int
dpdat_qp_dump(const struct dpdat_qp *qp, FILE *f)
{
	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (f == NULL)
		return -EINVAL;
	fprintf(f, "qp %u -> %u state %d pmtu %u ext 0x%x\n"
		"  requester (%s): psn %u una %u max_sent %u frontier %u "
		"isn %u acked %u\n"
		"  srtt %lu ns rto %lu ns probes in stall %u held %u\n"
		"  sq head %u send %u started %u tail %u (out %u) reads %u "
		"retries %u rnr %u rnr_wait %d tx batch %u\n"
		"  responder (%s): epsn %u msn %u msg %u nak_sent %d "
		"ack_due %d reads queued %u rq head %u tail %u srq %p "
		"held %d\n",
		qp->qpn, qp->conn.dqpn,
		qp->state, qp->conn.pmtu, (qp->sr != NULL ? DPDAT_QP_EXT_SACK : 0) |
		(qp->conn.nak_repeat ? DPDAT_QP_EXT_NAK_REPEAT : 0),
		rc_req_state_name(rc_req_state(qp, rte_get_tsc_cycles())),
		qp->req.psn, qp->comp.una, qp->req.max_sent, qp->req.frontier, qp->req.isn,
		qp->comp.acked,
		(unsigned long)((double)qp->comp.rtt.srtt * 1e9 / qp->dev->tsc_hz),
		(unsigned long)((double)qp->comp.rtt.rto * 1e9 / qp->dev->tsc_hz),
		qp->req.nprobe, qp->sr != NULL ? qp->sr->n_held : 0,
		qp->comp.sq_head, qp->req.sq_send,
		qp->req.sq_started, qp->req.sq_tail, qp->post.sq_out, qp->req.reads_out,
		qp->comp.retries_left, qp->comp.rnr_left,
		rte_get_tsc_cycles() < qp->req.rnr_until, qp->dev->n_tx,
		rc_resp_state_name(rc_resp_state(qp)), qp->resp.epsn,
		qp->resp.msn, qp->resp.msg, qp->resp.nak_sent, qp->resp.ack_due, qp->resp.nres,
		qp->resp.rq_head, qp->resp.rq_tail, (void *)qp->resp.srq, qp->resp.srq_held);
	return 0;
}

int
dpdat_qp_set_error(struct dpdat_qp *qp)
{
	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	rc_lock_engine(qp->dev);
	rc_pull_posted(qp);
	rc_qp_error(qp);
	rc_unlock_engine(qp->dev);
	return 0;
}

/* dev->lock and the engine held: the QP stops. Its work completes
 * (flushed, or with its failure), its frames still queued go (an ACK it
 * held first), its connection forgets it, and it leaves the ACK and work
 * lists; it keeps its number. */
static void
qp_stop(struct dpdat_qp *qp)
{
	struct rc_dev *dev = qp->dev;
	uint64_t t0;

	rc_pull_posted(qp);
	rc_srq_give_back(qp);	/* not flushed: it never completed */
	rc_qp_error(qp);
	rc_tx_flush(dev);	/* the ACK it owed, if held, goes first */
	rc_tx_purge(dev, qp->conn.dqpn, qp->conn.dip, true);
	/* zero-copy memory still in the device: let it finish (bounded) */
	for (t0 = rte_get_tsc_cycles(); qp->comp.sq_head != qp->req.sq_tail &&
	     rte_get_tsc_cycles() - t0 < rte_get_tsc_hz(); ) {
		/* under the engine: a transmit queue is not thread safe */
		rte_eth_tx_done_cleanup(dev->port->port_id, dev->port->queue, 0);
		rc_unlock_engine(dev);
		rte_pause();
		rc_lock_engine(dev);
		rc_qp_flush(qp);
	}
	if (qp->comp.sq_head != qp->req.sq_tail) {
		RC_LOG(WARNING, "qp %u stopped with zero-copy memory still "
		       "held by the device", qp->qpn);
		for (; qp->comp.sq_head != qp->req.sq_tail; qp->comp.sq_head++)
			rc_complete_send(qp, &qp->req.sq[qp->comp.sq_head &
					 (qp->req.sq_size - 1)],
					 DPDAT_WC_WR_FLUSH_ERR);
	}
	if (dev->qp_gone != NULL)	/* a connection may outlive its QP */
		dev->qp_gone(dev->qp_gone_ctx, qp);
	rc_work_remove(qp);
	if (qp->resp.on_ack_list) {
		struct dpdat_qp **pp = &dev->ack_list;

		while (*pp != qp)
			pp = &(*pp)->resp.ack_next;
		*pp = qp->resp.ack_next;
		qp->resp.ack_next = NULL;
		qp->resp.on_ack_list = false;
	}
}

int
dpdat_qp_free(struct dpdat_qp *qp)
{
	struct rc_dev *dev;
	uint32_t k;

	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	dev = qp->dev;
	pthread_mutex_lock(&dev->lock);
	rc_lock_engine(dev);
	qp->magic = 0;
	qp_stop(qp);
	dev->qps[qp->qpn - qp->dev->qpn_base] = NULL;
	for (k = 0; k < dev->n_qps; k++)
		if (dev->active[k] == qp)
			break;
	dev->active[k] = dev->active[--dev->n_qps];
	rc_unlock_engine(dev);
	qp->scq->users--;
	qp->rcq->users--;
	if (qp->resp.srq != NULL)
		qp->resp.srq->users--;
	mr_pz_hold(qp->pz, -1);
	pthread_mutex_unlock(&dev->lock);
	qp_release(qp);
	return 0;
}

int
dpdat_qp_reset(struct dpdat_qp *qp)
{
	struct dpdat_qp keep;
	struct rc_dev *dev;

	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	dev = qp->dev;
	pthread_mutex_lock(&dev->lock);
	rc_lock_engine(dev);
	qp_stop(qp);
	rc_sr_disable(qp);
	/* what the QP was made of stays; all it did and learnt goes (a
	 * field added to struct dpdat_qp starts at zero here as at
	 * creation) */
	keep = *qp;
	memset(qp, 0, sizeof(*qp));
	qp->dev = keep.dev;
	qp->pz = keep.pz;
	qp->pz_id = keep.pz_id;
	qp->scq = keep.scq;
	qp->rcq = keep.rcq;
	qp->resp.srq = keep.resp.srq;
	qp->sig_all = keep.sig_all;
	qp->post.sq_max = keep.post.sq_max;
	qp->post.rq_max = keep.post.rq_max;
	qp->post.sq_ring = keep.post.sq_ring;
	qp->post.rq_ring = keep.post.rq_ring;
	qp->req.sq = keep.req.sq;
	qp->resp.rq = keep.resp.rq;
	qp->req.sq_size = keep.req.sq_size;
	qp->resp.rq_size = keep.resp.rq_size;
	qp->qpn = keep.qpn;
	qp->conn.sport = keep.conn.sport;
	/* posted after the stop, before the reset: gone, as verbs has it */
	rte_ring_reset(qp->post.sq_ring);
	rte_ring_reset(qp->post.rq_ring);
	memset(qp->req.sq, 0, qp->req.sq_size * sizeof(*qp->req.sq));
	memset(qp->resp.rq, 0, qp->resp.rq_size * sizeof(*qp->resp.rq));
	qp->tag = qp_tag_new();	/* memory windows bound before: not ours */
	qp_set_isn(qp, (uint32_t)rte_rand() & ROCE_PSN_MASK);
	qp->remote_ok = RC_REMOTE_ALL;
	qp->state = DPDAT_QPS_INIT;
	qp->magic = RC_MAGIC_QP;
	rc_unlock_engine(dev);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

/* A send WR's arguments; its total length in *len. Writes nothing: it also
 * judges WRs that are not to be written (the first of a list, before the
 * QP state; the first left out when the queue is full). */
static int
swqe_check(const struct dpdat_qp *qp, const struct dpdat_send_wr *wr,
	   uint32_t *len)
{
	uint32_t i, l = 0;

	if (wr->num_sge > DPDAT_MAX_SGE ||
	    (wr->num_sge != 0 && wr->sg_list == NULL) ||
	    (wr->opcode > DPDAT_WR_RDMA_READ && !rc_wr_atomic(wr->opcode)) ||
	    (wr->flags & ~(DPDAT_SEND_SIGNALED | DPDAT_SEND_SOLICITED |
			   DPDAT_SEND_FENCE)) != 0)
		return -EINVAL;
	/* an atomic's result: one SGE of 8 bytes (the target's alignment is
	 * the responder's to check, as on InfiniBand) */
	if (rc_wr_atomic(wr->opcode) &&
	    (wr->num_sge != 1 || wr->sg_list[0].length != 8))
		return -EINVAL;
	/* and writable now: the peer executes the atomic before its answer
	 * comes back to be placed, and must not for a result with nowhere
	 * to go (the other WRs' memory is checked when touched) */
	if (rc_wr_atomic(wr->opcode) &&
	    dpdat_mr_access_check(qp->dev->dom, wr->sg_list[0].lkey,
				  wr->sg_list[0].addr, 8,
				  DPDAT_MEM_PRIV_LOCAL_WRITE, qp->pz_id,
				  NULL) != DPDAT_MR_CHECK_OK)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		if (l + wr->sg_list[i].length < l)
			return -EINVAL;	/* wraps 32 bits */
		l += wr->sg_list[i].length;
	}
	*len = l;
	return 0;
}

/* Write a checked WR straight into its ring slot: the only copy made. */
static inline void
swqe_fill(struct rc_swqe *w, const struct dpdat_qp *qp,
	  const struct dpdat_send_wr *wr, uint32_t len)
{
	memset(w, 0, offsetof(struct rc_swqe, sge));
	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->flags = (uint8_t)wr->flags;
	w->signaled = qp->sig_all || (wr->flags & DPDAT_SEND_SIGNALED);
	w->num_sge = (uint8_t)wr->num_sge;
	w->imm = wr->imm_data;
	w->raddr = wr->remote_addr;
	w->rkey = wr->rkey;
	w->len = len;
	w->cmp_add = wr->compare_add;
	w->swap = wr->swap;
	if (wr->num_sge != 0)
		memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(w->sge[0]));
}

/* Reserve up to n send-queue entries in one step, so that the engine's
 * array never overflows: how many were granted (0: the queue is full). */
static uint32_t
sq_reserve(struct dpdat_qp *qp, uint32_t n)
{
	uint32_t out, k;

	out = __atomic_load_n(&qp->post.sq_out, __ATOMIC_RELAXED);
	do {
		if (out >= qp->post.sq_max)
			return 0;
		k = RTE_MIN(n, qp->post.sq_max - out);
	} while (!__atomic_compare_exchange_n(&qp->post.sq_out, &out, out + k,
					      true, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return k;
}

static inline struct rc_swqe *
zc_slot(const struct rte_ring_zc_data *zcd, uint32_t i)
{
	return i < zcd->n1 ? (struct rc_swqe *)zcd->ptr1 + i :
			     (struct rc_swqe *)zcd->ptr2 + (i - zcd->n1);
}

/* Write wrs[0..k) into k reserved ring slots, wrs[0] already checked with
 * length len0; stop at the first bad one. How many were written. */
static uint32_t
sq_write(struct dpdat_qp *qp, const struct dpdat_send_wr *wrs, uint32_t k,
	 uint32_t len0, int *err)
{
	struct rte_ring_zc_data zcd;
	uint32_t i, len = len0;

	*err = 0;
	if (rte_ring_enqueue_zc_bulk_elem_start(qp->post.sq_ring,
			sizeof(struct rc_swqe), k, &zcd, NULL) != k) {
		*err = -ENOMEM;	/* not while sq_out bounds the ring */
		return 0;
	}
	for (i = 0; i < k; i++) {
		if (i != 0 && (*err = swqe_check(qp, &wrs[i], &len)) != 0)
			break;
		swqe_fill(zc_slot(&zcd, i), qp, &wrs[i], len);
	}
	rte_ring_enqueue_zc_elem_finish(qp->post.sq_ring, i);
	return i;
}

int
dpdat_post_send_burst(struct dpdat_qp *qp, const struct dpdat_send_wr *wrs,
		      uint32_t n, uint32_t *n_posted)
{
	uint32_t k, done, len;
	int ret;

	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (n_posted == NULL)
		return -EINVAL;
	*n_posted = 0;
	if (n == 0)
		return 0;
	if (wrs == NULL)
		return -EINVAL;
	/* the arguments before the state, as dpdat_post_send() always did */
	ret = swqe_check(qp, &wrs[0], &len);
	if (ret != 0)
		return ret;
	if (__atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) < DPDAT_QPS_RTS)
		return -EBUSY;
	k = sq_reserve(qp, n);
	if (k == 0)
		return -ENOMEM;
	done = sq_write(qp, wrs, k, len, &ret);
	if (done < k)
		__atomic_sub_fetch(&qp->post.sq_out, k - done, __ATOMIC_RELEASE);
	if (done != 0)
		rc_qp_ring(qp);
	*n_posted = done;
	if (ret != 0 || done == n)
		return ret;
	/* out of room: unless the first WR left out is bad anyway */
	ret = swqe_check(qp, &wrs[done], &len);
	return ret != 0 ? ret : -ENOMEM;
}

int
dpdat_post_send(struct dpdat_qp *qp, const struct dpdat_send_wr *wr)
{
	uint32_t n;

	return dpdat_post_send_burst(qp, wr, 1, &n);
}

int
rc_rwqe_fill(struct rc_rwqe *w, const struct dpdat_recv_wr *wr)
{
	uint32_t i;

	if (wr == NULL || wr->num_sge > DPDAT_MAX_SGE ||
	    (wr->num_sge != 0 && wr->sg_list == NULL))
		return -EINVAL;
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	w->len = 0;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i] = wr->sg_list[i];
		if (w->len + wr->sg_list[i].length < w->len)
			return -EINVAL;
		w->len += wr->sg_list[i].length;
	}
	return 0;
}

int
rc_rwqe_post(struct rte_ring *ring, uint32_t *count, uint32_t max,
	     const struct rc_rwqe *w)
{
	uint32_t out;

	/* reserve a slot first: the engine's array never overflows */
	out = __atomic_load_n(count, __ATOMIC_RELAXED);
	do {
		if (out >= max)
			return -ENOMEM;
	} while (!__atomic_compare_exchange_n(count, &out, out + 1, true,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	if (rte_ring_enqueue_elem(ring, (void *)(uintptr_t)w,
				  sizeof(*w)) != 0) {
		__atomic_sub_fetch(count, 1, __ATOMIC_RELEASE);
		return -ENOMEM;
	}
	return 0;
}

int
dpdat_post_recv(struct dpdat_qp *qp, const struct dpdat_recv_wr *wr)
{
	struct rc_rwqe w;
	int ret;

	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (qp->resp.srq != NULL)
		return -EINVAL;	/* its receives come from the SRQ */
	ret = rc_rwqe_fill(&w, wr);
	if (ret == 0)
		ret = rc_rwqe_post(qp->post.rq_ring, &qp->post.rq_out, qp->post.rq_max, &w);
	if (ret == 0)
		rc_qp_ring(qp);	/* pulled at once; flushed in ERR */
	return ret;
}
