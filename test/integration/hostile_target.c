/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The real connection a hostile third host attacks (hostile-netns.sh,
 * hostile_inject.py).
 *   hostile_target server|client <rendezvous> <secs> [onpath]
 * The client connects through the CM and for secs seconds, round after
 * round, WRITEs a pattern into the window the server granted (its R_Key
 * and address in the REP's private data), READs it back and checks every
 * byte, and SENDs a pattern the server checks byte by byte. Every work
 * request must succeed. The server's memory around that window is bait:
 *   - 4 KiB unregistered canaries right below and right above the window;
 *   - a region registered with every remote privilege, whose key nobody
 *     is ever told (registered but not granted);
 *   - a region registered for local access only.
 * At the end the server counts the bytes of bait that changed (must be 0),
 * prints the port's drop counters, the QP's and the CM's figures, and
 * checks that connection requests from strangers left nothing behind.
 * Once connected it writes <rendezvous>.ready with what an on-path observer
 * would learn from the wire (QPN, R_Key, window, comm IDs are all in clear
 * frames): the attacker uses it only in its "onpath" phases.
 * With "onpath" the connection may break (an on-path attacker can break
 * any RoCEv2 connection): then the client stops early and both still pass
 * if the bait is intact; without it every round must succeed.
 */

#include <arpa/inet.h>
#include <string.h>
#include <unistd.h>

#include <rte_mempool.h>

#include <dpdat/dpdat_cm.h>

#include "harness.h"
#include "port_priv.h"

#define SERVICE 0x4791
#define WIN	(16 << 10)	/* the granted window */
#define CANARY	(4 << 10)
#define MSG	4096		/* a SEND */
#define SLOTS	16		/* receives posted at the server */
#define BAIT_SEED 0x5a

static struct dpdat_dev *dev;
static struct dpdat_pz *pz;
static struct dpdat_cq *cq;
static struct dpdat_cm_eq *eq;
static int onpath;
static int stalled;	/* the client gave up, our QP healthy: exit 77 */
static const char *rdv;

struct grant {		/* the REP's private data */
	uint64_t va;
	uint32_t rkey, len;
};

static uint8_t
pat(uint32_t seed, uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13 ^ seed ^ (i >> 8));
}

static void
fill(uint8_t *p, uint64_t n, uint32_t seed)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = pat(seed, i);
}

static uint64_t
changed(const uint8_t *p, uint64_t n, uint32_t seed)
{
	uint64_t bad = 0;

	for (uint64_t i = 0; i < n; i++)
		bad += p[i] != pat(seed, i);
	return bad;
}

/* key: the local context, or the remote one when a remote privilege
 * was asked */
static struct dpdat_lmr *
reg(void *addr, uint64_t len, uint32_t priv, uint32_t *key)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	struct dpdat_lmr *l;

	d.virt.addr = addr;
	d.virt.length = len;
	l = dpdat_lmr_create(pz, &d, priv);
	if (l == NULL || dpdat_lmr_query(l, &li) != 0)
		H_FAIL("lmr_create");
	*key = li.rmr_context ? li.rmr_context : li.lmr_context;
	return l;
}

static struct dpdat_qp *
new_qp(void)
{
	struct dpdat_qp_conf qc = { .pz = pz, .send_cq = cq, .recv_cq = cq,
				    .max_send_wr = 64, .max_recv_wr = SLOTS };
	struct dpdat_qp *qp = dpdat_qp_create(dev, &qc);

	if (qp == NULL)
		H_FAIL("qp_create");
	return qp;
}

static void
post(struct dpdat_qp *qp, enum dpdat_wr_opcode op, uint64_t id, void *buf,
     uint32_t len, uint32_t lkey, const struct grant *g)
{
	struct dpdat_sge sge = { (uintptr_t)buf, len, lkey };
	struct dpdat_send_wr wr = { .wr_id = id, .opcode = op,
		.flags = DPDAT_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
		.remote_addr = g ? g->va : 0, .rkey = g ? g->rkey : 0 };

	if (dpdat_post_send(qp, &wr) != 0)
		H_FAIL("post_send");
}

static void
post_recv(struct dpdat_qp *qp, uint8_t *slots, uint32_t key, int k)
{
	struct dpdat_sge sge = { (uintptr_t)(slots + k * MSG), MSG, key };
	struct dpdat_recv_wr wr = { .wr_id = (uint64_t)k, .sg_list = &sge,
				    .num_sge = 1 };

	if (dpdat_post_recv(qp, &wr) != 0)
		H_FAIL("post_recv");
}

/* ---- server ---- */

