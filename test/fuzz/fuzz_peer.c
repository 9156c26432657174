/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* The peer of the CM harnesses (fuzz_peer.h). */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ip.h>

#include <dpdat/dpdat.h>

#include "cm_wire.h"
#include "dev_priv.h"
#include "port_priv.h"
#include "rc_priv.h"
#include "fuzz_peer.h"

struct rte_mbuf *
fuzz_peer_arp(struct fuzz_peer *p, const uint8_t *data, size_t size,
	      bool bcast)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->port->pool);
	struct rte_ether_hdr *eth;

	if (m == NULL)
		abort();
	size = RTE_MIN(size, (size_t)128);
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m,
		(uint16_t)(sizeof(*eth) + size));
	memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	if (!bcast)
		eth->dst_addr = p->port->mac;
	eth->src_addr = p->mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	memcpy(eth + 1, data, size);
	return m;
}

void
fuzz_peer_arp_reply(struct fuzz_peer *p)
{
	struct rte_arp_hdr a = {
		.arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER),
		.arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4),
		.arp_hlen = RTE_ETHER_ADDR_LEN,
		.arp_plen = 4,
		.arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY),
	};

	a.arp_data.arp_sha = p->mac;
	a.arp_data.arp_sip = p->ip;
	a.arp_data.arp_tha = p->port->mac;
	a.arp_data.arp_tip = p->port->ip;
	fuzz_peer_deliver(p, fuzz_peer_arp(p, (const uint8_t *)&a, sizeof(a),
					   false));
}

static void
fix_icrc(uint8_t *f, size_t len)
{
	uint32_t c = roce_icrc(f + sizeof(struct rte_ether_hdr),
			       (unsigned int)(len -
					      sizeof(struct rte_ether_hdr) - 4));

	memcpy(f + len - 4, &c, 4);	/* little endian hosts */
}

struct rte_mbuf *
fuzz_peer_mad(struct fuzz_peer *p, const uint8_t *mad)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->port->pool);
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct roce_bth *bth;
	struct roce_deth *deth;

	if (m == NULL)
		abort();
	bth = (struct roce_bth *)rte_pktmbuf_append(m, sizeof(*bth) +
		sizeof(*deth) + CM_MAD_LEN);
	memset(bth, 0, sizeof(*bth) + sizeof(*deth));
	bth->opcode = ROCE_OP_UD_SEND_ONLY;
	bth->pkey = rte_cpu_to_be_16(ROCE_PKEY_DEFAULT);
	bth->qpn = rte_cpu_to_be_32(ROCE_QP1);
	bth->apsn = rte_cpu_to_be_32(p->ud_psn++ & ROCE_PSN_MASK);
	deth = (struct roce_deth *)(bth + 1);
	deth->qkey = rte_cpu_to_be_32(ROCE_QKEY_GSI);
	deth->sqp = rte_cpu_to_be_32(ROCE_QP1);
	memcpy(deth + 1, mad, CM_MAD_LEN);
	if (port_frame(p->port, m, p->port->ip, &p->port->mac, 0xc001) != 0)
		abort();
	/* from the peer: its addresses, and the ICRC that covers them */
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eth->src_addr = p->mac;
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	ip->src_addr = p->ip;
	fix_icrc(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_pkt_len(m));
	return m;
}

void
fuzz_peer_deliver(struct fuzz_peer *p, struct rte_mbuf *m)
{
	rc_lock_engine(rc_dev(p->dev));
	if (port_rx_one(p->port, m))
		dev_dispatch(p->dev, m);
	rc_unlock_engine(rc_dev(p->dev));
}

void
fuzz_dev_inline(struct dpdat_dev *dev)
{
	if (!dev->thread_started)
		return;
	__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
	pthread_join(dev->thread, NULL);
	dev->thread_started = 0;
	dev->rc.progress = DPDAT_PROGRESS_INLINE;
}
