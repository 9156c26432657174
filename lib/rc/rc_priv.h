/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_RC_PRIV_H
#define DPDAT_RC_PRIV_H

/*
 * The RC engine. Everything below "engine only" is touched by the one thread
 * that runs the device's progress (the engine thread, or the consumer thread
 * that holds dev->busy in inline mode): no locks on the data path. Posting
 * threads hand work over through MPSC rings; completions go back through a
 * CQ ring and an eventfd.
 */

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <dpdat/dpdat_qp.h>

#include "dcqcn.h"
#include "swift.h"
#include "evq.h"
#include "roce.h"
#include "rtt.h"

extern int dpdat_rc_logtype;
#define RC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpdat_rc_logtype, "dpdat_rc: " fmt "\n", \
		##__VA_ARGS__)

#define RC_MAGIC_DEV	0x52434456u
#define RC_MAGIC_CQ	0x52434351u
#define RC_MAGIC_QP	0x52435150u
#define RC_MAGIC_SRQ	0x52435352u
#define RC_QPN_BASE	0x10		/* QPN 0 and 1 are special */
#define RC_TX_BURST	64
#define RC_MAX_INFLIGHT	512		/* unacknowledged packets per QP */
#define RC_ACKREQ_EVERY	32		/* packets between AckReq flags */
#define RC_SEND_BUDGET	64		/* packets per QP per iteration */
#define RC_SEND_BUDGET_LOSS 8		/* the same, go-back-N after a NAK */
#define RC_LOSS_SPELL_US 1000		/* how long a NAK counts as recent */
#define RC_RNR_DELAY_US	200		/* our RNR NAK timer (code 8: 0.16 ms) */
#define RC_RNR_TIMER_CODE 8
#define RC_MAX_RD	16		/* READs a responder answers at once */
#define RC_RTO_FLOOR_US	1000		/* lowest retransmit timeout */
#define RC_RTO_FLOOR_SR_US 200		/* the same, selective repeat */
#define RC_RTO_INIT_US	10000		/* before the first round trip sample */
/* At most one CNP a QP in this long (the N of the DCQCN paper's
 * notification point) */
#define RC_CNP_GAP_US	50
/* A frame's bytes beyond its payload, as DCQCN paces them: Ethernet,
 * IPv4, UDP, BTH and ICRC */
#define RC_FRAME_OVERHEAD	58
/* How long an ACK that may ride on a request waits for one, by default
 * with an engine thread (dpdat_dev_conf.ack_hold_ns 0), on a QP whose
 * consumer answers requests (a ping-pong's answer comes well within it);
 * at most RC_ACK_HOLD_MAX_NS, well below the shortest retransmission
 * timeout (RC_RTO_FLOOR_SR_US). */
#define RC_ACK_HOLD_NS	2000
#define RC_ACK_HOLD_MAX_NS 100000
/* A held ACK past its hold waits for a posted request (the consumer's
 * answer, in this pass) up to this many holds after it fell due; none
 * with no hold (inline progress, DPDAT_ACK_HOLD_OFF) */
#define RC_ACK_RIDE_HOLDS 16
/* IPv4, UDP, BTH and ICRC around a packet's extension headers and payload */
#define RC_L3_HDRS	(20 + 8 + 12 + 4)
#define RC_SR_WND	RC_MAX_INFLIGHT	/* selective repeat: PSNs a responder
					 * holds beyond a gap, bits of a SACK */
#define RC_SACK_LEN	(RC_SR_WND / 8)	/* SACK bitmap after a NAK's AETH */
#define RC_RD_WND	4096		/* READ response PSNs placed ahead */
#define RC_RD_HOLES	16		/* hole answers a responder queues */
#define RC_RD_ASKS	64		/* READ parts asked again, remembered */
#define RC_RD_SEEN	(2 * RC_MAX_RD)	/* READs accepted, remembered */
#define RC_RD_SEEN_PKTS	(1u << 22)	/* PSNs one of them spans, at most */

/* Zero-copy buffers of one work request: its payload is attached to the
 * transmitted mbufs as an external buffer; the shared info counts the mbufs
 * still holding it (plus one reference of the WR itself until it is
 * acknowledged). From a per-device pool: no allocation per packet. */
struct rc_zc {
	struct rte_mbuf_ext_shared_info shinfo;
	struct dpdat_qp *qp;	/* a WR's; NULL for a READ response */
	struct rc_dev *dev;	/* a READ response's: counts it */
	struct rte_mempool *pool;
	bool released;		/* no mbuf holds the payload any more */
	bool orphan;		/* the WR is gone: back to the pool on release */
};

#define RC_ZC_MIN	1024	/* smaller payloads are cheaper to copy */

