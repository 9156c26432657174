/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The kernel verbs transport: the same tests on an RDMA device found at run
 * time (a RoCE or InfiniBand NIC, or rxe), -q QPs connected with librdmacm;
 * the client's parameters travel in the connection's private data, the
 * server's buffer in the accept's. Built only where libibverbs and
 * librdmacm are; untested on hardware (the build machines have no RDMA
 * device, so only the no-device path has run).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "perf.h"

#define EXIT_NO_DEVICE	3
#define CM_TIMEOUT_MS	2000
#define BUF_BYTES	((size_t)PERF_BUF_BYTES)
#define VERBS_MAX_QPS	16

static struct rdma_event_channel *ch;
static struct rdma_cm_id *listener, *ids[PERF_MAX_QPS];
static struct ibv_device_attr dattr;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t *buf;
static uint32_t nqp, gone, peer_rkey;
static uint64_t peer_addr;

static void
setup(void)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list != NULL)
		ibv_free_device_list(list);
	if (n <= 0) {
		fprintf(stderr, "dpdat-perf: --transport=verbs: no RDMA device "
			"on this machine (ibv_get_device_list found 0)\n");
		exit(EXIT_NO_DEVICE);
	}
	buf = aligned_alloc(4096, BUF_BYTES);
	ch = rdma_create_event_channel();
	if (buf == NULL || ch == NULL)
		perf_die("verbs: setup: %s", strerror(errno));
	memset(buf, 0, BUF_BYTES);
	/* non-blocking, so that every wait has a timeout */
	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) != 0)
		perf_die("verbs: event channel: %s", strerror(errno));
}

/* The next CM event within timeout_ms (to acknowledge), or NULL. It asks
 * every millisecond: with inline progress (DPDAT_VERBS_PROGRESS=inline)
 * only the program's calls run the engine, rdma_get_cm_event among them. */
static struct rdma_cm_event *
cm_event(int timeout_ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int waited = 0;

	for (;;) {
		if (rdma_get_cm_event(ch, &ev) == 0)
			return ev;
		if (errno != EAGAIN)
			perf_die("verbs: rdma_get_cm_event: %s",
				 strerror(errno));
		if (waited >= timeout_ms)
			return NULL;
		poll(&p, 1, 1);
		waited++;
	}
}

/* Wait for one event of type want and acknowledge it. */
static void
cm_expect(enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = cm_event(CM_TIMEOUT_MS);

	if (ev == NULL)
		perf_die("verbs: no %s in %d ms", rdma_event_str(want),
			 CM_TIMEOUT_MS);
	if (ev->event != want)
		perf_die("verbs: %s (status %d) instead of %s",
			 rdma_event_str(ev->event), ev->status,
			 rdma_event_str(want));
	rdma_ack_cm_event(ev);
}

/* PD, CQ and MR on the device of the first connection. */
static void
resources(struct ibv_context *ctx)
{
	if (pd != NULL)
		return;
	if (ibv_query_device(ctx, &dattr) != 0)
		perf_die("verbs: ibv_query_device: %s", strerror(errno));
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, (int)perf_min(2 * VERBS_MAX_QPS * PERF_MAX_DEPTH,
					     (uint32_t)dattr.max_cqe),
			   NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, buf, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) :
		  NULL;
	if (pd == NULL || cq == NULL || mr == NULL)
		perf_die("verbs: PD, CQ or MR on %s: %s",
			 ibv_get_device_name(ctx->device), strerror(errno));
}

/* A QP on id; returns what to send in the private data. */
static struct rdma_conn_param
make_qp(struct rdma_cm_id *id, struct perf_params *mine)
{
	resources(id->verbs);

	uint32_t wr = perf_min(2 * PERF_MAX_DEPTH, (uint32_t)dattr.max_qp_wr);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq,
		.qp_type = IBV_QPT_RC, .cap = { .max_send_wr = wr,
		.max_recv_wr = wr, .max_send_sge = 1, .max_recv_sge = 1 } };

	if (rdma_create_qp(id, pd, &qa) != 0)
		perf_die("verbs: rdma_create_qp: %s", strerror(errno));
	mine->addr = (uintptr_t)buf;
	mine->rkey = mr->rkey;
	return (struct rdma_conn_param){ .private_data = mine,
		.private_data_len = sizeof(*mine),
		.responder_resources = (uint8_t)perf_min(16,
					(uint32_t)dattr.max_qp_rd_atom),
		.initiator_depth = (uint8_t)perf_min(16,
					(uint32_t)dattr.max_qp_init_rd_atom),
		.retry_count = 7, .rnr_retry_count = 7 };
}

