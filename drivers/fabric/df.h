/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The libfabric provider ("df_", provider name "dpdat"): libfabric's
 * objects over dpdat's native API, loaded by libfabric from
 * FI_PROVIDER_PATH (or its provider directory) as libdpdat-fi.so.
 *
 * One dpdat device per process (one DPDK EAL), opened at the first
 * fi_getinfo from the FI_DPDAT_* settings and kept until the process ends
 * (as the DAT plug-in keeps its devices: closing a memif port while its
 * control thread runs is not safe in DPDK 22.11). A fabric and a domain
 * are views of it; the domain owns a protection zone.
 *
 * Objects and their native counterparts:
 *   fi_mr       dpdat LMR (key: its RMR context, or its LMR context when
 *               no remote access was asked; desc: the df_mr)
 *   fi_cq       dpdat CQ (wait object: its eventfd)
 *   fi_eq       dpdat CM event queue, plus a queue of its own for the
 *               events converted or written (fi_eq_write)
 *   fi_pep      dpdat CM listener on the port of its address
 *   fi_ep (MSG) dpdat QP, connected by dpdat's CM (connect data = private
 *               data); created at fi_enable, when its CQs are bound
 *
 * Addresses are FI_SOCKADDR_IN: the port's IPv4 and a 16-bit service
 * number, which is the CM's conn_qual in the IP CM's port space (where
 * rdma_cm peers listen too). Work requests carry the application's
 * context as wr_id.
 *
 * Locking: every object has its own mutex where libfabric may call it
 * from several threads (FI_THREAD_SAFE); the native calls used under them
 * are thread safe themselves.
 */

#ifndef DPDAT_FABRIC_DF_H
#define DPDAT_FABRIC_DF_H

#include <netinet/in.h>
#include <stddef.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_mr.h>
#include <dpdat/dpdat_port.h>
#include <dpdat/dpdat_qp.h>

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

#define DF_PROV_NAME		"dpdat"
#define DF_FABRIC_NAME		"dpdat"
#define DF_VERSION		FI_VERSION(0, 1)
#define DF_API_VERSION		FI_VERSION(1, 17)

/* What the provider offers (and enforces). */
#define DF_CAPS		(FI_MSG | FI_RMA | FI_SEND | FI_RECV | FI_READ | \
			 FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | \
			 FI_LOCAL_COMM | FI_REMOTE_COMM)
#define DF_MODE		(FI_RX_CQ_DATA)
#define DF_MR_MODE	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
			 FI_MR_PROV_KEY)
#define DF_MAX_MSG	(1ull << 30)
#define DF_TX_SIZE	1024
#define DF_RX_SIZE	1024
#define DF_IOV_LIMIT	DPDAT_MAX_SGE
/* Connection data travels in the CM messages' private data after a byte
 * that says its length (the IB CM's private data has a fixed size), as
 * libfabric's verbs provider frames it: what is left for the application,
 * in a REQ (the smallest: to a port of the IP CM's), a REP and a REJ. */
#define DF_CM_DATA	(DPDAT_CM_REQ_PDATA_MAX_IP - 1)
#define DF_ACCEPT_DATA	(DPDAT_CM_REP_PDATA_MAX - 1)
#define DF_REJECT_DATA	(DPDAT_CM_REJ_PDATA_MAX - 1)
#define DF_MAX_EP	1024
#define DF_CQ_SIZE	4096
#define DF_CQ_MAX	(1u << 18)
#define DF_EQ_SIZE	256

extern struct fi_provider df_prov;

#define DF_WARN(subsys, ...) FI_WARN(&df_prov, subsys, __VA_ARGS__)
#define DF_INFO(subsys, ...) FI_INFO(&df_prov, subsys, __VA_ARGS__)
#define DF_DBG(subsys, ...) FI_DBG(&df_prov, subsys, __VA_ARGS__)

/* ---- provider.c ---- */

