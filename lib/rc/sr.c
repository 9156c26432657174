/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Selective repeat between dpdat peers: both ends agreed on it when they
 * connected (DPDAT_QP_EXT_SACK); with any other peer the QP speaks plain
 * go-back-N RC and nothing here runs.
 *
 * Responder: a request packet past a gap is held (its mbuf kept) within
 * RC_SR_WND PSNs of the expected one, up to a device-wide bound of mbufs.
 * When the gap fills the held packets are taken in PSN order as though they
 * had just arrived: data still lands in PSN order, every check still runs.
 * A sequence NAK then carries a bitmap (RC_SACK_LEN bytes after the AETH):
 * bit i (byte i / 8, bit i % 8) says PSN epsn + 1 + i is held.
 *
 * Requester: on such a NAK everything before epsn is acknowledged; a PSN
 * the bitmap shows missing is sent again if it last left before some
 * packet that did arrive (time ordering, as RACK does: it was lost, not
 * merely late). A resend lost again is found the same way by a later SACK.
 */

#include <stdlib.h>
#include <string.h>

#include "rc_priv.h"

#define SR_MASK (RC_SR_WND - 1)

int
rc_sr_enable(struct dpdat_qp *qp)
{
	if (qp->sr == NULL) {
		qp->sr = calloc(1, sizeof(*qp->sr));
		if (qp->sr == NULL)
			return -ENOMEM;
	}
	return 0;
}

void
rc_sr_disable(struct dpdat_qp *qp)
{
	if (qp->sr == NULL)
		return;
	rc_sr_drop_held(qp);
	free(qp->sr);
	qp->sr = NULL;
}

static inline bool
map_test(const struct rc_sr *sr, uint32_t slot)
{
	return sr->map[slot / 64] >> (slot % 64) & 1;
}

/* A held packet the PSNs went past (a READ moved epsn over its slot; only
 * a confused or hostile peer sends such) goes back to the pool. */
static void
slot_free(struct dpdat_qp *qp, uint32_t slot)
{
	struct rc_sr *sr = qp->sr;

	rte_pktmbuf_free(sr->held[slot].m);
	sr->map[slot / 64] &= ~(1ull << (slot % 64));
	sr->n_held--;
	qp->dev->n_held--;
}

void
rc_sr_drop_range(struct dpdat_qp *qp, uint32_t psn, uint32_t n)
{
	struct rc_sr *sr = qp->sr;
	uint32_t slot;

	for (uint32_t i = 0; sr->n_held != 0 && i < n && i < RC_SR_WND; i++) {
		slot = roce_psn_add(psn, i) & SR_MASK;
		if (map_test(sr, slot))
			slot_free(qp, slot);
	}
}

bool
rc_sr_hold(struct dpdat_qp *qp, struct rte_mbuf *m, uint32_t psn,
	   unsigned int off, unsigned int paylen)
{
	struct rc_sr *sr = qp->sr;
	const int32_t d = roce_psn_diff(psn, qp->resp.epsn);
	const uint32_t slot = psn & SR_MASK;

	if (d <= 0 || d >= RC_SR_WND)
		return false;
	if (map_test(sr, slot)) {
		if (sr->held[slot].psn == psn)
			return true;	/* held already: a duplicate */
		slot_free(qp, slot);	/* left behind (slot_free) */
	}
	if (qp->dev->n_held >= qp->dev->max_held ||
	    sr->n_held >= qp->dev->max_held_qp)
		return false;
	rte_mbuf_refcnt_update(m, 1);	/* the dispatcher frees its own */
	sr->held[slot] = (struct rc_held){ m, psn, (uint16_t)off,
					   (uint16_t)paylen };
	sr->map[slot / 64] |= 1ull << (slot % 64);
	sr->n_held++;
	qp->dev->n_held++;
	qp->st.held++;
	return true;
}

struct rte_mbuf *
rc_sr_next(struct dpdat_qp *qp, unsigned int *off, unsigned int *paylen)
{
	struct rc_sr *sr = qp->sr;
	const uint32_t slot = qp->resp.epsn & SR_MASK;
	struct rc_held *h = &sr->held[slot];

	if (sr->n_held == 0 || !map_test(sr, slot))
		return NULL;
	if (h->psn != qp->resp.epsn) {
		slot_free(qp, slot);
		return NULL;
	}
	sr->map[slot / 64] &= ~(1ull << (slot % 64));
	sr->n_held--;
	qp->dev->n_held--;
	*off = h->off;
	*paylen = h->paylen;
	return h->m;
}

void
rc_sr_drop_held(struct dpdat_qp *qp)
{
	struct rc_sr *sr = qp->sr;
	uint32_t slot;

	if (sr == NULL || sr->n_held == 0)
		return;
	for (slot = 0; slot < RC_SR_WND; slot++)
		if (map_test(sr, slot)) {
			rte_pktmbuf_free(sr->held[slot].m);
			qp->dev->n_held--;
		}
	memset(sr->map, 0, sizeof(sr->map));
	sr->n_held = 0;
}

