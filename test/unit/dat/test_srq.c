/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The plug-in's shared receive queues through the real DAT registry
 * (libdat2 reads the dat.conf given as argv[1] through DAT_OVERRIDE):
 * srq_create, query, post_recv, resize, set_lw and free with their return
 * codes; ep_create_with_srq, ep_recv_query, ep_set_watermark; and, over a
 * connection between IA "dpdat0" (memif server) and "dpdat1" (its client)
 * in this one process, two EPs receiving from one SRQ: cookies in the
 * order posted, each completion naming the EP that received, a message of
 * several packets, RNR until a receive is posted, the low watermark event
 * and the EP_BROKEN event after a disconnection.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <CUnit/Basic.h>
#include <dat2/udat.h>

#include "dat_main.h"

#define QUAL		4712
#define WAIT_US		(10 * 1000 * 1000)
#define BUF		8192

#define NO_SRQ_ROOM	((DAT_RETURN)(DAT_INSUFFICIENT_RESOURCES | \
				      DAT_RESOURCE_SRQ))

static DAT_IA_HANDLE ia;
static DAT_EVD_HANDLE async_evd;
static DAT_PZ_HANDLE pz1, pz2;
static uint8_t rbuf[8 * BUF] __attribute__((aligned(4096)));
static uint8_t sbuf[8 * BUF] __attribute__((aligned(4096)));

#define evd(...)		dat_test_evd(__VA_ARGS__)
#define next_event_in(...)	dat_test_next_event(__VA_ARGS__)
#define next_event(e, ev)	dat_test_next_event(e, ev, WAIT_US)

static DAT_RETURN
srq_new(DAT_PZ_HANDLE pz, DAT_COUNT n, DAT_COUNT iov, DAT_SRQ_HANDLE *srq)
{
	DAT_SRQ_ATTR a = { .max_recv_dtos = n, .max_recv_iov = iov };

	return dat_srq_create(ia, pz, &a, srq);
}

static DAT_RETURN
srq_post(DAT_SRQ_HANDLE srq, DAT_LMR_CONTEXT lc, unsigned int k,
	 uint64_t cookie)
{
	DAT_LMR_TRIPLET t = { .lmr_context = lc, .segment_length = BUF,
			      .virtual_address = (uintptr_t)(rbuf + k * BUF) };
	DAT_DTO_COOKIE c = { .as_64 = cookie };

	return dat_srq_post_recv(srq, 1, &t, c);
}

static DAT_RETURN
lmr(DAT_IA_HANDLE h, DAT_PZ_HANDLE pz, void *addr, DAT_VLEN len,
    DAT_LMR_HANDLE *l, DAT_LMR_CONTEXT *lc)
{
	DAT_REGION_DESCRIPTION r = { .for_va = addr };
	DAT_RMR_CONTEXT rc;
	DAT_VLEN reg;
	DAT_VADDR va;

	return dat_lmr_create(h, DAT_MEM_TYPE_VIRTUAL, r, len, pz,
			      DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, l, lc,
			      &rc, &reg, &va);
}

/* ---- without a connection ---- */

