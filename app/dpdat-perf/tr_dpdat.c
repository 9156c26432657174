/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The dpdat transport: one device (a memif pair by default), one buffer
 * registered once, -q QPs each connected through dpdat's CM; the client's
 * parameters travel in every REQ, the server's buffer in every REP. One CQ
 * for every QP, made with the first QP, once -q and -t are known: up to
 * 1024 QPs (the device's QP table is made that large).
 *
 * --engines N: N devices on N queues of one port (the first opens it, the
 * others share it and its registration domain), each with its CQ, CM
 * event queue and listener; QP i lives on engine i mod N on both sides,
 * so its REQ leaves on that queue and meets the peer's same engine.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_qp.h>

#include "perf.h"
#include "eal_args.h"

#define MAX_ENG 16

static struct dpdat_dev *devs[MAX_ENG];
static struct dpdat_dev *dev;		/* engine 0's */
static struct dpdat_pz *pz;
static struct dpdat_cq *cqs[MAX_ENG];
static struct dpdat_cm_eq *eqs[MAX_ENG];
static struct dpdat_cm_listener *lsns[MAX_ENG];
static uint32_t neng = 1;
static struct dpdat_qp *qps[PERF_MAX_QPS];
static struct dpdat_cm_conn *conns[PERF_MAX_QPS];
static uint32_t qp_eng[PERF_MAX_QPS];	/* the engine of each QP */
static uint32_t nqp, gone;	/* QPs connected, then disconnected */
/* --clients: the server's clients (by address) and each QP's, with the
 * time each QP came up and went and the payload bytes it received */
static uint32_t nclients, client_ip[PERF_MAX_CLIENTS];
static uint32_t client_qps[PERF_MAX_CLIENTS];
static uint8_t qp_client[PERF_MAX_QPS];
static uint64_t qp_up_ns[PERF_MAX_QPS], qp_end_ns[PERF_MAX_QPS];
static uint64_t qp_rx[PERF_MAX_QPS];
static uint8_t *buf;
static struct dpdat_lmr *lmr;
static uint32_t key, peer_rkey;
static uint64_t peer_addr;
static uint16_t pmtu_used;

struct dpdat_dev *
perf_dpdat_dev(void)
{
	return dev;
}

uint16_t
perf_dpdat_pmtu(void)
{
	return pmtu_used;
}

uint8_t *
perf_raw_buf(void)
{
	return buf;
}

static void
open_dev(void)
{
	struct dpdat_eal_conf ec = { .program = "dpdat-perf", .mem_mb = 512 };
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_INLINE,
				     .max_qps = PERF_MAX_QPS };
	struct perf_opts *o = &perf_opt;
	static char devargs[256];

	/* a pool of 8191 jumbo mbufs (about 38 MB) per engine's queue */
	if (o->engines > 1)
		ec.mem_mb += 48 * (o->engines - 1);
	app_eal_conf(&ec);
	if (dpdat_eal_init(&ec) < 0)
		perf_die("EAL initialisation failed");
	if (o->pin && app_pin_self(o->cpu) < 0)
		perf_die("--cpu %u: cannot pin this thread", o->cpu);
	if (o->dev == NULL) {
		snprintf(devargs, sizeof(devargs),
			 "net_memif0,role=%s,socket=/tmp/dpdat-perf-%u.sock",
			 o->server ? "server" : "client", o->service);
		o->dev = devargs;
	}
	/* beside the kernel (af_xdp, af_packet, a PCI NIC): the interface's
	 * own address; dpdat's own links: the memif pair's */
	if (o->ip == NULL && o->dev != devargs &&
	    (strncmp(o->dev, "net_af_", 7) == 0 ||
	     strncmp(o->dev, "net_", 4) != 0))
		o->ip = "auto";
	if (o->ip == NULL)
		o->ip = o->server ? "198.18.0.1" : "198.18.0.2";
	dc.port.device = o->dev;
	dc.port.ipv4 = o->ip;
	/* beside the kernel the interface's MTU, unless told */
	dc.port.mtu = strcmp(o->ip, "auto") == 0 && !o->mtu_set ? 0 : o->mtu;
	dc.port.link_wait_s = 30;
	dc.go_back_n = o->gbn != 0;
	/* the engine polls in this thread (inline), whose default holds no
	 * ACK; a latency test polls all the time and answers at once: its
	 * ACKs wait for the answer (the test name gives both sides the same) */
	dc.ack_hold_ns = o->ack_hold_ns != 0 ? o->ack_hold_ns :
			 perf_is_lat(o->test) ? PERF_ACK_HOLD_NS : 0;
	if (dc.ack_hold_ns != 0 && dc.ack_hold_ns != DPDAT_ACK_HOLD_OFF)
		printf("dpdat-perf: ACKs wait up to %u ns for a request to ride "
		       "on%s\n", dc.ack_hold_ns, o->ack_hold_ns != 0 ? "" :
		       " (latency test; --ack-hold 0: never)");
	neng = o->engines ? o->engines : 1;
	dc.port.queues = neng;
	dev = devs[0] = dpdat_dev_open(&dc);
	if (dev == NULL)
		perf_die("device %s: %s", o->dev, rte_strerror(rte_errno));
	dc.share = dev;
	for (uint32_t e = 1; e < neng; e++) {
		devs[e] = dpdat_dev_open(&dc);
		if (devs[e] == NULL)
			perf_die("engine %u: %s", e, rte_strerror(rte_errno));
	}
	if (neng > 1)
		fprintf(stderr, "dpdat-perf: %u engines on queues 0..%u of "
			"%s; QP i on engine i mod %u\n", neng, neng - 1, o->dev,
			neng);
}

