/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * dpdat-perf: perftest's tests over dpdat. The test is the first argument
 * (or argv[0] ending in it): write_bw, write_lat, read_bw, read_lat,
 * send_bw, send_lat. The server runs without a peer address, the client is
 * given the server's; they connect through the CM, the client telling the
 * server the test in the REQ private data. Flags follow perftest:
 *   -s size  -a (all sizes 2..2^23)  -n iterations  -D seconds (bw)
 *   -t tx depth  -m PMTU  -p service  --report_gbits  --out_json FILE
 * plus --dev DEVARGS, --ip ADDR and --mtu N for the dpdat port.
 */

#include <arpa/inet.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_qp.h>

#define MAX_SIZE (8u << 20)

enum test { W_BW, W_LAT, R_BW, R_LAT, S_BW, S_LAT, N_TESTS };
static const char *const names[N_TESTS] = {
	"write_bw", "write_lat", "read_bw", "read_lat", "send_bw", "send_lat" };
static const char *const titles[N_TESTS] = {
	"RDMA_Write BW Test", "RDMA_Write Latency Test", "RDMA_Read BW Test",
	"RDMA_Read Latency Test", "Send BW Test", "Send Latency Test" };

struct params {		/* what the client tells the server (REQ data) */
	uint32_t test, size, iters, depth, all, secs;
	uint64_t addr;		/* the sender's buffer */
	uint32_t rkey;
} __attribute__((packed));

static struct {
	enum test test;
	int server;
	const char *peer, *dev, *ip, *json;
	uint32_t size, iters, depth, secs;
	uint16_t pmtu, mtu, service;
	int all, gbits;
} o = { .depth = 128, .pmtu = 1024, .mtu = 1500, .service = 18515 };

static struct dpdat_dev *dev;
static struct dpdat_cm_eq *eq;
static struct dpdat_cm_conn *conn;
static struct dpdat_qp *qp;
static struct dpdat_cq *cq;
static uint8_t *buf;
static uint32_t key, peer_rkey;
static uint64_t peer_addr;
static FILE *json;

static void
die(const char *what)
{
	fprintf(stderr, "dpdat-perf: %s\n", what);
	exit(1);
}

static void
usage(void)
{
	printf("usage: dpdat-perf <test> [options] [server address]\n"
	       "tests: write_bw write_lat read_bw read_lat send_bw send_lat\n"
	       "  -s, --size B          message size (bw 65536, lat 2)\n"
	       "  -a, --all             sizes 2 .. 2^23\n"
	       "  -n, --iters N         iterations (bw 5000, lat 1000)\n"
	       "  -D, --duration S      bw: run S seconds instead\n"
	       "  -t, --tx-depth N      work requests in flight (128)\n"
	       "  -m, --mtu P           PMTU 256..4096 (1024)\n"
	       "  -p, --port N          service (conn_qual, 18515)\n"
	       "      --report_gbits    bandwidth in Gb/s\n"
	       "      --out_json FILE   results as JSON\n"
	       "      --dev ARGS        DPDK device (memif pair by default)\n"
	       "      --ip ADDR         our IPv4 (198.18.0.1 server, .2 client)\n");
}

