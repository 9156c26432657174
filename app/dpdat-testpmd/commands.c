/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The commands. Each is a verb and its arguments; the cmdline library
 * completes and documents the verbs (one instance per verb: the verb, then
 * the rest of the line), and the handlers parse their own arguments.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>

#include "testpmd.h"

#define MAX_ARGS 16

struct cmd {
	const char *verb;
	int (*fn)(int argc, char **argv);
	int min_args, max_args;
	const char *usage;
};

/* Parse a number with an optional K, M or G suffix (powers of 1024). */
static int
num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *s == '-')
		goto bad;
	switch (*end) {
	case 'k': case 'K': x <<= 10; end++; break;
	case 'm': case 'M': x <<= 20; end++; break;
	case 'g': case 'G': x <<= 30; end++; break;
	default: break;
	}
	if (*end != '\0' || x > max)
		goto bad;
	*v = x;
	return 0;
bad:
	printf("error: '%s' is not a number in 0 .. %llu\n", s,
	       (unsigned long long)max);
	return -1;
}

/* An index into one of the tables, naming a live object. */
static int
index_of(const char *s, int n, bool (*live)(int), const char *what)
{
	uint64_t v;

	if (num(s, (uint64_t)n - 1, &v) != 0)
		return -1;
	if (!live((int)v)) {
		printf("error: no %s %lu\n", what, (unsigned long)v);
		return -1;
	}
	return (int)v;
}

static bool pz_live(int i) { return tp.pz[i] != NULL; }
static bool lmr_live(int i) { return tp.lmr[i].lmr != NULL; }
static bool rmr_live(int i) { return tp.rmr[i] != NULL; }
static bool conn_live(int i) { return tp.conn[i].state != TP_CONN_FREE; }

static int
free_slot(bool (*live)(int), int n, const char *what)
{
	for (int i = 0; i < n; i++)
		if (!live(i))
			return i;
	printf("error: all %d %s slots in use\n", n, what);
	return -1;
}

static int
privileges(const char *s, uint32_t *priv)
{
	if (strcmp(s, "none") == 0)
		*priv = DPDAT_MEM_PRIV_LOCAL_READ | DPDAT_MEM_PRIV_LOCAL_WRITE;
	else if (strcmp(s, "r") == 0)
		*priv = DPDAT_MEM_PRIV_ALL & ~DPDAT_MEM_PRIV_REMOTE_WRITE;
	else if (strcmp(s, "w") == 0)
		*priv = DPDAT_MEM_PRIV_ALL & ~DPDAT_MEM_PRIV_REMOTE_READ;
	else if (strcmp(s, "rw") == 0)
		*priv = DPDAT_MEM_PRIV_ALL;
	else {
		printf("error: remote access is none, r, w or rw\n");
		return -1;
	}
	return 0;
}

