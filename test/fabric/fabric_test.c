/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The dpdat libfabric provider through libfabric's public API only, where
 * fi_pingpong does not go: connection data in a connect, a reject and an
 * accept; RMA write, write with remote CQ data and read, every byte
 * checked; a write with a key not granted (the completion error, then the
 * connection's end on both sides); fi_shutdown (FI_SHUTDOWN on both
 * sides, the receives still posted flushed); the calls the provider does
 * not offer (-FI_ENOSYS) and bad arguments (-FI_EINVAL).
 *
 *   fabric_test server|client <memif socket, or a rendezvous path>
 * run by test/integration/run2.sh (memif: the socket names the pair) or
 * run2-netns.sh (DPDAT_TEST_DEV names the device, each side takes its
 * interface's address). The server listens on port SERVICE of 198.18.0.1
 * and takes five connection requests:
 *   1 rejected, with REJECT_DATA;            the client checks the error
 *   2 an endpoint opened for it, closed unaccepted, then fi_reject of its
 *     handle (as ofi_rxm does when its accept fails): rejected, no data
 *   3 accepted, with ACCEPT_DATA: RMA;       then the bad key ends it
 *   4 accepted: the client shuts it down; the server closes its endpoint
 *     before it reads the FI_SHUTDOWN (which then never comes)
 *   5 the server closes its passive endpoint with the request queued,
 *     unread: rejected (IB CM reason 28)
 * 2, 4 and 5 were a double free, a use-after-free and a requester left
 * waiting for good, before the fixes (the sanitizer run sees the first
 * two).
 * Messages on a connection (SENDs, 64 bytes): the client's HELLO, the
 * server's answer with its buffer's address and key; CHECK len seed, the
 * server's OK or BAD after comparing its buffer; the server reports the
 * remote CQ data of a write with it as DATA <value>.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "fabric_util.h"

#define SERVICE		"7471"
#define BUF_SIZE	(1u << 20)
#define MSG_SIZE	64
#define N_RECV		16
#define CONNECT_DATA	55	/* the most a connect carries */
#define ACCEPT_DATA	195
#define REJECT_DATA	147
#define IMM_VALUE	0xdeadbeefu

#define STEP(what) printf("%s: %s (failures so far: %d)\n", role, what, \
			  failures)

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_eq *eq;
static int eq_fd = -1;		/* the server's EQ is FI_WAIT_FD */
static unsigned int eq_fd_wakeups;
static struct fid_mr *mr;
static uint8_t *buf;		/* [0, BUF_SIZE/2): RMA; the rest: messages */
static uint8_t *msgs;

/* one connection's objects */
struct conn {
	struct fid_ep *ep;
	struct fid_cq *cq;
};

static void
fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

static bool
same(const uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(i * 31 + seed))
			return false;
	return true;
}

/* An EQ event within 10 s: its number, the entry in *e (len returned in
 * *n), or -FI_EAVAIL with the error in *err. */
static int
eq_wait(struct fi_eq_cm_entry *e, size_t size, ssize_t *n,
	struct fi_eq_err_entry *err, uint8_t *err_data)
{
	uint32_t event;
	ssize_t r;

	if (eq_fd >= 0) {	/* the server: the fd, as an epoll loop would */
		struct fid *f = &eq->fid;
		struct pollfd p = { .fd = eq_fd, .events = POLLIN };

		while ((r = fi_trywait(fabric, &f, 1)) == FI_SUCCESS) {
			int k;

			do	/* a signal is no timeout */
				k = poll(&p, 1, 10000);
			while (k < 0 && errno == EINTR);
			if (k != 1) {
				fail("EQ fd not readable in 10 s");
				exit(1);
			}
			eq_fd_wakeups++;
		}
		CHECK(r == -FI_EAGAIN, "fi_trywait: %s",
		      fi_strerror((int)-r));
		r = fi_eq_read(eq, &event, e, size, 0);
	} else {
		r = fi_eq_sread(eq, &event, e, size, 10000, 0);
	}

	if (r == -FI_EAVAIL) {
		memset(err, 0, sizeof(*err));
		err->err_data = err_data;
		err->err_data_size = 256;
		if (fi_eq_readerr(eq, err, 0) != sizeof(*err))
			fail("fi_eq_readerr");
		return -FI_EAVAIL;
	}
	if (r < 0) {
		fprintf(stderr, "%s: fi_eq_sread: %s\n", role,
			fi_strerror((int)-r));
		exit(1);
	}
	*n = r;
	return (int)event;
}

