/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * perftest's six tests over a verbs-like transport (dpdat or kernel verbs):
 * bandwidth streams -t work requests a QP round-robin over the QPs; latency
 * is a ping-pong on QP 0 (write_lat spins on the last byte of the written
 * buffer, as ib_write_lat) or a READ round trip.
 */

#include <stddef.h>

#include "perf.h"

/* Unsignaled latency WRs: one in this many completes, so the send queue
 * drains on every transport (verbs frees slots only on completions). */
#define LAT_SIGNAL_EVERY 32

static const struct perf_rdma *R;

void
perf_rdma_use(const struct perf_rdma *r)
{
	R = r;
}

/* Completions of a test in progress: a flush means the peer went. */
static int
poll_ok(struct perf_wc *wc, int max)
{
	int n = R->poll(wc, max);

	for (int i = 0; i < n; i++)
		if (wc[i].flushed)
			perf_die("the connection broke (work flushed)");
	return n;
}

/* A signalled WR's id: the QP, and how many WRs its completion accounts
 * for (itself and the unsignalled ones before it on that QP). */
#define BW_ID(q, count)	((uint64_t)(count) << 32 | (q))

/* The bandwidth client's state: WRs out on each QP, and how many of them
 * since the last signalled one. */
struct bw_state {
	uint32_t out[PERF_MAX_QPS], since[PERF_MAX_QPS];
	uint32_t total;
	uint64_t posted;
};

/* Post n WRs on q as one list (-l), one in cq_mod signalled and the last
 * too when close (nothing more will follow on q). */
static void
bw_post(struct bw_state *st, uint32_t q, enum perf_op op, uint32_t size,
	uint32_t n, int close)
{
	static uint64_t ids[PERF_MAX_DEPTH];

	for (uint32_t j = 0; j < n; j++) {
		ids[j] = 0;
		if (++st->since[q] == perf_opt.cq_mod ||
		    (close && j + 1 == n)) {
			ids[j] = BW_ID(q, st->since[q]);
			st->since[q] = 0;
		}
	}
	if (R->post_list != NULL) {
		R->post_list(q, op, size, n, ids);
	} else {
		for (uint32_t j = 0; j < n; j++)
			R->post(q, op, size, 0, ids[j] != 0, ids[j]);
	}
	st->out[q] += n;
	st->total += n;
	st->posted += n;
}

/* -D ran out with unsignalled WRs at the tail of a QP: one more, signalled,
 * so that they are seen to complete. */
static void
bw_close_tails(struct bw_state *st, enum perf_op op, uint32_t size)
{
	for (uint32_t q = 0; q < R->nqp; q++)
		if (st->since[q] != 0)
			bw_post(st, q, op, size, 1, 1);
}

void
perf_rdma_bw(const struct perf_params *pr, uint32_t size, struct perf_bw *res)
{
	static const enum perf_op ops[N_TESTS] = {
		[W_BW] = PERF_WRITE, [R_BW] = PERF_READ, [S_BW] = PERF_SEND };
	const uint32_t n = perf_opt.post_list;
	struct bw_state st = { .total = 0 };
	uint64_t done = 0;
	uint32_t q = 0, count;
	struct perf_meter m;
	struct perf_wc wc[64];
	int more, tails = 0, got;

	perf_meter_start(&m);
	for (;;) {
		/* lists go round robin: with -n, q's last is among the last
		 * nqp lists */
		while ((more = perf_more(pr, &m, st.posted)) &&
		       st.out[q] + n <= pr->depth) {
			bw_post(&st, q, ops[pr->test], size, n, !pr->secs &&
				pr->iters - st.posted <= (uint64_t)R->nqp * n);
			q = (q + 1) % R->nqp;
		}
		if (!more && !tails) {
			bw_close_tails(&st, ops[pr->test], size);
			tails = 1;
		}
		got = poll_ok(wc, 64);
		for (int i = 0; i < got; i++) {
			count = (uint32_t)(wc[i].id >> 32);
			st.out[(uint32_t)wc[i].id] -= count;
			st.total -= count;
			done += count;
		}
		perf_meter_tick(&m, done, size);
		if (!more && st.total == 0)
			break;
	}
	perf_meter_end(&m, done, size, res);
}

