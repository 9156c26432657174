/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_PORT_H
#define DPDAT_PORT_H

/**
 * @file
 * dpdat ports: a DPDK Ethernet device with an IPv4 address on which dpdat
 * speaks RoCEv2 (UDP 4791) and answers ARP. Default device: one end of a
 * memif link ("net_memif0,role=server,socket=..."); also net_ring, af_xdp,
 * af_packet, tap, or a PCI device named by the EAL allow-list.
 */

#include <stdint.h>

#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dpdat_port;

/** Configuration of dpdat_port_create(). */
struct dpdat_port_conf {
	/** Device arguments for rte_dev_probe(), e.g.
	 *  "net_memif0,role=client,socket=/tmp/dpdat.sock", or the name of a
	 *  port the EAL already probed (a PCI address). Required. "%l" is the
	 *  process's local rank (DPDAT_LOCAL_RANK, else the MPI launcher's),
	 *  "%%" a '%'; any other '%' is refused. */
	const char *device;
	/** Own IPv4 address, dotted quad. Required. */
	const char *ipv4;
	/** MTU; 0 means 4200 on memif (PMTU 4096), 1500 on other ports of
	 *  dpdat's own, the interface's beside the kernel. PMTU of RC queue pairs is at most the largest
	 *  of 256..4096 that fits in it with the RoCEv2 headers. */
	uint16_t mtu;
	/** mbufs in the port's pool; 0 means 8191. */
	unsigned int n_mbufs;
	/** Seconds to wait for the link to come up (and, for a memif client, for
	 *  its server to accept); 0 means do not wait. */
	unsigned int link_wait_s;
	/** Queues of the device, one per engine (dpdat_port_attach() gives
	 *  queues 1 and up); 0 means 1, at most 16. memif only for now: each
	 *  side's queue i meets the other's queue i. */
	unsigned int queues;
};

/** Port attributes (dpdat_port_query()). */
struct dpdat_port_info {
	uint16_t port_id;		/**< DPDK port id */
	char name[64];			/**< DPDK device name */
	struct rte_ether_addr mac;
	uint32_t ipv4;			/**< network byte order */
	uint16_t mtu;
	int link_up;
	uint32_t link_speed;		/**< Mb/s as DPDK reports it */
};

/** Per-port counters (dpdat_port_stats()). */
struct dpdat_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	uint64_t rx_roce;		/**< RoCEv2 packets handed to the engine */
	uint64_t rx_arp, tx_arp;
	uint64_t drop_not_ours;		/**< wrong MAC, IP, protocol or port */
	uint64_t drop_malformed;	/**< truncated or inconsistent headers */
	uint64_t drop_tx_full;		/**< the device refused a transmit */
	uint64_t drop_icrc;		/**< RoCEv2 frame with a wrong ICRC */
	uint64_t drop_bad_hdr;		/**< BTH, opcode or lengths invalid */
	uint64_t drop_no_qp;		/**< no QP ready for this QP number */
	uint64_t drop_not_peer;		/**< sent by another host than the QP's peer */
	/** Faults injected (dpdat_port_set_faults()), both directions. */
	uint64_t fault_drop, fault_dup, fault_reorder, fault_corrupt;
	uint64_t fault_ce;		/**< IPv4 frames marked CE (ECN) */
	uint64_t captured;		/**< frames written to the capture */
	uint64_t capture_lost;		/**< frames the capture could not copy */
	/** memif bursts cut short: the peer's memory went away under them */
	uint64_t peer_unmapped;
	/** The device's own counts (rte_eth_stats): frames it dropped on
	 *  receive for want of room (af_packet's and af_xdp's socket rings
	 *  full, a NIC's queue), receive errors, transmit errors, receive
	 *  mbuf allocation failures. Losses dpdat never sees. */
	uint64_t dev_imissed, dev_ierrors, dev_oerrors, dev_rx_nombuf;
	/** Several queues (dpdat_port_attach()): RoCEv2 frames that arrived
	 *  here for a QP of another queue, handed to it; and those dropped
	 *  because its steering ring was full. */
	uint64_t rx_steered, drop_steer_full;
};

/** One entry of the ARP neighbour table (dpdat_port_neighbours()). */
struct dpdat_neigh {
	uint32_t ipv4;			/**< network byte order */
	struct rte_ether_addr mac;	/**< valid when state is "reachable" */
	const char *state;		/**< "incomplete", "reachable", "failed" */
	uint32_t age_ms;		/**< since the last answer or request */
};

/** Fault rates for one direction, each a probability in [0, 1]. */
struct dpdat_fault_rates {
	double drop;		/**< the frame vanishes */
	double dup;		/**< the frame arrives twice */
	double reorder;		/**< the frame swaps places with the next one */
	double corrupt;		/**< one byte after the Ethernet header flips */
	/** An IPv4 frame's ECN field becomes CE (congestion experienced),
	 *  as a marking queue on the path would make it. */
	double ce;
};

/** Fault injection on a port: reproducible with the same seed. */
struct dpdat_fault_conf {
	struct dpdat_fault_rates rx;
	struct dpdat_fault_rates tx;
	uint64_t seed;		/**< 0 picks 1 */
	/** Faults touch only the first this many frames of each direction
	 *  of each queue, the rest pass untouched; 0: every frame (loss at
	 *  a program's start only: it recovers, then finishes). */
	uint64_t frames;
};

