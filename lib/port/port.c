/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Port bring-up and teardown, and the receive/transmit bursts. The bursts
 * carry no test for optional work: while fault injection or capture is on,
 * it replaces the receive or transmit path or installs a DPDK receive
 * callback (port_priv.h); memif's guard is its device burst. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <net/if.h>

#include <rte_alarm.h>
#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_udp.h>

#include <dpdat/dpdat_env.h>

#include "port_priv.h"
#include "roce.h"

RTE_LOG_REGISTER(dpdat_port_logtype, dpdat.port, NOTICE);

#define PORT_RING_SIZE	1024
/* one PMTU-4096 RoCEv2 frame per mbuf: 4096 + 78 bytes of headers */
#define PORT_MBUF_DATA	(4096 + 256)

/* The device arguments dpdat probes: the user's, with %l filled in and
 * what the link kind adds (drv.c). */
int
port_devargs(const char *given, uint16_t mtu, char *out, size_t len)
{
	const struct port_drv *drv;
	char device[512];
	int n;

	n = port_devargs_expand(given, device, sizeof(device));
	if (n < 0)
		return n;
	drv = port_drv_of(device);
	if (drv->devargs != NULL)
		n = drv->devargs(device, mtu, out, len);
	else
		n = snprintf(out, len, "%s", device);
	if (n == -ENOENT)
		return n;
	return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

const char *
port_devarg(const char *device, const char *key, char *out, size_t len)
{
	const char *p = device;
	size_t k = strlen(key), n;

	while ((p = strchr(p, ',')) != NULL) {
		p++;
		if (strncmp(p, key, k) == 0 && p[k] == '=') {
			n = strcspn(p + k + 1, ",");
			if (n >= len)
				return NULL;
			memcpy(out, p + k + 1, n);
			out[n] = '\0';
			return out;
		}
	}
	return NULL;
}

/* Probe devargs unless a port of that name (or the device named by the
 * devargs) already exists; return its port id. */
static int
port_find_or_probe(struct dpdat_port *p, const char *device)
{
	char name[RTE_DEV_NAME_MAX_LEN];
	const char *comma = strchr(device, ',');
	size_t n = comma ? (size_t)(comma - device) : strlen(device);
	int ret;

	if (n == 0 || n >= sizeof(name))
		return -EINVAL;
	memcpy(name, device, n);
	name[n] = '\0';
	p->probed = false;
	if (rte_eth_dev_get_port_by_name(name, &p->port_id) == 0)
		return 0;
	if (p->drv->pre_probe != NULL) {
		ret = p->drv->pre_probe(p, device);
		if (ret < 0)
			return ret;
	}
	ret = rte_dev_probe(device);
	if (ret < 0) {
		int why = p->drv->probe_failed != NULL ?
			  p->drv->probe_failed(device, ret) : 0;

		if (why != 0)
			return why;
		PORT_LOG(ERR, "cannot probe '%s': %s", device,
			 rte_strerror(-ret));
		return -ENODEV;
	}
	p->probed = true;
	if (rte_eth_dev_get_port_by_name(name, &p->port_id) != 0) {
		/* probed under another name: undo, we cannot find it */
		rte_eal_hotplug_remove("vdev", name);
		return -ENODEV;
	}
	return 0;
}

/* Close a port we probed and remove its device. */
static void
port_detach_now(uint16_t port_id)
{
	struct rte_eth_dev_info di;
	struct rte_device *dev = NULL;

	if (rte_eth_dev_info_get(port_id, &di) == 0)
		dev = di.device;
	/* stopped here too, on the thread of the driver's callbacks (memif
	 * disconnects on stop), and before the close either way: never
	 * depend on a clean peer disconnect */
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
	if (dev != NULL)
		rte_dev_remove(dev);
}

struct port_detach_ctx {
	uint16_t port_id;
	int done;
};

static void
port_detach_cb(void *arg)
{
	struct port_detach_ctx *c = arg;

	port_detach_now(c->port_id);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

/* Close and remove a device on the EAL's interrupt thread, where its
 * driver's callbacks run: memif handles a peer's hang-up there, and a
 * close on another thread at that moment freed what the handler was using
 * (the quick-start demo's server crashed at exit about one run in five,
 * inside memif's interrupt handler, while dpdat_port_free() freed the
 * pool). The thread runs one callback at a time. If the alarm cannot be
 * set, or does not run within 5 s, the device goes from this thread. */
static void
port_detach(uint16_t port_id)
{
	struct port_detach_ctx c = { .port_id = port_id };
	uint64_t t0 = rte_get_timer_cycles();

	if (rte_thread_is_intr() || rte_eal_alarm_set(1, port_detach_cb, &c)) {
		port_detach_now(port_id);
		return;
	}
	while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
		if (rte_get_timer_cycles() - t0 > 5 * rte_get_timer_hz() &&
		    rte_eal_alarm_cancel(port_detach_cb, &c) > 0) {
			PORT_LOG(WARNING, "port %u: the interrupt thread did not "
				 "take the close: closing here", port_id);
			port_detach_now(port_id);
			return;
		}
		usleep(100);
	}
}

/* Poll the link every 10 ms for up to ms milliseconds. */
int
port_wait_link(struct dpdat_port *p, uint64_t ms)
{
	struct rte_eth_link link;
	uint64_t t;

	for (t = 0; t <= ms; t += 10) {
		if (rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return 0;
		rte_delay_us_sleep(10 * 1000);
	}
	return -ETIMEDOUT;
}

static int
port_configure(struct dpdat_port *p, const char *device, unsigned int wait_s)
{
	const uint16_t nq = p->grp != NULL ? p->grp->nq : 1;
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info di;
	uint32_t dev_mtu;
	int ret;

	ret = rte_eth_dev_info_get(p->port_id, &di);
	if (ret < 0)
		return ret;
	if (p->drv->configure != NULL)
		p->drv->configure(p);
	p->tx_offloads = di.tx_offload_capa &
		(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
	conf.txmode.offloads = p->tx_offloads;
	if (di.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	dev_mtu = RTE_MIN((uint32_t)di.max_mtu, di.max_rx_pktlen -
			  RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN);
	if (p->mtu > dev_mtu) {
		if (!p->drv->own_mtu) {
			PORT_LOG(ERR, "%s: MTU %u above the device's %u",
				 p->name, p->mtu, dev_mtu);
			return -EINVAL;
		}
		PORT_LOG(INFO, "%s: MTU %u kept by dpdat (device says %u)",
			 p->name, p->mtu, dev_mtu);
	} else {
		conf.rxmode.mtu = p->mtu;
	}
	port_steer_isolate(p);
	ret = rte_eth_dev_configure(p->port_id, nq, nq, &conf);
	if (ret < 0)
		return ret;
	for (uint16_t q = 0; q < nq; q++) {
		ret = rte_eth_rx_queue_setup(p->port_id, q, PORT_RING_SIZE,
					     rte_eth_dev_socket_id(p->port_id),
					     NULL, q ? p->grp->pool[q] : p->pool);
		if (ret < 0)
			return ret;
		ret = rte_eth_tx_queue_setup(p->port_id, q, PORT_RING_SIZE,
					     rte_eth_dev_socket_id(p->port_id),
					     NULL);
		if (ret < 0)
			return ret;
	}
	ret = rte_eth_macaddr_get(p->port_id, &p->mac);
	if (ret < 0)
		return ret;
	ret = p->drv->start != NULL ? p->drv->start(p, device, wait_s) :
	      rte_eth_dev_start(p->port_id);
	if (ret < 0)
		return ret;
	return port_steer_rules(p);
}

/* The frame limit of the device with dpdat's pool (af_xdp receives into
 * the pool's own buffers after the XDP headroom). */
static uint32_t
port_dev_frame_max(const struct dpdat_port *p, const struct rte_eth_dev_info *di)
{
	uint32_t max = RTE_MIN((uint32_t)di->max_mtu + RTE_ETHER_HDR_LEN,
			       di->max_rx_pktlen - RTE_ETHER_CRC_LEN);

	if (p->drv->frame_max != 0)
		max = RTE_MIN(max, (uint32_t)p->drv->frame_max);
	return max;
}

/* Who owns the interface, our address and our MTU. On an interface the
 * kernel owns, the address is the interface's own unless one is named, and
 * the MTU is the interface's, within what the device carries. */
static int
port_identity(struct dpdat_port *p, const struct dpdat_port_conf *conf,
	      const char *devargs)
{
	bool autoip = conf->ipv4 == NULL || strcmp(conf->ipv4, "auto") == 0;
	struct rte_eth_dev_info di;
	uint16_t kmtu = 0;
	uint32_t dmax;
	int ret;

	ret = rte_eth_dev_info_get(p->port_id, &di);
	if (ret < 0)
		return ret;
	p->drv = port_drv_of(di.driver_name);
	ret = p->drv->ifname == NULL ? -ENOENT :
	      p->drv->ifname(devargs, di.device ?
			     rte_bus_name(rte_dev_bus(di.device)) : NULL,
			     p->ifname);
	p->kernel = ret == 0;
	if (ret == -EINVAL) {
		PORT_LOG(ERR, "%s: iface= missing", p->name);
		return ret;
	}
	if (!p->kernel) {
		if (autoip) {
			PORT_LOG(ERR, "%s: ipv4=auto needs an interface the "
				 "kernel owns (af_xdp, af_packet, a PCI NIC "
				 "with a netdev): name an address", p->name);
			return -EINVAL;
		}
		return 0;
	}
	p->ifindex = (int)if_nametoindex(p->ifname);
	if (p->ifindex == 0 || port_kern_mtu(p->ifname, &kmtu) < 0) {
		PORT_LOG(ERR, "%s: no interface %s in this network namespace",
			 p->name, p->ifname);
		return -ENODEV;
	}
	if (autoip && port_kern_ipv4(p->ifname, &p->ip) < 0) {
		PORT_LOG(ERR, "%s: %s has no IPv4 address (ip addr add ... "
			 "dev %s, or name one with ipv4=)", p->name,
			 p->ifname, p->ifname);
		return -EADDRNOTAVAIL;
	}
	dmax = port_dev_frame_max(p, &di) - RTE_ETHER_HDR_LEN;
	if (conf->mtu > kmtu || conf->mtu > dmax) {
		PORT_LOG(ERR, "%s: MTU %u above %s's %u (%s)", p->name,
			 conf->mtu, conf->mtu > kmtu ? p->ifname : di.driver_name,
			 conf->mtu > kmtu ? kmtu : dmax,
			 conf->mtu > kmtu ? "the kernel's: ip link set ... mtu" :
			 "the largest frame it carries, headers aside");
		return -EINVAL;
	}
	p->mtu = conf->mtu ? conf->mtu : (uint16_t)RTE_MIN((uint32_t)kmtu, dmax);
	if (p->mtu < 576) {
		PORT_LOG(ERR, "%s: MTU %u of %s too small for RoCEv2", p->name,
			 p->mtu, p->ifname);
		return -EINVAL;
	}
	if (conf->mtu == 0 && kmtu > dmax)
		PORT_LOG(NOTICE, "%s: MTU %u, below %s's %u: %s carries frames "
			 "of at most %u bytes", p->name, p->mtu, p->ifname, kmtu,
			 di.driver_name, dmax + RTE_ETHER_HDR_LEN);
	return 0;
}

/* DPDAT_ECN: the ECN codepoint of every frame but CNPs, as RoCE NICs mark
 * theirs: a path that marks CE rather than drop (RED or fq_codel with
 * ECN) tells the receiver, whose CNPs tell the sender. Not-ECT by default:
 * a sender claims ECT only if it slows down on the marks (RFC 3168), and
 * dpdat's does not yet. */
static int
port_ecn_apply(struct dpdat_port *p)
{
	const char *e = dpdat_env_str("DPDAT_ECN");

	if (e == NULL || strcmp(e, "off") == 0)
		p->tos = 0;
	else if (strcmp(e, "ect0") == 0)
		p->tos = ROCE_ECN_ECT0;
	else if (strcmp(e, "ect1") == 0)
		p->tos = ROCE_ECN_ECT1;
	else {
		PORT_LOG(ERR, "DPDAT_ECN=%s: ect0, ect1 or off", e);
		return -EINVAL;
	}
	return 0;
}

int
port_env_apply(struct dpdat_port *p)
{
	int ret;

	ret = port_ecn_apply(p);
	if (ret < 0)
		return ret;

	if (dpdat_env_str("DPDAT_FAULT") != NULL) {
		struct dpdat_fault_conf fc;

		ret = dpdat_fault_parse(dpdat_env_str("DPDAT_FAULT"), &fc);
		if (ret == 0)
			ret = dpdat_port_set_faults(p, &fc);
		if (ret < 0)
			return ret;
	}
	/* one file, one writer: queue 0's (the others' with
	 * dpdat_port_capture_start() and files of their own) */
	if (p->queue == 0 && dpdat_env_str("DPDAT_PCAP") != NULL &&
	    dpdat_port_capture_start(p, dpdat_env_str("DPDAT_PCAP")) != 0)
		PORT_LOG(WARNING, "%s: DPDAT_PCAP=%s: no capture", p->name,
			 dpdat_env_str("DPDAT_PCAP"));
	return 0;
}

/* A new port's fields before anything is probed: the address given, the
 * kind of link the device's name says (confirmed once probed), the MTU.
 * NULL with rte_errno on bad arguments or no memory. */
static struct dpdat_port *
port_alloc(const struct dpdat_port_conf *conf)
{
	struct in_addr a = { 0 };
	struct dpdat_port *p;

	if (conf == NULL || conf->device == NULL ||
	    (conf->ipv4 != NULL && strcmp(conf->ipv4, "auto") != 0 &&
	     inet_pton(AF_INET, conf->ipv4, &a) != 1) ||
	    (conf->mtu != 0 && conf->mtu < 576) ||
	    conf->queues > PORT_MAX_QUEUES) {
		rte_errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	p->ip = a.s_addr;
	p->drv = port_drv_of(conf->device);
	p->mtu = conf->mtu ? conf->mtu : p->drv->mtu ? p->drv->mtu : 1500;
	p->guard_fd = -1;
	p->xdp_lock = -1;
	p->tsc_hz = rte_get_tsc_hz();
	p->dev_rx = port_dev_rx;	/* or guarded: drv->configure */
	p->dev_tx = port_dev_tx;
	port_path_update(p);
	return p;
}

/* The port's mbuf pool and, for several queues, their group. */
static int
port_pools(struct dpdat_port *p, const struct dpdat_port_conf *conf)
{
	const unsigned int n = conf->n_mbufs ? conf->n_mbufs : 8191;
	char name[RTE_MEMPOOL_NAMESIZE];
	static uint32_t seq;
	uint16_t room;

	room = p->drv->data_room ? p->drv->data_room :
	       RTE_PKTMBUF_HEADROOM + PORT_MBUF_DATA;
	snprintf(name, sizeof(name), "dpdat_p%u_%u", p->port_id,
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	p->pool = rte_pktmbuf_pool_create(name, n, 256, 0, room,
					  rte_eth_dev_socket_id(p->port_id));
	if (p->pool == NULL)
		return -ENOMEM;
	if (conf->queues <= 1)
		return 0;
	/* RSS, af_xdp channels, af_packet fanout and the kernel's share of
	 * the traffic are not wired to queues yet */
	if (!p->drv->queues) {
		PORT_LOG(ERR, "%s: %u queues: only memif gives dpdat several "
			 "queues so far", p->name, conf->queues);
		return -ENOTSUP;
	}
	return port_group_create(p, conf->queues, n);
}

/* What port_bring_up() started, stopped. */
static void
port_stop(struct dpdat_port *p)
{
	port_kern_stop(p);
	rte_eth_dev_stop(p->port_id);
}

/* Configured and started, set up beside the kernel, the link up within
 * link_wait_s: 0, or the error said (the device stopped again if it had
 * started). */
static int
port_bring_up(struct dpdat_port *p, const struct dpdat_port_conf *conf,
	      const char *devargs)
{
	int ret;

	ret = port_configure(p, devargs, conf->link_wait_s);
	if (ret < 0) {
		PORT_LOG(ERR, "%s: configure: %s", p->name, rte_strerror(-ret));
		if (p->drv->fail_hint != NULL)
			PORT_LOG(ERR, "%s on %s: %s", p->name, p->ifname,
				 p->drv->fail_hint);
		return ret;
	}
	if (p->kernel)
		ret = port_kern_start(p);
	if (ret == 0 && conf->link_wait_s != 0) {
		ret = port_wait_link(p, (uint64_t)conf->link_wait_s * 1000);
		if (ret < 0)
			PORT_LOG(ERR, "%s: link down after %u s", p->name,
				 conf->link_wait_s);
	}
	if (ret < 0)
		port_stop(p);
	return ret;
}

static void
port_say_up(const struct dpdat_port *p)
{
	char addr[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &p->ip, addr, sizeof(addr));
	PORT_LOG(INFO, "%s: port %u up, " RTE_ETHER_ADDR_PRT_FMT " %s mtu %u%s%s",
		 p->name, p->port_id, RTE_ETHER_ADDR_BYTES(&p->mac), addr,
		 p->mtu, p->kernel ? ", beside the kernel on " : "",
		 p->kernel ? p->ifname : "");
}

struct dpdat_port *
dpdat_port_create(const struct dpdat_port_conf *conf)
{
	struct dpdat_port *p;
	char devargs[512];
	int ret;

	p = port_alloc(conf);
	if (p == NULL)
		return NULL;
	ret = port_devargs(conf->device, p->mtu, devargs, sizeof(devargs));
	if (ret == 0)
		ret = port_find_or_probe(p, devargs);
	if (ret < 0)
		goto err_free;
	rte_eth_dev_get_name_by_port(p->port_id, p->name);
	ret = port_identity(p, conf, devargs);
	if (ret == 0)
		ret = port_pools(p, conf);
	if (ret < 0)
		goto err_detach;
	ret = port_bring_up(p, conf, devargs);
	if (ret < 0)
		goto err_detach;
	p->magic = PORT_MAGIC;
	ret = port_env_apply(p);
	if (ret < 0) {
		p->magic = 0;
		port_stop(p);
		goto err_detach;
	}
	port_telemetry_add(p);
	port_say_up(p);
	return p;

err_detach:
	/* the device first: af_xdp's kernel socket writes into the pool */
	if (p->probed)
		port_detach(p->port_id);
	port_group_free(p->grp);
	rte_mempool_free(p->pool);
err_free:
	if (p->xdp_lock >= 0)
		close(p->xdp_lock);
	free(p);
	rte_errno = -ret;
	return NULL;
}

int
dpdat_port_free(struct dpdat_port *p)
{
	if (p == NULL || p->magic != PORT_MAGIC)
		return -EBADF;
	if (p->queue == 0 && port_queue_detach(p) != 0)
		return -EBUSY;
	port_telemetry_del(p);
	if (p->cap != NULL)
		dpdat_port_capture_stop(p);
	if (p->queue != 0) {		/* attached: the queue alone, */
		p->magic = 0;
		port_fault_release(p);
		port_queue_detach(p);	/* free for another once clean */
		free(p);
		return 0;
	}
	port_steer_remove(p);
	p->magic = 0;
	port_fault_release(p);
	port_kern_stop(p);
	/* a device we probed is stopped and closed on the EAL's interrupt
	 * thread (port_detach()): memif's stop disconnects, which raced its
	 * own interrupt handler taking the peer's hang-up when done here
	 * (the server of capture-cm-decode crashed in that handler about
	 * one run in fifteen) */
	if (p->probed)
		port_detach(p->port_id);
	else
		rte_eth_dev_stop(p->port_id);
	port_group_free(p->grp);
	rte_mempool_free(p->pool);
	if (p->xdp_lock >= 0)
		close(p->xdp_lock);	/* after the detach took the program */
	free(p);
	return 0;
}

int
dpdat_port_query(const struct dpdat_port *p, struct dpdat_port_info *info)
{
	struct rte_eth_link link;

	if (p == NULL || p->magic != PORT_MAGIC)
		return -EBADF;
	if (info == NULL)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->port_id = p->port_id;
	snprintf(info->name, sizeof(info->name), "%s", p->name);
	info->mac = p->mac;
	info->ipv4 = p->ip;
	info->mtu = p->mtu;
	if (rte_eth_link_get_nowait(p->port_id, &link) == 0) {
		info->link_up = link.link_status == RTE_ETH_LINK_UP;
		info->link_speed = link.link_speed;
	}
	return 0;
}

int
dpdat_port_stats(const struct dpdat_port *p, struct dpdat_port_stats *st)
{
	struct rte_eth_stats es;

	if (p == NULL || p->magic != PORT_MAGIC)
		return -EBADF;
	if (st == NULL)
		return -EINVAL;
	*st = p->st;
	if (rte_eth_stats_get(p->port_id, &es) == 0) {
		st->dev_imissed = es.imissed;
		st->dev_ierrors = es.ierrors;
		st->dev_oerrors = es.oerrors;
		st->dev_rx_nombuf = es.rx_nombuf;
	}
	return 0;
}

/* Is m an IPv4/UDP 4791 frame for us with consistent lengths? */
static bool
port_is_roce(struct dpdat_port *p, struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint16_t tot;

	if (rte_pktmbuf_data_len(m) < PORT_HDR_LEN + sizeof(struct roce_bth) ||
	    len < PORT_HDR_LEN + sizeof(struct roce_bth) + ROCE_ICRC_LEN) {
		p->st.drop_malformed++;
		return false;
	}
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
				     sizeof(struct rte_ether_hdr));
	udp = (const struct rte_udp_hdr *)(ip + 1);
	if (ip->dst_addr != p->ip || ip->next_proto_id != IPPROTO_UDP ||
	    udp->dst_port != rte_cpu_to_be_16(ROCE_UDP_PORT)) {
		p->st.drop_not_ours++;
		return false;
	}
	tot = rte_be_to_cpu_16(ip->total_length);
	/* no IP options, no fragments, lengths that agree with the frame */
	if (ip->version_ihl != RTE_IPV4_VHL_DEF ||
	    (rte_be_to_cpu_16(ip->fragment_offset) &
	     (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) ||
	    tot + sizeof(struct rte_ether_hdr) > len ||
	    rte_be_to_cpu_16(udp->dgram_len) != tot - sizeof(*ip)) {
		p->st.drop_malformed++;
		return false;
	}
	/* drop Ethernet padding beyond the IP datagram; a chain whose last
	 * segment is shorter than the padding is refused, not half-trimmed */
	if (tot + sizeof(struct rte_ether_hdr) < len &&
	    rte_pktmbuf_trim(m, len - tot - sizeof(struct rte_ether_hdr))) {
		p->st.drop_malformed++;
		return false;
	}
	return true;
}

bool
port_rx_one(struct dpdat_port *p, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;

	p->st.rx_pkts++;
	p->st.rx_bytes += rte_pktmbuf_pkt_len(m);
	if (rte_pktmbuf_data_len(m) < sizeof(*eth)) {
		p->st.drop_malformed++;
		rte_pktmbuf_free(m);
		return false;
	}
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		p->st.rx_arp++;
		if (unlikely(p->kernel))	/* af_packet's copy: the
						 * kernel answers */
			rte_pktmbuf_free(m);
		else
			port_arp_input(p, m);
		return false;
	}
	/* RoCEv2 is unicast to our MAC: broadcast is for ARP only */
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    !rte_is_same_ether_addr(&eth->dst_addr, &p->mac)) {
		p->st.drop_not_ours++;
		rte_pktmbuf_free(m);
		return false;
	}
	if (!port_is_roce(p, m)) {
		rte_pktmbuf_free(m);
		return false;
	}
	p->st.rx_roce++;
	if (unlikely(p->grp != NULL) && port_steer_other(p, m))
		return false;
	return true;
}

uint16_t
port_dev_rx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(p->port_id, p->queue, pkts, n);
}

uint16_t
port_dev_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	const uint64_t bytes = port_tx_bytes(pkts, n);
	uint16_t sent = rte_eth_tx_burst(p->port_id, p->queue, pkts, n);

	port_tx_count(p, pkts, n, sent, bytes);
	return sent;
}

void
port_path_update(struct dpdat_port *p)
{
	p->rx_burst = port_fault_on(&p->frx) ? port_fault_rx : p->dev_rx;
	if (port_fault_on(&p->ftx))
		p->tx_burst = port_fault_tx;	/* it captures, if asked */
	else if (p->cap != NULL)
		p->tx_burst = port_capture_tx;
	else
		p->tx_burst = p->dev_tx;
}

void
port_rx_cb_remove(struct dpdat_port *p, const struct rte_eth_rxtx_callback **cb)
{
	if (*cb == NULL)
		return;
	/* DPDK unlinks it and leaves the memory to us, for when no burst
	 * can be reading it: now */
	if (rte_eth_remove_rx_callback(p->port_id, p->queue, *cb) == 0)
		rte_free((void *)(uintptr_t)*cb);
	*cb = NULL;
}

/* With faults and capture off, rx_burst is the device's burst and the
 * queue has no callback: this is the burst and the classification. */
uint16_t
port_rx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, end, out = 0;

	n = RTE_MIN(n, PORT_BURST);
	if (unlikely(p->grp != NULL)) {
		/* what other queues received for this one's QPs comes
		 * first, classified already, but never more than half a
		 * burst: the device's own ring is read every time */
		out = port_steer_in(p, pkts, n / 2);
	}
	end = out + p->rx_burst(p, pkts + out, n - out);
	for (i = out; i < end; i++)
		if (port_rx_one(p, pkts[i]))
			pkts[out++] = pkts[i];
	return out;
}

uint16_t
port_tx_some(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return p->tx_burst(p, pkts, n);
}

uint16_t
dpdat_port_rx_burst(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	if (p == NULL || p->magic != PORT_MAGIC || pkts == NULL)
		return 0;
	return port_rx(p, pkts, n);
}

uint16_t
dpdat_port_tx_burst(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	if (p == NULL || p->magic != PORT_MAGIC || pkts == NULL)
		return 0;
	return port_tx_some(p, pkts, n);
}

uint16_t
port_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = port_tx_some(p, pkts, n);

	if (sent < n) {
		p->st.drop_tx_full += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
	return sent;
}

int
port_frame(struct dpdat_port *p, struct rte_mbuf *m, uint32_t dst_ip,
	   const struct rte_ether_addr *dst_mac, uint16_t src_port)
{
	return port_frame_tos(p, m, dst_ip, dst_mac, src_port, p->tos);
}

int
port_frame_tos(struct dpdat_port *p, struct rte_mbuf *m, uint32_t dst_ip,
	       const struct rte_ether_addr *dst_mac, uint16_t src_port,
	       uint8_t tos)
{
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint32_t l4 = rte_pktmbuf_pkt_len(m) + ROCE_ICRC_LEN;
	uint32_t icrc;
	uint8_t *tail;

	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, PORT_HDR_LEN);
	if (eth == NULL)
		return -ENOSPC;
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	udp = (struct rte_udp_hdr *)(ip + 1);
	eth->dst_addr = *dst_mac;
	eth->src_addr = p->mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = tos;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + sizeof(*udp) + l4);
	ip->packet_id = rte_cpu_to_be_16(p->ip_id++);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = p->ip;
	ip->dst_addr = dst_ip;
	udp->src_port = rte_cpu_to_be_16(src_port);
	udp->dst_port = rte_cpu_to_be_16(ROCE_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16(sizeof(*udp) + l4);
	udp->dgram_cksum = 0;	/* RoCEv2 leaves the UDP checksum zero */
	m->l2_len = sizeof(*eth);
	m->l3_len = sizeof(*ip);
	if (p->tx_offloads & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM)
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	else
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	tail = (uint8_t *)rte_pktmbuf_append(m, ROCE_ICRC_LEN);
	if (tail == NULL) {
		rte_pktmbuf_adj(m, PORT_HDR_LEN);
		return -ENOSPC;
	}
	/* the ICRC masks the IP checksum, so its order does not matter */
	icrc = roce_icrc_mbuf(m, sizeof(*eth));
	tail[0] = icrc;
	tail[1] = icrc >> 8;
	tail[2] = icrc >> 16;
	tail[3] = icrc >> 24;
	return 0;
}
