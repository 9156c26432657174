/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Two engines per side on one memif link (dpdat_port_conf.queues = 2, the
 * second device opened with dpdat_dev_conf.share): every byte checked.
 *
 * rc_engines server|client <socket> [rounds [thread]]
 *
 * Each side opens device 0 on queue 0 and device 1 on queue 1; LMRs come
 * from the one shared domain. Four QPs: 0 and 1 pair the same queue on
 * both sides (the path memif gives for free), 2 and 3 are crossed (the
 * client's device 0 with the server's device 1, and the other way round):
 * their frames arrive on the other queue and are handed over by QP number.
 * Per round and QP the client WRITEs 64 KiB of a pattern into the QP's
 * slot of the server's LMR, READs it back and compares, and SENDs 4 KiB
 * that the server checks, and adds 1 to one counter of the server's with
 * an RDMA fetch-and-add: the values fetched, over all QPs and rounds, must
 * be every number from 0 once (the server's two responders, on two queues
 * and with "thread" on two threads, add atomically, and a duplicate after
 * a loss is never added twice). Both sides then require frames handed over
 * between their queues (rx_steered) and none lost for want of room.
 * DPDAT_FAULT applies to every queue. "thread": each device runs its own
 * engine thread instead of the polling thread running both.
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>

#include "harness.h"

#define NENG	2
#define NQP	4
#define WLEN	(64 << 10)
#define SLEN	4096
#define DEPTH	64
/* the server's counter, after its WRITE slots and receive buffers */
#define CTR_OFF	((size_t)NQP * WLEN + (size_t)NQP * DEPTH * SLEN)

static struct dpdat_dev *dev[NENG];
static struct dpdat_cq *cq[NENG];
static struct dpdat_qp *qp[NQP];
static struct dpdat_pz *pz;
static enum dpdat_progress progress = DPDAT_PROGRESS_INLINE;

/* which device QP i lives on: the client's i % 2; the server's the same
 * for 0 and 1, the other one for 2 and 3 */
static int
qp_dev(int server, int i)
{
	return server && i >= 2 ? 1 - i % 2 : i % 2;
}

static uint8_t
pat(uint32_t round, int q, size_t off)
{
	return (uint8_t)(round * 131u + (uint32_t)q * 17u + off * 7u +
			 (off >> 8));
}

static struct dpdat_lmr *
lmr(uint8_t **buf, size_t len, uint32_t *key)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	struct dpdat_lmr *l;

	*buf = dpdat_mem_alloc(len, 4096, -1);
	if (*buf == NULL)
		H_FAIL("mem_alloc");
	memset(*buf, 0, len);
	d.virt.addr = *buf;
	d.virt.length = len;
	l = dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_ALL |
			     DPDAT_MEM_PRIV_REMOTE_ATOMIC);
	if (l == NULL)
		H_FAIL("lmr_create");
	dpdat_lmr_query(l, &li);
	*key = li.lmr_context;
	return l;
}

static void
open_all(int server, const char *sock)
{
	struct dpdat_dev_conf dc = { .progress = progress };
	struct dpdat_qp_conf qc = { .max_send_wr = DEPTH,
				    .max_recv_wr = DEPTH };

	h_queues = NENG;
	dev[0] = h_open(server, sock, 0, progress);
	dc.share = dev[0];
	dev[1] = dpdat_dev_open(&dc);
	if (dev[1] == NULL)
		H_FAIL("second engine: %s", rte_strerror(rte_errno));
	if (dpdat_port_queue(dpdat_dev_port(dev[1])) != 1)
		H_FAIL("second engine on queue %d",
		       dpdat_port_queue(dpdat_dev_port(dev[1])));
	/* a third has no queue left */
	if (dpdat_dev_open(&dc) != NULL || rte_errno != ENOSPC)
		H_FAIL("a third engine on two queues: %s",
		       rte_strerror(rte_errno));
	/* the first goes last; a sharer's own share is refused */
	if (dpdat_dev_close(dev[0]) != -EBUSY ||
	    dpdat_port_free(dpdat_dev_port(dev[0])) != -EBUSY)
		H_FAIL("device 0 or its port closed under device 1");
	if (dpdat_port_attach(dpdat_dev_port(dev[1])) != NULL ||
	    rte_errno != EBADF)
		H_FAIL("a queue attached to queue 1");
	dc.share = dev[1];
	if (dpdat_dev_open(&dc) != NULL || rte_errno != EINVAL)
		H_FAIL("a device sharing a sharer");
	dc.share = dev[0];
	dc.max_qps = 1u << 20;
	if (dpdat_dev_open(&dc) != NULL || rte_errno != EINVAL)
		H_FAIL("2^20 QPs on a queue");
	dc.max_qps = 0;
	pz = dpdat_pz_create(dpdat_dev_domain(dev[0]));
	if (pz == NULL || dpdat_dev_domain(dev[1]) != dpdat_dev_domain(dev[0]))
		H_FAIL("shared domain");
	for (int e = 0; e < NENG; e++) {
		cq[e] = dpdat_cq_create(dev[e], 4 * DEPTH * NQP);
		if (cq[e] == NULL)
			H_FAIL("cq_create");
	}
	for (int i = 0; i < NQP; i++) {
		qc.pz = pz;
		qc.send_cq = qc.recv_cq = cq[qp_dev(server, i)];
		qp[i] = dpdat_qp_create(dev[qp_dev(server, i)], &qc);
		if (qp[i] == NULL)
			H_FAIL("qp_create");
	}
}