/**
 * Bring up a port: probe the device (unless already present), configure one
 * receive and one transmit queue (queues of each), create its mbuf pool (in hugepages when
 * the EAL has them), start it and optionally wait for the link.
 *
 * @return The port, or NULL with rte_errno: EINVAL (missing or bad device
 *   string or address), ENODEV (device could not be probed), ENOENT (the
 *   device names %l and no local rank is known; af_xdp without dpdat's
 *   XDP program), EADDRINUSE (af_packet: another process's port holds the
 *   fanout group id DPDK gives this one), EBUSY (af_xdp: another dpdat
 *   process's port on the interface), ENOMEM, ETIMEDOUT (link did not come
 *   up within link_wait_s), ECONNREFUSED (a memif client whose server did
 *   not accept within link_wait_s), or the device's own error.
 */
struct dpdat_port *
dpdat_port_create(const struct dpdat_port_conf *conf);

/**
 * A port on the next free queue of the device that first brought up (made
 * with dpdat_port_conf.queues > 1): the same link, address and MTU, its
 * own pool, counters, faults and neighbour table, for another engine. A
 * RoCEv2 frame that arrives on one queue for a QP of another is handed to
 * that queue (QP numbers carry their queue).
 *
 * @return The port, or NULL with rte_errno EBADF (first is no port, or
 *   not a device's queue 0), ENOSPC (every queue is taken), ENOMEM.
 */
struct dpdat_port *
dpdat_port_attach(struct dpdat_port *first);

/** The device queue a port uses (0 unless it came from
 *  dpdat_port_attach()); -EBADF. */
int
dpdat_port_queue(const struct dpdat_port *port);

/**
 * Stop and close a port, releasing the device it probed. A port made by
 * dpdat_port_attach() lets go of its queue only; the device's queue 0 goes
 * last.
 *
 * @return 0, -EBADF (not a port), -EBUSY (queue 0 while other queues of
 *   its device are attached).
 */
int
dpdat_port_free(struct dpdat_port *port);

/** @return 0, -EBADF, -EINVAL (info NULL). */
int
dpdat_port_query(const struct dpdat_port *port, struct dpdat_port_info *info);

/** @return 0, -EBADF, -EINVAL (stats NULL). */
int
dpdat_port_stats(const struct dpdat_port *port, struct dpdat_port_stats *stats);

/**
 * Inject faults into a port's RoCEv2 and ARP traffic. Takes effect at the
 * next burst; call from the thread that runs the port's engine, or before it
 * starts. The environment variable DPDAT_FAULT sets the same at port creation:
 * "rx:drop=0.01,dup=0.01,reorder=0.01,corrupt=0.01;tx:drop=0.05;seed=42".
 * While receive faults are on, the port asks the device for at most 15
 * frames a burst, so that each may be duplicated in the engine's 32. Off,
 * injection costs the bursts nothing.
 *
 * @param conf
 *   Rates and seed; NULL turns injection off.
 * @return 0, -EBADF, -EINVAL (a rate outside [0, 1]).
 */
int
dpdat_port_set_faults(struct dpdat_port *port,
		      const struct dpdat_fault_conf *conf);

/**
 * Capture every frame the port sends and receives into a pcapng file
 * (readable by Wireshark and tshark), until dpdat_port_capture_stop().
 * Received frames are recorded as they arrive, before fault injection;
 * sent frames as the device takes them, after it. The environment variable
 * DPDAT_PCAP=<path> starts a capture at port creation; "%p" in the path
 * becomes the process id (one file per process). Stopped, it costs the
 * bursts nothing.
 *
 * @return 0, -EBADF, -EINVAL (path NULL), -EBUSY (already capturing),
 *   -errno of open(), -ENOMEM, -ENOTSUP (DPDK could not install the
 *   receive callback).
 */
int
dpdat_port_capture_start(struct dpdat_port *port, const char *path);

/**
 * Stop a capture and close its file.
 *
 * @return 0, -EBADF, -ENOENT (not capturing).
 */
int
dpdat_port_capture_stop(struct dpdat_port *port);

/**
 * Copy the port's ARP neighbour table. Call from the thread that runs the
 * port's engine (or with it stopped); dpdat_dev_neighbours() does it safely
 * while the engine thread runs.
 *
 * @param out
 *   Array of at least max entries.
 * @return The number of entries copied (at most max), -EBADF, -EINVAL.
 */
int
dpdat_port_neighbours(const struct dpdat_port *port, struct dpdat_neigh *out,
		      unsigned int max);

struct rte_mbuf;

/**
 * Receive RoCEv2 frames for this port's address directly, as the engine
 * does: ARP is answered and learnt on the way, other frames are dropped and
 * counted; faults and capture apply. For tools and baselines (dpdat-perf
 * --transport=raw): only while no engine runs the port, that is on a
 * device in inline progress that nobody polls meanwhile.
 *
 * @param n
 *   Frames at most (at most 32 are taken).
 * @return Frames received, with their Ethernet, IPv4 and UDP headers; 0
 *   also for a NULL or bad port.
 */
uint16_t
dpdat_port_rx_burst(struct dpdat_port *port, struct rte_mbuf **pkts,
		    uint16_t n);

/**
 * Send whole frames (Ethernet header first) on the port, as the engine
 * does; the same conditions as dpdat_port_rx_burst().
 *
 * @return Frames the device took (it frees them); the rest stay the
 *   caller's. 0 also for a NULL or bad port.
 */
uint16_t
dpdat_port_tx_burst(struct dpdat_port *port, struct rte_mbuf **pkts,
		    uint16_t n);

/**
 * Parse a fault specification in the DPDAT_FAULT syntax.
 *
 * @return 0, -EINVAL (with the offending part logged).
 */
int
dpdat_fault_parse(const char *spec, struct dpdat_fault_conf *conf);

#ifdef __cplusplus
}
#endif

#endif /* DPDAT_PORT_H */
