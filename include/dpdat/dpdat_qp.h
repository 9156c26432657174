/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_QP_H
#define DPDAT_QP_H

/**
 * @file
 * dpdat devices, completion queues and reliable-connected queue pairs: the
 * RoCEv2 RC engine. A device is a port plus its registration domain plus one
 * progress engine. Work requests are posted from any thread through
 * lock-free rings; the engine (a dedicated thread, or the consumer's own poll
 * calls in inline mode) moves them as RoCEv2 packets and reports completions.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <dpdat/dpdat_mr.h>
#include <dpdat/dpdat_port.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dpdat_dev;
struct dpdat_cq;
struct dpdat_qp;
struct dpdat_srq;

/** Who runs the engine. */
enum dpdat_progress {
	/** A dedicated thread polls the port (default when a core is free). */
	DPDAT_PROGRESS_THREAD = 0,
	/** dpdat_cq_poll(), dpdat_cq_wait() and dpdat_dev_progress() run it. */
	DPDAT_PROGRESS_INLINE,
	/** Both: an engine thread, and dpdat_cq_poll() and
	 *  dpdat_dev_progress() run the engine too. While a consumer polls
	 *  busily (16 polls in 20 us or more) the thread sleeps, 50 us at a
	 *  time, leaving the core to the poller, which then sees its
	 *  completions without a hand-over between threads; when busy
	 *  polling stops (the consumer sleeps in dpdat_cq_wait() or on a
	 *  CQ's fd, polls once per wake-up, or works elsewhere) the thread
	 *  takes over within one such nap. For consumers that may do either, on machines with
	 *  fewer cores than busy threads: a polling consumer and a polling
	 *  engine thread would otherwise share one core by the scheduler's
	 *  time slices. Zero-copy READ responses stay off. */
	DPDAT_PROGRESS_HYBRID,
};

/** dpdat_dev_conf.ack_hold_ns: ACKs never wait for a request to ride on. */
#define DPDAT_ACK_HOLD_OFF	UINT32_MAX

/** Configuration of dpdat_dev_open(). */
struct dpdat_dev_conf {
	struct dpdat_port_conf port;
	struct dpdat_mr_domain_conf mr;
	enum dpdat_progress progress;
	/** Largest number of QPs; 0 means 1024. */
	uint32_t max_qps;
	/** Pin the engine thread (DPDAT_PROGRESS_THREAD) to CPU cpu, which
	 *  must be one the process may run on. Unpinned by default. In inline
	 *  mode dpdat pins nothing: the log advises pinning the polling
	 *  thread to cpu. */
	bool pin_cpu;
	unsigned int cpu;
	/** Never offer or accept selective repeat (DPDAT_QP_EXT_SACK) nor
	 *  ACKs riding on requests (DPDAT_QP_EXT_ACK_RIDE): every QP speaks
	 *  go-back-N with separate ACKs, as with a peer that is not dpdat. */
	bool go_back_n;
	/** Another engine on the same link: NULL, or an open device whose
	 *  port was made with several queues (port.queues > 1). This device
	 *  then takes the next free queue of that port (port is ignored) and
	 *  shares that device's registration domain (mr is ignored), so PZs
	 *  and LMRs serve the QPs of both; its QPs, CQs, SRQs, CM and engine
	 *  are its own. share closes last. */
	struct dpdat_dev *share;
	/** How long, in nanoseconds, an ACK that may ride on a request
	 *  (DPDAT_QP_EXT_ACK_RIDE) waits for one before it leaves on its own,
	 *  on a QP whose consumer answers requests: one that sent a request
	 *  within 8 holds of the last ACK it owed, and has not let a held
	 *  ACK wait the hold out since. Other QPs' ACKs leave in the engine
	 *  pass that owes them. At most 100000. 0 (the default): 2000 ns with
	 *  an engine thread (DPDAT_PROGRESS_THREAD), plenty for a ping-pong's
	 *  answer, and none with inline progress, where a held ACK leaves
	 *  only at the consumer's next poll of the device: set it there when
	 *  the consumer polls all the time (a ping-pong, a trading loop); one
	 *  that stops polling after a request it does not answer keeps the
	 *  peer's WR from completing meanwhile. DPDAT_ACK_HOLD_OFF: never
	 *  held (an ACK rides only on a request of the same pass). */
	uint32_t ack_hold_ns;
};