static void
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "size", 1, NULL, 's' }, { "all", 0, NULL, 'a' },
		{ "iters", 1, NULL, 'n' }, { "duration", 1, NULL, 'D' },
		{ "tx-depth", 1, NULL, 't' }, { "mtu", 1, NULL, 'm' },
		{ "port", 1, NULL, 'p' }, { "report_gbits", 0, NULL, 'g' },
		{ "out_json", 1, NULL, 'j' }, { "dev", 1, NULL, 'd' },
		{ "ip", 1, NULL, 'i' }, { "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	const char *t = strrchr(argv[0], '/');
	int c, k, first = 1;

	t = t ? t + 1 : argv[0];
	for (k = 0; k < N_TESTS; k++)
		if (strstr(t, names[k]) != NULL)
			break;
	if (k == N_TESTS && argc > 1) {
		for (k = 0; k < N_TESTS; k++)
			if (strcmp(argv[1], names[k]) == 0)
				break;
		first = 2;
	}
	if (k == N_TESTS) {
		usage();
		exit(2);
	}
	o.test = (enum test)k;
	optind = first;
	while ((c = getopt_long(argc, argv, "s:an:D:t:m:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 's': o.size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'a': o.all = 1; break;
		case 'n': o.iters = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'D': o.secs = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': o.depth = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'm': o.pmtu = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 'p': o.service = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 'g': o.gbits = 1; break;
		case 'j': o.json = optarg; break;
		case 'd': o.dev = optarg; break;
		case 'i': o.ip = optarg; break;
		default: usage(); exit(c == 'h' ? 0 : 2);
		}
	}
	o.peer = optind < argc ? argv[optind] : NULL;
	o.server = o.peer == NULL;
	if (o.size == 0)
		o.size = (o.test & 1) ? 2 : 65536;
	if (o.iters == 0)
		o.iters = (o.test & 1) ? 1000 : 5000;
	if (o.size > MAX_SIZE || o.depth == 0 || o.depth > 256 ||
	    o.iters == 0 || (o.pmtu != 256 && o.pmtu != 512 && o.pmtu != 1024 &&
			     o.pmtu != 2048 && o.pmtu != 4096))
		die("bad size, depth, iterations or PMTU");
	if (o.mtu < o.pmtu + 64)
		o.mtu = (uint16_t)(o.pmtu + 64 > 1500 ? o.pmtu + 104 : 1500);
}

static const char *
line(void)
{
	return "---------------------------------------------------------------"
	       "------------------------";
}

static void
banner(uint32_t qpn)
{
	struct dpdat_port_info pi;

	dpdat_port_query(dpdat_dev_port(dev), &pi);
	printf("%s\n%*s%s\n", line(), 20, "", titles[o.test]);
	printf(" Dual-port       : OFF\t\tDevice         : %s\n", pi.name);
	printf(" Number of qps   : 1\t\tTransport type : RoCEv2 (dpdat)\n");
	printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
	printf(" TX depth        : %u\n", (o.test & 1) ? 1 : o.depth);
	printf(" Mtu             : %u[B]\n", o.pmtu);
	printf(" Link type       : Ethernet\n");
	printf(" Max inline data : 0[B]\n");
	printf(" rdma_cm QPs\t : OFF (IB CM by dpdat)\n");
	printf(" Data ex. method : dpdat CM private data\n");
	printf("%s\n local address: IP %s QPN 0x%04x\n%s\n", line(),
	       o.ip, qpn, line());
}

static void
setup(void)
{
	struct dpdat_eal_conf ec = { .program = "dpdat-perf", .mem_mb = 512 };
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_INLINE };
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_qp_conf qc = { .max_send_wr = 512, .max_recv_wr = 512 };
	struct dpdat_lmr_info li;
	struct dpdat_pz *pz;
	struct dpdat_lmr *lmr;
	static char devargs[256];

	if (dpdat_eal_init(&ec) < 0)
		die("EAL");
	if (o.dev == NULL) {
		snprintf(devargs, sizeof(devargs),
			 "net_memif0,role=%s,socket=/tmp/dpdat-perf-%u.sock",
			 o.server ? "server" : "client", o.service);
		o.dev = devargs;
	}
	if (o.ip == NULL)
		o.ip = o.server ? "198.18.0.1" : "198.18.0.2";
	dc.port.device = o.dev;
	dc.port.ipv4 = o.ip;
	dc.port.mtu = o.mtu;
	dc.port.link_wait_s = 30;
	dev = dpdat_dev_open(&dc);
	if (dev == NULL)
		die(rte_strerror(rte_errno));
	pz = dpdat_pz_create(dpdat_dev_domain(dev));
	buf = dpdat_mem_alloc(2 * MAX_SIZE, 4096, -1);
	d.virt.addr = buf;
	d.virt.length = 2 * MAX_SIZE;
	lmr = buf ? dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_ALL) : NULL;
	cq = dpdat_cq_create(dev, 4096);
	qc.pz = pz;
	qc.send_cq = qc.recv_cq = cq;
	qp = cq ? dpdat_qp_create(dev, &qc) : NULL;
	if (lmr == NULL || qp == NULL)
		die("setup (memory, CQ or QP)");
	dpdat_lmr_query(lmr, &li);
	key = li.lmr_context;
}

