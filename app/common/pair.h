/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_APP_PAIR_H
#define DPDAT_APP_PAIR_H

/* Two processes over a fresh memif link from one command: pair_fork()
 * returns twice, in the server (198.18.0.1) and in the client
 * (198.18.0.2), each with its own EAL and device; pair_swap() trades a
 * line of text between them over a pipe (the out-of-band channel until
 * connection management). */

#include <stddef.h>
#include <stdint.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_qp.h>

struct pair {
	int server;		/* 1 in the server process */
	const char *name;	/* "server" / "client" */
	int rd, wr;		/* pipe ends to the other process */
	int child;		/* pid of the client, in the server */
	char sock[64];
	struct dpdat_dev *dev;
	struct dpdat_pz *pz;
	struct dpdat_cm_eq *eq;		/* connection events */
	struct dpdat_cm_listener *listener;
	struct dpdat_cm_conn *conn;
};

struct pair_conf {
	uint16_t mtu;
	enum dpdat_progress progress;
};

/* Fork and bring up both ends. Returns 0 in each process, -1 on error. */
int pair_fork(struct pair *p, const struct pair_conf *c);

/* Send our line (< 240 chars), receive the peer's. 0 or -1. */
int pair_swap(struct pair *p, const char *mine, char *theirs, size_t len);

/* A QP on cq connected to the peer's in band with the connection manager:
 * the server listens, the client connects to 198.18.0.1; the REQ and REP
 * private data carry (addr, rkey) of a region so each side can target the
 * other. Returns 0 or -1. */
int pair_qp(struct pair *p, struct dpdat_cq *cq, uint16_t pmtu,
	    uint64_t addr, uint32_t rkey, struct dpdat_qp **qp,
	    uint64_t *peer_addr, uint32_t *peer_rkey);

/* End the connection in band (client: DREQ; both: wait DISCONNECTED);
 * call before freeing the QP. */
void pair_disconnect(struct pair *p);

/* Tear down the device and EAL; the server waits for the client. Returns
 * the process exit status to use. */
int pair_finish(struct pair *p, int status);

#endif
