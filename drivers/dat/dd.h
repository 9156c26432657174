/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The DAT 2.0 provider ("dd_"): DAT objects over dpdat's native API.
 *
 * Handles. Every DAT handle is a struct whose first member is struct
 * dd_obj, whose first word points at the DAT_PROVIDER (the registry finds
 * the provider that way). A freed object keeps that word, gets a dead
 * magic and goes to a free list of its type, never back to malloc: a stale
 * handle then reads as invalid instead of crashing the process.
 *
 * Locking. The IA lock guards only the IA's object list (a leaf: nothing
 * else is taken under it). Each EVD and each EP have their own lock; an
 * EVD lock may be taken under an EP lock, never the reverse (events are
 * converted under the EVD lock, so EP state is an atomic changed by
 * compare-and-swap). Native dpdat calls are thread safe where they are
 * used from several threads (posting: MPSC rings; CQ polling under the
 * EVD lock).
 *
 * Events. An EVD is a software queue of ready DAT_EVENTs plus, by its
 * flags, a dpdat CQ (DTO and RMR bind completions) and a dpdat CM event
 * queue (connection requests and connection events). Dequeue and wait
 * first convert what the native sources hold into the software queue,
 * with the converters that ep.c, srq.c and cm.c register with evd.c,
 * then take from it.
 */

#ifndef DPDAT_DAT_DD_H
#define DPDAT_DAT_DD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/queue.h>

#include <rte_log.h>

#include <dat2/udat.h>
#include <dat2/dat_registry.h>
#include <dat2/dat_ib_extensions.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_mr.h>
#include <dpdat/dpdat_qp.h>

#include "dat_err.h"
#include "dd_params.h"

/* Limits the IA reports in its attributes (and enforces). */
#define DD_MAX_EP		4096	/* per process (ep.c table, QPs of a device) */
#define DD_MAX_DTOS		1024	/* per EP queue */
#define DD_MAX_EVD_QLEN		(1 << 16)
#define DD_MAX_IOV		16
#define DD_MAX_RDMA_SIZE	(64u << 20)
#define DD_MAX_RDMA_READ_IN	16
#define DD_MAX_PDATA		DPDAT_CM_REQ_PDATA_MAX_IP /* the smallest: a REQ
						 * to an IP CM port */
#define DD_MAX_SRQ		256	/* per process (srq.c table) */
#define DD_MAX_SRQ_DTOS		16384	/* per SRQ */
#define DD_IA_ADDRESS_PORT	0

enum dd_type {
	DD_IA = 1, DD_EP, DD_LMR, DD_RMR, DD_PZ, DD_PSP, DD_RSP, DD_CR,
	DD_CNO, DD_EVD, DD_SRQ, DD_CSP, DD_TYPE_COUNT
};

#define DD_MAGIC_LIVE	0x64646174u	/* "ddat" ^ type */
#define DD_MAGIC_DEAD	0xdeadda7au

struct dd_ia;

struct dd_obj {
	const DAT_PROVIDER *provider;	/* must stay first */
	uint32_t magic;
	enum dd_type type;
	DAT_CONTEXT context;
	struct dd_ia *ia;
	TAILQ_ENTRY(dd_obj) next;	/* in the IA's list, or a free list */
};
TAILQ_HEAD(dd_obj_list, dd_obj);

/* Allocate a zeroed object of the type (size bytes, dd_obj first), linked
 * into the IA's list; NULL when out of memory. Takes the IA lock. */
void *dd_obj_new(struct dd_ia *ia, enum dd_type type, size_t size);
/* Unlink and retire an object (dead magic, back to its free list). */
void dd_obj_free(void *obj);
/* The object when h is a live handle of the type, else NULL. */
void *dd_obj_get(DAT_HANDLE h, enum dd_type type);
/* A live object of any type (for the generic handle calls), else NULL. */
struct dd_obj *dd_obj_any(DAT_HANDLE h);
/* The IA handle the consumer holds for ours (the registry swaps them):
 * what queries return in their ia_handle fields. */