static int
fail_errno(const char *what, int err)
{
	printf("error: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return -1;
}

static const char *
ip_str(uint32_t ip, char *buf)
{
	return inet_ntop(AF_INET, &ip, buf, INET_ADDRSTRLEN);
}

/* ---- show ---- */

static int
show_port(void)
{
	struct dpdat_port_info pi;
	char ip[INET_ADDRSTRLEN];

	dpdat_port_query(dpdat_dev_port(tp.dev), &pi);
	printf("port %u: %s\n  MAC %02x:%02x:%02x:%02x:%02x:%02x  IPv4 %s  "
	       "MTU %u\n  link %s, %u Mb/s\n  memory: %s\n", pi.port_id,
	       pi.name, pi.mac.addr_bytes[0], pi.mac.addr_bytes[1],
	       pi.mac.addr_bytes[2], pi.mac.addr_bytes[3],
	       pi.mac.addr_bytes[4], pi.mac.addr_bytes[5],
	       ip_str(pi.ipv4, ip), pi.mtu, pi.link_up ? "up" : "down",
	       pi.link_speed, dpdat_mem_mode_str(dpdat_eal_mem_mode()));
	return 0;
}

static int
show_stats(void)
{
	struct dpdat_port_stats s;

	dpdat_port_stats(dpdat_dev_port(tp.dev), &s);
	printf("  RX-packets: %-12lu RX-bytes: %-14lu RoCEv2: %-10lu ARP: %lu\n"
	       "  TX-packets: %-12lu TX-bytes: %-14lu ARP: %lu\n"
	       "  dropped: not ours %lu, malformed %lu, tx full %lu, "
	       "bad ICRC %lu,\n           bad header %lu, no QP %lu, "
	       "not the peer %lu\n"
	       "  faults injected: drop %lu, dup %lu, reorder %lu, "
	       "corrupt %lu, ce %lu\n  captured: %lu (lost %lu)\n"
	       "  bursts cut short by the memif peer's unmap: %lu\n",
	       s.rx_pkts, s.rx_bytes, s.rx_roce, s.rx_arp, s.tx_pkts,
	       s.tx_bytes, s.tx_arp, s.drop_not_ours, s.drop_malformed,
	       s.drop_tx_full, s.drop_icrc, s.drop_bad_hdr, s.drop_no_qp,
	       s.drop_not_peer, s.fault_drop, s.fault_dup, s.fault_reorder,
	       s.fault_corrupt, s.fault_ce, s.captured, s.capture_lost,
	       s.peer_unmapped);
	return 0;
}

static int
show_neigh(void)
{
	struct dpdat_neigh n[64];
	char ip[INET_ADDRSTRLEN];
	int k = dpdat_dev_neighbours(tp.dev, n, RTE_DIM(n));

	if (k < 0)
		return fail_errno("neighbours", k);
	printf("  %-15s %-17s %-10s %s\n", "IPv4", "MAC", "state", "age");
	for (int i = 0; i < k; i++)
		printf("  %-15s %02x:%02x:%02x:%02x:%02x:%02x %-10s %u ms\n",
		       ip_str(n[i].ipv4, ip), n[i].mac.addr_bytes[0],
		       n[i].mac.addr_bytes[1], n[i].mac.addr_bytes[2],
		       n[i].mac.addr_bytes[3], n[i].mac.addr_bytes[4],
		       n[i].mac.addr_bytes[5], n[i].state, n[i].age_ms);
	return 0;
}

static int
show_pz(void)
{
	struct dpdat_pz_info pi;

	for (int i = 0; i < TP_MAX_PZ; i++)
		if (tp.pz[i] != NULL && dpdat_pz_query(tp.pz[i], &pi) == 0)
			printf("  pz %d: id %u\n", i, pi.id);
	return 0;
}

/* The domain's table, as the engine sees it: every live context. */
static int
walk_cb(uint32_t ctx, struct dpdat_lmr *lmr, struct dpdat_rmr *rmr, void *arg)
{
	bool want_lmr = *(bool *)arg;
	struct dpdat_lmr_info li;
	struct dpdat_rmr_info ri;

	if (want_lmr && lmr != NULL && dpdat_lmr_query(lmr, &li) == 0 &&
	    ctx == li.lmr_context)
		printf("  0x%08x  %-8s %#14lx %12lu  priv 0x%02x  rkey 0x%08x"
		       "  rmrs %u\n", ctx, dpdat_mem_kind_str(li.kind),
		       (unsigned long)li.address, (unsigned long)li.length,
		       li.privileges, li.rmr_context, li.rmr_count);
	else if (!want_lmr && rmr != NULL && dpdat_rmr_query(rmr, &ri) == 0)
		printf("  0x%08x  %#14lx %12lu  priv 0x%02x\n", ctx,
		       (unsigned long)ri.address, (unsigned long)ri.length,
		       ri.privileges);
	return 0;
}

static int
show_table(bool lmr)
{
	int i;

	if (lmr) {
		for (i = 0; i < TP_MAX_LMR; i++)
			if (tp.lmr[i].lmr != NULL)
				printf("  lmr %d: pz %d, %zu bytes of %s memory "
				       "at %p\n", i, tp.lmr[i].pz, tp.lmr[i].len,
				       tp.lmr[i].huge ? "DPDK" : "plain",
				       (void *)tp.lmr[i].mem);
		printf("  context     kind            address       length\n");
	} else {
		for (i = 0; i < TP_MAX_RMR; i++)
			if (tp.rmr[i] != NULL)
				printf("  rmr %d\n", i);
		printf("  context            address       length\n");
	}
	dpdat_mr_domain_walk(dpdat_dev_domain(tp.dev), walk_cb, &lmr);
	return 0;
}

static int
show_conn(void)
{
	static const char *const st[] = { "free", "request", "connecting",
					   "established", "closing" };
	char ip[INET_ADDRSTRLEN];
	struct dpdat_qp_info qi;

	for (int i = 0; i < TP_MAX_CONN; i++) {
		const struct tp_conn *c = &tp.conn[i];

		if (c->state == TP_CONN_FREE)
			continue;
		qi.qpn = 0;
		if (c->qp != NULL)
			dpdat_qp_query(c->qp, &qi);
		printf("  conn %d: %-11s peer %-15s QPN 0x%06x lmr %d, peer "
		       "region %lu bytes\n", i, st[c->state],
		       ip_str(c->peer_ip, ip), qi.qpn, c->lmr,
		       (unsigned long)c->remote.len);
	}
	return 0;
}

static int
show_qp(const char *arg)
{
	int i = index_of(arg, TP_MAX_CONN, conn_live, "connection");
	struct dpdat_qp_stats s;

	if (i < 0)
		return -1;
	if (tp.conn[i].qp == NULL) {
		printf("error: conn %d has no QP yet\n", i);
		return -1;
	}
	dpdat_qp_dump(tp.conn[i].qp, stdout);
	dpdat_qp_stats(tp.conn[i].qp, &s);
	printf("  tx %lu pkts %lu bytes, rx %lu pkts %lu bytes\n"
	       "  retransmits %lu, timeouts %lu, NAKs sent %lu rcvd %lu, "
	       "RNR NAKs sent %lu rcvd %lu\n  duplicates %lu, out of "
	       "sequence %lu, zero-copy tx %lu\n"
	       "  resent %lu pkts (on SACKs %lu), probes %lu, held %lu\n",
	       s.tx_pkts, s.tx_bytes,
	       s.rx_pkts, s.rx_bytes, s.retransmits, s.timeouts, s.naks_sent,
	       s.naks_rcvd, s.rnr_naks_sent, s.rnr_naks_rcvd, s.dup_rcvd,
	       s.out_of_seq, s.tx_zerocopy, s.tx_resent, s.sack_resent,
	       s.probes, s.held);
	return 0;
}

static int
cmd_show(int argc, char **argv)
{
	const char *w = argv[1];

	if (strcmp(w, "port") == 0 || strcmp(w, "link") == 0)
		return show_port();
	if (strcmp(w, "stats") == 0)
		return show_stats();
	if (strcmp(w, "neigh") == 0)
		return show_neigh();
	if (strcmp(w, "pz") == 0)
		return show_pz();
	if (strcmp(w, "lmr") == 0 || strcmp(w, "rmr") == 0)
		return show_table(w[0] == 'l');
	if (strcmp(w, "conn") == 0)
		return show_conn();
	if (strcmp(w, "qp") == 0 && argc == 3)
		return show_qp(argv[2]);
	printf("error: show port|link|stats|neigh|pz|lmr|rmr|conn|qp <conn>\n");
	return -1;
}

/* ---- memory ---- */

static int
cmd_pz(int argc, char **argv)
{
	int i;

	if (strcmp(argv[1], "create") == 0 && argc == 2) {
		i = free_slot(pz_live, TP_MAX_PZ, "PZ");
		if (i < 0)
			return -1;
		tp.pz[i] = dpdat_pz_create(dpdat_dev_domain(tp.dev));
		if (tp.pz[i] == NULL)
			return fail_errno("pz create", rte_errno);
		printf("pz %d created\n", i);
		return 0;
	}
	if (strcmp(argv[1], "free") == 0 && argc == 3) {
		i = index_of(argv[2], TP_MAX_PZ, pz_live, "PZ");
		if (i < 0)
			return -1;
		int ret = dpdat_pz_free(tp.pz[i]);

		if (ret != 0)	/* EBUSY: LMRs, RMRs or QPs still in it */
			return fail_errno("pz free", ret);
		tp.pz[i] = NULL;
		printf("pz %d freed\n", i);
		return 0;
	}
	printf("error: pz create | pz free <pz>\n");
	return -1;
}

void
tp_lmr_mem_free(struct tp_lmr *l)
{
	if (l->huge)
		dpdat_mem_free(l->mem);
	else
		munmap(l->mem, l->len);
}

static int
lmr_create(int argc, char **argv)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	struct tp_lmr *l;
	uint32_t priv = DPDAT_MEM_PRIV_ALL;
	uint64_t size;
	int pz, i;

	pz = index_of(argv[2], TP_MAX_PZ, pz_live, "PZ");
	if (pz < 0 || num(argv[3], 1ull << 32, &size) != 0 ||
	    (argc > 5 && privileges(argv[5], &priv) != 0))
		return -1;
	if (size < 2 || (argc > 4 && strcmp(argv[4], "huge") != 0 &&
			 strcmp(argv[4], "plain") != 0)) {
		printf("error: lmr create <pz> <size >= 2> [huge|plain] "
		       "[none|r|w|rw]\n");
		return -1;
	}
	i = free_slot(lmr_live, TP_MAX_LMR, "LMR");
	if (i < 0)
		return -1;
	l = &tp.lmr[i];
	l->huge = argc <= 4 || strcmp(argv[4], "huge") == 0;
	l->len = size;
	l->pz = pz;
	if (l->huge) {
		l->mem = dpdat_mem_alloc(size, 4096, -1);
	} else {
		l->mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		l->mem = l->mem == MAP_FAILED ? NULL : l->mem;
	}
	if (l->mem == NULL) {
		printf("error: no %lu bytes of %s memory\n",
		       (unsigned long)size, l->huge ? "DPDK" : "plain");
		memset(l, 0, sizeof(*l));
		return -1;
	}
	d.virt.addr = l->mem;
	d.virt.length = size;
	l->lmr = dpdat_lmr_create(tp.pz[pz], &d, priv);
	if (l->lmr == NULL) {
		int err = rte_errno;

		tp_lmr_mem_free(l);
		memset(l, 0, sizeof(*l));
		return fail_errno("lmr create", err);
	}
	dpdat_lmr_query(l->lmr, &li);
	printf("lmr %d created: %lu bytes at %p, %s, lkey 0x%08x rkey 0x%08x\n",
	       i, (unsigned long)size, (void *)l->mem,
	       dpdat_mem_kind_str(li.kind), li.lmr_context, li.rmr_context);
	return 0;
}