/* Engine e's progress (every engine: e < 0). */
static void
run_engines(int e)
{
	for (uint32_t k = 0; k < neng; k++)
		if (e < 0 || (uint32_t)e == k)
			dpdat_dev_progress(devs[k]);
}

static void
setup(void)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;

	open_dev();
	pz = dpdat_pz_create(dpdat_dev_domain(dev));
	buf = dpdat_mem_alloc(PERF_BUF_BYTES, 4096, -1);
	d.virt.addr = buf;
	d.virt.length = PERF_BUF_BYTES;
	lmr = buf && pz ? dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_ALL) : NULL;
	for (uint32_t e = 0; e < neng; e++) {
		eqs[e] = dpdat_cm_eq_create(devs[e], 4 * PERF_MAX_QPS);
		if (eqs[e] == NULL)
			lmr = NULL;
	}
	if (lmr == NULL)
		perf_die("setup (memory or event queue): %s",
			 rte_strerror(rte_errno));
	/* before any peer can write there: -b waits on a sequence number */
	memset(buf + PERF_MBOX, 0, PERF_BUF_BYTES - PERF_MBOX);
	dpdat_lmr_query(lmr, &li);
	key = li.lmr_context;
}

/* A QP takes -t work requests at once, and room for the latency tests'
 * unsignaled ones and -b's reports; the CQ, all of them together. */
static struct dpdat_qp *
new_qp(const struct perf_params *pr, uint32_t e)
{
	uint32_t wr = 2 * perf_max(pr->depth, 64);
	uint32_t n = (pr->qps + neng - 1) / neng;	/* QPs an engine */
	struct dpdat_qp_conf qc = { .pz = pz, .max_send_wr = wr,
				    .max_recv_wr = wr };
	struct dpdat_qp *qp;

	if (cqs[e] == NULL)
		cqs[e] = dpdat_cq_create(devs[e], 2 * wr * n);
	if (cqs[e] == NULL)
		perf_die("CQ of %u: %s", 2 * wr * n, rte_strerror(rte_errno));
	qc.send_cq = qc.recv_cq = cqs[e];
	qp = dpdat_qp_create(devs[e], &qc);
	if (qp == NULL)
		perf_die("QP %u of %u: %s", nqp + 1, pr->qps,
			 rte_strerror(rte_errno));
	return qp;
}

/* Server: accept -q connections (the first REQ says how many). */
/* The next CM event of any engine within ms milliseconds; its engine in
 * *e. 1, or 0 after the wait. */
static int
eq_wait_any(struct dpdat_cm_event *ev, uint32_t *e, unsigned int ms)
{
	uint64_t end;

	if (neng == 1) {
		*e = 0;
		return dpdat_cm_eq_wait(eqs[0], ev, (int)ms) == 1;
	}
	end = rte_get_timer_cycles() + ms * rte_get_timer_hz() / 1000;
	do {
		for (uint32_t k = 0; k < neng; k++) {
			run_engines((int)k);
			if (dpdat_cm_eq_poll(eqs[k], ev) == 1) {
				*e = k;
				return 1;
			}
		}
	} while (rte_get_timer_cycles() < end);
	return 0;
}

