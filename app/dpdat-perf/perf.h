/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_PERF_H
#define DPDAT_PERF_H

/*
 * dpdat-perf: perftest's tests over a transport. main.c parses the flags,
 * prints the banner and the tables and writes the JSON; a transport (dpdat,
 * kernel UDP, kernel verbs) connects and runs one size of one test.
 */

#include <stdint.h>

#define PERF_MAX_SIZE	(8u << 20)	/* -a goes up to 2^23, as perftest */
#define PERF_MAX_QPS	1024	/* the dpdat transport's; verbs: 16 */
#define PERF_MAX_CLIENTS 64	/* --clients */
#define PERF_MAX_DEPTH	256
#define PERF_WAIT_CLIENT_MS 300000	/* how long a server waits for a client */
/* Latency tests: untimed round trips before the timed ones (--warmup,
 * perf_warmup()). On these VMs the first touch of a page costs
 * microseconds, and a link's rings (memif: 1024 slots a direction, one a
 * small message's round trip) and its mbufs are new memory until every
 * slot was used once: 2048 round trips cover two passes over the rings. */
#define PERF_WARMUP	2048
#define PERF_MAX_WARMUP	10000000
/* The registered buffer: two halves (what we send from, what the peer
 * writes or sends into) and, past them, the mailbox through which -b
 * tells the peer its figures (our outgoing copy, then the peer's). */
#define PERF_MBOX		(2 * (uint64_t)PERF_MAX_SIZE)
#define PERF_MBOX_IN		(PERF_MBOX + 64)
#define PERF_BUF_BYTES		(PERF_MBOX + 4096)
#define PERF_BANNER_QPS		8	/* "local address" lines shown in full */

enum perf_test { W_BW, W_LAT, R_BW, R_LAT, S_BW, S_LAT, N_TESTS };

static inline int
perf_is_lat(uint32_t test)
{
	return test & 1;
}

/* What the client tells the server (CM private data, UDP hello); the
 * server answers with its buffer's address and key. Host byte order. */
struct perf_params {
	uint32_t test, size, iters, depth, all, secs, qps;
	uint64_t addr;
	uint32_t rkey;
	uint32_t bidir;		/* -b: the server streams too */
	uint32_t engines;	/* dpdat --engines: the server must match */
	uint32_t warmup;	/* lat: round trips before the timed ones */
} __attribute__((packed));

/* The command line. */
/* dpdat's latency tests: how long an ACK waits for the answer to ride on
 * (their engine polls inline, where the library holds none by default) */
#define PERF_ACK_HOLD_NS 2000

struct perf_opts {
	enum perf_test test;
	int server, all, gbits;
	const char *peer, *dev, *ip, *json;
	const char *ibdev;	/* perftest's -d */
	uint32_t size, iters, depth, secs, qps;
	uint32_t warmup;	/* --warmup, lat: untimed round trips first */
	int warmup_set;
	uint16_t pmtu, mtu, service;
	int mtu_set;		/* --port_mtu given */
	int pin;		/* --cpu given */
	unsigned int cpu;
	int gbn;		/* --go-back-n */
	uint32_t ack_hold_ns;	/* --ack-hold: dpdat_dev_conf.ack_hold_ns (0:
				 * not given: PERF_ACK_HOLD_NS in the latency
				 * tests, else the library's default) */
	uint32_t engines;	/* --engines, 0: one */
	uint32_t clients;	/* --clients, server: clients served at once
				 * (0: one) */
	int bidir;		/* -b */
	/* bw: WRs a post call (-l), one WR in cq_mod signalled (--cq-mod,
	 * perftest's default once parsed) */
	uint32_t post_list, cq_mod;
	int cq_mod_set;
};

extern struct perf_opts perf_opt;

/* One size of a bandwidth test, as the client saw it. */
struct perf_bw {
	uint64_t iters;		/* messages that completed (were delivered) */
	double secs;
	double peak;		/* bytes per second over the best 100 ms */
	uint64_t lost;		/* datagrams lost (UDP only) */
	/* -b: the peer's stream, as it measured it; 0 otherwise */
	double peer_avg, peer_peak;	/* bytes per second */
	double peer_rate;		/* messages per second */
};

/* What the banner says about a connection. */
struct perf_info {
	char dev[64];
	const char *type;	/* "Transport type" */
	const char *cm;		/* "rdma_cm QPs" */
	const char *exchange;	/* "Data ex. method" */
	uint32_t mtu;
	int nlocal;
	char local[PERF_MAX_QPS][96];	/* one "local address" line a QP */
};

/* A transport. The client calls bw() or lat() once a size; the server
 * calls serve() once, which runs until the client ends the test. */
struct perf_transport {
	const char *name;
	uint32_t max_qps;
	void (*setup)(void);
	/* Client: sends *pr. Server: waits for a client, fills *pr. */
	void (*connect)(struct perf_params *pr, struct perf_info *info);
	void (*bw)(const struct perf_params *pr, uint32_t size,
		   struct perf_bw *res);
	/* rtt: pr->iters round trips in microseconds, after pr->warmup
	 * untimed ones */
	void (*lat)(const struct perf_params *pr, uint32_t size, double *rtt);
	void (*serve)(const struct perf_params *pr);
	void (*finish)(void);
};