/* lines: the address of each device, then "qpn psn" of each QP */
static void
connect_all(int server, const char *sock, uint32_t *rkey, uint64_t *raddr,
	    uint32_t key, uint64_t addr)
{
	char mine[NENG + NQP + 1][256], theirs[NENG + NQP + 1][256];
	struct dpdat_qp_remote r = { .pmtu = 4096, .retry_cnt = 7,
				     .rnr_retry = 7, .timeout = 14 };
	struct dpdat_qp_info qi;
	unsigned long long a;
	int peer_dev;

	for (int e = 0; e < NENG; e++)
		h_addr_str(dev[e], mine[e], 256);
	for (int i = 0; i < NQP; i++) {
		dpdat_qp_query(qp[i], &qi);
		snprintf(mine[NENG + i], 256, "%u %u", qi.qpn, qi.sq_psn);
		if ((qi.qpn >> 20) != (uint32_t)qp_dev(server, i))
			H_FAIL("QP %d on device %d has QPN %#x", i,
			       qp_dev(server, i), qi.qpn);
	}
	snprintf(mine[NENG + NQP], 256, "%u %llu", key,
		 (unsigned long long)addr);
	h_exchange(sock, server, mine, theirs, NENG + NQP + 1);
	if (sscanf(theirs[NENG + NQP], "%u %llu", rkey, &a) != 2)
		H_FAIL("bad key line");
	*raddr = a;
	for (int i = 0; i < NQP; i++) {
		peer_dev = qp_dev(!server, i);
		h_addr_parse(theirs[peer_dev], &r);
		if (sscanf(theirs[NENG + i], "%u %u", &r.qpn, &r.psn) != 2)
			H_FAIL("bad qp line");
		if (dpdat_qp_connect(qp[i], &r) != 0)
			H_FAIL("connect %d", i);
	}
}

/* Completions of either engine; the QP each came from by wr_id >> 56. */
static int
poll_any(struct dpdat_wc *wc)
{
	for (int e = 0; e < NENG; e++)
		if (dpdat_cq_poll(cq[e], wc, 1) == 1)
			return 1;
	return 0;
}

static void
check_steering(void)
{
	struct dpdat_port_stats st;
	uint64_t steered = 0;

	for (int e = 0; e < NENG; e++) {
		dpdat_port_stats(dpdat_dev_port(dev[e]), &st);
		printf("%s: queue %d: %lu RoCE frames received, %lu handed to "
		       "the other queue, %lu dropped for want of room\n",
		       h_role, e, (unsigned long)st.rx_roce,
		       (unsigned long)st.rx_steered,
		       (unsigned long)st.drop_steer_full);
		steered += st.rx_steered;
		if (st.rx_roce == 0)
			H_FAIL("queue %d received nothing", e);
		if (st.drop_steer_full != 0)
			H_FAIL("queue %d dropped frames for another", e);
	}
	if (steered == 0)
		H_FAIL("the crossed QPs' frames never changed queue");
}

/* The counter after every fetch-and-add: once each, none lost. */
static void
atomics_report(uint32_t rounds, uint64_t counter)
{
	struct dpdat_qp_stats st;
	uint64_t executed = 0, replays = 0;

	for (int i = 0; i < NQP; i++) {
		dpdat_qp_stats(qp[i], &st);
		executed += st.atomics;
		replays += st.atomic_replays;
	}
	printf("server: counter %lu after %u fetch-and-adds; %lu executed, "
	       "%lu duplicates answered from the results kept\n",
	       (unsigned long)counter, rounds * NQP, (unsigned long)executed,
	       (unsigned long)replays);
	if (counter != (uint64_t)rounds * NQP || executed != counter)
		H_FAIL("the counter is %lu, want %u", (unsigned long)counter,
		       rounds * NQP);
}