/* A send work request as the engine keeps it. */
struct rc_swqe {
	uint64_t wr_id;
	uint8_t opcode;		/* enum dpdat_wr_opcode */
	uint8_t flags;		/* DPDAT_SEND_* */
	uint8_t num_sge;
	uint8_t signaled;
	uint32_t imm;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t len;		/* total bytes */
	uint64_t cmp_add;	/* atomics: compare (CmpSwap) or add */
	uint64_t swap;		/* CmpSwap: the new value */
	uint32_t first_psn;	/* valid once started */
	uint32_t npkts;		/* PSNs the WR uses */
	uint32_t done_pkts;	/* READ: response packets placed */
	struct rc_zc *zc;	/* zero-copy state, or NULL (copy) */
	bool zc_own_dropped;	/* the WR's own reference was given up */
	uint8_t fail;		/* error status to complete with, 0: flush */
	uint64_t sent_seq;	/* READ: when its request last left */
	uint32_t placed;	/* READ: response packets placed, in any order
				 * (done_pkts: the leading ones in a row) */
	struct dpdat_sge sge[DPDAT_MAX_SGE];
};

/* A READ the responder is answering (responder resources), or an atomic
 * whose answer (its one ATOMIC ACKNOWLEDGE) waits behind them. */
struct rc_read_res {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint32_t psn;		/* PSN of the next response */
	uint32_t first_psn;	/* PSN of the first response */
	uint32_t left;		/* response packets still to send */
	uint32_t off;		/* bytes already sent */
	uint32_t npkts;
	bool atomic;		/* an atomic's answer: orig, no memory read */
	bool dup;		/* answers sent once already: if the memory
				 * is gone, dropped, not NAKed */
	uint64_t orig;		/* the target's value before the atomic */
};

/* An atomic executed: its PSN and result, kept so that a duplicate of the
 * request is answered with the same value and never executed again. */
struct rc_atomic_res {
	uint32_t psn;
	uint32_t rkey;
	uint64_t va;
	uint64_t orig;
};

/* A send WR answered by responses rather than by ACKs: a READ or an atomic
 * (an atomic is a READ of 8 bytes whose one response carries the value). */
static inline bool
rc_wr_reads(unsigned int opcode)
{
	return opcode == DPDAT_WR_RDMA_READ ||
	       opcode == DPDAT_WR_ATOMIC_CMP_SWP ||
	       opcode == DPDAT_WR_ATOMIC_FETCH_ADD;
}

static inline bool
rc_wr_atomic(unsigned int opcode)
{
	return opcode == DPDAT_WR_ATOMIC_CMP_SWP ||
	       opcode == DPDAT_WR_ATOMIC_FETCH_ADD;
}

struct rc_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t len;
	struct dpdat_sge sge[DPDAT_MAX_SGE];
};

struct dpdat_cq {
	uint32_t magic;
	struct rc_dev *dev;
	struct evq evq;		/* of struct dpdat_wc */
	uint32_t users;		/* QPs using this CQ */
	uint64_t overruns;	/* completions lost: the CQ was full */
};

/* A shared receive queue. Posting threads fill the ring; the engine, its
 * only consumer, pulls it into rq[] and hands the oldest WQE to the QP that
 * needs one (rc_srq_take). */
struct dpdat_srq {
	uint32_t magic;
	struct rc_dev *dev;
	struct rte_ring *ring;		/* of struct rc_rwqe, MP/SC */
	uint32_t max;
	uint32_t posted;		/* in ring or rq[], not taken (atomic) */
	uint32_t limit;			/* armed low watermark, 0: off (atomic) */
	int limit_reached;		/* atomic */
	uint32_t users;			/* QPs; under dev->lock */
	/* engine only */
	struct rc_rwqe *rq;
	uint32_t size, head, tail;
};

/* Selective repeat, negotiated between dpdat peers (DPDAT_QP_EXT_SACK).
 * Responder: packets after a gap are held (each with its mbuf) until the
 * gap fills, then taken in PSN order as if they had just arrived, so data
 * still lands in PSN order; every NAK carries a bitmap of what is held.
 * Requester: when (a transmission sequence) each packet last left, to resend
 * only what a SACK shows lost (missing, and sent before something that
 * arrived). */
struct rc_held {
	struct rte_mbuf *m;
	uint32_t psn;		/* a slot is good for one PSN only */
	uint16_t off;		/* of the headers after the BTH */
	uint16_t paylen;
};