static int
cmd_lmr(int argc, char **argv)
{
	int i, ret;

	if (strcmp(argv[1], "create") == 0 && argc >= 4 && argc <= 6)
		return lmr_create(argc, argv);
	if (strcmp(argv[1], "free") == 0 && argc == 3) {
		i = index_of(argv[2], TP_MAX_LMR, lmr_live, "LMR");
		if (i < 0)
			return -1;
		for (int k = 0; k < TP_MAX_CONN; k++)
			if (tp.conn[k].state != TP_CONN_FREE &&
			    tp.conn[k].lmr == i) {
				printf("error: conn %d uses lmr %d\n", k, i);
				return -1;
			}
		ret = dpdat_lmr_free(tp.lmr[i].lmr);
		if (ret != 0)	/* EBUSY: RMRs bound to it */
			return fail_errno("lmr free", ret);
		tp_lmr_mem_free(&tp.lmr[i]);
		memset(&tp.lmr[i], 0, sizeof(tp.lmr[i]));
		printf("lmr %d freed\n", i);
		return 0;
	}
	printf("error: lmr create <pz> <size> [huge|plain] [none|r|w|rw] | "
	       "lmr free <lmr>\n");
	return -1;
}

static int
rmr_bind(struct dpdat_rmr *rmr, int argc, char **argv)
{
	struct dpdat_lmr_triplet t = { 0 };
	struct dpdat_lmr_info li;
	uint32_t priv = DPDAT_MEM_PRIV_REMOTE, ctx;
	uint64_t off, len;
	int l, ret;

	l = index_of(argv[3], TP_MAX_LMR, lmr_live, "LMR");
	if (l < 0 || num(argv[4], UINT64_MAX, &off) != 0 ||
	    num(argv[5], UINT64_MAX, &len) != 0)
		return -1;
	if (argc == 7 && (privileges(argv[6], &priv) != 0 ||
			  (priv &= DPDAT_MEM_PRIV_REMOTE) == 0)) {
		printf("error: an RMR grants r, w or rw\n");
		return -1;
	}
	dpdat_lmr_query(tp.lmr[l].lmr, &li);
	t.lmr_context = li.lmr_context;
	t.virtual_address = (uintptr_t)tp.lmr[l].mem + off;
	t.segment_length = len;
	ret = dpdat_rmr_bind(rmr, &t, priv, &ctx);
	if (ret != 0)
		return fail_errno("rmr bind", ret);
	printf("rmr bound: lmr %d [%lu, +%lu), rkey 0x%08x\n", l,
	       (unsigned long)off, (unsigned long)len, ctx);
	return 0;
}

