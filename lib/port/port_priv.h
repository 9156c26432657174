/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_PORT_PRIV_H
#define DPDAT_PORT_PRIV_H

/*
 * Internal view of a port for the engine. The data-path calls (port_rx,
 * port_tx, port_frame, port_resolve, port_timer) are made by the one thread
 * that owns the port: no locks.
 *
 * Optional work stays off the bursts until it is turned on (DPDK's pdump
 * pattern): the receive capture is a DPDK receive callback of the port's
 * queue; fault injection and the transmit capture replace the port's
 * receive or transmit path (rx_burst, tx_burst), each installed when it is
 * turned on and removed when it goes off, by the thread that owns the port
 * (or with its engine held). memif's bursts run guarded (guard.c): the
 * device burst functions are chosen once, when the port is configured.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <dpdat/dpdat_port.h>

extern int dpdat_port_logtype;
#define PORT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpdat_port_logtype, "dpdat_port: " fmt "\n", \
		##__VA_ARGS__)

#define PORT_MAGIC	0x504f5254u
#define PORT_BURST	32
#define PORT_NEIGH_SIZE	256		/* power of two */
#define PORT_ARP_RETRY_MS 200
#define PORT_ARP_TRIES	5
#define PORT_NEIGH_TTL_S 300
#define PORT_NEIGH_FAILED_MS 1000	/* a failure is remembered this long */
/* Queues of one device (queues.c): one engine each. A QP number carries
 * its queue above this bit, so any queue that receives a frame knows
 * whose it is. */
#define PORT_MAX_QUEUES	16
#define PORT_QPN_QUEUE_SHIFT 20
#define PORT_STEER_RING	1024

/* Offset of the BTH in a frame dpdat builds or accepts. */
#define PORT_HDR_LEN (sizeof(struct rte_ether_hdr) + \
		      sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))

enum neigh_state {
	NEIGH_FREE = 0,
	NEIGH_INCOMPLETE,	/* request sent, no answer yet */
	NEIGH_REACHABLE,
	NEIGH_FAILED,		/* no answer after PORT_ARP_TRIES */
};

struct port_neigh {
	uint32_t ip;		/* network order */
	uint8_t state;
	uint8_t tries;
	struct rte_ether_addr mac;
	uint64_t tsc;		/* last update or request */
};

/* Fault injection state of one direction. */
struct port_fault {
	uint32_t drop, dup, reorder, corrupt, ce;	/* thresholds of 2^32 */
	uint64_t frames, seen;		/* faults in the first frames (0: all) */
	struct rte_mbuf *held;		/* waiting to be reordered */
};

struct dpdat_port;
struct rte_eth_rxtx_callback;

/* The queues of one device (queues.c). Queue 0's port brought the device
 * up and goes last; the others attach to it. A frame for another queue's
 * QP goes to that queue's steering ring (several producers, one consumer:
 * its engine). Rings and pools live as long as the group. */
struct port_group {
	uint16_t nq;
	struct dpdat_port *q[PORT_MAX_QUEUES];	/* NULL: not attached */
	struct rte_ring *steer[PORT_MAX_QUEUES];
	struct rte_mempool *pool[PORT_MAX_QUEUES];
};

/* drv.c: what dpdat does differently on each kind of link, one entry per
 * DPDK driver it knows, chosen as the port is created (p->drv: by the
 * device's name, then by DPDK's driver name once probed): the rest of
 * lib/port asks the entry and never names a driver (DPDK's own answer is
 * eth_dev_ops). Every member may be 0 or NULL: the default. */
