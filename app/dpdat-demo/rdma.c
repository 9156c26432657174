/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The two-process RDMA demo: one command forks a server and a client, each
 * with its own DPDK EAL on one end of a memif link. The client RDMA-WRITEs
 * 64 KiB into the server's registered memory (the server checks every
 * byte), RDMA-READs a different 64 KiB back (checked), SENDs a message into
 * a posted receive, then streams 64 KiB WRITEs for two seconds with a live
 * rate line. Exits non-zero on any surprise.
 */

#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "../common/pair.h"
#include "demo.h"

#define LEN (64u << 10)

static uint8_t
pat(uint32_t seed, uint32_t i)
{
	return (uint8_t)(i * 31 + seed + (i >> 9));
}

static struct dpdat_qp *demo_qp;	/* for the report of a failure */

static int
wait_one(struct dpdat_cq *cq, struct dpdat_wc *wc)
{
	uint64_t t0 = rte_get_tsc_cycles();
	struct dpdat_qp_stats st;

	while (dpdat_cq_poll(cq, wc, 1) == 0) {
		if (rte_get_tsc_cycles() - t0 > 10 * rte_get_tsc_hz()) {
			if (demo_qp != NULL &&
			    dpdat_qp_stats(demo_qp, &st) == 0)
				fprintf(stderr, "no completion in 10 s: tx %lu "
					"rx %lu retransmits %lu timeouts %lu "
					"naks %lu/%lu oos %lu dup %lu\n",
					(unsigned long)st.tx_pkts,
					(unsigned long)st.rx_pkts,
					(unsigned long)st.retransmits,
					(unsigned long)st.timeouts,
					(unsigned long)st.naks_sent,
					(unsigned long)st.naks_rcvd,
					(unsigned long)st.out_of_seq,
					(unsigned long)st.dup_rcvd);
			if (demo_qp != NULL)
				dpdat_qp_dump(demo_qp, stderr);
			return -1;
		}
	}
	if (wc->status != DPDAT_WC_SUCCESS)
		fprintf(stderr, "completion status %d\n", wc->status);
	return wc->status == DPDAT_WC_SUCCESS ? 0 : -1;
}

static int
post(struct dpdat_qp *qp, enum dpdat_wr_opcode op, void *buf, uint32_t len,
     uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct dpdat_sge sge = { (uintptr_t)buf, len, lkey };
	struct dpdat_send_wr wr = { .opcode = op, .flags = DPDAT_SEND_SIGNALED,
		.sg_list = &sge, .num_sge = 1, .remote_addr = raddr,
		.rkey = rkey };

	return dpdat_post_send(qp, &wr);
}

static int
server(struct pair *p, struct dpdat_cq *cq, uint8_t *buf, uint32_t key)
{
	struct dpdat_sge sge = { (uintptr_t)(buf + 2 * LEN), 256, key };
	struct dpdat_recv_wr rwr = { .wr_id = 7, .sg_list = &sge,
				     .num_sge = 1 };
	struct dpdat_qp *qp = NULL;
	char line[64];
	uint64_t pa;
	uint32_t pk, i;
	struct dpdat_wc wc;

	for (i = 0; i < LEN; i++)
		buf[LEN + i] = pat(2, i);	/* what the client will READ */
	if (pair_qp(p, cq, 1024, (uintptr_t)buf, key, &qp, &pa, &pk) != 0 ||
	    dpdat_post_recv(qp, &rwr) != 0)
		return 1;
	demo_qp = qp;
	/* the client says when its WRITE completed */
	if (pair_swap(p, "ready", line, sizeof(line)) != 0)
		return 1;
	for (i = 0; i < LEN && buf[i] == pat(1, i); i++)
		;
	printf("[server] 64 KiB written into my memory by the client: %s\n",
	       i == LEN ? "every byte right" : "WRONG");
	if (pair_swap(p, i == LEN ? "ok" : "bad", line, sizeof(line)) != 0 ||
	    i != LEN)
		return 1;
	if (wait_one(cq, &wc) != 0)
		return 1;
	printf("[server] received a %u-byte SEND: \"%s\"\n", wc.byte_len,
	       (char *)(buf + 2 * LEN));
	pair_swap(p, "stream", line, sizeof(line));	/* client streams */
	pair_swap(p, "done", line, sizeof(line));
	pair_disconnect(p);
	dpdat_qp_free(qp);
	return 0;
}