DAT_IA_HANDLE dd_consumer_ia(struct dd_ia *ia);

/* The QoS classes of DAT 2.0 (dat.h), any combination: accepted, served
 * as best effort (dpdat has one class of service on the wire). */
#define DD_QOS_ALL (DAT_QOS_BEST_EFFORT | DAT_QOS_HIGH_THROUGHPUT | \
		    DAT_QOS_LOW_LATENCY | DAT_QOS_ECONOMY | DAT_QOS_PREMIUM)

/* ---- IA ---- */


struct dd_ia {
	struct dd_obj h;
	pthread_mutex_t lock;
	struct dd_obj_list objs;	/* every object of the IA but itself */
	struct dpdat_dev *dev;
	struct dd_evd *async_evd;
	bool async_evd_ours;		/* created by ia_open: freed by close */
	struct dd_ia_conf conf;
	char name[DAT_NAME_MAX_LENGTH];
	DAT_SOCK_ADDR addr __attribute__((aligned(8)));	/* sockaddr_in */
	uint32_t ipv4;			/* network order */
	/* provider-specific attributes (ia.c): DAT_IB_TRANSPORT_MTU is the
	 * path MTU the connections of this IA use; the IB extensions dpdat
	 * has (ext.c) say TRUE, as dtestx looks for them */
	char mtu_str[8];
	DAT_NAMED_ATTR specific[6];
};

/* The provider of an IA name (registered by dat_provider_init), and the
 * ia_params of its dat.conf entry copied into params. */
const DAT_PROVIDER *dd_provider(const char *ia_name, char *params,
				size_t len);

/* ---- EVD and CNO ---- */

struct dd_cno {
	struct dd_obj h;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t triggers;		/* not yet consumed by a wait */
	DAT_OS_WAIT_PROXY_AGENT agent;
	int fd;				/* eventfd of cno_fd_create, or -1 */
};

struct dd_evd {
	struct dd_obj h;
	pthread_mutex_t lock;
	DAT_EVD_FLAGS flags;
	DAT_COUNT qlen;
	DAT_EVENT *ring;		/* ready events */
	uint32_t head, count;		/* ring[head] is the oldest */
	bool enabled, waitable;
	bool overflowed;		/* reported on the async EVD once */
	uint32_t waiters;
	struct dd_cno *cno;
	struct dpdat_cq *cq;		/* DTO | RMR_BIND */
	struct dpdat_cm_eq *eq;		/* CONNECTION | CR */
	uint32_t users;			/* EPs, PSPs, RSPs that name it */
};

/* Queue a ready event (takes the EVD lock). DAT_QUEUE_FULL, and the
 * overflow reported on the IA's async EVD, when the queue is full. */
DAT_RETURN dd_evd_push(struct dd_evd *evd, const DAT_EVENT *ev);
/* The EVD of a handle that must have all the flags, else NULL. */
struct dd_evd *dd_evd_get(DAT_EVD_HANDLE h, DAT_EVD_FLAGS need);

/* ---- memory ---- */

struct dd_pz {
	struct dd_obj h;
	struct dpdat_pz *pz;
	uint32_t users;			/* LMRs, RMRs, EPs, SRQs */
};

struct dd_lmr {
	struct dd_obj h;
	struct dd_pz *pz;
	struct dpdat_lmr *lmr;
	DAT_LMR_PARAM param;
};

struct dd_rmr {
	struct dd_obj h;
	struct dd_pz *pz;
	struct dpdat_rmr *rmr;
	bool ep_scope;			/* rmr_create_for_ep */
	DAT_RMR_PARAM param;
};

/* ---- endpoints and connections ---- */

/* One posted work request, as its completion must report it. */
struct dd_wr {
	DAT_DTO_COOKIE cookie;
	DAT_SEG_LENGTH length;
	DAT_DTOS op;
	struct dd_ep *ep;
	struct dd_rmr *rmr;		/* a bind posted on the EP */
	bool signaled;
	bool done;
};