/**
 * Open a device: bring up its port, create its registration domain and start
 * its engine.
 *
 * @return The device, or NULL with rte_errno as dpdat_port_create(),
 *   dpdat_port_attach() (share: ENOSPC when every queue is taken) or
 *   dpdat_mr_domain_create(), or EINVAL (also: pin_cpu with a CPU the
 *   process may not run on; share not an open device, or itself opened
 *   with share; max_qps above 2^20 - 16 on a port of several queues), or
 *   EBADF (share's port has a single queue).
 */
struct dpdat_dev *
dpdat_dev_open(const struct dpdat_dev_conf *conf);

/**
 * Close a device with no QPs, CQs or SRQs left.
 *
 * @return 0, -EBADF, -EBUSY (QPs, CQs or SRQs remain, or devices opened
 *   with share pointing at this one are still open).
 */
int
dpdat_dev_close(struct dpdat_dev *dev);

/** The device's registration domain (PZs and LMRs are created in it). */
struct dpdat_mr_domain *
dpdat_dev_domain(struct dpdat_dev *dev);

/** The device's port. */
struct dpdat_port *
dpdat_dev_port(struct dpdat_dev *dev);

/**
 * The port calls that must not race the engine, made safe while an engine
 * thread runs: each waits for the engine between two iterations, holds it
 * for the call, and returns what the dpdat_port_* function of the same name
 * returns (or -EBADF for a bad dev).
 */
int
dpdat_dev_set_faults(struct dpdat_dev *dev,
		     const struct dpdat_fault_conf *conf);
/** See dpdat_dev_set_faults() and dpdat_port_capture_start(). */
int
dpdat_dev_capture_start(struct dpdat_dev *dev, const char *path);
/** See dpdat_dev_set_faults() and dpdat_port_capture_stop(). */
int
dpdat_dev_capture_stop(struct dpdat_dev *dev);
/** See dpdat_dev_set_faults() and dpdat_port_neighbours(). */
int
dpdat_dev_neighbours(struct dpdat_dev *dev, struct dpdat_neigh *out,
		     unsigned int max);

/**
 * Find the Ethernet address of the host at @p ipv4 (network order) on the
 * device's link, asking with ARP (or the kernel's neighbour table on a
 * kernel-shared port) and waiting up to @p timeout_ms for the answer; with
 * inline progress it runs the engine meanwhile. For consumers that address
 * a peer themselves (dpdat_qp_connect()) rather than through the
 * connection manager, which resolves on its own.
 *
 * @return 0 with *mac set, -EBADF, -EINVAL (mac NULL, timeout_ms < 0),
 *   -EHOSTUNREACH (no answer in time, or the neighbour failed recently),
 *   -ENOSPC (the neighbour table is full).
 */
int
dpdat_dev_resolve(struct dpdat_dev *dev, uint32_t ipv4,
		  struct rte_ether_addr *mac, int timeout_ms);

/**
 * Run the engine once (receive a burst, send what is queued, run timers).
 * In thread mode this returns -EBUSY: the thread does it. In hybrid mode
 * it runs the engine unless the thread is running it at that moment.
 *
 * @return Packets handled (>= 0), -EBADF, -EBUSY.
 */
int
dpdat_dev_progress(struct dpdat_dev *dev);

/** Completion status (values follow ibv_wc_status). */
enum dpdat_wc_status {
	DPDAT_WC_SUCCESS = 0,
	DPDAT_WC_LOC_LEN_ERR = 1,
	DPDAT_WC_LOC_QP_OP_ERR = 2,
	DPDAT_WC_LOC_PROT_ERR = 4,
	DPDAT_WC_WR_FLUSH_ERR = 5,
	DPDAT_WC_REM_INV_REQ_ERR = 9,
	DPDAT_WC_REM_ACCESS_ERR = 10,
	DPDAT_WC_REM_OP_ERR = 11,
	DPDAT_WC_RETRY_EXC_ERR = 12,
	DPDAT_WC_RNR_RETRY_EXC_ERR = 13,
};