static void
conn_open(struct conn *c, struct fi_info *fi)
{
	struct fi_cq_attr ca = { .size = 256, .format = FI_CQ_FORMAT_DATA,
				 .wait_obj = FI_WAIT_NONE };

	MUST(fi_cq_open(domain, &ca, &c->cq, NULL));
	MUST(fi_endpoint(domain, fi, &c->ep, c));
	MUST(fi_ep_bind(c->ep, &eq->fid, 0));
	MUST(fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV));
	MUST(fi_enable(c->ep));
	for (int i = 0; i < N_RECV; i++)
		MUST(fi_recv(c->ep, msgs + i * MSG_SIZE, MSG_SIZE,
			     fi_mr_desc(mr), 0, msgs + i * MSG_SIZE));
}

static void
conn_close(struct conn *c)
{
	MUST(fi_close(&c->ep->fid));
	MUST(fi_close(&c->cq->fid));
}

/* The next completion within 10 s: 0 with *e, or the error's err. */
static int
cq_wait(struct conn *c, struct fi_cq_data_entry *e,
	struct fi_cq_err_entry *err)
{
	double end = now_s() + 10;
	ssize_t r;

	while (now_s() < end) {
		r = fi_cq_read(c->cq, e, 1);
		if (r == 1)
			return 0;
		if (r == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			if (fi_cq_readerr(c->cq, err, 0) != 1)
				fail("fi_cq_readerr");
			return err->err;
		}
		if (r != -FI_EAGAIN) {
			fail("fi_cq_read: %s", fi_strerror((int)-r));
			return FI_EIO;
		}
	}
	fail("no completion in 10 s");
	return FI_ETIMEDOUT;
}

static void
send_msg(struct conn *c, const char *fmt, ...)
{
	static unsigned int slot;
	uint8_t *m = msgs + (N_RECV + (slot++ % 8)) * MSG_SIZE;
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf((char *)m, MSG_SIZE, fmt, ap);
	va_end(ap);
	MUST(fi_send(c->ep, m, MSG_SIZE, fi_mr_desc(mr), 0, m));
	CHECK(cq_wait(c, &e, &err) == 0 && e.op_context == m &&
	      (e.flags & (FI_SEND | FI_MSG)) == (FI_SEND | FI_MSG),
	      "send completion");
}

/* The next message (its receive posted again); with remote CQ data,
 * *data. NULL when the connection ended (its receives flushed). */
static const char *
recv_msg(struct conn *c, uint64_t *data, uint64_t *flags)
{
	static char text[MSG_SIZE + 1];
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int r = cq_wait(c, &e, &err);

	if (r != 0)
		return NULL;
	if (flags != NULL)
		*flags = e.flags;
	if (e.flags & FI_REMOTE_CQ_DATA) {
		*data = e.data;
		/* a write's data consumed a receive: post one again */
		MUST(fi_recv(c->ep, e.op_context, MSG_SIZE, fi_mr_desc(mr), 0,
			     e.op_context));
		return "";
	}
	memcpy(text, e.op_context, MSG_SIZE);
	text[MSG_SIZE] = '\0';
	MUST(fi_recv(c->ep, e.op_context, MSG_SIZE, fi_mr_desc(mr), 0,
		     e.op_context));
	return text;
}

