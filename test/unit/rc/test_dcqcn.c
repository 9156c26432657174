/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * DCQCN's reaction point (lib/rc/dcqcn.c) against its formulas, on a
 * made-up clock of 1 GHz (one cycle a nanosecond) and a 10 Gb/s line:
 * the first cut, alpha's growth and decay, the monitor period, the floors,
 * fast recovery, additive and hyper-additive increase, the pace, and the
 * parameters' parsing. Then on the engine rig: a CNP received cuts the
 * QP's rate, and a paced QP sends no faster than its rate. The same for
 * the delay-based window (swift.c): growth, cuts, parsing, and on the rig
 * a slow round trip's cut, obeyed.
 */

#include <errno.h>
#include <math.h>
#include <string.h>

#include <CUnit/Basic.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_qp.h>

#include "dcqcn.h"
#include "swift.h"
#include "rc_priv.h"
#include "rig.h"

#define HZ	1000000000ull	/* the made-up clock */
#define US	1000ull
#define LINE	10000u		/* Mb/s */
#define GBPS	1000000000ull

static struct dcqcn_dev d;

static void
setup(struct dcqcn_conf *c)
{
	dcqcn_conf_default(c);
	dcqcn_dev_init(&d, c, HZ, LINE);
}

static void
defaults(void)
{
	struct dcqcn_conf c;

	setup(&c);
}

/* The first CNP cuts from the line rate by alpha0/2; the target keeps the
 * line rate. */
static void
test_first_cut(void)
{
	struct dcqcn q = { 0 };
	const uint64_t line = 10 * GBPS;

	defaults();
	CU_ASSERT(dcqcn_may_send(&q, 0));
	dcqcn_cnp(&q, &d, 1000 * US);
	CU_ASSERT_EQUAL(q.rt, line);
	CU_ASSERT_EQUAL(q.rc, line - line * 1023 / 2048);
	CU_ASSERT_EQUAL(q.alpha, 1023);
	CU_ASSERT_EQUAL(q.cuts, 1);
}

/* A second CNP within the monitor period (4 us) cuts nothing; one after
 * it cuts with alpha grown as g says (one period with a CNP), and at most
 * to min_dec_pct of the rate. */
static void
test_monitor_and_alpha(void)
{
	struct dcqcn q = { 0 };
	uint64_t rc, t = 1000 * US;
	uint32_t alpha;

	defaults();
	dcqcn_cnp(&q, &d, t);
	rc = q.rc;
	dcqcn_cnp(&q, &d, t + 2 * US);
	CU_ASSERT_EQUAL(q.rc, rc);
	CU_ASSERT_EQUAL(q.cuts, 1);
	/* periods of 1 us: the first (with the CNP at t + 2 us) grows alpha,
	 * the next ones shrink it */
	dcqcn_cnp(&q, &d, t + 10 * US);
	alpha = 1023;
	alpha = (1019 * alpha + 5 * 1024) / 1024;	/* the period at t */
	alpha = 1019 * alpha / 1024;			/* t + 1: quiet */
	alpha = (1019 * alpha + 5 * 1024) / 1024;	/* the one at t + 2 */
	for (int k = 0; k < 7; k++)
		alpha = 1019 * alpha / 1024;
	CU_ASSERT_EQUAL(q.alpha, alpha);
	CU_ASSERT_EQUAL(q.cuts, 2);
	CU_ASSERT_EQUAL(q.rt, rc);
	CU_ASSERT_EQUAL(q.rc, RTE_MAX(rc - rc * q.alpha / 2048, rc / 2));
}

/* Alpha decays as g^n over n quiet periods (within integer rounding). */
static void
test_alpha_decay(void)
{
	struct dcqcn q = { 0 };
	const uint64_t t = 1000 * US;
	double want;

	defaults();
	dcqcn_cnp(&q, &d, t);
	q.cnp_seen = false;
	dcqcn_cnp(&q, &d, t + 100 * US + 500);	/* ages 100 periods first */
	want = 1023 * pow(1019.0 / 1024, 100);
	/* 100 floors lose at most 100 */
	CU_ASSERT(q.alpha <= want + 1 && q.alpha + 100 >= want);
	/* long quiet: alpha reaches 0, the loop bounded */
	q.cnp_seen = false;
	dcqcn_cnp(&q, &d, t + 10000000 * US);
	CU_ASSERT(q.alpha <= 6);
}

