/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Flow steering: where the device supports rte_flow, dpdat asks for
 * isolated mode and rules that bring it only its own traffic (RoCEv2 to our
 * address, and ARP): on mlx5's bifurcated driver the kernel keeps the rest.
 * Virtual devices (memif, ring, tap ...) have no rte_flow: dpdat then
 * receives everything and classifies in software, and says so. */

#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_flow.h>

#include "port_priv.h"

/* Before configure: isolated mode, or nothing. */
void
port_steer_isolate(struct dpdat_port *p)
{
	struct rte_flow_error err;

	memset(&err, 0, sizeof(err));
	if (rte_flow_isolate(p->port_id, 1, &err) == 0) {
		p->isolated = true;
		return;
	}
	PORT_LOG(INFO, "%s: no rte_flow isolation (%s): receiving all "
		 "traffic, classified in software", p->name,
		 err.message ? err.message : "not supported");
}

static struct rte_flow *
steer_rule(struct dpdat_port *p, const struct rte_flow_item *pattern)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	const struct rte_flow_action_queue q = { .index = 0 };
	const struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error err;

	memset(&err, 0, sizeof(err));
	return rte_flow_create(p->port_id, &attr, pattern, actions, &err);
}

/* After start: the rules, when isolated. */
int
port_steer_rules(struct dpdat_port *p)
{
	struct rte_flow_item_ipv4 ip = { .hdr.dst_addr = p->ip };
	struct rte_flow_item_ipv4 ip_mask = { .hdr.dst_addr = 0xffffffff };
	struct rte_flow_item_udp udp = {
		.hdr.dst_port = RTE_BE16(4791) };
	struct rte_flow_item_udp udp_mask = { .hdr.dst_port = 0xffff };
	struct rte_flow_item_eth arp = {
		.type = RTE_BE16(RTE_ETHER_TYPE_ARP) };
	struct rte_flow_item_eth arp_mask = { .type = 0xffff };
	const struct rte_flow_item roce[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &ip, .mask = &ip_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp,
		  .mask = &udp_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_item arps[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &arp,
		  .mask = &arp_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};

	if (!p->isolated)
		return 0;
	p->flows[0] = steer_rule(p, roce);
	/* a kernel that shares the NIC keeps ARP (kern.c) */
	p->flows[1] = p->kernel ? NULL : steer_rule(p, arps);
	if (p->flows[0] == NULL || (!p->kernel && p->flows[1] == NULL)) {
		PORT_LOG(ERR, "%s: isolated but the steering rules failed",
			 p->name);
		return -ENOTSUP;
	}
	PORT_LOG(NOTICE, "%s: isolated; UDP 4791 to us%s steered to dpdat, "
		 "the rest left to the kernel", p->name,
		 p->kernel ? "" : " and ARP");
	return 0;
}

void
port_steer_remove(struct dpdat_port *p)
{
	struct rte_flow_error err;

	for (unsigned int i = 0; i < RTE_DIM(p->flows); i++)
		if (p->flows[i] != NULL)
			rte_flow_destroy(p->port_id, p->flows[i], &err);
	if (p->isolated)
		rte_flow_isolate(p->port_id, 0, &err);
}
