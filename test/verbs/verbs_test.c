/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The project's own verbs program, built against Debian's libibverbs and
 * run through dpdat-run on one memif end with no peer: every object call
 * dpdat0 answers (device, PD, MR, CQ, completion channel, the QP's state
 * machine up to the peer), and every error a program can provoke with
 * them, checked. The data path is the pair tests' (pair.sh).
 *   verbs_test        (under dpdat-run; exits 0 when every check holds)
 *   verbs_test --port-events
 *                     (on a net_ring port, --dev net_ring0: its link set
 *                     down and up again through DPDK in this process, as
 *                     a cable pulled and plugged: IBV_EVENT_PORT_ERR, then
 *                     IBV_EVENT_PORT_ACTIVE, and ibv_query_port agreeing)
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <rte_ethdev.h>

static int failures;
static int late_returned;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static struct ibv_context *
open_dpdat0(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = -1, found = 0;

	list = ibv_get_device_list(&n);
	CHECK(list != NULL && n >= 1, "device list (%d)", n);
	for (int i = 0; list != NULL && i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), "dpdat0") != 0)
			continue;
		found = 1;
		ctx = ibv_open_device(list[i]);
	}
	CHECK(found, "dpdat0 not in the list");
	CHECK(list == NULL || list[n] == NULL, "list not NULL-terminated");
	ibv_free_device_list(list);	/* the context outlives the list */
	return ctx;
}

static void
queries(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge[4];
	union ibv_gid gid;

	CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0, "query_device_ex");
	CHECK(dx.orig_attr.phys_port_cnt == 1, "ports %u",
	      dx.orig_attr.phys_port_cnt);
	CHECK(ibv_query_port(ctx, 1, &pa) == 0, "query_port");
	CHECK(pa.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer %u",
	      pa.link_layer);
	CHECK(ibv_query_port(ctx, 2, &pa) != 0, "port 2 answered");
	CHECK(ibv_query_gid(ctx, 1, 0, &gid) == 0 && gid.raw[10] == 0xff &&
	      gid.raw[11] == 0xff, "GID 0 not IPv4-mapped");
	CHECK(ibv_query_gid_ex(ctx, 1, 0, &ge[0], 0) == 0 &&
	      ge[0].gid_type == IBV_GID_TYPE_ROCE_V2 &&
	      memcmp(&ge[0].gid, &gid, sizeof(gid)) == 0, "query_gid_ex");
	CHECK(ibv_query_gid_ex(ctx, 1, 1, &ge[0], 0) == ENODATA,
	      "query_gid_ex of index 1");
	CHECK(ibv_query_gid_table(ctx, ge, 4, 0) == 1 &&
	      ge[0].port_num == 1, "query_gid_table");
}

static void
memory(struct ibv_context *ctx)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_WRITE;
	char stack_buf[4096];
	struct ibv_mr *heap, *stk, *map, *ro, *bad;
	struct ibv_pd *pd, *pd2;
	void *h = malloc(65536), *m;

	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd != NULL && pd2 != NULL && pd->context == ctx,
	      "alloc_pd: %s", strerror(errno));
	if (pd == NULL || pd2 == NULL || h == NULL)
		exit(1);
	m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mmap");
	/* any memory the program has: heap, stack, an anonymous map */
	heap = ibv_reg_mr(pd, h, 65536, rw | IBV_ACCESS_REMOTE_ATOMIC);
	stk = ibv_reg_mr(pd, stack_buf, sizeof(stack_buf),
			 IBV_ACCESS_LOCAL_WRITE);
	map = ibv_reg_mr(pd2, m, 1 << 20, rw);
	ro = ibv_reg_mr(pd, h, 4096, 0);	/* local read only */
	CHECK(heap != NULL && stk != NULL && map != NULL && ro != NULL,
	      "reg_mr: %s", strerror(errno));
	if (heap == NULL || stk == NULL || map == NULL || ro == NULL)
		exit(1);
	/* one context serves both ways, as mlx5's lkey == rkey */
	CHECK(heap->lkey != 0 && heap->rkey != 0, "heap keys %#x/%#x",
	      heap->lkey, heap->rkey);
	CHECK(heap->addr == h && heap->length == 65536 && heap->pd == pd,
	      "heap MR fields");
	CHECK(heap->lkey != stk->lkey && heap->lkey != map->lkey &&
	      stk->lkey != map->lkey, "keys not distinct");
	/* the errors a program can provoke */
	errno = 0;
	bad = ibv_reg_mr(pd, h, 4096, IBV_ACCESS_REMOTE_WRITE);
	CHECK(bad == NULL && errno == EINVAL,
	      "remote write without local write: %p %s", (void *)bad,
	      strerror(errno));
	errno = 0;
	bad = ibv_reg_mr(pd, h, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_MW_BIND);
	CHECK(bad == NULL && errno == EOPNOTSUPP, "MW_BIND: %s",
	      strerror(errno));
	errno = 0;
	bad = ibv_reg_mr_iova(pd, h, 4096, 0x1000, IBV_ACCESS_LOCAL_WRITE);
	CHECK(bad == NULL && errno == EOPNOTSUPP, "iova != addr: %s",
	      strerror(errno));
	errno = 0;
	bad = ibv_reg_mr(pd, h, 0, IBV_ACCESS_LOCAL_WRITE);
	CHECK(bad == NULL && errno == EINVAL, "zero length: %s",
	      strerror(errno));
	CHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc_pd with MRs: not EBUSY");
	CHECK(ibv_dereg_mr(heap) == 0 && ibv_dereg_mr(stk) == 0 &&
	      ibv_dereg_mr(ro) == 0 && ibv_dereg_mr(map) == 0, "dereg_mr");
	CHECK(ibv_dealloc_pd(pd) == 0 && ibv_dealloc_pd(pd2) == 0,
	      "dealloc_pd");
	munmap(m, 1 << 20);
	free(h);
}

