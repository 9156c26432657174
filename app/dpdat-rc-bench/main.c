/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * dpdat-rc-bench: the RC engine over a memif pair, two processes from one
 * command (a benchmark, not a test).
 *   bw   RDMA WRITEs of --size bytes, --depth in flight, for --seconds
 *   lat  8-byte RDMA WRITE ping-pong, each side spinning on the last byte of
 *        its buffer (as ib_write_lat), --iters round trips
 * Prints one line per test; --json FILE writes the figures.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include <dpdat/dpdat_env.h>

#include "../common/pair.h"

static struct {
	uint32_t size, depth, iters;
	double seconds;
	uint16_t pmtu, mtu;
	const char *json;
} o = { 65536, 32, 20000, 3.0, 1024, 1500, NULL };

struct res {
	double mib_s, gbit_s, mpps;
	double lat_min, lat_p50, lat_p99, lat_avg;
};

static int
post_write(struct dpdat_qp *qp, void *buf, uint32_t len, uint32_t lkey,
	   uint64_t raddr, uint32_t rkey, uint32_t flags)
{
	struct dpdat_sge sge = { (uintptr_t)buf, len, lkey };
	struct dpdat_send_wr wr = { .opcode = DPDAT_WR_RDMA_WRITE,
		.flags = flags, .sg_list = &sge, .num_sge = 1,
		.remote_addr = raddr, .rkey = rkey };

	return dpdat_post_send(qp, &wr);
}

static void
bw_client(struct dpdat_qp *qp, struct dpdat_cq *cq, uint8_t *buf,
	  uint32_t key, uint64_t pa, uint32_t pk, struct res *r)
{
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t t0 = rte_get_tsc_cycles(), now, bytes = 0;
	uint32_t out = 0;
	struct dpdat_wc wc[64];
	int n;

	while ((now = rte_get_tsc_cycles()) - t0 < o.seconds * hz || out) {
		while (now - t0 < o.seconds * hz && out < o.depth &&
		       post_write(qp, buf, o.size, key, pa, pk,
				  DPDAT_SEND_SIGNALED) == 0)
			out++;
		n = dpdat_cq_poll(cq, wc, 64);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != DPDAT_WC_SUCCESS) {
				fprintf(stderr, "bw: status %d\n",
					wc[i].status);
				exit(1);
			}
			bytes += o.size;
		}
		out -= (uint32_t)(n > 0 ? n : 0);
	}
	double s = (double)(now - t0) / hz;
	uint32_t pkts = (o.size + o.pmtu - 1) / o.pmtu;

	r->mib_s = bytes / s / (1 << 20);
	r->gbit_s = bytes * 8 / s / 1e9;
	r->mpps = bytes / o.size * (double)pkts / s / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Ping-pong on the last byte: the initiator writes seq, the other side
 * sees it land and writes it back. */
static void
lat(struct pair *p, struct dpdat_qp *qp, struct dpdat_cq *cq, uint8_t *buf,
    uint32_t key, uint64_t pa, uint32_t pk, struct res *r)
{
	volatile uint8_t *in = buf + 64 + 7;	/* last byte of 8 */
	double *rtt = p->server ? NULL : calloc(o.iters, sizeof(double));
	const double us = 1e6 / rte_get_tsc_hz();
	struct dpdat_wc wc;
	uint64_t t;

	for (uint32_t i = 1; i <= o.iters; i++) {
		uint8_t seq = (uint8_t)i;

		t = rte_get_tsc_cycles();
		if (!p->server) {
			buf[7] = seq;
			post_write(qp, buf, 8, key, pa + 64, pk, 0);
		}
		while (*in != seq)
			dpdat_dev_progress(p->dev);
		if (p->server) {
			buf[7] = seq;
			post_write(qp, buf, 8, key, pa + 64, pk, 0);
		} else {
			rtt[i - 1] = (rte_get_tsc_cycles() - t) * us;
		}
		/* unsignaled writes: the QP still reports errors */
		if (dpdat_cq_poll(cq, &wc, 1) == 1 &&
		    wc.status != DPDAT_WC_SUCCESS) {
			fprintf(stderr, "lat: status %d\n", wc.status);
			exit(1);
		}
	}
	if (p->server)
		return;
	qsort(rtt, o.iters, sizeof(double), cmp_double);
	r->lat_min = rtt[0];
	r->lat_p50 = rtt[o.iters / 2];
	r->lat_p99 = rtt[(size_t)(o.iters * 0.99)];
	for (uint32_t i = 0; i < o.iters; i++)
		r->lat_avg += rtt[i] / o.iters;
	free(rtt);
}

