/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The RC engine between two processes over memif.
 *   rc_test server|client <socket> [options]
 * The client drives; the server answers. For every size, on every QP:
 *   1. WRITE (depth writes of the pattern, the last with immediate data)
 *      -> the server checks every byte of its buffer and SENDs a verdict;
 *   2. READ the server buffer back into a fresh local buffer, check it;
 *   3. SEND the pattern into the server's posted receive -> verdict.
 * Every work request must complete exactly once, successfully, in order.
 * Options: --pmtu N, --sizes a,b,..., --qps N (up to 256), --depth N,
 * --plain (malloc memory instead of dpdat_mem_alloc), --thread (engine
 * thread), --mtu N,
 * --go-back-n server|client|both (that side never selective repeat),
 * --expect-ext sack|none (what the connection must settle on; with none,
 * no selective repeat may have happened on either side), --lists K (post
 * lists instead, below), --ack-hold NS (an owed ACK waits up to NS for a
 * request to ride on), --expect-ride yes|no (ACKs rode on requests both
 * ways / none did and riding was not agreed), --rounds N (the sizes
 * N times over).
 * With --lists K, each round on each QP is LIST_WRS work requests, a mix
 * of WRITEs, READs of what a WRITE before them wrote and SENDs, posted in
 * lists of 1 to 16 (dpdat_post_send_burst) with only every K-th and the
 * last signalled: exactly those complete, once, in order; the READs bring
 * back what was written, the server checks every WRITE and SEND.
 * QP details are exchanged through files next to the socket (out of band,
 * until connection management).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_qp.h>
#include "harness.h"

#define MAX_QPS 256
#define TIMEOUT_S 60
#define CTRL 64			/* verdict / control message bytes */

struct side {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	uint8_t mac[6];
	uint32_t ip;
};

struct conn {
	struct dpdat_qp *qp;
	struct dpdat_cq *cq;	/* send completions */
	struct dpdat_cq *rcq;	/* receive completions: they may overtake */
	uint8_t *buf;		/* data area: max size * depth */
	uint8_t *ctrl;		/* receive slots for control messages */
	struct dpdat_lmr *lmr, *cl;
	uint32_t lkey, ckey;
	struct side peer;
};

static struct {
	int server, plain, thread, nqps, depth, mtu_set;
	uint16_t pmtu, mtu;
	uint64_t sizes[16];
	int nsizes;
	const char *sock;
	const char *fault;
	int retry;
	int expect_zc;
	int expect_zc_read;	/* server: READ responses went zero-copy */
	uint16_t expect_pmtu;	/* the PMTU the connection must settle on */
	int oob;	/* connect out of band (explicit PMTU, retry count) */
	int gbn;	/* this side refuses selective repeat */
	int expect_ext;	/* -1: no check, else DPDAT_QP_EXT_* */
	int lists;	/* post lists, one WR in lists signalled */
	uint32_t ack_hold;	/* ns; 0: the library's default (inline: none) */
	int rounds;	/* of the sizes */
	int expect_ride;	/* -1: no check, 0: none, 1: both ways */
} o = { .retry = 7, .nqps = 1, .depth = 4, .pmtu = 1024, .mtu = 1500,
	.expect_ext = -1, .expect_ride = -1, .rounds = 1 };

static struct dpdat_dev *dev;
static struct dpdat_pz *pz;
static struct conn c[MAX_QPS];
static uint64_t maxsz;

static void print_stats(void);
static int failing;	/* print_stats() dumps the QPs too */
#define FAIL(...) do { fprintf(stderr, "%s: ", o.server ? "server" : "client"); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failing = 1; \
	print_stats(); exit(1); } while (0)

static void *
mem_get(size_t n)
{
	void *p;

	if (o.plain) {
		p = malloc(n + 64);	/* deliberately unaligned: copy path */
		return p ? (uint8_t *)p + 8 : NULL;
	}
	return dpdat_mem_alloc(n, 4096, -1);
}

static uint8_t
pat(uint32_t seed, uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13 ^ seed ^ (i >> 8));
}

static void
fill(uint8_t *p, uint64_t n, uint32_t seed)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = pat(seed, i);
}

static int
verify(const uint8_t *p, uint64_t n, uint32_t seed)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i] != pat(seed, i)) {
			fprintf(stderr, "byte %lu: %02x, want %02x\n",
				(unsigned long)i, p[i], pat(seed, i));
			return -1;
		}
	return 0;
}

/* Wait for one completion on conn k; check status and opcode. */
static struct dpdat_wc
wait_wc(int k, enum dpdat_wr_opcode op, uint64_t wr_id)
{
	uint64_t t0 = rte_get_tsc_cycles();
	struct dpdat_wc wc;
	int n;

	for (;;) {
		n = dpdat_cq_poll(c[k].cq, &wc, 1);
		if (n == 1)
			break;
		if (n < 0)
			FAIL("cq_poll: %d", n);
		if (o.thread)
			dpdat_cq_wait(c[k].cq, 100);
		if (rte_get_tsc_cycles() - t0 > TIMEOUT_S * rte_get_tsc_hz())
			FAIL("qp %d: no completion for op %d wr %lu", k, op,
			     (unsigned long)wr_id);
	}
	if (wc.status != DPDAT_WC_SUCCESS || wc.opcode != op ||
	    wc.wr_id != wr_id)
		FAIL("qp %d: completion status %d op %d wr %lu, want op %d wr %lu",
		     k, wc.status, wc.opcode, (unsigned long)wc.wr_id, op,
		     (unsigned long)wr_id);
	return wc;
}