static int
cmd_rmr(int argc, char **argv)
{
	int i, ret;

	if (strcmp(argv[1], "create") == 0 && argc == 3) {
		int pz = index_of(argv[2], TP_MAX_PZ, pz_live, "PZ");

		i = pz < 0 ? -1 : free_slot(rmr_live, TP_MAX_RMR, "RMR");
		if (i < 0)
			return -1;
		tp.rmr[i] = dpdat_rmr_create(tp.pz[pz]);
		if (tp.rmr[i] == NULL)
			return fail_errno("rmr create", rte_errno);
		printf("rmr %d created (unbound)\n", i);
		return 0;
	}
	i = argc >= 3 ? index_of(argv[2], TP_MAX_RMR, rmr_live, "RMR") : -2;
	if (i == -1)
		return -1;
	if (i >= 0 && strcmp(argv[1], "bind") == 0 && argc >= 6 && argc <= 7)
		return rmr_bind(tp.rmr[i], argc, argv);
	if (i >= 0 && strcmp(argv[1], "unbind") == 0 && argc == 3) {
		struct dpdat_lmr_triplet t = { 0 };
		struct dpdat_rmr_info ri;

		dpdat_rmr_query(tp.rmr[i], &ri);
		if (ri.lmr == NULL) {
			printf("rmr %d is not bound\n", i);
			return 0;
		}
		struct dpdat_lmr_info li;

		dpdat_lmr_query(ri.lmr, &li);
		t.lmr_context = li.lmr_context;
		t.virtual_address = li.address;
		ret = dpdat_rmr_bind(tp.rmr[i], &t, DPDAT_MEM_PRIV_REMOTE,
				     NULL);
		if (ret != 0)
			return fail_errno("rmr unbind", ret);
		printf("rmr %d unbound\n", i);
		return 0;
	}
	if (i >= 0 && strcmp(argv[1], "free") == 0 && argc == 3) {
		ret = dpdat_rmr_free(tp.rmr[i]);
		if (ret != 0)
			return fail_errno("rmr free", ret);
		tp.rmr[i] = NULL;
		printf("rmr %d freed\n", i);
		return 0;
	}
	printf("error: rmr create <pz> | rmr bind <rmr> <lmr> <offset> <length>"
	       " [r|w|rw] | rmr unbind <rmr> | rmr free <rmr>\n");
	return -1;
}

