/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The project's own two-sided verbs program, built against Debian's
 * libibverbs and run through dpdat-run on both ends of a link (pair.sh):
 * every operation a QP posts, with its bytes checked at both ends, and the
 * errors a peer can provoke with them (bad lkey, bad rkey, a write to
 * read-only memory, RNR), each on a QP of its own, and a CQ overrun with
 * its asynchronous event.
 *   verbs_data -p PORT            the server (responder side)
 *   verbs_data -p PORT HOST       the client (requester side)
 * QP details go over TCP, as in ibv_rc_pingpong; each step ends with a
 * one-byte barrier on the same socket. Exits 0 and prints PASS when every
 * check holds.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define BUF_LEN		65536
#define RO_LEN		4096
#define RECV_LEN	256

static int failures;
static int lossy;	/* DPDAT_FAULT set: loss injected */
static int sock = -1;
static int is_client;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d (%s): ", __FILE__, __LINE__, \
		is_client ? "client" : "server"); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define FATAL(cond, ...) do { if (!(cond)) { CHECK(cond, __VA_ARGS__); \
	exit(1); } } while (0)

/* What one side tells the other. */
struct info {
	uint32_t qpn, psn;
	uint8_t gid[16];
	uint64_t addr;		/* buf */
	uint32_t rkey;
	uint64_t ro_addr;	/* read-only MR */
	uint32_t ro_rkey;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr, *ro_mr;
static uint8_t *buf, *ro;
static union ibv_gid my_gid;

static void
xfer(void *out, void *in, size_t len)
{
	size_t done;
	ssize_t n;

	FATAL(write(sock, out, len) == (ssize_t)len, "tcp write: %s",
	      strerror(errno));
	for (done = 0; done < len; done += (size_t)n) {
		n = read(sock, (char *)in + done, len - done);
		FATAL(n > 0, "tcp read: %s", n == 0 ? "closed" :
		      strerror(errno));
	}
}

static void
barrier(void)
{
	char a = 'b', b;

	xfer(&a, &b, 1);
}

static void
tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *res;
	int one = 1, l;

	if (host != NULL) {
		FATAL(getaddrinfo(host, port, &hints, &res) == 0, "%s", host);
		sock = socket(AF_INET, SOCK_STREAM, 0);
		FATAL(connect(sock, res->ai_addr, res->ai_addrlen) == 0,
		      "connect: %s", strerror(errno));
		freeaddrinfo(res);
		return;
	}
	hints.ai_flags = AI_PASSIVE;
	FATAL(getaddrinfo(NULL, port, &hints, &res) == 0, "port %s", port);
	l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	FATAL(bind(l, res->ai_addr, res->ai_addrlen) == 0 && listen(l, 1) == 0,
	      "listen: %s", strerror(errno));
	freeaddrinfo(res);
	sock = accept(l, NULL, NULL);
	FATAL(sock >= 0, "accept: %s", strerror(errno));
	close(l);
}

static void
open_dev(void)
{
	struct ibv_device **list;
	int n, i;

	list = ibv_get_device_list(&n);
	FATAL(list != NULL, "device list");
	for (i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), "dpdat0") == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	FATAL(ctx != NULL, "dpdat0: %s", strerror(errno));
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_LEN);
	ro = aligned_alloc(4096, RO_LEN);
	FATAL(pd != NULL && cq != NULL && buf != NULL && ro != NULL, "objects");
	memset(buf, 0, BUF_LEN);
	memset(ro, 0x5a, RO_LEN);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	ro_mr = ibv_reg_mr(pd, ro, RO_LEN, IBV_ACCESS_REMOTE_READ);
	FATAL(mr != NULL && ro_mr != NULL, "reg_mr: %s", strerror(errno));
	FATAL(ibv_query_gid(ctx, 1, 0, &my_gid) == 0, "query_gid");
}

#define ALL_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)

/* A QP connected to the peer's QP of the same step, allowing the remote
 * accesses of access. */
