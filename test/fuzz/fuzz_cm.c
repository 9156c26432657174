/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * libFuzzer harness for the control plane a peer reaches: IB CM MADs on QP1
 * against a live connection manager, and ARP frames. The device sits on a
 * net_null port; its transmit path is replaced by one that reads what dpdat
 * sends (a peer's view: our REQs, REPs, RTUs, DREQs ...) and learns the
 * communication IDs from it, then frees the frames.
 *
 * The consumer side lives on: listeners on an IP CM service (7: REQs carry
 * rdma_cm's header) and on an IB service accept or reject each request
 * (taking turns), an active connection to 198.18.0.2 (either service) is
 * always being made (so REQ_SENT is always there to answer), connections
 * are disconnected a few inputs after they are established, and those
 * that ended are freed with their QPs.
 *
 * Input: one flags byte, then the bytes of the message.
 *   bit 0: a CM MAD (else an ARP frame: the bytes follow the Ethernet
 *          header, which says ARP; bit 3 sends it to the broadcast MAC)
 *   bit 1: keep the MAD header as given (else base version 1, class CM,
 *          version 2, method SEND, so that the message reaches a handler)
 *   bit 2: patch the communication IDs to those of the last message dpdat
 *          sent (its local ID as the remote one, its remote ID as the
 *          local one): the message meets a live connection
 *   bit 4: deliver the frame twice (duplicates)
 *   bits 5-7: the attribute (0: as given; 1..7: REQ, MRA, REJ, REP, RTU,
 *          DREQ, DREP)
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_qp.h>

#include "cm_wire.h"
#include "dev_priv.h"
#include "port_priv.h"
#include "rc_priv.h"
#include "fuzz_peer.h"

#define PEER_IP		0x020012c6u	/* 198.18.0.2, network order */
#define SERVICE_IP	7		/* rdma_cm's port space: an IP header */
#define SERVICE_IB	0x1000000007ull	/* IB service ID: none */
#define MAX_CONN	16

static struct dpdat_dev *dev;
static struct dpdat_port *port;
static struct dpdat_pz *pz;
static struct dpdat_cq *cq;
static struct dpdat_cm_eq *eq;
static struct fuzz_peer peer = {
	.ip = PEER_IP, .mac = { .addr_bytes = { 0x02, 0, 0, 0, 0, 0x02 } } };

static struct {
	struct dpdat_cm_conn *c;
	struct dpdat_qp *qp;
	unsigned int age;	/* inputs since established, 0: not */
	bool active;
} conns[MAX_CONN];

/* what dpdat last sent: its IDs */
static uint32_t our_local_id, our_remote_id;
static unsigned int turn, connects;
static unsigned long inputs;

/* FUZZ_CM_DUMP=dir: every MAD dpdat sends becomes an input there (a
 * capture of its own messages: the seed corpus, test/fuzz/corpus-cm). A
 * REQ as it is (it meets our own listener); the others with their IDs
 * patched (flags bit 2), so that they meet a live connection. */
static void
dump(const uint8_t *mad)
{
	static unsigned int n[16];	/* a few of each kind */
	const char *dir = getenv("FUZZ_CM_DUMP");
	const uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	uint8_t flags = attr == CM_ATTR_REQ ? 0x01 : 0x05;
	uint8_t out[CM_MAD_LEN];
	char path[512];
	FILE *f;

	if (dir == NULL || n[attr & 15] >= 4)
		return;
	snprintf(path, sizeof(path), "%s/mad-%04x-%u", dir, attr,
		 n[attr & 15]++);
	f = fopen(path, "w");
	if (f == NULL)
		return;
	fwrite(&flags, 1, 1, f);
	memcpy(out, mad, CM_MAD_LEN);
	/* our REQ as the peer's: its rdma_cm header names the peer */
	if (attr == CM_ATTR_REQ &&
	    cm_ip_service(cm_get64(out + CM_HDR_LEN, REQ_SERVICE_ID)))
		cm_ip_hdr_put(out + CM_HDR_LEN + REQ_PDATA, PEER_IP,
			      0x010012c6u, 4791);
	fwrite(out, 1, CM_MAD_LEN, f);
	fclose(f);
}

/* The port's transmit path: read the MADs, drop everything. */
static uint16_t
peer_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	const uint8_t *mad;
	uint16_t i;

	(void)p;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const unsigned int off = PORT_HDR_LEN + sizeof(struct roce_bth) +
					 sizeof(struct roce_deth);

		if (rte_pktmbuf_data_len(m) >= off + CM_MAD_LEN) {
			mad = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
			if (mad[1] == CM_MGMT_CLASS) {
				our_local_id = cm_get32(mad + CM_HDR_LEN, 0);
				our_remote_id = cm_get32(mad + CM_HDR_LEN, 4);
				dump(mad);
			}
		}
		rte_pktmbuf_free(m);
	}
	return n;
}

static struct dpdat_qp *
new_qp(void)
{
	struct dpdat_qp_conf qc = { .pz = pz, .send_cq = cq, .recv_cq = cq };

	return dpdat_qp_create(dev, &qc);
}

static int
slot(void)
{
	for (int i = 0; i < MAX_CONN; i++)
		if (conns[i].c == NULL && conns[i].qp == NULL)
			return i;
	return -1;
}

static int
find(const struct dpdat_cm_conn *c)
{
	for (int i = 0; i < MAX_CONN; i++)
		if (conns[i].c == c)
			return i;
	return -1;
}

static void
release(int i)
{
	if (conns[i].c != NULL && dpdat_cm_conn_free(conns[i].c) != 0)
		return;		/* still connected: later */
	conns[i].c = NULL;
	if (conns[i].qp != NULL && dpdat_qp_free(conns[i].qp) == 0)
		conns[i].qp = NULL;
}