/* ---- connections ---- */

/* The QP of a connection over an LMR, and what we tell the peer. */
static int
conn_prepare(struct tp_conn *c, int lmr, struct tp_pdata *pd)
{
	struct dpdat_qp_conf qc = { .max_send_wr = 512, .max_recv_wr = 256 };
	struct dpdat_lmr_info li;

	dpdat_lmr_query(tp.lmr[lmr].lmr, &li);
	c->lmr = lmr;
	c->recv_pattern = -1;
	c->cq = dpdat_cq_create(tp.dev, 1024);
	qc.pz = tp.pz[tp.lmr[lmr].pz];
	qc.send_cq = qc.recv_cq = c->cq;
	c->qp = c->cq != NULL ? dpdat_qp_create(tp.dev, &qc) : NULL;
	if (c->qp == NULL)
		return fail_errno("QP", rte_errno);
	*pd = (struct tp_pdata){ .magic = TP_PDATA_MAGIC,
		.rkey = li.rmr_context, .addr = li.address,
		.len = li.length };
	return 0;
}

static int
cmd_listen(int argc, char **argv)
{
	uint64_t q;
	int i;

	(void)argc;
	if (num(argv[1], UINT64_MAX, &q) != 0)
		return -1;
	for (i = 0; i < TP_MAX_CONN && tp.listener[i] != NULL; i++)
		;
	if (i == TP_MAX_CONN) {
		printf("error: %d listeners already\n", TP_MAX_CONN);
		return -1;
	}
	tp.listener[i] = dpdat_cm_listen(tp.dev, q, tp.eq);
	if (tp.listener[i] == NULL)
		return fail_errno("listen", rte_errno);
	tp.listen_qual[i] = q;
	printf("listening on service %lu\n", (unsigned long)q);
	return 0;
}

static int
cmd_connect(int argc, char **argv)
{
	struct tp_pdata pd;
	struct tp_conn *c;
	uint32_t ip;
	uint64_t q;
	int i, l;

	(void)argc;
	if (inet_pton(AF_INET, argv[1], &ip) != 1) {
		printf("error: '%s' is not an IPv4 address\n", argv[1]);
		return -1;
	}
	l = index_of(argv[3], TP_MAX_LMR, lmr_live, "LMR");
	i = free_slot(conn_live, TP_MAX_CONN, "connection");
	if (num(argv[2], UINT64_MAX, &q) != 0 || l < 0 || i < 0)
		return -1;
	c = &tp.conn[i];
	c->state = TP_CONN_CONNECTING;
	c->peer_ip = ip;
	if (conn_prepare(c, l, &pd) != 0) {
		tp_conn_release(c);
		return -1;
	}
	c->cm = dpdat_cm_connect(c->qp, ip, q, &pd, sizeof(pd), tp.eq);
	if (c->cm == NULL) {
		int err = rte_errno;

		tp_conn_release(c);
		return fail_errno("connect", err);
	}
	printf("conn %d: connecting to %s service %lu\n", i, argv[1],
	       (unsigned long)q);
	return 0;
}

static struct tp_conn *
conn_arg(const char *s, enum tp_conn_state want)
{
	int i = index_of(s, TP_MAX_CONN, conn_live, "connection");

	if (i < 0)
		return NULL;
	if (want != TP_CONN_FREE && tp.conn[i].state != want) {
		printf("error: conn %d is not %s\n", i,
		       want == TP_CONN_REQUEST ? "a pending request" :
		       "established");
		return NULL;
	}
	return &tp.conn[i];
}