static struct ibv_qp *
qp_pair_access(uint8_t rnr_retry, int access, struct info *peer)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = (unsigned int)access };
	struct info me = { .addr = (uintptr_t)buf, .rkey = mr->rkey,
			   .ro_addr = (uintptr_t)ro, .ro_rkey = ro_mr->rkey };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	FATAL(qp != NULL, "create_qp: %s", strerror(errno));
	FATAL(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0, "INIT");
	me.qpn = qp->qp_num;
	me.psn = (uint32_t)rand() & 0xffffff;
	memcpy(me.gid, my_gid.raw, 16);
	xfer(&me, peer, sizeof(me));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	/* more READs and atomics than the device answers (16) */
	a.max_dest_rd_atomic = 17;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER) == EINVAL &&
	      qp->state == IBV_QPS_INIT, "RTR with max_dest_rd_atomic 17");
	a.max_dest_rd_atomic = 4;
	FATAL(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER) == 0, "RTR: %s",
	      strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me.psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 17;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) ==
	      EINVAL && qp->state == IBV_QPS_RTR,
	      "RTS with max_rd_atomic 17");
	a.max_rd_atomic = 4;
	FATAL(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0,
	      "RTS: %s", strerror(errno));
	barrier();	/* both ready before either sends */
	return qp;
}

static struct ibv_qp *
qp_pair(uint8_t rnr_retry, struct info *peer)
{
	return qp_pair_access(rnr_retry, ALL_REMOTE, peer);
}

/* Wait (10 s at most) for n completions into wc[]. */
static int
wait_wc(struct ibv_wc *wc, int n)
{
	struct timespec t0, t;
	int got = 0, k;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		k = ibv_poll_cq(cq, n - got, wc + got);
		FATAL(k >= 0, "poll_cq");
		got += k;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			break;
	}
	CHECK(got == n, "%d of %d completions", got, n);
	return got;
}

static int
post_send(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
	  void *addr, uint32_t len, uint32_t lkey, unsigned int flags,
	  uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
		.num_sge = 1, .opcode = op,
		.send_flags = flags | IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static void
fill(uint8_t *p, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static int
same(const uint8_t *p, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed + i * 7))
			return 0;
	return 1;
}

/* SEND, SEND with immediate, an inline SEND from a buffer reused at once,
 * a two-element gather, and a post list with a bad WR in the middle. */
