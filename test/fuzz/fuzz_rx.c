/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * libFuzzer harness for the receive path: a frame goes through the port's
 * classification (Ethernet, ARP, IPv4, UDP 4791) and, when it is RoCEv2,
 * through the engine's dispatch (ICRC, BTH) into the responder or the
 * completer of a live, connected QP that has registered memory, posted
 * receives and work in flight. The device sits on a net_null port, so
 * whatever the engine answers is discarded.
 *
 * Two QPs: one speaks go-back-N, as with any RoCEv2 peer, the other
 * selective repeat and repeated NAKs, as with a dpdat peer (SACK parsing,
 * packets held out of order, READ responses placed out of order).
 *
 * Input: 4 bytes (little endian): bits 0-23 the QP's expected PSN, bit 31
 * picks the selective repeat QP, bit 30 leaves the frame's destination QP
 * alone (else it is set to the QP picked); then the frame.
 * The fuzzer recomputes nothing: a mutated frame needs a valid ICRC to get
 * past dispatch, so every fourth input gets its ICRC fixed first (as an
 * attacker on the wire would) to reach the deeper code.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_qp.h>
#include "dev_priv.h"
#include "port_priv.h"
#include "rc_priv.h"

static struct dpdat_dev *dev;
static struct dpdat_qp *qps[2];	/* go-back-N, selective repeat */
static struct dpdat_cq *cq;
/* kept for the whole run, and reachable: LeakSanitizer (libFuzzer checks
 * after every input) speaks only of what an input leaked */
static struct dpdat_pz *pz;
static struct dpdat_lmr *lmr;
static uint8_t *mem;
static uint32_t key;
static unsigned long iter;

static void
setup(void)
{
	struct dpdat_eal_conf ec = { .program = "fuzz_rx", .huge = DPDAT_HUGE_NEVER,
				     .mem_mb = 256, .log_level = 1 };
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_INLINE };
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_qp_remote r = { .qpn = 0x10, .psn = 0, .pmtu = 1024,
				     .retry_cnt = 7, .rnr_retry = 7 };
	struct dpdat_lmr_info li;
	struct dpdat_qp_conf qc = { 0 };

	if (dpdat_eal_init(&ec) < 0)
		abort();
	dc.port.device = "net_null0";
	dc.port.ipv4 = "198.18.0.1";
	dev = dpdat_dev_open(&dc);
	if (dev == NULL)
		abort();
	pz = dpdat_pz_create(dpdat_dev_domain(dev));
	mem = dpdat_mem_alloc(1 << 20, 4096, -1);
	d.virt.addr = mem;
	d.virt.length = 1 << 20;
	lmr = dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_ALL);
	cq = dpdat_cq_create(dev, 1 << 16);
	if (lmr == NULL || cq == NULL)
		abort();
	dpdat_lmr_query(lmr, &li);
	key = li.lmr_context;
	qc.pz = pz;
	qc.send_cq = qc.recv_cq = cq;
	r.ipv4 = 0x020012c6;	/* 198.18.0.2 */
	for (int i = 0; i < 2; i++) {
		qps[i] = dpdat_qp_create(dev, &qc);
		r.ext = i == 0 ? 0 : DPDAT_QP_EXT_SACK | DPDAT_QP_EXT_NAK_REPEAT;
		if (qps[i] == NULL || dpdat_qp_connect(qps[i], &r) != 0)
			abort();
	}
}

/* Give the QP work in flight and receives, and a known responder state. */
static void
reset_qp(struct dpdat_qp *qp, uint32_t epsn)
{
	struct dpdat_sge sge = { (uintptr_t)mem, 4096, key };
	struct dpdat_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct dpdat_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				    .flags = DPDAT_SEND_SIGNALED,
				    .remote_addr = 0x1000, .rkey = 0x101 };
	struct dpdat_wc wc[64];

	rc_lock_engine(rc_dev(dev));
	rc_qp_flush(qp);
	/* a flushed QP never comes back in the API: bring it back whole, as
	 * a fresh connection (the invariants, rc_req_check() and
	 * rc_resp_check(), are checked on every input in this build) */
	qp->req.psn = qp->comp.una = qp->req.max_sent = qp->req.frontier;
	qp->comp.acked = roce_psn_add(qp->req.frontier, ROCE_PSN_MASK);
	qp->req.rtt_tsc = 0;
	qp->req.nprobe = 0;
	if (qp->sr != NULL) {
		memset(qp->sr->rd_map, 0, sizeof(qp->sr->rd_map));
		qp->sr->n_ask = 0;
		qp->sr->rd_top = qp->req.frontier;
	}
	qp->state = DPDAT_QPS_RTS;
	qp->resp.epsn = epsn & ROCE_PSN_MASK;
	qp->resp.msg = RC_RESP_MSG_NONE;
	qp->resp.wleft = qp->resp.wlen = qp->resp.recv_off = 0;
	qp->resp.nak_sent = false;
	qp->resp.ack_due = false;
	qp->resp.nres = 0;
	rc_unlock_engine(rc_dev(dev));
	while (dpdat_cq_poll(cq, wc, 64) > 0)
		;
	dpdat_post_recv(qp, &rwr);
	wr.opcode = DPDAT_WR_RDMA_WRITE;
	dpdat_post_send(qp, &wr);
	wr.opcode = DPDAT_WR_RDMA_READ;
	dpdat_post_send(qp, &wr);
	dpdat_dev_progress(dev);	/* sends them: the completer has work */
}

static void
fix_icrc(uint8_t *f, size_t len)
{
	uint32_t c;

	if (len < PORT_HDR_LEN + sizeof(struct roce_bth) + 4)
		return;
	c = roce_icrc(f + sizeof(struct rte_ether_hdr),
		      (unsigned int)(len - sizeof(struct rte_ether_hdr) - 4));
	memcpy(f + len - 4, &c, 4);	/* little endian hosts */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dpdat_port *port;
	struct dpdat_qp *qp;
	struct rte_mbuf *m;
	uint32_t epsn;
	uint8_t *f;

	if (dev == NULL)
		setup();
	if (size < 4 + sizeof(struct rte_ether_hdr) || size > 4 + 4200)
		return 0;
	memcpy(&epsn, data, 4);
	data += 4;
	size -= 4;
	qp = qps[epsn >> 31];
	reset_qp(qp, epsn);
	port = dpdat_dev_port(dev);
	m = rte_pktmbuf_alloc(port->pool);
	if (m == NULL)
		abort();
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)size);
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return 0;
	}
	memcpy(f, data, size);
	if (size >= sizeof(struct rte_ether_hdr)) {
		/* address it to us so it gets past the MAC check */
		memcpy(f, &port->mac, RTE_ETHER_ADDR_LEN);
	}
	if (!(epsn & (1u << 30)) &&
	    size >= PORT_HDR_LEN + sizeof(struct roce_bth)) {
		/* to the QP picked: the deeper code sooner */
		f[PORT_HDR_LEN + 5] = (uint8_t)(qp->qpn >> 16);
		f[PORT_HDR_LEN + 6] = (uint8_t)(qp->qpn >> 8);
		f[PORT_HDR_LEN + 7] = (uint8_t)qp->qpn;
	}
	if ((iter++ & 3) == 0)
		fix_icrc(f, size);
	rc_lock_engine(rc_dev(dev));
	if (port_rx_one(port, m))
		dev_dispatch(dev, m);
	rc_unlock_engine(rc_dev(dev));
	dpdat_dev_progress(dev);
	return 0;
}