static void
open_common(const char *link, const char *r)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	const char *dev = getenv("DPDAT_TEST_DEV");
	char devargs[512];

	role = r;
	if (dev == NULL) {	/* run2.sh: the memif pair of link */
		snprintf(devargs, sizeof(devargs),
			 "net_memif0,role=%s,socket=%s", role, link);
		setenv("FI_DPDAT_DEVICE", devargs, 1);
		setenv("FI_DPDAT_IPV4", strcmp(role, "server") == 0 ?
		       "198.18.0.1" : "198.18.0.2", 1);
	} else {
		setenv("FI_DPDAT_DEVICE", dev, 1);
		setenv("FI_DPDAT_IPV4", "auto", 1);
	}
	hints->caps = FI_MSG | FI_RMA;
	hints->mode = FI_RX_CQ_DATA | FI_CONTEXT;
	hints->ep_attr->type = FI_EP_MSG;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("dpdat");
	MUST(fi_getinfo(FI_VERSION(1, 17), strcmp(role, "server") == 0 ?
			NULL : "198.18.0.1", SERVICE,
			strcmp(role, "server") == 0 ? FI_SOURCE : 0, hints,
			&info));
	fi_freeinfo(hints);
	MUST(fi_fabric(info->fabric_attr, &fabric, NULL));
	if (strcmp(role, "server") == 0)
		ea.wait_obj = FI_WAIT_FD;
	MUST(fi_eq_open(fabric, &ea, &eq, NULL));
	if (ea.wait_obj == FI_WAIT_FD) {
		MUST(fi_control(&eq->fid, FI_GETWAIT, &eq_fd));
		CHECK(eq_fd >= 0, "FI_GETWAIT on the EQ: fd %d", eq_fd);
	} else {
		CHECK(fi_control(&eq->fid, FI_GETWAIT, &eq_fd) ==
		      -FI_ENODATA && eq_fd == -1, "FI_GETWAIT without an fd");
	}
	MUST(fi_domain(fabric, info, &domain, NULL));
	buf = aligned_alloc(4096, BUF_SIZE);
	if (buf == NULL)
		exit(1);
	memset(buf, 0, BUF_SIZE);
	msgs = buf + BUF_SIZE / 2;
	MUST(fi_mr_reg(domain, buf, BUF_SIZE, FI_SEND | FI_RECV | FI_READ |
		       FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
		       &mr, NULL));
}

static void
close_common(void)
{
	MUST(fi_close(&mr->fid));
	CHECK(fi_close(&fabric->fid) == -FI_EBUSY,
	      "a fabric closed before its domain and EQ");
	MUST(fi_close(&eq->fid));
	MUST(fi_close(&domain->fid));
	MUST(fi_close(&fabric->fid));
	fi_freeinfo(info);
	free(buf);
}

/* ---- server ---- */

/* A connection's messages until it ends. */
static void
serve(struct conn *c)
{
	const char *m;
	uint64_t data = 0, flags = 0;
	unsigned int len, seed;

	while ((m = recv_msg(c, &data, &flags)) != NULL) {
		if (strcmp(m, "HELLO") == 0) {
			send_msg(c, "BUF %" PRIu64 " %" PRIu64,
				 (uint64_t)(uintptr_t)buf, fi_mr_key(mr));
		} else if (sscanf(m, "CHECK %u %u", &len, &seed) == 2) {
			send_msg(c, len <= BUF_SIZE / 2 &&
				 same(buf, len, seed) ? "OK" : "BAD");
		} else if (m[0] == '\0') {
			CHECK((flags & (FI_RMA | FI_REMOTE_WRITE |
					FI_REMOTE_CQ_DATA)) ==
			      (FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA),
			      "remote write flags 0x%" PRIx64, flags);
			send_msg(c, "DATA %" PRIu64, data);
		}
	}
}