static void
step_sends(void)
{
	struct ibv_recv_wr rwr[5], *bad_r;
	struct ibv_sge rsge[5];
	struct ibv_wc wc[5];
	struct info peer;
	struct ibv_qp *qp = NULL;
	uint8_t stack[48];
	int i;

	if (!is_client) {
		/* receives first, then the QP's RTS barrier orders them */
		qp = qp_pair(7, &peer);
		for (i = 0; i < 5; i++) {
			rsge[i] = (struct ibv_sge){ .addr = (uintptr_t)buf +
				i * RECV_LEN, .length = RECV_LEN,
				.lkey = mr->lkey };
			rwr[i] = (struct ibv_recv_wr){ .wr_id = 100 + i,
				.sg_list = &rsge[i], .num_sge = 1,
				.next = i < 4 ? &rwr[i + 1] : NULL };
		}
		CHECK(ibv_post_recv(qp, rwr, &bad_r) == 0, "post_recv list");
		barrier();	/* receives posted */
		wait_wc(wc, 4);
		for (i = 0; i < 4; i++)
			CHECK(wc[i].status == IBV_WC_SUCCESS &&
			      wc[i].opcode == IBV_WC_RECV &&
			      wc[i].wr_id == (uint64_t)(100 + i) &&
			      wc[i].qp_num == qp->qp_num,
			      "recv %d: %s op %d id %lu", i,
			      ibv_wc_status_str(wc[i].status), wc[i].opcode,
			      (unsigned long)wc[i].wr_id);
		CHECK(wc[0].byte_len == 100 && same(buf, 100, 1) &&
		      !(wc[0].wc_flags & IBV_WC_WITH_IMM), "SEND 100 bytes");
		CHECK(wc[1].byte_len == 50 && same(buf + RECV_LEN, 50, 2) &&
		      (wc[1].wc_flags & IBV_WC_WITH_IMM) &&
		      wc[1].imm_data == htonl(0x12345678), "SEND with imm");
		CHECK(wc[2].byte_len == 48 && same(buf + 2 * RECV_LEN, 48, 3),
		      "inline SEND");
		CHECK(wc[3].byte_len == 120 &&
		      same(buf + 3 * RECV_LEN, 60, 4) &&
		      same(buf + 3 * RECV_LEN + 60, 60, 5), "gathered SEND");
		barrier();
	} else {
		struct ibv_sge g[2];
		struct ibv_send_wr w[3], *bad;

		qp = qp_pair(7, &peer);
		barrier();	/* the server's receives are posted */
		fill(buf, 100, 1);
		CHECK(post_send(qp, 1, IBV_WR_SEND, buf, 100, mr->lkey, 0, 0,
				0) == 0, "post SEND");
		fill(buf + 1024, 50, 2);
		{
			struct ibv_sge s = { (uintptr_t)buf + 1024, 50,
					     mr->lkey };
			struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &s,
				.num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htonl(0x12345678) };

			CHECK(ibv_post_send(qp, &wr, &bad) == 0,
			      "post SEND_WITH_IMM");
		}
		/* inline: no key, and the buffer is ours again at once */
		fill(stack, 48, 3);
		CHECK(post_send(qp, 3, IBV_WR_SEND, stack, 48, 0,
				IBV_SEND_INLINE, 0, 0) == 0, "post inline");
		memset(stack, 0xee, sizeof(stack));
		/* a list: a gather of two, a bad opcode, one more */
		fill(buf + 2048, 60, 4);
		fill(buf + 4096, 60, 5);
		g[0] = (struct ibv_sge){ (uintptr_t)buf + 2048, 60, mr->lkey };
		g[1] = (struct ibv_sge){ (uintptr_t)buf + 4096, 60, mr->lkey };
		memset(w, 0, sizeof(w));
		w[0] = (struct ibv_send_wr){ .wr_id = 4, .sg_list = g,
			.num_sge = 2, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED, .next = &w[1] };
		w[1] = (struct ibv_send_wr){ .wr_id = 5, .sg_list = g,
			.num_sge = 1, .opcode = IBV_WR_BIND_MW,
			.next = &w[2] };
		w[2] = w[0];
		w[2].wr_id = 6;
		w[2].next = NULL;
		CHECK(ibv_post_send(qp, w, &bad) == EINVAL && bad == &w[1],
		      "list with a bad WR: bad_wr not the second");
		wait_wc(wc, 4);
		for (i = 0; i < 4; i++)
			CHECK(wc[i].status == IBV_WC_SUCCESS &&
			      wc[i].opcode == IBV_WC_SEND &&
			      wc[i].wr_id == (uint64_t)(i + 1),
			      "send %d: %s id %lu", i,
			      ibv_wc_status_str(wc[i].status),
			      (unsigned long)wc[i].wr_id);
		barrier();
	}
	CHECK(ibv_destroy_qp(qp) == 0, "destroy_qp");
}