/** Work request opcodes. */
enum dpdat_wr_opcode {
	DPDAT_WR_SEND = 0,
	DPDAT_WR_SEND_IMM,
	DPDAT_WR_RDMA_WRITE,
	DPDAT_WR_RDMA_WRITE_IMM,
	DPDAT_WR_RDMA_READ,
	DPDAT_WR_RECV,		/**< in completions only */
	DPDAT_WR_RECV_RDMA_IMM,	/**< in completions only: WRITE with imm */
	/** Atomic compare-and-swap of the 8-byte aligned 64-bit word at
	 *  remote_addr: if it equals compare_add it becomes swap. The word's
	 *  value before, in host order, lands in the one 8-byte SGE. */
	DPDAT_WR_ATOMIC_CMP_SWP,
	/** Atomic fetch-and-add: compare_add is added to the word at
	 *  remote_addr; its value before lands in the one 8-byte SGE. */
	DPDAT_WR_ATOMIC_FETCH_ADD,
};

#define DPDAT_SEND_SIGNALED	0x1	/**< complete even if sq_sig_all is 0 */
#define DPDAT_SEND_SOLICITED	0x2
#define DPDAT_SEND_FENCE	0x4	/**< wait for earlier READs */

#define DPDAT_WC_WITH_IMM	0x1

/** Scatter/gather element: a range of a registered LMR. */
struct dpdat_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

#define DPDAT_MAX_SGE 8

/** A send-queue work request. */
struct dpdat_send_wr {
	uint64_t wr_id;
	enum dpdat_wr_opcode opcode;
	uint32_t flags;			/**< DPDAT_SEND_* */
	const struct dpdat_sge *sg_list;
	uint32_t num_sge;		/**< 0..DPDAT_MAX_SGE */
	uint32_t imm_data;		/**< network order, as on the wire */
	uint64_t remote_addr;		/**< RDMA and atomics */
	uint32_t rkey;			/**< RDMA and atomics */
	uint64_t compare_add;		/**< atomics: compare, or add */
	uint64_t swap;			/**< compare-and-swap: new value */
};

/** A receive-queue work request. */
struct dpdat_recv_wr {
	uint64_t wr_id;
	const struct dpdat_sge *sg_list;
	uint32_t num_sge;
};

/** A completion. */
struct dpdat_wc {
	uint64_t wr_id;
	enum dpdat_wc_status status;
	enum dpdat_wr_opcode opcode;
	uint32_t byte_len;		/**< receives and READs */
	uint32_t imm_data;		/**< network order, with DPDAT_WC_WITH_IMM */
	uint32_t qp_num;
	uint32_t flags;			/**< DPDAT_WC_* */
};

/**
 * Name of a completion status, as ibv_wc_status_str() names verbs' own
 * ("success", "local length error", ...); "unknown" for other values.
 */
const char *
dpdat_wc_status_str(enum dpdat_wc_status status);

/**
 * Create a completion queue of at least @p size entries.
 *
 * @return The CQ, or NULL with rte_errno: EBADF, EINVAL, ENOMEM.
 */
struct dpdat_cq *
dpdat_cq_create(struct dpdat_dev *dev, uint32_t size);

/**
 * Take up to @p n completions. In inline and hybrid modes it runs the
 * engine first (hybrid: unless the engine thread is running it).
 *
 * @return Completions taken (0..n), or -EBADF, -EINVAL.
 */
int
dpdat_cq_poll(struct dpdat_cq *cq, struct dpdat_wc *wc, int n);

/**
 * Wait until the CQ holds a completion or @p timeout_ms passes (-1: forever).
 * Thread mode sleeps on an eventfd; inline mode runs the engine meanwhile.
 *
 * @return 1 when a completion is ready, 0 on timeout, -EBADF.
 */
