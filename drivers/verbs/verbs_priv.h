/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_VERBS_PRIV_H
#define DPDAT_VERBS_PRIV_H

/*
 * libdpdat-verbs: the verbs ABI of Debian 12's rdma-core (libibverbs 44)
 * on dpdat, for unmodified verbs programs, preloaded ahead of the system's
 * libibverbs (dpdat-run). One device, dpdat0, joins the system's device
 * list; its objects are dpdat's (PD: protection zone, MR: LMR, CQ, QP);
 * the inline calls of verbs.h (ibv_post_send, ibv_poll_cq, ...) jump
 * through the context's operation tables, which this library fills.
 * Objects of other devices (a real RDMA NIC on the host) go to the
 * system's libibverbs untouched.
 *
 *   verbs_dev.c  device list, open, close, device/port/GID queries
 *   verbs_mr.c   protection domains and memory regions
 *   verbs_cq.c   completion queues and completion channels
 *   verbs_qp.c   queue pairs: state machine, posting
 *   verbs_srq.c  shared receive queues
 *   verbs_async.c asynchronous events (ibv_get_async_event)
 *
 * Settings (lib/conf): DPDAT_VERBS_DEVICE, DPDAT_VERBS_IPV4,
 * DPDAT_VERBS_MTU, DPDAT_VERBS_EAL, DPDAT_VERBS_OFFER, DPDAT_VERBS_QP_STATS.
 */

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rte_spinlock.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_mr.h>
#include <dpdat/dpdat_qp.h>

/* verbs.h makes these macros (inline wrappers of the exported calls) */
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define DV_NAME "dpdat0"
#define DV_MAX_QP 1024
#define DV_MAX_WR 4096
#define DV_MAX_CQE 65536
#define DV_MAX_RD 16		/* READs and atomics a responder answers */
#define DV_MAX_INLINE 256	/* IBV_SEND_INLINE bytes */
#define DV_VENDOR_ID 0x0	/* none assigned */
#define DV_RESOLVE_MS 3000	/* ARP for the peer at RTR */
#define DV_ASYNC_MAX 64		/* asynchronous events waiting */

#define DV_LOG(fmt, ...) fprintf(stderr, "dpdat-verbs: " fmt "\n", ##__VA_ARGS__)

struct dv_cq;
struct dv_srq;
struct dv_qp_async;

/* The asynchronous events of a context (verbs_async.c). */
struct dv_async {
	pthread_mutex_t lock;		/* all below */
	int efd;			/* async_fd: a count per event queued */
	struct ibv_async_event q[DV_ASYNC_MAX];
	uint32_t head, n;
	struct dv_cq *cqs;		/* every CQ: overruns */
	struct dv_srq *armed;		/* SRQs with a limit armed */
	uint32_t n_armed;		/* their count, read without the lock */
	/* QPs with an SRQ whose last WQE is not told yet */
	struct dv_qp_async *srq_qps;
	uint32_t n_srq_qps;		/* their count, read without the lock */
	uint64_t next_scan;		/* TSC: pollers scan SRQs, QPs after */
	/* IBV_EVENT_PORT_ACTIVE / PORT_ERR: the port's state last told
	 * (that of ibv_query_port at the context's opening, first) */
	bool port_active;
};

/* An open dpdat0 (one per ibv_open_device): the dpdat device, shared by
 * every context. */
struct dv_context {
	struct dpdat_dev *dev;
	struct dv_async async;
	struct verbs_context vc;	/* its ibv_context is handed out */
};

/* PD -> protection zone */
struct dv_pd {
	struct ibv_pd pd;
	struct dpdat_pz *pz;
};

/* MR -> LMR */
struct dv_mr {
	struct ibv_mr mr;
	struct dpdat_lmr *lmr;
};

/* A completion channel: its fd is an epoll set of its CQs' eventfds, each
 * in it one-shot, armed by ibv_req_notify_cq. */
struct dv_channel {
	struct ibv_comp_channel ch;
};

/* CQ -> dpdat CQ */
struct dv_cq {
	struct ibv_cq cq;
	struct dpdat_cq *dcq;
	int efd;			/* the dpdat CQ's eventfd, with a channel */
	/* pollers, and ibv_destroy_qp around its flush and purge: no poller
	 * sees a destroyed QP's completions or takes a live QP's out of
	 * order meanwhile */
	rte_spinlock_t poll_lock;
	/* completions taken out of dcq when a QP was destroyed (the others
	 * of its CQs' completions, kept for ibv_poll_cq, which takes these
	 * first): verbs leaves none of a destroyed QP in its CQs */
	pthread_mutex_t keep_lock;
	struct dpdat_wc *keep;
	uint32_t n_keep, keep_head;	/* n_keep read without the lock */
	/* asynchronous events (the context's async.lock) */
	struct dv_cq *async_next;
	uint64_t overruns_told;		/* dpdat_cq_overruns() last raised */
	bool err_queued;		/* its CQ error waits in the queue */
	uint32_t async_taken;		/* events taken by the program */
	bool took;			/* a poll took completions since the
					 * last drained one (ibv_poll_cq) */
};

/* Remove the completions of QP qpn (destroyed) from cq; its poll_lock
 * held. */