/* A QP of pd on cq through RESET -> INIT: 0 or the error. */
static int
to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void
objects(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr qa, rtr = { .qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024, .dest_qp_num = 77,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12 };
	struct ibv_qp_init_attr got;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *ecq, *bad_cq;
	struct ibv_qp *qp, *bad_qp;
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *bad_swr;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *bad_rwr;
	struct ibv_wc wc;
	uint32_t qpn;
	struct ibv_pd *pd;
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	CHECK(pd != NULL && ch != NULL && ch->fd >= 0, "pd, channel: %s",
	      strerror(errno));
	if (pd == NULL || ch == NULL)
		exit(1);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ecq = ibv_create_cq(ctx, 64, &ev_ctx, ch, 0);
	CHECK(cq != NULL && ecq != NULL && cq->cqe >= 64, "create_cq: %s",
	      strerror(errno));
	if (cq == NULL || ecq == NULL)
		exit(1);
	errno = 0;
	bad_cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	CHECK(bad_cq == NULL && errno == EINVAL, "cqe 0: %s", strerror(errno));
	CHECK(ibv_poll_cq(cq, 4, &wc) == 0, "an empty CQ polled non-empty");
	CHECK(ibv_req_notify_cq(cq, 0) == EINVAL,
	      "req_notify_cq without a channel");
	CHECK(ibv_req_notify_cq(ecq, 0) == 0, "req_notify_cq");
	/* nothing completes: the channel has no event (non-blocking) */
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0,
	      "O_NONBLOCK");
	errno = 0;
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN,
	      "an event with nothing completed: %s", strerror(errno));

	ia.send_cq = cq;
	ia.recv_cq = ecq;
	qp = ibv_create_qp(pd, &ia);
	CHECK(qp != NULL && qp->state == IBV_QPS_RESET && qp->qp_num > 1,
	      "create_qp: %s", strerror(errno));
	if (qp == NULL)
		exit(1);
	CHECK(ia.cap.max_inline_data >= 64, "inline %u",
	      ia.cap.max_inline_data);
	/* what a program can get wrong */
	ia.qp_type = IBV_QPT_UD;
	errno = 0;
	bad_qp = ibv_create_qp(pd, &ia);
	CHECK(bad_qp == NULL && errno == EOPNOTSUPP, "UD QP: %s",
	      strerror(errno));
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_inline_data = 1 << 20;
	errno = 0;
	bad_qp = ibv_create_qp(pd, &ia);
	CHECK(bad_qp == NULL && errno == EINVAL, "1 MiB inline: %s",
	      strerror(errno));
	CHECK(ibv_modify_qp(qp, &rtr, IBV_QP_STATE) == EINVAL,
	      "RESET -> RTR allowed");
	CHECK(ibv_post_recv(qp, &rwr, &bad_rwr) == EINVAL && bad_rwr == &rwr,
	      "post_recv in RESET");
	qa.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(qp, &qa, IBV_QP_STATE) == EINVAL,
	      "RESET -> INIT without port, pkey, access");
	CHECK(to_init(qp) == 0 && qp->state == IBV_QPS_INIT, "RESET -> INIT");
	CHECK(ibv_post_send(qp, &swr, &bad_swr) == EINVAL && bad_swr == &swr,
	      "post_send in INIT");
	CHECK(ibv_post_recv(qp, &rwr, &bad_rwr) == 0, "post_recv in INIT");
	/* RoCE: the peer is a GID */
	CHECK(ibv_modify_qp(qp, &rtr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) ==
	      EINVAL, "RTR with a LID");
	CHECK(ibv_modify_qp(qp, &rtr, IBV_QP_STATE | IBV_QP_AV) == EINVAL,
	      "RTR without path MTU, peer QPN, PSN");
	qa.qp_state = IBV_QPS_SQD;
	CHECK(ibv_modify_qp(qp, &qa, IBV_QP_STATE) == EOPNOTSUPP,
	      "to SQD: not EOPNOTSUPP");
	CHECK(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_CAP, &got) == 0 &&
	      qa.qp_state == IBV_QPS_INIT && qa.port_num == 1 &&
	      qa.qp_access_flags == IBV_ACCESS_REMOTE_WRITE &&
	      got.cap.max_send_wr == 8 && got.send_cq == cq &&
	      got.recv_cq == ecq, "query_qp");
	/* objects in use */
	CHECK(ibv_destroy_cq(cq) == EBUSY, "destroy_cq under a QP");
	CHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc_pd under a QP");
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY,
	      "destroy_comp_channel under a CQ");
	/* ERR flushes what was posted, with an event for the armed CQ */
	qa.qp_state = IBV_QPS_ERR;
	CHECK(ibv_modify_qp(qp, &qa, IBV_QP_STATE) == 0 &&
	      qp->state == IBV_QPS_ERR, "to ERR");
	for (int i = 0; i < 1000 && ibv_get_cq_event(ch, &ev_cq, &ev_ctx) != 0;
	     i++)
		usleep(1000);
	CHECK(ev_cq == ecq && ev_ctx == &ev_ctx, "no event of the flush");
	ibv_ack_cq_events(ecq, 1);
	CHECK(ecq->comp_events_completed == 1, "ack_cq_events");
	for (int i = 0; i < 1000 && ibv_poll_cq(ecq, 1, &wc) == 0; i++)
		usleep(1000);
	CHECK(wc.wr_id == 1 && wc.status == IBV_WC_WR_FLUSH_ERR &&
	      wc.qp_num == qp->qp_num, "flushed receive: %lu %s",
	      (unsigned long)wc.wr_id, ibv_wc_status_str(wc.status));
	/* back to RESET: the same number, its completions gone from the
	 * CQ (a receive posted in ERR flushes), ready for INIT again */
	rwr.wr_id = 2;
	CHECK(ibv_post_recv(qp, &rwr, &bad_rwr) == 0, "post_recv in ERR");
	qpn = qp->qp_num;
	qa.qp_state = IBV_QPS_RESET;
	CHECK(ibv_modify_qp(qp, &qa, IBV_QP_STATE) == 0 &&
	      qp->state == IBV_QPS_RESET && qp->qp_num == qpn, "ERR -> RESET");
	CHECK(ibv_query_qp(qp, &qa, IBV_QP_STATE, &got) == 0 &&
	      qa.qp_state == IBV_QPS_RESET, "query after RESET: %d",
	      qa.qp_state);
	usleep(10000);
	CHECK(ibv_poll_cq(ecq, 1, &wc) == 0, "a completion after RESET: %lu",
	      (unsigned long)wc.wr_id);
	CHECK(to_init(qp) == 0 && qp->state == IBV_QPS_INIT,
	      "RESET -> INIT after a reset");
	CHECK(ibv_destroy_qp(qp) == 0, "destroy_qp");
	CHECK(ibv_destroy_cq(cq) == 0 && ibv_destroy_cq(ecq) == 0,
	      "destroy_cq");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "destroy_comp_channel");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
}