/* The process's device and its address (opened at the first use). */
struct df_dev {
	struct dpdat_dev *dev;
	uint32_t ipv4;			/* network order */
	char name[64];			/* DPDK device name: the domain's */
	uint16_t pmtu;
	/* FI_DPDAT_PROGRESS: anything but manual progresses by itself
	 * (FI_PROGRESS_AUTO; see provider.c) */
	bool auto_progress;
};

/* The application's reads that ran the engine (progress=auto: the
 * progress thread backs off while this moves; provider.c). */
extern uint64_t df_reads;
#define DF_TICK_IDLE_US	10000u

static inline void
df_read_mark(void)
{
	__atomic_store_n(&df_reads, __atomic_load_n(&df_reads,
		__ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* The device, opened on first use; NULL (logged) when it cannot be. */
const struct df_dev *df_dev_get(void);
/* An errno value (positive) as a libfabric error (negative). */
int df_errno(int err);

/* ---- fabric.c ---- */

struct df_fabric {
	struct fid_fabric fabric_fid;
	const struct df_dev *dev;
	uint32_t refs;			/* domains, EQs, passive endpoints */
};

static inline void
df_fabric_use(struct df_fabric *f, int n)
{
	__atomic_add_fetch(&f->refs, (uint32_t)n, __ATOMIC_ACQ_REL);
}

int df_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		   void *context);
int df_getinfo(uint32_t version, const char *node, const char *service,
	       uint64_t flags, const struct fi_info *hints,
	       struct fi_info **info);

/* ---- domain.c ---- */

struct df_domain {
	struct fid_domain domain_fid;
	struct df_fabric *fabric;
	const struct df_dev *dev;
	struct dpdat_pz *pz;
	uint32_t refs;			/* MRs, CQs, EPs */
	pthread_mutex_t lock;
};

struct df_mr {
	struct fid_mr mr_fid;
	struct df_domain *domain;
	struct dpdat_lmr *lmr;
	uint32_t lkey;
};

int df_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_domain **domain, void *context);
/* The local key of a descriptor (NULL: none, with FI_MR_LOCAL an error). */
static inline int
df_desc_lkey(void *desc, uint32_t *lkey)
{
	if (desc == NULL)
		return -FI_EINVAL;
	*lkey = ((struct df_mr *)desc)->lkey;
	return 0;
}

/* ---- cq.c ---- */

#define DF_CQ_BACKLOG	64

struct df_cq {
	struct fid_cq cq_fid;
	struct df_domain *domain;
	struct dpdat_cq *cq;
	enum fi_cq_format format;
	enum fi_wait_obj wait_obj;
	uint32_t refs;			/* EPs bound */
	pthread_mutex_t lock;
	/* completions taken from the native CQ, not yet handed out: the
	 * rest of a batch after an error */
	struct dpdat_wc backlog[DF_CQ_BACKLOG];
	unsigned int bl_head, bl_n;
	bool signaled;			/* fi_cq_signal: wake a sread */
};

int df_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
	       struct fid_cq **cq, void *context);
/* fi_trywait on a CQ: 0, or -FI_EAGAIN when completions are ready. */
int df_cq_trywait(struct fid *fid);

/* ---- eq.c ---- */

/* One event, converted or written, as fi_eq_read hands it out. */
struct df_eq_ev {
	STAILQ_ENTRY(df_eq_ev) next;
	uint32_t event;
	bool err;
	bool written;			/* by fi_eq_write */
	size_t len;
	uint8_t err_data[DPDAT_CM_DREQ_PDATA_MAX];	/* the REJ's data */
	union {	/* last: fi_eq_cm_entry ends in its data */
		struct fi_eq_cm_entry cm;
		struct fi_eq_entry entry;
		struct fi_eq_err_entry err_entry;
		uint8_t raw[sizeof(struct fi_eq_cm_entry) + DPDAT_CM_DREQ_PDATA_MAX];
	} u;
};