struct rc_sr {
	struct rc_held held[RC_SR_WND];	/* by PSN modulo the window */
	uint64_t map[RC_SR_WND / 64];	/* which held[] are in use */
	uint32_t n_held;
	uint64_t sent_seq[RC_SR_WND];	/* requester, by PSN: tx_seq */
	/* requester: READ responses placed ahead of una, by PSN modulo
	 * RC_RD_WND (a response lands where its PSN says, in any order) */
	uint64_t rd_map[RC_RD_WND / 64];
	/* requester: READ parts asked for again, oldest first, and how long
	 * the answer to such a request takes (qp->comp.ask_rtt): a part not there
	 * after ask_rtt.rto is asked for again, a lost request or answer
	 * costs that, not a timeout */
	struct rc_ask {
		uint32_t psn, n;
		uint64_t tsc;
		bool again;	/* asked again since: no sample */
	} ask[RC_RD_ASKS];
	uint32_t ask_head, n_ask;
	uint32_t rd_top;	/* one past the highest response placed */
	/* responder: parts of accepted READs asked for again, answered
	 * before the queued READs */
	struct rc_read_res hole[RC_RD_HOLES];
	uint32_t hole_head, n_holes;
};

static inline bool
rc_rd_test(const struct rc_sr *sr, uint32_t psn)
{
	const uint32_t b = psn & (RC_RD_WND - 1);

	return sr->rd_map[b / 64] >> (b % 64) & 1;
}

static inline void
rc_rd_set(struct rc_sr *sr, uint32_t psn, bool on)
{
	const uint32_t b = psn & (RC_RD_WND - 1);

	if (on)
		sr->rd_map[b / 64] |= 1ull << (b % 64);
	else
		sr->rd_map[b / 64] &= ~(1ull << (b % 64));
}

/* Where the responder is in the request stream: what the packet at epsn
 * may be. The only state it stores; rc_resp_state() names the rest. */
enum rc_resp_msg {
	RC_RESP_MSG_NONE = 0,	/* expecting a FIRST or ONLY */
	RC_RESP_MSG_SEND,	/* inside a multi-packet SEND */
	RC_RESP_MSG_WRITE,	/* inside a multi-packet WRITE */
};

#define RC_REMOTE_ALL (DPDAT_MEM_PRIV_REMOTE_READ | DPDAT_MEM_PRIV_REMOTE_WRITE | \
		       DPDAT_MEM_PRIV_REMOTE_ATOMIC)

/* A QP's state falls in parts by who owns it: the posting threads (post),
 * the connection (conn: set when it is made or agreed, read by the
 * engine), and, engine only, the requester that sends (req, requester.c),
 * the completer that takes ACKs and READ responses (comp, completer.c)
 * and the responder (resp, responder.c). The requester and the completer
 * share the send side: each of their fields sits with the one that
 * mainly drives it (the completer also cuts req.wnd and ends a stall;
 * the requester also arms the round-trip clocks in comp). The first
 * fields are set at creation or by the control path but state (both) and
 * st (the engine). */
struct dpdat_qp {
	uint32_t magic;
	struct rc_dev *dev;
	uint32_t qpn;
	struct dpdat_pz *pz;
	uint32_t pz_id;
	uint64_t tag;		/* never reused (QP numbers are): the scope of
				 * RMRs bound with dpdat_rmr_bind_qp() */
	/* remote accesses the responder allows (DPDAT_MEM_PRIV_REMOTE_*,
	 * dpdat_qp_set_access); every one by default */
	uint32_t remote_ok;
	struct dpdat_cq *scq, *rcq;
	int sig_all;
	int state;		/* enum dpdat_qp_state; written by both */
	struct dpdat_qp_stats st;

	/* posting (any thread) */
	struct rc_post {
		/* of struct rc_swqe, MP (HTS)/SC */
		struct rte_ring *sq_ring;
		struct rte_ring *rq_ring;	/* of struct rc_rwqe, MP/SC */
		uint32_t sq_max, rq_max;
		/* posted, not completed (atomic) */
		uint32_t sq_out, rq_out;
		/* on the device's doorbell ring (atomic) */
		uint32_t db_rung;
	} post;

	/* the connection: the peer, the attributes it was set up with and
	 * what was agreed with it */
	struct rc_conn {
		uint32_t dqpn;
		uint32_t dip;
		struct rte_ether_addr dmac;
		uint16_t sport;
		uint16_t pmtu;
		uint8_t retry_cnt, rnr_retry;
		uint32_t max_rd;
		uint64_t timeout_tsc;
		/* the peer takes repeated sequence NAKs */
		bool nak_repeat;
		/* DPDAT_QP_EXT_ACK_RIDE agreed: an owed ACK rides on the next
		 * WRITE or SEND packet the other way, or leaves on its own: at
		 * once, or, while the consumer answers requests (resp.pingpong:
		 * it sent a request after one came, resp.asked, and no held ACK
		 * has waited out the hold since), up to the hold (ack_hold_tsc)
		 * after it fell due (resp.ack_tsc), and past it while a request
		 * is posted to carry it */
		bool ack_ride;
		/* riding ACKs are understood from the peer: ack_ride, or
		 * offered in band (dpdat_cm_offer()) and not agreed yet */
		bool ride_ok;
		uint32_t peer_isn;	/* the peer's first send PSN, as told */
	} conn;