static void
close_all(struct dpdat_lmr *l)
{
	for (int i = 0; i < NQP; i++)
		if (dpdat_qp_free(qp[i]) != 0)
			H_FAIL("qp_free");
	for (int e = 0; e < NENG; e++)
		if (dpdat_cq_free(cq[e]) != 0)
			H_FAIL("cq_free");
	if (dpdat_lmr_free(l) != 0 || dpdat_pz_free(pz) != 0)
		H_FAIL("lmr/pz free");
	if (dpdat_dev_close(dev[1]) != 0 || dpdat_dev_close(dev[0]) != 0)
		H_FAIL("dev_close");
}

static void
server(const char *sock, uint32_t rounds)
{
	struct dpdat_recv_wr rwr = { .num_sge = 1 };
	uint32_t got[NQP] = { 0 }, done = 0, rkey, key;
	struct dpdat_sge sge;
	struct dpdat_lmr *l;
	struct dpdat_wc wc;
	uint64_t raddr;
	uint8_t *buf, *rb;
	char flag[512];
	double t_last;
	int q;

	open_all(1, sock);
	l = lmr(&buf, CTR_OFF + 8, &key);
	rb = buf + (size_t)NQP * WLEN;
	for (q = 0; q < NQP; q++)
		for (int k = 0; k < DEPTH; k++) {
			sge = (struct dpdat_sge){
				(uintptr_t)(rb + ((size_t)q * DEPTH + k) * SLEN),
				SLEN, key };
			rwr.wr_id = (uint64_t)q << 56 | (uint64_t)k;
			rwr.sg_list = &sge;
			if (dpdat_post_recv(qp[q], &rwr) != 0)
				H_FAIL("post_recv");
		}
	connect_all(1, sock, &rkey, &raddr, key, (uintptr_t)buf);
	t_last = h_now();
	while (done < NQP) {
		if (!poll_any(&wc)) {
			if (h_now() - t_last > 30)
				H_FAIL("no SEND for 30 s");
			continue;
		}
		t_last = h_now();
		if (wc.status != DPDAT_WC_SUCCESS)
			H_FAIL("receive status %d", wc.status);
		q = (int)(wc.wr_id >> 56);
		uint32_t k = (uint32_t)(wc.wr_id & 0xffff);
		uint8_t *p = rb + ((size_t)q * DEPTH + k) * SLEN;

		if (wc.byte_len != SLEN)
			H_FAIL("QP %d: SEND of %u bytes", q, wc.byte_len);
		for (size_t o = 0; o < SLEN; o++)
			if (p[o] != pat(got[q], q, o + 1))
				H_FAIL("QP %d: SEND %u byte %zu: %#x, want %#x",
				       q, got[q], o, p[o],
				       pat(got[q], q, o + 1));
		if (++got[q] == rounds)
			done++;
		sge = (struct dpdat_sge){ (uintptr_t)p, SLEN, key };
		rwr.wr_id = wc.wr_id;
		rwr.sg_list = &sge;
		if (dpdat_post_recv(qp[q], &rwr) != 0)
			H_FAIL("post_recv");
	}
	printf("server: %u SENDs checked on each of %d QPs\n", rounds, NQP);
	check_steering();
	/* the client may still ask for a READ or a SEND's ACK again: serve
	 * until it says it has everything */
	snprintf(flag, sizeof(flag), "%s.done", sock);
	for (double t0 = h_now(); access(flag, F_OK) != 0;) {
		if (h_now() - t0 > 30)
			H_FAIL("the client never finished");
		for (int e = 0; e < NENG; e++)
			dpdat_dev_progress(dev[e]);
	}
	atomics_report(rounds, *(volatile uint64_t *)(buf + CTR_OFF));
	close_all(l);
}

/* Every value 0 .. n - 1 fetched exactly once. */
static void
check_fetched(const uint64_t *v, uint32_t n)
{
	uint8_t *seen = calloc(n, 1);

	if (seen == NULL)
		H_FAIL("calloc");
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] >= n || seen[v[i]])
			H_FAIL("fetch-and-add %u fetched %lu: %s", i,
			       (unsigned long)v[i], v[i] >= n ?
			       "beyond the count" : "twice");
		seen[v[i]] = 1;
	}
	free(seen);
	printf("client: the %u fetch-and-adds fetched 0 to %u, each once\n",
	       n, n - 1);
}