struct dpdat_port;
struct port_drv {
	const char *name;	/* DPDK's driver name, and the prefix of the
				 * device names that pick the entry before
				 * the probe; NULL: any other device */
	uint16_t mtu;		/* the MTU when the application names none
				 * and no kernel interface has one (1500) */
	uint16_t data_room;	/* the pool's mbuf data room */
	uint16_t frame_max;	/* the longest frame its buffers hold, below
				 * what the device advertises */
	uint16_t tx_held;	/* sent mbufs the device may hold until
				 * later bursts (a pool's count lags) */
	bool own_mtu;		/* the device's advertised MTU does not bind
				 * dpdat (memif carries any frame) */
	bool queues;		/* several dpdat queues on one device */
	bool tx_copies;		/* it copies every frame it sends anyway:
				 * zero-copy transmit only adds work */
	/* the device arguments dpdat probes for the user's (into out) */
	int (*devargs)(const char *device, uint16_t mtu, char *out,
		       size_t len);
	/* before the probe of device (stale state, locks, collisions) */
	int (*pre_probe)(struct dpdat_port *p, const char *device);
	/* after a probe that failed with ret: the error to give (said), or
	 * 0 for -ENODEV and the generic message */
	int (*probe_failed)(const char *device, int ret);
	/* the kernel interface the device sits on: 0, -ENOENT when none,
	 * -EINVAL when the arguments lack it */
	int (*ifname)(const char *device, const char *bus, char *ifname);
	/* before rte_eth_dev_configure */
	void (*configure)(struct dpdat_port *p);
	/* rte_eth_dev_start, or the driver's own way to start */
	int (*start)(struct dpdat_port *p, const char *device,
		     unsigned int wait_s);
	/* beside the kernel, once started (XDP program, UDP port guard) */
	int (*kern_start)(struct dpdat_port *p);
	/* each time the link comes up (port_timer) */
	void (*link_up)(struct dpdat_port *p);
	/* said when the device cannot be configured */
	const char *fail_hint;
};

extern const struct port_drv port_drv_memif;		/* memif.c */
extern const struct port_drv port_drv_af_xdp;		/* kern.c */
extern const struct port_drv port_drv_af_packet;	/* kern.c */
/* The entry of a device name ("net_memif0,...") or a DPDK driver name
 * ("net_memif"): never NULL (drv.c's for any other device). */
const struct port_drv *port_drv_of(const char *name);

/* A burst of the port: the device's (plain or guarded), or a transmit path
 * with optional work. Returns the number of frames taken. */
typedef uint16_t (*port_burst_t)(struct dpdat_port *p, struct rte_mbuf **pkts,
				 uint16_t n);

struct dpdat_port {
	uint32_t magic;
	uint16_t port_id;
	uint16_t queue;		/* the device's queue this port uses */
	struct port_group *grp;	/* NULL: the device's only queue */
	bool probed;		/* we probed the device: we detach it */
	char name[64];
	struct rte_ether_addr mac;
	uint32_t ip;		/* network order */
	uint16_t mtu;
	uint16_t ip_id;
	uint8_t tos;		/* every frame's: the ECN codepoint (DPDAT_ECN) */
	uint64_t tx_offloads;
	struct rte_mempool *pool;
	uint64_t tsc_hz;
	struct dpdat_port_stats st;
	/* the device's bursts: port_dev_rx/tx, or memif's guarded ones */
	port_burst_t dev_rx, dev_tx;
	/* what port_rx() calls: dev_rx, or port_fault_rx while receive
	 * faults are on */
	port_burst_t rx_burst;
	/* what port_tx_some() calls: dev_tx, or while transmit faults or
	 * the capture are on, port_fault_tx or port_capture_tx */
	port_burst_t tx_burst;
	/* the capture's receive callback of the queue, NULL while off */
	const struct rte_eth_rxtx_callback *cap_rx_cb;
	uint64_t rng;
	struct port_fault frx, ftx;
	/* receive duplicates not made: the caller's array had no room */
	uint64_t fault_dup_lost;
	struct port_capture *cap;	/* NULL unless capturing */
	bool isolated;		/* rte_flow isolated mode */
	const struct port_drv *drv;	/* the link kind's quirks (drv.c) */
	bool link_up;		/* as port_timer() last saw it */
	struct rte_flow *flows[2];	/* RoCEv2 and ARP steering */
	/* kern.c: the kernel owns the interface, its address and ARP */
	bool kernel;
	char ifname[16];		/* IF_NAMESIZE */
	int ifindex;
	struct mnl_socket *nl;		/* rtnetlink, for neighbours */
	uint32_t nl_seq;
	int guard_fd;			/* af_packet: UDP 4791 held, or -1 */
	int xdp_lock;			/* af_xdp: the interface's lock, or -1 */
	struct port_neigh neigh[PORT_NEIGH_SIZE];
};

/* Receive a burst of up to n (at most PORT_BURST) frames into pkts; ARP
 * is answered and learnt here, frames that are not RoCEv2 for us are
 * dropped. RoCE frames are returned with the Ethernet, IPv4 and UDP
 * headers still in place (the BTH at PORT_HDR_LEN). */