static void count_end(const struct dpdat_cm_event *ev);

/* The QP of a connection, or nqp. */
static uint32_t
qp_of(const struct dpdat_cm_conn *c)
{
	uint32_t q;

	for (q = 0; q < nqp && conns[q] != c; q++)
		;
	return q;
}

/* The client at ip (network order), a new one while there is room. */
static uint32_t
client_of(uint32_t ip, uint32_t clients)
{
	char a[INET_ADDRSTRLEN];
	uint32_t k;

	for (k = 0; k < nclients && client_ip[k] != ip; k++)
		;
	if (k == nclients) {
		if (nclients == clients)
			perf_die("a client from %s: %u already served (give "
				 "--clients, each client its own address)",
				 inet_ntop(AF_INET, &ip, a, sizeof(a)), clients);
		client_ip[nclients++] = ip;
	}
	return k;
}

/* Server: accept -q connections of each of --clients clients (the first
 * REQ of all says the test and how many; the others must agree). */
static void
accept_all(struct perf_params *pr, const struct perf_params *mine)
{
	const uint32_t clients = RTE_MAX(perf_opt.clients, 1u);
	struct dpdat_cm_event ev;
	struct perf_params theirs;
	uint32_t up = 0, e, want = 1, c, q;

	for (e = 0; e < neng; e++)
		if ((lsns[e] = dpdat_cm_listen(devs[e], perf_opt.service,
					       eqs[e])) == NULL)
			perf_die("listen on %u: %s", perf_opt.service,
				 rte_strerror(rte_errno));
	while (nqp == 0 || up < want) {
		/* a client not come yet may start late; one connecting
		 * answers within 10 s */
		if (!eq_wait_any(&ev, &e, nclients < clients ?
				 PERF_WAIT_CLIENT_MS : 10000))
			perf_die("no client connected (%u of %u QPs up)", up,
				 want);
		if (ev.type == DPDAT_CM_DISCONNECTED ||
		    ev.type == DPDAT_CM_BROKEN) {
			count_end(&ev);	/* a client done before the last came */
			continue;
		}
		if (ev.type == DPDAT_CM_ESTABLISHED) {
			q = qp_of(ev.conn);
			if (q < nqp)
				qp_up_ns[q] = perf_now_ns();
			up++;
			continue;
		}
		if (ev.type != DPDAT_CM_CONNECT_REQUEST)
			perf_die("connection: CM event %d", ev.type);
		if (ev.private_data_len < sizeof(*pr))
			perf_die("a request without test parameters");
		memcpy(&theirs, ev.private_data, sizeof(theirs));
		if (nqp == 0) {
			*pr = theirs;
			want = clients * pr->qps;
			if (want > PERF_MAX_QPS)
				perf_die("--clients %u x -q %u: more than %u "
					 "QPs", clients, pr->qps, PERF_MAX_QPS);
		} else if (theirs.test != pr->test || theirs.qps != pr->qps ||
			   theirs.size != pr->size) {
			perf_die("the clients run different tests: give each "
				 "the same test, -s and -q");
		}
		if (RTE_MAX(pr->engines, 1u) != neng)
			perf_die("the client runs %u engine(s), this server %u: "
				 "give both the same --engines",
				 RTE_MAX(pr->engines, 1u), neng);
		if (perf_params_check(pr) != 0 || nqp == want)
			perf_die("bad parameters from the client");
		c = client_of(ev.peer_ipv4, clients);
		if (client_qps[c] == pr->qps)
			perf_die("a client asked for more than -q %u QPs",
				 pr->qps);
		client_qps[c]++;
		/* the REQ came in on the queue of the client's engine */
		qps[nqp] = new_qp(pr, e);
		qp_eng[nqp] = e;
		qp_client[nqp] = (uint8_t)c;
		conns[nqp] = ev.conn;
		if (dpdat_cm_accept(ev.conn, qps[nqp], mine, sizeof(*mine),
				    eqs[e]) != 0)
			perf_die("accept");
		nqp++;
	}
	peer_addr = pr->addr;
	peer_rkey = pr->rkey;
}