struct bait {
	uint8_t *arena;		/* canary | window | canary */
	uint8_t *ungranted, *local, *slots;
	struct dpdat_lmr *lwin, *lung, *lloc, *lslots;
	uint32_t kwin, kung, kloc, kslots;
};

static void
bait_make(struct bait *b)
{
	b->arena = dpdat_mem_alloc(2 * CANARY + WIN, 4096, -1);
	b->ungranted = dpdat_mem_alloc(WIN, 4096, -1);
	b->local = dpdat_mem_alloc(WIN, 4096, -1);
	b->slots = dpdat_mem_alloc(SLOTS * MSG, 4096, -1);
	if (!b->arena || !b->ungranted || !b->local || !b->slots)
		H_FAIL("mem_alloc");
	fill(b->arena, CANARY, BAIT_SEED);
	fill(b->arena + CANARY + WIN, CANARY, BAIT_SEED + 1);
	fill(b->ungranted, WIN, BAIT_SEED + 2);
	fill(b->local, WIN, BAIT_SEED + 3);
	b->lwin = reg(b->arena + CANARY, WIN, DPDAT_MEM_PRIV_ALL, &b->kwin);
	b->lung = reg(b->ungranted, WIN, DPDAT_MEM_PRIV_ALL, &b->kung);
	b->lloc = reg(b->local, WIN, DPDAT_MEM_PRIV_LOCAL_READ |
		      DPDAT_MEM_PRIV_LOCAL_WRITE, &b->kloc);
	b->lslots = reg(b->slots, SLOTS * MSG, DPDAT_MEM_PRIV_LOCAL_WRITE,
			&b->kslots);
}

static uint64_t
bait_changed(const struct bait *b)
{
	uint64_t lo = changed(b->arena, CANARY, BAIT_SEED);
	uint64_t hi = changed(b->arena + CANARY + WIN, CANARY, BAIT_SEED + 1);
	uint64_t ung = changed(b->ungranted, WIN, BAIT_SEED + 2);
	uint64_t loc = changed(b->local, WIN, BAIT_SEED + 3);

	printf("server: bait bytes changed: canary below %lu, canary above "
	       "%lu, registered-but-ungranted %lu, local-only %lu\n",
	       (unsigned long)lo, (unsigned long)hi, (unsigned long)ung,
	       (unsigned long)loc);
	return lo + hi + ung + loc;
}

static void
bait_free(struct bait *b)
{
	dpdat_lmr_free(b->lwin);
	dpdat_lmr_free(b->lung);
	dpdat_lmr_free(b->lloc);
	dpdat_lmr_free(b->lslots);
	dpdat_mem_free(b->arena);
	dpdat_mem_free(b->ungranted);
	dpdat_mem_free(b->local);
	dpdat_mem_free(b->slots);
}

/* What an observer of the wire knows: written once we are connected. */
static void
publish(struct dpdat_qp *qp, const struct bait *b)
{
	char path[512], tmp[520];
	struct dpdat_qp_info qi;
	FILE *f;

	dpdat_qp_query(qp, &qi);
	snprintf(path, sizeof(path), "%s.ready", rdv);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		H_FAIL("publish");
	fprintf(f, "qpn %u\nrkey %u\nva %lu\nlen %u\nungranted_va %lu\n",
		qi.qpn, b->kwin, (unsigned long)(uintptr_t)(b->arena + CANARY),
		WIN, (unsigned long)(uintptr_t)b->ungranted);
	fclose(f);
	rename(tmp, path);
}

static void
server_report(struct dpdat_qp *qp, unsigned long strangers,
	      unsigned long sends)
{
	struct dpdat_port_stats ps;
	struct dpdat_qp_stats qs;

	dpdat_port_stats(dpdat_dev_port(dev), &ps);
	printf("server: port: rx %lu, RoCEv2 %lu, dropped: not ours %lu, "
	       "malformed %lu, icrc %lu, bad header %lu, no QP %lu, not "
	       "the peer %lu; ARP rx %lu\n", (unsigned long)ps.rx_pkts,
	       (unsigned long)ps.rx_roce, (unsigned long)ps.drop_not_ours,
	       (unsigned long)ps.drop_malformed, (unsigned long)ps.drop_icrc,
	       (unsigned long)ps.drop_bad_hdr, (unsigned long)ps.drop_no_qp,
	       (unsigned long)ps.drop_not_peer, (unsigned long)ps.rx_arp);
	printf("server: tx %lu, refused by the device %lu; device: missed "
	       "%lu, rx errors %lu, tx errors %lu, no mbuf %lu; mbufs in use "
	       "%u of %u\n", (unsigned long)ps.tx_pkts,
	       (unsigned long)ps.drop_tx_full, (unsigned long)ps.dev_imissed,
	       (unsigned long)ps.dev_ierrors, (unsigned long)ps.dev_oerrors,
	       (unsigned long)ps.dev_rx_nombuf,
	       rte_mempool_in_use_count(dpdat_dev_port(dev)->pool),
	       dpdat_dev_port(dev)->pool->size);
	if (qp != NULL && dpdat_qp_stats(qp, &qs) == 0)
		printf("server: qp: rx %lu, out of sequence %lu, duplicates "
		       "%lu, NAKs sent %lu, held %lu\n",
		       (unsigned long)qs.rx_pkts,
		       (unsigned long)qs.out_of_seq,
		       (unsigned long)qs.dup_rcvd,
		       (unsigned long)qs.naks_sent, (unsigned long)qs.held);
	printf("server: %lu SENDs checked, %lu requests from strangers "
	       "rejected\n", sends, strangers);
}

