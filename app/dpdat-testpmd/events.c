/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * What happens without a command: CM events, receive completions and the
 * link going up or down. Polled between keystrokes and by `wait`; every
 * event is printed as it is seen and counted for `wait`.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "testpmd.h"

static const char *const ev_names[TP_EV_COUNT] = {
	[TP_EV_REQUEST] = "request", [TP_EV_ESTABLISHED] = "established",
	[TP_EV_REJECTED] = "rejected", [TP_EV_DISCONNECTED] = "disconnected",
	[TP_EV_RECV] = "recv", [TP_EV_LINK] = "link",
};

static int
conn_id(const struct tp_conn *c)
{
	return (int)(c - tp.conn);
}

static struct tp_conn *
conn_of(const struct dpdat_cm_conn *cm)
{
	for (int i = 0; i < TP_MAX_CONN; i++)
		if (tp.conn[i].state != TP_CONN_FREE && tp.conn[i].cm == cm)
			return &tp.conn[i];
	return NULL;
}

/* Free everything a connection holds; its slot becomes free. */
void
tp_conn_release(struct tp_conn *c)
{
	if (c->cm != NULL)
		dpdat_cm_conn_free(c->cm);
	if (c->qp != NULL)
		dpdat_qp_free(c->qp);
	if (c->cq != NULL)
		dpdat_cq_free(c->cq);
	memset(c, 0, sizeof(*c));
}

/* The peer's region travels in the REQ (to the passive side) or the REP
 * (to the active side); other messages carry zeros. */
static void
remember_region(struct tp_conn *c, const struct dpdat_cm_event *ev)
{
	struct tp_pdata pd;

	if (ev->private_data_len < sizeof(pd))
		return;
	memcpy(&pd, ev->private_data, sizeof(pd));
	if (pd.magic == TP_PDATA_MAGIC)
		c->remote = pd;
}

static void
on_request(const struct dpdat_cm_event *ev)
{
	char ip[INET_ADDRSTRLEN];
	int i;

	inet_ntop(AF_INET, &ev->peer_ipv4, ip, sizeof(ip));
	for (i = 0; i < TP_MAX_CONN && tp.conn[i].state != TP_CONN_FREE; i++)
		;
	if (i == TP_MAX_CONN) {
		printf("event: connection request from %s refused: all %d "
		       "connection slots in use\n", ip, TP_MAX_CONN);
		dpdat_cm_reject(ev->conn, NULL, 0);
		dpdat_cm_conn_free(ev->conn);
		return;
	}
	tp.conn[i] = (struct tp_conn){ .state = TP_CONN_REQUEST, .cm = ev->conn,
				       .peer_ip = ev->peer_ipv4, .lmr = -1 };
	remember_region(&tp.conn[i], ev);
	printf("event: conn %d: connection request from %s, service %lu "
	       "(accept %d <lmr> or reject %d)\n", i, ip,
	       (unsigned long)ev->conn_qual, i, i);
	tp.pending[TP_EV_REQUEST]++;
}

static void
on_cm_event(const struct dpdat_cm_event *ev)
{
	struct tp_conn *c;

	if (ev->type == DPDAT_CM_CONNECT_REQUEST) {
		on_request(ev);
		return;
	}
	c = conn_of(ev->conn);
	if (c == NULL) {	/* not ours any more */
		dpdat_cm_conn_free(ev->conn);
		return;
	}
	switch (ev->type) {
	case DPDAT_CM_ESTABLISHED:
		remember_region(c, ev);
		c->state = TP_CONN_ESTABLISHED;
		printf("event: conn %d: established; peer region %s "
		       "(%lu bytes, rkey 0x%08x)\n", conn_id(c),
		       c->remote.magic == TP_PDATA_MAGIC ? "known" :
		       "unknown (not a dpdat-testpmd)",
		       (unsigned long)c->remote.len, c->remote.rkey);
		tp.pending[TP_EV_ESTABLISHED]++;
		return;
	case DPDAT_CM_REJECTED:
	case DPDAT_CM_UNREACHABLE:
		printf("event: conn %d: %s%s\n", conn_id(c),
		       ev->type == DPDAT_CM_REJECTED ? "rejected" : "unreachable",
		       ev->type == DPDAT_CM_REJECTED && ev->reason == 8 ?
		       " (nobody listens on that service)" : "");
		tp.pending[TP_EV_REJECTED]++;
		break;
	default:	/* DISCONNECTED, BROKEN */
		printf("event: conn %d: %s\n", conn_id(c),
		       ev->type == DPDAT_CM_BROKEN ?
		       "broken (the peer is gone)" : "disconnected");
		tp.pending[TP_EV_DISCONNECTED]++;
		break;
	}
	/* the QP is flushed: report what the peer never answered */
	struct dpdat_wc wc;

	while (c->cq != NULL && dpdat_cq_poll(c->cq, &wc, 1) == 1)
		if (wc.status != DPDAT_WC_SUCCESS &&
		    wc.status != DPDAT_WC_WR_FLUSH_ERR)
			printf("event: conn %d: work request failed: %s\n",
			       conn_id(c), dpdat_wc_status_str(wc.status));
	tp_conn_release(c);
}