static struct sockaddr_in
addr_of(const char *ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	if (ip != NULL && inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		perf_die("verbs: bad address %s", ip);
	return a;
}

/* One connection request: the first brings the parameters. */
static void
accept_one(struct rdma_cm_event *ev, struct perf_params *pr,
	   struct perf_params *mine)
{
	struct rdma_conn_param cp;

	if (nqp == 0 && ev->param.conn.private_data_len < sizeof(*pr))
		perf_die("verbs: a request without test parameters");
	if (nqp == 0)
		memcpy(pr, ev->param.conn.private_data, sizeof(*pr));
	peer_addr = pr->addr;
	peer_rkey = pr->rkey;
	if (perf_params_check(pr) != 0 || nqp == pr->qps)
		perf_die("verbs: bad parameters from the client");
	cp = make_qp(ev->id, mine);
	if (rdma_accept(ev->id, &cp) != 0)
		perf_die("verbs: rdma_accept: %s", strerror(errno));
	ids[nqp++] = ev->id;
}

/* Server: listen, accept -q connections. */
static void
accept_all(struct perf_params *pr)
{
	struct sockaddr_in a = addr_of(perf_opt.ip, perf_opt.service);
	struct perf_params mine = *pr;
	struct rdma_cm_event *ev;
	uint32_t up = 0;

	if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(listener, (struct sockaddr *)&a) != 0 ||
	    rdma_listen(listener, VERBS_MAX_QPS) != 0)
		perf_die("verbs: listen on port %u: %s", perf_opt.service,
			 strerror(errno));
	while (nqp == 0 || up < pr->qps) {
		ev = cm_event(nqp ? 10000 : PERF_WAIT_CLIENT_MS);
		if (ev == NULL)
			perf_die("verbs: no client connected (%u QPs up)", up);
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			accept_one(ev, pr, &mine);
		else if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
			up++;
		else
			perf_die("verbs: %s (status %d) while connecting",
				 rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
	}
}

/* Client: one connection; NULL when the server said no (not listening
 * yet, perhaps). */
static struct rdma_cm_id *
try_connect(struct perf_params *mine)
{
	struct sockaddr_in to = addr_of(perf_opt.peer, perf_opt.service);
	struct sockaddr_in from = addr_of(perf_opt.ip, 0);
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct perf_params theirs;
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_resolve_addr(id, perf_opt.ip ? (struct sockaddr *)&from : NULL,
			      (struct sockaddr *)&to, CM_TIMEOUT_MS) != 0)
		perf_die("verbs: resolve %s: %s", perf_opt.peer,
			 strerror(errno));
	cm_expect(RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, CM_TIMEOUT_MS) != 0)
		perf_die("verbs: route to %s: %s", perf_opt.peer,
			 strerror(errno));
	cm_expect(RDMA_CM_EVENT_ROUTE_RESOLVED);
	cp = make_qp(id, mine);
	if (rdma_connect(id, &cp) != 0)
		perf_die("verbs: rdma_connect: %s", strerror(errno));
	ev = cm_event(20000);
	if (ev == NULL)
		perf_die("verbs: no answer from %s", perf_opt.peer);
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED &&
	    ev->param.conn.private_data_len >= sizeof(theirs)) {
		memcpy(&theirs, ev->param.conn.private_data, sizeof(theirs));
		peer_addr = theirs.addr;
		peer_rkey = theirs.rkey;
		rdma_ack_cm_event(ev);
		return id;
	}
	if (ev->event != RDMA_CM_EVENT_REJECTED &&
	    ev->event != RDMA_CM_EVENT_UNREACHABLE)
		perf_die("verbs: %s (status %d) while connecting",
			 rdma_event_str(ev->event), ev->status);
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	return NULL;
}

static void
connect_all(const struct perf_params *pr)
{
	struct perf_params mine = *pr;

	for (int t = 0; nqp < pr->qps; t++) {
		ids[nqp] = try_connect(&mine);
		if (ids[nqp] != NULL)
			nqp++;
		else if (t == 20 || nqp > 0)
			perf_die("verbs: %s refused QP %u", perf_opt.peer, nqp);
		else
			poll(NULL, 0, 200);	/* the server may start late */
	}
}

static void
post(uint32_t q, enum perf_op op, uint32_t size, uint64_t loff, uint64_t roff,
     int signaled, uint64_t id)
{
	static const enum ibv_wr_opcode vop[] = {
		[PERF_WRITE] = IBV_WR_RDMA_WRITE,
		[PERF_READ] = IBV_WR_RDMA_READ, [PERF_SEND] = IBV_WR_SEND };
	struct ibv_sge sge = { (uintptr_t)buf + loff, size, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = vop[op],
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0 }, *bad;
	int rc;

	wr.wr.rdma.remote_addr = peer_addr + roff;
	wr.wr.rdma.rkey = peer_rkey;
	rc = ibv_post_send(ids[q]->qp, &wr, &bad);
	if (rc != 0)
		perf_die("verbs: ibv_post_send: %s", strerror(rc));
}