static void
client(const char *sock, uint32_t rounds)
{
	struct dpdat_send_wr wr = { .flags = DPDAT_SEND_SIGNALED,
				    .num_sge = 1 };
	struct dpdat_sge sge;
	struct dpdat_lmr *l;
	struct dpdat_wc wc;
	uint32_t rkey, key, r, pending;
	uint64_t raddr, *fetched;
	uint8_t *buf;
	char flag[512];
	double t0 = h_now(), t_last;
	FILE *f;
	int q;

	open_all(0, sock);
	/* per QP: the WRITE source, the READ target, the SEND source; then
	 * the value each fetch-and-add fetched */
	l = lmr(&buf, (size_t)NQP * (2 * WLEN + SLEN) +
		(size_t)rounds * NQP * 8, &key);
	fetched = (uint64_t *)(buf + (size_t)NQP * (2 * WLEN + SLEN));
	connect_all(0, sock, &rkey, &raddr, key, (uintptr_t)buf);
	for (r = 0; r < rounds; r++) {
		pending = 0;
		for (q = 0; q < NQP; q++) {
			uint8_t *w = buf + (size_t)q * (2 * WLEN + SLEN);
			uint8_t *rd = w + WLEN, *s = rd + WLEN;

			for (size_t o = 0; o < WLEN; o++)
				w[o] = pat(r, q, o);
			for (size_t o = 0; o < SLEN; o++)
				s[o] = pat(r, q, o + 1);
			memset(rd, 0, WLEN);
			wr.sg_list = &sge;
			wr.opcode = DPDAT_WR_RDMA_WRITE;
			wr.wr_id = (uint64_t)q << 56 | 0;
			sge = (struct dpdat_sge){ (uintptr_t)w, WLEN, key };
			wr.remote_addr = raddr + (uint64_t)q * WLEN;
			wr.rkey = rkey;
			if (dpdat_post_send(qp[q], &wr) != 0)
				H_FAIL("post WRITE");
			wr.opcode = DPDAT_WR_RDMA_READ;
			wr.wr_id = (uint64_t)q << 56 | 1;
			sge = (struct dpdat_sge){ (uintptr_t)rd, WLEN, key };
			if (dpdat_post_send(qp[q], &wr) != 0)
				H_FAIL("post READ");
			wr.opcode = DPDAT_WR_SEND;
			wr.wr_id = (uint64_t)q << 56 | 2;
			sge = (struct dpdat_sge){ (uintptr_t)s, SLEN, key };
			if (dpdat_post_send(qp[q], &wr) != 0)
				H_FAIL("post SEND");
			wr.opcode = DPDAT_WR_ATOMIC_FETCH_ADD;
			wr.wr_id = (uint64_t)q << 56 | 3;
			sge = (struct dpdat_sge){
				(uintptr_t)&fetched[r * NQP + (uint32_t)q], 8,
				key };
			wr.remote_addr = raddr + CTR_OFF;
			wr.compare_add = 1;
			if (dpdat_post_send(qp[q], &wr) != 0)
				H_FAIL("post FETCH_ADD");
			pending += 4;
		}
		t_last = h_now();
		while (pending > 0) {
			if (!poll_any(&wc)) {
				if (h_now() - t_last > 30)
					H_FAIL("round %u: %u completions "
					       "missing after 30 s", r, pending);
				continue;
			}
			if (wc.status != DPDAT_WC_SUCCESS)
				H_FAIL("round %u: QP %d: status %d", r,
				       (int)(wc.wr_id >> 56), wc.status);
			pending--;
		}
		for (q = 0; q < NQP; q++) {
			uint8_t *rd = buf + (size_t)q * (2 * WLEN + SLEN) +
				      WLEN;

			for (size_t o = 0; o < WLEN; o++)
				if (rd[o] != pat(r, q, o))
					H_FAIL("round %u: QP %d: READ byte "
					       "%zu: %#x, want %#x", r, q, o,
					       rd[o], pat(r, q, o));
		}
	}
	printf("client: %u rounds of WRITE, READ back, SEND and FETCH_ADD on "
	       "%d QPs over %d engines, every byte checked, %.2f s\n", rounds,
	       NQP, NENG, h_now() - t0);
	check_fetched(fetched, rounds * NQP);
	for (q = 0; q < NQP; q++) {
		struct dpdat_qp_stats st;

		dpdat_qp_stats(qp[q], &st);
		printf("client: QP %d: %lu probes, %lu timeouts, %lu packets "
		       "sent again\n", q, (unsigned long)st.probes,
		       (unsigned long)st.timeouts, (unsigned long)st.tx_resent);
	}
	check_steering();
	snprintf(flag, sizeof(flag), "%s.done", sock);
	f = fopen(flag, "w");
	if (f == NULL)
		H_FAIL("cannot write %s", flag);
	fclose(f);
	close_all(l);
}

int
main(int argc, char **argv)
{
	uint32_t rounds;

	if (argc < 3 || argc > 5)
		H_FAIL("usage: rc_engines server|client <socket> [rounds "
		       "[thread]]");
	rounds = argc >= 4 ? (uint32_t)strtoul(argv[3], NULL, 10) : 200;
	if (argc == 5 && strcmp(argv[4], "thread") == 0)
		progress = DPDAT_PROGRESS_THREAD;
	if (rounds == 0)
		H_FAIL("rounds: a positive number");
	if (strcmp(argv[1], "server") == 0)
		server(argv[2], rounds);
	else
		client(argv[2], rounds);
	printf("%s: devices closed\n", h_role);
	return 0;
}