/* Client: connect QP q; the server may not listen yet for the first. */
static void
connect_one(uint32_t q, const struct perf_params *mine)
{
	struct dpdat_cm_event ev;
	struct perf_params theirs;
	uint32_t ip, e = q % neng;

	if (inet_pton(AF_INET, perf_opt.peer, &ip) != 1)
		perf_die("bad server address %s", perf_opt.peer);
	qps[q] = new_qp(mine, e);
	qp_eng[q] = e;
	for (int t = 0;; t++) {
		if (dpdat_cm_connect(qps[q], ip, perf_opt.service, mine,
				     sizeof(*mine), eqs[e]) == NULL)
			perf_die("connect: %s", rte_strerror(rte_errno));
		if (dpdat_cm_eq_wait(eqs[e], &ev, 20000) != 1)
			perf_die("no answer from %s", perf_opt.peer);
		if (ev.type == DPDAT_CM_ESTABLISHED)
			break;
		if (t == 20 || q > 0)
			perf_die("QP %u not connected (CM event %d)", q,
				 ev.type);
		dpdat_cm_conn_free(ev.conn);
		rte_delay_us_sleep(200000);
	}
	memcpy(&theirs, ev.private_data, sizeof(theirs));
	conns[q] = ev.conn;
	peer_addr = theirs.addr;
	peer_rkey = theirs.rkey;
	nqp = q + 1;
}

static void
post(uint32_t q, enum perf_op op, uint32_t size, uint64_t loff, uint64_t roff,
     int signaled, uint64_t id)
{
	static const enum dpdat_wr_opcode dop[] = {
		[PERF_WRITE] = DPDAT_WR_RDMA_WRITE,
		[PERF_READ] = DPDAT_WR_RDMA_READ, [PERF_SEND] = DPDAT_WR_SEND };
	struct dpdat_sge sge = { (uintptr_t)buf + loff, size, key };
	struct dpdat_send_wr wr = { .wr_id = id, .opcode = dop[op],
		.flags = signaled ? DPDAT_SEND_SIGNALED : 0, .sg_list = &sge,
		.num_sge = 1, .remote_addr = peer_addr + roff,
		.rkey = peer_rkey };
	int rc;

	while ((rc = dpdat_post_send(qps[q], &wr)) == -ENOMEM)
		run_engines((int)qp_eng[q]);
	if (rc != 0)
		perf_die("post_send: %s", strerror(-rc));
}

/* -l: the list in one dpdat_post_send_burst(); what did not fit waits
 * for room, as a single post does. */
static void
post_list(uint32_t q, enum perf_op op, uint32_t size, uint32_t n,
	  const uint64_t *ids)
{
	static const enum dpdat_wr_opcode dop[] = {
		[PERF_WRITE] = DPDAT_WR_RDMA_WRITE,
		[PERF_READ] = DPDAT_WR_RDMA_READ, [PERF_SEND] = DPDAT_WR_SEND };
	static struct dpdat_send_wr wrs[PERF_MAX_DEPTH];
	struct dpdat_sge sge = { (uintptr_t)buf, size, key };
	uint32_t off, done;
	int rc;

	for (uint32_t j = 0; j < n; j++)
		wrs[j] = (struct dpdat_send_wr){ .wr_id = ids[j],
			.opcode = dop[op],
			.flags = ids[j] != 0 ? DPDAT_SEND_SIGNALED : 0,
			.sg_list = &sge, .num_sge = 1,
			.remote_addr = peer_addr, .rkey = peer_rkey };
	for (off = 0; off < n; off += done) {
		rc = dpdat_post_send_burst(qps[q], wrs + off, n - off, &done);
		if (rc == -ENOMEM)
			run_engines((int)qp_eng[q]);
		else if (rc != 0)
			perf_die("post_send_burst: %s", strerror(-rc));
	}
}

static void
post_recv(uint32_t q, uint32_t size, uint64_t id)
{
	/* the peer's SENDs land in the second half, so the last byte of a
	 * SEND is where a latency loop would look for it */
	struct dpdat_sge sge = { (uintptr_t)buf + PERF_MAX_SIZE, size, key };
	struct dpdat_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				    .num_sge = 1 };

	if (dpdat_post_recv(qps[q], &wr) != 0)
		perf_die("post_recv");
}