static void
test_srq_create_query_free(void)
{
	DAT_SRQ_ATTR a = { .max_recv_dtos = 16, .max_recv_iov = 2,
			   .low_watermark = 4 };
	DAT_PROVIDER_ATTR pa;
	DAT_IA_ATTR ia_attr;
	DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;
	DAT_HANDLE_TYPE type;
	DAT_SRQ_PARAM p;
	DAT_EVENT ev;
	bool mtu = false;

	EXPECT(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &ia_attr,
			    DAT_PROVIDER_FIELD_ALL, &pa), DAT_SUCCESS);
	CU_ASSERT_EQUAL(pa.srq_supported, DAT_TRUE);
	CU_ASSERT_EQUAL(ia_attr.max_srqs, 256);
	CU_ASSERT_EQUAL(ia_attr.max_recv_per_srq, 16384);
	CU_ASSERT(ia_attr.max_ep_per_srq > 0);
	for (int i = 0; i < pa.num_provider_specific_attr; i++)
		if (strcmp(pa.provider_specific_attr[i].name,
			   "DAT_IB_TRANSPORT_MTU") == 0)
			mtu = strcmp(pa.provider_specific_attr[i].value,
				     "4096") == 0;	/* memif: MTU 4200 */
	CU_ASSERT(mtu);

	EXPECT(dat_srq_create(ia, (DAT_PZ_HANDLE)&a, &a, &srq),
	       BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	EXPECT(dat_srq_create(ia, pz1, NULL, &srq), BAD_PARAM(DAT_INVALID_ARG3));
	a.max_recv_dtos = 0;
	EXPECT(dat_srq_create(ia, pz1, &a, &srq), BAD_PARAM(DAT_INVALID_ARG3));
	a.max_recv_dtos = 16385;
	EXPECT(dat_srq_create(ia, pz1, &a, &srq), BAD_PARAM(DAT_INVALID_ARG3));
	a.max_recv_dtos = 16;
	a.low_watermark = 17;
	EXPECT(dat_srq_create(ia, pz1, &a, &srq), BAD_PARAM(DAT_INVALID_ARG3));
	a.low_watermark = 4;
	EXPECT(dat_srq_create(ia, pz1, &a, NULL), BAD_PARAM(DAT_INVALID_ARG4));
	EXPECT(dat_srq_create(ia, pz1, &a, &srq), DAT_SUCCESS);
	EXPECT(dat_get_handle_type(srq, &type), DAT_SUCCESS);
	CU_ASSERT_EQUAL(type, DAT_HANDLE_TYPE_SRQ);

	memset(&p, 0xff, sizeof(p));
	EXPECT(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.srq_state, DAT_SRQ_STATE_OPERATIONAL);
	CU_ASSERT_PTR_EQUAL(p.pz_handle, pz1);
	CU_ASSERT_EQUAL(p.max_recv_dtos, 16);
	CU_ASSERT_EQUAL(p.max_recv_iov, 2);
	CU_ASSERT_EQUAL(p.low_watermark, 4);
	CU_ASSERT_EQUAL(p.available_dto_count, 0);
	CU_ASSERT_EQUAL(p.outstanding_dto_count, 0);
	EXPECT(dat_srq_query(srq, 0x100, &p), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, NULL),
	       BAD_PARAM(DAT_INVALID_ARG3));
	/* the low watermark of srq_create is recorded, not armed */
	CU_ASSERT_EQUAL(dat_evd_dequeue(async_evd, &ev), DAT_QUEUE_EMPTY);

	/* the PZ is in use while the SRQ is */
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dat_pz_free(pz1)), DAT_INVALID_STATE);
	EXPECT(dat_srq_free(srq), DAT_SUCCESS);
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dat_srq_free(srq)), DAT_INVALID_HANDLE);
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dat_srq_query(srq, DAT_SRQ_FIELD_ALL,
						   &p)), DAT_INVALID_HANDLE);
}

