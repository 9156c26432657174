/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Real completions through EVDs: dpdat0 (the memif server that main()
 * configured) connected to dpdat1, the client end of the same socket, in
 * this process. The client sends to receives the server posted; the
 * server's receive EVD is small (4) and feeds a CNO.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evd_test.h"

#define QUAL		4713
#define BUF		64
#define NBUF		32
#define RECV_QLEN	4
#define ROUNDS		500

struct side {
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT ctx;
	DAT_EVD_HANDLE conn, req, recv;
	DAT_EP_HANDLE ep;
	char buf[NBUF][BUF];
};

static struct side srv, cli;
static DAT_EVD_HANDLE cr_evd;
static DAT_PSP_HANDLE psp;
static DAT_CNO_HANDLE cno;

static DAT_RETURN
side_objects(struct side *s, DAT_COUNT recv_qlen, DAT_CNO_HANDLE recv_cno)
{
	DAT_REGION_DESCRIPTION region = { .for_va = s->buf };
	DAT_RMR_CONTEXT rctx;
	DAT_VADDR addr;
	DAT_VLEN len;
	DAT_RETURN r;

	r = dat_pz_create(s->ia, &s->pz);
	if (r == DAT_SUCCESS)
		r = dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, region,
				   sizeof(s->buf), s->pz, DAT_MEM_PRIV_ALL_FLAG,
				   DAT_VA_TYPE_VA, &s->lmr, &s->ctx, &rctx,
				   &len, &addr);
	if (r == DAT_SUCCESS)
		r = dat_evd_create(s->ia, 8, DAT_HANDLE_NULL,
				   DAT_EVD_CONNECTION_FLAG, &s->conn);
	if (r == DAT_SUCCESS)
		r = dat_evd_create(s->ia, NBUF, DAT_HANDLE_NULL,
				   DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
				   &s->req);
	if (r == DAT_SUCCESS)
		r = dat_evd_create(s->ia, recv_qlen, recv_cno,
				   DAT_EVD_DTO_FLAG, &s->recv);
	if (r == DAT_SUCCESS)
		r = dat_ep_create(s->ia, s->pz, s->recv, s->req, s->conn, NULL,
				  &s->ep);
	return r;
}

/* The next event of an EVD within LONG, its number (0: none). */
static DAT_EVENT_NUMBER
next(DAT_EVD_HANDLE evd, DAT_EVENT *ev)
{
	DAT_COUNT more;

	memset(ev, 0, sizeof(*ev));
	if (dat_evd_wait(evd, LONG, 1, ev, &more) != DAT_SUCCESS)
		return 0;
	return ev->event_number;
}

static int
connect_sides(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	DAT_EVENT ev;
	int tries;

	inet_pton(AF_INET, "198.18.0.1", &sin.sin_addr);
	/* the memif link may come up after the first request */
	for (tries = 0; tries < 3; tries++) {
		if (dat_ep_connect(cli.ep, (DAT_IA_ADDRESS_PTR)&sin, QUAL, LONG,
				   0, NULL, DAT_QOS_BEST_EFFORT,
				   DAT_CONNECT_DEFAULT_FLAG) != DAT_SUCCESS)
			return -1;
		if (next(cr_evd, &ev) == DAT_CONNECTION_REQUEST_EVENT)
			break;
		next(cli.conn, &ev);	/* most likely unreachable */
		dat_ep_reset(cli.ep);
	}
	if (tries == 3 ||
	    dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
			  srv.ep, 0, NULL) != DAT_SUCCESS ||
	    next(srv.conn, &ev) != DAT_CONNECTION_EVENT_ESTABLISHED ||
	    next(cli.conn, &ev) != DAT_CONNECTION_EVENT_ESTABLISHED)
		return -1;
	return 0;
}

int
evd_dto_init(void)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	const char *env = getenv("DPDAT_DAT_PARAMS");
	char *server = strdup(env != NULL ? env : ""), *sock, params[256];
	int ret = -1;

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	sock = strstr(server, "socket=");
	if (sock == NULL || dat_ia_open(IA_NAME, 8, &async, &srv.ia) !=
	    DAT_SUCCESS)
		goto out;
	snprintf(params, sizeof(params),
		 "device=net_memif1,role=client,%.*s ipv4=198.18.0.2",
		 (int)strcspn(sock, " "), sock);
	setenv("DPDAT_DAT_PARAMS", params, 1);
	async = DAT_HANDLE_NULL;
	if (dat_ia_open("dpdat1", 8, &async, &cli.ia) != DAT_SUCCESS)
		goto out;
	if (dat_cno_create(srv.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno) !=
	    DAT_SUCCESS ||
	    side_objects(&srv, RECV_QLEN, cno) != DAT_SUCCESS ||
	    side_objects(&cli, NBUF, DAT_HANDLE_NULL) != DAT_SUCCESS ||
	    dat_evd_create(srv.ia, 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
			   &cr_evd) != DAT_SUCCESS ||
	    dat_psp_create(srv.ia, QUAL, cr_evd, DAT_PSP_CONSUMER_FLAG,
			   &psp) != DAT_SUCCESS)
		goto out;
	ret = connect_sides();
