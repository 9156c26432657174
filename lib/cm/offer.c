/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * dpdat's extensions for QPs the consumer connected itself. Between dpdat
 * peers the CM agrees on them in reserved bits of REQ and REP; a verbs
 * program exchanges QP details over its own socket and never runs the CM,
 * so its QPs would speak plain RoCEv2 even to a dpdat peer. Here each
 * such QP offers them to its peer's QP in a vendor MAD on QP1
 * (CM_ATTR_EXT_OFFER); a dpdat peer whose QP offered too agrees and
 * answers (CM_ATTR_EXT_ANSWER); a plain peer's GSI drops the MAD.
 *
 * The offer is sent a few times (CM_OFFER_TRIES, backing off from 1 ms):
 * a lost offer or answer costs the extension, never correctness. The QP
 * understands riding ACKs from the moment it offers (qp->conn.ride_ok), so the
 * peer that agrees may use them before this side hears the answer.
 *
 * A forged agreement would make a QP ride ACKs to a plain peer, which
 * would misread them: an offer counts only from the peer's address, with
 * both QPNs and with the receiver's first send PSN, a random 24-bit
 * number only the two ends (and their out-of-band exchange) know. The
 * sender knows it from the connection (dpdat_qp_remote.psn), so it may
 * offer as soon as it is connected; the receiver's own is final only once
 * its consumer set it (verbs: at RTS), and an offer that comes before
 * does not match: the sender's next try, or the receiver's own offer,
 * does. Offers go early, so that a ping-pong agrees before its first
 * message.
 *
 * Only ACK riding is offered: selective repeat needs its memory and its
 * state from the first packet on, which an agreement reached after data
 * flows cannot give.
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/queue.h>

#include <rte_cycles.h>
#include <rte_tailq.h>

#include <dpdat/dpdat_cm.h>

#include "cm_local.h"
#include "cm_wire.h"
#include "rc_priv.h"

#define CM_OFFER_TRIES	8	/* at 0, 1, 3, 7, 15, 31, 63 and 127 ms */

struct cm_offer {
	struct dpdat_qp *qp;
	uint32_t tries;
	uint64_t next_tsc;
	TAILQ_ENTRY(cm_offer) next;
};

static struct cm_offer *
offer_of(struct cm_dev *cm, const struct dpdat_qp *qp)
{
	struct cm_offer *o;

	TAILQ_FOREACH(o, &cm->offers, next)
		if (o->qp == qp)
			return o;
	return NULL;
}

static void
offer_drop(struct cm_dev *cm, struct cm_offer *o)
{
	TAILQ_REMOVE(&cm->offers, o, next);
	free(o);
}

static bool
qp_connected(const struct dpdat_qp *qp)
{
	return qp->state == DPDAT_QPS_RTR || qp->state == DPDAT_QPS_RTS;
}

int
dpdat_cm_offer(struct dpdat_qp *qp)
{
	struct cm_offer *o;
	struct cm_dev *cm;

	if (qp == NULL || qp->magic != RC_MAGIC_QP)
		return -EBADF;
	if (qp->dev->go_back_n)
		return -ENOTSUP;
	cm = qp->dev->cm;
	if (cm == NULL)
		return -EINVAL;
	pthread_mutex_lock(&cm->lock);
	if (!qp_connected(qp)) {
		pthread_mutex_unlock(&cm->lock);
		return -EINVAL;
	}
	if (offer_of(cm, qp) == NULL) {
		o = calloc(1, sizeof(*o));
		if (o == NULL) {
			pthread_mutex_unlock(&cm->lock);
			return -ENOMEM;
		}
		o->qp = qp;
		TAILQ_INSERT_TAIL(&cm->offers, o, next);
	}
	cm_kick(cm);
	pthread_mutex_unlock(&cm->lock);
	return 0;
}

