/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* ARP responder and resolver with a small open-addressed neighbour table.
 * Runs on the thread that owns the port. */

#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_jhash.h>

#include "port_priv.h"

struct port_neigh *
port_neigh_find(struct dpdat_port *p, uint32_t ip, bool create)
{
	uint32_t h = rte_jhash_1word(ip, 0x4791) & (PORT_NEIGH_SIZE - 1);
	struct port_neigh *free_slot = NULL, *oldest = NULL, *e;
	unsigned int k;

	for (k = 0; k < PORT_NEIGH_SIZE; k++) {
		e = &p->neigh[(h + k) & (PORT_NEIGH_SIZE - 1)];
		if (e->state == NEIGH_FREE) {
			free_slot = e;
			break;	/* entries are never removed mid-chain */
		}
		if (e->ip == ip)
			return e;
		if (oldest == NULL || e->tsc < oldest->tsc)
			oldest = e;
	}
	if (!create)
		return NULL;
	/* a full table forgets its oldest entry (overwritten in place, so
	 * no chain breaks) rather than refusing new neighbours for good */
	if (free_slot == NULL)
		free_slot = oldest;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->ip = ip;
	free_slot->state = NEIGH_INCOMPLETE;
	free_slot->tsc = rte_get_tsc_cycles();
	return free_slot;
}

static struct rte_mbuf *
arp_build(struct dpdat_port *p, uint16_t op, const struct rte_ether_addr *tha,
	  uint32_t tip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return NULL;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m,
		sizeof(*eth) + sizeof(*arp));
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (op == RTE_ARP_OP_REQUEST)
		memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	else
		eth->dst_addr = *tha;
	eth->src_addr = p->mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = p->mac;
	arp->arp_data.arp_sip = p->ip;
	if (op == RTE_ARP_OP_REQUEST)
		memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	else
		arp->arp_data.arp_tha = *tha;
	arp->arp_data.arp_tip = tip;
	return m;
}

int
port_arp_request(struct dpdat_port *p, uint32_t ip)
{
	struct rte_mbuf *m = arp_build(p, RTE_ARP_OP_REQUEST, NULL, ip);

	if (m == NULL)
		return -ENOMEM;
	p->st.tx_arp++;
	return port_tx(p, &m, 1) == 1 ? 0 : -ENOBUFS;
}

void
port_arp_input(struct dpdat_port *p, struct rte_mbuf *m)
{
	const struct rte_arp_hdr *arp;
	struct port_neigh *e;
	struct rte_mbuf *r;
	uint32_t sip;

	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr) +
				      sizeof(*arp)) {
		p->st.drop_malformed++;
		goto out;
	}
	arp = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *,
				      sizeof(struct rte_ether_hdr));
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4 ||
	    !rte_is_unicast_ether_addr(&arp->arp_data.arp_sha)) {
		p->st.drop_malformed++;
		goto out;
	}
	sip = arp->arp_data.arp_sip;
	/* never learn impossible senders: 0, broadcast, multicast, us */
	if (sip == 0 || sip == 0xffffffff || sip == p->ip ||
	    (rte_be_to_cpu_32(sip) >> 28) == 0xe) {
		p->st.drop_malformed++;
		goto out;
	}
	/* learn the sender if we know it or it talks to us (RFC 826) */
	e = port_neigh_find(p, sip, arp->arp_data.arp_tip == p->ip);
	if (e != NULL) {
		e->mac = arp->arp_data.arp_sha;
		e->state = NEIGH_REACHABLE;
		e->tries = 0;
		e->tsc = rte_get_tsc_cycles();
	}
	if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
	    arp->arp_data.arp_tip == p->ip) {
		r = arp_build(p, RTE_ARP_OP_REPLY, &arp->arp_data.arp_sha, sip);
		if (r != NULL) {
			p->st.tx_arp++;
			port_tx(p, &r, 1);
		}
	}
