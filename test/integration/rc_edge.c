/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Edge cases of the RC engine between two processes over memif.
 *
 * rc_edge server|client <socket> protect
 *   The client attacks the server's memory through one fresh QP per case:
 *   a wrong key, a freed key, out of bounds, address wrap, a missing
 *   privilege, a foreign protection zone, each for WRITE or READ. Every
 *   attack must fail with a remote access error at the client; the server
 *   checks afterwards that its memory is byte-identical except for the one
 *   legitimate write.
 *
 * rc_edge server|client <socket> death
 *   The server kills itself mid-stream; every work request of the client
 *   must complete, in error, within the retry budget; no mbuf leaks.
 *
 * rc_edge server|client <socket> unmap
 *   The same death, at the worst moment: the client is held inside a memif
 *   receive burst, past the driver's "connected" test, while the server
 *   dies and the client's interrupt thread unmaps the shared rings. The
 *   burst must end early (counted in peer_unmapped) instead of crashing
 *   the client, and everything else goes as in "death".
 *
 * rc_edge server|client <socket> dereg   (DPDAT_ZEROCOPY=1)
 *   The client streams 1 MiB READs of the server's hugepage memory, which
 *   its engine thread answers zero-copy; midway the server frees the LMR,
 *   then overwrites and frees the memory. dpdat_lmr_free() must wait until
 *   the device released every response holding that memory: a READ that
 *   completes successfully carries the pattern, never the poison; the
 *   READs after the free fail with a remote access error, later ones are
 *   flushed.
 */

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "harness.h"
#include "port_priv.h"

#define RW_LEN (64 << 10)
#define RO_LEN 4096
#define GUARD 0xa5
#define NCASE 9
#define CUT_SLACK 64	/* mbufs a burst cut short may lose: a transmit batch */

struct region {
	uint8_t *buf;
	struct dpdat_lmr *lmr;
	uint32_t key;
};

static struct dpdat_dev *dev;
static struct dpdat_pz *pz, *pz2;
static struct dpdat_cq *cq;
static struct dpdat_qp *qp[NCASE];

/* every region made, to give back at exit (the sanitizers see the
 * library's tables in DPDK memory, which they do not scan) */
static struct region made[16];
static unsigned int n_made;

/* The test freed r's LMR (and its memory, when mem). */
static void
region_gone(const struct region *r, bool mem)
{
	for (unsigned int i = 0; i < n_made; i++)
		if (made[i].lmr == r->lmr) {
			made[i].lmr = NULL;
			if (mem)
				made[i].buf = NULL;
		}
}

static void
region(struct region *r, struct dpdat_pz *z, size_t len, uint32_t priv,
       uint8_t fill)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;

	r->buf = dpdat_mem_alloc(len, 4096, -1);
	if (r->buf == NULL)
		H_FAIL("mem_alloc");
	memset(r->buf, fill, len);
	d.virt.addr = r->buf;
	d.virt.length = len;
	r->lmr = dpdat_lmr_create(z, &d, priv);
	if (r->lmr == NULL)
		H_FAIL("lmr_create");
	dpdat_lmr_query(r->lmr, &li);
	r->key = li.lmr_context;
	if (n_made < RTE_DIM(made))
		made[n_made++] = *r;
}

/* Everything back, the device last; what cannot go is said. */
static void
teardown(void)
{
	int left = 0;

	for (int i = 0; i < NCASE; i++)
		if (qp[i] != NULL && dpdat_qp_free(qp[i]) != 0)
			left++;
	if (cq != NULL && dpdat_cq_free(cq) != 0)
		left++;
	for (unsigned int i = 0; i < n_made; i++) {
		if (made[i].lmr != NULL && dpdat_lmr_free(made[i].lmr) != 0)
			left++;
		dpdat_mem_free(made[i].buf);
	}
	left += dpdat_pz_free(pz) != 0;
	left += dpdat_pz_free(pz2) != 0;
	left += dpdat_dev_close(dev) != 0;
	if (left != 0)
		fprintf(stderr, "%s: %d object(s) left at exit\n", h_role,
			left);
}