int
dpdat_cq_wait(struct dpdat_cq *cq, int timeout_ms);

/** File descriptor that becomes readable when completions arrive. */
int
dpdat_cq_fd(const struct dpdat_cq *cq);

/**
 * Completions lost so far because the CQ was full when they came (a CQ
 * overrun: the consumer sized it too small or did not poll it).
 *
 * @return 0 with *count set, -EBADF, -EINVAL (count NULL).
 */
int
dpdat_cq_overruns(const struct dpdat_cq *cq, uint64_t *count);

/**
 * Free a CQ that no QP uses.
 *
 * @return 0, -EBADF, -EBUSY.
 */
int
dpdat_cq_free(struct dpdat_cq *cq);

/** QP states (as ibv_qp_state). */
enum dpdat_qp_state {
	DPDAT_QPS_RESET = 0,
	DPDAT_QPS_INIT,
	DPDAT_QPS_RTR,
	DPDAT_QPS_RTS,
	DPDAT_QPS_ERR = 6,
};

/** Configuration of dpdat_qp_create(). */
struct dpdat_qp_conf {
	struct dpdat_pz *pz;
	struct dpdat_cq *send_cq;
	struct dpdat_cq *recv_cq;
	uint32_t max_send_wr;		/**< 0: 256 */
	uint32_t max_recv_wr;		/**< 0: 256; ignored with an SRQ */
	int sq_sig_all;			/**< every send WR completes */
	/** Shared receive queue of the device the QP takes its receive work
	 *  requests from, or NULL for a receive queue of its own. */
	struct dpdat_srq *srq;
};

/** What a peer told us: filled by the connection manager (dpdat_cm.h), or
 *  by the consumer when it exchanges QP details out of band. */
struct dpdat_qp_remote {
	uint32_t qpn;
	uint32_t psn;			/**< the peer's first send PSN */
	uint32_t ipv4;			/**< network order */
	struct rte_ether_addr mac;
	uint16_t pmtu;			/**< 256, 512, 1024, 2048 or 4096 */
	uint8_t retry_cnt;		/**< 0..7 retries after a timeout */
	uint8_t rnr_retry;		/**< 0..7, 7 = infinite */
	uint8_t timeout;		/**< IB encoding: 4.096 us * 2^timeout; 0: 14 */
	uint8_t max_rd_atomic;		/**< READs in flight; 0: 16 */
	/** Extensions both ends agreed on (DPDAT_QP_EXT_*), 0 for plain
	 *  RoCEv2 RC: the connection manager sets them between dpdat peers;
	 *  a consumer exchanging QP details itself sets them only when it
	 *  knows the peer is dpdat and agreed. */
	uint8_t ext;
};

/** Selective repeat: the responder holds packets after a gap and its NAKs
 *  say what it holds; the requester resends only what is missing. */
#define DPDAT_QP_EXT_SACK	0x01
/** Repeated sequence NAKs: the responder NAKs a gap again for each later
 *  packet that asks for an ACK (a lost NAK costs no timeout); the requester
 *  acts on a repeat at most once a round trip. A plain RoCEv2 requester
 *  would go back again at each, so only between dpdat peers. */
#define DPDAT_QP_EXT_NAK_REPEAT	0x02
/** ACKs that ride on requests: a responder owing a plain ACK puts it, as
 *  4 bytes after the BTH (flagged by a reserved BTH bit), on the next
 *  WRITE or SEND packet its QP sends the other way, and holds an ACK for
 *  one engine pass to give the consumer's answer the chance to carry it;
 *  a ping-pong then sends one frame a message instead of two. A plain
 *  RoCEv2 peer would misread such a packet, so only between dpdat peers;
 *  never with go_back_n. */
#define DPDAT_QP_EXT_ACK_RIDE	0x04

/** Result of dpdat_qp_query(). */
struct dpdat_qp_info {
	uint32_t qpn;
	uint32_t sq_psn;		/**< our first send PSN */
	enum dpdat_qp_state state;
	uint16_t pmtu;
	uint32_t pz_id;
	/** With an SRQ: 1 while the QP holds a receive WR it took from it
	 *  for a message in progress, else 0. */
	uint32_t srq_held;
	/** Extensions in use (DPDAT_QP_EXT_*), once connected: those both
	 *  ends agreed on that this device allows. */
	uint8_t ext;
};