static void
post(int k, enum dpdat_wr_opcode op, uint64_t wr_id, uint8_t *laddr,
     uint32_t lkey, uint32_t len, uint64_t raddr, uint32_t imm)
{
	struct dpdat_sge sge = { (uintptr_t)laddr, len, lkey };
	struct dpdat_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .flags = DPDAT_SEND_SIGNALED,
		.sg_list = &sge, .num_sge = 1, .imm_data = htonl(imm),
		.remote_addr = raddr, .rkey = c[k].peer.rkey,
	};
	int ret = dpdat_post_send(c[k].qp, &wr);

	if (ret != 0)
		FAIL("post_send: %s", strerror(-ret));
}

static void
post_ctrl_recv(int k, int slot)
{
	struct dpdat_sge sge = { (uintptr_t)(c[k].ctrl + slot * maxsz),
				 (uint32_t)maxsz, c[k].ckey };
	struct dpdat_recv_wr wr = { .wr_id = 1000 + slot, .sg_list = &sge,
				    .num_sge = 1 };

	if (dpdat_post_recv(c[k].qp, &wr) != 0)
		FAIL("post_recv");
}

static void
exchange(void)
{
	char mine[512], theirs[512], tmp[520];
	struct dpdat_port_info pi;
	FILE *f;
	int k;

	dpdat_port_query(dpdat_dev_port(dev), &pi);
	snprintf(mine, sizeof(mine), "%s.%s", o.sock, o.server ? "srv" : "cli");
	snprintf(theirs, sizeof(theirs), "%s.%s", o.sock,
		 o.server ? "cli" : "srv");
	snprintf(tmp, sizeof(tmp), "%s.tmp", mine);
	f = fopen(tmp, "w");
	for (k = 0; k < o.nqps; k++) {
		struct dpdat_qp_info qi;
		struct dpdat_lmr_info li;

		dpdat_qp_query(c[k].qp, &qi);
		dpdat_lmr_query(c[k].lmr, &li);
		fprintf(f, "%u %u %u %lu %u ", qi.qpn, qi.sq_psn,
			li.rmr_context, (unsigned long)(uintptr_t)c[k].buf,
			pi.ipv4);
		for (int i = 0; i < 6; i++)
			fprintf(f, "%u ", pi.mac.addr_bytes[i]);
		fprintf(f, "\n");
	}
	fclose(f);
	rename(tmp, mine);
	for (int t = 0; access(theirs, R_OK) != 0; t++) {
		if (t > TIMEOUT_S * 100)
			FAIL("no peer details in %s", theirs);
		usleep(10000);
	}
	f = fopen(theirs, "r");
	for (k = 0; k < o.nqps; k++) {
		struct side *s = &c[k].peer;
		unsigned long a;
		unsigned int m[6];

		if (fscanf(f, "%u %u %u %lu %u %u %u %u %u %u %u", &s->qpn,
			   &s->psn, &s->rkey, &a, &s->ip, &m[0], &m[1], &m[2],
			   &m[3], &m[4], &m[5]) != 11)
			FAIL("bad peer details");
		s->addr = a;
		for (int i = 0; i < 6; i++)
			s->mac[i] = (uint8_t)m[i];
	}
	fclose(f);
}

/* In band (the default): the connection manager connects each QP; the
 * REQ and REP private data carry each side's buffer address and key. */
struct region_pd {
	uint64_t addr;
	uint32_t rkey;
} __attribute__((packed));