uint16_t port_rx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n);

/* The classification of port_rx for one frame: true when m is a RoCEv2
 * frame for the engine, false when it was consumed (ARP) or dropped. */
bool port_rx_one(struct dpdat_port *p, struct rte_mbuf *m);

/* queues.c. Before configure: the group of conf->queues (> 1) queues,
 * with a pool and a steering ring each (queue 0's pool is p->pool). */
int port_group_create(struct dpdat_port *p, unsigned int nq,
		      unsigned int n_mbufs);
/* After the last queue went: the rings (and what they hold), the pools. */
void port_group_free(struct port_group *g);
/* DPDAT_FAULT and DPDAT_PCAP, on a port just made; -errno. */
int port_env_apply(struct dpdat_port *p);
/* Before a port of a group goes: its queue is free again; -EBUSY for a
 * queue 0 whose device still has other queues attached. */
int port_queue_detach(struct dpdat_port *p);
/* m (a RoCEv2 frame, classified) is for another queue's QP: hand it over
 * (true: m is no longer the caller's). */
bool port_steer_other(struct dpdat_port *p, struct rte_mbuf *m);
/* Frames other queues handed to this one, up to n. */
static inline uint16_t
port_steer_in(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	return (uint16_t)rte_ring_sc_dequeue_burst(p->grp->steer[p->queue],
						   (void **)pkts, n, NULL);
}

/* Transmit; frames the device refuses are freed and counted. Returns the
 * number sent. */
uint16_t port_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n);

/* Transmit what the device takes now; the rest stays with the caller. */
uint16_t port_tx_some(struct dpdat_port *p, struct rte_mbuf **pkts,
		      uint16_t n);

/* Put Ethernet, IPv4 and UDP headers in front of m (whose data starts with
 * the BTH and already ends with room for nothing else), then append the
 * ICRC. -ENOSPC when the mbuf has no headroom or tailroom. */
int port_frame(struct dpdat_port *p, struct rte_mbuf *m, uint32_t dst_ip,
	       const struct rte_ether_addr *dst_mac, uint16_t src_port);
/* The same with the IP header's TOS byte given (port_frame: the port's,
 * DPDAT_ECN; a CNP goes Not-ECT). */
int port_frame_tos(struct dpdat_port *p, struct rte_mbuf *m, uint32_t dst_ip,
		   const struct rte_ether_addr *dst_mac, uint16_t src_port,
		   uint8_t tos);

/* MAC of ip: 0; -EAGAIN while asking (a request went out); -EHOSTUNREACH
 * after PORT_ARP_TRIES unanswered requests. */
int port_resolve(struct dpdat_port *p, uint32_t ip, struct rte_ether_addr *mac);

/* Now and then (the engine, about every millisecond): the link watched
 * (the driver's link_up work), neighbour retries and expiry. */
void port_timer(struct dpdat_port *p);

/* The device's bursts, unguarded; transmit counts what the device took. */
uint16_t port_dev_rx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n);
uint16_t port_dev_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n);

/* Choose rx_burst and tx_burst for what is on now (faults, capture):
 * after either is turned on or off, or the device bursts change. */
void port_path_update(struct dpdat_port *p);

/* Remove a receive callback of the port's queue and free it (no burst can
 * be running: the caller owns the port); *cb becomes NULL. */
void port_rx_cb_remove(struct dpdat_port *p,
		       const struct rte_eth_rxtx_callback **cb);

/* The bytes of n frames: counted before a transmit burst (the device may
 * free what it takes at once). */
static inline uint64_t
port_tx_bytes(struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t bytes = 0;
	uint16_t k;

	for (k = 0; k < n; k++)
		bytes += rte_pktmbuf_pkt_len(pkts[k]);
	return bytes;
}

/* Count a transmit burst of n frames (bytes of them all) that sent the
 * first sent. */
static inline void
port_tx_count(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n,
	      uint16_t sent, uint64_t bytes)
{
	uint16_t k;

	for (k = sent; k < n; k++)
		bytes -= rte_pktmbuf_pkt_len(pkts[k]);
	p->st.tx_bytes += bytes;
	p->st.tx_pkts += sent;
}

/* fault.c: any fault of one direction on */
static inline bool
port_fault_on(const struct port_fault *f)
{
	return (f->drop | f->dup | f->reorder | f->corrupt | f->ce) != 0;
}