	bool on_work;		/* on the engine's work list (engine only) */
	struct rc_sr *sr;	/* selective repeat state (all three parts),
				 * NULL: go-back-N */

	/* requester, engine only: what is sent */
	struct rc_req {
		/* sq_size slots, indices free-running */
		struct rc_swqe *sq;
		uint32_t sq_size;
		uint32_t sq_send;	/* next to (re)transmit */
		uint32_t sq_tail;	/* next free */
		/* WRs before this one have their PSNs */
		uint32_t sq_started;
		uint32_t isn;		/* our first PSN */
		uint32_t psn;		/* next PSN to send */
		uint32_t frontier;	/* PSN the next new WR starts at */
		uint32_t max_sent;	/* one past the highest PSN ever sent */
		uint32_t since_ackreq;
		uint32_t reads_out;	/* READ requests sent, not completed */
		uint64_t progress_tsc;	/* last time una moved, or the first
					 * send after an idle spell: the stall
					 * clock */
		/* last probe or timeout in this stall */
		uint64_t rexmit_tsc;
		uint32_t rtt_psn;	/* the packet being timed */
		uint64_t rtt_tsc;	/* when it left; 0: nothing timed */
		uint32_t gb_psn;	/* PSN of the last go-back on a sequence
					 * NAK */
		uint64_t gb_tsc;	/* and when it happened */
		uint8_t nprobe;		/* tail probes sent in this stall */
		/* the next data packet asks for an ACK */
		bool force_ackreq;
		uint32_t wnd;		/* packets in flight allowed */
		uint64_t tx_seq;	/* transmissions so far: orders sends (a
					 * burst shares one timestamp) */
		uint32_t ackreq_every;
		uint64_t rnr_until;	/* hold sending until then */
		bool read_gap;		/* a READ response went missing */
		bool read_gap_again;	/* and was asked for more than once */
		uint64_t read_gap_tsc;	/* when it was last asked for */
		struct dcqcn cc;	/* the sender's rate, once CNPs came */
		/* DPDAT_SWIFT: the window from delays */
		struct swift swift;
	} req;

	/* completer, engine only: what ACKs and READ responses moved */
	struct rc_comp {
		uint32_t sq_head;	/* oldest not completed */
		uint32_t una;		/* oldest unacknowledged PSN */
		/* highest PSN a cumulative ACK covered */
		uint32_t acked;
		uint32_t retries_left, rnr_left;
		struct rc_rtt rtt;	/* round-trip estimator, retransmit
					 * timeout */
		/* How long the answer to a READ asked for again takes: it
		 * waits behind the responses already on their way (both
		 * modes) */
		struct rc_rtt ask_rtt;
		bool zc_check;		/* a zero-copy buffer came back:
					 * complete */
	} comp;

	/* responder, engine only */
	struct rc_resp {
		struct rc_rwqe *rq;
		uint32_t rq_size, rq_head, rq_tail;
		/* with an SRQ: the WQE taken for the message in progress, kept
		 * here (other QPs take the following ones meanwhile) */
		struct dpdat_srq *srq;
		struct rc_rwqe srq_wqe;
		bool srq_held;
		uint32_t epsn;		/* next PSN expected */
		uint32_t msn;
		uint8_t msg;		/* enum rc_resp_msg */
		bool nak_sent;		/* one sequence NAK per gap */
		bool ack_due;
		uint32_t recv_off;	/* bytes placed in rq[rq_head] */
		uint64_t wva;		/* WRITE: next remote address */
		uint32_t wrkey;
		uint32_t wleft;		/* WRITE: bytes still to come */
		uint32_t wlen;		/* WRITE: total length (for imm
					 * completion) */
		struct dpdat_qp *ack_next;	/* list of QPs owing an ACK */
		bool on_ack_list;
		bool pingpong;
		bool asked;		/* a request to ACK came since the QP
					 * last sent one */
		uint64_t ack_tsc;
		uint64_t cnp_tsc;	/* the last CNP sent (RC_CNP_GAP_US
					 * apart) */
		/* responder resources: READs being answered, oldest first */
		struct rc_read_res res[RC_MAX_RD];
		uint32_t res_head, nres;
		/* the last RC_MAX_RD atomics executed (a requester has at most
		 * max_rd outstanding), oldest first */
		struct rc_atomic_res atom[RC_MAX_RD];
		uint32_t atom_head, n_atom;
		/* the READs accepted last (a requester has at most RC_MAX_RD
		 * out): a duplicate is answered only inside one of them */
		struct rc_read_seen {
			uint64_t va, len;
			uint32_t rkey, first_psn, npkts;
		} rd_seen[RC_RD_SEEN];
		uint32_t rd_seen_next;
	} resp;
};