out:
	setenv("DPDAT_DAT_PARAMS", server, 1);
	free(server);
	if (ret != 0)
		fprintf(stderr, "\n  evd-dto: no connection between dpdat0 "
			"and dpdat1\n");
	return ret;
}

/* Abrupt closes free everything, EVDs and the CNO included. */
int
evd_dto_clean(void)
{
	int ret = 0;

	if (cli.ia != DAT_HANDLE_NULL &&
	    dat_ia_close(cli.ia, DAT_CLOSE_ABRUPT_FLAG) != DAT_SUCCESS)
		ret = 1;
	if (srv.ia != DAT_HANDLE_NULL &&
	    dat_ia_close(srv.ia, DAT_CLOSE_ABRUPT_FLAG) != DAT_SUCCESS)
		ret = 1;
	return ret;
}

static DAT_RETURN
post_recv(struct side *s, unsigned int i)
{
	DAT_LMR_TRIPLET t = {
		.virtual_address = (DAT_VADDR)(uintptr_t)s->buf[i % NBUF],
		.segment_length = BUF,
		.lmr_context = s->ctx,
	};
	DAT_DTO_COOKIE c = { .as_64 = i };

	return dat_ep_post_recv(s->ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN
post_send(struct side *s, unsigned int i)
{
	DAT_LMR_TRIPLET t = {
		.virtual_address = (DAT_VADDR)(uintptr_t)s->buf[i % NBUF],
		.segment_length = BUF,
		.lmr_context = s->ctx,
	};
	DAT_DTO_COOKIE c = { .as_64 = 1000 + i };

	snprintf(s->buf[i % NBUF], BUF, "message %u", i);
	return dat_ep_post_send(s->ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG);
}

/* A DTO completion event as the EVD must deliver it. */
static void
check_dto(const DAT_EVENT *ev, DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep,
	  uint64_t cookie)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d =
		&ev->event_data.dto_completion_event_data;

	CU_ASSERT_EQUAL(ev->event_number, DAT_DTO_COMPLETION_EVENT);
	CU_ASSERT_EQUAL(ev->evd_handle, evd);
	CU_ASSERT_EQUAL(d->ep_handle, ep);
	CU_ASSERT_EQUAL(d->status, DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL(d->user_cookie.as_64, cookie);
	CU_ASSERT_EQUAL(d->transfered_length, BUF);
}

/* n sends from the client, their completions reaped on the client. */
static void
send_n(unsigned int first, unsigned int n)
{
	DAT_EVENT ev;

	for (unsigned int i = first; i < first + n; i++)
		ASSERT_OK(post_send(&cli, i));
	for (unsigned int i = first; i < first + n; i++) {
		CU_ASSERT_EQUAL(next(cli.req, &ev), DAT_DTO_COMPLETION_EVENT);
		check_dto(&ev, cli.req, cli.ep, 1000 + i);
	}
}

static void
test_dto_wait(void)
{
	DAT_EVENT ev;
	DAT_COUNT n;

	for (unsigned int i = 0; i < 4; i++)
		ASSERT_OK(post_recv(&srv, i));
	for (unsigned int i = 0; i < 4; i++) {
		ASSERT_OK(post_send(&cli, i));
		ASSERT_OK(dat_evd_wait(srv.recv, LONG, 1, &ev, &n));
		check_dto(&ev, srv.recv, srv.ep, i);
		CU_ASSERT_STRING_EQUAL(srv.buf[i], cli.buf[i]);
		CU_ASSERT_EQUAL(next(cli.req, &ev), DAT_DTO_COMPLETION_EVENT);
		check_dto(&ev, cli.req, cli.ep, 1000 + i);
	}
	CU_ASSERT_EQUAL(dat_evd_dequeue(srv.recv, &ev), DAT_QUEUE_EMPTY);
}

/* A threshold of the whole queue: all four arrive before the wait ends. */
static void
test_dto_threshold(void)
{
	DAT_EVENT ev;
	DAT_COUNT n = -1;

	for (unsigned int i = 0; i < RECV_QLEN; i++)
		ASSERT_OK(post_recv(&srv, 10 + i));
	for (unsigned int i = 0; i < RECV_QLEN; i++)
		ASSERT_OK(post_send(&cli, 10 + i));
	ASSERT_OK(dat_evd_wait(srv.recv, LONG, RECV_QLEN, &ev, &n));
	check_dto(&ev, srv.recv, srv.ep, 10);
	CU_ASSERT_EQUAL(n, RECV_QLEN - 1);
	for (unsigned int i = 1; i < RECV_QLEN; i++) {
		ASSERT_OK(dat_evd_dequeue(srv.recv, &ev));
		check_dto(&ev, srv.recv, srv.ep, 10 + i);
	}
	for (unsigned int i = 0; i < RECV_QLEN; i++) {
		CU_ASSERT_EQUAL(next(cli.req, &ev), DAT_DTO_COMPLETION_EVENT);
		check_dto(&ev, cli.req, cli.ep, 1010 + i);
	}
}

/* More completions than the ring holds: the rest wait in the CQ, none is
 * lost, the order stays. */
static void
test_dto_ring_full(void)
{
	const unsigned int n = 6 * RECV_QLEN;
	DAT_EVENT ev;

	for (unsigned int i = 0; i < n; i++)
		ASSERT_OK(post_recv(&srv, 100 + i));
	send_n(100, n);		/* all delivered: in the server's CQ */
	for (unsigned int i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(next(srv.recv, &ev), DAT_DTO_COMPLETION_EVENT);
		check_dto(&ev, srv.recv, srv.ep, 100 + i);
	}
	CU_ASSERT_EQUAL(dat_evd_dequeue(srv.recv, &ev), DAT_QUEUE_EMPTY);
}

/* A CNO waiter sees a completion nobody else drains. */
static void
test_dto_cno(void)
{
	DAT_EVD_HANDLE got = DAT_HANDLE_NULL;
	DAT_EVENT ev;
	uint64_t t0;

	CU_ASSERT_EQUAL(dat_cno_wait(cno, 10 * MS, &got), DAT_QUEUE_EMPTY);
	ASSERT_OK(post_recv(&srv, 200));
	send_n(200, 1);
	t0 = evd_now_ms();
	ASSERT_OK(dat_cno_wait(cno, LONG, &got));
	CU_ASSERT(evd_now_ms() - t0 < WOKEN_MS);
	CU_ASSERT_EQUAL(got, srv.recv);
	ASSERT_OK(dat_evd_dequeue(srv.recv, &ev));
	check_dto(&ev, srv.recv, srv.ep, 200);
}

/* EVDs that an EP names cannot go. */
static void
test_dto_in_use(void)
{
	ASSERT_RET(dat_evd_free(srv.recv), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_IN_USE);
	ASSERT_RET(dat_evd_free(srv.req), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_IN_USE);
	ASSERT_RET(dat_evd_free(srv.conn), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_IN_USE);
	ASSERT_RET(dat_evd_free(cr_evd), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_EVD_IN_USE);
	ASSERT_RET(dat_cno_free(cno), DAT_INVALID_STATE,
		   DAT_INVALID_STATE_CNO_IN_USE);
}

/* Ping-pong with dat_evd_wait on both sides (one thread plays both, four
 * waits a round): a wait that slept a whole slice (1 ms) for each
 * completion would take 4 ms a round. Well below that even on a loaded
 * machine whose two engine threads poll (0.2 to 1.2 ms seen on 2 vCPUs). */
static void
test_dto_latency(void)
{
	unsigned int i, bad = 0;
	uint64_t t0, ms;
	DAT_EVENT ev;

	t0 = evd_now_ms();
	for (i = 0; i < ROUNDS; i++) {
		if (post_recv(&srv, i) != DAT_SUCCESS ||
		    post_recv(&cli, i) != DAT_SUCCESS ||
		    post_send(&cli, i) != DAT_SUCCESS ||
		    next(srv.recv, &ev) != DAT_DTO_COMPLETION_EVENT ||
		    post_send(&srv, i) != DAT_SUCCESS ||
		    next(cli.recv, &ev) != DAT_DTO_COMPLETION_EVENT ||
		    next(srv.req, &ev) != DAT_DTO_COMPLETION_EVENT ||
		    next(cli.req, &ev) != DAT_DTO_COMPLETION_EVENT) {
			bad++;
			break;
		}
	}
	ms = evd_now_ms() - t0;
	CU_ASSERT_EQUAL(bad, 0);
	printf("\n    %u round trips in %lu ms: %.1f us each ", i,
	       (unsigned long)ms, i ? ms * 1000.0 / i : 0.0);
	CU_ASSERT(ms < 3 * (uint64_t)ROUNDS);	/* < 3 ms a round trip */
}

/* An EP freed while its connection's last event waits in the EVD: the
 * event goes with it. The plug-in freed the CM connection twice (once in
 * ep_free, once at the event, which names it: found by fuzz_dat, a
 * heap-use-after-free under ASan). */
static void
test_dto_late_event(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	DAT_EVD_HANDLE conn;
	DAT_EP_HANDLE ep;
	DAT_EVENT ev;

	inet_pton(AF_INET, "198.18.0.1", &sin.sin_addr);
	CU_ASSERT_EQUAL_FATAL(dat_evd_create(cli.ia, 8, DAT_HANDLE_NULL,
					     DAT_EVD_CONNECTION_FLAG, &conn),
			      DAT_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(dat_ep_create(cli.ia, cli.pz, cli.recv, cli.req,
					    conn, NULL, &ep), DAT_SUCCESS);
	/* nobody listens there: the server rejects, final once the REQ went
	 * 4 times (0.7 s) */
	CU_ASSERT_EQUAL(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)&sin, QUAL + 1,
				       LONG, 0, NULL, DAT_QOS_BEST_EFFORT,
				       DAT_CONNECT_DEFAULT_FLAG), DAT_SUCCESS);
	usleep(1200 * 1000);	/* the last REJ is in, its event not taken */
	CU_ASSERT_EQUAL(dat_ep_free(ep), DAT_SUCCESS);
	CU_ASSERT_EQUAL(DAT_GET_TYPE(dat_evd_dequeue(conn, &ev)),
			DAT_QUEUE_EMPTY);
	CU_ASSERT_EQUAL(dat_evd_free(conn), DAT_SUCCESS);
}

/* An EP freed once connected, before its ESTABLISHED event was taken:
 * its connection ends (DREQ), and the EVD it reported to can be freed.
 * The plug-in left such a connection established for good, and the EVD in
 * use (found by fuzz_dat). */
static void
test_dto_free_established(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	DAT_EVD_HANDLE cconn, sconn;
	DAT_EP_HANDLE cep, sep;
	DAT_EVENT ev;
	DAT_RETURN r = DAT_INVALID_STATE;

	inet_pton(AF_INET, "198.18.0.1", &sin.sin_addr);
	CU_ASSERT_EQUAL_FATAL(dat_evd_create(cli.ia, 8, DAT_HANDLE_NULL,
					     DAT_EVD_CONNECTION_FLAG, &cconn),
			      DAT_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(dat_evd_create(srv.ia, 8, DAT_HANDLE_NULL,
					     DAT_EVD_CONNECTION_FLAG, &sconn),
			      DAT_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(dat_ep_create(cli.ia, cli.pz, cli.recv, cli.req,
					    cconn, NULL, &cep), DAT_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(dat_ep_create(srv.ia, srv.pz, srv.recv, srv.req,
					    sconn, NULL, &sep), DAT_SUCCESS);
	CU_ASSERT_EQUAL(dat_ep_connect(cep, (DAT_IA_ADDRESS_PTR)&sin, QUAL,
				       LONG, 0, NULL, DAT_QOS_BEST_EFFORT,
				       DAT_CONNECT_DEFAULT_FLAG), DAT_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(next(cr_evd, &ev), DAT_CONNECTION_REQUEST_EVENT);
	CU_ASSERT_EQUAL(dat_cr_accept(
		ev.event_data.cr_arrival_event_data.cr_handle, sep, 0, NULL),
		DAT_SUCCESS);
	CU_ASSERT_EQUAL(next(sconn, &ev), DAT_CONNECTION_EVENT_ESTABLISHED);
	usleep(200 * 1000);	/* the client's event is in, not taken */
	CU_ASSERT_EQUAL(dat_ep_free(cep), DAT_SUCCESS);
	for (int i = 0; i < 50 && r != DAT_SUCCESS; i++) {
		r = dat_evd_free(cconn);
		if (r != DAT_SUCCESS)
			usleep(100 * 1000);
	}
	CU_ASSERT_EQUAL(r, DAT_SUCCESS);
	/* the server saw the end */
	CU_ASSERT_EQUAL(next(sconn, &ev), DAT_CONNECTION_EVENT_DISCONNECTED);
	CU_ASSERT_EQUAL(dat_ep_free(sep), DAT_SUCCESS);
	CU_ASSERT_EQUAL(dat_evd_free(sconn), DAT_SUCCESS);
}

CU_TestInfo evd_dto_tests[] = {
	{ "a connected EP freed before its event", test_dto_free_established },
	{ "event of a freed EP's connection", test_dto_late_event },
	{ "wait for receives and sends", test_dto_wait },
	{ "threshold of the whole queue", test_dto_threshold },
	{ "more completions than the ring", test_dto_ring_full },
	{ "CNO sees a completion", test_dto_cno },
	{ "EVDs and CNO in use", test_dto_in_use },
	{ "ping-pong latency", test_dto_latency },
	CU_TEST_INFO_NULL,
};