static void
make_qps(int n)
{
	struct dpdat_qp_conf qc = { .pz = pz, .max_send_wr = 512 };

	cq = dpdat_cq_create(dev, 4096);
	qc.send_cq = qc.recv_cq = cq;
	for (int i = 0; i < n; i++) {
		qp[i] = dpdat_qp_create(dev, &qc);
		if (qp[i] == NULL)
			H_FAIL("qp_create");
	}
}

static void
connect_qps(int n, const char *addr, char (*lines)[256], uint8_t retry,
	    uint8_t timeout)
{
	struct dpdat_qp_remote r = { .pmtu = 1024, .retry_cnt = retry,
				     .rnr_retry = 7, .timeout = timeout };

	h_addr_parse(addr, &r);
	for (int i = 0; i < n; i++) {
		if (sscanf(lines[i], "%u %u", &r.qpn, &r.psn) != 2)
			H_FAIL("bad qp line");
		if (dpdat_qp_connect(qp[i], &r) != 0)
			H_FAIL("connect");
	}
}

static void
qp_lines(int n, char (*lines)[256])
{
	struct dpdat_qp_info qi;

	for (int i = 0; i < n; i++) {
		dpdat_qp_query(qp[i], &qi);
		snprintf(lines[i], 256, "%u %u", qi.qpn, qi.sq_psn);
	}
}

/* ---- protect ---- */

static const char legit[16] = "0123456789abcdef";

static void
protect_server(const char *sock)
{
	char mine[2 + NCASE][256], theirs[2 + NCASE][256], done[1][256];
	struct region rw, ro, foreign, freed;
	int i;

	region(&rw, pz, RW_LEN, DPDAT_MEM_PRIV_ALL, GUARD);
	region(&ro, pz, RO_LEN, DPDAT_MEM_PRIV_LOCAL_READ |
	       DPDAT_MEM_PRIV_REMOTE_READ, 0);
	for (i = 0; i < RO_LEN; i++)
		ro.buf[i] = (uint8_t)(i * 7);
	region(&foreign, pz2, RO_LEN, DPDAT_MEM_PRIV_ALL, GUARD);
	region(&freed, pz, RO_LEN, DPDAT_MEM_PRIV_ALL, GUARD);
	if (dpdat_lmr_free(freed.lmr) != 0)
		H_FAIL("lmr_free");
	region_gone(&freed, false);
	make_qps(NCASE);
	h_addr_str(dev, mine[0], 256);
	snprintf(mine[1], 256, "%lu %u %lu %u %lu %u %lu %u",
		 (unsigned long)(uintptr_t)rw.buf, rw.key,
		 (unsigned long)(uintptr_t)ro.buf, ro.key,
		 (unsigned long)(uintptr_t)foreign.buf, foreign.key,
		 (unsigned long)(uintptr_t)freed.buf, freed.key);
	qp_lines(NCASE, mine + 2);
	h_exchange(sock, 1, mine, theirs, 2 + NCASE);
	connect_qps(NCASE, theirs[0], theirs + 2, 7, 14);
	/* serve until the client says it is done */
	{
		char dsock[300];
		pid_t pid = fork();

		snprintf(dsock, sizeof(dsock), "%s.done", sock);
		if (pid == 0) {	/* the waiter: the parent keeps polling */
			snprintf(done[0], 256, "server");
			h_exchange(dsock, 1, done, theirs, 1);
			_exit(0);
		}
		while (waitpid(pid, NULL, WNOHANG) == 0)
			dpdat_dev_progress(dev);
	}
	for (i = 0; i < RW_LEN; i++) {
		uint8_t want = i >= 100 && i < 116 ? (uint8_t)legit[i - 100] :
			       GUARD;
		if (rw.buf[i] != want)
			H_FAIL("rw byte %d changed: %02x", i, rw.buf[i]);
	}
	for (i = 0; i < RO_LEN; i++) {
		if (ro.buf[i] != (uint8_t)(i * 7))
			H_FAIL("read-only byte %d changed", i);
		if (foreign.buf[i] != GUARD || freed.buf[i] != GUARD)
			H_FAIL("foreign or freed byte %d changed", i);
	}
	printf("server: memory byte-identical outside the granted window\n");
}