void
rc_sr_send_sack(struct dpdat_qp *qp)
{
	const uint64_t *abs = qp->sr->map;
	const uint32_t s0 = (qp->resp.epsn + 1) & SR_MASK;
	uint64_t out[RC_SR_WND / 64], v;
	uint32_t j, pos, w, sh;

	/* the ring of held slots turned to start after epsn, a word at a
	 * time; stored little-endian (bit i is byte i / 8, bit i % 8) */
	for (j = 0; j < RC_SR_WND / 64; j++) {
		pos = (s0 + 64 * j) & SR_MASK;
		w = pos / 64;
		sh = pos % 64;
		v = abs[w] >> sh;
		if (sh != 0)
			v |= abs[(w + 1) % (RC_SR_WND / 64)] << (64 - sh);
		out[j] = rte_cpu_to_le_64(v);
	}
	rc_send_ack_data(qp, ROCE_AETH_NAK_PSN, qp->resp.epsn, out, sizeof(out));
}

static inline uint64_t
sack_word(const uint8_t *map, uint32_t j)
{
	uint64_t v;

	memcpy(&v, map + 8 * j, 8);
	return rte_le_to_cpu_64(v);
}

/* When (in transmission order) the packet of psn, in WR w, last left. */
static inline uint64_t
sent_at(const struct dpdat_qp *qp, const struct rc_swqe *w, uint32_t psn)
{
	return rc_wr_reads(w->opcode) ? w->sent_seq :
	       qp->sr->sent_seq[psn & SR_MASK];
}

/* From SQ index *idx on, the started WR holding psn (PSNs only rise as the
 * callers walk, so *idx keeps the place): NULL when none does. */
static struct rc_swqe *
wr_at(struct dpdat_qp *qp, uint32_t *idx, uint32_t psn)
{
	*idx = rc_swqe_of_psn_from(qp, *idx, psn);
	return *idx != qp->req.sq_started ? &qp->req.sq[*idx & (qp->req.sq_size - 1)] :
	       NULL;
}

/* Resend psn if it left before newest. false: stop (no room, or the
 * sender will send it anyway). */
static bool
maybe_resend(struct dpdat_qp *qp, uint32_t *idx, uint32_t psn,
	     uint64_t newest, uint64_t now)
{
	struct rc_swqe *w;

	if (roce_psn_diff(psn, qp->req.psn) >= 0)
		return false;	/* the sender went back below it */
	w = wr_at(qp, idx, psn);
	if (w == NULL)
		return false;
	/* a READ is one request: only its first PSN is a packet */
	if ((rc_wr_reads(w->opcode) && psn != w->first_psn) ||
	    sent_at(qp, w, psn) >= newest)
		return true;
	if (rc_resend(qp, psn, false, now) != 0)
		return false;	/* no room: the next SACK or the probe */
	qp->st.sack_resent++;
	qp->req.rexmit_tsc = now;
	return true;
}

bool
rc_sr_on_sack(struct dpdat_qp *qp, uint32_t epsn, const uint8_t *map,
	      uint64_t now)
{
	uint32_t j, b, top = 0, idx, psn, nbits;
	uint64_t v, newest;
	struct rc_swqe *w;

	/* the highest PSN held (bit top - 1: PSN epsn + top) */
	for (j = RC_SR_WND / 64; j-- > 0; ) {
		v = sack_word(map, j);
		if (v != 0) {
			top = j * 64 + 64 - (uint32_t)__builtin_clzll(v);
			break;
		}
	}
	if (top == 0)
		return false;	/* it holds nothing: it dropped what followed */
	psn = roce_psn_add(epsn, top);
	if (roce_psn_diff(psn, qp->req.max_sent) >= 0)
		return true;	/* holds what we never sent: ignore it */
	idx = qp->comp.sq_head;
	w = wr_at(qp, &idx, psn);
	if (w == NULL)
		return true;
	/* sends rise with PSNs but for resends: the top's send time stands
	 * for the latest that arrived (a lost resend shows at a later SACK) */
	newest = sent_at(qp, w, psn);
	idx = qp->comp.sq_head;
	if (!maybe_resend(qp, &idx, epsn, newest, now))
		return true;
	/* then PSN epsn + 1 + i for every clear bit i below top - 1 */
	nbits = top - 1;
	for (j = 0; j * 64 < nbits; j++) {
		v = ~sack_word(map, j);
		if (nbits - j * 64 < 64)
			v &= (1ull << (nbits - j * 64)) - 1;
		while (v != 0) {
			b = (uint32_t)__builtin_ctzll(v);
			v &= v - 1;
			if (!maybe_resend(qp, &idx, roce_psn_add(epsn,
					  1 + j * 64 + b), newest, now))
				return true;
		}
	}
	return true;
}