out:
	rte_pktmbuf_free(m);
}

int
port_resolve(struct dpdat_port *p, uint32_t ip, struct rte_ether_addr *mac)
{
	struct port_neigh *e;

	if (p->kernel)
		return port_kern_resolve(p, ip, mac);
	e = port_neigh_find(p, ip, true);
	if (e == NULL)
		return -ENOSPC;
	switch (e->state) {
	case NEIGH_REACHABLE:
		*mac = e->mac;
		return 0;
	case NEIGH_FAILED:
		return -EHOSTUNREACH;
	default:
		if (e->tries == 0) {
			e->tries = 1;
			e->tsc = rte_get_tsc_cycles();
			port_arp_request(p, ip);
		}
		return -EAGAIN;
	}
}

/* The link's state as the device tells it; the driver's work at each
 * link up. Whether it is up. */
static bool
port_link_watch(struct dpdat_port *p)
{
	struct rte_eth_link link = { 0 };

	rte_eth_link_get_nowait(p->port_id, &link);
	if (link.link_status && !p->link_up && p->drv->link_up != NULL)
		p->drv->link_up(p);
	p->link_up = link.link_status;
	return link.link_status;
}

/* ARP requests retried and given up; old answers forgotten. */
static void
port_neigh_age(struct dpdat_port *p, bool link_up)
{
	const uint64_t now = rte_get_tsc_cycles();
	const uint64_t retry = p->tsc_hz * PORT_ARP_RETRY_MS / 1000;
	const uint64_t ttl = p->tsc_hz * PORT_NEIGH_TTL_S;
	const uint64_t failed = p->tsc_hz * PORT_NEIGH_FAILED_MS / 1000;
	struct port_neigh *e;
	unsigned int k;

	for (k = 0; k < PORT_NEIGH_SIZE; k++) {
		e = &p->neigh[k];
		if (e->state == NEIGH_INCOMPLETE && e->tries != 0 &&
		    !p->kernel && now - e->tsc > retry) {
			if (!link_up) {
				/* nothing went out: the link decides, not
				 * the peer */
				e->tsc = now;
				continue;
			}
			if (e->tries >= PORT_ARP_TRIES) {
				e->state = NEIGH_FAILED;
				e->tsc = now;
				continue;
			}
			e->tries++;
			e->tsc = now;
			port_arp_request(p, e->ip);
		} else if ((e->state == NEIGH_REACHABLE && now - e->tsc > ttl) ||
			   (e->state == NEIGH_FAILED && now - e->tsc > failed)) {
			/* ask again next time instead of trusting old news */
			e->state = NEIGH_INCOMPLETE;
			e->tries = 0;
		}
	}
}

void
port_timer(struct dpdat_port *p)
{
	port_neigh_age(p, port_link_watch(p));
}

int
dpdat_port_neighbours(const struct dpdat_port *p, struct dpdat_neigh *out,
		      unsigned int max)
{
	static const char *const states[] = {
		[NEIGH_INCOMPLETE] = "incomplete",
		[NEIGH_REACHABLE] = "reachable",
		[NEIGH_FAILED] = "failed",
	};
	uint64_t now = rte_get_tsc_cycles(), hz = rte_get_tsc_hz();
	unsigned int k, n = 0;

	if (p == NULL || p->magic != PORT_MAGIC)
		return -EBADF;
	if (out == NULL && max != 0)
		return -EINVAL;
	for (k = 0; k < PORT_NEIGH_SIZE && n < max; k++) {
		const struct port_neigh *e = &p->neigh[k];

		if (e->state == NEIGH_FREE)
			continue;
		out[n].ipv4 = e->ip;
		out[n].mac = e->mac;
		out[n].state = states[e->state];
		out[n].age_ms = (uint32_t)RTE_MIN((now - e->tsc) * 1000 / hz,
						  (uint64_t)UINT32_MAX);
		n++;
	}
	return (int)n;
}