static int
cmd_accept(int argc, char **argv)
{
	struct tp_conn *c = conn_arg(argv[1], TP_CONN_REQUEST);
	struct tp_pdata pd;
	int l, ret;

	(void)argc;
	l = index_of(argv[2], TP_MAX_LMR, lmr_live, "LMR");
	if (c == NULL || l < 0 || conn_prepare(c, l, &pd) != 0)
		return -1;
	ret = dpdat_cm_accept(c->cm, c->qp, &pd, sizeof(pd), tp.eq);
	if (ret != 0) {
		tp_conn_release(c);
		return fail_errno("accept", ret);
	}
	c->state = TP_CONN_CONNECTING;
	printf("conn %d: accepted\n", (int)(c - tp.conn));
	return 0;
}

static int
cmd_reject(int argc, char **argv)
{
	struct tp_conn *c = conn_arg(argv[1], TP_CONN_REQUEST);
	int ret;

	(void)argc;
	if (c == NULL)
		return -1;
	ret = dpdat_cm_reject(c->cm, NULL, 0);
	printf("conn %d: rejected\n", (int)(c - tp.conn));
	tp_conn_release(c);
	return ret != 0 ? fail_errno("reject", ret) : 0;
}

static int
cmd_disconnect(int argc, char **argv)
{
	struct tp_conn *c = conn_arg(argv[1], TP_CONN_FREE);
	int ret;

	(void)argc;
	if (c == NULL)
		return -1;
	if (c->state != TP_CONN_ESTABLISHED) {	/* nothing to tell the peer */
		tp_conn_release(c);
		printf("conn %s: released\n", argv[1]);
		return 0;
	}
	ret = dpdat_cm_disconnect(c->cm, NULL, 0);
	if (ret != 0)
		return fail_errno("disconnect", ret);
	c->state = TP_CONN_CLOSING;
	printf("conn %s: disconnecting\n", argv[1]);
	return 0;
}

/* ---- transfers ---- */

static int
cmd_xfer(int argc, char **argv)
{
	struct tp_conn *c = conn_arg(argv[1], TP_CONN_ESTABLISHED);
	const char *v = argv[0];
	uint64_t size, off = 0;
	int pattern = -1;

	if (c == NULL || num(argv[2], UINT32_MAX, &size) != 0 ||
	    (argc > 4 && num(argv[4], UINT64_MAX, &off) != 0))
		return -1;
	if (argc > 3 && tp_pattern_parse(argv[3], &pattern) != 0) {
		printf("error: a pattern is a byte (0x5a) or inc\n");
		return -1;
	}
	if (pattern < 0 && strcmp(v, "read") != 0 && strcmp(v, "recv") != 0) {
		printf("error: %s needs a pattern\n", v);
		return -1;
	}
	if (strcmp(v, "write") == 0)
		return tp_cmd_write(c, size, pattern, off);
	if (strcmp(v, "read") == 0)
		return tp_cmd_read(c, size, pattern, off);
	if (strcmp(v, "send") == 0)
		return tp_cmd_send(c, size, pattern);
	return tp_cmd_recv(c, size, pattern);
}

static int
cmd_check(int argc, char **argv)
{
	uint64_t off, size;
	size_t bad;
	int l, pattern;
	bool fill = strcmp(argv[0], "fill") == 0;

	(void)argc;
	l = index_of(argv[1], TP_MAX_LMR, lmr_live, "LMR");
	if (l < 0 || num(argv[2], UINT64_MAX, &off) != 0 ||
	    num(argv[3], UINT64_MAX, &size) != 0)
		return -1;
	if (tp_pattern_parse(argv[4], &pattern) != 0 ||
	    off > tp.lmr[l].len || size > tp.lmr[l].len - off) {
		printf("error: a range inside lmr %d and a pattern (0x5a or "
		       "inc)\n", l);
		return -1;
	}
	if (fill) {
		tp_pattern_fill(tp.lmr[l].mem + off, size, pattern);
		printf("fill: lmr %d [%lu, +%lu) written\n", l,
		       (unsigned long)off, (unsigned long)size);
		return 0;
	}
	if (tp_pattern_check(tp.lmr[l].mem + off, size, pattern, &bad) != 0) {
		printf("check: lmr %d: MISMATCH at offset %lu: 0x%02x\n", l,
		       (unsigned long)(off + bad), tp.lmr[l].mem[off + bad]);
		return -1;
	}
	printf("check: lmr %d [%lu, +%lu): as expected\n", l,
	       (unsigned long)off, (unsigned long)size);
	return 0;
}