static void
attack(int k, enum dpdat_wr_opcode op, uint64_t raddr, uint32_t rkey,
       uint8_t *lbuf, uint32_t lkey, uint32_t len,
       enum dpdat_wc_status want, const char *what)
{
	struct dpdat_sge sge = { (uintptr_t)lbuf, len, lkey };
	struct dpdat_send_wr wr = { .wr_id = (uint64_t)k, .opcode = op,
		.flags = DPDAT_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
		.remote_addr = raddr, .rkey = rkey };
	struct dpdat_wc wc;

	if (dpdat_post_send(qp[k], &wr) != 0)
		H_FAIL("post %s", what);
	if (h_wait(cq, &wc, 10) != 0)
		H_FAIL("%s: no completion", what);
	if (wc.wr_id != (uint64_t)k || wc.status != want)
		H_FAIL("%s: status %d, want %d", what, wc.status, want);
	printf("client: %-36s -> status %d as expected\n", what, wc.status);
	if (want != DPDAT_WC_SUCCESS) {
		/* the QP is broken now: later work is flushed */
		wr.wr_id = 1000 + k;
		if (dpdat_post_send(qp[k], &wr) != 0 ||
		    h_wait(cq, &wc, 5) != 0 || wc.wr_id != 1000u + k ||
		    wc.status != DPDAT_WC_WR_FLUSH_ERR)
			H_FAIL("%s: later work not flushed", what);
	}
}

static void
protect_client(const char *sock)
{
	char mine[2 + NCASE][256], theirs[2 + NCASE][256], done[1][256];
	unsigned long rw, ro, fo, fr;
	uint32_t rwk, rok, fok, frk;
	struct region loc;
	const int E = DPDAT_WC_REM_ACCESS_ERR;

	region(&loc, pz, RW_LEN, DPDAT_MEM_PRIV_ALL, 0);
	memcpy(loc.buf, legit, sizeof(legit));
	make_qps(NCASE);
	h_addr_str(dev, mine[0], 256);
	snprintf(mine[1], 256, "-");
	qp_lines(NCASE, mine + 2);
	h_exchange(sock, 0, mine, theirs, 2 + NCASE);
	if (sscanf(theirs[1], "%lu %u %lu %u %lu %u %lu %u", &rw, &rwk, &ro,
		   &rok, &fo, &fok, &fr, &frk) != 8)
		H_FAIL("bad region line");
	connect_qps(NCASE, theirs[0], theirs + 2, 7, 14);

	attack(0, DPDAT_WR_RDMA_WRITE, rw + 100, rwk, loc.buf, loc.key, 16,
	       DPDAT_WC_SUCCESS, "WRITE inside the window");
	attack(1, DPDAT_WR_RDMA_WRITE, rw, rwk ^ 0x800000u << 8, loc.buf,
	       loc.key, 16, E, "WRITE with an unknown key");
	attack(2, DPDAT_WR_RDMA_WRITE, fr, frk, loc.buf, loc.key, 16, E,
	       "WRITE with a freed key");
	attack(3, DPDAT_WR_RDMA_WRITE, rw + RW_LEN - 8, rwk, loc.buf, loc.key,
	       16, E, "WRITE 8 bytes past the end");
	attack(4, DPDAT_WR_RDMA_WRITE, UINT64_MAX - 4, rwk, loc.buf, loc.key,
	       16, E, "WRITE with a wrapping address");
	attack(5, DPDAT_WR_RDMA_WRITE, ro, rok, loc.buf, loc.key, 16, E,
	       "WRITE without remote write");
	attack(6, DPDAT_WR_RDMA_WRITE, fo, fok, loc.buf, loc.key, 16, E,
	       "WRITE into another PZ");
	attack(7, DPDAT_WR_RDMA_READ, rw, rwk ^ 0x1, loc.buf, loc.key, 16, E,
	       "READ with a stale generation");
	attack(8, DPDAT_WR_RDMA_READ, ro, rok, loc.buf + 4096, loc.key,
	       RO_LEN, DPDAT_WC_SUCCESS, "READ of read-only memory");
	for (int i = 0; i < RO_LEN; i++)
		if (loc.buf[4096 + i] != (uint8_t)(i * 7))
			H_FAIL("READ data wrong at %d", i);
	{
		char dsock[300];

		snprintf(dsock, sizeof(dsock), "%s.done", sock);
		snprintf(done[0], 256, "client");
		h_exchange(dsock, 0, done, theirs, 1);
	}
}

