/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef RSM_PRIV_H
#define RSM_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include <rte_log.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_env.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_qp.h>
#include <rsm/rsmapi.h>

extern int rsm_logtype;
#define RSM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, rsm_logtype, "rsm: " fmt "\n", ##__VA_ARGS__)

/* The exporter's service: one listener per controller on this conn_qual. */
#define RSM_SERVICE		0x52534d0000000001ULL
#define RSM_WIRE_MAGIC		0x52534d31u	/* "RSM1" */
#define RSM_MAX_NODES		64
#define RSM_SLOTS		64	/* signal receive buffers per segment */
#define RSM_SLOTS_PER_CONN	4
#define RSM_SLOT_SIZE		64
#define RSM_STAGE_SIZE		(1u << 20)	/* also the largest READ/WRITE */
#define RSM_SQ_DEPTH		256	/* send WRs in flight per import */
#define RSM_WAIT_MS		10000

enum rsm_req_op { RSM_OP_NEW = 1, RSM_OP_RESUME, RSM_OP_BYE };

/* Supplementary groups an importer sends: what the REQ has room for. */
#define RSM_REQ_GROUPS		13

/* REQ private data (at most DPDAT_CM_REQ_PDATA_MAX bytes). */
struct rsm_req {
	uint32_t magic;
	uint32_t op;
	uint32_t segid;
	uint32_t perm;		/* RSM_PERM_* asked for */
	uint32_t node;		/* the importer's node id, as it believes */
	uint32_t uid, gid;	/* effective ids: owner, group or other digit */
	uint64_t ticket;	/* RESUME and BYE: the import being resumed */
	uint32_t ngroups;	/* supplementary groups: all of them, */
	uint32_t groups[RSM_REQ_GROUPS];	/* the first ones */
} __attribute__((packed));

_Static_assert(sizeof(struct rsm_req) <= DPDAT_CM_REQ_PDATA_MAX,
	       "the REQ private data holds an rsm_req");

/* Who asks for an import, as its REQ says. */
struct rsm_cred {
	uint32_t uid, gid;
	uint32_t ngroups;
	uint32_t groups[RSM_REQ_GROUPS];
};

/* REP (status 0) or REJ (status RSMERR_*) private data. */
struct rsm_rep {
	uint32_t magic;
	uint32_t status;
	uint64_t addr, len;
	uint32_t rkey, gen;
	uint64_t ticket;
} __attribute__((packed));

/* An import the exporter granted: survives reconnections (rebind, errors)
 * so that an existing import keeps its rights after republish. */
struct rsm_ticket {
	TAILQ_ENTRY(rsm_ticket) next;
	uint64_t id;		/* random */
	uint32_t ip;		/* the importer's address: resumes come from it */
	uint32_t need;		/* 4 read, 2 write, 6 both */
};

struct rsm_econn {
	TAILQ_ENTRY(rsm_econn) next;
	struct dpdat_cm_conn *cm;
	struct dpdat_qp *qp;
	uint64_t ticket;
};

struct rsm_ctlr;

struct rsm_export {
	TAILQ_ENTRY(rsm_export) next;
	struct rsm_ctlr *ctlr;
	pid_t creator;
	uint_t flags;
	void *vaddr;
	size_t size;
	mode_t cmask;		/* 0666 & ~umask at creation: the NULL ACL */
	uid_t uid;		/* the owner: effective ids at creation */
	gid_t gid;
	struct dpdat_lmr *lmr;
	struct dpdat_rmr *rmr[8];	/* by need: 2, 4, 6 */
	uint32_t rkey[8];
	uint32_t gen;
	int published;
	rsm_memseg_id_t id;
	rsmapi_access_entry_t *acl;	/* NULL: any node */
	uint_t nacl;
	struct dpdat_cq *cq;		/* the QPs of its importers */
	int pollfd_in_use;
	uint8_t *slots;			/* RSM_SLOTS x RSM_SLOT_SIZE */
	struct dpdat_lmr *slot_lmr;
	struct rsm_econn *slot_owner[RSM_SLOTS];
	TAILQ_HEAD(, rsm_econn) conns;
	TAILQ_HEAD(, rsm_ticket) tickets;
};

struct rsm_import {
	TAILQ_ENTRY(rsm_import) next;
	struct rsm_ctlr *ctlr;
	rsm_node_id_t node;
	uint32_t ip;
	rsm_memseg_id_t segid;
	rsm_permission_t perm;
	uint64_t ticket;
	uint64_t raddr, rlen;
	uint32_t rkey, gen;
	struct dpdat_cm_eq *eq;
	struct dpdat_cq *cq;
	struct dpdat_qp *qp;
	struct dpdat_cm_conn *conn;
	int broken;		/* the connection is gone: resume first */
	int dead;		/* resume refused: every op fails */
	rsm_barrier_mode_t mode;
	uint8_t *stage;
	struct dpdat_lmr *stage_lmr;
	size_t stage_used;	/* explicit mode: puts in flight */
	int lmh_posted;		/* explicit puts from a local memory handle
				 * since the last drain: they still read it */
	unsigned int outstanding;
	uint64_t failures;	/* transfers that failed, ever */
	uint64_t bar_mark;	/* failures when the barrier opened */
	int bar_open;
	int signal_pending;
};

