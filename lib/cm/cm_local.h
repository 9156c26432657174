/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_CM_LOCAL_H
#define DPDAT_CM_LOCAL_H

/*
 * Inside lib/cm only: the device's CM state, shared by the connection
 * manager proper (cm.c) and the in-band offer of dpdat's extensions for
 * QPs connected out of band (offer.c). The engine alone transmits: both
 * send from cm_progress() and from the MADs that arrive.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "rc_priv.h"

struct dpdat_cm_listener;
struct dpdat_cm_conn;
struct cm_offer;

struct cm_dev {
	struct rc_dev *dev;
	pthread_mutex_t lock;
	TAILQ_HEAD(, dpdat_cm_listener) listeners;
	TAILQ_HEAD(, dpdat_cm_conn) conns;
	TAILQ_HEAD(, cm_offer) offers;	/* offers not answered yet */
	uint32_t ud_psn;
	uint32_t work;		/* anything for cm_progress to do */
	uint64_t last;		/* last look at the timers */
	uint64_t retry_tsc;
};

/* Something for cm_progress() to send now. */
static inline void
cm_kick(struct cm_dev *cm)
{
	__atomic_store_n(&cm->work, 1, __ATOMIC_RELEASE);
}

/* Engine held: a zeroed MAD of management class mclass (method Send) to
 * QP1 in a new mbuf; returns its data after the MAD header, NULL when no
 * mbuf is left. */
uint8_t *cm_mad_start(struct cm_dev *cm, struct rte_mbuf **mp, uint8_t mclass,
		      uint8_t version, uint16_t attr, uint64_t tid);
/* Engine held: frames and sends (or frees) it. */
void cm_mad_send(struct cm_dev *cm, struct rte_mbuf *m, uint32_t ip,
		 const struct rte_ether_addr *mac);

/* offer.c; cm->lock held by the caller except for cm_offer_input() */
void cm_offer_input(struct cm_dev *cm, const uint8_t *mad, uint32_t ip);
void cm_offer_progress(struct cm_dev *cm, uint64_t now);
void cm_offer_gone(struct cm_dev *cm, const struct dpdat_qp *qp);
void cm_offers_free(struct cm_dev *cm);

#endif /* DPDAT_CM_LOCAL_H */