static void
cm_connect_all(void)
{
	struct dpdat_cm_eq *eq = dpdat_cm_eq_create(dev, 64);
	struct dpdat_cm_listener *l = NULL;
	struct dpdat_cm_event ev;
	struct region_pd mine, theirs;
	struct dpdat_lmr_info li;
	uint32_t ip;
	int k, up = 0;

	if (eq == NULL)
		FAIL("cm_eq_create");
	if (o.server) {
		l = dpdat_cm_listen(dev, 0x4792, eq);
		if (l == NULL)
			FAIL("listen");
	}
	if (h_server_ip(&ip) != 0)
		FAIL("DPDAT_TEST_SERVER: not an IPv4 address");
	for (k = 0; k < o.nqps; k++) {
		dpdat_lmr_query(c[k].lmr, &li);
		mine = (struct region_pd){ (uintptr_t)c[k].buf, li.rmr_context };
		if (o.server) {
			/* requests and the establishment of earlier ones
			 * come in any order */
			do {
				if (dpdat_cm_eq_wait(eq, &ev, 20000) != 1)
					FAIL("no connection request for qp %d",
					     k);
				if (ev.type == DPDAT_CM_ESTABLISHED)
					up++;
				else if (ev.type != DPDAT_CM_CONNECT_REQUEST)
					FAIL("CM event %d", ev.type);
			} while (ev.type != DPDAT_CM_CONNECT_REQUEST);
			memcpy(&theirs, ev.private_data, sizeof(theirs));
			if (dpdat_cm_accept(ev.conn, c[k].qp, &mine,
					    sizeof(mine), eq) != 0)
				FAIL("accept");
		} else {
			/* the server may still be setting up (its engine
			 * runs only inside its calls): ask again, as dapltest
			 * does, on a reject for a service not listened to yet
			 * or no answer */
			for (int t = 0;; t++) {
				struct dpdat_cm_conn *cc = dpdat_cm_connect(
					c[k].qp, ip, 0x4792, &mine,
					sizeof(mine), eq);

				if (cc == NULL)
					FAIL("cm_connect");
				if (dpdat_cm_eq_wait(eq, &ev, 20000) != 1)
					FAIL("no CM event");
				if (ev.type == DPDAT_CM_ESTABLISHED)
					break;
				if (t == 30 || (ev.type != DPDAT_CM_REJECTED &&
						ev.type != DPDAT_CM_UNREACHABLE))
					FAIL("qp %d not established (event "
					     "%d, try %d)", k, ev.type, t);
				dpdat_cm_conn_free(cc);
				usleep(100000);
			}
			memcpy(&theirs, ev.private_data, sizeof(theirs));
			up++;
		}
		c[k].peer.addr = theirs.addr;
		c[k].peer.rkey = theirs.rkey;
	}
	while (o.server && up < o.nqps) {
		if (dpdat_cm_eq_wait(eq, &ev, 20000) != 1 ||
		    ev.type != DPDAT_CM_ESTABLISHED)
			FAIL("server: not established");
		up++;
	}
	/* the connections stay up until the process ends: nothing more to
	 * watch here (the engine keeps running in every wait) */
	(void)l;
}

static void
setup(void)
{
	struct dpdat_dev_conf dc = { .progress = o.thread ?
		DPDAT_PROGRESS_THREAD : DPDAT_PROGRESS_INLINE };
	char devargs[300];
	int k;

	snprintf(devargs, sizeof(devargs), "net_memif0,role=%s,socket=%s",
		 o.server ? "server" : "client", o.sock);
	dc.port.device = devargs;
	dc.port.ipv4 = o.server ? "198.18.0.1" : "198.18.0.2";
	dc.port.mtu = o.mtu;
	/* between two namespaces (run2-netns.sh): the interface's address */
	if (getenv("DPDAT_TEST_DEV") != NULL) {
		dc.port.device = getenv("DPDAT_TEST_DEV");
		dc.port.ipv4 = "auto";
		dc.port.mtu = o.mtu_set ? o.mtu : 0;
	}
	dc.port.link_wait_s = 20;
	dc.go_back_n = o.gbn != 0;
	dc.ack_hold_ns = o.ack_hold;
	dev = dpdat_dev_open(&dc);
	if (dev == NULL)
		FAIL("dev_open: %s", rte_strerror(rte_errno));
	if (o.fault != NULL) {
		struct dpdat_fault_conf fc;

		/* thread mode: set before the engine sees traffic */
		if (dpdat_fault_parse(o.fault, &fc) != 0)
			FAIL("bad --fault");
		fc.seed += o.server;	/* different faults on each side */
		if (dpdat_port_set_faults(dpdat_dev_port(dev), &fc) != 0)
			FAIL("set_faults");
	}
	pz = dpdat_pz_create(dpdat_dev_domain(dev));
	for (k = 0; k < o.nqps; k++) {
		struct dpdat_qp_conf qc = { .pz = pz, .max_send_wr = 512,
					    .max_recv_wr = 64 };
		struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
		struct dpdat_lmr_info li;

		c[k].cq = dpdat_cq_create(dev, 2048);
		c[k].rcq = dpdat_cq_create(dev, 256);
		qc.send_cq = c[k].cq;
		qc.recv_cq = c[k].rcq;
		c[k].qp = dpdat_qp_create(dev, &qc);
		c[k].buf = mem_get(maxsz * o.depth);
		c[k].ctrl = mem_get(maxsz * 16);
		if (!c[k].cq || !c[k].qp || !c[k].buf || !c[k].ctrl)
			FAIL("setup: %s", rte_strerror(rte_errno));
		d.virt.addr = c[k].buf;
		d.virt.length = maxsz * o.depth;
		c[k].lmr = dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_ALL);
		d.virt.addr = c[k].ctrl;
		d.virt.length = maxsz * 16;
		c[k].cl = dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_LOCAL_READ |
					   DPDAT_MEM_PRIV_LOCAL_WRITE);
		if (!c[k].lmr || !c[k].cl)
			FAIL("lmr: %s", rte_strerror(rte_errno));
		dpdat_lmr_query(c[k].lmr, &li);
		c[k].lkey = li.lmr_context;
		dpdat_lmr_query(c[k].cl, &li);
		c[k].ckey = li.lmr_context;
		for (int s = 0; s < 8; s++)
			post_ctrl_recv(k, s);
	}
	if (!o.oob) {
		cm_connect_all();
		return;
	}
	exchange();
	for (k = 0; k < o.nqps; k++) {
		struct dpdat_qp_remote r = {
			.qpn = c[k].peer.qpn, .psn = c[k].peer.psn,
			.ipv4 = c[k].peer.ip, .pmtu = o.pmtu,
			.retry_cnt = (uint8_t)o.retry,
			.rnr_retry = 7, .timeout = 12,
		};
		memcpy(r.mac.addr_bytes, c[k].peer.mac, 6);
		if (dpdat_qp_connect(c[k].qp, &r) != 0)
			FAIL("connect");
	}
}