struct dd_wr_queue {
	struct dd_wr *wr;
	uint32_t size, head, tail;	/* posted: [head, tail) mod size */
};

struct dd_ep {
	struct dd_obj h;
	pthread_mutex_t lock;
	DAT_EP_PARAM param;
	DAT_EP_STATE state;		/* atomic: dd_ep_state(), dd_ep_move() */
	uint32_t gen;			/* incarnation of the QP (ep.c) */
	int index;			/* in ep.c's table, for wr_ids */
	struct dd_pz *pz;
	struct dd_evd *req_evd, *recv_evd, *conn_evd;
	struct dd_srq *srq;
	struct dpdat_qp *qp;
	struct dpdat_cm_conn *conn;
	struct dd_wr_queue sq, rq;
	uint32_t qpn;			/* of qp, for dd_ep_of_qpn() */
	struct dd_ep *qpn_next;		/* in ep.c's qpn map (SRQ EPs) */
	DAT_COUNT hard_hw;		/* ep_set_watermark (SRQ EPs) */
	uint8_t pdata[DPDAT_CM_DREQ_PDATA_MAX];	/* the peer's last */
	uint16_t pdata_len;
	DAT_SOCK_ADDR remote __attribute__((aligned(8)));
	DAT_CONN_QUAL remote_qual;
};

struct dd_sp {				/* PSP, RSP and CSP */
	struct dd_obj h;
	DAT_CONN_QUAL qual;
	struct dd_evd *evd;
	struct dd_ep *ep;		/* RSP only */
	DAT_PSP_FLAGS flags;
	struct dpdat_cm_listener *listener;
};

struct dd_cr {
	struct dd_obj h;
	struct dd_sp *sp;
	struct dd_ep *ep;		/* the reserved EP of an RSP, else NULL */
	struct dpdat_cm_conn *conn;
	DAT_SOCK_ADDR remote __attribute__((aligned(8)));
	uint8_t pdata[DPDAT_CM_REQ_PDATA_MAX];
	uint16_t pdata_len;
};

/* A shared receive queue: a dpdat SRQ plus the records of its posted
 * receives. Completions of one SRQ arrive in any order (on the CQs of
 * the EPs that took them, a long message finishing after a short one), so
 * a record lives in a slot taken from a free list, not in a ring. */
struct dd_srq {
	struct dd_obj h;
	pthread_mutex_t lock;		/* a leaf: taken under EVD locks */
	struct dd_pz *pz;
	struct dpdat_srq *srq;
	DAT_SRQ_PARAM param;		/* max_recv_dtos: the DAT limit */
	int index;			/* in srq.c's table, for wr_ids */
	uint32_t gen;			/* incarnation, for wr_ids */
	uint32_t users;			/* EPs (atomic) */
	uint32_t size;			/* slots: the native capacity */
	struct dd_wr *wr;		/* records, by slot */
	uint32_t *free_slot;		/* stack of free slots */
	uint32_t nfree;
	uint32_t outstanding;		/* posted, not completed */
	bool lw_armed;			/* low watermark set, not reported */
};

/* An EP on the SRQ comes (1) or goes (-1). */
static inline void
dd_srq_use(struct dd_srq *srq, int d)
{
	__atomic_add_fetch(&srq->users, (uint32_t)d, __ATOMIC_RELAXED);
}

/* ---- work request ids (ep.c, srq.c) ----
 *     wr_id = index << 48 | generation << 16 | slot
 * index: EPs 0 .. DD_MAX_EP - 1, SRQs DD_MAX_EP + their table index. */
#define DD_WR_SLOT_BITS		16
#define DD_WR_GEN_BITS		32
#define DD_WR_ID(index, gen, slot) \
	((uint64_t)(index) << (DD_WR_GEN_BITS + DD_WR_SLOT_BITS) | \
	 (uint64_t)(uint32_t)(gen) << DD_WR_SLOT_BITS | (uint64_t)(slot))