/* A SEND arrived in slot k: it must be the client's round r. */
static void
server_recv(struct dpdat_qp *qp, struct bait *b, const struct dpdat_wc *wc,
	    unsigned long *sends, int *broken)
{
	int k = (int)wc->wr_id;

	if (wc->status == DPDAT_WC_WR_FLUSH_ERR)
		return;	/* the QP went to error: a disconnect or a break,
			 * which the CM event tells apart */
	if (wc->status != DPDAT_WC_SUCCESS) {
		if (!onpath)
			H_FAIL("receive status %d", wc->status);
		*broken = 1;
		return;
	}
	if (wc->byte_len != MSG ||
	    changed(b->slots + k * MSG, MSG, (uint32_t)*sends) != 0)
		H_FAIL("SEND %lu: %u bytes, not the client's", *sends,
		       wc->byte_len);
	(*sends)++;
	post_recv(qp, b->slots, b->kslots, k);
}

static int
client_done(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s.done", rdv);
	return access(path, F_OK) == 0;
}

static void
server(void)
{
	struct dpdat_cm_listener *l = dpdat_cm_listen(dev, SERVICE, eq);
	unsigned long strangers = 0, sends = 0;
	struct dpdat_cm_conn *sc = NULL;
	struct dpdat_qp *qp = NULL;
	struct dpdat_cm_event ev;
	unsigned int ctx0, mbufs0;
	struct dpdat_wc wc;
	struct bait b;
	struct grant g;
	int broken = 0, done = 0;
	double last = h_now(), look = 0, gone = 0;

	if (l == NULL)
		H_FAIL("listen");
	bait_make(&b);
	ctx0 = dpdat_mr_domain_count(dpdat_dev_domain(dev));
	mbufs0 = rte_mempool_in_use_count(dpdat_dev_port(dev)->pool);
	while (!done) {
		if (dpdat_cm_eq_poll(eq, &ev) == 1) {
			last = h_now();
			switch (ev.type) {
			case DPDAT_CM_CONNECT_REQUEST:
				if (qp != NULL) {	/* a stranger */
					strangers++;
					dpdat_cm_reject(ev.conn, NULL, 0);
					dpdat_cm_conn_free(ev.conn);
					break;
				}
				qp = new_qp();
				for (int k = 0; k < SLOTS; k++)
					post_recv(qp, b.slots, b.kslots, k);
				g = (struct grant){ (uintptr_t)(b.arena + CANARY),
						    b.kwin, WIN };
				if (dpdat_cm_accept(ev.conn, qp, &g, sizeof(g),
						    eq) != 0)
					H_FAIL("accept");
				sc = ev.conn;
				break;
			case DPDAT_CM_ESTABLISHED:
				publish(qp, &b);
				break;
			case DPDAT_CM_DISCONNECTED:
				if (!onpath && strcmp((char *)ev.private_data,
						      "END") != 0)
					H_FAIL("disconnected without END: "
					       "torn down by someone");
				dpdat_cm_conn_free(ev.conn);
				sc = NULL;
				done = 1;
				break;
			default:
				if (!onpath)
					H_FAIL("server: CM event %d", ev.type);
				broken = 1;
				break;
			}
		}
		while (dpdat_cq_poll(cq, &wc, 1) == 1)
			server_recv(qp, &b, &wc, &sends, &broken);
		if (h_now() - last > 60) {
			server_report(qp, strangers, sends);
			bait_changed(&b);
			H_FAIL("no CM event for 60 s");
		}
		if (h_now() - look > 0.1) {	/* the client finished? */
			look = h_now();
			if (gone == 0 && client_done())
				gone = look;
		}
		if (gone != 0 && h_now() - gone > 5) {
			/* its DREQ (if any) had 5 s to come: on a broken
			 * connection the client may have had none to send */
			if (!onpath) {
				struct dpdat_qp_info qi;

				/* our QP healthy: nothing here broke it (a
				 * forged request would have, a forged DREQ
				 * would have disconnected); the client gave
				 * up on its own (the script decides) */
				if (qp != NULL && dpdat_qp_query(qp, &qi) == 0 &&
				    qi.state == DPDAT_QPS_RTS) {
					printf("server: the client finished, "
					       "no DREQ came; our QP is "
					       "healthy\n");
					dpdat_qp_dump(qp, stdout);
					stalled = 1;
					if (dpdat_cm_disconnect(sc, NULL,
								0) == 0)
						dpdat_cm_eq_wait(eq, &ev,
								 2000);
					dpdat_cm_conn_free(sc);
					break;
				}
				server_report(qp, strangers, sends);
				bait_changed(&b);
				H_FAIL("the client finished, no DREQ came");
			}
			printf("server: the connection broke, no DREQ\n");
			if (dpdat_cm_disconnect(sc, NULL, 0) == 0)
				dpdat_cm_eq_wait(eq, &ev, 2000);
			dpdat_cm_conn_free(sc);
			break;
		}
	}
	(void)broken;
	/* strangers' requests answered; give the last REJs time to leave */
	for (double t0 = h_now(); h_now() - t0 < 0.5; )
		dpdat_dev_progress(dev);
	server_report(qp, strangers, sends);
	if (bait_changed(&b) != 0)
		H_FAIL("bytes outside the granted window changed");
	if (qp != NULL)
		dpdat_qp_free(qp);
	printf("server: contexts %u -> %u, mbufs in use %u -> %u\n", ctx0,
	       dpdat_mr_domain_count(dpdat_dev_domain(dev)), mbufs0,
	       rte_mempool_in_use_count(dpdat_dev_port(dev)->pool));
	if (dpdat_mr_domain_count(dpdat_dev_domain(dev)) != ctx0)
		H_FAIL("registration contexts left behind");
	if (rte_mempool_in_use_count(dpdat_dev_port(dev)->pool) >
	    mbufs0 + 64 + h_dev_slack(dpdat_dev_port(dev)))
		H_FAIL("mbufs left behind");
	if (!onpath && sends == 0)
		H_FAIL("no SEND arrived");
	dpdat_cm_listen_free(l);
	bait_free(&b);
}