static int
stream(struct dpdat_qp *qp, struct dpdat_cq *cq, uint8_t *buf, uint32_t key,
       uint64_t pa, uint32_t pk)
{
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t t0 = rte_get_tsc_cycles(), tl = t0, now, bytes = 0, lb = 0;
	unsigned int out = 0;
	struct dpdat_wc wc[32];
	int n;

	while ((now = rte_get_tsc_cycles()) - t0 < 2 * hz || out != 0) {
		while (now - t0 < 2 * hz && out < 32 &&
		       post(qp, DPDAT_WR_RDMA_WRITE, buf, LEN, key, pa, pk) == 0)
			out++;
		n = dpdat_cq_poll(cq, wc, 32);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != DPDAT_WC_SUCCESS)
				return -1;
			bytes += LEN;
		}
		out -= (unsigned int)(n > 0 ? n : 0);
		if (now - tl > hz / 2) {
			printf("[client]   WRITE stream: %8.1f MiB/s\n",
			       (double)(bytes - lb) / (1 << 20) /
			       ((double)(now - tl) / hz));
			tl = now;
			lb = bytes;
		}
	}
	printf("[client] streamed %.1f MiB of 64 KiB WRITEs in %.2f s: %.1f MiB/s "
	       "(%.2f Gb/s)\n", (double)bytes / (1 << 20),
	       (double)(now - t0) / hz,
	       (double)bytes / (1 << 20) / ((double)(now - t0) / hz),
	       (double)bytes * 8 / 1e9 / ((double)(now - t0) / hz));
	return 0;
}

static int
client(struct pair *p, struct dpdat_cq *cq, uint8_t *buf, uint32_t key)
{
	static const char msg[] = "hello over RoCEv2 from the client";
	struct dpdat_qp *qp = NULL;
	struct dpdat_qp_stats st;
	struct dpdat_wc wc;
	char line[64];
	uint64_t pa;
	uint32_t pk, i;

	if (pair_qp(p, cq, 1024, (uintptr_t)buf, key, &qp, &pa, &pk) != 0)
		return 1;
	demo_qp = qp;
	for (i = 0; i < LEN; i++)
		buf[i] = pat(1, i);
	if (post(qp, DPDAT_WR_RDMA_WRITE, buf, LEN, key, pa, pk) != 0 ||
	    wait_one(cq, &wc) != 0)
		return 1;
	printf("[client] RDMA WRITE of 64 KiB completed (acknowledged)\n");
	if (pair_swap(p, "written", line, sizeof(line)) != 0 ||
	    pair_swap(p, "verdict?", line, sizeof(line)) != 0 ||
	    strcmp(line, "ok") != 0)
		return 1;
	memset(buf + LEN, 0, LEN);
	if (post(qp, DPDAT_WR_RDMA_READ, buf + LEN, LEN, key, pa + LEN, pk) ||
	    wait_one(cq, &wc) != 0)
		return 1;
	for (i = 0; i < LEN && buf[LEN + i] == pat(2, i); i++)
		;
	printf("[client] RDMA READ of 64 KiB from the server: %s\n",
	       i == LEN ? "every byte right" : "WRONG");
	if (i != LEN)
		return 1;
	memcpy(buf + 2 * LEN, msg, sizeof(msg));
	if (post(qp, DPDAT_WR_SEND, buf + 2 * LEN, sizeof(msg), key, 0, 0) ||
	    wait_one(cq, &wc) != 0)
		return 1;
	printf("[client] SEND of %zu bytes completed\n", sizeof(msg));
	pair_swap(p, "stream", line, sizeof(line));
	if (stream(qp, cq, buf, key, pa, pk) != 0)
		return 1;
	dpdat_qp_stats(qp, &st);
	printf("[client] QP: %lu packets sent, %lu received, %lu retransmitted\n",
	       (unsigned long)st.tx_pkts, (unsigned long)st.rx_pkts,
	       (unsigned long)st.retransmits);
	pair_swap(p, "done", line, sizeof(line));
	pair_disconnect(p);
	dpdat_qp_free(qp);
	return 0;
}

int
demo_rdma(void)
{
	struct pair_conf pc = { .mtu = 1500,
				.progress = DPDAT_PROGRESS_INLINE };
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	struct dpdat_lmr *lmr;
	struct dpdat_cq *cq;
	struct pair p;
	uint8_t *buf;
	int ret;

	printf("\n== two processes over a memif link: connect (IB CM), RDMA WRITE, "
	       "READ, SEND\n");
	if (pair_fork(&p, &pc) != 0)
		return 1;
	buf = dpdat_mem_alloc(3 * LEN, 4096, -1);
	d.virt.addr = buf;
	d.virt.length = 3 * LEN;
	lmr = buf ? dpdat_lmr_create(p.pz, &d, DPDAT_MEM_PRIV_ALL) : NULL;
	cq = dpdat_cq_create(p.dev, 256);
	if (lmr == NULL || cq == NULL) {
		fprintf(stderr, "%s: setup: %s\n", p.name,
			rte_strerror(rte_errno));
		return pair_finish(&p, 1);
	}
	dpdat_lmr_query(lmr, &li);
	printf("[%s] up: 198.18.0.%d, 192 KiB registered (%s memory)\n",
	       p.name, p.server ? 1 : 2, dpdat_mem_kind_str(li.kind));
	ret = p.server ? server(&p, cq, buf, li.lmr_context) :
			 client(&p, cq, buf, li.lmr_context);
	if (ret != 0)
		pair_disconnect(&p);
	dpdat_cq_free(cq);
	dpdat_lmr_free(lmr);
	dpdat_mem_free(buf);
	ret = pair_finish(&p, ret);
	if (p.server)
		printf("%s: two-process RDMA demo\n", ret ? "FAILED" : "done");
	return ret;
}