/* control message: "<verb> <seed> <size>" in a SEND */
static void
ctrl_send(int k, const char *msg, uint64_t id)
{
	uint8_t *slot = c[k].ctrl + 15 * maxsz;

	snprintf((char *)slot, CTRL, "%s", msg);
	post(k, DPDAT_WR_SEND, id, slot, c[k].ckey, CTRL, 0, 0);
	wait_wc(k, DPDAT_WR_SEND, id);
}

static void
ctrl_recv(int k, char *out, size_t n, uint64_t *slot_id)
{
	struct dpdat_wc wc;
	uint64_t t0 = rte_get_tsc_cycles();
	int ret;

	for (;;) {
		ret = dpdat_cq_poll(c[k].rcq, &wc, 1);
		if (ret == 1)
			break;
		if (o.thread)
			dpdat_cq_wait(c[k].rcq, 100);
		if (rte_get_tsc_cycles() - t0 > TIMEOUT_S * rte_get_tsc_hz())
			FAIL("qp %d: no control message", k);
	}
	if (wc.status != DPDAT_WC_SUCCESS ||
	    (wc.opcode != DPDAT_WR_RECV && wc.opcode != DPDAT_WR_RECV_RDMA_IMM))
		FAIL("qp %d: receive completion status %d op %d", k,
		     wc.status, wc.opcode);
	if (wc.opcode == DPDAT_WR_RECV_RDMA_IMM) {
		snprintf(out, n, "W %u %u", ntohl(wc.imm_data), wc.byte_len);
	} else if (wc.flags & DPDAT_WC_WITH_IMM) {
		/* a data SEND (with immediate) rather than a control message */
		if (ntohl(wc.imm_data) != 0x5e5d)
			FAIL("SEND immediate %x", ntohl(wc.imm_data));
		snprintf(out, n, "S %u", wc.byte_len);
	} else {
		if (wc.byte_len != CTRL)
			FAIL("control message of %u bytes", wc.byte_len);
		snprintf(out, n, "%s",
			 (char *)(c[k].ctrl + (wc.wr_id - 1000) * maxsz));
	}
	*slot_id = wc.wr_id;
}

#define LIST_WRS 48
#define LIST_ROUNDS 4
#define LIST_SENDS 4	/* the server holds 8 receives */

/* The WRs of a list round, the same on both sides: a WRITE first, then
 * WRITEs, READs and a few SENDs. */
static void
list_plan(uint32_t seed, enum dpdat_wr_opcode *ops)
{
	int sends = 0;

	for (uint32_t i = 0; i < LIST_WRS; i++) {
		uint32_t h = (seed * 7 + i * 13) % 10;

		ops[i] = i == 0 || h < 5 ? DPDAT_WR_RDMA_WRITE :
			 h < 8 ? DPDAT_WR_RDMA_READ :
			 sends++ < LIST_SENDS ? DPDAT_WR_SEND_IMM :
			 DPDAT_WR_RDMA_WRITE;
	}
}

/* The slot a READ i reads back: the WRITE just before it. */
static uint32_t
list_src(const enum dpdat_wr_opcode *ops, uint32_t i)
{
	while (ops[i] != DPDAT_WR_RDMA_WRITE)
		i--;
	return i;
}

/* Server: every WRITE of the round landed intact. */
static void
list_verify(int k, uint32_t seed, uint32_t size)
{
	enum dpdat_wr_opcode ops[LIST_WRS];

	list_plan(seed, ops);
	for (uint32_t i = 0; i < LIST_WRS; i++)
		if (ops[i] == DPDAT_WR_RDMA_WRITE &&
		    verify(c[k].buf + i * maxsz, size, seed + i) != 0)
			FAIL("list WRITE %u data wrong", i);
}