static int
server(void)
{
	struct fi_eq_cm_entry *e = calloc(1, sizeof(*e) + 256);
	struct fi_eq_err_entry err;
	uint8_t err_data[256], rej[REJECT_DATA], acc[ACCEPT_DATA];
	struct fid_pep *pep;
	struct conn c;
	uint8_t held[sizeof(struct fi_eq_cm_entry) + 256];
	ssize_t n, held_n = 0;
	int ev;

	MUST(fi_passive_ep(fabric, info, &pep, NULL));
	MUST(fi_pep_bind(pep, &eq->fid, 0));
	MUST(fi_listen(pep));
	fill(rej, sizeof(rej), 7);
	fill(acc, sizeof(acc), 9);
	for (int i = 0; i < 4; i++) {
		if (held_n > 0) {	/* came before the last one's end */
			memcpy(e, held, (size_t)held_n);
			n = held_n;
			held_n = 0;
			ev = FI_CONNREQ;
		} else {
			ev = eq_wait(e, sizeof(*e) + 256, &n, &err, err_data);
		}
		if (ev != FI_CONNREQ) {
			fail("connection %d: event %d, not a request", i, ev);
			return 1;
		}
		CHECK(n == (ssize_t)(sizeof(*e) + CONNECT_DATA) &&
		      same(e->data, CONNECT_DATA, (unsigned int)i),
		      "connection %d: the connect data (%zd bytes)", i, n);
		if (i == 0) {
			MUST(fi_reject(pep, e->info->handle, rej, sizeof(rej)));
			fi_freeinfo(e->info);
			continue;
		}
		conn_open(&c, e->info);
		if (i == 1) {
			/* closed unaccepted, then rejected: one answer */
			conn_close(&c);
			CHECK(fi_reject(pep, e->info->handle, rej,
					sizeof(rej)) == 0,
			      "fi_reject after its endpoint closed");
			fi_freeinfo(e->info);
			continue;
		}
		fi_freeinfo(e->info);
		MUST(fi_accept(c.ep, acc, sizeof(acc)));
		ev = eq_wait(e, sizeof(*e) + 256, &n, &err, err_data);
		CHECK(ev == FI_CONNECTED && e->fid == &c.ep->fid,
		      "connection %d: event %d, not connected", i, ev);
		serve(&c);
		if (i == 3) {
			/* closed before its end's event is read */
			conn_close(&c);
			break;
		}
		/* the end: the bad key's. The client's next request may
		 * come first (events of two connections have no order) */
		ev = eq_wait(e, sizeof(*e) + 256, &n, &err, err_data);
		if (ev == FI_CONNREQ && held_n == 0) {
			memcpy(held, e, (size_t)n);
			held_n = n;
			ev = eq_wait(e, sizeof(*e) + 256, &n, &err, err_data);
		}
		CHECK(ev == FI_SHUTDOWN && e->fid == &c.ep->fid,
		      "connection %d: event %d at its end, not FI_SHUTDOWN",
		      i, ev);
		conn_close(&c);
	}
	/* the client's fifth request arrives meanwhile, unread */
	usleep(1500000);
	MUST(fi_close(&pep->fid));
	{
		uint32_t event;
		ssize_t r = fi_eq_read(eq, &event, e, sizeof(*e) + 256, 0);

		CHECK(r == -FI_EAGAIN, "events left for closed endpoints: "
		      "%zd (event %u)", r, event);
	}
	/* the server slept on the EQ's fd before each request at least */
	printf("%s: EQ fd: woken %u times\n", role, eq_fd_wakeups);
	CHECK(eq_fd_wakeups > 0, "the EQ fd never woke the server");
	free(e);
	return 0;
}

/* ---- client ---- */

/* fi_getinfo's matching: an MR mode without provider keys is enough for
 * messages alone (it was refused once), not for RMA; what the provider
 * cannot give is refused. */
static void
hint_checks(void)
{
	struct fi_info *h = fi_allocinfo(), *fi = NULL;
	int r;

	h->fabric_attr->prov_name = strdup("dpdat");
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG;
	h->domain_attr->mr_mode = FI_MR_LOCAL;
	r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi);
	CHECK(r == 0 && fi->domain_attr->mr_mode == FI_MR_LOCAL,
	      "messages with FI_MR_LOCAL only: %s", fi_strerror(-r));
	fi_freeinfo(fi);
	fi = NULL;
	h->caps = FI_MSG | FI_RMA;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi) ==
	      -FI_ENODATA, "RMA without provider keys");
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->cq_data_size = 8;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi) ==
	      -FI_ENODATA, "8 bytes of CQ data");
	h->domain_attr->cq_data_size = 0;
	h->tx_attr->msg_order = FI_ORDER_WAR;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi) ==
	      -FI_ENODATA, "write-after-read order");
	fi_freeinfo(h);
	STEP("fi_getinfo: MR modes by caps; what cannot be given, refused");
}

/* A connection request with CONNECT_DATA bytes of seed i, until the
 * server listens: the event it ends in (its entry in *e). */
static int
connect_to(struct conn *c, int i, struct fi_eq_cm_entry *e, ssize_t *n,
	   struct fi_eq_err_entry *err, uint8_t *err_data)
{
	uint8_t data[CONNECT_DATA + 1];
	double end = now_s() + 20;
	int ev;