/* -l: one ibv_post_send() of a chain, as perftest. */
static void
post_list(uint32_t q, enum perf_op op, uint32_t size, uint32_t n,
	  const uint64_t *wr_ids)
{
	static const enum ibv_wr_opcode vop[] = {
		[PERF_WRITE] = IBV_WR_RDMA_WRITE,
		[PERF_READ] = IBV_WR_RDMA_READ, [PERF_SEND] = IBV_WR_SEND };
	static struct ibv_send_wr wrs[PERF_MAX_DEPTH];
	struct ibv_sge sge = { (uintptr_t)buf, size, mr->lkey };
	struct ibv_send_wr *bad;
	int rc;

	for (uint32_t j = 0; j < n; j++) {
		wrs[j] = (struct ibv_send_wr){ .wr_id = wr_ids[j],
			.sg_list = &sge, .num_sge = 1, .opcode = vop[op],
			.send_flags = wr_ids[j] != 0 ? IBV_SEND_SIGNALED : 0,
			.next = j + 1 < n ? &wrs[j + 1] : NULL };
		wrs[j].wr.rdma.remote_addr = peer_addr;
		wrs[j].wr.rdma.rkey = peer_rkey;
	}
	rc = ibv_post_send(ids[q]->qp, wrs, &bad);
	if (rc != 0)
		perf_die("verbs: ibv_post_send: %s", strerror(rc));
}

static void
post_recv(uint32_t q, uint32_t size, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf + PERF_MAX_SIZE, size,
			       mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;
	int rc = ibv_post_recv(ids[q]->qp, &wr, &bad);

	if (rc != 0)
		perf_die("verbs: ibv_post_recv: %s", strerror(rc));
}

static int
poll_cq(struct perf_wc *out, int max)
{
	struct ibv_wc wc[64];
	int n = ibv_poll_cq(cq, max < 64 ? max : 64, wc);

	if (n < 0)
		perf_die("verbs: ibv_poll_cq failed");
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS &&
		    wc[i].status != IBV_WC_WR_FLUSH_ERR)
			perf_die("verbs: completion: %s",
				 ibv_wc_status_str(wc[i].status));
		out[i].id = wc[i].wr_id;
		out[i].flushed = wc[i].status == IBV_WC_WR_FLUSH_ERR;
		out[i].recv = (wc[i].opcode & IBV_WC_RECV) != 0;
	}
	return n;
}

static void
progress(void)
{
	/* the hardware needs no help */
}

static void
count_end(struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
		gone++;
	rdma_ack_cm_event(ev);
}

static int
peer_gone(void)
{
	struct rdma_cm_event *ev = cm_event(0);

	if (ev != NULL)
		count_end(ev);
	return gone > 0;
}

static struct perf_rdma prims = {
	.post = post, .post_list = post_list, .post_recv = post_recv,
	.poll = poll_cq,
	.progress = progress, .peer_gone = peer_gone, .wait_writes = 1,
};

static void
connect_peer(struct perf_params *pr, struct perf_info *info)
{
	struct ibv_port_attr pa;
	struct sockaddr_in *me;
	char ip[INET_ADDRSTRLEN];

	if (perf_opt.server)
		accept_all(pr);
	else
		connect_all(pr);
	prims.buf = buf;
	prims.nqp = nqp;
	perf_rdma_use(&prims);
	snprintf(info->dev, sizeof(info->dev), "%s",
		 ibv_get_device_name(ids[0]->verbs->device));
	info->type = "IB/RoCE (kernel verbs)";
	info->cm = "ON";
	info->exchange = "rdma_cm private data";
	if (ibv_query_port(ids[0]->verbs, ids[0]->port_num, &pa) == 0)
		info->mtu = 128u << pa.active_mtu;
	for (uint32_t q = 0; q < nqp; q++) {
		me = (struct sockaddr_in *)rdma_get_local_addr(ids[q]);
		inet_ntop(AF_INET, &me->sin_addr, ip, sizeof(ip));
		snprintf(info->local[q], sizeof(info->local[q]),
			 "IP %s QPN 0x%06x", ip, ids[q]->qp->qp_num);
	}
	info->nlocal = (int)nqp;
}

static void
finish(void)
{
	struct rdma_cm_event *ev;

	for (uint32_t q = 0; !perf_opt.server && q < nqp; q++)
		rdma_disconnect(ids[q]);
	while (gone < nqp && (ev = cm_event(5000)) != NULL)
		count_end(ev);
	for (uint32_t q = 0; q < nqp; q++) {
		rdma_destroy_qp(ids[q]);
		rdma_destroy_id(ids[q]);
	}
	if (listener != NULL)
		rdma_destroy_id(listener);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ch);
	free(buf);
}

const struct perf_transport perf_verbs = {
	.name = "verbs", .max_qps = VERBS_MAX_QPS,
	.setup = setup, .connect = connect_peer, .bw = perf_rdma_bw,
	.lat = perf_rdma_lat, .serve = perf_rdma_serve, .finish = finish,
};