/* WRITE, WRITE with immediate, READ, fetch-and-add, compare-and-swap. */
static void
step_rdma(void)
{
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_sge rsge;
	struct ibv_wc wc[8];
	struct info peer;
	struct ibv_qp *qp;
	uint64_t *word = (uint64_t *)(buf + 40960);

	if (!is_client) {
		fill(buf + 20480, 4096, 9);	/* for the client's READ */
		*word = 100;
		qp = qp_pair(7, &peer);
		rsge = (struct ibv_sge){ (uintptr_t)buf, RECV_LEN, mr->lkey };
		rwr = (struct ibv_recv_wr){ .wr_id = 200, .sg_list = &rsge,
					    .num_sge = 1 };
		CHECK(ibv_post_recv(qp, &rwr, &bad_r) == 0, "post_recv");
		barrier();
		wait_wc(wc, 1);	/* the WRITE with immediate */
		CHECK(wc[0].status == IBV_WC_SUCCESS &&
		      wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
		      wc[0].imm_data == htonl(0xabc) && wc[0].wr_id == 200,
		      "WRITE with imm: %s op %d",
		      ibv_wc_status_str(wc[0].status), wc[0].opcode);
		barrier();	/* the client is done */
		CHECK(same(buf + 8192, 4096, 8), "WRITE 4096 bytes");
		CHECK(same(buf + 16384, 16, 6), "WRITE with imm bytes");
		CHECK(*word == 7, "atomics: word %lu, not 7",
		      (unsigned long)*word);
	} else {
		struct ibv_send_wr wr, *bad;
		struct ibv_sge s;

		qp = qp_pair(7, &peer);
		barrier();
		fill(buf + 8192, 4096, 8);
		CHECK(post_send(qp, 1, IBV_WR_RDMA_WRITE, buf + 8192, 4096,
				mr->lkey, 0, peer.addr + 8192, peer.rkey) == 0,
		      "post WRITE");
		fill(buf + 12288, 16, 6);
		s = (struct ibv_sge){ (uintptr_t)buf + 12288, 16, mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 2;
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(0xabc);
		wr.wr.rdma.remote_addr = peer.addr + 16384;
		wr.wr.rdma.rkey = peer.rkey;
		CHECK(ibv_post_send(qp, &wr, &bad) == 0, "post WRITE_WITH_IMM");
		CHECK(post_send(qp, 3, IBV_WR_RDMA_READ, buf + 32768, 4096,
				mr->lkey, 0, peer.addr + 20480, peer.rkey) == 0,
		      "post READ");
		/* atomics: the word's value before lands in our 8 bytes */
		s = (struct ibv_sge){ (uintptr_t)buf + 49152, 8, mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 4;
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.atomic.remote_addr = peer.addr + 40960;
		wr.wr.atomic.rkey = peer.rkey;
		wr.wr.atomic.compare_add = 5;
		CHECK(ibv_post_send(qp, &wr, &bad) == 0, "post FETCH_AND_ADD");
		wait_wc(wc, 4);
		CHECK(*(uint64_t *)(buf + 49152) == 100, "fetch-add got %lu",
		      (unsigned long)*(uint64_t *)(buf + 49152));
		s.addr = (uintptr_t)buf + 49160;
		wr.wr_id = 5;
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = 105;
		wr.wr.atomic.swap = 7;
		CHECK(ibv_post_send(qp, &wr, &bad) == 0, "post CMP_AND_SWP");
		wait_wc(wc + 4, 1);
		CHECK(*(uint64_t *)(buf + 49160) == 105, "cmp-swap got %lu",
		      (unsigned long)*(uint64_t *)(buf + 49160));
		for (int i = 0; i < 5; i++)
			CHECK(wc[i].status == IBV_WC_SUCCESS &&
			      wc[i].wr_id == (uint64_t)(i + 1),
			      "rdma %d: %s id %lu", i,
			      ibv_wc_status_str(wc[i].status),
			      (unsigned long)wc[i].wr_id);
		CHECK(wc[0].opcode == IBV_WC_RDMA_WRITE &&
		      wc[2].opcode == IBV_WC_RDMA_READ &&
		      wc[3].opcode == IBV_WC_FETCH_ADD &&
		      wc[4].opcode == IBV_WC_COMP_SWAP, "rdma opcodes");
		CHECK(wc[2].byte_len == 4096 && same(buf + 32768, 4096, 9),
		      "READ 4096 bytes");
		barrier();
	}
	CHECK(ibv_destroy_qp(qp) == 0, "destroy_qp");
}

/* One failing WR on a QP of its own: the client's completion status, and
 * the QP in ERR after it. */
static void
step_error(const char *what, enum ibv_wc_status want, uint8_t rnr_retry,
	   int server_access)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc;
	struct info peer;
	struct ibv_qp *qp = qp_pair_access(rnr_retry,
		is_client ? ALL_REMOTE : server_access, &peer);
	int ret = 0;

	if (is_client) {
		if (want == IBV_WC_LOC_PROT_ERR)	/* a key not ours */
			ret = post_send(qp, 1, IBV_WR_SEND, buf, 64,
					mr->lkey ^ 0x5a5a00, 0, 0, 0);
		else if (strcmp(what, "bad rkey") == 0)
			ret = post_send(qp, 1, IBV_WR_RDMA_WRITE, buf, 64,
					mr->lkey, 0, peer.addr,
					peer.rkey ^ 0x5a5a00);
		else if (strcmp(what, "write to read-only") == 0)
			ret = post_send(qp, 1, IBV_WR_RDMA_WRITE, buf, 64,
					mr->lkey, 0, peer.ro_addr,
					peer.ro_rkey);
		else if (strcmp(what, "write to a QP without remote write") == 0)
			ret = post_send(qp, 1, IBV_WR_RDMA_WRITE, buf, 64,
					mr->lkey, 0, peer.addr, peer.rkey);
		else if (strcmp(what, "out of bounds") == 0)
			ret = post_send(qp, 1, IBV_WR_RDMA_READ, buf, 64,
					mr->lkey, 0, peer.addr + BUF_LEN - 32,
					peer.rkey);
		else	/* RNR: the server posted no receive */
			ret = post_send(qp, 1, IBV_WR_SEND, buf, 64,
					mr->lkey, 0, 0, 0);
		CHECK(ret == 0, "%s: post %d", what, ret);
		wait_wc(&wc, 1);
		/* under injected loss the responder's NAK of a remote error
		 * may be lost: the responder, in ERR since, answers the
		 * request's retries no more, and the requester's retries run
		 * out (as on any RC link) */
		CHECK(wc.status == want ||
		      (lossy && want == IBV_WC_REM_ACCESS_ERR &&
		       wc.status == IBV_WC_RETRY_EXC_ERR),
		      "%s: %s, not %s", what, ibv_wc_status_str(wc.status),
		      ibv_wc_status_str(want));
		CHECK(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi) == 0 &&
		      qa.qp_state == IBV_QPS_ERR, "%s: QP not in ERR", what);
		/* posted in ERR: flushed */
		CHECK(post_send(qp, 2, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0,
				0) == 0, "post in ERR");
		wait_wc(&wc, 1);
		CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 2,
		      "%s: post in ERR: %s", what,
		      ibv_wc_status_str(wc.status));
	}
	barrier();
	/* the server's QP may have flushed nothing: drain what it has */
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	CHECK(ibv_destroy_qp(qp) == 0, "destroy_qp");
}