/* The device as the RC layer and the CM see it: its port, its registration
 * domain, its QPs and the engine's transmit batch. lib/dev's struct
 * dpdat_dev (lib/dev/dev_priv.h) begins with it and adds what only lib/dev
 * uses: the engine thread, registration readers, shared ports. The RC layer
 * calls up only through the hooks at the end, which those layers set. */
struct cm_dev;

struct rc_dev {
	uint32_t magic;
	struct dpdat_port *port;
	struct dpdat_mr_domain *dom;
	enum dpdat_progress progress;
	uint32_t busy;		/* the engine flag: who runs the engine */
	pthread_mutex_t lock;	/* control path: create/free */
	uint32_t max_qps;
	/* QP numbers start here: RC_QPN_BASE, above the port's queue (a
	 * device of several queues tells whose a frame is by its QPN) */
	uint32_t qpn_base;
	struct dpdat_qp **qps;	/* by qpn - qpn_base; engine reads */
	struct dpdat_qp **active;	/* the n_qps live QPs */
	/* The engine visits only QPs with something to do: those on the work
	 * list (engine only), which a QP joins when a posting thread rings its
	 * doorbell (the ring, MP/SC, holds a QP once) or a packet of its
	 * arrives, and leaves when nothing is outstanding. */
	struct rte_ring *db;
	struct dpdat_qp **work;
	uint32_t n_work;
	uint32_t work_rr;	/* where the next pass starts, mod n_work */
	uint32_t n_qps, n_cqs, n_srqs;
	uint32_t next_qpn;	/* search start for a free number */
	uint64_t tsc_hz;
	struct dpdat_qp *ack_list;
	uint64_t ack_hold_tsc;		/* ACK hold in TSC cycles; 0: none */
	uint64_t cnp_gap_tsc;		/* RC_CNP_GAP_US in TSC cycles */
	struct dcqcn_dev dcqcn;		/* DPDAT_DCQCN, in its units */
	struct swift_dev swift;		/* DPDAT_SWIFT, in its units */
	struct rte_mbuf *tx[RC_TX_BURST];
	uint16_t n_tx;
	struct rte_mempool *zc_pool;	/* NULL: zero-copy transmit off */
	/* READ response mbufs holding registered memory (zero-copy) that the
	 * device has not released: the engine thread stays short of a
	 * quiescent state while any is out (rc_zc_read_payload) */
	uint32_t zc_rd_out;
	uint32_t n_held, max_held;	/* mbufs held out of order, bound */
	uint32_t max_held_qp;		/* the bound of one QP */
	bool go_back_n;			/* never selective repeat */
	struct cm_dev *cm;		/* connection manager (lib/cm) */

	/* hooks of the layers above */
	/* lib/dev: one engine iteration, if nobody else runs it */
	int (*run)(struct rc_dev *rd);
	/* hybrid progress: when consumers poll, for the engine thread,
	 * written without a lock (a lost or late update is harmless: they
	 * only decide when the thread naps, rc_dev_poll_run(); differences
	 * of them are taken signed, clamped at 0). Not cache
	 * aligned: the device is calloc()ed, and while pollers write them
	 * the engine thread naps */
	uint64_t poll_start;	/* when the last one began */
	uint64_t poll_end;	/* when the last one ended */
	uint64_t poll_gap;	/* the longest time between the end of one
				 * and the start of the next, since the
				 * engine thread cleared it */
	/* lib/cm: a freed QP is forgotten by the connections naming it;
	 * called with the engine held */
	void (*qp_gone)(void *ctx, struct dpdat_qp *qp);
	void *qp_gone_ctx;
};

/* The RC part of an application's device handle: lib/dev puts it first in
 * struct dpdat_dev (and checks that it does). NULL stays NULL. */
static inline struct rc_dev *
rc_dev(struct dpdat_dev *dev)
{
	return (struct rc_dev *)(void *)dev;
}


/* kv.c: "key=value,..." over a table of uint32_t fields of *base, each
 * in min..max; the bare word, if any, sets *word_seen. 0, or -EINVAL
 * (logged, naming var). */
struct rc_kv_key {
	const char *key;
	size_t off;
	uint32_t min, max;
};
int rc_kv_parse(const char *var, const char *s, const struct rc_kv_key *keys,
		size_t n, void *base, const char *word, bool *word_seen);

/* engine.c: the RC layer's part of the engine loop */
/* The RC state of a device whose port is open: 0 or -errno. Closing:
 * rc_dev_drain() before the port goes, rc_dev_fini() after. */