/** Per-QP counters. */
struct dpdat_qp_stats {
	uint64_t tx_pkts, rx_pkts, tx_bytes, rx_bytes;
	uint64_t retransmits, timeouts;
	uint64_t naks_sent, naks_rcvd, rnr_naks_sent, rnr_naks_rcvd;
	uint64_t dup_rcvd, out_of_seq;
	uint64_t tx_zerocopy;		/**< packets sent without copying */
	/** Tail probes: the last packet sent again, asking for an ACK, when
	 *  nothing was acknowledged for about two round trips. */
	uint64_t probes;
	/** Sequence NAKs ignored: a repeat of one already acted on less than
	 *  a round trip ago. */
	uint64_t naks_ignored;
	uint64_t tx_resent;		/**< packets sent more than once */
	/** Selective repeat: packets resent because a SACK showed them
	 *  lost; packets the responder held after a gap. */
	uint64_t sack_resent, held;
	uint64_t srtt_ns;		/**< smoothed round trip (0: no sample) */
	uint64_t rto_ns;		/**< current retransmit timeout */
	/** Responder: atomics executed; duplicates of atomics answered
	 *  again with the result kept (never executed twice). */
	uint64_t atomics, atomic_replays;
	/** Responder: answers to duplicate READs (or parts asked again) not
	 *  sent because the memory was gone by then: a NAK instead, the QP
	 *  kept (a requester that completed the READ ignores it). */
	uint64_t dup_read_dropped;
	/** ACKs that rode on a request (DPDAT_QP_EXT_ACK_RIDE): sent that
	 *  way, and received that way. */
	uint64_t acks_ridden, acks_ridden_rcvd;
	/** Congestion signals (RoCEv2's ECN): frames of the peer's that
	 *  arrived marked CE; CNPs sent for them (at most one in 50 us);
	 *  CNPs received from the peer. */
	uint64_t ecn_ce_rcvd, cnp_sent, cnp_rcvd;
	/** DCQCN (DPDAT_DCQCN): the rate the QP is paced to since CNPs
	 *  came, in Mb/s (0: not limited, the line rate), and the cuts
	 *  CNPs made. */
	uint64_t cc_rate_mbps, cc_cuts;
	/** Delay-based control (DPDAT_SWIFT): the window of packets in
	 *  flight the round trips set (0: off, or no sample yet), and the
	 *  cuts round trips over the target made. */
	uint64_t cc_wnd, cc_wnd_cuts;
};

/**
 * Create a QP in the INIT state; its number and first send PSN are in
 * dpdat_qp_query().
 *
 * @return The QP, or NULL with rte_errno: EBADF (also: srq not an SRQ),
 *   EINVAL (also: srq of another device), ENOMEM, ENOSPC.
 */
struct dpdat_qp *
dpdat_qp_create(struct dpdat_dev *dev, const struct dpdat_qp_conf *conf);

/**
 * Connect a QP to its peer and move it to RTS.
 *
 * @return 0, -EBADF, -EINVAL (bad PMTU, PMTU above the port's MTU, counts),
 *   -EBUSY (not in INIT).
 */
int
dpdat_qp_connect(struct dpdat_qp *qp, const struct dpdat_qp_remote *remote);

/** The send side of a QP, as verbs' move from RTR to RTS sets it. */
struct dpdat_qp_send_attr {
	uint32_t sq_psn;		/**< the first send PSN */
	uint8_t retry_cnt;		/**< as in dpdat_qp_remote */
	uint8_t rnr_retry;
	uint8_t timeout;
	uint8_t max_rd_atomic;
};