	fill(data, sizeof(data), (unsigned int)i);
	for (;;) {
		conn_open(c, info);
		CHECK(fi_connect(c->ep, info->dest_addr, data,
				 CONNECT_DATA + 1) == -FI_EINVAL,
		      "connect data longer than the CM carries");
		MUST(fi_connect(c->ep, info->dest_addr, data, CONNECT_DATA));
		ev = eq_wait(e, sizeof(*e) + 256, n, err, err_data);
		/* nobody listens yet (the IB CM's reason 8): again */
		if (ev != -FI_EAVAIL || err->prov_errno != 8 ||
		    now_s() > end)
			return ev;
		conn_close(c);
		usleep(200000);
	}
}

static int
client(void)
{
	struct fi_eq_cm_entry *e = calloc(1, sizeof(*e) + 256);
	struct fi_eq_err_entry err;
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry cerr;
	uint8_t err_data[256];
	uint64_t raddr = 0, rkey = 0, data = 0;
	struct conn c;
	const char *m;
	ssize_t n;
	int ev;

	hint_checks();

	/* 1: rejected, with the server's data */
	ev = connect_to(&c, 0, e, &n, &err, err_data);
	CHECK(ev == -FI_EAVAIL && err.err == FI_ECONNREFUSED &&
	      err.fid == &c.ep->fid && err.err_data_size == REJECT_DATA &&
	      same(err_data, REJECT_DATA, 7),
	      "reject: event %d err %d, %zu bytes of data", ev, err.err,
	      err.err_data_size);
	conn_close(&c);
	STEP("rejected, with the reject data");

	/* 2: its endpoint closed unaccepted, then fi_reject: rejected once */
	ev = connect_to(&c, 1, e, &n, &err, err_data);
	CHECK(ev == -FI_EAVAIL && err.err == FI_ECONNREFUSED &&
	      err.prov_errno == 28, "closed unaccepted: event %d err %d "
	      "reason %d", ev, err.err, err.prov_errno);
	conn_close(&c);
	STEP("an endpoint closed unaccepted: rejected");

	/* 3: accepted, with the server's data; RMA */
	ev = connect_to(&c, 2, e, &n, &err, err_data);
	CHECK(ev == FI_CONNECTED && e->fid == &c.ep->fid &&
	      n == (ssize_t)(sizeof(*e) + ACCEPT_DATA) &&
	      same(e->data, ACCEPT_DATA, 9),
	      "accept: event %d, %zd bytes", ev, n);
	if (ev != FI_CONNECTED)
		return 1;
	STEP("accepted, with the connect and accept data");
	send_msg(&c, "HELLO");
	m = recv_msg(&c, &data, NULL);
	CHECK(m != NULL && sscanf(m, "BUF %" SCNu64 " %" SCNu64, &raddr,
				  &rkey) == 2, "the server's buffer");
	/* WRITE 64 KiB at an offset, the server compares */
	fill(buf, 65536, 3);
	MUST(fi_write(c.ep, buf, 65536, fi_mr_desc(mr), 0, raddr, rkey, buf));
	CHECK(cq_wait(&c, &ce, &cerr) == 0 && ce.op_context == buf &&
	      (ce.flags & (FI_RMA | FI_WRITE)) == (FI_RMA | FI_WRITE),
	      "write completion");
	send_msg(&c, "CHECK 65536 3");
	m = recv_msg(&c, &data, NULL);
	CHECK(m != NULL && strcmp(m, "OK") == 0, "written bytes: %s", m);
	/* WRITE with remote CQ data: the server's receive says it */
	fill(buf, 4096, 5);
	MUST(fi_writedata(c.ep, buf, 4096, fi_mr_desc(mr), IMM_VALUE, 0,
			  raddr, rkey, buf));
	CHECK(cq_wait(&c, &ce, &cerr) == 0, "writedata completion");
	m = recv_msg(&c, &data, NULL);
	CHECK(m != NULL && strncmp(m, "DATA ", 5) == 0 &&
	      strtoull(m + 5, NULL, 10) == IMM_VALUE,
	      "the server's remote CQ data: %s", m);
	send_msg(&c, "CHECK 4096 5");
	m = recv_msg(&c, &data, NULL);
	CHECK(m != NULL && strcmp(m, "OK") == 0, "written bytes: %s", m);
	/* READ back 256 KiB the server's buffer holds after a write */
	fill(buf, 262144, 11);
	MUST(fi_write(c.ep, buf, 262144, fi_mr_desc(mr), 0, raddr, rkey,
		      buf));
	CHECK(cq_wait(&c, &ce, &cerr) == 0, "write completion");
	memset(buf, 0, 262144);
	MUST(fi_read(c.ep, buf, 262144, fi_mr_desc(mr), 0, raddr, rkey,
		     buf + 1));
	CHECK(cq_wait(&c, &ce, &cerr) == 0 && ce.op_context == buf + 1 &&
	      (ce.flags & (FI_RMA | FI_READ)) == (FI_RMA | FI_READ) &&
	      same(buf, 262144, 11), "read back");
	STEP("write, write with remote CQ data, read: bytes and data right");
	/* what the provider refuses */
	CHECK(fi_write(c.ep, buf, 64, NULL, 0, raddr, rkey, buf) ==
	      -FI_EINVAL, "a write without a descriptor (FI_MR_LOCAL)");
	CHECK(fi_inject(c.ep, buf, 8, 0) == -FI_ENOSYS, "fi_inject");
	CHECK(fi_tsend(c.ep, buf, 8, fi_mr_desc(mr), 0, 1, buf) ==
	      -FI_ENOSYS, "fi_tsend");
	{
		struct fi_av_attr aa = { .type = FI_AV_MAP };
		struct fid_av *av;

		CHECK(fi_av_open(domain, &aa, &av, NULL) == -FI_ENOSYS,
		      "fi_av_open");
	}
	STEP("refused: no descriptor, inject, tagged, AV");
	/* a key not granted: the write fails, the connection ends */
	MUST(fi_write(c.ep, buf, 4096, fi_mr_desc(mr), 0, raddr,
		      rkey ^ 0x100, buf + 2));
	CHECK(cq_wait(&c, &ce, &cerr) == FI_EACCES &&
	      cerr.op_context == buf + 2 && cerr.prov_errno == 10,
	      "a bad key: err %d prov_errno %d", cerr.err, cerr.prov_errno);
	ev = eq_wait(e, sizeof(*e) + 256, &n, &err, err_data);
	CHECK(ev == FI_SHUTDOWN && e->fid == &c.ep->fid,
	      "after the bad key: event %d, not FI_SHUTDOWN", ev);
	conn_close(&c);
	STEP("a key not granted: FI_EACCES, then FI_SHUTDOWN");

	/* 4: fi_shutdown; the receives still posted are flushed */
	ev = connect_to(&c, 3, e, &n, &err, err_data);
	CHECK(ev == FI_CONNECTED, "third connection: event %d", ev);
	MUST(fi_shutdown(c.ep, 0));
	ev = eq_wait(e, sizeof(*e) + 256, &n, &err, err_data);
	CHECK(ev == FI_SHUTDOWN && e->fid == &c.ep->fid,
	      "after fi_shutdown: event %d", ev);
	CHECK(cq_wait(&c, &ce, &cerr) == FI_ECANCELED &&
	      (cerr.flags & FI_RECV), "a flushed receive: err %d", cerr.err);
	CHECK(fi_shutdown(c.ep, 0) == -FI_ENOTCONN, "fi_shutdown twice");
	conn_close(&c);
	STEP("fi_shutdown: FI_SHUTDOWN, receives flushed");

	/* 5: the server closes its passive endpoint, our request unread */
	ev = connect_to(&c, 4, e, &n, &err, err_data);
	CHECK(ev == -FI_EAVAIL && err.err == FI_ECONNREFUSED &&
	      err.prov_errno == 28, "a request left at a passive endpoint's "
	      "close: event %d err %d reason %d", ev, err.err,
	      err.prov_errno);
	conn_close(&c);
	STEP("a request left at a passive endpoint's close: rejected");
	free(e);
	return 0;
}

int
main(int argc, char **argv)
{
	int ret;

	if (argc < 3 || (strcmp(argv[1], "server") != 0 &&
			 strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: %s server|client <socket|path>\n",
			argv[0]);
		return 2;
	}
	open_common(argv[2], argv[1]);
	ret = strcmp(role, "server") == 0 ? server() : client();
	close_common();
	printf("%s: %s (%d failures)\n", role,
	       ret == 0 && failures == 0 ? "passed" : "FAILED", failures);
	return ret == 0 && failures == 0 ? 0 : 1;
}