/* A receive completed: check its content against the expected pattern. */
static void
on_recv(struct tp_conn *c, const struct dpdat_wc *wc)
{
	const struct tp_lmr *l = &tp.lmr[c->lmr];
	size_t bad;

	c->recv_posted--;
	if (wc->status != DPDAT_WC_SUCCESS) {
		printf("event: conn %d: receive failed: %s\n", conn_id(c),
		       dpdat_wc_status_str(wc->status));
		return;
	}
	if (c->recv_pattern >= 0 && l->lmr != NULL &&
	    tp_pattern_check(l->mem + l->len / 2, wc->byte_len,
			     c->recv_pattern, &bad) != 0)
		printf("event: conn %d: received %u bytes: WRONG at byte %zu\n",
		       conn_id(c), wc->byte_len, bad);
	else
		printf("event: conn %d: received %u bytes%s\n", conn_id(c),
		       wc->byte_len, c->recv_pattern >= 0 ?
		       ", content verified" : "");
	tp.pending[TP_EV_RECV]++;
}

/*
 * Poll a connection's CQ for up to secs seconds (0: once). Receives are
 * handled here; any other completion is returned in wc. Returns 1 with a
 * completion, 0 on timeout.
 */
int
tp_conn_poll_wc(struct tp_conn *c, struct dpdat_wc *wc, double secs)
{
	uint64_t end = rte_get_tsc_cycles() +
		       (uint64_t)(secs * (double)rte_get_tsc_hz());

	do {
		while (c->cq != NULL && dpdat_cq_poll(c->cq, wc, 1) == 1) {
			if (wc->opcode != DPDAT_WR_RECV)
				return 1;
			on_recv(c, wc);
		}
		if (secs > 0)
			dpdat_cq_wait(c->cq, 1);
	} while (rte_get_tsc_cycles() < end);
	return 0;
}

void
tp_events_poll(void)
{
	struct dpdat_port_info pi;
	struct dpdat_cm_event ev;
	struct dpdat_wc wc;

	if (dpdat_port_query(dpdat_dev_port(tp.dev), &pi) == 0 &&
	    (bool)pi.link_up != tp.link_up) {
		tp.link_up = pi.link_up;
		printf("event: link %s\n", tp.link_up ? "up" : "down");
		if (tp.link_up)
			tp.pending[TP_EV_LINK]++;
	}
	while (dpdat_cm_eq_poll(tp.eq, &ev) == 1)
		on_cm_event(&ev);
	for (int i = 0; i < TP_MAX_CONN; i++) {
		struct tp_conn *c = &tp.conn[i];

		if (c->state == TP_CONN_ESTABLISHED && c->recv_posted > 0 &&
		    tp_conn_poll_wc(c, &wc, 0) == 1)
			printf("event: conn %d: stray completion: %s\n", i,
			       dpdat_wc_status_str(wc.status));
	}
}

/* Wait until one event of the kind has arrived since the last wait for it;
 * the link counts as arrived while it is up. */
int
tp_events_wait_quiet(enum tp_event ev, double secs)
{
	uint64_t end = rte_get_tsc_cycles() +
		       (uint64_t)(secs * (double)rte_get_tsc_hz());

	for (;;) {
		tp_events_poll();
		if (ev == TP_EV_LINK && tp.link_up)
			return 0;
		if (tp.pending[ev] > 0) {
			tp.pending[ev]--;
			return 0;
		}
		if (rte_get_tsc_cycles() >= end)
			return -1;
		rte_delay_us_sleep(1000);
	}
}

int
tp_events_wait(enum tp_event ev, double secs)
{
	if (tp_events_wait_quiet(ev, secs) == 0)
		return 0;
	printf("wait %s: nothing after %.1f s\n", ev_names[ev], secs);
	return -1;
}