/* ---- dereg ---- */

#define DR_LEN (4u << 20)
#define DR_READ (1u << 20)
#define DR_DEPTH 8
#define DR_POISON 0xdd

static inline uint8_t
dr_byte(uint32_t i)
{
	return (uint8_t)(i * 13 + (i >> 12));
}

static void
dereg_server(const char *sock)
{
	char mine[3][256], theirs[3][256];
	struct dpdat_qp_stats st;
	struct region r;
	double t0;

	region(&r, pz, DR_LEN, DPDAT_MEM_PRIV_LOCAL_READ |
	       DPDAT_MEM_PRIV_REMOTE_READ, 0);
	for (uint32_t i = 0; i < DR_LEN; i++)
		r.buf[i] = dr_byte(i);
	make_qps(1);
	h_addr_str(dev, mine[0], 256);
	snprintf(mine[1], 256, "%lu %u", (unsigned long)(uintptr_t)r.buf,
		 r.key);
	qp_lines(1, mine + 2);
	h_exchange(sock, 1, mine, theirs, 3);
	connect_qps(1, theirs[0], theirs + 2, 7, 14);
	/* the engine thread answers: wait for responses to be streaming */
	t0 = h_now();
	do {
		if (h_now() - t0 > 30)
			H_FAIL("no zero-copy READ responses");
		usleep(1000);
		dpdat_qp_stats(qp[0], &st);
	} while (st.tx_zerocopy < 4 * DR_READ / 1024);
	if (dpdat_lmr_free(r.lmr) != 0)
		H_FAIL("lmr_free");
	/* what the device may still send from here on is the poison */
	memset(r.buf, DR_POISON, DR_LEN);
	dpdat_mem_free(r.buf);
	region_gone(&r, true);
	printf("server: LMR and memory freed after %lu zero-copy responses\n",
	       (unsigned long)st.tx_zerocopy);
	{
		char dsock[300], done[1][256];

		snprintf(dsock, sizeof(dsock), "%s.done", sock);
		snprintf(done[0], 256, "server");
		h_exchange(dsock, 1, done, theirs, 1);
	}
}

/* One READ of the server's memory into local slot id % DR_DEPTH. */
static void
dereg_post(struct region *loc, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	const uint32_t slot = (uint32_t)(id % DR_DEPTH);
	struct dpdat_sge sge = { (uintptr_t)loc->buf + slot * DR_READ,
				 DR_READ, loc->key };
	struct dpdat_send_wr wr = { .wr_id = id,
		.opcode = DPDAT_WR_RDMA_READ, .flags = DPDAT_SEND_SIGNALED,
		.sg_list = &sge, .num_sge = 1,
		.remote_addr = raddr + (id % (DR_LEN / DR_READ)) * DR_READ,
		.rkey = rkey };

	memset(loc->buf + slot * DR_READ, 0, DR_READ);
	if (dpdat_post_send(qp[0], &wr) != 0)
		H_FAIL("post READ %lu", (unsigned long)id);
}