/* Engine held: an offer or an answer from qp to its peer's QP. */
static void
offer_send(struct cm_dev *cm, const struct dpdat_qp *qp, uint16_t attr)
{
	struct rte_mbuf *m;
	uint8_t *p = cm_mad_start(cm, &m, CM_VENDOR_CLASS, CM_VENDOR_VERSION,
				  attr, (uint64_t)qp->qpn << 32 | qp->conn.dqpn);

	if (p == NULL)
		return;		/* a later try, or the peer's offer */
	cm_put32(p, OFFER_MAGIC, CM_OFFER_MAGIC);
	cm_put32(p, OFFER_SRC_QPN, qp->qpn);
	cm_put32(p, OFFER_DST_QPN, qp->conn.dqpn);
	cm_put32(p, OFFER_DST_PSN, qp->conn.peer_isn);
	p[OFFER_EXT] = CM_EXT_ACK_RIDE;
	cm_mad_send(cm, m, qp->conn.dip, &qp->conn.dmac);
}

void
cm_offer_progress(struct cm_dev *cm, uint64_t now)
{
	const uint64_t ms = rte_get_tsc_hz() / 1000;
	struct cm_offer *o, *tmp;

	RTE_TAILQ_FOREACH_SAFE(o, &cm->offers, next, tmp) {
		if (now < o->next_tsc)
			continue;
		if (!qp_connected(o->qp) || o->tries == CM_OFFER_TRIES) {
			offer_drop(cm, o);	/* broken, or no dpdat peer */
			continue;
		}
		/* from now on the peer may use what this side offers */
		o->qp->conn.ride_ok = true;
		offer_send(cm, o->qp, CM_ATTR_EXT_OFFER);
		o->next_tsc = now + (ms << o->tries);
		o->tries++;
	}
}

/* Engine held. The QP a MAD names, if it is connected to the sender's
 * QP, its first PSN as the MAD says, and offered itself (an offer still
 * going out, or ride_ok). */
static struct dpdat_qp *
offer_qp(struct cm_dev *cm, const uint8_t *p, uint32_t ip)
{
	const uint32_t qpn = cm_get32(p, OFFER_DST_QPN);
	struct rc_dev *dev = cm->dev;
	struct dpdat_qp *qp;

	if (qpn < dev->qpn_base || qpn - dev->qpn_base >= dev->max_qps)
		return NULL;
	qp = dev->qps[qpn - dev->qpn_base];
	if (qp == NULL || !qp_connected(qp) || qp->conn.dip != ip ||
	    qp->conn.dqpn != cm_get32(p, OFFER_SRC_QPN) ||
	    qp->req.isn != cm_get32(p, OFFER_DST_PSN))
		return NULL;
	return qp->conn.ride_ok || offer_of(cm, qp) != NULL ? qp : NULL;
}

void
cm_offer_input(struct cm_dev *cm, const uint8_t *mad, uint32_t ip)
{
	const uint8_t *p = mad + CM_HDR_LEN;
	const uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	struct dpdat_qp *qp;
	struct cm_offer *o;

	if ((attr != CM_ATTR_EXT_OFFER && attr != CM_ATTR_EXT_ANSWER) ||
	    cm_get32(p, OFFER_MAGIC) != CM_OFFER_MAGIC ||
	    !(p[OFFER_EXT] & CM_EXT_ACK_RIDE))
		return;
	pthread_mutex_lock(&cm->lock);
	/* answers go to the QP's peer, resolved, not to the sender's MAC */
	qp = offer_qp(cm, p, ip);
	if (qp != NULL) {
		qp->conn.ride_ok = true;
		qp->conn.ack_ride = true;
		o = offer_of(cm, qp);
		if (o != NULL)
			offer_drop(cm, o);
		if (attr == CM_ATTR_EXT_OFFER)
			offer_send(cm, qp, CM_ATTR_EXT_ANSWER);
	}
	pthread_mutex_unlock(&cm->lock);
}

void
cm_offer_gone(struct cm_dev *cm, const struct dpdat_qp *qp)
{
	struct cm_offer *o = offer_of(cm, qp);

	if (o != NULL)
		offer_drop(cm, o);
}

void
cm_offers_free(struct cm_dev *cm)
{
	struct cm_offer *o;

	while ((o = TAILQ_FIRST(&cm->offers)) != NULL)
		offer_drop(cm, o);
}