/* Connect through the CM; the client's parameters travel in the REQ. */
static void
connect_peer(struct params *pr)
{
	struct params mine = *pr, theirs;
	struct dpdat_cm_event ev;
	uint32_t ip;

	eq = dpdat_cm_eq_create(dev, 16);
	if (eq == NULL)
		die("event queue");
	mine.addr = (uintptr_t)buf;
	mine.rkey = key;
	if (o.server) {
		if (dpdat_cm_listen(dev, o.service, eq) == NULL)
			die("listen");
		printf("\n************************************\n"
		       "* Waiting for client to connect... *\n"
		       "************************************\n");
		if (dpdat_cm_eq_wait(eq, &ev, -1) != 1 ||
		    ev.type != DPDAT_CM_CONNECT_REQUEST)
			die("connection request");
		memcpy(&theirs, ev.private_data, sizeof(theirs));
		if (theirs.test >= N_TESTS || theirs.size > MAX_SIZE)
			die("bad parameters from the client");
		*pr = theirs;
		o.test = (enum test)theirs.test;
		conn = ev.conn;
		if (dpdat_cm_accept(conn, qp, &mine, sizeof(mine), eq) != 0)
			die("accept");
		if (dpdat_cm_eq_wait(eq, &ev, 10000) != 1 ||
		    ev.type != DPDAT_CM_ESTABLISHED)
			die("not established");
	} else {
		if (inet_pton(AF_INET, o.peer, &ip) != 1)
			die("bad server address");
		for (int t = 0;; t++) {	/* the server may not listen yet */
			if (dpdat_cm_connect(qp, ip, o.service, &mine,
					     sizeof(mine), eq) == NULL)
				die("connect");
			if (dpdat_cm_eq_wait(eq, &ev, 20000) != 1)
				die("no answer");
			if (ev.type == DPDAT_CM_ESTABLISHED)
				break;
			if (t == 20)
				die("not established");
			dpdat_cm_conn_free(ev.conn);
			rte_delay_us_sleep(200000);
		}
		memcpy(&theirs, ev.private_data, sizeof(theirs));
		conn = ev.conn;
	}
	peer_addr = theirs.addr;
	peer_rkey = theirs.rkey;
}

static void
post_to(enum dpdat_wr_opcode op, uint32_t size, uint64_t id, uint32_t flags,
	uint64_t roff)
{
	struct dpdat_sge sge = { (uintptr_t)buf, size, key };
	struct dpdat_send_wr wr = { .wr_id = id, .opcode = op, .flags = flags,
		.sg_list = &sge, .num_sge = 1, .remote_addr = peer_addr + roff,
		.rkey = peer_rkey };

	while (dpdat_post_send(qp, &wr) == -ENOMEM)
		dpdat_dev_progress(dev);
}

static void
post(enum dpdat_wr_opcode op, uint32_t size, uint64_t id, uint32_t flags)
{
	post_to(op, size, id, flags, 0);
}

static void
post_recv(uint32_t size)
{
	/* received data goes to the second half; the last byte of a SEND
	 * lands where a latency loop looks for it */
	struct dpdat_sge sge = { (uintptr_t)buf + MAX_SIZE, size, key };
	struct dpdat_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };

	if (dpdat_post_recv(qp, &wr) != 0)
		die("post_recv");
}

static uint32_t
reap(int max)
{
	struct dpdat_wc wc[64];
	int n = dpdat_cq_poll(cq, wc, RTE_MIN(max, 64));

	for (int i = 0; i < n; i++)
		if (wc[i].status != DPDAT_WC_SUCCESS) {
			fprintf(stderr, "completion status %d\n", wc[i].status);
			exit(1);
		}
	return n > 0 ? (uint32_t)n : 0;
}

static const enum dpdat_wr_opcode ops[N_TESTS] = {
	DPDAT_WR_RDMA_WRITE, DPDAT_WR_RDMA_WRITE, DPDAT_WR_RDMA_READ,
	DPDAT_WR_RDMA_READ, DPDAT_WR_SEND, DPDAT_WR_SEND };