/* Floors: a cut never goes below min_dec_pct of the rate nor min_mbps. */
static void
test_floors(void)
{
	struct dcqcn_conf c;
	struct dcqcn q = { 0 };
	uint64_t t = 1000 * US;

	setup(&c);
	c.min_dec_pct = 90;
	c.min_mbps = 2000;
	dcqcn_dev_init(&d, &c, HZ, LINE);
	dcqcn_cnp(&q, &d, t);
	CU_ASSERT_EQUAL(q.rc, 9 * GBPS);	/* 90 %, not half */
	for (int k = 1; k < 100; k++)
		dcqcn_cnp(&q, &d, t + k * 5 * US);
	CU_ASSERT_EQUAL(q.rc, 2 * GBPS);
	/* first_mbps: both rates set, no cut from the line */
	c.first_mbps = 3000;
	dcqcn_dev_init(&d, &c, HZ, LINE);
	memset(&q, 0, sizeof(q));
	dcqcn_cnp(&q, &d, t);
	CU_ASSERT_EQUAL(q.rc, 3 * GBPS);
	CU_ASSERT_EQUAL(q.rt, 3 * GBPS);
}

/* Recovery by time: the first step (stage 1, threshold 1) is fast
 * recovery, halfway to the target; the next are additive (target + 5
 * Mb/s); once both stages pass the threshold, hyper-additive. */
static void
test_recovery(void)
{
	struct dcqcn q = { 0 };
	const uint64_t t = 1000 * US;
	uint64_t rc, rt;

	defaults();
	dcqcn_cnp(&q, &d, t);
	rc = q.rc;
	rt = q.rt;
	dcqcn_sent(&q, &d, 100, t + 300 * US);	/* one time step */
	CU_ASSERT_EQUAL(q.t_stage, 1);
	CU_ASSERT_EQUAL(q.rt, rt);
	CU_ASSERT_EQUAL(q.rc, (rt + rc) / 2);
	/* the target is the line: additive steps are clamped there */
	rc = q.rc;
	dcqcn_sent(&q, &d, 100, t + 600 * US);
	CU_ASSERT_EQUAL(q.t_stage, 2);
	CU_ASSERT_EQUAL(q.rt, 10 * GBPS);
	CU_ASSERT_EQUAL(q.rc, (10 * GBPS + rc) / 2);
	/* a cut below the line, then additive and hyper steps */
	memset(&q, 0, sizeof(q));
	dcqcn_cnp(&q, &d, t);
	dcqcn_cnp(&q, &d, t + 10 * US);
	rt = q.rt;
	q.t_stage = 1;
	q.b_stage = 1;
	rc = q.rc;
	q.inc_tsc = t + 10 * US;
	dcqcn_sent(&q, &d, 100, t + 310 * US);	/* t_stage 2, b_stage 1 */
	CU_ASSERT_EQUAL(q.rt, rt + 5000000);
	CU_ASSERT_EQUAL(q.rc, (rt + 5000000 + rc) / 2);
	rt = q.rt;
	rc = q.rc;
	q.b_stage = 2;
	dcqcn_sent(&q, &d, 100, t + 610 * US);	/* 3 and 2: i = 1 */
	CU_ASSERT_EQUAL(q.rt, rt + 50000000);
	CU_ASSERT_EQUAL(q.rc, (rt + 50000000 + rc) / 2);
}

/* Recovery by bytes: a step each byte_reset bytes; back at the line
 * rate the QP is no longer limited. */
static void
test_bytes_and_recovered(void)
{
	struct dcqcn q = { 0 };
	const uint64_t t = 1000 * US;
	int k;

	defaults();
	dcqcn_cnp(&q, &d, t);
	dcqcn_sent(&q, &d, 32767, t + 1);
	CU_ASSERT_EQUAL(q.b_stage, 1);
	for (k = 0; k < 200 && q.rc != 0; k++)
		dcqcn_sent(&q, &d, 32767, t + 2 + k);
	CU_ASSERT_EQUAL(q.rc, 0);
	CU_ASSERT(k < 40);	/* halving the gap each time: about 10 */
	CU_ASSERT(dcqcn_may_send(&q, 0));
}

