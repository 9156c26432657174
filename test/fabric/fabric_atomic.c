/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Atomics on reliable datagram endpoints: ofi_rxm layered on dpdat
 * ("dpdat;ofi_rxm", FI_EP_RDM, FI_ATOMIC). dpdat's provider offers no
 * atomics itself (FI_MSG and FI_RMA on FI_EP_MSG); ofi_rxm carries them in
 * its own messages over dpdat's connections and executes them at the
 * target while the target's application reads its CQ.
 *
 *   fabric_atomic server|client <memif socket>
 * run by test/integration/run2.sh. The client sends HELLO with its
 * address; the server inserts it in its AV and answers with the address
 * and key of two 64-bit words (0 and 42). The client then adds 1 to the
 * first N_ADD times (fi_atomic FI_SUM), fetches and adds 100 once
 * (fi_fetch_atomic: N_ADD comes back), swaps 42 for 7 in the second word
 * (fi_compare_atomic FI_CSWAP: 42 comes back), tries the same swap again
 * (7 comes back, nothing swapped), reads both with FI_ATOMIC_READ, and
 * sends CHECK: the server compares its words with N_ADD + 100 and 7 and
 * answers OK or BAD.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "fabric_util.h"

#define SERVICE		"7479"
#define MSG_SIZE	128
#define N_ADD		200
#define SWAP_FROM	42u
#define SWAP_TO		7u


static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static struct fid_mr *mr;
/* the registered region: the target words, the client's operands and
 * results, a receive and a send buffer */
static struct region {
	uint64_t target[2];
	uint64_t operand, compare, result;
	char rx[MSG_SIZE];
	char tx[MSG_SIZE];
} *reg;

/* The next completion within 60 s (the server waits for CHECK while all
 * the client's atomics run); 0, or the error's err. */
static int
cq_wait(struct fi_cq_msg_entry *e)
{
	double end = now_s() + 60;
	struct fi_cq_err_entry err;
	ssize_t r;

	while (now_s() < end) {
		r = fi_cq_read(cq, e, 1);
		if (r == 1)
			return 0;
		if (r == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(cq, &err, 0) != 1)
				fail("fi_cq_readerr");
			fail("completion error: %s", fi_strerror(err.err));
			return err.err;
		}
		if (r != -FI_EAGAIN) {
			fail("fi_cq_read: %s", fi_strerror((int)-r));
			return FI_EIO;
		}
	}
	fail("no completion in 60 s");
	return FI_ETIMEDOUT;
}

static bool rx_ready;	/* the receive completed, not yet taken */

/* Wait for the completion of context ctx; a receive's that comes first
 * is kept for recv_msg(). */
static void
wait_for(void *ctx)
{
	struct fi_cq_msg_entry e;

	for (;;) {
		if (cq_wait(&e) != 0)
			exit(1);
		if (e.op_context == ctx)
			return;
		if (e.op_context == reg->rx)
			rx_ready = true;
		else
			fail("a completion nobody waits for (%p)",
			     e.op_context);
	}
}

static void
post_recv(void)
{
	MUST(fi_recv(ep, reg->rx, MSG_SIZE, fi_mr_desc(mr), FI_ADDR_UNSPEC,
		     reg->rx));
}

static void
recv_msg(void)
{
	if (!rx_ready)
		wait_for(reg->rx);
	rx_ready = false;
	reg->rx[MSG_SIZE - 1] = '\0';
}

static void
send_msg(fi_addr_t to, size_t len)
{
	ssize_t r;

	while ((r = fi_send(ep, reg->tx, len, fi_mr_desc(mr), to,
			    reg->tx)) == -FI_EAGAIN)
		(void)fi_cq_read(cq, NULL, 0);
	MUST(r);
	wait_for(reg->tx);
}

