/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * dpdat-testpmd: an interactive shell over one dpdat device, in the spirit
 * of dpdk-testpmd. Objects the user creates (PZs, LMRs, RMRs, connections)
 * live in small tables and are named by their index there.
 */

#ifndef DPDAT_TESTPMD_H
#define DPDAT_TESTPMD_H

#include <stdbool.h>
#include <stdint.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_mr.h>
#include <dpdat/dpdat_qp.h>

#define TP_MAX_PZ	16
#define TP_MAX_LMR	64
#define TP_MAX_RMR	64
#define TP_MAX_CONN	16
#define TP_PATTERN_INC	0x100	/* byte i of a transfer is i & 0xff */

/* What a testpmd tells its peer in the CM private data: the region the
 * peer may read and write. */
struct tp_pdata {
	uint32_t magic;			/* TP_PDATA_MAGIC */
	uint32_t rkey;			/* 0: no remote access */
	uint64_t addr;
	uint64_t len;
} __attribute__((packed));
#define TP_PDATA_MAGIC	0x44545050u	/* "DTPP" */

struct tp_lmr {
	struct dpdat_lmr *lmr;
	uint8_t *mem;
	size_t len;
	bool huge;			/* dpdat_mem_alloc(), else mmap() */
	int pz;
};

enum tp_conn_state {
	TP_CONN_FREE = 0,
	TP_CONN_REQUEST,		/* a peer asks; accept or reject */
	TP_CONN_CONNECTING,
	TP_CONN_ESTABLISHED,
	TP_CONN_CLOSING,
};

struct tp_conn {
	enum tp_conn_state state;
	struct dpdat_cm_conn *cm;
	struct dpdat_qp *qp;
	struct dpdat_cq *cq;
	int lmr;			/* local memory of its transfers */
	uint32_t peer_ip;		/* network order */
	struct tp_pdata remote;		/* the peer's region */
	uint32_t recv_posted;
	int recv_pattern;		/* -1: do not check */
};

/* Events that `wait` can wait for; counted as they arrive. */
enum tp_event {
	TP_EV_REQUEST, TP_EV_ESTABLISHED, TP_EV_REJECTED, TP_EV_DISCONNECTED,
	TP_EV_RECV, TP_EV_LINK, TP_EV_COUNT
};

struct tp {
	struct dpdat_dev *dev;
	struct dpdat_cm_eq *eq;
	struct dpdat_pz *pz[TP_MAX_PZ];
	struct tp_lmr lmr[TP_MAX_LMR];
	struct dpdat_rmr *rmr[TP_MAX_RMR];
	struct tp_conn conn[TP_MAX_CONN];
	struct dpdat_cm_listener *listener[TP_MAX_CONN];
	uint64_t listen_qual[TP_MAX_CONN];
	uint32_t pending[TP_EV_COUNT];	/* arrived, not yet waited for */
	bool link_up;
	bool quit;
};

extern struct tp tp;

/* commands.c: the command table, run one line. */
int tp_cmdline_ctx_init(void);
extern void *tp_cmdline_ctx[];	/* cmdline_parse_ctx_t[] */
int tp_run_line(char *line);
void tp_lmr_mem_free(struct tp_lmr *l);
extern int tp_last_status;	/* of the last command the shell ran */

/* events.c: CM events, receive completions, link state. */
void tp_events_poll(void);
int tp_events_wait(enum tp_event ev, double secs);
/* The same without the message on timeout. */
int tp_events_wait_quiet(enum tp_event ev, double secs);
int tp_conn_poll_wc(struct tp_conn *c, struct dpdat_wc *wc, double secs);
void tp_conn_release(struct tp_conn *c);

/* traffic.c: transfers and their verification. */
int tp_pattern_parse(const char *s, int *pattern);
void tp_pattern_fill(uint8_t *p, size_t len, int pattern);
int tp_pattern_check(const uint8_t *p, size_t len, int pattern, size_t *bad);
int tp_cmd_write(struct tp_conn *c, uint64_t size, int pattern, uint64_t off);
int tp_cmd_read(struct tp_conn *c, uint64_t size, int pattern, uint64_t off);
int tp_cmd_send(struct tp_conn *c, uint64_t size, int pattern);
int tp_cmd_recv(struct tp_conn *c, uint64_t size, int pattern);
int tp_cmd_stream(struct tp_conn *c, bool read, uint64_t size,
		  uint32_t depth, double secs);

#endif /* DPDAT_TESTPMD_H */