/* The client streams; the server posts receives for SEND tests. */
static void
bw(const struct params *pr, uint32_t size)
{
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t limit = pr->secs ? pr->secs * hz : UINT64_MAX;
	uint64_t t0, tl, now, done = 0, posted = 0, last = 0;
	uint32_t out = 0;
	double peak = 0, avg;

	if (o.server)
		return;	/* the server serves in serve() */
	t0 = tl = rte_get_tsc_cycles();
	for (;;) {
		now = rte_get_tsc_cycles();
		while (out < pr->depth && (pr->secs ? now - t0 < limit :
					   posted < pr->iters)) {
			post(ops[o.test], size, posted++, DPDAT_SEND_SIGNALED);
			out++;
		}
		uint32_t n = reap(64);

		out -= n;
		done += n;
		if (now - tl > hz / 10 && done > last) {
			double bw = (double)(done - last) * size /
				    ((double)(now - tl) / hz);
			peak = bw > peak ? bw : peak;
			tl = now;
			last = done;
		}
		if (out == 0 && (pr->secs ? now - t0 >= limit :
				 done >= pr->iters))
			break;
	}
	avg = (double)done * size / ((double)(now - t0) / hz);
	if (peak < avg)
		peak = avg;
	if (o.gbits)
		printf(" %-10u %-14lu %-19.2f %-21.2f %.6f\n", size,
		       (unsigned long)done, peak * 8 / 1e9, avg * 8 / 1e9,
		       (double)done / ((double)(now - t0) / hz) / 1e6);
	else
		printf(" %-10u %-14lu %-19.2f %-21.2f %.6f\n", size,
		       (unsigned long)done, peak / (1 << 20), avg / (1 << 20),
		       (double)done / ((double)(now - t0) / hz) / 1e6);
	if (json)
		fprintf(json, "%s{\"bytes\": %u, \"iterations\": %lu, "
			"\"bw_peak_mib\": %.3f, \"bw_avg_mib\": %.3f, "
			"\"msg_rate_mpps\": %.6f}", ftell(json) > 40 ? ", " : "",
			size, (unsigned long)done, peak / (1 << 20),
			avg / (1 << 20),
			(double)done / ((double)(now - t0) / hz) / 1e6);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Ping-pong (write_lat, send_lat: both sides) or one-sided round trips
 * (read_lat: the client). write_lat spins on the last byte of the buffer,
 * as ib_write_lat; send_lat waits for the receive completion. */
static void
lat(const struct params *pr, uint32_t size)
{
	/* the peer writes into our second half; we write from the first */
	volatile uint8_t *in = buf + MAX_SIZE + size - 1;
	const double us = 1e6 / rte_get_tsc_hz();
	double *rtt = NULL, sum = 0, sq = 0;
	uint64_t t;
	uint32_t i;

	if (!o.server)
		rtt = calloc(pr->iters, sizeof(double));
	if (o.test == S_LAT)
		for (i = 0; i < 2 && i < pr->iters; i++)
			post_recv(size);
	for (i = 1; i <= pr->iters; i++) {
		uint8_t seq = (uint8_t)(i % 255 + 1);	/* never 0, never twice */

		t = rte_get_tsc_cycles();
		if (o.test == R_LAT) {
			post(DPDAT_WR_RDMA_READ, size, i, DPDAT_SEND_SIGNALED);
			while (reap(1) == 0)
				;
		} else if (o.test == W_LAT) {
			if (!o.server) {
				buf[size - 1] = seq;
				post_to(DPDAT_WR_RDMA_WRITE, size, i, 0,
					MAX_SIZE);
			}
			while (*in != seq)
				dpdat_dev_progress(dev);
			if (o.server) {
				buf[size - 1] = seq;
				post_to(DPDAT_WR_RDMA_WRITE, size, i, 0,
					MAX_SIZE);
			}
			reap(16);	/* errors only: unsignaled */
		} else {	/* send_lat */
			struct dpdat_wc wc;

			if (!o.server)
				post(DPDAT_WR_SEND, size, i, 0);
			do {	/* the receive completes when the peer's
				 * SEND arrived */
				if (dpdat_cq_poll(cq, &wc, 1) == 1 &&
				    wc.status != DPDAT_WC_SUCCESS)
					die("send_lat completion");
			} while (wc.opcode != DPDAT_WR_RECV ||
				 wc.status != DPDAT_WC_SUCCESS ||
				 wc.wr_id == UINT64_MAX);
			wc.wr_id = UINT64_MAX;
			if (i + 2 <= pr->iters)
				post_recv(size);
			if (o.server)
				post(DPDAT_WR_SEND, size, i, 0);
		}
		if (rtt != NULL)
			rtt[i - 1] = (rte_get_tsc_cycles() - t) * us;
	}
	if (o.server)
		return;
	/* perftest reports half the round trip for ping-pong tests */
	for (i = 0; i < pr->iters; i++) {
		if (o.test != R_LAT)
			rtt[i] /= 2;
		sum += rtt[i];
		sq += rtt[i] * rtt[i];
	}
	qsort(rtt, pr->iters, sizeof(double), cmp_double);
	double avg = sum / pr->iters;
	double sd = sqrt(RTE_MAX(sq / pr->iters - avg * avg, 0.0));

	printf(" %-7u %-10u %-13.2f %-13.2f %-15.2f %-13.2f %-15.2f %-22.2f "
	       "%.2f\n", size, pr->iters, rtt[0], rtt[pr->iters - 1],
	       rtt[pr->iters / 2], avg, sd, rtt[(size_t)(pr->iters * 0.99)],
	       rtt[(size_t)(pr->iters * 0.999)]);
	if (json)
		fprintf(json, "%s{\"bytes\": %u, \"iterations\": %u, "
			"\"t_min_us\": %.3f, \"t_max_us\": %.3f, "
			"\"t_typical_us\": %.3f, \"t_avg_us\": %.3f, "
			"\"t_stdev_us\": %.3f, \"p99_us\": %.3f, "
			"\"p999_us\": %.3f}", ftell(json) > 40 ? ", " : "",
			size, pr->iters, rtt[0], rtt[pr->iters - 1],
			rtt[pr->iters / 2], avg, sd,
			rtt[(size_t)(pr->iters * 0.99)],
			rtt[(size_t)(pr->iters * 0.999)]);
	free(rtt);
}

/* The server's side of bandwidth tests: receives kept posted for SEND,
 * otherwise only the engine, until the client disconnects. */
static void
serve_bw(void)
{
	struct dpdat_cm_event ev;
	uint32_t posted = 0;
	struct dpdat_wc wc[64];
	int n;

	for (;;) {
		while (o.test == S_BW && posted < 256) {
			post_recv(MAX_SIZE);
			posted++;
		}
		n = dpdat_cq_poll(cq, wc, 64);
		posted -= (uint32_t)(n > 0 ? n : 0);
		if (dpdat_cm_eq_poll(eq, &ev) == 1 &&
		    (ev.type == DPDAT_CM_DISCONNECTED ||
		     ev.type == DPDAT_CM_BROKEN))
			return;
	}
}

int
main(int argc, char **argv)
{
	struct params pr;
	struct dpdat_qp_info qi;
	struct dpdat_cm_event ev;
	uint32_t size;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	setup();
	pr = (struct params){ .test = o.test, .size = o.size, .iters = o.iters,
			      .depth = o.depth, .all = (uint32_t)o.all,
			      .secs = o.secs };
	connect_peer(&pr);
	dpdat_qp_query(qp, &qi);
	banner(qi.qpn);
	if (o.json != NULL && !o.server) {
		json = fopen(o.json, "w");
		if (json == NULL)
			die("cannot write the JSON file");
		fprintf(json, "{\"test\": \"%s\", \"results\": [",
			names[o.test]);
	}
	if (!o.server && (o.test & 1) == 0)
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]"
		       "   MsgRate[Mpps]\n", o.gbits ? "Gb/sec" : "MiB/sec",
		       o.gbits ? "Gb/sec" : "MiB/sec");
	else if (!o.server)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  "
		       "t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
		       "99%% percentile[usec]   99.9%% percentile[usec]\n");
	if (o.server && ((o.test & 1) == 0 || o.test == R_LAT)) {
		serve_bw();
	} else {
		for (size = pr.all ? 2 : pr.size; size <= (pr.all ? MAX_SIZE :
							   pr.size); size *= 2) {
			if ((o.test & 1) == 0)
				bw(&pr, size);
			else
				lat(&pr, size);
			if (!pr.all)
				break;
		}
	}
	printf("%s\n", line());
	if (json) {
		fprintf(json, "]}\n");
		fclose(json);
	}
	/* the end: the client disconnects, the server waits for it */
	if (!o.server && dpdat_cm_disconnect(conn, NULL, 0) != 0)
		die("disconnect");
	while (!o.server || ((o.test & 1) != 0 && o.test != R_LAT)) {
		if (dpdat_cm_eq_wait(eq, &ev, 10000) != 1)
			break;
		if (ev.type == DPDAT_CM_DISCONNECTED ||
		    ev.type == DPDAT_CM_BROKEN)
			break;
	}
	/* linger: the last DREP must leave before the link goes */
	for (uint64_t t0 = rte_get_tsc_cycles();
	     rte_get_tsc_cycles() - t0 < rte_get_tsc_hz() / 5; )
		dpdat_dev_progress(dev);
	return 0;
}