static int
poll_cq(struct perf_wc *out, int max)
{
	static uint32_t next;	/* engines take turns at coming first */
	struct dpdat_wc wc[64];
	int n = 0;

	for (uint32_t k = 0; k < neng && n < RTE_MIN(max, 64); k++) {
		struct dpdat_cq *cq = cqs[(next + k) % neng];
		int got = cq ? dpdat_cq_poll(cq, wc + n, RTE_MIN(max, 64) - n) :
			  0;

		n += got > 0 ? got : 0;
	}
	next++;

	for (int i = 0; i < n; i++) {
		if (wc[i].status != DPDAT_WC_SUCCESS &&
		    wc[i].status != DPDAT_WC_WR_FLUSH_ERR)
			perf_die("completion status %d (opcode %d)",
				 wc[i].status, wc[i].opcode);
		out[i].id = wc[i].wr_id;
		out[i].flushed = wc[i].status == DPDAT_WC_WR_FLUSH_ERR;
		out[i].recv = wc[i].opcode == DPDAT_WR_RECV ||
			      wc[i].opcode == DPDAT_WR_RECV_RDMA_IMM;
	}
	return n > 0 ? n : 0;
}

static void
progress(void)
{
	run_engines(-1);
}

static void
count_end(const struct dpdat_cm_event *ev)
{
	struct dpdat_qp_stats st;
	uint32_t q;

	if (ev->type != DPDAT_CM_DISCONNECTED && ev->type != DPDAT_CM_BROKEN)
		return;
	gone++;
	q = qp_of(ev->conn);
	if (q < nqp && dpdat_qp_stats(qps[q], &st) == 0) {
		qp_end_ns[q] = perf_now_ns();
		/* payload moved: WRITEs received, READ answers sent */
		qp_rx[q] = st.rx_bytes + st.tx_bytes;
	}
}

/* Nonzero once the peer began to leave (with --clients, every QP of
 * every client). */
static int
peer_gone(void)
{
	struct dpdat_cm_event ev;

	for (uint32_t e = 0; e < neng; e++)
		if (dpdat_cm_eq_poll(eqs[e], &ev) == 1)
			count_end(&ev);
	return perf_opt.clients > 1 ? gone >= nqp : gone > 0;
}

/* --clients: each client's goodput (payload bytes its QPs moved, WRITEs
 * received or READ answers sent, resends included, over the time from
 * its first QP up to its last gone) and Jain's fairness
 * index of them, (sum x)^2 / (n sum x^2): 1 when all got the same, 1/n
 * when one got everything. */
static void
clients_report(void)
{
	double x[PERF_MAX_CLIENTS] = { 0 }, sum = 0, sq = 0;
	uint64_t t0[PERF_MAX_CLIENTS], t1[PERF_MAX_CLIENTS] = { 0 };
	uint64_t bytes[PERF_MAX_CLIENTS] = { 0 };
	char a[INET_ADDRSTRLEN];

	for (uint32_t c = 0; c < nclients; c++)
		t0[c] = UINT64_MAX;
	for (uint32_t q = 0; q < nqp; q++) {
		const uint32_t c = qp_client[q];

		bytes[c] += qp_rx[q];
		t0[c] = RTE_MIN(t0[c], qp_up_ns[q]);
		t1[c] = RTE_MAX(t1[c], qp_end_ns[q]);
	}
	for (uint32_t c = 0; c < nclients; c++) {
		if (t1[c] > t0[c])
			x[c] = (double)bytes[c] / ((double)(t1[c] - t0[c]) /
						   1e9) / (1 << 20);
		sum += x[c];
		sq += x[c] * x[c];
		printf("dpdat-perf: client %s: %.2f MiB/s goodput (%" PRIu64
		       " bytes in %.3f s, %u QPs)\n",
		       inet_ntop(AF_INET, &client_ip[c], a, sizeof(a)), x[c],
		       bytes[c], (double)(t1[c] - t0[c]) / 1e9,
		       client_qps[c]);
	}
	printf("dpdat-perf: %u clients: %.2f MiB/s in all, Jain's fairness "
	       "index %.3f\n", nclients, sum,
	       sq > 0 ? sum * sum / (nclients * sq) : 0.0);
}