static int
run_server(void)
{
	char msg[CTRL], reply[CTRL];
	uint64_t slot;
	unsigned int seed, size, k = 0, done = 0;

	while (done < (unsigned int)o.nqps) {
		for (k = 0; k < (unsigned int)o.nqps; k++) {
			ctrl_recv((int)k, msg, sizeof(msg), &slot);
			post_ctrl_recv((int)k, (int)(slot - 1000));
			if (msg[0] == 'W') {	/* write landed: check it */
				sscanf(msg, "W %u %u", &seed, &size);
				for (int d = 0; d < o.depth; d++)
					if (verify(c[k].buf + d * maxsz, size,
						   seed + d) != 0)
						FAIL("WRITE data wrong");
				snprintf(reply, sizeof(reply), "OK W %u", seed);
			} else if (msg[0] == 'L') {	/* a list round */
				sscanf(msg, "L %u %u", &seed, &size);
				list_verify((int)k, seed, size);
				snprintf(reply, sizeof(reply), "OK L %u", seed);
			} else if (msg[0] == 'S') {
				sscanf(msg, "S %u", &size);
				/* the SEND landed in a ctrl slot */
				if (verify(c[k].ctrl + (slot - 1000) * maxsz,
					   size, 77) != 0)
					FAIL("SEND data wrong");
				snprintf(reply, sizeof(reply), "OK S %u", size);
			} else if (strncmp(msg, "BYE", 3) == 0) {
				done++;
				snprintf(reply, sizeof(reply), "BYE");
			} else {
				FAIL("unknown message '%s'", msg);
			}
			ctrl_send((int)k, reply, 5000);
		}
	}
	return 0;
}

static void
expect_reply(int k, const char *want)
{
	char msg[CTRL];
	uint64_t slot;

	ctrl_recv(k, msg, sizeof(msg), &slot);
	post_ctrl_recv(k, (int)(slot - 1000));
	if (strcmp(msg, want) != 0)
		FAIL("reply '%s', want '%s'", msg, want);
}

/* WR i of a list round: local slot i is a WRITE's or SEND's source, slot
 * LIST_WRS + i a READ's destination; remote slot i a WRITE's target. */
static void
list_wr(int k, const enum dpdat_wr_opcode *ops, uint32_t i, uint32_t size,
	uint32_t seed, struct dpdat_send_wr *wr, struct dpdat_sge *sge)
{
	uint32_t slot = i, rslot = i;

	if (ops[i] == DPDAT_WR_RDMA_READ) {
		slot = LIST_WRS + i;
		rslot = list_src(ops, i);
		memset(c[k].buf + slot * maxsz, 0xee, size);
	} else {
		fill(c[k].buf + slot * maxsz, size,
		     ops[i] == DPDAT_WR_SEND_IMM ? 77 : seed + i);
	}
	*sge = (struct dpdat_sge){ (uintptr_t)(c[k].buf + slot * maxsz),
				   size, c[k].lkey };
	*wr = (struct dpdat_send_wr){ .wr_id = i, .opcode = ops[i],
		.flags = i % (uint32_t)o.lists == (uint32_t)o.lists - 1 ||
			 i == LIST_WRS - 1 ? DPDAT_SEND_SIGNALED : 0,
		.sg_list = sge, .num_sge = 1, .imm_data = htonl(0x5e5d),
		.remote_addr = c[k].peer.addr + rslot * maxsz,
		.rkey = c[k].peer.rkey };
}

/* Conn k's part of a round: all of it posted in lists. */
static void
list_post(int k, uint32_t size, uint32_t seed)
{
	static const uint32_t lens[] = { 1, 5, 2, 16, 3, 8, 13 };
	enum dpdat_wr_opcode ops[LIST_WRS];
	struct dpdat_send_wr wr[LIST_WRS];
	struct dpdat_sge sge[LIST_WRS];
	uint32_t i, n, posted;
	int ret;

	list_plan(seed, ops);
	for (i = 0; i < LIST_WRS; i++)
		list_wr(k, ops, i, size, seed, &wr[i], &sge[i]);
	for (i = 0, n = 0; i < LIST_WRS; i += n) {
		n = lens[(seed + i) % RTE_DIM(lens)];
		n = n < LIST_WRS - i ? n : LIST_WRS - i;
		ret = dpdat_post_send_burst(c[k].qp, wr + i, n, &posted);
		if (ret != 0 || posted != n)
			FAIL("post_send_burst of %u: %d, %u posted", n, ret,
			     posted);
	}
}

/* The signalled WRs complete, in order, and nothing else; the READs
 * brought back what the WRITEs before them wrote. The SENDs in it. */
static uint32_t
list_reap(int k, uint32_t size, uint32_t seed)
{
	enum dpdat_wr_opcode ops[LIST_WRS];
	struct dpdat_wc wc;
	uint32_t i, sends = 0;

	list_plan(seed, ops);
	for (i = 0; i < LIST_WRS; i++) {
		sends += ops[i] == DPDAT_WR_SEND_IMM;
		if (i % (uint32_t)o.lists == (uint32_t)o.lists - 1 ||
		    i == LIST_WRS - 1)
			wait_wc(k, ops[i], i);
	}
	if (dpdat_cq_poll(c[k].cq, &wc, 1) != 0)
		FAIL("a completion after the last: wr %lu status %d",
		     (unsigned long)wc.wr_id, wc.status);
	for (i = 0; i < LIST_WRS; i++)
		if (ops[i] == DPDAT_WR_RDMA_READ &&
		    verify(c[k].buf + (LIST_WRS + i) * maxsz, size,
			   seed + list_src(ops, i)) != 0)
			FAIL("list READ %u data wrong, size %u", i, size);
	return sends;
}