/* The limit crossed at arming (1 WR waits, limit 4): one
 * IBV_EVENT_SRQ_LIMIT_REACHED, async_fd readable only while one waits;
 * taken non-blocking (EAGAIN when none), then, armed again, blocking (an
 * alarm ends the program if it never comes). */
static void
async_srq_limit(struct ibv_context *ctx, struct ibv_srq *s)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_srq_attr sa = { .srq_limit = 4 };
	struct ibv_async_event ev = { 0 };
	int fl = fcntl(ctx->async_fd, F_GETFL), ret = -1;

	CHECK(ctx->async_fd >= 0 && fl >= 0, "async_fd %d", ctx->async_fd);
	CHECK(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) == 0,
	      "async_fd non-blocking");
	for (int i = 0; i < 1000 && ret != 0; i++)
		if ((ret = ibv_get_async_event(ctx, &ev)) != 0)
			usleep(1000);
	CHECK(ret == 0 && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
	      ev.element.srq == s, "SRQ limit event: %s",
	      ibv_event_type_str(ev.event_type));
	CHECK(poll(&p, 1, 0) == 0, "async_fd readable with no event");
	if (ret == 0)
		ibv_ack_async_event(&ev);
	CHECK(ibv_get_async_event(ctx, &ev) == -1 && errno == EAGAIN,
	      "a second SRQ limit event");
	fcntl(ctx->async_fd, F_SETFL, fl);
	CHECK(ibv_modify_srq(s, &sa, IBV_SRQ_LIMIT) == 0, "arm again");
	alarm(10);
	CHECK(ibv_get_async_event(ctx, &ev) == 0 &&
	      ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED,
	      "blocking: SRQ limit event");
	alarm(0);
	ibv_ack_async_event(&ev);
}