/**
 * Set the send side of a connected QP before it sends: its first PSN, in
 * place of the random one dpdat_qp_create() chose, and the retry counts,
 * timeout and READs in flight that dpdat_qp_connect() took. For consumers
 * that connect the receive side first and learn the send side later, as
 * verbs does (RTR, then RTS with the application's sq_psn). Not while
 * another thread posts to the QP.
 *
 * @return 0, -EBADF, -EINVAL (a NULL attr, sq_psn above 2^24 - 1, counts
 *   as dpdat_qp_remote), -EBUSY (not connected, or a send work request
 *   was posted already).
 */
int
dpdat_qp_set_send(struct dpdat_qp *qp, const struct dpdat_qp_send_attr *attr);

/**
 * Set the remote accesses the QP's responder allows: a mask of
 * DPDAT_MEM_PRIV_REMOTE_READ, _WRITE and _ATOMIC (every one by default).
 * A request of a kind not in it is refused as one to a region that does
 * not grant it (a remote access error, the QP broken), whatever its key;
 * the region's own privileges are checked as well. Verbs' QP access
 * flags. From the next request on; thread safe.
 *
 * @return 0, -EBADF, -EINVAL (other bits).
 */
int
dpdat_qp_set_access(struct dpdat_qp *qp, uint32_t privileges);

/** @return 0, -EBADF, -EINVAL. */
int
dpdat_qp_query(const struct dpdat_qp *qp, struct dpdat_qp_info *info);

/** @return 0, -EBADF, -EINVAL. */
int
dpdat_qp_stats(const struct dpdat_qp *qp, struct dpdat_qp_stats *stats);

/**
 * Bind an RMR for one QP: dpdat_rmr_bind() whose context resolves only for
 * remote accesses that arrive on this QP (the EP scope of a uDAPL RMR, an
 * InfiniBand type 2 memory window). The same access through any other QP,
 * even in the same protection zone, is refused (DPDAT_MR_CHECK_SCOPE, a
 * remote access error at the requester). The scope ends with the QP: a QP
 * created later never matches, whatever number it gets. segment_length 0
 * unbinds, as with dpdat_rmr_bind().
 *
 * @return
 *   The returns of dpdat_rmr_bind(); -EBADF also for a QP that is not one,
 *   -EPERM also when the QP is in another protection zone than the RMR.
 */
int
dpdat_rmr_bind_qp(struct dpdat_rmr *rmr, struct dpdat_qp *qp,
		  const struct dpdat_lmr_triplet *seg, uint32_t privileges,
		  uint32_t *rmr_context);

/**
 * Print the internal state of a QP (PSNs, queue indices, window, responder
 * state) for debugging. Reads it without synchronising with the engine: a
 * snapshot that may be slightly inconsistent.
 *
 * @return 0, -EBADF, -EINVAL (f NULL).
 */
int
dpdat_qp_dump(const struct dpdat_qp *qp, FILE *f);

/**
 * Move a QP to the error state: outstanding work completes with
 * DPDAT_WC_WR_FLUSH_ERR.
 *
 * @return 0, -EBADF.
 */
int
dpdat_qp_set_error(struct dpdat_qp *qp);

/**
 * Take a QP back to the state it was created in, from any state, to be
 * connected again: INIT, the same QP number and queues, a new first send
 * PSN, no peer, every remote access allowed, no extension, counters at
 * zero. Outstanding work completes first with DPDAT_WC_WR_FLUSH_ERR (or
 * its failure), as with dpdat_qp_set_error(). No thread may post to the
 * QP while the reset runs. Frames of the old connection
 * that arrive later are dropped (the QP is not connected); a connection
 * of the CM forgets the QP, as when it is freed.
 *
 * @return 0, -EBADF.
 */
int
dpdat_qp_reset(struct dpdat_qp *qp);

/**
 * Destroy a QP; outstanding work is flushed to its CQs first.
 *
 * @return 0, -EBADF.
 */
int
dpdat_qp_free(struct dpdat_qp *qp);

/**
 * Post a send-queue work request. Thread safe.
 *
 * @return 0; -EBADF; -EINVAL (opcode, num_sge, flags); -ENOMEM (send queue
 *   full); -EBUSY (QP not in RTS; in ERR the request is flushed instead and
 *   0 returned).
 */