void dv_cq_purge(struct ibv_cq *cq, uint32_t qpn);

/* SRQ -> dpdat SRQ */
struct dv_srq {
	struct ibv_srq srq;
	struct dpdat_srq *dsrq;
	/* asynchronous events (the context's async.lock) */
	struct dv_srq *armed_next;
	bool armed;			/* on the context's armed list */
	uint32_t async_taken;		/* events taken by the program */
};

/* A QP's asynchronous event state, in its struct dv_qp (the context's
 * async.lock): IBV_EVENT_QP_LAST_WQE_REACHED for a QP with an SRQ. */
struct dv_qp_async {
	struct ibv_qp *qp;
	struct dpdat_qp *dqp;
	struct dv_qp_async *next;	/* on the context's srq_qps */
	bool listed;
	uint32_t taken;			/* events taken by the program */
};

/* The async state of one of our QPs. */
struct dv_qp_async *dv_qp_async_of(struct ibv_qp *qp);
/* Whether dpdat0's port is active, as ibv_query_port says. */
bool dv_port_active(struct dpdat_dev *dev);

extern struct ibv_device dv_device;
extern bool dv_offer;		/* DPDAT_VERBS_OFFER */
extern bool dv_qp_stats;	/* DPDAT_VERBS_QP_STATS */

static inline bool
dv_ours_dev(const struct ibv_device *d)
{
	return d == &dv_device;
}

static inline bool
dv_ours(const struct ibv_context *ctx)
{
	return ctx != NULL && ctx->device == &dv_device;
}

static inline struct dv_context *
dv_ctx(struct ibv_context *ctx)
{
	return (struct dv_context *)((char *)ctx -
		offsetof(struct dv_context, vc.context));
}

static inline bool
dv_ours_cq(const struct ibv_cq *cq)
{
	return cq != NULL && dv_ours(cq->context);
}

static inline bool
dv_ours_pd(const struct ibv_pd *pd)
{
	return pd != NULL && dv_ours(pd->context);
}

/* The system's libibverbs, for everything that is not dpdat0. */
void *dv_next(const char *name, const char *version);
#define NEXT(name, ver, type) ((type)dv_next(#name, ver))

/* A call dpdat0 does not have: say which, once per call (*said), and set
 * errno to err. */
void dv_unsupported(const char *call, int *said, int err);

/* Post a verbs receive list, one WR at a time, through post (to a QP's
 * receive queue or to an SRQ, target): 0, or the errno value of the first
 * WR not posted, *bad_wr set to it. */
typedef int (*dv_recv_post_fn)(void *target, const struct dpdat_recv_wr *w);

static inline int
dv_post_recv_list(dv_recv_post_fn post, void *target, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr)
{
	struct dpdat_recv_wr w;
	int ret;

	for (; wr != NULL; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > DPDAT_MAX_SGE) {
			*bad_wr = wr;
			return EINVAL;
		}
		w.wr_id = wr->wr_id;
		w.sg_list = (const struct dpdat_sge *)wr->sg_list;
		w.num_sge = (uint32_t)wr->num_sge;
		ret = post(target, &w);
		if (ret != 0) {
			*bad_wr = wr;
			return -ret;
		}
	}
	return 0;
}

/* Asynchronous events (verbs_async.c). init: 0 or an errno value. A CQ
 * is on its context's list from creation until its destruction is under
 * way (unlink; add again if it is refused); an SRQ while its limit is
 * armed (arm_srq: whether it was). forget, once the object's dpdat part is
 * freed: drops its queued events and waits until the program has
 * acknowledged those it took. */
int dv_async_init(struct dv_context *c);
void dv_async_fini(struct dv_context *c);
void dv_async_add_cq(struct dv_cq *c);
void dv_async_unlink_cq(struct dv_cq *c);
void dv_async_forget_cq(struct dv_cq *c);
bool dv_async_arm_srq(struct dv_srq *s, bool armed);
void dv_async_forget_srq(struct dv_srq *s);
/* A QP with an SRQ is listed from creation (and again from a reset; a
 * listed one stays as it is) until its last WQE is told or its
 * destruction begins (forget_qp: unlisted, its queued events dropped,
 * those taken acknowledged, before its dpdat QP goes); unlisted during a
 * reset (unlist_qp), whose passage through ERR is no last WQE. qp_erred: the
 * program moved one to ERR, the next poll looks. */
void dv_async_add_qp(struct dv_qp_async *q);
void dv_async_unlist_qp(struct dv_qp_async *q);
void dv_async_forget_qp(struct dv_qp_async *q);
void dv_async_qp_erred(struct ibv_context *ctx);
/* A poll found c drained: raise what its counters show; its overruns
 * only if took (a poll took completions since the last drained one: a
 * CQ that overran was full, so the polls that empty it take some; an
 * acknowledged CQ error, a purge and a busy async lock set it too). */
void dv_async_cq_drained(struct dv_cq *c, bool took);

/* The context operations of the other modules. */
void dv_cq_ops(struct verbs_context *vc);
void dv_qp_ops(struct verbs_context *vc);
void dv_srq_ops(struct verbs_context *vc);

#endif /* DPDAT_VERBS_PRIV_H */