struct df_eq {
	struct fid_eq eq_fid;
	struct df_fabric *fabric;
	struct dpdat_cm_eq *cmeq;
	enum fi_wait_obj wait_obj;
	pthread_mutex_t lock;
	STAILQ_HEAD(, df_eq_ev) evs;
	uint32_t n_evs;
	uint32_t refs;			/* PEPs and EPs bound */
	LIST_HEAD(, df_ep) eps;		/* EPs bound, to find a conn's */
	LIST_HEAD(, df_pep) peps;
	int efd;			/* readable while events wait (FD) */
	struct df_eq_ev *err_held;	/* the error fi_eq_read said waits */
};

int df_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
	       struct fid_eq **eq, void *context);
/* fi_trywait on an EQ: 0, or -FI_EAGAIN when events are ready. */
int df_eq_trywait(struct fid *fid);

/* ---- ep.c ---- */

enum df_ep_state {
	DF_EP_IDLE = 0,		/* created; not enabled */
	DF_EP_ENABLED,		/* QP created */
	DF_EP_CONNECTING,	/* fi_connect or fi_accept called */
	DF_EP_CONNECTED,
	DF_EP_SHUTDOWN,		/* disconnected, rejected or broken */
};

/* A connection request as fi_info's handle carries it. The application's
 * fi_info holds it until fi_accept (which frees it) or fi_reject; an
 * endpoint opened for it that closes unaccepted rejects the request and
 * leaves it a tombstone (conn NULL) for a fi_reject to free (ofi_rxm
 * closes the endpoint, then rejects). */
struct df_connreq {
	struct fid fid;			/* FI_CLASS_CONNREQ */
	struct dpdat_cm_conn *conn;	/* NULL: answered already */
	struct df_ep *ep;		/* the endpoint opened for it */
	struct sockaddr_in peer;
};

struct df_ep {
	struct fid_ep ep_fid;
	struct df_domain *domain;
	struct fi_info *info;
	struct df_cq *send_cq, *recv_cq;
	uint64_t send_flags, recv_flags;	/* bind flags */
	struct df_eq *eq;
	struct dpdat_qp *qp;
	struct dpdat_cq *own_cq;	/* for a CQ not bound */
	struct dpdat_cm_conn *conn;
	struct df_connreq *connreq;	/* passive: the request to accept */
	enum df_ep_state state;
	struct sockaddr_in src, dst;
	uint64_t tx_op_flags, rx_op_flags;
	pthread_mutex_t lock;
	LIST_ENTRY(df_ep) eq_next;
};

struct df_pep {
	struct fid_pep pep_fid;
	struct df_fabric *fabric;
	struct fi_info *info;
	struct df_eq *eq;
	struct dpdat_cm_listener *listener;
	struct sockaddr_in src;
	bool bound;			/* a port chosen (setname or info) */
	LIST_ENTRY(df_pep) eq_next;
};

int df_ep_open(struct fid_domain *domain, struct fi_info *info,
	       struct fid_ep **ep, void *context);
int df_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		struct fid_pep **pep, void *context);

/* ep.c: the private data of a CM message for data[len] (framed). */
uint16_t df_cm_frame(uint8_t *pd, const void *data, size_t len);
/* eq.c: the application's part of an event's private data. */
size_t df_cm_unframe(const struct dpdat_cm_event *ev, const uint8_t **data);
/* eq.c: events still queued for an endpoint that closes go with it. */
void df_eq_forget(struct df_eq *eq, const struct fid *fid);
/* eq.c: a passive endpoint closes: the requests it has not handed out
 * are rejected. Under the EQ lock, the listener freed already. */
void df_eq_drop_pep(struct df_eq *eq, struct df_pep *pep);

/* eq.c: converting a CM event needs the EP it is about. */
struct df_ep *df_eq_find_ep(struct df_eq *eq, struct dpdat_cm_conn *conn);
void df_ep_cm_event(struct df_ep *ep, const struct dpdat_cm_event *ev);

/* ---- stubs.c: what is not supported ---- */

int df_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int df_no_control(struct fid *fid, int command, void *arg);
int df_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		   void **ops, void *context);
extern struct fi_ops_tagged df_no_tagged_ops;
extern struct fi_ops_atomic df_no_atomic_ops;
extern struct fi_ops_collective df_no_collective_ops;

#endif /* DPDAT_FABRIC_DF_H */