/* The pace: a packet of B bytes at R bit/s holds the next for 8B/R from
 * the end of the one before; a sender late by a coarse engine pass keeps
 * the pace; idle time is credit of at most 10 us. */
static void
test_pace(void)
{
	struct dcqcn_conf c;
	struct dcqcn q = { 0 };
	const uint64_t t = 1000 * US;

	setup(&c);
	c.first_mbps = 1000;	/* 1 Gb/s: 8 ns a byte */
	c.byte_reset = 1u << 30;
	dcqcn_dev_init(&d, &c, HZ, LINE);
	dcqcn_cnp(&q, &d, t);
	CU_ASSERT(dcqcn_may_send(&q, t));
	dcqcn_sent(&q, &d, 1000, t);
	CU_ASSERT_EQUAL(q.next_tsc, t + 8000);
	CU_ASSERT(!dcqcn_may_send(&q, t + 7999));
	CU_ASSERT(dcqcn_may_send(&q, t + 8000));
	dcqcn_sent(&q, &d, 1000, t + 2);	/* early: queued behind */
	CU_ASSERT_EQUAL(q.next_tsc, t + 16000);
	/* late by 4 us (a coarse engine pass): the pace is kept, the next
	 * may go at once */
	dcqcn_sent(&q, &d, 1000, t + 20000);
	CU_ASSERT_EQUAL(q.next_tsc, t + 24000);
	/* after idle: at most 10 us of credit */
	dcqcn_sent(&q, &d, 1000, t + 100000);
	CU_ASSERT_EQUAL(q.next_tsc, t + 98000);
}

static void
test_parse(void)
{
	struct dcqcn_conf c;

	dcqcn_conf_default(&c);
	CU_ASSERT_EQUAL(dcqcn_conf_parse(&c, NULL), 0);
	CU_ASSERT_EQUAL(dcqcn_conf_parse(&c, "g=1000,ai_mbps=40,threshold=5"),
			0);
	CU_ASSERT_EQUAL(c.g, 1000);
	CU_ASSERT_EQUAL(c.ai_mbps, 40);
	CU_ASSERT_EQUAL(c.threshold, 5);
	CU_ASSERT(!c.off);
	CU_ASSERT_EQUAL(dcqcn_conf_parse(&c, "off"), 0);
	CU_ASSERT(c.off);
	CU_ASSERT_EQUAL(dcqcn_conf_parse(&c, "g=1024"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_conf_parse(&c, "nope=1"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_conf_parse(&c, "g="), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_conf_parse(&c, "g=5x"), -EINVAL);
	CU_ASSERT_EQUAL(dcqcn_conf_parse(&c, "g=5,,ai_mbps=1"), -EINVAL);
}

/* On the rig: a CNP from the peer cuts the QP's rate (its counters say
 * so); paced at 100 Mb/s, a QP with 64 packets to send sends no more
 * than its rate allows in the time the engine ran. */
static void
test_engine_cnp_paces(void)
{
	struct dpdat_qp_stats st;
	struct dpdat_wc wc;
	struct rte_mbuf *m;
	const struct dcqcn_dev keep = rc_dev(A.dev)->dcqcn;
	struct dcqcn_conf c;
	unsigned int sent = 0, allowed;
	uint64_t t0, t1;

	connect_pair(1024, 14);
	dcqcn_conf_default(&c);
	c.first_mbps = 100;
	c.byte_reset = 1u << 30;
	c.time_reset_us = 1000000;
	dcqcn_dev_init(&rc_dev(A.dev)->dcqcn, &c, rte_get_tsc_hz(), 10000);
	/* B sends A a CNP for A's QP */
	m = rc_pkt_alloc(B.qp, ROCE_OP_CNP, 0, false, ROCE_CNP_LEN);
	CU_ASSERT_FATAL(m != NULL);
	memset(rte_pktmbuf_mtod(m, struct roce_bth *) + 1, 0, ROCE_CNP_LEN);
	rc_lock_engine(rc_dev(B.dev));
	CU_ASSERT(rc_pkt_send(B.qp, m) == 0);
	rc_tx_flush(rc_dev(B.dev));
	rc_unlock_engine(rc_dev(B.dev));
	dpdat_dev_progress(A.dev);
	dpdat_qp_stats(A.qp, &st);
	CU_ASSERT_EQUAL(st.cnp_rcvd, 1);
	CU_ASSERT_EQUAL(st.cc_cuts, 1);
	CU_ASSERT_EQUAL(st.cc_rate_mbps, 100);
	/* 64 WRITEs of 1000 bytes: at 100 Mb/s, 84.6 us each */
	for (int k = 0; k < 64; k++)
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 1000,
				     (uintptr_t)B.buf, B.key) == 0);
	t0 = rte_get_tsc_cycles();
	do {
		dpdat_dev_progress(A.dev);
		sent += rte_ring_count(a2b);
		rte_ring_reset(a2b);	/* dropped: counted only */
		t1 = rte_get_tsc_cycles();
	} while (t1 - t0 < rte_get_tsc_hz() / 1000);	/* 1 ms */
	allowed = (unsigned int)((t1 - t0) * 1000000 / rte_get_tsc_hz() /
				 85) + 1;
	CU_ASSERT(sent >= 2);
	CU_ASSERT(sent <= allowed);
	/* done: no pacing, the rest may go (dropped above: let them
	 * retransmit) */
	rc_dev(A.dev)->dcqcn = keep;
	memset(&A.qp->req.cc, 0, sizeof(A.qp->req.cc));
	for (int k = 0; k < 64; k++)
		CU_ASSERT_FATAL(wait_wc(&A, &wc, 200000) == 0);
	drain_cqs();
	disconnect_pair();
}