static void
dereg_check(const struct region *loc, uint64_t id)
{
	const uint8_t *p = loc->buf + (id % DR_DEPTH) * DR_READ;
	const uint32_t base = (uint32_t)(id % (DR_LEN / DR_READ)) * DR_READ;

	for (uint32_t i = 0; i < DR_READ; i++)
		if (p[i] != dr_byte(base + i))
			H_FAIL("READ %lu succeeded with byte %u = %02x%s",
			       (unsigned long)id, i, p[i], p[i] == DR_POISON ?
			       " (freed memory sent)" : "");
}

static void
dereg_client(const char *sock)
{
	char mine[3][256], theirs[3][256], done[1][256], dsock[300];
	uint64_t posted = 0, ok = 0, flushed = 0, raddr;
	uint32_t rkey;
	struct region loc;
	struct dpdat_wc wc;
	int failed = 0;

	region(&loc, pz, DR_DEPTH * DR_READ, DPDAT_MEM_PRIV_ALL, 0);
	make_qps(1);
	h_addr_str(dev, mine[0], 256);
	snprintf(mine[1], 256, "-");
	qp_lines(1, mine + 2);
	h_exchange(sock, 0, mine, theirs, 3);
	if (sscanf(theirs[1], "%lu %u", &raddr, &rkey) != 2)
		H_FAIL("bad region line");
	connect_qps(1, theirs[0], theirs + 2, 7, 14);
	for (; posted < DR_DEPTH; posted++)
		dereg_post(&loc, raddr, rkey, posted);
	while (ok + flushed + (uint64_t)failed < posted) {
		if (h_wait(cq, &wc, 20) != 0)
			H_FAIL("no completion after %lu READs",
			       (unsigned long)ok);
		if (wc.status == DPDAT_WC_SUCCESS) {
			if (failed || flushed)
				H_FAIL("READ %lu succeeded after the error",
				       (unsigned long)wc.wr_id);
			dereg_check(&loc, wc.wr_id);
			ok++;
			if (posted < 100000)
				dereg_post(&loc, raddr, rkey, posted++);
		} else if (wc.status == DPDAT_WC_REM_ACCESS_ERR && !failed) {
			failed = 1;
		} else if (wc.status == DPDAT_WC_WR_FLUSH_ERR) {
			/* flushed: also a READ before the one the NAK names,
			 * when some of its answers were lost (the memif ring
			 * full, under load) and asked again: the responder,
			 * broken, never sends them. It failed so 2 runs in 20
			 * on a loaded machine; a READ after the error must
			 * never succeed, and the error must come */
			flushed++;
		} else {
			H_FAIL("READ %lu: status %d", (unsigned long)wc.wr_id,
			       wc.status);
		}
	}
	if (!failed)
		H_FAIL("the READs never failed after the LMR was freed");
	printf("client: %lu READs of 1 MiB intact, then a remote access "
	       "error, %lu flushed\n", (unsigned long)ok,
	       (unsigned long)flushed);
	snprintf(dsock, sizeof(dsock), "%s.done", sock);
	snprintf(done[0], 256, "client");
	h_exchange(dsock, 0, done, theirs, 1);
}

/* ---- death ---- */

/* unmap: the files by which the two sides meet, the burst to hold */
static const char *unmap_sock;
static volatile int stall_armed;
static pthread_t poll_thread;

static void
flag_path(char *path, size_t len, const char *what)
{
	snprintf(path, len, "%s.%s", unmap_sock, what);
}

static int
flag_wait(const char *what, double timeout_s)
{
	char path[512];
	double t0 = h_now();

	flag_path(path, sizeof(path), what);
	while (access(path, F_OK) != 0) {
		if (h_now() - t0 > timeout_s)
			return -1;
		usleep(1000);
	}
	return 0;
}

static void
flag_set(const char *what)
{
	char path[512];
	FILE *f;

	flag_path(path, sizeof(path), what);
	f = fopen(path, "w");
	if (f == NULL)
		H_FAIL("cannot write %s", path);
	fclose(f);
}

