/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_TEST_RIG_H
#define DPDAT_TEST_RIG_H

/*
 * The in-process rig of the RC engine tests (test_engine.c): two devices,
 * A and B, on the two ends of a net_ring link, engines run by hand; the
 * frames between them sit in a2b and b2a, where a test may look at, drop
 * or reorder them.
 */

#include <stdint.h>

#include <rte_ring.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_qp.h>

struct end {
	struct dpdat_dev *dev;
	struct dpdat_pz *pz;
	struct dpdat_lmr *lmr;
	struct dpdat_cq *cq;
	struct dpdat_qp *qp;
	uint8_t *buf;		/* 1 MiB, registered with every privilege */
	uint32_t key;
	struct dpdat_port_info pi;
};

extern struct rte_ring *a2b, *b2a;
extern struct end A, B;

/* Fresh QPs A.qp and B.qp connected to each other, out of band, with the
 * extensions ext (DPDAT_QP_EXT_*) on both. */
void connect_pair(uint16_t pmtu, uint8_t timeout);
void connect_pair_ext(uint16_t pmtu, uint8_t timeout, uint8_t ext);
void disconnect_pair(void);
/* n rounds of A's engine, then B's. */
void run(int n);
int post_on(struct dpdat_qp *qp, struct end *e, enum dpdat_wr_opcode op,
	    uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey);
int post(struct end *e, enum dpdat_wr_opcode op, uint32_t off, uint32_t len,
	 uint64_t raddr, uint32_t rkey);
void drain_cqs(void);
/* A completion of e's CQ within iters rounds: 0, or -1. */
int wait_wc(struct end *e, struct dpdat_wc *wc, int iters);

struct dpdat_cm_eq;
struct dpdat_cm_event;
/* The type of the next event of eq within iters rounds, or 0. */
int cm_next(struct dpdat_cm_eq *eq, struct dpdat_cm_event *ev, int iters);

#endif /* DPDAT_TEST_RIG_H */