/* ---- delay-based control (swift.c) ---- */

static struct swift_dev sd;

static void
swift_defaults(void)
{
	struct swift_conf c;

	swift_conf_default(&c);
	c.on = true;
	swift_dev_init(&sd, &c, HZ);	/* target 50 us = 50,000 cycles */
}

/* Under the target the window grows by ai a round trip, to max_wnd; the
 * first sample starts it at max_wnd and sets the base round trip. */
static void
test_swift_grow(void)
{
	struct swift s = { 0 };

	swift_defaults();
	CU_ASSERT_EQUAL(swift_sample(&s, &sd, 20 * US, 1000 * US), 512);
	CU_ASSERT_EQUAL(s.base_tsc, 20 * US);
	s.wnd = 10 * SWIFT_ONE;
	CU_ASSERT_EQUAL(swift_sample(&s, &sd, 60 * US, 1100 * US), 11);
	CU_ASSERT_EQUAL(s.base_tsc, 20 * US);	/* the smallest stays */
	CU_ASSERT_EQUAL(swift_sample(&s, &sd, 10 * US, 1200 * US), 12);
	CU_ASSERT_EQUAL(s.base_tsc, 10 * US);
	CU_ASSERT_EQUAL(s.cuts, 0);
}

/* Over the target: a cut of beta x overshoot / rtt (80 %), at most
 * max_mdf (50 %), at most once a round trip; never below one packet. */
static void
test_swift_cut(void)
{
	struct swift s = { 0 };
	uint64_t t = 1000 * US;

	swift_defaults();
	swift_sample(&s, &sd, 20 * US, t);		/* base 20 us */
	s.wnd = 100 * SWIFT_ONE;
	/* rtt 100 us, target 70 us: 80 % x 30/100 = 24 % */
	CU_ASSERT_EQUAL(swift_sample(&s, &sd, 100 * US, t + 200 * US), 76);
	CU_ASSERT_EQUAL(s.cuts, 1);
	/* again within a round trip of the cut: no second cut */
	CU_ASSERT_EQUAL(swift_sample(&s, &sd, 100 * US, t + 250 * US), 76);
	/* far over, a round trip after the cut: capped at 50 % */
	CU_ASSERT_EQUAL(swift_sample(&s, &sd, 5000 * US, t + 5200 * US), 38);
	for (int k = 0; k < 20; k++)
		swift_sample(&s, &sd, 5000 * US, t + (1 + k) * 6000 * US);
	CU_ASSERT_EQUAL(s.wnd, SWIFT_ONE);		/* one packet */
}