/* The client's interrupt thread has taken the link down and unmapped
 * memif's regions: 0, or -1 after timeout_s. */
static int
wait_unmapped(double timeout_s)
{
	struct dpdat_port *p = dpdat_dev_port(dev);
	struct rte_eth_link link;
	double t0 = h_now();
	char line[512];
	int mapped;
	FILE *f;

	for (;;) {
		mapped = 0;
		f = fopen("/proc/self/maps", "r");
		while (f != NULL && fgets(line, sizeof(line), f) != NULL)
			mapped |= strstr(line, "/memfd:memif_region_") != NULL;
		if (f != NULL)
			fclose(f);
		if (!mapped && rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_DOWN)
			return 0;
		if (h_now() - t0 > timeout_s)
			return -1;
		usleep(10 * 1000);
	}
}

/*
 * The burst to hold. DPDK 22.11's memif receive burst allocates its mbufs
 * after it has read the ring's head and before it copies the frames out
 * of the peer's buffers. The client's mbuf pools use these mempool ops,
 * which pass everything to the ring ops but hold the first allocation
 * made from inside the memif driver once armed, until the server is dead
 * and the client's interrupt thread has unmapped the rings. The thread
 * that polls is no EAL lcore, so its allocations have no per-lcore cache
 * and every one comes here.
 */
static const struct rte_mempool_ops *ring_ops;

static int
stall_alloc(struct rte_mempool *mp)
{
	for (unsigned int i = 0; ring_ops == NULL &&
	     i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name,
			   "ring_mp_mc") == 0)
			ring_ops = &rte_mempool_ops_table.ops[i];
	if (ring_ops == NULL)
		H_FAIL("no ring_mp_mc mempool ops");
	return ring_ops->alloc(mp);
}

static void
stall_free(struct rte_mempool *mp)
{
	ring_ops->free(mp);
}

static int
stall_enqueue(struct rte_mempool *mp, void * const *objs, unsigned int n)
{
	return ring_ops->enqueue(mp, objs, n);
}

static unsigned int
stall_count(const struct rte_mempool *mp)
{
	return ring_ops->get_count(mp);
}

static int
stall_dequeue(struct rte_mempool *mp, void **objs, unsigned int n)
{
	Dl_info di;

	if (stall_armed && pthread_equal(pthread_self(), poll_thread) &&
	    dladdr(__builtin_return_address(0), &di) != 0 &&
	    di.dli_fname != NULL && strstr(di.dli_fname, "net_memif")) {
		stall_armed = 0;
		printf("client: holding a memif receive burst; server: die\n");
		fflush(stdout);
		flag_set("stalled");
		if (flag_wait("dying", 10) != 0)
			H_FAIL("the server did not die");
		if (wait_unmapped(10) != 0)
			H_FAIL("the rings were not unmapped 10 s after the "
			       "server's death");
	}
	return ring_ops->dequeue(mp, objs, n);
}

static const struct rte_mempool_ops stall_ops = {
	.name = "dpdat_test_stall",
	.alloc = stall_alloc,
	.free = stall_free,
	.enqueue = stall_enqueue,
	.dequeue = stall_dequeue,
	.get_count = stall_count,
};
RTE_MEMPOOL_REGISTER_OPS(stall_ops);

static void
use_stall_ops(void)
{
	if (rte_mbuf_set_user_mempool_ops(stall_ops.name) != 0)
		H_FAIL("cannot set the mbuf pool ops");
}