/* An active connection is always on its way. */
static void
keep_connecting(void)
{
	int i;

	for (i = 0; i < MAX_CONN; i++)
		if (conns[i].c != NULL && conns[i].active && conns[i].age == 0)
			return;
	i = slot();
	if (i < 0 || (conns[i].qp = new_qp()) == NULL)
		return;
	conns[i].c = dpdat_cm_connect(conns[i].qp, PEER_IP, (connects++ & 1) ?
				      SERVICE_IP : SERVICE_IB, "fz", 2, eq);
	conns[i].active = true;
	conns[i].age = 0;
	if (conns[i].c == NULL)
		release(i);
}

/* The consumer: every event handled as an application would. */
static void
consume(void)
{
	struct dpdat_cm_event ev;
	struct dpdat_wc wc[32];
	int i;

	while (dpdat_cq_poll(cq, wc, 32) > 0)
		;
	while (dpdat_cm_eq_poll(eq, &ev) == 1) {
		i = find(ev.conn);
		switch (ev.type) {
		case DPDAT_CM_CONNECT_REQUEST:
			i = (turn++ & 1) == 0 ? slot() : -1;
			if (i >= 0 && (conns[i].qp = new_qp()) != NULL &&
			    dpdat_cm_accept(ev.conn, conns[i].qp, "ok", 2,
					    eq) == 0) {
				conns[i].c = ev.conn;
				conns[i].active = false;
				conns[i].age = 0;
			} else {
				if (i >= 0)
					release(i);
				if (turn & 2)
					dpdat_cm_reject(ev.conn, "no", 2);
				dpdat_cm_conn_free(ev.conn);
			}
			break;
		case DPDAT_CM_ESTABLISHED:
			if (i >= 0)
				conns[i].age = 1;
			break;
		default:	/* the end of a connection */
			if (i >= 0) {
				conns[i].age = 0;
				conns[i].active = false;
				release(i);
			}
			break;
		}
	}
	for (i = 0; i < MAX_CONN; i++) {
		if (conns[i].c == NULL && conns[i].qp != NULL)
			release(i);
		if (conns[i].age != 0 && ++conns[i].age == 4)
			dpdat_cm_disconnect(conns[i].c, "bye", 3);
	}
}

static void
setup(void)
{
	struct dpdat_eal_conf ec = { .program = "fuzz_cm",
				     .huge = DPDAT_HUGE_NEVER, .mem_mb = 256,
				     .log_level = 1 };
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_INLINE };

	if (dpdat_eal_init(&ec) < 0)
		abort();
	dc.port.device = "net_null0";
	dc.port.ipv4 = "198.18.0.1";
	dev = dpdat_dev_open(&dc);
	if (dev == NULL)
		abort();
	port = dpdat_dev_port(dev);
	rc_lock_engine(rc_dev(dev));
	port->dev_tx = peer_tx;
	port_path_update(port);
	rc_unlock_engine(rc_dev(dev));
	pz = dpdat_pz_create(dpdat_dev_domain(dev));
	cq = dpdat_cq_create(dev, 1 << 14);
	eq = dpdat_cm_eq_create(dev, 1024);
	if (pz == NULL || cq == NULL || eq == NULL)
		abort();
	if (dpdat_cm_listen(dev, SERVICE_IP, eq) == NULL ||
	    dpdat_cm_listen(dev, SERVICE_IB, eq) == NULL)
		abort();
	peer.dev = dev;
	peer.port = port;
	keep_connecting();
	dpdat_dev_progress(dev);	/* the ARP request */
	fuzz_peer_arp_reply(&peer);
}

/* A frame from the peer: a CM MAD on QP1, or ARP. */
static struct rte_mbuf *
frame(uint8_t flags, const uint8_t *data, size_t size)
{
	static const uint16_t attrs[] = { 0, CM_ATTR_REQ, CM_ATTR_MRA,
		CM_ATTR_REJ, CM_ATTR_REP, CM_ATTR_RTU, CM_ATTR_DREQ,
		CM_ATTR_DREP };
	uint8_t mad[CM_MAD_LEN] = { 0 };

	if (!(flags & 1))
		return fuzz_peer_arp(&peer, data, size, flags & 8);
	memcpy(mad, data, RTE_MIN(size, (size_t)CM_MAD_LEN));
	if (!(flags & 2)) {
		mad[0] = 1;
		mad[1] = CM_MGMT_CLASS;
		mad[2] = CM_CLASS_VERSION;
		mad[3] = CM_METHOD_SEND;
	}
	if (flags >> 5) {
		mad[16] = (uint8_t)(attrs[flags >> 5] >> 8);
		mad[17] = (uint8_t)attrs[flags >> 5];
	}
	if (flags & 4) {
		cm_put32(mad + CM_HDR_LEN, 4, our_local_id);
		if (our_remote_id != 0)
			cm_put32(mad + CM_HDR_LEN, 0, our_remote_id);
	}
	return fuzz_peer_mad(&peer, mad);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf *m, *dup = NULL;
	uint8_t flags;

	if (dev == NULL)
		setup();
	if (size < 1 || size > 1 + CM_MAD_LEN)
		return 0;
	flags = data[0];
	if (++inputs % 10000 == 0)	/* entries age out after 300 s */
		fuzz_peer_arp_reply(&peer);
	keep_connecting();
	dpdat_dev_progress(dev);
	m = frame(flags, data + 1, size - 1);
	if (flags & 16)
		dup = rte_pktmbuf_copy(m, port->pool, 0, UINT32_MAX);
	fuzz_peer_deliver(&peer, m);
	if (dup != NULL)
		fuzz_peer_deliver(&peer, dup);
	dpdat_dev_progress(dev);
	consume();
	return 0;
}