/* A round on every QP, in the server's order: one message each in turn. */
static void
list_round(uint32_t size, uint32_t seed)
{
	uint32_t sends[MAX_QPS];
	char msg[CTRL];
	int k;

	for (k = 0; k < o.nqps; k++)
		list_post(k, size, seed);
	for (k = 0; k < o.nqps; k++)
		sends[k] = list_reap(k, size, seed);
	snprintf(msg, sizeof(msg), "L %u %u", seed, size);
	for (k = 0; k < o.nqps; k++)
		ctrl_send(k, msg, 7000);
	for (k = 0; k < o.nqps; k++) {
		snprintf(msg, sizeof(msg), "OK S %u", size);
		for (uint32_t i = 0; i < sends[k]; i++)
			expect_reply(k, msg);
		snprintf(msg, sizeof(msg), "OK L %u", seed);
		expect_reply(k, msg);
	}
}

static int
run_client_lists(void)
{
	uint32_t seed = 1;

	for (int si = 0; si < o.nsizes; si++) {
		uint32_t size = (uint32_t)o.sizes[si];
		uint64_t t0 = rte_get_tsc_cycles();

		for (int r = 0; r < LIST_ROUNDS; r++, seed += 100)
			list_round(size, seed);
		printf("client: %u B x %d list rounds x %d QPs, one WR in %d "
		       "signalled: verified (%.3f s)\n", size, LIST_ROUNDS,
		       o.nqps, o.lists,
		       (double)(rte_get_tsc_cycles() - t0) / rte_get_tsc_hz());
	}
	for (int k = 0; k < o.nqps; k++) {
		ctrl_send(k, "BYE", 6000);
		expect_reply(k, "BYE");
	}
	return 0;
}

static int
run_client(void)
{
	uint8_t *rd;
	char want[CTRL];
	uint32_t seed = 1;

	for (int si = 0; si < o.nsizes * o.rounds; si++) {
		uint32_t size = (uint32_t)o.sizes[si % o.nsizes];
		uint64_t t0 = rte_get_tsc_cycles();

		for (int k = 0; k < o.nqps; k++) {
			/* 1. depth WRITEs, the last with immediate data */
			for (int d = 0; d < o.depth; d++) {
				fill(c[k].buf + d * maxsz, size, seed + d);
				post(k, d + 1 == o.depth ?
				     DPDAT_WR_RDMA_WRITE_IMM : DPDAT_WR_RDMA_WRITE,
				     (uint64_t)d, c[k].buf + d * maxsz, c[k].lkey,
				     size, c[k].peer.addr + d * maxsz, seed);
			}
			for (int d = 0; d < o.depth; d++)
				wait_wc(k, d + 1 == o.depth ?
					DPDAT_WR_RDMA_WRITE_IMM :
					DPDAT_WR_RDMA_WRITE, (uint64_t)d);
		}
		for (int k = 0; k < o.nqps; k++) {
			snprintf(want, sizeof(want), "OK W %u", seed);
			expect_reply(k, want);
		}
		for (int k = 0; k < o.nqps; k++) {
			/* 2. READ every written buffer back */
			for (int d = 0; d < o.depth; d++)
				memset(c[k].buf + d * maxsz, 0xee, size);
			for (int d = 0; d < o.depth; d++)
				post(k, DPDAT_WR_RDMA_READ, 100 + d,
				     c[k].buf + d * maxsz, c[k].lkey, size,
				     c[k].peer.addr + d * maxsz, 0);
			/* 3. SEND the pattern into a receive, posted right
			 * behind the READs: its ACK must not overtake them */
			fill(c[k].ctrl + 14 * maxsz, size, 77);
			post(k, DPDAT_WR_SEND_IMM, 200, c[k].ctrl + 14 * maxsz,
			     c[k].ckey, size, 0, 0x5e5d);
			for (int d = 0; d < o.depth; d++)
				wait_wc(k, DPDAT_WR_RDMA_READ, 100 + d);
			wait_wc(k, DPDAT_WR_SEND_IMM, 200);
			for (int d = 0; d < o.depth; d++) {
				rd = c[k].buf + d * maxsz;
				if (verify(rd, size, seed + d) != 0)
					FAIL("READ data wrong, size %u", size);
			}
			snprintf(want, sizeof(want), "OK S %u", size);
			expect_reply(k, want);
		}
		printf("client: %u B x %d x %d QPs: WRITE, READ, SEND verified "
		       "(%.3f s)\n", size, o.depth, o.nqps,
		       (double)(rte_get_tsc_cycles() - t0) / rte_get_tsc_hz());
		seed += 100;
	}
	for (int k = 0; k < o.nqps; k++) {
		ctrl_send(k, "BYE", 6000);
		expect_reply(k, "BYE");
	}
	return 0;
}