/* The server keeps receives posted while it lives, then dies. */
static void
death_server(const char *sock)
{
	char mine[2][256], theirs[2][256];
	struct dpdat_recv_wr rwr = { .num_sge = 1 };
	struct dpdat_sge sge;
	struct region buf;
	struct dpdat_wc wc;
	double t0;

	region(&buf, pz, RW_LEN, DPDAT_MEM_PRIV_ALL, 0);
	sge = (struct dpdat_sge){ (uintptr_t)buf.buf, 4096, buf.key };
	rwr.sg_list = &sge;
	make_qps(1);
	for (int i = 0; i < 128; i++)
		dpdat_post_recv(qp[0], &rwr);
	h_addr_str(dev, mine[0], 256);
	qp_lines(1, mine + 1);
	h_exchange(sock, 1, mine, theirs, 2);
	connect_qps(1, theirs[0], theirs + 1, 3, 14);
	t0 = h_now();
	while (h_now() - t0 < 0.5) {
		if (dpdat_cq_poll(cq, &wc, 1) == 1)
			dpdat_post_recv(qp[0], &rwr);
	}
	if (unmap_sock != NULL) {
		/* poll on until the client holds a burst */
		t0 = h_now();
		while (access(unmap_sock, F_OK) == 0 &&
		       flag_wait("stalled", 0) != 0) {
			if (h_now() - t0 > 10)
				H_FAIL("the client never held a burst");
			if (dpdat_cq_poll(cq, &wc, 1) == 1)
				dpdat_post_recv(qp[0], &rwr);
		}
		flag_set("dying");
	}
	printf("server: dying now, mid-stream\n");
	fflush(stdout);
	kill(getpid(), SIGKILL);
}

/* The client streams SENDs; once the server is gone, every outstanding
 * SEND must complete: the oldest with retry-exceeded, the rest flushed. */
static void
death_client(const char *sock)
{
	char mine[2][256], theirs[2][256];
	struct dpdat_port *port = dpdat_dev_port(dev);
	struct dpdat_port_stats st;
	unsigned int posted = 0, done = 0, ok = 0, retry = 0, flushed = 0;
	unsigned int base, after;
	double t_last_ok, t_err = 0;
	struct region loc;
	struct dpdat_wc wc;
	struct dpdat_sge sge;
	struct dpdat_send_wr wr = { .opcode = DPDAT_WR_SEND,
		.flags = DPDAT_SEND_SIGNALED, .num_sge = 1 };

	base = rte_mempool_in_use_count(port->pool);
	region(&loc, pz, RW_LEN, DPDAT_MEM_PRIV_ALL, 0);
	sge = (struct dpdat_sge){ (uintptr_t)loc.buf, 4096, loc.key };
	wr.sg_list = &sge;
	make_qps(1);
	h_addr_str(dev, mine[0], 256);
	qp_lines(1, mine + 1);
	h_exchange(sock, 0, mine, theirs, 2);
	/* retry_cnt 3, timeout 14 (67 ms): about 0.3 s to give up */
	connect_qps(1, theirs[0], theirs + 1, 3, 14);
	t_last_ok = h_now();
	while (done < posted || t_err == 0) {
		wr.wr_id = posted;
		if (t_err == 0 && posted - done < 64 &&
		    dpdat_post_send(qp[0], &wr) == 0)
			posted++;
		if (dpdat_cq_poll(cq, &wc, 1) != 1) {
			if (h_now() - t_last_ok > 5)
				H_FAIL("nothing completed 5 s after the last "
				       "success (%u of %u done)", done, posted);
			continue;
		}
		if (wc.wr_id != done)
			H_FAIL("completion %lu out of order (want %u)",
			       (unsigned long)wc.wr_id, done);
		done++;
		if (wc.status == DPDAT_WC_SUCCESS) {
			ok++;
			t_last_ok = h_now();
			if (unmap_sock != NULL && ok == 200)
				stall_armed = 1;
		} else if (wc.status == DPDAT_WC_RETRY_EXC_ERR && !retry) {
			retry++;
			t_err = h_now();
		} else if (wc.status == DPDAT_WC_WR_FLUSH_ERR && retry) {
			flushed++;
		} else {
			H_FAIL("completion status %d (ok %u retry %u flushed %u)",
			       wc.status, ok, retry, flushed);
		}
	}
	printf("client: %u SENDs ok, then retry exceeded %.3f s after the "
	       "last success, %u flushed; all %u completed once\n", ok,
	       t_err - t_last_ok, flushed, posted);
	if (ok == 0 || t_err - t_last_ok > 2.0 + (unmap_sock ? 0.5 : 0))
		H_FAIL("peer death not detected in time");
	if (unmap_sock != NULL) {
		dpdat_port_stats(port, &st);
		printf("client: %lu receive burst(s) cut short by the unmap\n",
		       (unsigned long)st.peer_unmapped);
		if (st.peer_unmapped != 1)
			H_FAIL("the held read was not inside a memif burst "
			       "that the unmap cut short");
	}
	if (dpdat_qp_free(qp[0]) != 0 || dpdat_cq_free(cq) != 0 ||
	    dpdat_lmr_free(loc.lmr) != 0)
		H_FAIL("teardown");
	for (int i = 0; i < 100; i++)
		dpdat_dev_progress(dev);
	after = rte_mempool_in_use_count(port->pool);
	dpdat_port_stats(port, &st);
	printf("client: mbufs in use %u before, %u after; %lu burst(s) cut "
	       "short\n", base, after, (unsigned long)st.peer_unmapped);
	/* a burst cut short loses at most the mbufs the driver had taken
	 * for it: one burst each (in "death" the unmap can also meet the
	 * client inside a burst, about one run in 20) */
	if (after > base + st.peer_unmapped * CUT_SLACK + h_dev_slack(port))
		H_FAIL("%u mbufs leaked", after - base);
}