/* Another overrun of small, raised by the poll that drains it: async_fd
 * turns readable with no ibv_get_async_event called (a program that
 * watches async_fd with poll(2) and polls its CQs sees it); async_fd is
 * non-blocking. */
static void
overrun_by_poll(struct ibv_qp *qp, struct ibv_cq *small,
		const struct info *peer)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev = { 0 };
	struct ibv_wc wc[32];
	int ready = 0;

	for (int i = 0; i < 16; i++)
		CHECK(post_send(qp, 200 + (uint64_t)i, IBV_WR_RDMA_WRITE, buf,
				64, mr->lkey, 0, peer->addr, peer->rkey) == 0,
		      "overrun by poll: post %d", i);
	for (int i = 0; i < 10000 && !ready; i++) {
		usleep(1000);
		while (ibv_poll_cq(small, 32, wc) > 0)
			;
		ready = poll(&pfd, 1, 0) == 1;
	}
	CHECK(ready, "overrun by poll: async_fd not readable after the "
	      "polls that drained the CQ");
	if (ready) {
		CHECK(ibv_get_async_event(ctx, &ev) == 0,
		      "overrun by poll: async_fd readable, no event: %s",
		      strerror(errno));
		CHECK(ev.event_type == IBV_EVENT_CQ_ERR &&
		      ev.element.cq == small, "overrun by poll: %s",
		      ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	usleep(lossy ? 500000 : 50000);	/* the rest of the WRITEs */
	while (ibv_poll_cq(small, 32, wc) > 0)
		;
	while (ibv_get_async_event(ctx, &ev) == 0)
		ibv_ack_async_event(&ev);
}

/* A CQ overrun: a send CQ of 4 entries, 16 signalled WRITEs not polled
 * while they complete. The completions that do not fit are lost, and the
 * context raises IBV_EVENT_CQ_ERR for that CQ (taken here with async_fd
 * made non-blocking), acknowledged before the CQ is destroyed. */
static void
step_overrun(void)
{
	struct ibv_cq *big = cq, *small = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_async_event ev = { 0 };
	struct timespec t0, t;
	struct ibv_wc wc[32];
	struct info peer;
	struct ibv_qp *qp;
	int got = 0, k, fl, ret = -1;

	FATAL(small != NULL, "create_cq 4: %s", strerror(errno));
	cq = small;
	qp = qp_pair(7, &peer);
	cq = big;
	if (is_client) {
		for (int i = 0; i < 16; i++)
			CHECK(post_send(qp, 100 + (uint64_t)i,
					IBV_WR_RDMA_WRITE, buf, 64, mr->lkey, 0,
					peer.addr, peer.rkey) == 0,
			      "overrun: post %d", i);
		fl = fcntl(ctx->async_fd, F_GETFL);
		FATAL(fl >= 0 && fcntl(ctx->async_fd, F_SETFL,
				       fl | O_NONBLOCK) == 0, "async_fd");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			ret = ibv_get_async_event(ctx, &ev);
			CHECK(ret == 0 || errno == EAGAIN,
			      "get_async_event: %s", strerror(errno));
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (ret != 0 && t.tv_sec - t0.tv_sec < 10 &&
			 usleep(1000) == 0);
		CHECK(ret == 0 && ev.event_type == IBV_EVENT_CQ_ERR &&
		      ev.element.cq == small, "overrun: no CQ error event "
		      "(%d, %s)", ret, ibv_event_type_str(ev.event_type));
		if (ret == 0)
			ibv_ack_async_event(&ev);
		/* after the WRITEs' time, what the CQ kept; a loss after the
		 * acknowledgement is another CQ error */
		usleep(lossy ? 500000 : 50000);
		while ((k = ibv_poll_cq(small, 32 - got, wc + got)) > 0)
			got += k;
		while (ibv_get_async_event(ctx, &ev) == 0) {
			CHECK(ev.event_type == IBV_EVENT_CQ_ERR &&
			      ev.element.cq == small, "overrun: then %s",
			      ibv_event_type_str(ev.event_type));
			ibv_ack_async_event(&ev);
		}
		CHECK(errno == EAGAIN, "get_async_event: %s",
		      strerror(errno));
		overrun_by_poll(qp, small, &peer);
		fcntl(ctx->async_fd, F_SETFL, fl);
		CHECK(got >= 1 && got < 16, "overrun: %d completions kept",
		      got);
		for (int i = 0; i < got; i++)
			CHECK(wc[i].status == IBV_WC_SUCCESS,
			      "overrun: %s", ibv_wc_status_str(wc[i].status));
	}
	barrier();
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(small) == 0,
	      "overrun: destroy");
}