static void
test_swift_parse(void)
{
	struct swift_conf c;

	swift_conf_default(&c);
	CU_ASSERT_EQUAL(swift_conf_parse(&c, NULL), 0);
	CU_ASSERT(!c.on);
	CU_ASSERT_EQUAL(swift_conf_parse(&c, "on"), 0);
	CU_ASSERT(c.on);
	swift_conf_default(&c);
	CU_ASSERT_EQUAL(swift_conf_parse(&c, "target_us=25,max_wnd=64"), 0);
	CU_ASSERT(c.on);
	CU_ASSERT_EQUAL(c.target_us, 25);
	CU_ASSERT_EQUAL(c.max_wnd, 64);
	CU_ASSERT_EQUAL(swift_conf_parse(&c, "max_wnd=513"), -EINVAL);
	CU_ASSERT_EQUAL(swift_conf_parse(&c, "beta_pct=0"), -EINVAL);
	CU_ASSERT_EQUAL(swift_conf_parse(&c, "off"), -EINVAL);
}

/* On the rig: a round trip far over the target (B's engine kept away
 * 2 ms, A's too, so that no probe voids the sample) cuts the QP's window, and the requester keeps no more packets in
 * flight than the window. */
static void
test_swift_engine(void)
{
	const struct swift_dev keep = rc_dev(A.dev)->swift;
	struct swift_conf c;
	struct dpdat_qp_stats st;
	struct dpdat_wc wc;
	unsigned int w;

	connect_pair(1024, 14);
	swift_conf_default(&c);
	c.on = true;
	c.max_wnd = 8;
	swift_dev_init(&rc_dev(A.dev)->swift, &c, rte_get_tsc_hz());
	/* a quick round trip: the base */
	CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 8,
			     (uintptr_t)B.buf, B.key) == 0);
	CU_ASSERT_FATAL(wait_wc(&A, &wc, 1000) == 0);
	/* a slow one */
	CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 8,
			     (uintptr_t)B.buf, B.key) == 0);
	dpdat_dev_progress(A.dev);
	rte_delay_us_block(2000);
	/* B first: A's engine, run first, would probe after so long and
	 * the resend would void the sample (Karn) */
	dpdat_dev_progress(B.dev);
	CU_ASSERT_FATAL(wait_wc(&A, &wc, 1000) == 0);
	dpdat_qp_stats(A.qp, &st);
	CU_ASSERT_EQUAL(st.cc_wnd_cuts, 1);
	w = (unsigned int)st.cc_wnd;
	CU_ASSERT(w >= 1 && w < 8);
	CU_ASSERT_EQUAL(A.qp->req.wnd, w);
	/* 2w one-packet WRITEs: w leave, the rest wait for ACKs */
	for (unsigned int k = 0; k < 2 * w && k < 1000; k++)
		CU_ASSERT_FATAL(post(&A, DPDAT_WR_RDMA_WRITE, 0, 8,
				     (uintptr_t)B.buf, B.key) == 0);
	for (int k = 0; k < 4; k++)
		dpdat_dev_progress(A.dev);
	CU_ASSERT_EQUAL(rte_ring_count(a2b), w);
	for (unsigned int k = 0; k < 2 * w && k < 1000; k++)
		CU_ASSERT_FATAL(wait_wc(&A, &wc, 100000) == 0);
	rc_dev(A.dev)->swift = keep;
	drain_cqs();
	disconnect_pair();
}

CU_TestInfo rc_dcqcn_tests[] = {
	{ "DCQCN: the first CNP cuts from the line", test_first_cut },
	{ "DCQCN: monitor period, alpha grows", test_monitor_and_alpha },
	{ "DCQCN: alpha decays as g^n", test_alpha_decay },
	{ "DCQCN: min_dec_pct, min_mbps, first_mbps", test_floors },
	{ "DCQCN: fast recovery, additive, hyper", test_recovery },
	{ "DCQCN: byte steps; back at the line, not limited",
	  test_bytes_and_recovered },
	{ "DCQCN: the pace", test_pace },
	{ "DCQCN: DPDAT_DCQCN parsed", test_parse },
	{ "DCQCN: a CNP cuts a QP's rate; paced", test_engine_cnp_paces },
	{ "Swift: grows under the target", test_swift_grow },
	{ "Swift: cuts over it, once a round trip, to 1", test_swift_cut },
	{ "Swift: DPDAT_SWIFT parsed", test_swift_parse },
	{ "Swift: a slow round trip cuts the window, obeyed",
	  test_swift_engine },
	CU_TEST_INFO_NULL,
};