int rc_dev_init(struct rc_dev *dev, const struct dpdat_dev_conf *conf);
void rc_dev_drain(struct rc_dev *dev);
void rc_dev_fini(struct rc_dev *dev);
/* A received frame that roce_rx_parse() accepted, for a QP (not QP1): to
 * its responder or completer. The caller frees m. */
void rc_input(struct rc_dev *dev, struct rte_mbuf *m,
	      const struct roce_rx *rx);
/* Once per engine iteration, after the received burst: coalesced ACKs,
 * then every QP pulls what was posted, runs its timers and sends. */
void rc_progress(struct rc_dev *dev, uint64_t now);
uint64_t rc_ack_hold_tsc(const struct dpdat_dev_conf *conf, uint64_t tsc_hz);
/* What event queues of this device run to make progress: NULL when the
 * engine has its own thread. */
evq_progress_fn rc_dev_progress_fn(const struct rc_dev *dev);
/* Hybrid progress: a consumer's poll runs the engine (if nobody does) and
 * says so to the engine thread, which sleeps meanwhile. */
int rc_dev_poll_run(struct rc_dev *dev);
void rc_tx(struct rc_dev *dev, struct rte_mbuf *m);
/* Any thread, after posting to a QP: the engine visits it. */
void rc_qp_ring(struct dpdat_qp *qp);
/* Engine (or its holder): the QP has work; rung doorbells to the work
 * list; a QP going away leaves it. */
void rc_qp_kick(struct dpdat_qp *qp);
void rc_db_drain(struct rc_dev *dev);
void rc_work_remove(struct dpdat_qp *qp);
void rc_tx_flush(struct rc_dev *dev);
bool rc_tx_room(struct rc_dev *dev);
void rc_tx_purge(struct rc_dev *dev, uint32_t dqpn, uint32_t dip,
		 bool all);
void rc_lock_engine(struct rc_dev *dev);
void rc_unlock_engine(struct rc_dev *dev);

/* cq.c */
void rc_cq_push(struct dpdat_cq *cq, const struct dpdat_wc *wc);

/* qp.c */
void rc_complete_send(struct dpdat_qp *qp, const struct rc_swqe *w,
		      enum dpdat_wc_status status);
void rc_complete_recv(struct dpdat_qp *qp, const struct rc_rwqe *w,
		      enum dpdat_wc_status status, enum dpdat_wr_opcode op,
		      uint32_t len, const uint32_t *imm);
void rc_qp_error(struct dpdat_qp *qp);
int rc_qp_remote_check(const struct dpdat_qp *qp,
		       const struct dpdat_qp_remote *r);
void rc_qp_set_remote(struct dpdat_qp *qp, const struct dpdat_qp_remote *r);
/* The QP breaks: WR idx (absolute SQ index) fails with status, the WRs
 * before it are flushed, the rest too; completions leave in order, each
 * zero-copy WR only once the device released its memory. */
void rc_qp_fail(struct dpdat_qp *qp, uint32_t idx, enum dpdat_wc_status st);
void rc_qp_flush(struct dpdat_qp *qp);
void rc_pull_posted(struct dpdat_qp *qp);
/* Posting a receive WR: check and copy it (0 or -EINVAL), then queue it on
 * ring with a slot reserved in *count below max (0 or -ENOMEM). */
int rc_rwqe_fill(struct rc_rwqe *w, const struct dpdat_recv_wr *wr);
int rc_rwqe_post(struct rte_ring *ring, uint32_t *count, uint32_t max,
		 const struct rc_rwqe *w);

/* The receive WQE the responder works on: the QP's oldest, or the one it
 * took from its SRQ. rc_rwqe_have() says whether there is one. */
static inline bool
rc_rwqe_have(const struct dpdat_qp *qp)
{
	return qp->resp.srq != NULL ? qp->resp.srq_held : qp->resp.rq_head != qp->resp.rq_tail;
}

static inline struct rc_rwqe *
rc_rwqe_cur(struct dpdat_qp *qp)
{
	return qp->resp.srq != NULL ? &qp->resp.srq_wqe :
	       &qp->resp.rq[qp->resp.rq_head & (qp->resp.rq_size - 1)];
}

/* The current receive WQE completed: the next one becomes current. */
static inline void
rc_rwqe_next(struct dpdat_qp *qp)
{
	if (qp->resp.srq != NULL)
		qp->resp.srq_held = false;
	else
		qp->resp.rq_head++;
}

/* srq.c: engine side. A QP without a held WQE takes the SRQ's oldest;
 * false when the SRQ is empty. */
bool rc_srq_take(struct dpdat_qp *qp);
/* The QP's held WQE (a message half received) back to its SRQ, first in
 * line, counted in posted again (which may then exceed max_wr until it is
 * taken); flushed only if neither the array nor the ring has room. */
void rc_srq_give_back(struct dpdat_qp *qp);