static void
test_srq_post_resize_lw(void)
{
	DAT_LMR_HANDLE l;
	DAT_LMR_CONTEXT lc;
	DAT_SRQ_HANDLE srq;
	DAT_LMR_TRIPLET t[3];
	DAT_DTO_COOKIE c = { .as_64 = 1 };
	DAT_SRQ_PARAM p;
	DAT_EVENT ev;

	EXPECT(lmr(ia, pz1, rbuf, sizeof(rbuf), &l, &lc), DAT_SUCCESS);
	EXPECT(srq_new(pz1, 4, 2, &srq), DAT_SUCCESS);
	for (unsigned int k = 0; k < 4; k++)
		EXPECT(srq_post(srq, lc, k, k), DAT_SUCCESS);
	EXPECT(srq_post(srq, lc, 4, 4), NO_SRQ_ROOM);
	for (int i = 0; i < 3; i++)
		t[i] = (DAT_LMR_TRIPLET){ .lmr_context = lc,
			.segment_length = 8,
			.virtual_address = (uintptr_t)rbuf };
	EXPECT(dat_srq_post_recv(srq, 3, t, c), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.available_dto_count, 4);
	CU_ASSERT_EQUAL(p.outstanding_dto_count, 4);

	/* resize: not below what is posted, not beyond the native 256 */
	EXPECT(dat_srq_resize(srq, 3), BAD_STATE(0));
	EXPECT(dat_srq_resize(srq, 0), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_srq_resize(srq, 16385), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_srq_resize(srq, 257), NO_SRQ_ROOM);
	EXPECT(dat_srq_resize(srq, 6), DAT_SUCCESS);
	EXPECT(srq_post(srq, lc, 4, 4), DAT_SUCCESS);
	EXPECT(srq_post(srq, lc, 5, 5), DAT_SUCCESS);
	EXPECT(srq_post(srq, lc, 6, 6), NO_SRQ_ROOM);
	EXPECT(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.max_recv_dtos, 6);
	CU_ASSERT_EQUAL(p.outstanding_dto_count, 6);

	/* a watermark above what waits is crossed at once, and reported
	 * once on the async EVD */
	EXPECT(dat_srq_set_lw(srq, 7), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_srq_set_lw(srq, -1), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_srq_set_lw(srq, 2), DAT_SUCCESS);
	CU_ASSERT_EQUAL(dat_evd_dequeue(async_evd, &ev), DAT_QUEUE_EMPTY);
	EXPECT(dat_srq_set_lw(srq, 6), DAT_SUCCESS);	/* 6 wait: not below */
	CU_ASSERT_EQUAL(dat_evd_dequeue(async_evd, &ev), DAT_QUEUE_EMPTY);
	EXPECT(dat_srq_resize(srq, 8), DAT_SUCCESS);
	EXPECT(dat_srq_set_lw(srq, 7), DAT_SUCCESS);
	EXPECT(dat_evd_dequeue(async_evd, &ev), DAT_SUCCESS);
	CU_ASSERT_EQUAL(ev.event_number,
			DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR);
	CU_ASSERT_PTR_EQUAL(ev.event_data.asynch_error_event_data.dat_handle,
			    srq);
	CU_ASSERT_EQUAL(ev.event_data.asynch_error_event_data.reason,
			DAT_SRQ_LOW_WATERMARK_EVENT);
	CU_ASSERT_EQUAL(dat_evd_dequeue(async_evd, &ev), DAT_QUEUE_EMPTY);
	EXPECT(dat_srq_set_lw(srq, DAT_SRQ_LW_DEFAULT), DAT_SUCCESS);
	EXPECT(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.low_watermark, 0);
	/* posted receives go with the SRQ */
	EXPECT(dat_srq_free(srq), DAT_SUCCESS);
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
}