/* Wait for a receive completion (want_recv) or a send completion; the
 * other kind (unsignaled sends now and then complete) is skipped. */
static void
wait_wc(int want_recv)
{
	struct perf_wc wc;

	do {
		while (poll_ok(&wc, 1) == 0)
			;
	} while (wc.recv != want_recv);
}

/* write_lat: write size bytes whose last is seq into the peer's second
 * half, where it spins. */
static void
write_seq(uint32_t size, uint8_t seq, uint32_t i)
{
	R->buf[size - 1] = seq;
	R->post(0, PERF_WRITE, size, PERF_MAX_SIZE, i % LAT_SIGNAL_EVERY == 0,
		i);
}

/* One latency iteration; the server (rtt NULL) answers each ping. */
static void
lat_once(const struct perf_params *pr, uint32_t size, uint32_t i, int server)
{
	/* the peer writes into our second half; we write from the first */
	volatile uint8_t *in = R->buf + PERF_MAX_SIZE + size - 1;
	uint8_t seq = (uint8_t)(i % 255 + 1);	/* never 0 */
	int sig = i % LAT_SIGNAL_EVERY == 0;
	struct perf_wc wc;

	switch (pr->test) {
	case R_LAT:
		R->post(0, PERF_READ, size, 0, 1, i);
		wait_wc(0);
		break;
	case W_LAT:
		if (!server)
			write_seq(size, seq, i);
		while (*in != seq)
			R->progress();
		if (server)
			write_seq(size, seq, i);
		poll_ok(&wc, 1);	/* the signaled ones */
		break;
	default:	/* send_lat: the receive completes on the peer's SEND */
		if (!server)
			R->post(0, PERF_SEND, size, 0, sig, i);
		wait_wc(1);
		if (i + 2 <= pr->iters)
			R->post_recv(0, size, 0);
		if (server)
			R->post(0, PERF_SEND, size, 0, sig, i);
	}
}

void
perf_rdma_lat(const struct perf_params *pr, uint32_t size, double *rtt)
{
	uint64_t t;
	uint32_t i;

	if (pr->test == S_LAT)
		for (i = 0; i < 2 && i < pr->iters; i++)
			R->post_recv(0, size, 0);
	for (i = 1; i <= pr->iters; i++) {
		t = perf_now_ns();
		lat_once(pr, size, i, rtt == NULL);
		if (rtt != NULL)
			rtt[i - 1] = (double)(perf_now_ns() - t) / 1e3;
	}
}

/* The server's side: ping-pong for write_lat and send_lat; otherwise only
 * progress (and receives kept posted for send_bw) until the client goes. */
void
perf_rdma_serve(const struct perf_params *pr)
{
	uint32_t posted[PERF_MAX_QPS] = { 0 }, q, size;
	struct perf_wc wc[64];
	int n;

	if (pr->test == W_LAT || pr->test == S_LAT) {
		for (size = perf_first_size(pr); size != 0;
		     size = perf_next_size(pr, size))
			perf_rdma_lat(pr, size, NULL);
		return;
	}
	for (;;) {
		for (q = 0; pr->test == S_BW && q < R->nqp; q++)
			for (; posted[q] < pr->depth; posted[q]++)
				R->post_recv(q, PERF_MAX_SIZE, q);
		n = R->poll(wc, 64);
		for (int i = 0; i < n; i++) {
			if (wc[i].flushed)	/* the client disconnected */
				return;
			if (wc[i].recv)
				posted[wc[i].id]--;
		}
		if (n == 0 && R->peer_gone())
			return;
	}
}