/* ---- client ---- */

static struct dpdat_qp *client_qp;

/* The client's figures, and a sign for the server that it is done
 * (whether it passed or failed: the server stops waiting). */
static void
client_exit(void)
{
	struct dpdat_port_stats ps;
	struct dpdat_qp_stats qs;
	char path[512];
	FILE *f;

	/* after main closed the device there is nothing left to report (and
	 * nothing to touch): only the sign for the server */
	if (dev != NULL && dpdat_port_stats(dpdat_dev_port(dev), &ps) == 0)
		printf("client: port: rx %lu, tx %lu, refused by the device "
		       "%lu; dropped: no QP %lu, not the peer %lu, ICRC %lu\n",
		       (unsigned long)ps.rx_pkts, (unsigned long)ps.tx_pkts,
		       (unsigned long)ps.drop_tx_full,
		       (unsigned long)ps.drop_no_qp,
		       (unsigned long)ps.drop_not_peer,
		       (unsigned long)ps.drop_icrc);
	if (dev != NULL && client_qp != NULL)
		dpdat_qp_dump(client_qp, stdout);
	if (dev != NULL && client_qp != NULL &&
	    dpdat_qp_stats(client_qp, &qs) == 0)
		printf("client: qp: tx %lu, retransmits %lu, timeouts %lu, "
		       "NAKs received %lu, probes %lu\n",
		       (unsigned long)qs.tx_pkts,
		       (unsigned long)qs.retransmits,
		       (unsigned long)qs.timeouts,
		       (unsigned long)qs.naks_rcvd, (unsigned long)qs.probes);
	snprintf(path, sizeof(path), "%s.done", rdv);
	f = fopen(path, "w");
	if (f != NULL)
		fclose(f);
	fflush(stdout);
}

static int
client_wc(uint64_t id, enum dpdat_wr_opcode op, unsigned long round)
{
	struct dpdat_wc wc;

	if (h_wait(cq, &wc, 20) != 0)
		H_FAIL("round %lu: no completion in 20 s", round);
	if (wc.status == DPDAT_WC_SUCCESS && wc.wr_id == id &&
	    wc.opcode == op)
		return 0;
	if (!onpath)
		H_FAIL("round %lu: status %d op %d wr %lu: the connection "
		       "broke", round, wc.status, wc.opcode,
		       (unsigned long)wc.wr_id);
	printf("client: round %lu: status %d: the on-path attacker broke "
	       "the connection\n", round, wc.status);
	return -1;
}