static void
test_srq_ep_calls(void)
{
	DAT_EVD_HANDLE recv, req, conn;
	DAT_SRQ_HANDLE srq, other;
	DAT_EP_HANDLE ep, plain;
	DAT_LMR_TRIPLET t = { 0 };
	DAT_DTO_COOKIE c = { .as_64 = 0 };
	DAT_COUNT nbufs = -1, span = -1;
	DAT_EP_PARAM p;

	EXPECT(evd(ia, 8, DAT_EVD_DTO_FLAG, &recv), DAT_SUCCESS);
	EXPECT(evd(ia, 8, DAT_EVD_DTO_FLAG, &req), DAT_SUCCESS);
	EXPECT(evd(ia, 8, DAT_EVD_CONNECTION_FLAG, &conn), DAT_SUCCESS);
	EXPECT(srq_new(pz1, 8, 1, &srq), DAT_SUCCESS);
	EXPECT(dat_ep_create_with_srq(ia, pz1, recv, req, conn,
				      (DAT_SRQ_HANDLE)&t, NULL, &ep),
	       BAD_HANDLE(DAT_INVALID_HANDLE_SRQ));
	/* the SRQ's receives are checked with the EP's PZ: the same one */
	EXPECT(dat_ep_create_with_srq(ia, pz2, recv, req, conn, srq, NULL,
				      &ep), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_ep_create_with_srq(ia, pz1, recv, req, conn, srq, NULL,
				      NULL), BAD_PARAM(DAT_INVALID_ARG8));
	EXPECT(dat_ep_create_with_srq(ia, pz1, recv, req, conn, srq, NULL,
				      &ep), DAT_SUCCESS);
	EXPECT(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_PTR_EQUAL(p.srq_handle, srq);
	EXPECT(dat_ep_post_recv(ep, 0, &t, c, DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_INVALID_STATE);
	EXPECT(dat_srq_free(srq), BAD_STATE(DAT_INVALID_STATE_SRQ_IN_USE));
	EXPECT(dat_ep_recv_query(ep, &nbufs, &span), DAT_SUCCESS);
	CU_ASSERT_EQUAL(nbufs, 0);
	CU_ASSERT_EQUAL(span, 0);
	EXPECT(dat_ep_recv_query(ep, NULL, &span), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_ep_set_watermark(ep, 4, 4), DAT_SUCCESS);
	EXPECT(dat_ep_set_watermark(ep, DAT_WATERMARK_INFINITE,
				    DAT_WATERMARK_INFINITE), DAT_SUCCESS);
	EXPECT(dat_ep_set_watermark(ep, 0, 4), DAT_MODEL_NOT_SUPPORTED);
	EXPECT(dat_ep_set_watermark(ep, -5, 4), BAD_PARAM(DAT_INVALID_ARG2));
	EXPECT(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(p.ep_attr.srq_soft_hw, DAT_WATERMARK_INFINITE);
	/* a second SRQ may serve another EP; an EP without one has none */
	EXPECT(srq_new(pz1, 8, 1, &other), DAT_SUCCESS);
	EXPECT(dat_ep_create(ia, pz1, recv, req, conn, NULL, &plain),
	       DAT_SUCCESS);
	EXPECT(dat_ep_set_watermark(plain, 4, 4), DAT_MODEL_NOT_SUPPORTED);
	EXPECT(dat_ep_recv_query(plain, &nbufs, &span), DAT_SUCCESS);
	CU_ASSERT_EQUAL(nbufs, 0);
	CU_ASSERT_EQUAL(span, DAT_VALUE_UNKNOWN);
	EXPECT(dat_ep_free(plain), DAT_SUCCESS);
	EXPECT(dat_ep_free(ep), DAT_SUCCESS);
	EXPECT(dat_srq_free(srq), DAT_SUCCESS);
	EXPECT(dat_srq_free(other), DAT_SUCCESS);
	EXPECT(dat_evd_free(recv), DAT_SUCCESS);
	EXPECT(dat_evd_free(req), DAT_SUCCESS);
	EXPECT(dat_evd_free(conn), DAT_SUCCESS);
}

/* ---- over connections ---- */

struct pair {
	DAT_EP_HANDLE sep, cep;
};

struct net {
	DAT_IA_HANDLE cia;
	DAT_PZ_HANDLE cpz;
	DAT_LMR_HANDLE sl, cl;
	DAT_LMR_CONTEXT slc, clc;
	DAT_EVD_HANDLE s_cr, s_conn, s_req, s_recv, c_conn, c_req, c_recv;
	DAT_PSP_HANDLE psp;
	DAT_SRQ_HANDLE srq;
	struct pair p[2];
};

static int
net_objects(struct net *n)
{
	DAT_RETURN r = dat_test_open_client(&n->cia);

	EXPECT(r, DAT_SUCCESS);
	if (r != DAT_SUCCESS ||
	    dat_pz_create(n->cia, &n->cpz) != DAT_SUCCESS ||
	    lmr(ia, pz1, rbuf, sizeof(rbuf), &n->sl, &n->slc) != DAT_SUCCESS ||
	    lmr(n->cia, n->cpz, sbuf, sizeof(sbuf), &n->cl, &n->clc) !=
	    DAT_SUCCESS ||
	    evd(ia, 4, DAT_EVD_CR_FLAG, &n->s_cr) != DAT_SUCCESS ||
	    evd(ia, 8, DAT_EVD_CONNECTION_FLAG, &n->s_conn) != DAT_SUCCESS ||
	    evd(ia, 8, DAT_EVD_DTO_FLAG, &n->s_req) != DAT_SUCCESS ||
	    evd(ia, 16, DAT_EVD_DTO_FLAG, &n->s_recv) != DAT_SUCCESS ||
	    evd(n->cia, 8, DAT_EVD_CONNECTION_FLAG, &n->c_conn) !=
	    DAT_SUCCESS ||
	    evd(n->cia, 16, DAT_EVD_DTO_FLAG, &n->c_req) != DAT_SUCCESS ||
	    evd(n->cia, 8, DAT_EVD_DTO_FLAG, &n->c_recv) != DAT_SUCCESS ||
	    srq_new(pz1, 8, 1, &n->srq) != DAT_SUCCESS ||
	    dat_psp_create(ia, QUAL, n->s_cr, DAT_PSP_CONSUMER_FLAG,
			   &n->psp) != DAT_SUCCESS) {
		CU_FAIL("objects for the connections");
		return -1;
	}
	return 0;
}

static void
net_down(struct net *n)
{
	DAT_EVD_HANDLE *evds[] = { &n->s_cr, &n->s_conn, &n->s_req,
				   &n->s_recv, &n->c_conn, &n->c_req,
				   &n->c_recv };

	for (int i = 0; i < 2; i++) {
		if (n->p[i].sep != DAT_HANDLE_NULL)
			EXPECT(dat_ep_free(n->p[i].sep), DAT_SUCCESS);
		if (n->p[i].cep != DAT_HANDLE_NULL)
			EXPECT(dat_ep_free(n->p[i].cep), DAT_SUCCESS);
	}
	if (n->psp != DAT_HANDLE_NULL)
		EXPECT(dat_psp_free(n->psp), DAT_SUCCESS);
	if (n->srq != DAT_HANDLE_NULL)
		EXPECT(dat_srq_free(n->srq), DAT_SUCCESS);
	for (unsigned int i = 0; i < sizeof(evds) / sizeof(evds[0]); i++)
		if (*evds[i] != DAT_HANDLE_NULL)
			EXPECT(dat_evd_free(*evds[i]), DAT_SUCCESS);
	if (n->sl != DAT_HANDLE_NULL)
		EXPECT(dat_lmr_free(n->sl), DAT_SUCCESS);
	if (n->cl != DAT_HANDLE_NULL)
		EXPECT(dat_lmr_free(n->cl), DAT_SUCCESS);
	if (n->cpz != DAT_HANDLE_NULL)
		EXPECT(dat_pz_free(n->cpz), DAT_SUCCESS);
	if (n->cia != DAT_HANDLE_NULL)
		dat_ia_close(n->cia, DAT_CLOSE_ABRUPT_FLAG);
}

/* Connect a client EP to a server EP on the SRQ. */
static int
pair_up(struct net *n, struct pair *p)
{
	if (dat_ep_create_with_srq(ia, pz1, n->s_recv, n->s_req, n->s_conn,
				   n->srq, NULL, &p->sep) != DAT_SUCCESS ||
	    dat_ep_create(n->cia, n->cpz, n->c_recv, n->c_req, n->c_conn,
			  NULL, &p->cep) != DAT_SUCCESS)
		return -1;
	return dat_test_connect(p->cep, p->sep, QUAL, n->s_cr, n->s_conn,
				n->c_conn);
}

static DAT_RETURN
send_from(struct net *n, struct pair *p, uint32_t off, uint32_t len)
{
	DAT_LMR_TRIPLET t = { .lmr_context = n->clc, .segment_length = len,
			      .virtual_address = (uintptr_t)(sbuf + off) };
	DAT_DTO_COOKIE c = { .as_64 = off };

	return dat_ep_post_send(p->cep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG);
}

/* The next receive completion on the server: its EP, cookie, length. */
static void
expect_recv(struct net *n, DAT_EP_HANDLE ep, uint64_t cookie, uint32_t len)
{
	DAT_DTO_COMPLETION_EVENT_DATA *d;
	DAT_EVENT ev;

	CU_ASSERT_EQUAL_FATAL(next_event(n->s_recv, &ev),
			      DAT_DTO_COMPLETION_EVENT);
	d = &ev.event_data.dto_completion_event_data;
	CU_ASSERT_EQUAL(d->status, DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL(d->operation, DAT_DTO_RECEIVE);
	CU_ASSERT_PTR_EQUAL(d->ep_handle, ep);
	CU_ASSERT_EQUAL(d->user_cookie.as_64, cookie);
	CU_ASSERT_EQUAL(d->transfered_length, len);
}

static void
expect_sends(struct net *n, int k)
{
	DAT_EVENT ev;

	while (k-- > 0) {
		CU_ASSERT_EQUAL(next_event(n->c_req, &ev),
				DAT_DTO_COMPLETION_EVENT);
		CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.status,
				DAT_DTO_SUCCESS);
	}
}

static void
test_srq_two_eps(void)
{
	struct net n;
	DAT_SRQ_PARAM sp;
	DAT_EVENT ev;
	DAT_COUNT nbufs, span;

	memset(&n, 0, sizeof(n));
	if (net_objects(&n) != 0 || pair_up(&n, &n.p[0]) != 0 ||
	    pair_up(&n, &n.p[1]) != 0) {
		CU_FAIL("two connections between dpdat0 and dpdat1");
		goto out;
	}
	printf("(connected) ");
	for (unsigned int k = 0; k < 4; k++)
		EXPECT(srq_post(n.srq, n.slc, k, 10 + k), DAT_SUCCESS);
	EXPECT(dat_srq_set_lw(n.srq, 2), DAT_SUCCESS);
	CU_ASSERT_EQUAL(dat_evd_dequeue(async_evd, &ev), DAT_QUEUE_EMPTY);
	memset(sbuf, 'a', 100);
	memset(sbuf + BUF, 'b', 5000);		/* 5 packets at PMTU 1024 */
	memset(rbuf, 0, 4 * BUF);

	/* one at a time: the order in which the EPs take receives is known */
	EXPECT(send_from(&n, &n.p[0], 0, 100), DAT_SUCCESS);
	expect_recv(&n, n.p[0].sep, 10, 100);
	EXPECT(send_from(&n, &n.p[1], BUF, 5000), DAT_SUCCESS);
	expect_recv(&n, n.p[1].sep, 11, 5000);
	CU_ASSERT_EQUAL(rbuf[99], 'a');
	CU_ASSERT_EQUAL(rbuf[100], 0);
	CU_ASSERT_EQUAL(rbuf[BUF + 4999], 'b');
	CU_ASSERT_EQUAL(rbuf[BUF + 5000], 0);
	/* 2 wait: not below the watermark yet */
	CU_ASSERT_EQUAL(dat_evd_dequeue(async_evd, &ev), DAT_QUEUE_EMPTY);
	EXPECT(send_from(&n, &n.p[1], 0, 7), DAT_SUCCESS);
	expect_recv(&n, n.p[1].sep, 12, 7);
	CU_ASSERT_EQUAL(next_event_in(async_evd, &ev, 1000000),
			DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR);
	CU_ASSERT_PTR_EQUAL(ev.event_data.asynch_error_event_data.dat_handle,
			    n.srq);
	CU_ASSERT_EQUAL(ev.event_data.asynch_error_event_data.reason,
			DAT_SRQ_LOW_WATERMARK_EVENT);
	expect_sends(&n, 3);
	EXPECT(dat_srq_query(n.srq, DAT_SRQ_FIELD_ALL, &sp), DAT_SUCCESS);
	CU_ASSERT_EQUAL(sp.available_dto_count, 1);
	CU_ASSERT_EQUAL(sp.outstanding_dto_count, 1);
	EXPECT(dat_ep_recv_query(n.p[0].sep, &nbufs, &span), DAT_SUCCESS);
	CU_ASSERT_EQUAL(nbufs, 0);

	/* two SENDs, one receive left: the second waits (RNR) for a post */
	EXPECT(send_from(&n, &n.p[0], 0, 1), DAT_SUCCESS);
	EXPECT(send_from(&n, &n.p[0], 0, 2), DAT_SUCCESS);
	expect_recv(&n, n.p[0].sep, 13, 1);
	CU_ASSERT_EQUAL(next_event_in(n.s_recv, &ev, 300000), 0);
	EXPECT(srq_post(n.srq, n.slc, 5, 15), DAT_SUCCESS);
	expect_recv(&n, n.p[0].sep, 15, 2);
	expect_sends(&n, 2);

	/* a disconnection: the server EP is off its SRQ, said on async */
	EXPECT(dat_ep_disconnect(n.p[1].cep, DAT_CLOSE_GRACEFUL_FLAG),
	       DAT_SUCCESS);
	CU_ASSERT_EQUAL(next_event(n.s_conn, &ev),
			DAT_CONNECTION_EVENT_DISCONNECTED);
	CU_ASSERT_PTR_EQUAL(ev.event_data.connect_event_data.ep_handle,
			    n.p[1].sep);
	CU_ASSERT_EQUAL(next_event_in(async_evd, &ev, 1000000),
			DAT_ASYNC_ERROR_EP_BROKEN);
	CU_ASSERT_PTR_EQUAL(ev.event_data.asynch_error_event_data.dat_handle,
			    n.p[1].sep);
	CU_ASSERT_EQUAL(dat_evd_dequeue(async_evd, &ev), DAT_QUEUE_EMPTY);
	CU_ASSERT_EQUAL(next_event(n.c_conn, &ev),
			DAT_CONNECTION_EVENT_DISCONNECTED);
	/* the other EP still receives */
	EXPECT(srq_post(n.srq, n.slc, 6, 16), DAT_SUCCESS);
	EXPECT(send_from(&n, &n.p[0], 0, 3), DAT_SUCCESS);
	expect_recv(&n, n.p[0].sep, 16, 3);
	expect_sends(&n, 1);
	EXPECT(dat_srq_free(n.srq), BAD_STATE(DAT_INVALID_STATE_SRQ_IN_USE));
	/* the other one too: both sides see it through before the EVDs go
	 * (a connection holds its CM queue until its last event) */
	EXPECT(dat_ep_disconnect(n.p[0].cep, DAT_CLOSE_GRACEFUL_FLAG),
	       DAT_SUCCESS);
	CU_ASSERT_EQUAL(next_event(n.s_conn, &ev),
			DAT_CONNECTION_EVENT_DISCONNECTED);
	CU_ASSERT_EQUAL(next_event(n.c_conn, &ev),
			DAT_CONNECTION_EVENT_DISCONNECTED);
	CU_ASSERT_EQUAL(next_event_in(async_evd, &ev, 1000000),
			DAT_ASYNC_ERROR_EP_BROKEN);
	CU_ASSERT_PTR_EQUAL(ev.event_data.asynch_error_event_data.dat_handle,
			    n.p[0].sep);
out:
	net_down(&n);
}

/* ---- the suite ---- */

static int
suite_init(void)
{
	async_evd = DAT_HANDLE_NULL;	/* the provider makes one */
	return dat_test_ia_pzs(&ia, &async_evd, &pz1, &pz2);
}

static int
suite_clean(void)
{
	return dat_test_ia_pzs_close(ia, pz1, pz2);
}

static CU_TestInfo srq_tests[] = {
	{ "srq create, query, free: codes", test_srq_create_query_free },
	{ "srq post_recv, resize, set_lw", test_srq_post_resize_lw },
	{ "ep_create_with_srq, recv_query, set_watermark", test_srq_ep_calls },
	{ "two EPs on one SRQ: order, EP, RNR, watermark, EP_BROKEN",
	  test_srq_two_eps },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "dat_srq", suite_init, suite_clean, NULL, NULL, srq_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	dat_test_main(argc, argv, "srq", suites);
}