static void *
unmap_thread(void *arg)
{
	death_client(arg);
	return NULL;
}

/* death_client on a thread that is no EAL lcore (see stall_dequeue) */
static void
unmap_client(void)
{
	if (pthread_create(&poll_thread, NULL, unmap_thread,
			   (void *)unmap_sock) != 0 ||
	    pthread_join(poll_thread, NULL) != 0)
		H_FAIL("poll thread");
}

int
main(int argc, char **argv)
{
	int server;

	if (argc != 4)
		H_FAIL("usage: rc_edge server|client <socket> "
		       "protect|death|unmap|dereg");
	server = strcmp(argv[1], "server") == 0;
	if (!server && strcmp(argv[3], "unmap") == 0)
		h_after_eal = use_stall_ops;
	/* dereg: the server's engine thread answers READs zero-copy */
	dev = h_open(server, argv[2], 1500, server &&
		     strcmp(argv[3], "dereg") == 0 ? DPDAT_PROGRESS_THREAD :
		     DPDAT_PROGRESS_INLINE);
	pz = dpdat_pz_create(dpdat_dev_domain(dev));
	pz2 = dpdat_pz_create(dpdat_dev_domain(dev));
	if (strcmp(argv[3], "protect") == 0) {
		if (server)
			protect_server(argv[2]);
		else
			protect_client(argv[2]);
	} else if (strcmp(argv[3], "dereg") == 0) {
		if (server)
			dereg_server(argv[2]);
		else
			dereg_client(argv[2]);
	} else if (strcmp(argv[3], "death") == 0 ||
		   strcmp(argv[3], "unmap") == 0) {
		if (argv[3][0] == 'u')
			unmap_sock = argv[2];
		if (server)
			death_server(argv[2]);
		else if (unmap_sock == NULL)
			death_client(argv[2]);
		else
			unmap_client();
	} else {
		H_FAIL("unknown mode %s", argv[3]);
	}
	for (int i = 0; i < 100; i++)
		dpdat_dev_progress(dev);
	if (strcmp(argv[3], "protect") == 0 || strcmp(argv[3], "dereg") == 0) {
		teardown();
	} else if (!server) {
		/* everything was freed: the device must close cleanly even
		 * though its peer vanished */
		if (dpdat_pz_free(pz) != 0 || dpdat_pz_free(pz2) != 0 ||
		    dpdat_dev_close(dev) != 0)
			H_FAIL("device teardown");
		dpdat_eal_cleanup();
		printf("client: device closed\n");
	}
	return 0;
}