static int
cmd_stream(int argc, char **argv)
{
	struct tp_conn *c = conn_arg(argv[1], TP_CONN_ESTABLISHED);
	uint64_t size, depth = 64, secs = 5;

	if (c == NULL || num(argv[3], UINT32_MAX, &size) != 0 ||
	    (argc > 4 && num(argv[4], 256, &depth) != 0) ||
	    (argc > 5 && num(argv[5], 3600, &secs) != 0))
		return -1;
	if (strcmp(argv[2], "write") != 0 && strcmp(argv[2], "read") != 0) {
		printf("error: a stream is of write or read\n");
		return -1;
	}
	return tp_cmd_stream(c, argv[2][0] == 'r', size, (uint32_t)depth,
			     (double)secs);
}

/* ---- port tools ---- */

static int
cmd_fault(int argc, char **argv)
{
	struct dpdat_fault_conf fc;
	int ret;

	(void)argc;
	if (strcmp(argv[1], "off") == 0) {
		ret = dpdat_dev_set_faults(tp.dev, NULL);
	} else {
		ret = dpdat_fault_parse(argv[1], &fc);
		if (ret != 0) {
			printf("error: fault rx:drop=0.01,dup=0,reorder=0,"
			       "corrupt=0;tx:drop=0.01;seed=N | fault off\n");
			return -1;
		}
		ret = dpdat_dev_set_faults(tp.dev, &fc);
	}
	if (ret != 0)
		return fail_errno("fault", ret);
	printf("fault injection %s\n", strcmp(argv[1], "off") == 0 ? "off" :
	       "on");
	return 0;
}

static int
cmd_capture(int argc, char **argv)
{
	int ret;

	if (strcmp(argv[1], "start") == 0 && argc == 3)
		ret = dpdat_dev_capture_start(tp.dev, argv[2]);
	else if (strcmp(argv[1], "stop") == 0 && argc == 2)
		ret = dpdat_dev_capture_stop(tp.dev);
	else {
		printf("error: capture start <file.pcapng> | capture stop\n");
		return -1;
	}
	if (ret != 0)
		return fail_errno("capture", ret);
	printf("capture %s%s%s\n", argv[1][2] == 'a' ? "started: " : "stopped",
	       argc == 3 ? argv[2] : "", "");
	return 0;
}

static const char *const wait_names[TP_EV_COUNT] = {
	"request", "established", "rejected", "disconnected", "recv", "link" };

static int
cmd_wait(int argc, char **argv)
{
	uint64_t secs = 30;

	if (argc > 2 && num(argv[2], 3600, &secs) != 0)
		return -1;
	for (int e = 0; e < TP_EV_COUNT; e++)
		if (strcmp(argv[1], wait_names[e]) == 0)
			return tp_events_wait((enum tp_event)e, (double)secs);
	printf("error: wait request|established|rejected|disconnected|recv|"
	       "link [seconds]\n");
	return -1;
}

static int
cmd_sleep(int argc, char **argv)
{
	uint64_t ms;

	(void)argc;
	if (num(argv[1], 3600000, &ms) != 0)
		return -1;
	for (uint64_t end = rte_get_tsc_cycles() + ms * rte_get_tsc_hz() /
	     1000; rte_get_tsc_cycles() < end; rte_delay_us_sleep(1000))
		tp_events_poll();
	return 0;
}

static int cmd_help(int argc, char **argv);

static int
cmd_quit(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tp.quit = true;
	return 0;
}

static const struct cmd cmds[] = {
	{ "help", cmd_help, 0, 0, "help: this list" },
	{ "show", cmd_show, 1, 2,
	  "show port|link|stats|neigh|pz|lmr|rmr|conn|qp <conn>" },
	{ "pz", cmd_pz, 1, 2, "pz create | pz free <pz>" },
	{ "lmr", cmd_lmr, 2, 5,
	  "lmr create <pz> <size> [huge|plain] [none|r|w|rw] | lmr free <lmr>" },
	{ "rmr", cmd_rmr, 2, 6, "rmr create <pz> | rmr bind <rmr> <lmr> "
	  "<offset> <length> [r|w|rw] | rmr unbind <rmr> | rmr free <rmr>" },
	{ "listen", cmd_listen, 1, 1, "listen <service>" },
	{ "connect", cmd_connect, 3, 3, "connect <ipv4> <service> <lmr>" },
	{ "accept", cmd_accept, 2, 2, "accept <conn> <lmr>" },
	{ "reject", cmd_reject, 1, 1, "reject <conn>" },
	{ "disconnect", cmd_disconnect, 1, 1, "disconnect <conn>" },
	{ "write", cmd_xfer, 3, 4,
	  "write <conn> <size> <pattern> [offset]: RDMA WRITE, read back, "
	  "compare" },
	{ "read", cmd_xfer, 2, 4, "read <conn> <size> [pattern] [offset]" },
	{ "send", cmd_xfer, 3, 3, "send <conn> <size> <pattern>" },
	{ "recv", cmd_xfer, 2, 3, "recv <conn> <size> [pattern]: post a "
	  "receive" },
	{ "fill", cmd_check, 4, 4, "fill <lmr> <offset> <size> <pattern>" },
	{ "check", cmd_check, 4, 4, "check <lmr> <offset> <size> <pattern>" },
	{ "stream", cmd_stream, 3, 5,
	  "stream <conn> write|read <size> [depth] [seconds]" },
	{ "fault", cmd_fault, 1, 1, "fault <spec> | fault off" },
	{ "capture", cmd_capture, 1, 2,
	  "capture start <file.pcapng> | capture stop" },
	{ "wait", cmd_wait, 1, 2, "wait request|established|rejected|"
	  "disconnected|recv|link [seconds]" },
	{ "sleep", cmd_sleep, 1, 1, "sleep <ms>" },
	{ "quit", cmd_quit, 0, 0, "quit" },
};