/* zc.c */
void rc_zc_start(struct dpdat_qp *qp, struct rc_swqe *w);
bool rc_zc_done(struct rc_swqe *w);
void rc_zc_abandon(struct rc_swqe *w);
struct rte_mbuf *rc_zc_payload(struct dpdat_qp *qp, struct rc_swqe *w,
			       uint32_t off, uint32_t n, unsigned int pad);
int rc_zc_pool_create(struct rc_dev *dev);
struct rte_mbuf *rc_zc_read_payload(struct dpdat_qp *qp,
				    const struct dpdat_mr_xlat *x, uint32_t n,
				    unsigned int pad);

/* requester.c */

/*
 * The requester's state, named. It is derived from the counters (sq_head,
 * sq_send, sq_started, sq_tail; una, psn, max_sent, frontier; rnr_until)
 * rather than stored beside them, so the two can never disagree:
 *   IDLE       nothing started and not completed, nothing posted to send
 *   SENDING    new packets go out (psn == max_sent), window open
 *   RESENDING  a go-back is being sent again (psn < max_sent)
 *   WAITING    everything started is out: ACKs, responses or a timer
 *   RNR_WAIT   the responder had no receive WR: hold until rnr_until
 *   ERROR      the QP broke: everything flushes
 * Its invariants are written once, in rc_req_check(), which debug and
 * sanitizer builds (DPDAT_DEBUG) run after every step of the engine.
 */
enum rc_req_state {
	RC_REQ_IDLE,
	RC_REQ_SENDING,
	RC_REQ_RESENDING,
	RC_REQ_WAITING,
	RC_REQ_RNR_WAIT,
	RC_REQ_ERROR,
};

enum rc_req_state rc_req_state(const struct dpdat_qp *qp, uint64_t now);
const char *rc_req_state_name(enum rc_req_state s);
#ifdef DPDAT_DEBUG
void rc_req_check(const struct dpdat_qp *qp, const char *where);
#else
#define rc_req_check(qp, where) do { } while (0)
#endif

void rc_requester(struct dpdat_qp *qp, uint64_t now);
/* The absolute SQ index of the started WR holding psn, or sq_started:
 * the only search for it. _from: the walk starts at SQ index from (callers
 * looking up rising PSNs keep their place). */
uint32_t rc_swqe_of_psn(const struct dpdat_qp *qp, uint32_t psn);
uint32_t rc_swqe_of_psn_from(const struct dpdat_qp *qp, uint32_t from,
			     uint32_t psn);
/* Send the packet of psn again, alone (for a READ: its request from the
 * first response not yet placed); 0, or -1 when not now. */
int rc_resend(struct dpdat_qp *qp, uint32_t psn, bool ackreq, uint64_t now);
/* Ask again for READ w's responses from packet k: to the end, or under
 * selective repeat the run not placed yet. 0, or -1 when not now. */
int rc_read_again(struct dpdat_qp *qp, struct rc_swqe *w, uint32_t k,
		  uint64_t now);
void rc_requester_timer(struct dpdat_qp *qp, uint64_t now);
/* Going back (all of it in requester.c): on a sequence NAK, an RNR NAK,
 * a READ response missing (go-back-N); rc_catch_up(): the sender, rewound,
 * moves on past what came back since. */
void rc_go_back_nak(struct dpdat_qp *qp, uint32_t psn, uint64_t now);
void rc_go_back_rnr(struct dpdat_qp *qp, uint32_t psn, uint64_t now);
void rc_go_back_read(struct dpdat_qp *qp, uint32_t expect, uint64_t now);
void rc_catch_up(struct dpdat_qp *qp);
struct rte_mbuf *rc_pkt_alloc(struct dpdat_qp *qp, uint8_t op, uint32_t psn,
			      bool ackreq, unsigned int payload);
struct rte_mbuf *rc_pkt_alloc_hdr(struct dpdat_qp *qp, uint8_t op,
				  uint32_t psn, bool ackreq,
				  unsigned int payload);
int rc_pkt_send(struct dpdat_qp *qp, struct rte_mbuf *m);

/* responder.c */

/*
 * The responder's state, named. Like the requester's it is derived from
 * the fields (qp->state; resp.msg, wleft, recv_off; nres and the READ
 * parts asked again; nak_sent; what selective repeat holds) rather than
 * stored beside them; several may hold at once, the first that does names
 * it:
 *   ERROR     the QP broke: nothing is taken, everything flushes
 *   HOLDING   selective repeat: packets past a gap are held, taken in PSN
 *             order when it fills (a NAK with their bitmap went out, or
 *             goes out with the next one past the gap)
 *   GAP       a packet past epsn came, a sequence NAK went out, nothing
 *             is held (go-back-N, or no room): what follows is dropped
 *             until epsn arrives
 *   READING   READ responses are queued; an ACK owed waits behind them
 *   SEND      inside a multi-packet SEND: recv_off bytes placed in the
 *             receive WR it holds
 *   WRITE     inside a multi-packet WRITE: wleft of wlen bytes to come
 *   IDLE      between messages, nothing owed: the packet at epsn starts
 *             one (FIRST or ONLY)
 * There is no RNR state: an RNR NAK is sent and the packet forgotten (what
 * was held after it too); the requester waits and sends it again.
 * Its invariants are written once, in rc_resp_check(), which debug and
 * sanitizer builds (DPDAT_DEBUG) run after every request taken and every
 * step of the engine.
 */
