/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * lib/cm through its public calls, on the RC tests' rig (two devices on a
 * net_ring pair, engines run by hand, test/unit/rc/rig.h): connect, accept
 * and the events both ends see with their private data; reject with
 * private data; disconnect from either end; a REQ to a service nobody
 * listens on; a REQ that arrives twice; and every error code the
 * dpdat_cm_* pages name that a test can provoke. A handle whose magic is
 * wrong stands for a freed one (free poisons the magic; reading a freed
 * object itself would be a use after free in the test).
 */

#include <errno.h>
#include <string.h>

#include <CUnit/Basic.h>

#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_qp.h>

#include "cm_wire.h"
#include "dev_priv.h"
#include "port_priv.h"
#include "rc_priv.h"
#include "rig.h"
#include "unit_run.h"

#define ITERS	200000

int engine_suite_init(void);

static struct dpdat_cm_eq *ea, *eb;
static uint64_t junk[512];	/* a handle of no type: magic 0 */

static int
cm_suite_init(void)
{
	if (engine_suite_init() != 0)
		return -1;
	ea = dpdat_cm_eq_create(A.dev, 64);
	eb = dpdat_cm_eq_create(B.dev, 64);
	return ea != NULL && eb != NULL ? 0 : -1;
}

static int
cm_suite_clean(void)
{
	return dpdat_cm_eq_free(ea) == 0 && dpdat_cm_eq_free(eb) == 0 ? 0 : -1;
}

static struct dpdat_qp *
qp_on(struct end *e)
{
	struct dpdat_qp_conf qc = { .max_send_wr = 16, .max_recv_wr = 16 };
	struct dpdat_qp *qp;

	qc.pz = e->pz;
	qc.send_cq = qc.recv_cq = e->cq;
	qp = dpdat_qp_create(e->dev, &qc);
	CU_ASSERT_FATAL(qp != NULL);
	return qp;
}

/* Nothing more on eq within a few hundred rounds. */
static bool
quiet(struct dpdat_cm_eq *eq)
{
	struct dpdat_cm_event ev;

	return cm_next(eq, &ev, 500) == 0;
}

struct pair {
	struct dpdat_cm_listener *l;
	struct dpdat_cm_conn *ca, *cb;
	struct dpdat_qp *qa, *qb;
};

/* A connects to B's listener on qual; B sees the request. */
static void
request(struct pair *p, uint64_t qual, const void *pd, uint16_t plen)
{
	struct dpdat_cm_event ev;

	p->l = dpdat_cm_listen(B.dev, qual, eb);
	CU_ASSERT_FATAL(p->l != NULL);
	p->qa = qp_on(&A);
	p->qb = qp_on(&B);
	p->ca = dpdat_cm_connect(p->qa, B.pi.ipv4, qual, pd, plen, ea);
	CU_ASSERT_FATAL(p->ca != NULL);
	CU_ASSERT_EQUAL_FATAL(cm_next(eb, &ev, ITERS), DPDAT_CM_CONNECT_REQUEST);
	p->cb = ev.conn;
	CU_ASSERT_PTR_EQUAL(ev.listener, p->l);
	CU_ASSERT_EQUAL(ev.conn_qual, qual);
	CU_ASSERT_EQUAL(ev.peer_ipv4, A.pi.ipv4);
	CU_ASSERT(ev.private_data_len >= plen);
	if (plen != 0)
		CU_ASSERT_EQUAL(memcmp(ev.private_data, pd, plen), 0);
	CU_ASSERT_PTR_NULL(dpdat_cm_conn_qp(p->cb));
}