#define DD_WR_INDEX(id)		((id) >> (DD_WR_GEN_BITS + DD_WR_SLOT_BITS))
#define DD_WR_GEN(id)		((uint32_t)((id) >> DD_WR_SLOT_BITS))
#define DD_WR_SLOT(id)		((uint32_t)((id) & ((1u << DD_WR_SLOT_BITS) - 1)))

/* ---- event conversion (evd.c dispatches) ----
 * An EVD drains its native sources through converters that the owners of
 * what the events are about register at load (RTE_INIT), so that evd.c
 * calls no object module: DTO completions go to the owner of their wr_id
 * (ep.c, srq.c), CM events to cm.c. A converter fills ev and returns true,
 * or returns false when the native event produces no DAT event (an
 * unsignaled WR retired, an event for an object already gone). Called
 * with the EVD lock held. */
enum dd_dto_owner { DD_DTO_EP, DD_DTO_SRQ, DD_DTO_OWNERS };
#define DD_WR_OWNER(id)	(DD_WR_INDEX(id) < DD_MAX_EP ? DD_DTO_EP : DD_DTO_SRQ)

typedef bool dd_dto_conv_t(struct dd_evd *evd, const struct dpdat_wc *wc,
			   DAT_EVENT *ev);
typedef bool dd_cm_conv_t(struct dd_evd *evd, const struct dpdat_cm_event *cm,
			  DAT_EVENT *ev);
/* An event the consumer took from an EVD (dequeue, wait), with no lock
 * held: the SRQ's asynchronous events follow from it (srq.c). */
typedef void dd_taken_t(const DAT_EVENT *ev);

void dd_evd_set_dto_conv(enum dd_dto_owner owner, dd_dto_conv_t *conv);
void dd_evd_set_cm_conv(dd_cm_conv_t *conv);
void dd_evd_set_taken(dd_taken_t *taken);

/* The EP whose QP of ia's device is qpn, among the EPs on an SRQ; NULL
 * when none (ep.c). */
struct dd_ep *dd_ep_of_qpn(const struct dd_ia *ia, uint32_t qpn);
/* Scatter list of a DAT iov: at most max entries, total at most
 * DD_MAX_RDMA_SIZE (obj.c). */
DAT_RETURN dd_to_sges(DAT_COUNT n, const DAT_LMR_TRIPLET *iov, DAT_COUNT max,
		      struct dpdat_sge *sge, DAT_SEG_LENGTH *total);

/* ---- helpers ---- */

/* The plug-in's log type, dpdat.dat (obj.c): NOTICE by default; DPDAT_LOG
 * and the EAL's --log-level set it, and DPDAT_DAT_DEBUG=1 raises it to
 * DEBUG (ia_open), which logs events as they are converted. */
extern int dd_logtype;
#define DD_LOG(level, fmt, ...) do { \
	/* no arguments evaluated below the level (completion paths) */ \
	if (rte_log_can_log(dd_logtype, RTE_LOG_ ## level)) \
		rte_log(RTE_LOG_ ## level, dd_logtype, \
			"dpdat DAT: " fmt "\n", ##__VA_ARGS__); \
} while (0)

/* Whether DEBUG messages are logged: for output beyond one message (QP
 * dumps, which go to the log stream). */
static inline bool
dd_log_debug(void)
{
	return rte_log_can_log(dd_logtype, RTE_LOG_DEBUG);
}

/* DAT_INVALID_HANDLE with a subtype. */
#define DD_BAD_HANDLE(sub)	((DAT_RETURN)(DAT_INVALID_HANDLE | (sub)))
#define DD_BAD_PARAM(n)		((DAT_RETURN)(DAT_INVALID_PARAMETER | (n)))
#define DD_BAD_STATE(sub)	((DAT_RETURN)(DAT_INVALID_STATE | (sub)))

#endif /* DPDAT_DAT_DD_H */