static void
client(int secs)
{
	uint8_t *buf = dpdat_mem_alloc(3 * WIN, 4096, -1);
	struct dpdat_qp *qp = new_qp();
	struct dpdat_cm_conn *c;
	struct dpdat_cm_event ev;
	struct dpdat_lmr *l;
	unsigned long r;
	struct grant g;
	uint32_t key, ip;
	double t0;

	if (buf == NULL)
		H_FAIL("mem_alloc");
	client_qp = qp;
	atexit(client_exit);
	l = reg(buf, 3 * WIN, DPDAT_MEM_PRIV_LOCAL_READ |
		DPDAT_MEM_PRIV_LOCAL_WRITE, &key);
	if (h_server_ip(&ip) != 0)
		H_FAIL("DPDAT_TEST_SERVER: not an IPv4 address");
	c = dpdat_cm_connect(qp, ip, SERVICE, "hostile", 8, eq);
	if (c == NULL || dpdat_cm_eq_wait(eq, &ev, 10000) != 1 ||
	    ev.type != DPDAT_CM_ESTABLISHED)
		H_FAIL("connect");
	memcpy(&g, ev.private_data, sizeof(g));
	t0 = h_now();
	for (r = 0; h_now() - t0 < secs; r++) {
		fill(buf, WIN, (uint32_t)r * 7 + 1);
		post(qp, DPDAT_WR_RDMA_WRITE, 1, buf, WIN, key, &g);
		if (client_wc(1, DPDAT_WR_RDMA_WRITE, r) != 0)
			break;
		memset(buf + WIN, 0, WIN);
		post(qp, DPDAT_WR_RDMA_READ, 2, buf + WIN, WIN, key, &g);
		if (client_wc(2, DPDAT_WR_RDMA_READ, r) != 0)
			break;
		if (changed(buf + WIN, WIN, (uint32_t)r * 7 + 1) != 0)
			H_FAIL("round %lu: READ brought back other bytes", r);
		fill(buf + 2 * WIN, MSG, (uint32_t)r);
		post(qp, DPDAT_WR_SEND, 3, buf + 2 * WIN, MSG, key, NULL);
		if (client_wc(3, DPDAT_WR_SEND, r) != 0)
			break;
		if (dpdat_cm_eq_poll(eq, &ev) == 1 && !onpath)
			H_FAIL("round %lu: CM event %d: someone tore the "
			       "connection down", r, ev.type);
	}
	printf("client: %lu rounds of WRITE 16 KiB + READ back + SEND 4 KiB "
	       "in %.1f s, every byte checked\n", r, h_now() - t0);
	{
		int ret = dpdat_cm_disconnect(c, "END", 4);

		if (ret == 0)
			dpdat_cm_eq_wait(eq, &ev, 5000);
		else if (!onpath)
			H_FAIL("disconnect: %d", ret);
		else
			printf("client: no DREQ to send (%d): the connection "
			       "is gone\n", ret);
	}
	client_exit();
	client_qp = NULL;
	dpdat_cm_conn_free(c);
	dpdat_qp_free(qp);
	dpdat_lmr_free(l);
	dpdat_mem_free(buf);
}

int
main(int argc, char **argv)
{
	int server_role;

	if (argc < 4)
		H_FAIL("usage: hostile_target server|client <rendezvous> "
		       "<secs> [onpath]");
	server_role = strcmp(argv[1], "server") == 0;
	rdv = argv[2];
	onpath = argc > 4 && strcmp(argv[4], "onpath") == 0;
	dev = h_open(server_role, rdv, 1500, DPDAT_PROGRESS_INLINE);
	pz = dpdat_pz_create(dpdat_dev_domain(dev));
	cq = dpdat_cq_create(dev, 1024);
	eq = dpdat_cm_eq_create(dev, 1024);
	if (!pz || !cq || !eq)
		H_FAIL("setup");
	if (server_role)
		server();
	else
		client(atoi(argv[3]));
	for (double t0 = h_now(); h_now() - t0 < 0.3; )
		dpdat_dev_progress(dev);
	dpdat_cm_eq_free(eq);
	dpdat_cq_free(cq);
	dpdat_pz_free(pz);
	dpdat_dev_close(dev);
	dev = NULL;	/* the exit handler runs after this */
	return stalled ? 77 : 0;
}
