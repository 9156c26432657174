/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * perftest's six tests over a verbs-like transport (dpdat or kernel verbs):
 * bandwidth streams -t work requests a QP round-robin over the QPs; latency
 * is a ping-pong on QP 0 (write_lat spins on the last byte of the written
 * buffer, as ib_write_lat) or a READ round trip. With -b both sides
 * stream at once and, after each size, each writes its figures into the
 * other's mailbox (PERF_MBOX_IN): the client reports the sum, as perftest.
 */

#include <stddef.h>
#include <string.h>

#include "perf.h"

/* Unsignaled latency WRs: one in this many completes, so the send queue
 * drains on every transport (verbs frees slots only on completions). */
#define LAT_SIGNAL_EVERY 32
/* Bandwidth: bytes outstanding over all QPs at most, beyond one QP's -t:
 * the engine's one thread would only overflow the link's rings with
 * more (-q 1024 -t 128 at 64 KiB is 8 GiB). 16 MiB: read_bw -q 512 at
 * 64 KiB ran out of retries with it while the engine walked every QP each
 * turn, and runs since it visits only QPs with work (4 MiB meanwhile).
 * One QP's -t is never held back. */
#define BW_MAX_OUTSTANDING (16ull << 20)

static const struct perf_rdma *R;
static uint32_t recvs[PERF_MAX_QPS];	/* receives posted a QP (send_bw) */
/* -b's exchange: where the peer's figures land, and the sequence that
 * says they are in. Once they are, the peer may be gone already (it
 * leaves when it has ours and its own are acknowledged): a flushed
 * completion is then its leaving, not an error (peer_left). */
static volatile const uint32_t *peer_seq;
static uint32_t peer_seq_want;
static int peer_left;

/* -b's figures for the peer; seq last, written on its own after the rest
 * (a QP places its WRITEs in order), so a seq seen means figures there. */
struct perf_report {
	double avg, peak, rate;
	uint32_t seq;
};

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

	for (int i = 0; i < n; i++) {
		if (!wc[i].flushed)
			continue;
		/* its figures landed before the flush: same QP, in order */
		if (peer_seq == NULL || *peer_seq != peer_seq_want)
			perf_die("the connection broke (work flushed)");
		peer_left = 1;
	}
	return n;
}

/* send_bw's receiver (the server, and both sides with -b): every QP
 * keeps -t receives posted. */