static struct perf_rdma prims = {
	.post = post, .post_list = post_list, .post_recv = post_recv,
	.poll = poll_cq,
	.progress = progress, .peer_gone = peer_gone,
};

static void
connect_peer(struct perf_params *pr, struct perf_info *info)
{
	struct perf_params mine = *pr;
	struct dpdat_port_info pi;
	struct dpdat_qp_info qi;
	char ip[INET_ADDRSTRLEN];

	mine.addr = (uintptr_t)buf;
	mine.rkey = key;
	mine.engines = neng;
	if (perf_opt.server)
		accept_all(pr, &mine);
	else
		for (uint32_t q = 0; q < pr->qps; q++)
			connect_one(q, &mine);
	prims.buf = buf;
	prims.nqp = nqp;
	perf_rdma_use(&prims);
	dpdat_port_query(dpdat_dev_port(dev), &pi);
	snprintf(info->dev, sizeof(info->dev), "%s", pi.name);
	info->type = "RoCEv2 (dpdat)";
	info->cm = "OFF (IB CM by dpdat)";
	info->exchange = "dpdat CM private data";
	for (uint32_t q = 0; q < nqp; q++) {
		dpdat_qp_query(qps[q], &qi);
		info->mtu = qi.pmtu;
		pmtu_used = qi.pmtu;
		snprintf(info->local[q], sizeof(info->local[q]),
			 "IP %s QPN 0x%04x PSN 0x%06x",
			 inet_ntop(AF_INET, &pi.ipv4, ip, sizeof(ip)), qi.qpn,
			 qi.sq_psn);
	}
	info->nlocal = (int)nqp;
}

/* The client disconnects every QP; both sides wait for the ends, then
 * linger so that the last DREP leaves before the link goes. */
/* What the port and the QPs saw, after the table (stderr): where frames
 * went missing and what recovery cost. */
static void
port_counters(void)
{
	struct dpdat_port_stats ps = { 0 }, one;
	struct dpdat_qp_stats qs;
	uint64_t rexmit = 0, tmo = 0, naks = 0, probes = 0, ign = 0, resent = 0;
	uint64_t srtt = 0, sresent = 0, held = 0, ridden = 0, ridden_rx = 0;
	uint64_t ce = 0, cnp_tx = 0, cnp_rx = 0, cuts = 0, rate = 0;
	uint64_t wnd = 0, wcuts = 0;

	/* every queue's counts; the device's own are the device's */
	for (uint32_t e = 0; e < neng; e++) {
		if (dpdat_port_stats(dpdat_dev_port(devs[e]), &one) != 0)
			return;
		ps.rx_pkts += one.rx_pkts;
		ps.tx_pkts += one.tx_pkts;
		ps.rx_roce += one.rx_roce;
		ps.drop_not_ours += one.drop_not_ours;
		ps.drop_malformed += one.drop_malformed;
		ps.drop_bad_hdr += one.drop_bad_hdr;
		ps.drop_icrc += one.drop_icrc;
		ps.drop_tx_full += one.drop_tx_full + one.drop_steer_full;
		ps.rx_steered += one.rx_steered;
		ps.dev_imissed = one.dev_imissed;
		ps.dev_ierrors = one.dev_ierrors;
		ps.dev_oerrors = one.dev_oerrors;
	}
	for (uint32_t q = 0; q < nqp; q++)
		if (dpdat_qp_stats(qps[q], &qs) == 0) {
			rexmit += qs.retransmits;
			tmo += qs.timeouts;
			naks += qs.naks_rcvd;
			probes += qs.probes;
			sresent += qs.sack_resent;
			held += qs.held;
			ign += qs.naks_ignored;
			resent += qs.tx_resent;
			srtt = RTE_MAX(srtt, qs.srtt_ns);
			ridden += qs.acks_ridden;
			ridden_rx += qs.acks_ridden_rcvd;
			ce += qs.ecn_ce_rcvd;
			cnp_tx += qs.cnp_sent;
			cnp_rx += qs.cnp_rcvd;
			cuts += qs.cc_cuts;
			if (qs.cc_rate_mbps != 0)	/* the lowest limited */
				rate = rate == 0 ? qs.cc_rate_mbps :
				       RTE_MIN(rate, qs.cc_rate_mbps);
			wnd += qs.cc_wnd;
			wcuts += qs.cc_wnd_cuts;
		}
	fprintf(stderr, "dpdat-perf: %s port: rx %" PRIu64 " tx %" PRIu64
		" roce %" PRIu64 "; dropped: not ours %" PRIu64 " malformed %"
		PRIu64 " bad header %" PRIu64 " icrc %" PRIu64 " tx full %"
		PRIu64 "; device: missed %" PRIu64 " errors %" PRIu64 "/%"
		PRIu64 "; QPs: retransmits %" PRIu64 " timeouts %" PRIu64
		" NAKs %" PRIu64 " (%" PRIu64 " repeats ignored) probes %"
		PRIu64 " packets resent %" PRIu64 " (%" PRIu64 " on SACKs) "
		"held %" PRIu64 " srtt %.1f us ACKs riding on requests %"
		PRIu64 " sent %" PRIu64 " received; ECN: CE received %" PRIu64
		" CNPs sent %" PRIu64 " received %" PRIu64 "; DCQCN: cuts %"
		PRIu64 " rate %" PRIu64 " Mb/s (the lowest QP's; 0: none "
		"limited); delay: window %"
		PRIu64 " cuts %" PRIu64 "; handed between engines %" PRIu64
		"\n",
		perf_opt.server ? "server" : "client",
		ps.rx_pkts, ps.tx_pkts, ps.rx_roce, ps.drop_not_ours,
		ps.drop_malformed, ps.drop_bad_hdr, ps.drop_icrc,
		ps.drop_tx_full, ps.dev_imissed, ps.dev_ierrors, ps.dev_oerrors,
		rexmit, tmo, naks, ign, probes, resent, sresent, held,
		srtt / 1e3, ridden, ridden_rx, ce, cnp_tx, cnp_rx, cuts, rate,
		wnd, wcuts, ps.rx_steered);
}