int
main(int argc, char **argv)
{
	const char *port = "18600", *host = NULL;
	int c;

	while ((c = getopt(argc, argv, "p:")) != -1)
		if (c == 'p')
			port = optarg;
	if (optind < argc)
		host = argv[optind];
	is_client = host != NULL;
	lossy = getenv("DPDAT_FAULT") != NULL;
	srand((unsigned int)getpid());
	open_dev();
	tcp_connect(host, port);
	step_sends();
	step_rdma();
	step_error("bad lkey", IBV_WC_LOC_PROT_ERR, 7, ALL_REMOTE);
	step_error("bad rkey", IBV_WC_REM_ACCESS_ERR, 7, ALL_REMOTE);
	step_error("write to read-only", IBV_WC_REM_ACCESS_ERR, 7, ALL_REMOTE);
	step_error("out of bounds", IBV_WC_REM_ACCESS_ERR, 7, ALL_REMOTE);
	/* an MR that allows it, a QP that does not */
	step_error("write to a QP without remote write",
		   IBV_WC_REM_ACCESS_ERR, 7, IBV_ACCESS_REMOTE_READ);
	step_error("RNR", IBV_WC_RNR_RETRY_EXC_ERR, 0, ALL_REMOTE);
	step_overrun();
	barrier();
	CHECK(ibv_dereg_mr(mr) == 0 && ibv_dereg_mr(ro_mr) == 0, "dereg_mr");
	CHECK(ibv_destroy_cq(cq) == 0 && ibv_dealloc_pd(pd) == 0 &&
	      ibv_close_device(ctx) == 0, "teardown");
	free(buf);
	free(ro);
	close(sock);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures != 0;
}