enum rc_resp_state {
	RC_RESP_IDLE,
	RC_RESP_SEND,
	RC_RESP_WRITE,
	RC_RESP_READING,
	RC_RESP_GAP,
	RC_RESP_HOLDING,
	RC_RESP_ERROR,
};

enum rc_resp_state rc_resp_state(const struct dpdat_qp *qp);
const char *rc_resp_state_name(enum rc_resp_state s);
#ifdef DPDAT_DEBUG
void rc_resp_check(const struct dpdat_qp *qp, const char *where);
#else
#define rc_resp_check(qp, where) do { } while (0)
#endif

void rc_responder_reads(struct dpdat_qp *qp);
void rc_responder(struct dpdat_qp *qp, struct rte_mbuf *m,
		  const struct roce_bth *bth, unsigned int hdr_off,
		  unsigned int paylen);
void rc_send_ack(struct dpdat_qp *qp, uint8_t syndrome, uint32_t psn);
void rc_ack_last(struct dpdat_qp *qp);
/* An ACK or NAK followed by len bytes (a SACK bitmap: dpdat peers only). */
void rc_send_ack_data(struct dpdat_qp *qp, uint8_t syndrome, uint32_t psn,
		      const void *data, unsigned int len);

/* sr.c: selective repeat */
int rc_sr_enable(struct dpdat_qp *qp);
void rc_sr_disable(struct dpdat_qp *qp);
/* Responder: hold an out-of-order packet; false when it cannot be held
 * (outside the window, no room): then it is dropped as under go-back-N. */
bool rc_sr_hold(struct dpdat_qp *qp, struct rte_mbuf *m, uint32_t psn,
		unsigned int off, unsigned int paylen);
/* Responder: the held packet at epsn, if any (the caller frees it). */
struct rte_mbuf *rc_sr_next(struct dpdat_qp *qp, unsigned int *off,
			    unsigned int *paylen);
void rc_sr_drop_held(struct dpdat_qp *qp);
/* Responder: what is held for PSNs psn .. psn + n - 1 goes (a READ request
 * at psn took them all). */
void rc_sr_drop_range(struct dpdat_qp *qp, uint32_t psn, uint32_t n);
/* Responder: a sequence NAK at epsn with the bitmap of held PSNs. */
void rc_sr_send_sack(struct dpdat_qp *qp);
/* Requester: a SACK arrived (its first missing PSN and bitmap). False when
 * the responder holds nothing (no room): it dropped what followed the gap,
 * the requester goes back N. */
bool rc_sr_on_sack(struct dpdat_qp *qp, uint32_t epsn, const uint8_t *map,
		   uint64_t now);

/* completer.c */
void rc_complete_acked(struct dpdat_qp *qp);
void rc_completer(struct dpdat_qp *qp, struct rte_mbuf *m,
		  const struct roce_bth *bth, unsigned int hdr_off,
		  unsigned int paylen);
/* A plain ACK of psn that rode on a request of the peer's. */
void rc_completer_ack(struct dpdat_qp *qp, uint32_t psn);

/* sge.c: copies between SGE lists and packets, with the key check of every
 * piece. Return 0 or the completion status of a failure. */
enum dpdat_wc_status rc_sge_to_buf(struct dpdat_qp *qp,
				   const struct dpdat_sge *sge, uint32_t n,
				   uint32_t off, uint8_t *dst, uint32_t len);
enum dpdat_wc_status rc_buf_to_sge(struct dpdat_qp *qp,
				   const struct dpdat_sge *sge, uint32_t n,
				   uint32_t off, const uint8_t *src,
				   uint32_t len);
enum dpdat_wc_status rc_mbuf_to_sge(struct dpdat_qp *qp,
				    const struct dpdat_sge *sge, uint32_t n,
				    uint32_t off, const struct rte_mbuf *m,
				    uint32_t moff, uint32_t len);
/* Copy len bytes at moff of a (possibly chained) mbuf to dst. */
void rc_mbuf_copy(const struct rte_mbuf *m, uint32_t moff, uint8_t *dst,
		  uint32_t len);

#endif /* DPDAT_RC_PRIV_H */