static int
cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < RTE_DIM(cmds); i++)
		printf("  %s\n", cmds[i].usage);
	printf("  sizes take K, M, G; a pattern is a byte (0x5a) or inc\n");
	return 0;
}

/* Split a line and run its command. Returns 0, or -1 when it failed. */
int
tp_run_line(char *line)
{
	char *argv[MAX_ARGS + 2], *save = NULL, *t;
	int argc = 0;

	for (t = strtok_r(line, " \t\r\n", &save); t != NULL && *t != '#';
	     t = strtok_r(NULL, " \t\r\n", &save)) {
		if (argc == MAX_ARGS + 1) {
			printf("error: too many arguments\n");
			return -1;
		}
		argv[argc++] = t;
	}
	if (argc == 0)
		return 0;
	tp_events_poll();
	for (size_t i = 0; i < RTE_DIM(cmds); i++) {
		if (strcmp(argv[0], cmds[i].verb) != 0)
			continue;
		if (argc - 1 < cmds[i].min_args ||
		    argc - 1 > cmds[i].max_args) {
			printf("usage: %s\n", cmds[i].usage);
			return -1;
		}
		return cmds[i].fn(argc, argv);
	}
	printf("error: unknown command '%s' (help lists them)\n", argv[0]);
	return -1;
}

/* ---- the cmdline library's view: one instance per verb ---- */

struct tp_res {
	cmdline_fixed_string_t verb;
	cmdline_multi_string_t args;
};

static cmdline_parse_token_string_t verb_tok[RTE_DIM(cmds)];
static cmdline_parse_token_string_t args_tok = {
	.hdr = { &cmdline_token_string_ops, offsetof(struct tp_res, args) },
	.string_data = { TOKEN_STRING_MULTI },
};
void *tp_cmdline_ctx[2 * RTE_DIM(cmds) + 1];
int tp_last_status;

static void
on_parsed(void *res, struct cmdline *cl, void *data)
{
	const struct tp_res *r = res;
	char line[sizeof(r->verb) + sizeof(r->args) + 2];

	snprintf(line, sizeof(line), "%s %s", r->verb, data ? r->args : "");
	tp_last_status = tp_run_line(line);
	if (tp.quit)
		cmdline_quit(cl);
}

static cmdline_parse_inst_t *
inst_new(size_t i, bool args)
{
	cmdline_parse_inst_t *in = calloc(1, sizeof(*in) + 3 * sizeof(void *));

	if (in == NULL)
		return NULL;
	in->f = on_parsed;
	in->data = args ? &args_tok : NULL;
	in->help_str = cmds[i].usage;
	in->tokens[0] = &verb_tok[i].hdr;
	in->tokens[1] = args ? &args_tok.hdr : NULL;
	return in;
}

/* Two instances per verb: the verb alone, and the verb with arguments
 * (a multi-string token never matches an empty rest of line). */
int
tp_cmdline_ctx_init(void)
{
	size_t i, n = 0;

	for (i = 0; i < RTE_DIM(cmds); i++) {
		verb_tok[i] = (cmdline_parse_token_string_t){
			.hdr = { &cmdline_token_string_ops,
				 offsetof(struct tp_res, verb) },
			.string_data = { cmds[i].verb } };
		tp_cmdline_ctx[n] = inst_new(i, false);
		if (tp_cmdline_ctx[n++] == NULL)
			return -ENOMEM;
		if (cmds[i].max_args == 0)
			continue;
		tp_cmdline_ctx[n] = inst_new(i, true);
		if (tp_cmdline_ctx[n++] == NULL)
			return -ENOMEM;
	}
	tp_cmdline_ctx[n] = NULL;
	return 0;
}