static void
usage(const char *prog)
{
	printf("usage: %s [--size B] [--depth N] [--seconds S] [--iters N] "
	       "[--pmtu P] [--mtu M] [--json FILE]\n"
	       "       %s --help-env: the DPDAT_* environment settings\n",
	       prog, prog);
}

static int
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "size", 1, NULL, 's' }, { "depth", 1, NULL, 'd' },
		{ "seconds", 1, NULL, 't' }, { "iters", 1, NULL, 'n' },
		{ "pmtu", 1, NULL, 'p' }, { "mtu", 1, NULL, 'm' },
		{ "json", 1, NULL, 'j' }, { "help", 0, NULL, 'h' },
		{ "help-env", 0, NULL, 'E' }, { NULL, 0, NULL, 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': o.size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'd': o.depth = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': o.seconds = strtod(optarg, NULL); break;
		case 'n': o.iters = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'p': o.pmtu = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 'm': o.mtu = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 'j': o.json = optarg; break;
		case 'E': dpdat_env_help(stdout); exit(0);
		default: return -1;
		}
	}
	if (o.size == 0 || o.depth == 0 || o.depth > 256 || o.iters == 0 ||
	    o.seconds <= 0)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct pair_conf pc = { .progress = DPDAT_PROGRESS_INLINE };
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	struct dpdat_lmr *lmr;
	struct dpdat_cq *cq;
	struct dpdat_qp *qp;
	struct res r = { 0 };
	struct pair p;
	uint64_t pa;
	uint32_t pk;
	uint8_t *buf;
	char line[16];

	if (parse(argc, argv) != 0) {
		usage(argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pc.mtu = o.mtu;
	if (pair_fork(&p, &pc) != 0)
		return 1;
	buf = dpdat_mem_alloc(o.size + 4096, 4096, -1);
	d.virt.addr = buf;
	d.virt.length = o.size + 4096;
	lmr = buf ? dpdat_lmr_create(p.pz, &d, DPDAT_MEM_PRIV_ALL) : NULL;
	cq = dpdat_cq_create(p.dev, 1024);
	if (lmr == NULL || cq == NULL)
		return pair_finish(&p, 1);
	dpdat_lmr_query(lmr, &li);
	if (pair_qp(&p, cq, o.pmtu, (uintptr_t)buf, li.lmr_context, &qp, &pa,
		    &pk) != 0)
		return pair_finish(&p, 1);
	if (!p.server) {
		fprintf(stderr, "bw: %u B WRITEs, depth %u, %.1f s, PMTU %u\n",
			o.size, o.depth, o.seconds, o.pmtu);
		bw_client(qp, cq, buf, li.lmr_context, pa, pk, &r);
	}
	pair_swap(&p, "lat", line, sizeof(line));
	if (!p.server)
		fprintf(stderr, "lat: 8 B WRITE ping-pong, %u round trips\n",
			o.iters);
	lat(&p, qp, cq, buf, li.lmr_context, pa, pk, &r);
	pair_swap(&p, "done", line, sizeof(line));
	pair_disconnect(&p);
	if (!p.server) {
		printf("dpdat WRITE bw  %u B: %.1f MiB/s, %.2f Gb/s, %.3f Mpps "
		       "(PMTU %u)\n", o.size, r.mib_s, r.gbit_s, r.mpps, o.pmtu);
		printf("dpdat WRITE lat 8 B: RTT min %.2f us, median %.2f us, "
		       "p99 %.2f us, avg %.2f us\n", r.lat_min, r.lat_p50,
		       r.lat_p99, r.lat_avg);
		if (o.json != NULL) {
			FILE *f = fopen(o.json, "w");

			if (f != NULL) {
				fprintf(f, "{\"write_bw\": {\"size\": %u, "
					"\"mib_s\": %.2f, \"gbit_s\": %.3f, "
					"\"mpps\": %.4f, \"pmtu\": %u}, "
					"\"write_lat_8B\": {\"rtt_min_us\": %.3f,"
					" \"rtt_p50_us\": %.3f, \"rtt_p99_us\": "
					"%.3f}}\n", o.size, r.mib_s, r.gbit_s,
					r.mpps, o.pmtu, r.lat_min, r.lat_p50,
					r.lat_p99);
				fclose(f);
			}
		}
	}
	dpdat_qp_free(qp);
	dpdat_cq_free(cq);
	dpdat_lmr_free(lmr);
	dpdat_mem_free(buf);
	return pair_finish(&p, 0);
}