static void
recv_fill(const struct perf_params *pr)
{
	for (uint32_t q = 0; pr->test == S_BW && q < R->nqp; q++)
		for (; recvs[q] < pr->depth; recvs[q]++)
			R->post_recv(q, PERF_MAX_SIZE, q);
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

/* Completions while streaming: the sends' (their WRs taken off st, the
 * count of WRs returned; without st the count of completions) and, with
 * -b, the receives of the peer's SENDs (posted again). */
static uint32_t
reap(const struct perf_params *pr, struct bw_state *st)
{
	struct perf_wc wc[64];
	uint32_t sends = 0, count;
	int n = poll_ok(wc, 64);

	for (int i = 0; i < n; i++) {
		if (wc[i].recv) {
			recvs[wc[i].id]--;
			continue;
		}
		if (st == NULL) {
			sends++;
			continue;
		}
		count = (uint32_t)(wc[i].id >> 32);
		st->out[(uint32_t)wc[i].id] -= count;
		st->total -= count;
		sends += count;
	}
	if (pr->bidir && !peer_left)
		recv_fill(pr);
	return sends;
}

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
			R->post(q, op, size, 0, 0, ids[j] != 0, ids[j]);
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

/* -b: write our figures into the peer's mailbox, then wait for its own
 * and for ours to be acknowledged (a barrier between sizes: both start the
 * next one together; the client disconnects only once the server has its
 * figures, or they would be flushed). */
static void
exchange(const struct perf_params *pr, uint32_t size, struct perf_bw *res)
{
	static uint32_t seq;
	struct perf_report *mine = (struct perf_report *)(R->buf + PERF_MBOX);
	volatile struct perf_report *theirs =
		(volatile struct perf_report *)(R->buf + PERF_MBOX_IN);

	uint32_t acked = 0;

	seq++;
	mine->avg = (double)res->iters * size / res->secs;
	mine->peak = res->peak;
	mine->rate = (double)res->iters / res->secs;
	mine->seq = seq;
	/* the streams are done: the one send completion now is the last
	 * WRITE's, the first one's with it */
	R->post(0, PERF_WRITE, offsetof(struct perf_report, seq), PERF_MBOX,
		PERF_MBOX_IN, 0, 0);
	R->post(0, PERF_WRITE, sizeof(mine->seq),
		PERF_MBOX + offsetof(struct perf_report, seq),
		PERF_MBOX_IN + offsetof(struct perf_report, seq), 1, 0);
	/* the peer leaves as soon as it has our figures and its own are
	 * acknowledged: under load, before we read our last completion,
	 * then flushed with our receives (a -b run failed so once) */
	peer_seq = &theirs->seq;
	peer_seq_want = seq;
	while (theirs->seq != seq || acked == 0) {
		R->progress();
		acked += reap(pr, NULL);
		if (peer_left)
			break;
	}
	peer_seq = NULL;
	res->peer_avg = theirs->avg;
	res->peer_peak = theirs->peak;
	res->peer_rate = theirs->rate;
}

void
perf_rdma_bw(const struct perf_params *pr, uint32_t size, struct perf_bw *res)
{
	static const enum perf_op ops[N_TESTS] = {
		[W_BW] = PERF_WRITE, [R_BW] = PERF_READ, [S_BW] = PERF_SEND };
	static struct bw_state st;
	const uint32_t n = perf_opt.post_list;
	uint32_t most = perf_max(pr->depth,
				 (uint32_t)(BW_MAX_OUTSTANDING / size));
	uint64_t done = 0;
	uint32_t q = 0;
	struct perf_meter m;
	int more, tails = 0;

	memset(&st, 0, sizeof(st));
	if (pr->bidir)
		recv_fill(pr);
	perf_meter_start(&m);
	for (;;) {
		/* lists go round robin: with -n, q's last is among the last
		 * nqp lists */
		while ((more = perf_more(pr, &m, st.posted)) &&
		       st.out[q] + n <= pr->depth && st.total < most) {
			bw_post(&st, q, ops[pr->test], size, n, !pr->secs &&
				pr->iters - st.posted <= (uint64_t)R->nqp * n);
			q = (q + 1) % R->nqp;
		}
		if (!more && !tails) {
			bw_close_tails(&st, ops[pr->test], size);
			tails = 1;
		}
		done += reap(pr, &st);
		perf_meter_tick(&m, done, size);
		if (!more && st.total == 0)
			break;
	}
	perf_meter_end(&m, done, size, res);
	res->peer_avg = res->peer_peak = res->peer_rate = 0;
	if (pr->bidir)
		exchange(pr, size, res);
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
	R->post(0, PERF_WRITE, size, 0, PERF_MAX_SIZE,
		R->wait_writes || i % LAT_SIGNAL_EVERY == 0, i);
	if (R->wait_writes)
		wait_wc(0);
}

/* One latency iteration; the server (rtt NULL) answers each ping. */
static void
lat_once(const struct perf_params *pr, uint32_t size, uint32_t i,
	 uint32_t total, int server)
{
	/* the peer writes into our second half; we write from the first */
	volatile uint8_t *in = R->buf + PERF_MAX_SIZE + size - 1;
	uint8_t seq = (uint8_t)(i % 255 + 1);	/* never 0 */
	int sig = i % LAT_SIGNAL_EVERY == 0;
	struct perf_wc wc;

	switch (pr->test) {
	case R_LAT:
		R->post(0, PERF_READ, size, 0, 0, 1, i);
		wait_wc(0);
		break;
	case W_LAT:
		if (!server)
			write_seq(size, seq, i);
		while (*in != seq)
			R->progress();
		if (server)
			write_seq(size, seq, i);
		if (!R->wait_writes)
			poll_ok(&wc, 1);	/* the signaled ones */
		break;
	default:	/* send_lat: the receive completes on the peer's SEND */
		if (!server)
			R->post(0, PERF_SEND, size, 0, 0, sig, i);
		wait_wc(1);
		if (i + 2 <= total)
			R->post_recv(0, size, 0);
		if (server)
			R->post(0, PERF_SEND, size, 0, 0, sig, i);
	}
}

/* perf_warmup() untimed round trips, then pr->iters timed ones, one
 * sequence for both sides (the server, rtt NULL, runs as many). */
void
perf_rdma_lat(const struct perf_params *pr, uint32_t size, double *rtt)
{
	const uint32_t warm = perf_warmup(pr, size);
	const uint32_t total = warm + pr->iters;
	uint64_t t;
	uint32_t i;

	if (pr->test == S_LAT)
		for (i = 0; i < 2 && i < total; i++)
			R->post_recv(0, size, 0);
	for (i = 1; i <= total; i++) {
		t = perf_now_ns();
		lat_once(pr, size, i, total, rtt == NULL);
		if (rtt != NULL && i > warm)
			rtt[i - warm - 1] =
				(double)(perf_now_ns() - t) / 1e3;
	}
}

/* The server's side: ping-pong for write_lat and send_lat; with -b the
 * same streams as the client's; then only progress (and receives kept
 * posted for send_bw) until the client goes. */
void
perf_rdma_serve(const struct perf_params *pr)
{
	struct perf_wc wc[64];
	struct perf_bw r;
	uint32_t size;
	int n;

	if (pr->test == W_LAT || pr->test == S_LAT || pr->bidir) {
		for (size = perf_first_size(pr); size != 0;
		     size = perf_next_size(pr, size))
			if (perf_is_lat(pr->test))
				perf_rdma_lat(pr, size, NULL);
			else
				perf_rdma_bw(pr, size, &r);
		if (perf_is_lat(pr->test))
			return;
	}
	for (;;) {
		recv_fill(pr);
		n = R->poll(wc, 64);
		for (int i = 0; i < n; i++) {
			if (wc[i].flushed)	/* the client disconnected */
				return;
			if (wc[i].recv)
				recvs[wc[i].id]--;
		}
		if (n == 0 && R->peer_gone())
			return;
	}
}
