/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * A peer of a device with no network, for the harnesses that speak IB CM
 * to it (fuzz_cm, fuzz_rsm): frames built as the peer sends them (ARP, CM
 * MADs on QP1, with its addresses and a correct ICRC) and delivered to the
 * device's receive path with the engine held. The caller replaces the
 * port's transmit path to read what the device answers.
 */

#ifndef DPDAT_FUZZ_PEER_H
#define DPDAT_FUZZ_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

struct dpdat_dev;
struct dpdat_port;

struct fuzz_peer {
	struct dpdat_dev *dev;
	struct dpdat_port *port;
	uint32_t ip;			/* network order */
	struct rte_ether_addr mac;
	uint32_t ud_psn;
};

/* An ARP frame from the peer: the bytes after the Ethernet header (at most
 * 128), to the device's MAC or broadcast. */
struct rte_mbuf *fuzz_peer_arp(struct fuzz_peer *p, const uint8_t *data,
			       size_t size, bool bcast);
/* The peer's ARP reply to the device (its address resolves). */
void fuzz_peer_arp_reply(struct fuzz_peer *p);
/* A UD SEND to QP1 from the peer carrying mad (CM_MAD_LEN bytes). */
struct rte_mbuf *fuzz_peer_mad(struct fuzz_peer *p, const uint8_t *mad);
/* Hand a frame to the device's receive path (the mbuf is consumed). */
void fuzz_peer_deliver(struct fuzz_peer *p, struct rte_mbuf *m);

/* Stop the engine thread of a device opened with DPDAT_PROGRESS_THREAD
 * (by a library: librsm, the DAT plug-in) and let it run inline from now
 * on, in the threads that poll: an input's outcome is then its own, and no
 * thread spins beside the fuzzer. */
void fuzz_dev_inline(struct dpdat_dev *dev);

#endif /* DPDAT_FUZZ_PEER_H */