/* A local memory handle: [vaddr, vaddr + len) registered as an LMR with
 * local rights in the controller's PZ, which READs and WRITEs of getv and
 * putv reach directly (no staging copy). */
struct rsm_lmh {
	TAILQ_ENTRY(rsm_lmh) next;
	char *vaddr;
	size_t len;
	struct dpdat_lmr *lmr;
	uint32_t lkey;
};

struct rsm_ctlr {
	int present;
	int refs;
	int opened;
	char name[32];
	pthread_mutex_t lock;
	struct dpdat_dev *dev;
	struct dpdat_pz *pz;
	struct dpdat_cm_eq *eq;
	struct dpdat_cm_listener *listener;
	pthread_t svc;
	volatile int stop;
	rsm_node_id_t node;
	unsigned int n_nodes;
	struct { rsm_node_id_t id; uint32_t ip; } nodes[RSM_MAX_NODES];
	size_t page, max_seg, tot_export, exported;
	unsigned int max_segs, n_segs;
	uint32_t next_id;
	TAILQ_HEAD(, rsm_export) exports;
	TAILQ_HEAD(, rsm_import) imports;
	TAILQ_HEAD(, rsm_lmh) lmhs;
};

extern struct rsm_ctlr rsm_ctlr0;

/* ctlr.c */
/* DPDAT_RSM_NODES, "1=198.18.0.1,2=198.18.0.2", into c->nodes: 0, or -1
 * when it is malformed (an id 0 or above 32 bits, a bad address, an id
 * twice, more than RSM_MAX_NODES, none at all, above 2047 bytes). */
int rsm_parse_nodes(struct rsm_ctlr *c, const char *s);
struct rsm_ctlr *rsm_ctlr_check(rsmapi_controller_handle_t h, int *err);
uint32_t rsm_node_ip(const struct rsm_ctlr *c, rsm_node_id_t node);
rsm_node_id_t rsm_ip_node(const struct rsm_ctlr *c, uint32_t ip);
void *rsm_service(void *arg);
/* One event of the controller's listener queue, as the service thread
 * handles it: a request (rsm_export_request) or the end of an exporter's
 * connection (rsm_export_conn_gone). Also the fuzz harness's entry. */
void rsm_service_event(struct rsm_ctlr *c, struct dpdat_cm_event *ev);
int rsm_probe(void *vaddr, size_t size);
rsm_node_id_t dpdat_rsm_local_node(void);

/* export.c */
struct rsm_export *rsm_export_find(struct rsm_ctlr *c, const void *h);
int rsm_perm_check(const rsmapi_access_entry_t *acl, uint_t nacl,
		   mode_t cmask, uid_t owner, gid_t group, rsm_node_id_t node,
		   const struct rsm_cred *who, uint32_t need);
/* The rights of an import, by ticket: a random one, bound to the
 * importer's address (ip, network order). Caller holds the controller's
 * lock. */
struct rsm_ticket *rsm_ticket_add(struct rsm_export *e, uint32_t ip,
				  uint32_t need);
struct rsm_ticket *rsm_ticket_find(const struct rsm_export *e, uint64_t id,
				   uint32_t ip, bool any_ip);
void rsm_export_request(struct rsm_ctlr *c, struct dpdat_cm_event *ev);
void rsm_export_conn_gone(struct rsm_ctlr *c, struct dpdat_cm_event *ev);
int rsm_export_signal_wait(struct rsm_export *e, int timeout);
int rsm_export_pollfd(struct rsm_export *e, struct pollfd *fd, int get);

/* segid.c: the ranges of the segment id file, fn called for each in file
 * order with its first and last id (64-bit, end included), and only once
 * the whole file has been checked. fn returns 0 to go on; any other value
 * stops the walk and is returned (one to tell apart from the walk's own
 * codes must be none of them: 1 will do). Otherwise 0 when every range was
 * walked, -ENOENT when there is no file (not logged), RSMERR_BAD_CONF when
 * it cannot be read or is malformed (logged), RSMERR_INSUFFICIENT_MEM. The
 * file is read and parsed anew on every call: callers are control path. */
typedef int (*rsm_segid_fn)(const char *appid, uint64_t base, uint64_t end,
			    void *arg);
int rsm_segid_walk(rsm_segid_fn fn, void *arg);

/* import.c */
struct rsm_import *rsm_import_find(struct rsm_ctlr *c, const void *h);
/* The exporter's answer to a connect or resume, as the event of the
 * import's connection carries it: 0 when it is a REP with an rsm_rep of
 * status 0 (the segment's address, length, rkey, generation and ticket
 * are then taken into m), else the RSMERR code to report. */
int rsm_import_reply(struct rsm_import *m, const struct dpdat_cm_event *ev);

#endif /* RSM_PRIV_H */