/* The next asynchronous event within 10 s, blocking (an alarm ends the
 * program if none comes); 0 or -1. */
static int
next_async(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	int ret;

	alarm(10);
	ret = ibv_get_async_event(ctx, ev);
	alarm(0);
	return ret;
}

/* IBV_EVENT_QP_LAST_WQE_REACHED: once for a QP on an SRQ that goes to
 * ERR; raised by a drained poll too (async_fd readable, as programs that
 * watch the fd and poll their CQs expect); a QP destroyed with its event
 * not taken takes the event with it. */
static void
async_last_wqe(struct ibv_context *ctx, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *ia)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev = { 0 };
	struct ibv_qp *q1 = ibv_create_qp(pd, ia), *q2 = ibv_create_qp(pd, ia);
	int fl = fcntl(ctx->async_fd, F_GETFL), n = 0;
	struct ibv_wc wc;

	CHECK(q1 != NULL && q2 != NULL, "QPs on the SRQ: %s", strerror(errno));
	if (q1 == NULL || q2 == NULL)
		exit(1);
	CHECK(to_init(q1) == 0 && ibv_modify_qp(q1, &qa, IBV_QP_STATE) == 0,
	      "QP on an SRQ to ERR");
	CHECK(next_async(ctx, &ev) == 0 &&
	      ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
	      ev.element.qp == q1, "last WQE reached: %s",
	      ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	CHECK(ibv_get_async_event(ctx, &ev) == -1 && errno == EAGAIN,
	      "a second last WQE event");
	/* the program only polls its CQ: the poll raises it */
	CHECK(ibv_modify_qp(q2, &qa, IBV_QP_STATE) == 0, "RESET -> ERR");
	for (int i = 0; i < 100 && n == 0; i++) {
		CHECK(ibv_poll_cq(ia->recv_cq, 1, &wc) == 0, "a completion");
		n = poll(&p, 1, 0);
		if (n == 0)
			usleep(2000);
	}
	CHECK(n == 1, "async_fd not readable after polls");
	CHECK(ibv_destroy_qp(q2) == 0, "destroy_qp with its event queued");
	CHECK(poll(&p, 1, 0) == 0 && ibv_get_async_event(ctx, &ev) == -1 &&
	      errno == EAGAIN, "a destroyed QP's event stayed");
	fcntl(ctx->async_fd, F_SETFL, fl);
	CHECK(ibv_destroy_qp(q1) == 0, "destroy_qp");
}