static void
open_all(const char *sock)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_cq_attr ca = { .size = 64, .format = FI_CQ_FORMAT_MSG,
				 .wait_obj = FI_WAIT_NONE };
	const bool server = strcmp(role, "server") == 0;
	char devargs[512];

	snprintf(devargs, sizeof(devargs), "net_memif0,role=%s,socket=%s",
		 role, sock);
	setenv("FI_DPDAT_DEVICE", devargs, 1);
	setenv("FI_DPDAT_IPV4", server ? "198.18.0.1" : "198.18.0.2", 1);
	hints->caps = FI_MSG | FI_ATOMIC;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("dpdat;ofi_rxm");
	MUST(fi_getinfo(FI_VERSION(1, 17), server ? NULL : "198.18.0.1",
			SERVICE, server ? FI_SOURCE : 0, hints, &info));
	fi_freeinfo(hints);
	printf("%s: %s, %s\n", role, info->fabric_attr->prov_name,
	       fi_tostr(&info->ep_attr->type, FI_TYPE_EP_TYPE));
	MUST(fi_fabric(info->fabric_attr, &fabric, NULL));
	MUST(fi_domain(fabric, info, &domain, NULL));
	MUST(fi_av_open(domain, &aa, &av, NULL));
	MUST(fi_cq_open(domain, &ca, &cq, NULL));
	MUST(fi_endpoint(domain, info, &ep, NULL));
	MUST(fi_ep_bind(ep, &av->fid, 0));
	MUST(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	MUST(fi_enable(ep));
	reg = aligned_alloc(4096, 4096);
	if (reg == NULL)
		exit(1);
	memset(reg, 0, 4096);
	MUST(fi_mr_reg(domain, reg, 4096, FI_SEND | FI_RECV | FI_READ |
		       FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
		       &mr, NULL));
	post_recv();
}

static void
close_all(void)
{
	MUST(fi_close(&ep->fid));
	MUST(fi_close(&mr->fid));
	MUST(fi_close(&cq->fid));
	MUST(fi_close(&av->fid));
	MUST(fi_close(&domain->fid));
	MUST(fi_close(&fabric->fid));
	fi_freeinfo(info);
	free(reg);
}

static int
server(void)
{
	fi_addr_t client;
	size_t alen;
	uint64_t want0 = N_ADD + 100;

	reg->target[0] = 0;
	reg->target[1] = SWAP_FROM;
	/* HELLO <address length> <address bytes> */
	recv_msg();
	if (strncmp(reg->rx, "HELLO", 5) != 0) {
		fail("expected HELLO, got \"%.16s\"", reg->rx);
		return 1;
	}
	memcpy(&alen, reg->rx + 8, sizeof(alen));
	if (alen > MSG_SIZE - 16 ||
	    fi_av_insert(av, reg->rx + 16, 1, &client, 0, NULL) != 1) {
		fail("the client's address (%zu bytes)", alen);
		return 1;
	}
	post_recv();
	snprintf(reg->tx, MSG_SIZE, "BUF %" PRIu64 " %" PRIu64,
		 (uint64_t)(uintptr_t)reg->target, fi_mr_key(mr));
	send_msg(client, MSG_SIZE);
	recv_msg();	/* reading the CQ meanwhile runs the atomics */
	CHECK(strcmp(reg->rx, "CHECK") == 0, "expected CHECK, got \"%.16s\"",
	      reg->rx);
	printf("server: words %" PRIu64 " and %" PRIu64 " (want %" PRIu64
	       " and %u)\n", reg->target[0], reg->target[1], want0, SWAP_TO);
	snprintf(reg->tx, MSG_SIZE, "%s", reg->target[0] == want0 &&
		 reg->target[1] == SWAP_TO ? "OK" : "BAD");
	CHECK(strcmp(reg->tx, "OK") == 0, "the target words");
	send_msg(client, MSG_SIZE);
	return 0;
}