extern const struct perf_transport perf_dpdat, perf_udp, perf_verbs, perf_raw,
				   perf_bare;

/* tr_dpdat.c, for the raw baseline on the same device: the device, the
 * path MTU its connection settled on, the registered buffer */
struct dpdat_dev *perf_dpdat_dev(void);
/* Free what the dpdat transport made, its devices last. */
void perf_dpdat_teardown(void);
uint16_t perf_dpdat_pmtu(void);
uint8_t *perf_raw_buf(void);

static inline uint32_t
perf_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The untimed round trips before a size's timed ones: pr->warmup, but no
 * more than carry pr->warmup * 4 KiB (as many frames at memif's PMTU: a
 * pass over the rings), at least one; both sides count the same. */
static inline uint32_t
perf_warmup(const struct perf_params *pr, uint32_t size)
{
	uint64_t by_bytes = (uint64_t)pr->warmup * 4096 / (size ? size : 1);

	if (pr->warmup == 0)
		return 0;
	return by_bytes == 0 ? 1 : by_bytes < pr->warmup ? (uint32_t)by_bytes :
							     pr->warmup;
}

static inline uint32_t
perf_max(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* The sizes of a run: -s, or 2 .. 2^23 with -a. */
static inline uint32_t
perf_first_size(const struct perf_params *pr)
{
	return pr->all ? 2 : pr->size;
}

static inline uint32_t
perf_next_size(const struct perf_params *pr, uint32_t size)
{
	return pr->all && size < PERF_MAX_SIZE ? size * 2 : 0;
}

__attribute__((format(printf, 1, 2), noreturn)) void
perf_die(const char *fmt, ...);

/* Parameters a server got from the network: 0 if sane. */
int
perf_params_check(const struct perf_params *pr);

uint64_t
perf_now_ns(void);

/* Bandwidth meter: the peak over 100 ms windows and the average. */
struct perf_meter {
	uint64_t t0, now, tl, last;
	double peak;
};

void
perf_meter_start(struct perf_meter *m);

/* Note that done messages completed so far; updates m->now. */
void
perf_meter_tick(struct perf_meter *m, uint64_t done, uint32_t size);

void
perf_meter_end(struct perf_meter *m, uint64_t done, uint32_t size,
	       struct perf_bw *res);

/* Whether a bandwidth client posts more: -n messages or -D seconds. */
static inline int
perf_more(const struct perf_params *pr, const struct perf_meter *m,
	  uint64_t posted)
{
	return pr->secs ? m->now - m->t0 < pr->secs * 1000000000ull :
			  posted < pr->iters;
}

/*
 * The RDMA tests written once for the two verbs-like transports (dpdat and
 * kernel verbs): a transport fills a perf_rdma and calls perf_rdma_use(),
 * and its table points bw, lat and serve at perf_rdma_*.
 */
enum perf_op { PERF_WRITE, PERF_READ, PERF_SEND };

struct perf_wc {
	uint64_t id;		/* wr_id */
	int recv;		/* a receive completed */
	int flushed;		/* the QP failed or was disconnected */
};

struct perf_rdma {
	uint8_t *buf;		/* PERF_BUF_BYTES, registered */
	uint32_t nqp;
	/* loff, roff: offsets in our buffer and the peer's; waits while the
	 * queue is full */
	void (*post)(uint32_t q, enum perf_op op, uint32_t size, uint64_t loff,
		     uint64_t roff, int signaled, uint64_t id);
	/* n WRs of op as one list (-l), from the buffer's start to the
	 * peer's; ids[j] the wr_id of a signalled WR, 0 for an unsignalled
	 * one; waits while the queue is full. NULL: n calls of post. */
	void (*post_list)(uint32_t q, enum perf_op op, uint32_t size,
			  uint32_t n, const uint64_t *ids);
	void (*post_recv)(uint32_t q, uint32_t size, uint64_t id);
	/* up to n completions; exits on an error completion other than
	 * a flush */
	int (*poll)(struct perf_wc *wc, int n);
	void (*progress)(void);	/* while spinning on memory */
	/* write_lat as ib_write_lat: every WRITE signaled and its completion
	 * polled for before the spin (verbs: under dpdat-run only polls move
	 * the transport at once; a program that spins on memory leaves it
	 * to the engine thread, and on two cores to the scheduler) */
	int wait_writes;
	int (*peer_gone)(void);	/* the client disconnected */
};

void
perf_rdma_use(const struct perf_rdma *r);

void
perf_rdma_bw(const struct perf_params *pr, uint32_t size, struct perf_bw *res);

void
perf_rdma_lat(const struct perf_params *pr, uint32_t size, double *rtt);

void
perf_rdma_serve(const struct perf_params *pr);

#endif /* DPDAT_PERF_H */
