/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Connection management between two processes over memif (no out-of-band
 * exchange at all: the client knows only the server's address and service).
 *   cm_test server|client <socket> <mode> [cycles]
 * modes: basic (connect, accept, private data both ways, traffic, orderly
 * disconnect), reject, nolistener, cycles (N connect/disconnect rounds with
 * leak counters), flush (disconnect while WRITEs are in flight), death (the
 * server dies; the client sees BROKEN in time), soak (connections with 32
 * SENDs, a WRITE, a READ back and a fetch-and-add each for N seconds,
 * counters checked as it goes; devtools/soak.sh), many (N connections at
 * once with traffic, resources back to baseline).
 */

#include <arpa/inet.h>
#include <signal.h>
#include <string.h>

#include <rte_errno.h>
#include <unistd.h>

#include <rte_mempool.h>

#include <dpdat/dpdat_cm.h>

#include "harness.h"
#include "port_priv.h"

#define SERVICE 0x4791
#define MEM (1 << 20)

static struct dpdat_dev *dev;
static struct dpdat_pz *pz;
static struct dpdat_cq *cq;
static struct dpdat_cm_eq *eq;
static struct dpdat_lmr *lmr;
static uint8_t *mem;
static uint32_t key;
static const char *mode;

static const uint8_t big_pd[DPDAT_CM_REQ_PDATA_MAX];
static const uint8_t req_pd[DPDAT_CM_REQ_PDATA_MAX_IP] = "request private data\0with a NUL inside";
static const uint8_t rep_pd[] = "reply private data from the server";
static const uint8_t rej_pd[] = "not today";
/* after rep_pd in the server's reply: its memory, for WRITEs */
struct region {
	uint64_t addr;
	uint32_t key;
} __attribute__((packed));
/* the server's memory, as its last reply said */
static struct region server_mem;

/* Resident set, KiB. */
static long
rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static struct dpdat_qp *
new_qp(void)
{
	struct dpdat_qp_conf qc = { .pz = pz, .send_cq = cq, .recv_cq = cq,
				    .max_send_wr = 512, .max_recv_wr = 64 };
	struct dpdat_qp *qp = dpdat_qp_create(dev, &qc);

	if (qp == NULL)
		H_FAIL("qp_create");
	return qp;
}

static struct dpdat_cm_event
expect(enum dpdat_cm_event_type type, double secs)
{
	struct dpdat_cm_event ev;

	if (dpdat_cm_eq_wait(eq, &ev, (int)(secs * 1000)) != 1)
		H_FAIL("no CM event %d within %.1f s", type, secs);
	if (ev.type != type)
		H_FAIL("CM event %d, want %d (reason %u)", ev.type, type,
		       ev.reason);
	return ev;
}

static void
post1(struct dpdat_qp *qp, enum dpdat_wr_opcode op, uint64_t id,
      uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct dpdat_sge sge = { (uintptr_t)mem + off, len, key };
	struct dpdat_send_wr wr = { .wr_id = id, .opcode = op,
		.flags = DPDAT_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
		.remote_addr = raddr, .rkey = rkey };

	if (dpdat_post_send(qp, &wr) != 0)
		H_FAIL("post_send");
}

static void
recv1(struct dpdat_qp *qp, uint32_t off)
{
	struct dpdat_sge sge = { (uintptr_t)mem + off, 4096, key };
	struct dpdat_recv_wr wr = { .wr_id = off, .sg_list = &sge,
				    .num_sge = 1 };

	if (dpdat_post_recv(qp, &wr) != 0)
		H_FAIL("post_recv");
}

static struct dpdat_wc
wc1(void)
{
	struct dpdat_wc wc;

	if (h_wait(cq, &wc, 10) != 0)
		H_FAIL("no completion");
	return wc;
}

/* ---- server ---- */

static void
server(void)
{
	struct dpdat_cm_listener *l = dpdat_cm_listen(dev, SERVICE, eq);
	uint8_t rep[sizeof(rep_pd) + sizeof(struct region)];
	struct dpdat_cm_event ev;
	struct dpdat_qp *qp;
	struct dpdat_wc wc;
	int rounds = 0;

	if (l == NULL)
		H_FAIL("listen");
	/* our address and memory for the client's WRITEs, in a SEND later */
	for (;;) {
		if (dpdat_cm_eq_wait(eq, &ev, 30000) != 1)
			H_FAIL("server: no event in 30 s");
		switch (ev.type) {
		case DPDAT_CM_CONNECT_REQUEST:
			if (memcmp(ev.private_data, req_pd, sizeof(req_pd)))
				H_FAIL("REQ private data differs");
			if (strcmp(mode, "reject") == 0) {
				if (dpdat_cm_reject(ev.conn, rej_pd,
						    sizeof(rej_pd)) != 0)
					H_FAIL("reject");
				dpdat_cm_conn_free(ev.conn);
				goto out;
			}
			if (strcmp(mode, "slow") == 0) {
				/* think it over for longer than the peer's
				 * REQ retries last: MRA keeps it waiting */
				double t0 = h_now();

				while (h_now() - t0 < 2.5)
					dpdat_dev_progress(dev);
			}
			qp = new_qp();
			for (int k = 0; k < (strcmp(mode, "many") ? 64 : 1); k++)
				recv1(qp, (uint32_t)k * 4096);
			/* the reply, then where our memory is */
			memcpy(rep, rep_pd, sizeof(rep_pd));
			memcpy(rep + sizeof(rep_pd), &(struct region){
				(uintptr_t)mem, key }, sizeof(struct region));
			if (dpdat_cm_accept(ev.conn, qp, rep, sizeof(rep),
					    eq) != 0)
				H_FAIL("accept");
			break;
		case DPDAT_CM_ESTABLISHED:
			rounds++;
			if (strcmp(mode, "death") == 0) {
				double t0 = h_now();

				while (h_now() - t0 < 0.3)
					dpdat_dev_progress(dev);
				printf("server: dying now\n");
				fflush(stdout);
				kill(getpid(), SIGKILL);
			}
			break;
		case DPDAT_CM_DISCONNECTED:
			qp = dpdat_cm_conn_qp(ev.conn);
			/* everything pending was flushed to the CQ */
			while (dpdat_cq_poll(cq, &wc, 1) == 1)
				if (wc.status != DPDAT_WC_SUCCESS &&
				    wc.status != DPDAT_WC_WR_FLUSH_ERR)
					H_FAIL("status %d", wc.status);
			if (dpdat_cm_conn_free(ev.conn) != 0 ||
			    dpdat_qp_free(qp) != 0)
				H_FAIL("server teardown");
			if (ev.private_data[0] == 'E')	/* "END" */
				goto out;
			break;
		default:
			H_FAIL("server: event %d", ev.type);
		}
	}
out:
	printf("server: %d connections served\n", rounds);
	dpdat_cm_listen_free(l);
}

/* ---- client ---- */

static struct dpdat_cm_conn *
connect_once(struct dpdat_qp *qp, uint64_t service, int want_ok)
{
	struct dpdat_cm_conn *c;
	struct dpdat_cm_event ev;
	uint32_t ip;

	inet_pton(AF_INET, "198.18.0.1", &ip);
	/* an IP CM port: rdma_cm's header takes 36 of the REQ's 92 bytes */
	if (service <= 0xffff &&
	    (dpdat_cm_connect(qp, ip, service, big_pd,
			      DPDAT_CM_REQ_PDATA_MAX_IP + 1, eq) != NULL ||
	     rte_errno != EINVAL))
		H_FAIL("cm_connect with 57 bytes to an IP CM port: not EINVAL");
	c = dpdat_cm_connect(qp, ip, service, req_pd, sizeof(req_pd), eq);
	if (c == NULL)
		H_FAIL("cm_connect");
	if (!want_ok)
		return c;
	ev = expect(DPDAT_CM_ESTABLISHED, 10);
	if (ev.conn != c || memcmp(ev.private_data, rep_pd, sizeof(rep_pd)))
		H_FAIL("REP private data differs");
	memcpy(&server_mem, ev.private_data + sizeof(rep_pd),
	       sizeof(server_mem));
	return c;
}

static void
disconnect(struct dpdat_cm_conn *c, struct dpdat_qp *qp, const char *pd)
{
	struct dpdat_cm_event ev;

	if (dpdat_cm_disconnect(c, pd, (uint16_t)strlen(pd) + 1) != 0)
		H_FAIL("disconnect");
	ev = expect(DPDAT_CM_DISCONNECTED, 10);
	if (ev.conn != c)
		H_FAIL("DISCONNECTED for another connection");
	if (dpdat_cm_conn_free(c) != 0 || dpdat_qp_free(qp) != 0)
		H_FAIL("client teardown");
}

/* n connections (up to MANY_MAX) up at once, a SEND and a 4 KiB WRITE
 * on each, all torn down; last: the final round (its last DREQ says END). */
#define MANY_MAX 1024
static void
many_round(int n, bool last)
{
	struct dpdat_cm_conn **cs = calloc(MANY_MAX, sizeof(*cs));
	struct dpdat_qp **qs = calloc(MANY_MAX, sizeof(*qs));
	struct region peer;
	struct dpdat_wc wc;
	double t0 = h_now();
	uint32_t ip;
	int up = 0, done = 0;

	if (n > MANY_MAX || cs == NULL || qs == NULL)
		H_FAIL("many: at most %d connections", MANY_MAX);
	inet_pton(AF_INET, "198.18.0.1", &ip);
	for (int k = 0; k < n; k++) {
		qs[k] = new_qp();
		cs[k] = dpdat_cm_connect(qs[k], ip, SERVICE, req_pd,
					 sizeof(req_pd), eq);
		if (cs[k] == NULL)
			H_FAIL("connect %d", k);
		/* keep the CM moving while the requests pile up */
		dpdat_dev_progress(dev);
	}
	while (up < n) {
		struct dpdat_cm_event ev = expect(DPDAT_CM_ESTABLISHED, 20);

		memcpy(&peer, ev.private_data + sizeof(rep_pd), sizeof(peer));
		up++;
	}
	printf("client: %d connections established in %.2f s\n", n,
	       h_now() - t0);
	/* traffic on every one: a SEND into the receive the server posted,
	 * and a 4 KiB WRITE into the server's memory */
	memset(mem + MEM / 2, 0x5c, 4096);
	for (int k = 0; k < n; k++) {
		post1(qs[k], DPDAT_WR_SEND, 2 * (uint64_t)k, 0, 64, 0, 0);
		post1(qs[k], DPDAT_WR_RDMA_WRITE, 2 * (uint64_t)k + 1,
		      MEM / 2, 4096, peer.addr + MEM / 2, peer.key);
		/* the CQ holds 4096: take what is there as we go */
		while (dpdat_cq_poll(cq, &wc, 1) == 1) {
			if (wc.status != DPDAT_WC_SUCCESS)
				H_FAIL("wr %lu: status %d",
				       (unsigned long)wc.wr_id, wc.status);
			done++;
		}
	}
	while (done < 2 * n) {
		if (h_wait(cq, &wc, 20) != 0)
			H_FAIL("%d of %d completions", done, 2 * n);
		if (wc.status != DPDAT_WC_SUCCESS)
			H_FAIL("wr %lu: status %d", (unsigned long)wc.wr_id,
			       wc.status);
		done++;
	}
	printf("client: a SEND and a 4 KiB WRITE on each of %d connections, "
	       "all completed (%.2f s)\n", n, h_now() - t0);
	for (int k = 0; k < n; k++) {
		bool end = last && k == n - 1;

		if (dpdat_cm_disconnect(cs[k], end ? "END" : "x",
					end ? 4 : 2) != 0)
			H_FAIL("disconnect %d", k);
	}
	for (int k = 0; k < n; k++)
		expect(DPDAT_CM_DISCONNECTED, 20);
	for (int k = 0; k < n; k++)
		if (dpdat_cm_conn_free(cs[k]) != 0 ||
		    dpdat_qp_free(qs[k]) != 0)
			H_FAIL("teardown %d", k);
	free(cs);
	free(qs);
	for (int i = 0; i < 200; i++)
		dpdat_dev_progress(dev);
}

/* Two rounds of many_round(): the mbufs in use and the registration
 * contexts back to what they were before each; the resident set after
 * the second (outside AddressSanitizer) where the first left it (the
 * first grows DPDK's heap, which keeps what it was given). */
static void
many(int n)
{
	struct dpdat_port *port = dpdat_dev_port(dev);
	unsigned int mbufs0, ctx0;
	long rss0 = 0, rss1;

	mbufs0 = rte_mempool_in_use_count(port->pool);
	ctx0 = dpdat_mr_domain_count(dpdat_dev_domain(dev));
	for (int r = 0; r < 2; r++) {
		many_round(n, r == 1);
		rss1 = rss_kib();
		printf("client: after round %d of %d connections: mbufs in "
		       "use %u -> %u, contexts %u -> %u, resident %ld KiB\n",
		       r + 1, n, mbufs0, rte_mempool_in_use_count(port->pool),
		       ctx0, dpdat_mr_domain_count(dpdat_dev_domain(dev)),
		       rss1);
		if (rte_mempool_in_use_count(port->pool) >
		    mbufs0 + h_dev_slack(port) ||
		    dpdat_mr_domain_count(dpdat_dev_domain(dev)) != ctx0)
			H_FAIL("leak");
		if (r == 0)
			rss0 = rss1;
	}
	if (H_RSS_CHECKED && rss1 > rss0 + 8192)
		H_FAIL("the resident set grew %ld KiB in the second round",
		       rss1 - rss0);
}

static void
traffic(struct dpdat_qp *qp)
{
	struct dpdat_wc wc;

	/* a SEND into the receive the server posted before accepting */
	memcpy(mem, "over a CM-made connection", 26);
	post1(qp, DPDAT_WR_SEND, 1, 0, 26, 0, 0);
	wc = wc1();
	if (wc.status != DPDAT_WC_SUCCESS)
		H_FAIL("SEND status %d", wc.status);
}

/* soak: connections with traffic for secs seconds (under DPDAT_FAULT as
 * the caller sets it); every report (each minute, or a quarter of a
 * shorter run) prints the counters, which may not grow past the first
 * report's: mbufs in use, registration contexts, the resident set. */
#define SOAK_SENDS 32

/* Per soak connection, after its SENDs: a 64 KiB WRITE into the server's
 * memory, a READ of it back (every byte compared), and a fetch-and-add on
 * the server's counter, which must fetch how many came before (each
 * executed once across losses and reconnections). */
#define SOAK_W		(MEM / 4)	/* our WRITE source */
#define SOAK_R		(3 * (MEM / 8))	/* our READ target */
#define SOAK_A		(MEM / 2)	/* the value fetched */
#define SOAK_LEN	(64 << 10)
static void
soak_rdma(struct dpdat_qp *qp, unsigned long n)
{
	struct dpdat_sge sge = { (uintptr_t)mem + SOAK_A, 8, key };
	struct dpdat_send_wr fa = { .wr_id = 102,
		.opcode = DPDAT_WR_ATOMIC_FETCH_ADD,
		.flags = DPDAT_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
		.remote_addr = server_mem.addr + MEM - 8,
		.rkey = server_mem.key, .compare_add = 1 };
	struct dpdat_wc wc;

	for (uint32_t i = 0; i < SOAK_LEN; i++)
		mem[SOAK_W + i] = (uint8_t)(n * 7 + i * 13 + (i >> 9));
	memset(mem + SOAK_R, 0, SOAK_LEN);
	post1(qp, DPDAT_WR_RDMA_WRITE, 100, SOAK_W, SOAK_LEN,
	      server_mem.addr + MEM / 2, server_mem.key);
	post1(qp, DPDAT_WR_RDMA_READ, 101, SOAK_R, SOAK_LEN,
	      server_mem.addr + MEM / 2, server_mem.key);
	if (dpdat_post_send(qp, &fa) != 0)
		H_FAIL("post fetch-and-add");
	for (uint64_t id = 100; id < 103; id++) {
		wc = wc1();
		if (wc.status != DPDAT_WC_SUCCESS || wc.wr_id != id) {
			/* the requester's side of it: PSNs, retries, NAKs */
			dpdat_qp_dump(qp, stderr);
			H_FAIL("soak: connection %lu, WR %lu: status %d", n,
			       (unsigned long)wc.wr_id, wc.status);
		}
	}
	if (memcmp(mem + SOAK_W, mem + SOAK_R, SOAK_LEN) != 0)
		H_FAIL("soak: connection %lu: the READ differs from the WRITE",
		       n);
	if (*(volatile uint64_t *)(mem + SOAK_A) != n)
		H_FAIL("soak: connection %lu: fetch-and-add fetched %lu", n,
		       (unsigned long)*(volatile uint64_t *)(mem + SOAK_A));
}

static void
soak(int secs)
{
	struct dpdat_port *port = dpdat_dev_port(dev);
	const double every = secs >= 240 ? 60 : secs / 4.0;
	unsigned long conns = 0, sends = 0;
	unsigned int mbufs0 = 0, ctx0 = 0, mbufs, ctx;
	double t0 = h_now(), next = t0 + every;
	struct dpdat_cm_conn *c;
	struct dpdat_qp *qp;
	struct dpdat_wc wc;
	long rss0 = 0, rss;
	int reports = 0;

	while (h_now() - t0 < secs) {
		qp = new_qp();
		c = connect_once(qp, SERVICE, 1);
		for (uint32_t k = 0; k < SOAK_SENDS; k++) {
			memset(mem + k * 4096, (int)(conns + k), 4096);
			post1(qp, DPDAT_WR_SEND, k, k * 4096, 4096, 0, 0);
		}
		for (uint32_t k = 0; k < SOAK_SENDS; k++) {
			wc = wc1();
			if (wc.status != DPDAT_WC_SUCCESS || wc.wr_id != k)
				H_FAIL("soak: connection %lu, SEND %u: status "
				       "%d", conns, k, wc.status);
		}
		sends += SOAK_SENDS;
		soak_rdma(qp, conns);
		conns++;
		disconnect(c, qp, "bye");
		if (h_now() < next)
			continue;
		next += every;
		mbufs = rte_mempool_in_use_count(port->pool);
		ctx = dpdat_mr_domain_count(dpdat_dev_domain(dev));
		rss = rss_kib();
		printf("client: soak %.0f s: %lu connections, %lu SENDs; mbufs "
		       "in use %u, contexts %u, resident %ld KiB\n",
		       h_now() - t0, conns, sends, mbufs, ctx, rss);
		fflush(stdout);
		if (reports++ == 0) {
			mbufs0 = mbufs;
			ctx0 = ctx;
			rss0 = rss;
		} else if (mbufs > mbufs0 + 64 + h_dev_slack(port) ||
			   ctx != ctx0 ||
			   (H_RSS_CHECKED && rss > rss0 + 8192)) {
			H_FAIL("soak: counters grew since the first report "
			       "(mbufs %u -> %u, contexts %u -> %u, resident "
			       "%ld -> %ld KiB)", mbufs0, mbufs, ctx0, ctx, rss0,
			       rss);
		}
	}
	qp = new_qp();	/* the server stops at END */
	c = connect_once(qp, SERVICE, 1);
	disconnect(c, qp, "END");
	printf("client: soak done: %lu connections, %lu SENDs of 4 KiB, and "
	       "on each connection a 64 KiB WRITE, its READ back and a "
	       "fetch-and-add, all completed, every byte and value right, "
	       "counters steady\n", conns, sends);
}

static void
client(int cycles)
{
	struct dpdat_port *port = dpdat_dev_port(dev);
	struct dpdat_cm_event ev;
	struct dpdat_cm_conn *c;
	struct dpdat_qp *qp;
	unsigned int mbufs0, ctx0;
	long rss0 = 0, rss1;
	double t0;

	if (strcmp(mode, "soak") == 0) {
		soak(cycles);
		return;
	}
	if (strcmp(mode, "nolistener") == 0) {
		qp = new_qp();
		c = connect_once(qp, 0x9999, 0);
		ev = expect(DPDAT_CM_REJECTED, 10);
		if (ev.reason != DPDAT_CM_REJ_INVALID_SERVICE)
			H_FAIL("reject reason %u", ev.reason);
		printf("client: nobody listens on 0x9999: rejected, reason %u\n",
		       ev.reason);
		dpdat_cm_conn_free(c);
		dpdat_qp_free(qp);
		qp = new_qp();	/* tell the server to stop */
		c = connect_once(qp, SERVICE, 1);
		disconnect(c, qp, "END");
		return;
	}
	if (strcmp(mode, "reject") == 0) {
		qp = new_qp();
		c = connect_once(qp, SERVICE, 0);
		ev = expect(DPDAT_CM_REJECTED, 10);
		if (ev.reason != DPDAT_CM_REJ_CONSUMER ||
		    memcmp(ev.private_data, rej_pd, sizeof(rej_pd)))
			H_FAIL("reject reason %u or private data", ev.reason);
		printf("client: rejected by the server (reason %u, \"%s\")\n",
		       ev.reason, (char *)ev.private_data);
		dpdat_cm_conn_free(c);
		dpdat_qp_free(qp);
		return;	/* the server stops after one reject (SIGTERM) */
	}
	if (strcmp(mode, "death") == 0) {
		/* SENDs into the server's receives until it dies; then the QP
		 * runs out of retries and the connection is reported broken */
		uint64_t n = 0;

		qp = new_qp();
		c = connect_once(qp, SERVICE, 1);
		t0 = h_now();
		for (;;) {
			struct dpdat_wc wc;

			if (n < 32)
				post1(qp, DPDAT_WR_SEND, n++, 0, 64, 0, 0);
			if (dpdat_cq_poll(cq, &wc, 1) == 1 &&
			    wc.status == DPDAT_WC_SUCCESS)
				n--;
			if (dpdat_cm_eq_poll(eq, &ev) == 1)
				break;
			if (h_now() - t0 > 10)
				H_FAIL("no event 10 s after connecting");
		}
		if (ev.type != DPDAT_CM_BROKEN || ev.conn != c)
			H_FAIL("event %d, want BROKEN", ev.type);
		printf("client: BROKEN %.2f s after connecting (the server "
		       "dies after 0.3 s)\n", h_now() - t0);
		dpdat_cm_conn_free(c);
		dpdat_qp_free(qp);
		return;
	}
	if (strcmp(mode, "unreachable") == 0) {
		uint32_t nobody;

		inet_pton(AF_INET, "198.18.0.99", &nobody);
		qp = new_qp();
		t0 = h_now();
		c = dpdat_cm_connect(qp, nobody, SERVICE, NULL, 0, eq);
		ev = expect(DPDAT_CM_UNREACHABLE, 10);
		printf("client: 198.18.0.99 unreachable after %.2f s\n",
		       h_now() - t0);
		dpdat_cm_conn_free(c);
		dpdat_qp_free(qp);
		qp = new_qp();	/* tell the server to stop */
		c = connect_once(qp, SERVICE, 1);
		disconnect(c, qp, "END");
		return;
	}
	if (strcmp(mode, "many") == 0) {
		many(cycles > 1 ? cycles : 256);
		return;
	}
	if (strcmp(mode, "flush") == 0) {
		/* disconnect while work is pending: everything completes, in
		 * order, once; what had not been answered is flushed */
		struct dpdat_wc wc;
		int got = 0, flushed = 0;

		qp = new_qp();
		c = connect_once(qp, SERVICE, 1);
		for (int k = 0; k < 256; k++)	/* 64 receives wait there */
			post1(qp, DPDAT_WR_SEND, (uint64_t)k, 0, 4096, 0, 0);
		for (int k = 0; k < 20; k++)
			dpdat_dev_progress(dev);
		if (dpdat_cm_disconnect(c, "END", 4) != 0)
			H_FAIL("disconnect");
		while (got < 256) {
			if (h_wait(cq, &wc, 10) != 0)
				H_FAIL("%d of 256 completions", got);
			if (wc.wr_id != (uint64_t)got)
				H_FAIL("completion %lu out of order",
				       (unsigned long)wc.wr_id);
			if (wc.status == DPDAT_WC_WR_FLUSH_ERR)
				flushed++;
			else if (wc.status != DPDAT_WC_SUCCESS || flushed)
				H_FAIL("status %d after %d flushed", wc.status,
				       flushed);
			got++;
		}
		ev = expect(DPDAT_CM_DISCONNECTED, 10);
		printf("client: 256 SENDs: %d done, %d flushed by the "
		       "disconnect, in order\n", 256 - flushed, flushed);
		if (flushed == 0)
			H_FAIL("nothing was pending?");
		dpdat_cm_conn_free(c);
		dpdat_qp_free(qp);
		return;
	}
	if (strcmp(mode, "slow") == 0) {
		qp = new_qp();
		t0 = h_now();
		c = connect_once(qp, SERVICE, 1);
		printf("client: established after %.2f s (the server took "
		       "2.5 s to accept; MRA kept us waiting)\n", h_now() - t0);
		if (h_now() - t0 < 2.4)
			H_FAIL("too early");
		disconnect(c, qp, "END");
		return;
	}
	mbufs0 = rte_mempool_in_use_count(port->pool);
	ctx0 = dpdat_mr_domain_count(dpdat_dev_domain(dev));
	t0 = h_now();
	for (int i = 0; i < cycles; i++) {
		/* the resident set once the first cycles settled the pools
		 * and tables: the later ones may not grow it */
		if (i == cycles / 100)
			rss0 = rss_kib();
		qp = new_qp();
		c = connect_once(qp, SERVICE, 1);
		if (i == 0)
			traffic(qp);
		disconnect(c, qp, i + 1 == cycles ? "END" : "bye");
		if (cycles > 10 && (i + 1) % (cycles / 10) == 0)
			printf("client: %d connect/disconnect cycles (%.1f s)\n",
			       i + 1, h_now() - t0);
	}
	for (int i = 0; i < 200; i++)
		dpdat_dev_progress(dev);
	rss1 = rss_kib();
	printf("client: mbufs in use %u -> %u, contexts %u -> %u, resident "
	       "%ld -> %ld KiB\n", mbufs0,
	       rte_mempool_in_use_count(port->pool), ctx0,
	       dpdat_mr_domain_count(dpdat_dev_domain(dev)), rss0, rss1);
	if (rte_mempool_in_use_count(port->pool) > mbufs0 + h_dev_slack(port) ||
	    dpdat_mr_domain_count(dpdat_dev_domain(dev)) != ctx0)
		H_FAIL("leak");
	/* 8 MiB: the allocator's own slack, never per-cycle growth */
	if (H_RSS_CHECKED && cycles >= 1000 && rss1 > rss0 + 8192)
		H_FAIL("the resident set grew %ld KiB over %d cycles",
		       rss1 - rss0, cycles - cycles / 100);
}

int
main(int argc, char **argv)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	int server_role;

	if (argc < 4)
		H_FAIL("usage: cm_test server|client <socket> <mode> [cycles]");
	server_role = strcmp(argv[1], "server") == 0;
	mode = argv[3];
	dev = h_open(server_role, argv[2], 1500, DPDAT_PROGRESS_INLINE);
	pz = dpdat_pz_create(dpdat_dev_domain(dev));
	cq = dpdat_cq_create(dev, 4096);
	eq = dpdat_cm_eq_create(dev, 2048);	/* many: 1024 at once */
	mem = dpdat_mem_alloc(MEM, 4096, -1);
	d.virt.addr = mem;
	d.virt.length = MEM;
	lmr = dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_ALL |
			       DPDAT_MEM_PRIV_REMOTE_ATOMIC);
	if (!pz || !cq || !eq || !lmr)
		H_FAIL("setup");
	dpdat_lmr_query(lmr, &li);
	key = li.lmr_context;
	if (server_role)
		server();
	else
		client(argc > 4 ? atoi(argv[4]) : 1);
	/* linger: the last answers (a REJ, a DREP) must leave before the
	 * link goes away with the process */
	for (double t0 = h_now(); h_now() - t0 < 0.3; )
		dpdat_dev_progress(dev);
	/* everything back: under the sanitizers a leak report speaks of
	 * the library only */
	{	/* each on its own: one refusal must not hide the rest */
		int left = (dpdat_lmr_free(lmr) != 0) +
			   (dpdat_cm_eq_free(eq) != 0) +
			   (dpdat_cq_free(cq) != 0) + (dpdat_pz_free(pz) != 0);

		dpdat_mem_free(mem);
		left += dpdat_dev_close(dev) != 0;
		if (left != 0)
			fprintf(stderr, "%s: %d object(s) left at exit\n",
				h_role, left);
	}
	return 0;
}