int
dpdat_post_send(struct dpdat_qp *qp, const struct dpdat_send_wr *wr);

/**
 * Post a list of send-queue work requests at once (a post list): one
 * reservation of queue room and one write of each request into its slot,
 * instead of n calls of dpdat_post_send(). The requests run in array order,
 * as if posted one by one. Thread safe; the list is not interleaved with
 * the requests of other threads.
 *
 * As ibv_post_send() with its bad_wr: the requests are posted in order up
 * to the first one that cannot be, whose error is returned; those before
 * it are posted (and will complete) whatever is returned.
 *
 * @param n_posted
 *   Set to the number of requests posted, the index of the first one not
 *   posted when an error is returned (0 when nothing was).
 * @return 0 (all n posted, also for n 0); -EBADF; -EINVAL (n_posted NULL,
 *   wrs NULL with n > 0, or wrs[*n_posted] malformed as for
 *   dpdat_post_send()); -ENOMEM (the send queue filled up at
 *   wrs[*n_posted]); -EBUSY (QP not in RTS: nothing posted). The checks of
 *   wrs[0] come before the state, as in dpdat_post_send().
 */
int
dpdat_post_send_burst(struct dpdat_qp *qp, const struct dpdat_send_wr *wrs,
		      uint32_t n, uint32_t *n_posted);

/**
 * Post a receive-queue work request. Thread safe.
 *
 * @return 0, -EBADF, -EINVAL (also: the QP takes its receives from an
 *   SRQ), -ENOMEM (receive queue full).
 */
int
dpdat_post_recv(struct dpdat_qp *qp, const struct dpdat_recv_wr *wr);

/** Configuration of dpdat_srq_create(). */
struct dpdat_srq_conf {
	uint32_t max_wr;		/**< 0: 256; at most 65536 */
};

/** Result of dpdat_srq_query(). */
struct dpdat_srq_info {
	uint32_t max_wr;
	uint32_t posted;		/**< posted, not yet taken by a QP */
	uint32_t limit;			/**< armed low watermark, 0: none */
	int limit_reached;		/**< the armed watermark was crossed */
	uint32_t users;			/**< QPs taking from the SRQ */
};

/**
 * Create a shared receive queue: receive work requests posted to it are
 * taken, in the order of posting, by whichever of its QPs receives a SEND
 * (or an RDMA WRITE with immediate data) first. Each piece of a work
 * request is checked against the protection zone of the QP that takes it.
 * Scatter lists of up to DPDAT_MAX_SGE elements.
 *
 * @return The SRQ, or NULL with rte_errno: EBADF, EINVAL (max_wr), ENOMEM.
 */
struct dpdat_srq *
dpdat_srq_create(struct dpdat_dev *dev, const struct dpdat_srq_conf *conf);

/**
 * Post a receive work request to an SRQ. Thread safe.
 *
 * @return 0, -EBADF, -EINVAL (num_sge, sg_list, length), -ENOMEM (max_wr
 *   work requests wait in the SRQ).
 */
int
dpdat_post_srq_recv(struct dpdat_srq *srq, const struct dpdat_recv_wr *wr);

/**
 * Arm the low watermark: once fewer than @p limit work requests wait in the
 * SRQ, limit_reached becomes 1 in dpdat_srq_query() and the watermark is
 * disarmed (limit 0). Crossed at once when fewer wait already. A limit of 0
 * disarms it and clears limit_reached.
 *
 * @return 0, -EBADF, -EINVAL (limit above max_wr).
 */
int
dpdat_srq_arm(struct dpdat_srq *srq, uint32_t limit);

/** @return 0, -EBADF, -EINVAL (info NULL). */
int
dpdat_srq_query(const struct dpdat_srq *srq, struct dpdat_srq_info *info);

/**
 * Free an SRQ that no QP uses; the work requests still in it are dropped
 * without completions.
 *
 * @return 0, -EBADF, -EBUSY (a QP uses it).
 */
int
dpdat_srq_free(struct dpdat_srq *srq);

#ifdef __cplusplus
}
#endif

#endif /* DPDAT_QP_H */