/* Everything goes back, the devices last (a sanitizer sees no leak: the
 * library keeps its tables in DPDK memory, which it does not scan). */
void
perf_dpdat_teardown(void)
{
	int left = 0;

	for (uint32_t q = 0; q < nqp; q++) {
		/* a connection whose end never came is refused: said */
		if (conns[q] != NULL)
			left += dpdat_cm_conn_free(conns[q]) != 0;
		left += dpdat_qp_free(qps[q]) != 0;
	}
	for (uint32_t e = 0; e < neng; e++) {
		if (lsns[e] != NULL)
			left += dpdat_cm_listen_free(lsns[e]) != 0;
		if (cqs[e] != NULL)
			left += dpdat_cq_free(cqs[e]) != 0;
		left += dpdat_cm_eq_free(eqs[e]) != 0;
	}
	left += dpdat_lmr_free(lmr) != 0;
	left += dpdat_pz_free(pz) != 0;
	dpdat_mem_free(buf);
	for (uint32_t e = neng; e-- > 0; )
		left += dpdat_dev_close(devs[e]) != 0;
	if (left != 0)
		fprintf(stderr, "dpdat-perf: %d object(s) left at exit (a "
			"connection without its end)\n", left);
}

static void
finish(void)
{
	struct dpdat_cm_event ev;
	uint64_t t0;
	uint32_t e;

	for (uint32_t q = 0; !perf_opt.server && q < nqp; q++)
		if (dpdat_cm_disconnect(conns[q], NULL, 0) != 0)
			perf_die("disconnect");
	while (gone < nqp && eq_wait_any(&ev, &e, 10000) == 1)
		count_end(&ev);
	for (t0 = rte_get_timer_cycles();
	     rte_get_timer_cycles() - t0 < rte_get_timer_hz() / 5; )
		run_engines(-1);
	if (perf_opt.server && perf_opt.clients > 1)
		clients_report();
	port_counters();
	perf_dpdat_teardown();
}

const struct perf_transport perf_dpdat = {
	.name = "dpdat", .max_qps = PERF_MAX_QPS,
	.setup = setup, .connect = connect_peer, .bw = perf_rdma_bw,
	.lat = perf_rdma_lat, .serve = perf_rdma_serve, .finish = finish,
};