static void *
late_get(void *arg)
{
	struct rdma_cm_event *ev;

	rdma_get_cm_event(arg, &ev);	/* blocks for good */
	__atomic_store_n(&late_returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A thread calls rdma_get_cm_event on an event channel already destroyed,
 * as rping's event thread does between two events while its main thread
 * tears down: it blocks for good and reads no freed memory (the sanitized
 * run says so: before the graveyard, a heap use after free). */
static void
cm_channel_after_destroy(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	pthread_t t;

	CHECK(ch != NULL, "rdma_create_event_channel: %s", strerror(errno));
	if (ch == NULL)
		return;
	rdma_destroy_event_channel(ch);
	CHECK(pthread_create(&t, NULL, late_get, ch) == 0, "pthread_create");
	usleep(100000);
	CHECK(!__atomic_load_n(&late_returned, __ATOMIC_ACQUIRE),
	      "rdma_get_cm_event returned on a destroyed channel");
	pthread_detach(t);
}

/* A shared receive queue: create, arm, query, a QP on it, in use. */
static void
srq(struct ibv_context *ctx)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_recv_wr rwr = { .wr_id = 9 }, *bad;
	struct ibv_srq_attr sa;
	struct ibv_srq *s, *bad_srq;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp;

	CHECK(pd != NULL && cq != NULL, "pd, cq");
	if (pd == NULL || cq == NULL)
		exit(1);
	s = ibv_create_srq(pd, &si);
	CHECK(s != NULL && s->pd == pd && si.attr.max_sge >= 1,
	      "create_srq: %s", strerror(errno));
	if (s == NULL)
		exit(1);
	si.attr.max_wr = 0;
	errno = 0;
	bad_srq = ibv_create_srq(pd, &si);
	CHECK(bad_srq == NULL && errno == EINVAL, "max_wr 0: %s",
	      strerror(errno));
	CHECK(ibv_post_srq_recv(s, &rwr, &bad) == 0, "post_srq_recv");
	sa.srq_limit = 4;
	CHECK(ibv_modify_srq(s, &sa, IBV_SRQ_LIMIT) == 0, "arm the limit");
	/* one posted, fewer than 4: crossed at once and disarmed */
	CHECK(ibv_query_srq(s, &sa) == 0 && sa.max_wr == 16 &&
	      sa.srq_limit == 0, "query_srq: max_wr %u limit %u", sa.max_wr,
	      sa.srq_limit);
	async_srq_limit(ctx, s);
	sa.max_wr = 32;
	CHECK(ibv_modify_srq(s, &sa, IBV_SRQ_MAX_WR) == EINVAL,
	      "resize allowed");
	ia.send_cq = ia.recv_cq = cq;
	ia.srq = s;
	qp = ibv_create_qp(pd, &ia);
	CHECK(qp != NULL && qp->srq == s, "QP on the SRQ: %s",
	      strerror(errno));
	if (qp == NULL)
		exit(1);
	CHECK(to_init(qp) == 0, "INIT");
	CHECK(ibv_post_recv(qp, &rwr, &bad) == EINVAL,
	      "post_recv to a QP on an SRQ");
	CHECK(ibv_destroy_srq(s) == EBUSY, "destroy_srq under a QP");
	async_last_wqe(ctx, pd, &ia);
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_srq(s) == 0,
	      "destroy_qp, destroy_srq");
	CHECK(ibv_destroy_cq(cq) == 0 && ibv_dealloc_pd(pd) == 0, "teardown");
}

/* The port's link down, then up: an event for each, the port's state as
 * told. */
static void
port_events(struct ibv_context *ctx)
{
	struct ibv_async_event ev = { 0 };
	struct ibv_port_attr pa;
	uint16_t pid;

	CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE,
	      "port not active at first");
	CHECK(rte_eth_dev_get_port_by_name("net_ring0", &pid) == 0,
	      "no net_ring0 (run with --dev net_ring0)");
	if (failures != 0)
		return;
	CHECK(rte_eth_dev_set_link_down(pid) == 0, "set_link_down");
	CHECK(next_async(ctx, &ev) == 0 &&
	      ev.event_type == IBV_EVENT_PORT_ERR && ev.element.port_num == 1,
	      "link down: %s", ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_DOWN,
	      "port state %d with the link down", pa.state);
	CHECK(rte_eth_dev_set_link_up(pid) == 0, "set_link_up");
	CHECK(next_async(ctx, &ev) == 0 &&
	      ev.event_type == IBV_EVENT_PORT_ACTIVE,
	      "link up: %s", ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE,
	      "port state %d with the link up", pa.state);
}

int
main(int argc, char **argv)
{
	struct ibv_context *ctx = open_dpdat0();

	if (ctx == NULL) {
		fprintf(stderr, "FAIL: dpdat0 did not open: %s\n",
			strerror(errno));
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "--port-events") == 0) {
		port_events(ctx);
		CHECK(ibv_close_device(ctx) == 0, "close_device");
		printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS",
		       failures);
		return failures != 0;
	}
	queries(ctx);
	memory(ctx);
	objects(ctx);
	srq(ctx);
	cm_channel_after_destroy();
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures != 0;
}