static void
establish(struct pair *p, uint64_t qual)
{
	struct dpdat_cm_event ev;

	request(p, qual, NULL, 0);
	CU_ASSERT_EQUAL_FATAL(dpdat_cm_accept(p->cb, p->qb, "rep", 3, eb), 0);
	CU_ASSERT_EQUAL_FATAL(cm_next(ea, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	CU_ASSERT_EQUAL_FATAL(cm_next(eb, &ev, ITERS), DPDAT_CM_ESTABLISHED);
}

static void
pair_free(struct pair *p)
{
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(p->ca), 0);
	if (p->cb != NULL)
		CU_ASSERT_EQUAL(dpdat_cm_conn_free(p->cb), 0);
	CU_ASSERT_EQUAL(dpdat_qp_free(p->qa), 0);
	CU_ASSERT_EQUAL(dpdat_qp_free(p->qb), 0);
	CU_ASSERT_EQUAL(dpdat_cm_listen_free(p->l), 0);
	run(20);
	drain_cqs();
}

/* ---- the state machine ---- */

static void
test_connect_accept(void)
{
	static const char req_pd[] = "from A", rep_pd[] = "B says yes";
	struct dpdat_qp_info ia, ib;
	struct dpdat_cm_event ev;
	struct pair p;

	request(&p, 4721, req_pd, sizeof(req_pd));
	CU_ASSERT_EQUAL_FATAL(dpdat_cm_accept(p.cb, p.qb, rep_pd,
					      sizeof(rep_pd), eb), 0);
	CU_ASSERT_PTR_EQUAL(dpdat_cm_conn_qp(p.cb), p.qb);
	CU_ASSERT_EQUAL_FATAL(cm_next(ea, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	CU_ASSERT_PTR_EQUAL(ev.conn, p.ca);
	CU_ASSERT_EQUAL(memcmp(ev.private_data, rep_pd, sizeof(rep_pd)), 0);
	CU_ASSERT_EQUAL_FATAL(cm_next(eb, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	CU_ASSERT_PTR_EQUAL(ev.conn, p.cb);
	CU_ASSERT_PTR_EQUAL(dpdat_cm_conn_qp(p.ca), p.qa);
	/* both QPs ready to send, at the MTU both agreed */
	CU_ASSERT_EQUAL(dpdat_qp_query(p.qa, &ia), 0);
	CU_ASSERT_EQUAL(dpdat_qp_query(p.qb, &ib), 0);
	CU_ASSERT_EQUAL(ia.state, DPDAT_QPS_RTS);
	CU_ASSERT_EQUAL(ib.state, DPDAT_QPS_RTS);
	CU_ASSERT_EQUAL(ia.pmtu, ib.pmtu);
	/* one event each, no more */
	CU_ASSERT(quiet(ea) && quiet(eb));
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.ca, NULL, 0), 0);
	CU_ASSERT_EQUAL(cm_next(eb, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	CU_ASSERT_EQUAL(cm_next(ea, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	pair_free(&p);
}

/* Either end may end it; the other sees the private data of the DREQ. */
static void
test_disconnect_both_ways(void)
{
	static const char bye[] = "goodbye from the passive side";
	struct dpdat_cm_event ev;
	struct dpdat_qp_info qi;
	struct pair p;

	for (int from_b = 0; from_b < 2; from_b++) {
		struct dpdat_cm_conn *me, *peer;
		struct dpdat_cm_eq *my_eq, *peer_eq;

		establish(&p, 4722);
		me = from_b ? p.cb : p.ca;
		peer = from_b ? p.ca : p.cb;
		my_eq = from_b ? eb : ea;
		peer_eq = from_b ? ea : eb;
		CU_ASSERT_EQUAL(dpdat_cm_disconnect(me, bye, sizeof(bye)), 0);
		/* the caller's QP is in error at once (work flushed) */
		dpdat_qp_query(from_b ? p.qb : p.qa, &qi);
		CU_ASSERT_EQUAL(qi.state, DPDAT_QPS_ERR);
		CU_ASSERT_EQUAL(cm_next(peer_eq, &ev, ITERS),
				DPDAT_CM_DISCONNECTED);
		CU_ASSERT_PTR_EQUAL(ev.conn, peer);
		CU_ASSERT(ev.private_data_len >= sizeof(bye));
		CU_ASSERT_EQUAL(memcmp(ev.private_data, bye, sizeof(bye)), 0);
		CU_ASSERT_EQUAL(cm_next(my_eq, &ev, ITERS),
				DPDAT_CM_DISCONNECTED);
		CU_ASSERT_PTR_EQUAL(ev.conn, me);
		/* once closed: no second disconnect */
		CU_ASSERT_EQUAL(dpdat_cm_disconnect(me, NULL, 0), -EBUSY);
		CU_ASSERT_EQUAL(dpdat_cm_disconnect(peer, NULL, 0), -EBUSY);
		CU_ASSERT(quiet(ea) && quiet(eb));
		pair_free(&p);
	}
}

static void
test_reject(void)
{
	uint8_t pd[DPDAT_CM_REJ_PDATA_MAX];
	struct dpdat_cm_event ev;
	struct pair p;

	for (unsigned int i = 0; i < sizeof(pd); i++)
		pd[i] = (uint8_t)(0x80 ^ i);
	request(&p, 4723, "may I", 5);
	CU_ASSERT_EQUAL(dpdat_cm_reject(p.cb, pd, sizeof(pd)), 0);
	/* a decision is made once */
	CU_ASSERT_EQUAL(dpdat_cm_reject(p.cb, NULL, 0), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, p.qb, NULL, 0, eb), -EBUSY);
	CU_ASSERT_EQUAL_FATAL(cm_next(ea, &ev, ITERS), DPDAT_CM_REJECTED);
	CU_ASSERT_PTR_EQUAL(ev.conn, p.ca);
	CU_ASSERT_EQUAL(ev.reason, DPDAT_CM_REJ_CONSUMER);
	CU_ASSERT_EQUAL(ev.private_data_len, sizeof(pd));
	CU_ASSERT_EQUAL(memcmp(ev.private_data, pd, sizeof(pd)), 0);
	CU_ASSERT(quiet(ea) && quiet(eb));
	pair_free(&p);
}

/* The next event of eq within ms milliseconds of engine runs: its type,
 * or 0. */
static int
cm_next_ms(struct dpdat_cm_eq *eq, struct dpdat_cm_event *ev, unsigned int ms)
{
	const uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * ms;

	while (rte_get_tsc_cycles() < end) {
		if (dpdat_cm_eq_poll(eq, ev) == 1)
			return (int)ev->type;
		run(1);
	}
	return 0;
}

/* Nobody listens there: the REQ is answered with a REJ, invalid service,
 * taken for final after the REQ went 4 times (0.7 s: a listener may be
 * moments away). */
static void
test_no_listener(void)
{
	static const uint64_t quals[] = { 4799, 0x123456789ull };
	struct dpdat_cm_event ev;

	for (size_t i = 0; i < RTE_DIM(quals); i++) {
		struct dpdat_qp *qa = qp_on(&A);
		struct dpdat_cm_conn *ca;
		uint64_t t0 = rte_get_tsc_cycles();

		ca = dpdat_cm_connect(qa, B.pi.ipv4, quals[i], "x", 1, ea);
		CU_ASSERT_FATAL(ca != NULL);
		CU_ASSERT_EQUAL(dpdat_cm_conn_free(ca), -EBUSY);
		CU_ASSERT_EQUAL_FATAL(cm_next_ms(ea, &ev, 5000),
				      DPDAT_CM_REJECTED);
		/* not before the fourth REQ, 0.7 s on */
		CU_ASSERT(rte_get_tsc_cycles() - t0 >=
			  rte_get_tsc_hz() / 1000 * 650);
		CU_ASSERT_PTR_EQUAL(ev.conn, ca);
		CU_ASSERT_EQUAL(ev.reason, DPDAT_CM_REJ_INVALID_SERVICE);
		CU_ASSERT(quiet(eb));
		CU_ASSERT_EQUAL(dpdat_cm_conn_free(ca), 0);
		CU_ASSERT_EQUAL(dpdat_qp_free(qa), 0);
	}
	run(20);
}

/* A REQ that arrives before its listener is there gets "nobody listens";
 * the REQ goes again, and once the listener is up it is a request like
 * any other. An unmodified dtestx connects so (its server tells the
 * client its address, then creates its PSP): it failed between
 * namespaces on a loaded machine when the first REJ was final. */
static void
test_listener_late(void)
{
	struct dpdat_cm_event ev;
	struct pair p = { 0 };

	p.qa = qp_on(&A);
	p.qb = qp_on(&B);
	p.ca = dpdat_cm_connect(p.qa, B.pi.ipv4, 4798, "early", 5, ea);
	CU_ASSERT_FATAL(p.ca != NULL);
	/* the first REQ's REJ is in: no event for it */
	CU_ASSERT_EQUAL(cm_next_ms(ea, &ev, 50), 0);
	p.l = dpdat_cm_listen(B.dev, 4798, eb);
	CU_ASSERT_FATAL(p.l != NULL);
	CU_ASSERT_EQUAL_FATAL(cm_next_ms(eb, &ev, 2000),
			      DPDAT_CM_CONNECT_REQUEST);
	p.cb = ev.conn;
	CU_ASSERT(ev.private_data_len >= 5 &&
		  memcmp(ev.private_data, "early", 5) == 0);
	CU_ASSERT_EQUAL_FATAL(dpdat_cm_accept(p.cb, p.qb, NULL, 0, eb), 0);
	CU_ASSERT_EQUAL_FATAL(cm_next_ms(ea, &ev, 2000), DPDAT_CM_ESTABLISHED);
	CU_ASSERT_EQUAL_FATAL(cm_next_ms(eb, &ev, 2000), DPDAT_CM_ESTABLISHED);
	CU_ASSERT(quiet(ea) && quiet(eb));
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.ca, NULL, 0), 0);
	CU_ASSERT_EQUAL(cm_next(eb, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	CU_ASSERT_EQUAL(cm_next(ea, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	pair_free(&p);
}

/* The CM attribute of a QP1 frame, or 0; its message in msg. */
static uint16_t
mad_of(const struct rte_mbuf *m, uint8_t *msg)
{
	struct roce_bth bth;
	uint8_t mad[CM_MAD_LEN];

	if (rte_pktmbuf_pkt_len(m) < PORT_HDR_LEN + sizeof(bth) + 8 +
				     CM_MAD_LEN)
		return 0;
	rc_mbuf_copy(m, PORT_HDR_LEN, (uint8_t *)&bth, sizeof(bth));
	if (roce_bth_qpn(&bth) != ROCE_QP1)
		return 0;
	rc_mbuf_copy(m, PORT_HDR_LEN + sizeof(bth) + 8, mad, sizeof(mad));
	if (msg != NULL)
		memcpy(msg, mad + CM_HDR_LEN, CM_MAD_LEN - CM_HDR_LEN);
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

/* Run A's engine and B's until A's REQ goes by; a copy of it. */
static struct rte_mbuf *
catch_req(uint8_t *msg)
{
	struct rte_mbuf *pkts[32], *copy = NULL;
	unsigned int n, k;

	for (int i = 0; i < ITERS && copy == NULL; i++) {
		dpdat_dev_progress(A.dev);
		n = rte_ring_dequeue_burst(a2b, (void **)pkts, RTE_DIM(pkts),
					   NULL);
		for (k = 0; k < n; k++)
			if (copy == NULL && mad_of(pkts[k], msg) == CM_ATTR_REQ)
				copy = rte_pktmbuf_copy(pkts[k],
					pkts[k]->pool, 0, UINT32_MAX);
		CU_ASSERT(rte_ring_enqueue_bulk(a2b, (void **)pkts, n,
						NULL) == n);
		dpdat_dev_progress(B.dev);
	}
	return copy;
}

/* How many frames of attr B sends within a few rounds; they go on to A,
 * or, with drop, are dropped (B's own offers must not reach A). */
static int
b_count(uint16_t attr, bool drop)
{
	struct rte_mbuf *pkts[32];
	unsigned int n, k;
	int found = 0;

	for (int i = 0; i < 20; i++) {
		dpdat_dev_progress(B.dev);
		n = rte_ring_dequeue_burst(b2a, (void **)pkts, RTE_DIM(pkts),
					   NULL);
		for (k = 0; k < n; k++) {
			found += mad_of(pkts[k], NULL) == attr;
			if (drop)
				rte_pktmbuf_free(pkts[k]);
		}
		if (!drop)
			CU_ASSERT(rte_ring_enqueue_bulk(b2a, (void **)pkts, n,
							NULL) == n);
		dpdat_dev_progress(A.dev);
	}
	return found;
}

static int
b_sends(uint16_t attr)
{
	return b_count(attr, false);
}

static void
inject_b(struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

	CU_ASSERT_FATAL(c != NULL);
	rc_lock_engine(rc_dev(B.dev));
	dev_dispatch(B.dev, c);		/* takes c */
	rc_unlock_engine(rc_dev(B.dev));
}

/* A REQ that comes twice (the requester's retry crossed our answer) is
 * one connection: while the consumer decides it gets an MRA, once
 * accepted the REP again, and never a second CONNECT_REQUEST. The REQ's
 * fields are where IBTA puts them, with A's QP in them. */
static void
test_duplicate_req(void)
{
	uint8_t msg[CM_MAD_LEN - CM_HDR_LEN];
	struct dpdat_qp_info ia;
	struct dpdat_cm_event ev;
	struct rte_mbuf *req;
	struct pair p = { 0 };

	p.l = dpdat_cm_listen(B.dev, 4724, eb);
	CU_ASSERT_FATAL(p.l != NULL);
	p.qa = qp_on(&A);
	p.qb = qp_on(&B);
	p.ca = dpdat_cm_connect(p.qa, B.pi.ipv4, 4724, "dup", 3, ea);
	CU_ASSERT_FATAL(p.ca != NULL);
	req = catch_req(msg);
	CU_ASSERT_FATAL(req != NULL);
	dpdat_qp_query(p.qa, &ia);
	CU_ASSERT_EQUAL(cm_get64(msg, 8), 0x0000000001060000ull | 4724);
	CU_ASSERT_EQUAL(cm_get32(msg, 32) >> 8, ia.qpn);
	CU_ASSERT_EQUAL(cm_get32(msg, 44) >> 8, ia.sq_psn);
	CU_ASSERT_EQUAL(memcmp(msg + 140 + CM_IP_HDR_LEN, "dup", 3), 0);
	CU_ASSERT_EQUAL_FATAL(cm_next(eb, &ev, ITERS), DPDAT_CM_CONNECT_REQUEST);
	p.cb = ev.conn;
	/* deciding: the copy gets an MRA, no event */
	inject_b(req);
	CU_ASSERT(b_sends(CM_ATTR_MRA) >= 1);
	CU_ASSERT(quiet(eb));
	/* accepted, RTU not yet seen: the copy gets the REP again */
	CU_ASSERT_EQUAL_FATAL(dpdat_cm_accept(p.cb, p.qb, NULL, 0, eb), 0);
	inject_b(req);
	CU_ASSERT(b_sends(CM_ATTR_REP) >= 1);
	CU_ASSERT_EQUAL(cm_next(ea, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	CU_ASSERT_EQUAL(cm_next(eb, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	/* established: a late copy changes nothing */
	inject_b(req);
	CU_ASSERT(quiet(ea) && quiet(eb));
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.cb, NULL, 0), 0);
	CU_ASSERT_EQUAL(cm_next(ea, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	CU_ASSERT_EQUAL(cm_next(eb, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	rte_pktmbuf_free(req);
	pair_free(&p);
}

/* Run B's engine and A's until B sends attr; its message in msg. */
static int
b_catch(uint16_t attr, uint8_t *msg)
{
	struct rte_mbuf *pkts[32];
	unsigned int n, k;
	int found = 0;

	for (int i = 0; i < ITERS && !found; i++) {
		dpdat_dev_progress(B.dev);
		n = rte_ring_dequeue_burst(b2a, (void **)pkts, RTE_DIM(pkts),
					   NULL);
		for (k = 0; k < n; k++)
			if (!found && mad_of(pkts[k], msg) == attr)
				found = 1;
		CU_ASSERT(rte_ring_enqueue_bulk(b2a, (void **)pkts, n,
						NULL) == n);
		dpdat_dev_progress(A.dev);
	}
	return found;
}

/* A copy of A's frame req (to B, from A's address) made into a CM message
 * attr with the two comm IDs, its ICRC right: what a third host sending in
 * A's name would put on the wire. */
static void
forge_b(const struct rte_mbuf *req, uint16_t attr, uint64_t tid,
	uint32_t local_id, uint32_t remote_id)
{
	struct rte_mbuf *m = rte_pktmbuf_copy(req, req->pool, 0, UINT32_MAX);
	const unsigned int mad = PORT_HDR_LEN + sizeof(struct roce_bth) + 8;
	uint8_t *f;
	uint32_t c;

	CU_ASSERT_FATAL(m != NULL && rte_pktmbuf_is_contiguous(m));
	f = rte_pktmbuf_mtod(m, uint8_t *);
	memset(f + mad + CM_HDR_LEN, 0, CM_MAD_LEN - CM_HDR_LEN);
	cm_put64(f + mad, 8, tid);
	f[mad + 16] = (uint8_t)(attr >> 8);
	f[mad + 17] = (uint8_t)attr;
	cm_put32(f + mad + CM_HDR_LEN, 0, local_id);
	cm_put32(f + mad + CM_HDR_LEN, 4, remote_id);
	c = roce_icrc(f + sizeof(struct rte_ether_hdr),
		      rte_pktmbuf_pkt_len(m) - sizeof(struct rte_ether_hdr) - 4);
	memcpy(f + rte_pktmbuf_pkt_len(m) - 4, &c, 4);	/* little endian */
	rc_lock_engine(rc_dev(B.dev));
	dev_dispatch(B.dev, m);		/* takes m */
	rc_unlock_engine(rc_dev(B.dev));
}

/* A third host that sends in the peer's name (its address, forged) and
 * knows one comm ID, or guesses: a DREQ, DREP, RTU or REJ must name both
 * ends' comm IDs to count, as IBTA 12.6 matches them; comm IDs are not
 * handed out in sequence (a stranger told one by a REJ guessed the next
 * connection's in a few tries, hostile-netns.sh's cm-predict). */
static void
test_forged_ids(void)
{
	uint8_t msg[CM_MAD_LEN - CM_HDR_LEN], rep[CM_MAD_LEN - CM_HDR_LEN];
	struct dpdat_cm_event ev;
	struct dpdat_qp_info qi;
	struct rte_mbuf *req;
	uint32_t a_id, b_id, b_id2;
	struct pair p = { 0 }, q = { 0 };

	p.l = dpdat_cm_listen(B.dev, 4726, eb);
	CU_ASSERT_FATAL(p.l != NULL);
	p.qa = qp_on(&A);
	p.qb = qp_on(&B);
	p.ca = dpdat_cm_connect(p.qa, B.pi.ipv4, 4726, "ids", 3, ea);
	CU_ASSERT_FATAL(p.ca != NULL);
	req = catch_req(msg);
	CU_ASSERT_FATAL(req != NULL);
	a_id = cm_get32(msg, REQ_LOCAL_ID);
	CU_ASSERT_EQUAL_FATAL(cm_next(eb, &ev, ITERS), DPDAT_CM_CONNECT_REQUEST);
	p.cb = ev.conn;
	CU_ASSERT_EQUAL_FATAL(dpdat_cm_accept(p.cb, p.qb, NULL, 0, eb), 0);
	CU_ASSERT_FATAL(b_catch(CM_ATTR_REP, rep));
	b_id = cm_get32(rep, REP_LOCAL_ID);
	CU_ASSERT_EQUAL(cm_get32(rep, REP_REMOTE_ID), a_id);
	CU_ASSERT_EQUAL_FATAL(cm_next(ea, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	CU_ASSERT_EQUAL_FATAL(cm_next(eb, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	/* B's comm ID with a guessed one for A: nothing happens */
	for (uint32_t g = 1; g <= 64; g++) {
		forge_b(req, CM_ATTR_DREQ, g, a_id + g, b_id);
		forge_b(req, CM_ATTR_DREP, g, a_id - g, b_id);
		forge_b(req, CM_ATTR_REJ, g, a_id ^ g, b_id);
	}
	CU_ASSERT(quiet(eb) && quiet(ea));
	dpdat_qp_query(p.qb, &qi);
	CU_ASSERT_EQUAL(qi.state, DPDAT_QPS_RTS);
	/* the next connection's comm ID is no neighbour of this one's */
	q.l = p.l;
	q.qa = qp_on(&A);
	q.qb = qp_on(&B);
	q.ca = dpdat_cm_connect(q.qa, B.pi.ipv4, 4726, "ids", 3, ea);
	CU_ASSERT_FATAL(q.ca != NULL);
	CU_ASSERT_EQUAL_FATAL(cm_next(eb, &ev, ITERS), DPDAT_CM_CONNECT_REQUEST);
	q.cb = ev.conn;
	CU_ASSERT_EQUAL_FATAL(dpdat_cm_accept(q.cb, q.qb, NULL, 0, eb), 0);
	CU_ASSERT_FATAL(b_catch(CM_ATTR_REP, rep));
	b_id2 = cm_get32(rep, REP_LOCAL_ID);
	CU_ASSERT(b_id2 - b_id > 1024 && b_id - b_id2 > 1024);
	CU_ASSERT_EQUAL(cm_next(ea, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	CU_ASSERT_EQUAL(cm_next(eb, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	/* both IDs right: that is the peer (or an on-path host) */
	forge_b(req, CM_ATTR_DREQ, 1, a_id, b_id);
	CU_ASSERT_EQUAL(cm_next(eb, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	CU_ASSERT_PTR_EQUAL(ev.conn, p.cb);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.ca, NULL, 0), 0);
	CU_ASSERT_EQUAL(cm_next(ea, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	CU_ASSERT_PTR_EQUAL(ev.conn, p.ca);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(q.cb, NULL, 0), 0);
	CU_ASSERT_EQUAL(cm_next(ea, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	CU_ASSERT_EQUAL(cm_next(eb, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	rte_pktmbuf_free(req);
	q.l = NULL;
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(q.ca), 0);
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(q.cb), 0);
	CU_ASSERT_EQUAL(dpdat_qp_free(q.qa), 0);
	CU_ASSERT_EQUAL(dpdat_qp_free(q.qb), 0);
	pair_free(&p);
}

/* ---- in-band offers (dpdat_cm_offer) ---- */

static bool
rides(struct dpdat_qp *qp)
{
	struct dpdat_qp_info qi;

	CU_ASSERT_FATAL(dpdat_qp_query(qp, &qi) == 0);
	return (qi.ext & DPDAT_QP_EXT_ACK_RIDE) != 0;
}

/* Both QPs ride within iters rounds of both engines. */
static bool
agreed(int iters)
{
	for (int i = 0; i < iters; i++) {
		if (rides(A.qp) && rides(B.qp))
			return true;
		run(1);
	}
	return false;
}

/* Both engines for ms milliseconds, a round every millisecond: the
 * offers' retries go out. */
static void
run_ms(int ms)
{
	for (int i = 0; i < ms; i++) {
		run(1);
		rte_delay_us_block(1000);
	}
}

/* A ping-pong of WRITEs, rounds of A's WRITE and B's answer, every byte
 * checked; B's WRITEs complete by the next round's (their ACKs may be
 * held for it) or, the last, once the hold is over. */
static void
write_pingpong(int rounds)
{
	struct dpdat_wc wc;
	int b_done = 0;

	for (int i = 0; i < rounds; i++) {
		memset(A.buf, 'a' + i, 8);
		memset(B.buf, 'A' + i, 8);
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 8,
				     (uintptr_t)B.buf + 8192, B.key) == 0);
		dpdat_dev_progress(A.dev);
		dpdat_dev_progress(B.dev);
		CU_ASSERT(memcmp(B.buf + 8192, A.buf, 8) == 0);
		CU_ASSERT_FATAL(post(&B, DPDAT_WR_RDMA_WRITE, 0, 8,
				     (uintptr_t)A.buf + 8192, A.key) == 0);
		dpdat_dev_progress(B.dev);
		dpdat_dev_progress(A.dev);
		CU_ASSERT(memcmp(A.buf + 8192, B.buf, 8) == 0);
		CU_ASSERT_FATAL(wait_wc(&A, &wc, 1000) == 0);
		CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
		while (dpdat_cq_poll(B.cq, &wc, 1) == 1) {
			CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
			b_done++;
		}
	}
	rc_dev(A.dev)->ack_hold_tsc = rc_dev(B.dev)->ack_hold_tsc = 0;
	while (b_done < rounds && wait_wc(&B, &wc, 1000) == 0) {
		CU_ASSERT_EQUAL(wc.status, DPDAT_WC_SUCCESS);
		b_done++;
	}
	CU_ASSERT_EQUAL(b_done, rounds);
}

/* QPs connected out of band (as verbs programs do) that both offer agree
 * on riding ACKs in band, and a ping-pong's ACKs then ride. */
static void
test_offer_agree(void)
{
	struct dpdat_qp_stats sa, sb;
	const uint64_t hold = rc_dev(A.dev)->ack_hold_tsc;

	connect_pair(1024, 14);
	CU_ASSERT(!rides(A.qp) && !rides(B.qp));
	CU_ASSERT_EQUAL(dpdat_cm_offer(A.qp), 0);
	CU_ASSERT_EQUAL(dpdat_cm_offer(A.qp), 0);	/* one offer */
	CU_ASSERT_EQUAL(dpdat_cm_offer(B.qp), 0);
	CU_ASSERT_FATAL(agreed(1000));
	rc_dev(A.dev)->ack_hold_tsc = rc_dev(B.dev)->ack_hold_tsc = rte_get_tsc_hz() / 10;
	write_pingpong(4);	/* ends with no hold */
	rc_dev(A.dev)->ack_hold_tsc = rc_dev(B.dev)->ack_hold_tsc = hold;
	dpdat_qp_stats(A.qp, &sa);
	dpdat_qp_stats(B.qp, &sb);
	CU_ASSERT(sa.acks_ridden + sb.acks_ridden >= 3);
	CU_ASSERT_EQUAL(sa.acks_ridden, sb.acks_ridden_rcvd);
	CU_ASSERT_EQUAL(sb.acks_ridden, sa.acks_ridden_rcvd);
	drain_cqs();
	disconnect_pair();
}

/* A QP that does not offer never agrees: the peer's offers (all its
 * tries) are dropped and the pair speaks plain RoCEv2, data intact. When
 * it offers later, the peer, done with its own tries, answers. */
static void
test_offer_one_side(void)
{
	struct dpdat_qp_stats sa, sb;

	connect_pair(1024, 14);
	CU_ASSERT_EQUAL(dpdat_cm_offer(A.qp), 0);
	run_ms(50);
	CU_ASSERT(!rides(A.qp) && !rides(B.qp));
	write_pingpong(3);
	dpdat_qp_stats(A.qp, &sa);
	dpdat_qp_stats(B.qp, &sb);
	CU_ASSERT_EQUAL(sa.acks_ridden + sb.acks_ridden, 0);
	CU_ASSERT_EQUAL(dpdat_cm_offer(B.qp), 0);
	CU_ASSERT(agreed(1000));
	drain_cqs();
	disconnect_pair();
}

/* An offer counts only from the QP's peer, naming the QP it is connected
 * to and the receiver's first PSN: one with another source QPN (a third
 * QP of the peer's host, or a forger's guess) or a wrong PSN is dropped. */
static void
test_offer_wrong_qp(void)
{
	struct rte_mbuf *pkts[32], *m;
	const unsigned int mad = PORT_HDR_LEN + sizeof(struct roce_bth) + 8;
	unsigned int n, k;
	struct dpdat_qp_info qi, qb;
	uint8_t *f;
	uint32_t c;

	connect_pair(1024, 14);
	CU_ASSERT_EQUAL(dpdat_cm_offer(A.qp), 0);
	CU_ASSERT_EQUAL(dpdat_cm_offer(B.qp), 0);
	/* A's offer, caught before B sees it; B's own are dropped */
	m = NULL;
	for (int i = 0; i < 100 && m == NULL; i++) {
		dpdat_dev_progress(A.dev);
		n = rte_ring_dequeue_burst(a2b, (void **)pkts, RTE_DIM(pkts),
					   NULL);
		for (k = 0; k < n; k++) {
			if (m == NULL && mad_of(pkts[k], NULL) ==
					 CM_ATTR_EXT_OFFER)
				m = pkts[k];
			else
				rte_pktmbuf_free(pkts[k]);
		}
	}
	CU_ASSERT_FATAL(m != NULL && rte_pktmbuf_is_contiguous(m));
	rte_ring_reset(b2a);
	f = rte_pktmbuf_mtod(m, uint8_t *);
	dpdat_qp_query(A.qp, &qi);
	CU_ASSERT_EQUAL(cm_get32(f + mad + CM_HDR_LEN, OFFER_SRC_QPN), qi.qpn);
	cm_put32(f + mad + CM_HDR_LEN, OFFER_SRC_QPN, qi.qpn ^ 1);
	c = roce_icrc(f + sizeof(struct rte_ether_hdr),
		      rte_pktmbuf_pkt_len(m) - sizeof(struct rte_ether_hdr) - 4);
	memcpy(f + rte_pktmbuf_pkt_len(m) - 4, &c, 4);	/* little endian */
	inject_b(m);
	dpdat_dev_progress(B.dev);
	CU_ASSERT(!rides(B.qp));
	CU_ASSERT_EQUAL(b_count(CM_ATTR_EXT_ANSWER, true), 0);
	/* the QPNs right, B's first PSN wrong (a forger's guess): dropped */
	dpdat_qp_query(B.qp, &qb);
	cm_put32(f + mad + CM_HDR_LEN, OFFER_SRC_QPN, qi.qpn);
	CU_ASSERT_EQUAL(cm_get32(f + mad + CM_HDR_LEN, OFFER_DST_PSN),
			qb.sq_psn);
	cm_put32(f + mad + CM_HDR_LEN, OFFER_DST_PSN,
		 (qb.sq_psn + 1) & ROCE_PSN_MASK);
	c = roce_icrc(f + sizeof(struct rte_ether_hdr),
		      rte_pktmbuf_pkt_len(m) - sizeof(struct rte_ether_hdr) - 4);
	memcpy(f + rte_pktmbuf_pkt_len(m) - 4, &c, 4);
	inject_b(m);
	dpdat_dev_progress(B.dev);
	CU_ASSERT(!rides(B.qp));
	CU_ASSERT_EQUAL(b_count(CM_ATTR_EXT_ANSWER, true), 0);
	/* the right one is answered */
	cm_put32(f + mad + CM_HDR_LEN, OFFER_DST_PSN, qb.sq_psn);
	c = roce_icrc(f + sizeof(struct rte_ether_hdr),
		      rte_pktmbuf_pkt_len(m) - sizeof(struct rte_ether_hdr) - 4);
	memcpy(f + rte_pktmbuf_pkt_len(m) - 4, &c, 4);
	inject_b(m);
	CU_ASSERT(rides(B.qp));
	CU_ASSERT_EQUAL(b_sends(CM_ATTR_EXT_ANSWER), 1);
	CU_ASSERT(agreed(1000));
	rte_pktmbuf_free(m);
	disconnect_pair();
}

static void
test_errors_offer(void)
{
	struct dpdat_qp *qp = qp_on(&A);

	CU_ASSERT_EQUAL(dpdat_cm_offer(NULL), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_offer((struct dpdat_qp *)junk), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_offer(qp), -EINVAL);	/* not connected */
	CU_ASSERT_EQUAL(dpdat_qp_free(qp), 0);
	connect_pair(1024, 14);
	rc_dev(A.dev)->go_back_n = true;
	CU_ASSERT_EQUAL(dpdat_cm_offer(A.qp), -ENOTSUP);
	rc_dev(A.dev)->go_back_n = false;
	disconnect_pair();
}

/* ---- error codes, as the man pages name them ---- */

static void
test_errors_eq(void)
{
	struct dpdat_cm_event ev;
	struct dpdat_cm_eq *bad = (struct dpdat_cm_eq *)junk, *eq;
	struct dpdat_cm_listener *l;

	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_eq_create(NULL, 8));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_eq_create((struct dpdat_dev *)junk, 8));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_eq_create(A.dev, 0));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_eq_create(A.dev, 65537));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);

	CU_ASSERT_EQUAL(dpdat_cm_eq_poll(NULL, &ev), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_eq_poll(bad, &ev), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_eq_poll(ea, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_cm_eq_wait(NULL, &ev, 0), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_eq_wait(bad, &ev, 0), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_eq_wait(ea, NULL, 0), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_cm_eq_wait(ea, &ev, 0), 0);

	eq = dpdat_cm_eq_create(A.dev, 8);
	CU_ASSERT_FATAL(eq != NULL);
	l = dpdat_cm_listen(A.dev, 4730, eq);
	CU_ASSERT_FATAL(l != NULL);
	CU_ASSERT_EQUAL(dpdat_cm_eq_free(eq), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_listen_free(l), 0);
	CU_ASSERT_EQUAL(dpdat_cm_eq_free(eq), 0);
	CU_ASSERT_EQUAL(dpdat_cm_eq_free(NULL), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_eq_free(bad), -EBADF);
}

static void
test_errors_listen(void)
{
	struct dpdat_cm_listener *l;

	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_listen(NULL, 4731, ea));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_listen(A.dev, 4731, NULL));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_listen(A.dev, 4731, eb));	/* B's eq */
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_listen(A.dev, 4731,
					   (struct dpdat_cm_eq *)junk));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	l = dpdat_cm_listen(A.dev, 4731, ea);
	CU_ASSERT_FATAL(l != NULL);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_cm_listen(A.dev, 4731, ea));
	CU_ASSERT_EQUAL(rte_errno, EADDRINUSE);
	/* the same service on the other device is another address */
	{
		struct dpdat_cm_listener *lb = dpdat_cm_listen(B.dev, 4731, eb);

		CU_ASSERT_PTR_NOT_NULL(lb);
		CU_ASSERT_EQUAL(dpdat_cm_listen_free(lb), 0);
	}
	CU_ASSERT_EQUAL(dpdat_cm_listen_free(l), 0);
	CU_ASSERT_EQUAL(dpdat_cm_listen_free(NULL), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_listen_free(
		(struct dpdat_cm_listener *)junk), -EBADF);
}

static void
test_errors_connect(void)
{
	uint8_t pd[DPDAT_CM_REQ_PDATA_MAX + 1] = { 0 };
	struct dpdat_qp *qa = qp_on(&A);

#define CONNECT_FAILS(qp, qual, p, n, eq, err) do {			\
		rte_errno = 0;						\
		CU_ASSERT_PTR_NULL(dpdat_cm_connect(qp, B.pi.ipv4, qual,	\
						    p, n, eq));		\
		CU_ASSERT_EQUAL(rte_errno, err);			\
	} while (0)
	CONNECT_FAILS(NULL, 4732, NULL, 0, ea, EBADF);
	CONNECT_FAILS((struct dpdat_qp *)junk, 4732, NULL, 0, ea, EBADF);
	CONNECT_FAILS(qa, 4732, NULL, 0, NULL, EBADF);
	CONNECT_FAILS(qa, 4732, NULL, 0, eb, EBADF);	/* B's eq, A's QP */
	CONNECT_FAILS(qa, 0x100000, pd, DPDAT_CM_REQ_PDATA_MAX + 1, ea,
		      EINVAL);
	CONNECT_FAILS(qa, 4732, pd, DPDAT_CM_REQ_PDATA_MAX_IP + 1, ea,
		      EINVAL);
	CONNECT_FAILS(qa, 0x100000, NULL, 4, ea, EINVAL);
	CU_ASSERT_EQUAL(dpdat_qp_free(qa), 0);
	/* a QP already connected (out of band) */
	connect_pair(1024, 14);
	CONNECT_FAILS(A.qp, 4732, NULL, 0, ea, EINVAL);
	disconnect_pair();
#undef CONNECT_FAILS
}

static void
test_errors_conn(void)
{
	uint8_t pd[DPDAT_CM_DREQ_PDATA_MAX + 1] = { 0 };
	struct dpdat_cm_conn *bad = (struct dpdat_cm_conn *)junk;
	struct dpdat_qp *other;
	struct dpdat_cm_event ev;
	struct pair p;

	CU_ASSERT_EQUAL(dpdat_cm_accept(NULL, NULL, NULL, 0, eb), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_accept(bad, NULL, NULL, 0, eb), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_reject(NULL, NULL, 0), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_reject(bad, NULL, 0), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(NULL, NULL, 0), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(bad, NULL, 0), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(NULL), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(bad), -EBADF);
	CU_ASSERT_PTR_NULL(dpdat_cm_conn_qp(NULL));
	CU_ASSERT_PTR_NULL(dpdat_cm_conn_qp(bad));

	/* a pending request */
	request(&p, 4733, NULL, 0);
	other = qp_on(&A);			/* a QP of the other device */
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, NULL, NULL, 0, eb), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, other, NULL, 0, eb), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, p.qb, NULL, 0, ea), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, p.qb, NULL, 0, NULL), -EBADF);
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, p.qb, pd,
					DPDAT_CM_REP_PDATA_MAX + 1, eb), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, p.qb, NULL, 1, eb), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_cm_reject(p.cb, pd, DPDAT_CM_REJ_PDATA_MAX + 1),
			-EINVAL);
	CU_ASSERT_EQUAL(dpdat_cm_reject(p.cb, NULL, 1), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.cb, NULL, 0), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.ca, NULL, 0), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(p.ca), -EBUSY);	/* connecting */
	/* a QP already connected cannot take it */
	CU_ASSERT_EQUAL(dpdat_qp_free(other), 0);
	connect_pair(1024, 14);
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, B.qp, NULL, 0, eb), -EBUSY);
	disconnect_pair();
	/* still pending after all those: it can be accepted */
	CU_ASSERT_EQUAL_FATAL(dpdat_cm_accept(p.cb, p.qb, NULL, 0, eb), 0);
	CU_ASSERT_EQUAL_FATAL(cm_next(ea, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	CU_ASSERT_EQUAL_FATAL(cm_next(eb, &ev, ITERS), DPDAT_CM_ESTABLISHED);
	/* established */
	CU_ASSERT_EQUAL(dpdat_cm_accept(p.cb, p.qb, NULL, 0, eb), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_reject(p.cb, NULL, 0), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_reject(p.ca, NULL, 0), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(p.ca), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(p.cb), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.ca, pd,
					    DPDAT_CM_DREQ_PDATA_MAX + 1), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.ca, NULL, 1), -EINVAL);
	/* the event queue in use by the connections */
	CU_ASSERT_EQUAL(dpdat_cm_eq_free(ea), -EBUSY);
	CU_ASSERT_EQUAL(dpdat_cm_disconnect(p.ca, pd,
					    DPDAT_CM_DREQ_PDATA_MAX), 0);
	CU_ASSERT_EQUAL(cm_next(eb, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	CU_ASSERT_EQUAL(cm_next(ea, &ev, ITERS), DPDAT_CM_DISCONNECTED);
	pair_free(&p);
}

/* A request the consumer frees instead of answering is rejected. */
static void
test_free_request_rejects(void)
{
	struct dpdat_cm_event ev;
	struct pair p;

	request(&p, 4734, NULL, 0);
	CU_ASSERT_EQUAL(dpdat_cm_conn_free(p.cb), 0);
	p.cb = NULL;
	CU_ASSERT_EQUAL_FATAL(cm_next(ea, &ev, ITERS), DPDAT_CM_REJECTED);
	CU_ASSERT_EQUAL(ev.reason, DPDAT_CM_REJ_CONSUMER);
	pair_free(&p);
}

static CU_TestInfo cm_tests[] = {
	{ "connect, accept, established on both ends", test_connect_accept },
	{ "disconnect from either end", test_disconnect_both_ways },
	{ "reject with private data", test_reject },
	{ "REQ to a service nobody listens on", test_no_listener },
	{ "REQ before its listener: asked again, connected", test_listener_late },
	{ "a REQ twice is one connection", test_duplicate_req },
	{ "forged CM messages need both comm IDs", test_forged_ids },
	{ "a request freed unanswered is rejected", test_free_request_rejects },
	{ "in-band offer: both offer, ACKs ride", test_offer_agree },
	{ "in-band offer: one side only, then late", test_offer_one_side },
	{ "in-band offer: only from the QP's peer", test_offer_wrong_qp },
	{ "errors: event queues", test_errors_eq },
	{ "errors: listeners", test_errors_listen },
	{ "errors: connect", test_errors_connect },
	{ "errors: accept, reject, disconnect, free", test_errors_conn },
	{ "errors: offer", test_errors_offer },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "cm", cm_suite_init, cm_suite_clean, NULL, NULL, cm_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	(void)argc;
	return unit_run_eal(argv[0], suites, NULL, NULL);
}