/* One atomic (op on the word at raddr), waited for. */
static void
atomic_op(fi_addr_t srv, uint64_t raddr, uint64_t key, enum fi_op op,
	  bool fetch, bool cmp)
{
	ssize_t r;

	do {
		if (cmp)
			r = fi_compare_atomic(ep, &reg->operand, 1,
				fi_mr_desc(mr), &reg->compare, fi_mr_desc(mr),
				&reg->result, fi_mr_desc(mr), srv, raddr, key,
				FI_UINT64, op, &reg->result);
		else if (fetch)
			r = fi_fetch_atomic(ep, &reg->operand, 1,
				fi_mr_desc(mr), &reg->result, fi_mr_desc(mr),
				srv, raddr, key, FI_UINT64, op, &reg->result);
		else
			r = fi_atomic(ep, &reg->operand, 1, fi_mr_desc(mr),
				srv, raddr, key, FI_UINT64, op, &reg->result);
		if (r == -FI_EAGAIN)
			(void)fi_cq_read(cq, NULL, 0);
	} while (r == -FI_EAGAIN);
	MUST(r);
	wait_for(&reg->result);
}

static int
client(void)
{
	fi_addr_t srv;
	size_t alen = MSG_SIZE - 16, count = 0;
	uint64_t raddr, key;
	double t0;

	if (fi_av_insert(av, info->dest_addr, 1, &srv, 0, NULL) != 1) {
		fail("fi_av_insert of the server");
		return 1;
	}
	CHECK(fi_atomicvalid(ep, FI_UINT64, FI_SUM, &count) == 0 &&
	      count >= 1, "fi_atomicvalid(FI_UINT64, FI_SUM)");
	CHECK(fi_compare_atomicvalid(ep, FI_UINT64, FI_CSWAP, &count) == 0,
	      "fi_compare_atomicvalid(FI_UINT64, FI_CSWAP)");
	memcpy(reg->tx, "HELLO", 6);
	MUST(fi_getname(&ep->fid, reg->tx + 16, &alen));
	memcpy(reg->tx + 8, &alen, sizeof(alen));
	send_msg(srv, MSG_SIZE);
	recv_msg();
	if (sscanf(reg->rx, "BUF %" SCNu64 " %" SCNu64, &raddr, &key) != 2) {
		fail("expected BUF, got \"%.16s\"", reg->rx);
		return 1;
	}
	post_recv();
	t0 = now_s();
	reg->operand = 1;
	for (int i = 0; i < N_ADD; i++)
		atomic_op(srv, raddr, key, FI_SUM, false, false);
	printf("client: %d fetch-less adds in %.1f ms\n", N_ADD,
	       (now_s() - t0) * 1e3);
	reg->operand = 100;
	atomic_op(srv, raddr, key, FI_SUM, true, false);
	CHECK(reg->result == N_ADD, "fetch-and-add returned %" PRIu64
	      ", not %d", reg->result, N_ADD);
	reg->operand = SWAP_TO;
	reg->compare = SWAP_FROM;
	atomic_op(srv, raddr + 8, key, FI_CSWAP, false, true);
	CHECK(reg->result == SWAP_FROM, "compare-and-swap returned %" PRIu64,
	      reg->result);
	atomic_op(srv, raddr + 8, key, FI_CSWAP, false, true);
	CHECK(reg->result == SWAP_TO, "a second compare-and-swap returned %"
	      PRIu64 " (it must not swap)", reg->result);
	atomic_op(srv, raddr, key, FI_ATOMIC_READ, true, false);
	CHECK(reg->result == N_ADD + 100, "atomic read: %" PRIu64,
	      reg->result);
	memcpy(reg->tx, "CHECK", 6);
	send_msg(srv, MSG_SIZE);
	recv_msg();
	CHECK(strcmp(reg->rx, "OK") == 0, "the server says \"%.16s\"",
	      reg->rx);
	return 0;
}

int
main(int argc, char **argv)
{
	int ret;

	if (argc < 3 || (strcmp(argv[1], "server") != 0 &&
			 strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: %s server|client <memif socket>\n",
			argv[0]);
		return 2;
	}
	role = argv[1];
	open_all(argv[2]);
	ret = strcmp(role, "server") == 0 ? server() : client();
	/* the other side's last completions need our ACKs: a moment */
	usleep(200000);
	close_all();
	printf("%s: %s (%d failures)\n", role,
	       ret == 0 && failures == 0 ? "passed" : "FAILED", failures);
	return ret == 0 && failures == 0 ? 0 : 1;
}