static void
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pmtu", 1, NULL, 'p' }, { "sizes", 1, NULL, 's' },
		{ "qps", 1, NULL, 'q' }, { "depth", 1, NULL, 'd' },
		{ "plain", 0, NULL, 'P' }, { "thread", 0, NULL, 't' },
		{ "mtu", 1, NULL, 'm' }, { "fault", 1, NULL, 'f' },
		{ "retry", 1, NULL, 'r' }, { "expect-zerocopy", 0, NULL, 'z' },
		{ "oob", 0, NULL, 'o' }, { "expect-pmtu", 1, NULL, 'E' },
		{ "go-back-n", 1, NULL, 'G' }, { "expect-ext", 1, NULL, 'X' },
		{ "lists", 1, NULL, 'L' }, { "ack-hold", 1, NULL, 'H' },
		{ "expect-ride", 1, NULL, 'A' }, { "rounds", 1, NULL, 'N' },
		{ "expect-zerocopy-read", 0, NULL, 'R' },
		{ NULL, 0, NULL, 0 } };
	char *tok, *save = NULL;
	int ch;

	if (argc < 3)
		FAIL("usage: rc_test server|client <socket> [options]");
	o.server = strcmp(argv[1], "server") == 0;
	o.sock = argv[2];
	optind = 3;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'p': o.pmtu = (uint16_t)atoi(optarg); break;
		case 'q': o.nqps = atoi(optarg); break;
		case 'd': o.depth = atoi(optarg); break;
		case 'P': o.plain = 1; break;
		case 't': o.thread = 1; break;
		case 'm': o.mtu = (uint16_t)atoi(optarg); o.mtu_set = 1; break;
		case 'f': o.fault = optarg; break;
		case 'r': o.retry = atoi(optarg); break;
		case 'z': o.expect_zc = 1; break;
		case 'R': o.expect_zc_read = 1; break;
		case 'o': o.oob = 1; break;
		case 'E': o.expect_pmtu = (uint16_t)atoi(optarg); break;
		case 'L': o.lists = atoi(optarg); break;
		case 'N': o.rounds = atoi(optarg); break;
		case 'H': o.ack_hold = (uint32_t)atoi(optarg); break;
		case 'A':
			if (strcmp(optarg, "yes") != 0 &&
			    strcmp(optarg, "no") != 0)
				FAIL("--expect-ride yes|no");
			o.expect_ride = strcmp(optarg, "yes") == 0;
			break;
		case 'G':
			if (strcmp(optarg, "both") != 0 &&
			    strcmp(optarg, "server") != 0 &&
			    strcmp(optarg, "client") != 0)
				FAIL("--go-back-n server|client|both");
			o.gbn = strcmp(optarg, "both") == 0 ||
				strcmp(optarg, o.server ? "server" : "client") == 0;
			break;
		case 'X':
			if (strcmp(optarg, "sack") != 0 &&
			    strcmp(optarg, "none") != 0)
				FAIL("--expect-ext sack|none");
			o.expect_ext = strcmp(optarg, "sack") == 0 ?
				       DPDAT_QP_EXT_SACK : 0;
			break;
		case 's':
			for (tok = strtok_r(optarg, ",", &save); tok && o.nsizes < 16;
			     tok = strtok_r(NULL, ",", &save))
				o.sizes[o.nsizes++] = strtoull(tok, NULL, 0);
			break;
		default: FAIL("bad option");
		}
	}
	if (o.nsizes == 0)
		o.sizes[o.nsizes++] = 4096;
	if (o.nqps < 1 || o.nqps > MAX_QPS || o.depth < 1 || o.lists < 0 ||
	    o.rounds < 1)
		FAIL("bad --qps, --depth, --lists or --rounds");
	if (o.lists > 0)
		o.depth = 2 * LIST_WRS;	/* the slots of list_wr() */
	for (int i = 0; i < o.nsizes; i++)
		if (o.sizes[i] > maxsz)
			maxsz = o.sizes[i];
	if (maxsz < CTRL)
		maxsz = CTRL;
}