/* Receive through the receive faults (the port's receive path while they
 * are on): the device is asked for fewer frames, so that each may be
 * duplicated within the caller's n. */
uint16_t port_fault_rx(struct dpdat_port *p, struct rte_mbuf **pkts,
		       uint16_t n);
/* Transmit through the transmit faults (the port's transmit path while
 * they are on): every frame counts as taken, as on a wire; what the
 * device then refuses is dropped (drop_tx_full). */
uint16_t port_fault_tx(struct dpdat_port *p, struct rte_mbuf **pkts,
		       uint16_t n);
/* Turn the faults off: the paths restored, held frames freed. */
void port_fault_release(struct dpdat_port *p);

/* capture.c: the device's transmit burst, with copies of what it took
 * written to the capture when one runs (the transmit path while it does,
 * and the device burst of port_fault_tx). */
struct port_capture;
uint16_t port_capture_tx(struct dpdat_port *p, struct rte_mbuf **pkts,
			 uint16_t n);

/* guard.c: memif's device bursts (port_guard_enable() installs them),
 * which survive the driver unmapping the peer's memory under them: the
 * burst then ends early and counts in peer_unmapped (a transmit burst so
 * cut took every frame and sent none). */
void port_guard_enable(struct dpdat_port *p);
uint16_t port_guarded_rx(struct dpdat_port *p, struct rte_mbuf **pkts,
			 uint16_t n);
uint16_t port_guarded_tx(struct dpdat_port *p, struct rte_mbuf **pkts,
			 uint16_t n);

/* memif.c: fault in the shared memory of the process's memif links (at
 * each link up: the driver maps it afresh at every connection) */
void port_memif_prefault(struct dpdat_port *p);

/* steer.c: rte_flow isolation (before configure) and rules (after start) */
void port_steer_isolate(struct dpdat_port *p);
int port_steer_rules(struct dpdat_port *p);
void port_steer_remove(struct dpdat_port *p);

/* telemetry.c: the ports the telemetry commands can see */
void port_telemetry_add(struct dpdat_port *p);
void port_telemetry_del(struct dpdat_port *p);

/* The device arguments dpdat probes for the user's device (memif: buffers
 * that hold an mtu frame; af_xdp: dpdat's XDP program, no busy polling),
 * into out: 0, -EINVAL when they do not fit, -ENOENT without the program. */
int port_devargs(const char *device, uint16_t mtu, char *out, size_t len);

/* The value of key= in device arguments ("name,key=value,..."), copied to
 * out, or NULL (absent, or longer than len - 1). */
const char *port_devarg(const char *device, const char *key, char *out,
			size_t len);

/* rank.c: device with "%l" replaced by the local rank (DPDAT_LOCAL_RANK,
 * or the MPI launcher's), "%%" by "%"; -ENOENT when %l is there and no
 * rank is known, -EINVAL on a bad rank, another '%' or no room (logged) */
int port_devargs_expand(const char *device, char *out, size_t len);

/* Poll the link every 10 ms for up to ms milliseconds: 0 or -ETIMEDOUT. */
int port_wait_link(struct dpdat_port *p, uint64_t ms);

/* kern.c: ports on an interface the kernel owns (af_xdp, af_packet, a PCI
 * NIC with a kernel netdev); the address and MTU helpers take its name.
 * port_kern_pci_ifname: a PCI device's interface, from sysfs (a NIC the
 * kernel drives beside DPDK, as mlx5 does), -ENOENT when it has none.
 * port_kern_start: the driver's kern_start, after rtnetlink is open. */
int port_kern_pci_ifname(const char *pci, char *ifname);
int port_kern_ipv4(const char *ifname, uint32_t *ip);
int port_kern_mtu(const char *ifname, uint16_t *mtu);
int port_kern_start(struct dpdat_port *p);
void port_kern_stop(struct dpdat_port *p);
/* port_resolve() on such a port: the kernel's neighbour table */
int port_kern_resolve(struct dpdat_port *p, uint32_t ip,
		      struct rte_ether_addr *mac);

/* arp.c */
void port_arp_input(struct dpdat_port *p, struct rte_mbuf *m);
struct port_neigh *port_neigh_find(struct dpdat_port *p, uint32_t ip,
				   bool create);
int port_arp_request(struct dpdat_port *p, uint32_t ip);

#endif /* DPDAT_PORT_PRIV_H */