static void
print_stats(void)
{
	struct dpdat_port_stats ps;

	for (int k = 0; k < o.nqps && dev != NULL; k++) {
		struct dpdat_qp_stats st;

		if (failing && c[k].qp != NULL)
			dpdat_qp_dump(c[k].qp, stdout);
		if (c[k].qp == NULL || dpdat_qp_stats(c[k].qp, &st) != 0)
			continue;
		printf("%s qp %d: tx %lu rx %lu retransmits %lu timeouts %lu "
		       "naks %lu/%lu rnr %lu/%lu dup %lu oos %lu zero-copy %lu "
		       "probes %lu resent %lu (on SACKs %lu) held %lu\n",
		       o.server ? "server" : "client", k, st.tx_pkts,
		       st.rx_pkts, st.retransmits, st.timeouts, st.naks_sent,
		       st.naks_rcvd, st.rnr_naks_sent, st.rnr_naks_rcvd,
		       st.dup_rcvd, st.out_of_seq, st.tx_zerocopy, st.probes,
		       st.tx_resent, st.sack_resent, st.held);
	}
	if (dev != NULL && dpdat_port_stats(dpdat_dev_port(dev), &ps) == 0)
		printf("%s port: rx %lu tx %lu roce %lu drops %lu/%lu/%lu "
		       "faults drop %lu dup %lu reorder %lu corrupt %lu; "
		       "device missed %lu errors %lu/%lu\n",
		       o.server ? "server" : "client", ps.rx_pkts, ps.tx_pkts,
		       ps.rx_roce, ps.drop_not_ours, ps.drop_malformed,
		       ps.drop_tx_full, ps.fault_drop, ps.fault_dup,
		       ps.fault_reorder, ps.fault_corrupt,
		       (unsigned long)ps.dev_imissed,
		       (unsigned long)ps.dev_ierrors,
		       (unsigned long)ps.dev_oerrors);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct dpdat_eal_conf ec = { .program = argv[0], .mem_mb = 512 };
	int ret;

	parse(argc, argv);
	if (dpdat_eal_init(&ec) < 0)
		return 1;
	setup();
	ret = o.server ? run_server() : o.lists ? run_client_lists() :
	      run_client();
	print_stats();
	if (o.expect_pmtu != 0) {
		struct dpdat_qp_info qi;

		dpdat_qp_query(c[0].qp, &qi);
		printf("%s: PMTU %u\n", o.server ? "server" : "client",
		       qi.pmtu);
		if (qi.pmtu != o.expect_pmtu)
			FAIL("PMTU %u, expected %u", qi.pmtu, o.expect_pmtu);
	}
	for (int k = 0; o.expect_ext >= 0 && k < o.nqps; k++) {
		struct dpdat_qp_info qi;
		struct dpdat_qp_stats qs;

		dpdat_qp_query(c[k].qp, &qi);
		dpdat_qp_stats(c[k].qp, &qs);
		if ((qi.ext & DPDAT_QP_EXT_SACK) != o.expect_ext)
			FAIL("qp %d: extensions 0x%x, selective repeat %s "
			     "expected", k, qi.ext, o.expect_ext ? "" : "not");
		if (o.expect_ext == 0 && (qs.sack_resent != 0 || qs.held != 0))
			FAIL("qp %d: selective repeat without agreement", k);
	}
	for (int k = 0; o.expect_ride >= 0 && k < o.nqps; k++) {
		struct dpdat_qp_info qi;
		struct dpdat_qp_stats qs;
		int agreed;

		dpdat_qp_query(c[k].qp, &qi);
		dpdat_qp_stats(c[k].qp, &qs);
		agreed = (qi.ext & DPDAT_QP_EXT_ACK_RIDE) != 0;
		printf("%s qp %d: ACKs ridden %lu, received riding %lu\n",
		       o.server ? "server" : "client", k,
		       (unsigned long)qs.acks_ridden,
		       (unsigned long)qs.acks_ridden_rcvd);
		if (o.expect_ride && (!agreed || qs.acks_ridden == 0 ||
				      qs.acks_ridden_rcvd == 0))
			FAIL("qp %d: ACKs did not ride both ways", k);
		if (!o.expect_ride && (agreed || qs.acks_ridden != 0 ||
				       qs.acks_ridden_rcvd != 0))
			FAIL("qp %d: an ACK rode without agreement", k);
	}
	if (o.expect_zc && !o.server) {
		struct dpdat_qp_stats qs;

		dpdat_qp_stats(c[0].qp, &qs);
		if (qs.tx_zerocopy == 0)
			FAIL("no packet went out zero-copy");
	}
	if (o.expect_zc_read && o.server) {
		/* the server sends nothing large but READ responses */
		struct dpdat_qp_stats qs;

		dpdat_qp_stats(c[0].qp, &qs);
		if (qs.tx_zerocopy == 0)
			FAIL("no READ response went out zero-copy");
	}
	if (o.fault != NULL && !o.server) {
		/* faults were injected and the data still came through
		 * intact: show that recovery was what did it */
		struct dpdat_port_stats ps;
		struct dpdat_qp_stats qs;
		uint64_t injected, recovered = 0;	/* any sign of it */

		dpdat_port_stats(dpdat_dev_port(dev), &ps);
		injected = ps.fault_drop + ps.fault_dup + ps.fault_reorder +
			   ps.fault_corrupt;
		for (int k = 0; k < o.nqps; k++) {
			dpdat_qp_stats(c[k].qp, &qs);
			recovered += qs.retransmits + qs.naks_rcvd +
				     qs.dup_rcvd + qs.out_of_seq;
		}
		printf("client: %lu faults injected here, %lu retransmits/NAKs\n",
		       (unsigned long)injected, (unsigned long)recovered);
		if (injected == 0 || recovered == 0)
			FAIL("fault run without faults or without recovery");
	}
	/* let the last ACKs go out before the link goes */
	for (int i = 0; i < 200; i++) {
		dpdat_dev_progress(dev);	/* -EBUSY in thread mode */
		rte_delay_us_sleep(1000);
	}
	return ret;
}
