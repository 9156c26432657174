/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * libFuzzer harness for the RSM protocol (drivers/rsm), whose messages ride
 * in the private data of IB CM messages, and for its node list.
 *
 * The controller is the real one (rsm_get_controller: DPDAT_RSM_* settings,
 * a net_ring port whose transmit path is replaced by one that reads what
 * the exporter answers). Its service thread is stopped: the harness takes
 * the events of the controller's queue and hands each to the service's own
 * handler (rsm_service_event), and the device's engine runs inline in the
 * harness's thread, so that an input's outcome is its own. Three
 * segments are published (no ACL: the umask's 0644; an ACL giving node 2
 * 0660 and node 3 0604; one giving node 3 alone 0600), a fourth is not.
 * The peers are nodes 2 and 3 and a host that is no node.
 *
 * Input: a mode byte, then
 *   mode 0 (exporter): a flags byte and the REQ's private data (the
 *     importer's struct rsm_req, at most 92 bytes), sent as a REQ to the
 *     exporter's service from a real REQ of dpdat's (captured at setup):
 *     bits 0-1: the peer (node 2, node 3, no node, node 2)
 *     bit 2:    the magic is RSM's (else as given)
 *     bit 3:    the segment id is one of the segments (bits 4-5 say which)
 *     bit 7:    when the exporter accepted, the peer ends the connection
 *               with a REJ of the REP (else an RTU and a DREQ); the same
 *               bytes are that message's private data (an importer's BYE)
 *     bit 6:    once accepted, the peer comes back: a RESUME with the
 *               ticket granted (ended the other way)
 *   The tickets granted go at the end of the input (unpublish, publish).
 *   mode 1 (importer): the exporter's answer as the importer's connection
 *     event carries it (rsm_import_reply): a byte for the event type, one
 *     for the reject reason, one for the private data's length, the data
 *   mode 2 (node list): DPDAT_RSM_NODES text (rsm_parse_nodes)
 * Checked: the importer takes a reply only from an accepting REP, and
 * otherwise reports a documented RSMERR code; a node list that parses has
 * 1..RSM_MAX_NODES distinct nonzero ids; every connection an input opened
 * on the exporter is gone at its end (no leak, LeakSanitizer).
 *
 * The CM keeps a rejected request's connection a few seconds (to answer
 * the request again). Left to the clock, thousands of inputs' connections
 * would be held at once, and every message would walk them all (this ran
 * at 2,400 inputs a second): at the end of an exporter input the harness
 * runs the CM's timers a minute ahead, which frees what the input left
 * held, so an input frees what it allocates.
 *
 * FUZZ_RSM_DUMP=dir writes the REQ private data of dpdat's own importer
 * (every op) and the exporter's REP and REJ private data there as inputs:
 * the seed corpus (test/fuzz/corpus-rsm, from two runs: -runs=0 on a node
 * list, then on the REQs it wrote). rej-status-258 there is the first
 * finding (a REJ of RSM's with a code of no meaning).
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_qp.h>

#include "cm_priv.h"
#include "cm_wire.h"
#include "dev_priv.h"
#include "port_priv.h"
#include "rc_priv.h"
#include "rsm_priv.h"
#include "fuzz_peer.h"

#define NODE1_IP	0x010012c6u	/* 198.18.0.1: the controller */
#define N_PEERS		3
#define N_SEGS		4
#define SEG_SIZE	8192

static struct rsm_ctlr *c;
static struct dpdat_port *port;
static struct fuzz_peer peers[N_PEERS] = {
	{ .ip = 0x020012c6u, .mac = { .addr_bytes = { 2, 0, 0, 0, 0, 2 } } },
	{ .ip = 0x030012c6u, .mac = { .addr_bytes = { 2, 0, 0, 0, 0, 3 } } },
	{ .ip = 0x090012c6u, .mac = { .addr_bytes = { 2, 0, 0, 0, 0, 9 } } },
};
static rsm_memseg_export_handle_t segs[N_SEGS];
static rsm_memseg_id_t seg_ids[N_SEGS];
static rsmapi_access_entry_t acl_b[] = { { 2, 0660 }, { 3, 0604 } };
static rsmapi_access_entry_t acl_c[] = { { 3, 0600 } };
static uint8_t req_tmpl[CM_MAD_LEN];	/* a REQ of dpdat's to RSM_SERVICE */
static int have_tmpl;
static uint32_t next_comm_id = 0x10000;
static unsigned long inputs;

/* The exporter's last REP. */
static struct {
	uint32_t local_id, remote_id, qpn;
	uint64_t ticket;
} rep_sent;

static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_rsm: %s\n", what);
		abort();
	}
}

/* FUZZ_RSM_DUMP: an input of the mode, the flags byte and the bytes. */
static void
dump(const char *kind, uint8_t mode, const uint8_t *hdr, size_t hlen,
     const uint8_t *b, size_t len)
{
	static unsigned int n;
	const char *dir = getenv("FUZZ_RSM_DUMP");
	char path[512];
	FILE *f;

	if (dir == NULL || n >= 64)
		return;
	snprintf(path, sizeof(path), "%s/%s-%u", dir, kind, n++);
	f = fopen(path, "w");
	if (f == NULL)
		return;
	fwrite(&mode, 1, 1, f);
	fwrite(hdr, 1, hlen, f);
	fwrite(b, 1, len, f);
	fclose(f);
}

static void
dump_sent(const uint8_t *cm, uint16_t attr)
{
	/* the importer's view: its event with the exporter's answer */
	const uint8_t est[3] = { DPDAT_CM_ESTABLISHED, 0, sizeof(struct rsm_rep) };
	const uint8_t rej[3] = { DPDAT_CM_REJECTED, DPDAT_CM_REJ_CONSUMER,
				 sizeof(struct rsm_rep) };

	static unsigned int reps, rejs;	/* a few of each */

	if (attr == CM_ATTR_REP && reps++ < 4)
		dump("rep", 1, est, 3, cm + REP_PDATA, sizeof(struct rsm_rep));
	else if (attr == CM_ATTR_REJ && rejs++ < 8)
		dump("rej", 1, rej, 3, cm + REJ_PDATA, sizeof(struct rsm_rep));
}

static void
read_mad(const uint8_t *mad)
{
	const uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	const uint8_t *cm = mad + CM_HDR_LEN;

	if (attr == CM_ATTR_REP) {
		rep_sent.local_id = cm_get32(cm, REP_LOCAL_ID);
		rep_sent.remote_id = cm_get32(cm, REP_REMOTE_ID);
		rep_sent.qpn = cm_get32(cm, REP_QPN) >> 8;
		memcpy(&rep_sent.ticket, cm + REP_PDATA +
		       offsetof(struct rsm_rep, ticket), 8);
	}
	if (attr == CM_ATTR_REQ && !have_tmpl) {
		memcpy(req_tmpl, mad, CM_MAD_LEN);
		have_tmpl = 1;
	}
	dump_sent(cm, attr);
}

/* The port's transmit path: read the CM MADs, drop everything. */
static uint16_t
peer_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	const unsigned int off = PORT_HDR_LEN + sizeof(struct roce_bth) +
				 sizeof(struct roce_deth);
	const uint8_t *mad;

	(void)p;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (rte_pktmbuf_data_len(m) >= off + CM_MAD_LEN) {
			mad = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
			if (mad[1] == CM_MGMT_CLASS)
				read_mad(mad);
		}
		rte_pktmbuf_free(m);
	}
	return n;
}

/* The events of the controller's queue, as its service would take them. */
static void
service(void)
{
	struct dpdat_cm_event ev;

	while (dpdat_cm_eq_poll(c->eq, &ev) == 1)
		rsm_service_event(c, &ev);
	dpdat_dev_progress(c->dev);	/* what the answers queued goes out */
}

static void
publish(int i)
{
	rsmapi_access_entry_t *acl[N_SEGS] = { NULL, acl_b, acl_c, NULL };
	const uint_t nacl[N_SEGS] = { 0, 2, 1, 0 };

	seg_ids[i] = 0;
	if (rsm_memseg_export_publish(segs[i], &seg_ids[i], acl[i],
				      nacl[i]) != 0)
		abort();
}

/* A REQ of dpdat's own importer to RSM_SERVICE: the template of the
 * peers' (its QP stays, connecting to nobody; its events are drained). */
static void
capture_req(void)
{
	struct dpdat_qp_conf qc = { .pz = c->pz };
	struct dpdat_cm_eq *eq = dpdat_cm_eq_create(c->dev, 64);
	struct rsm_req q = { .magic = RSM_WIRE_MAGIC, .op = RSM_OP_NEW,
			     .perm = RSM_PERM_READ, .node = 2 };
	struct dpdat_cq *cq = dpdat_cq_create(c->dev, 64);

	qc.send_cq = cq;
	qc.recv_cq = cq;
	if (eq == NULL || cq == NULL)
		abort();
	for (int op = RSM_OP_NEW; op <= RSM_OP_BYE; op++) {
		q.op = (uint32_t)op;
		q.segid = seg_ids[op - 1];
		q.ticket = op == RSM_OP_NEW ? 0 : 0x1234;
		dump("req", 0, (const uint8_t[]){ 0x0c | (op - 1) << 4 }, 1,
		     (const uint8_t *)&q, sizeof(q));
	}
	q.op = RSM_OP_NEW;
	q.segid = seg_ids[0];
	if (dpdat_cm_connect(dpdat_qp_create(c->dev, &qc), peers[0].ip,
			     RSM_SERVICE, &q, sizeof(q), eq) == NULL)
		abort();
	for (int i = 0; i < 1000 && !have_tmpl; i++)
		dpdat_dev_progress(c->dev);
	if (!have_tmpl)
		abort();
}

static void
setup(void)
{
	struct dpdat_eal_conf ec = { .program = "fuzz_rsm",
				     .huge = DPDAT_HUGE_NEVER, .mem_mb = 256,
				     .log_level = 1 };
	rsmapi_controller_handle_t h;
	char name[] = "fz";

	setenv("DPDAT_RSM_CONTROLLER", name, 1);
	setenv("DPDAT_RSM_NODES", "1=198.18.0.1,2=198.18.0.2,3=198.18.0.3", 1);
	setenv("DPDAT_RSM_NODE", "1", 1);
	setenv("DPDAT_RSM_DEVICE", "net_ring0", 1);
	setenv("DPDAT_RSM_SEGMENTID_FILE", "/nonexistent/rsm.segmentid", 1);
	umask(022);
	if (dpdat_eal_init(&ec) < 0 || rsm_get_controller(name, &h) != 0)
		abort();
	c = (struct rsm_ctlr *)h;
	/* the harness is the service from now on */
	c->stop = 1;
	pthread_join(c->svc, NULL);
	fuzz_dev_inline(c->dev);
	port = dpdat_dev_port(c->dev);
	rc_lock_engine(rc_dev(c->dev));
	port->dev_tx = peer_tx;
	port_path_update(port);
	rc_unlock_engine(rc_dev(c->dev));
	for (int i = 0; i < N_PEERS; i++) {
		peers[i].dev = c->dev;
		peers[i].port = port;
		fuzz_peer_arp_reply(&peers[i]);
	}
	for (int i = 0; i < N_SEGS; i++) {
		void *va;

		if (posix_memalign(&va, 4096, SEG_SIZE) != 0 ||
		    rsm_memseg_export_create(h, &segs[i], va, SEG_SIZE,
					     0) != 0)
			abort();
		memset(va, 0, SEG_SIZE);
		if (i < 3)
			publish(i);
	}
	capture_req();
}

/* The peer's message to the exporter's connection: attr with the peer's
 * id, the exporter's and (pdata_off > 0) private data. */
static void
send_cm(struct fuzz_peer *p, uint16_t attr, uint32_t id, uint32_t remote,
	uint32_t qpn, unsigned int pdata_off, const uint8_t *pd, size_t len)
{
	uint8_t mad[CM_MAD_LEN] = { 1, CM_MGMT_CLASS, CM_CLASS_VERSION,
				    CM_METHOD_SEND };
	uint8_t *cm = mad + CM_HDR_LEN;

	memcpy(mad + 8, req_tmpl + 8, 8);	/* a transaction id */
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
	cm_put32(cm, 0, id);
	cm_put32(cm, 4, remote);
	if (attr == CM_ATTR_DREQ)
		cm_put32(cm, DREQ_QPN, qpn << 8);
	if (attr == CM_ATTR_REJ)
		cm[REJ_MSG] = 1 << 6;	/* the REP rejected */
	if (pdata_off > 0)
		memcpy(cm + pdata_off, pd, len);
	fuzz_peer_deliver(p, fuzz_peer_mad(p, mad));
}

/* One request from peer p with private data pd: the exporter's answer,
 * then (accepted) the peer's end of the connection: a REJ of the REP, or
 * an RTU and a DREQ, with pd as private data. 1 when it was accepted. */
static int
request(struct fuzz_peer *p, const uint8_t *pd, int rej, uint64_t *ticket)
{
	uint8_t mad[CM_MAD_LEN];
	uint32_t id = next_comm_id++, ours = 0, qpn = 0;
	int accepted;

	memcpy(mad, req_tmpl, CM_MAD_LEN);
	cm_put32(mad + CM_HDR_LEN, REQ_LOCAL_ID, id);
	memcpy(mad + CM_HDR_LEN + REQ_PDATA, pd, REQ_PDATA_LEN);
	fuzz_peer_deliver(p, fuzz_peer_mad(p, mad));
	service();	/* the request: accepted or rejected */
	accepted = rep_sent.remote_id == id;
	if (!accepted)
		return 0;
	ours = rep_sent.local_id;
	qpn = rep_sent.qpn;
	*ticket = rep_sent.ticket;
	if (rej) {
		send_cm(p, CM_ATTR_REJ, id, ours, 0, REJ_PDATA, pd,
			REQ_PDATA_LEN);
	} else {
		send_cm(p, CM_ATTR_RTU, id, ours, 0, 0, NULL, 0);
		send_cm(p, CM_ATTR_DREQ, id, ours, qpn, DREQ_PDATA, pd,
			REQ_PDATA_LEN);
	}
	service();	/* the end of the connection */
	return 1;
}

static void
exporter(const uint8_t *data, size_t size)
{
	uint8_t flags, pd[REQ_PDATA_LEN] = { 0 };
	struct rsm_req *q = (struct rsm_req *)pd;
	struct fuzz_peer *p;
	uint64_t ticket = 0;

	if (size < 1)
		return;
	flags = data[0];
	p = &peers[(flags & 3) == 3 ? 0 : flags & 3];
	memcpy(pd, data + 1, RTE_MIN(size - 1, sizeof(pd)));
	if (flags & 4)
		q->magic = RSM_WIRE_MAGIC;
	if (flags & 8)
		q->segid = seg_ids[(flags >> 4) & 3];
	if (request(p, pd, flags & 128, &ticket) && (flags & 64)) {
		/* the importer comes back with its ticket */
		q->op = RSM_OP_RESUME;
		q->ticket = ticket;
		request(p, pd, !(flags & 128), &ticket);
	}
	/* the tickets granted go with the input (unpublishing forgets
	 * them): what an input allocates, it frees */
	for (int i = 0; i < 3; i++)
		if (!TAILQ_EMPTY(&((struct rsm_export *)segs[i])->tickets) &&
		    TAILQ_EMPTY(&((struct rsm_export *)segs[i])->conns) &&
		    rsm_memseg_export_unpublish(segs[i]) == 0)
			publish(i);
	/* the rejected requests' connections held for their repeats: let
	 * the hold run out now (no input relies on an earlier one's) */
	cm_progress(rc_dev(c->dev), rte_get_tsc_cycles() + 60 * rte_get_tsc_hz());
	service();
}

static int
rsmerr_documented(int r)
{
	return (r >= RSMERR_BAD_LIBRARY_VERSION && r <= RSMERR_SEG_NOT_CONNECTED) ||
	       r == RSMERR_INTERNAL_ERROR || r == RSMERR_UNSUPPORTED_OPERATION;
}

static void
importer(const uint8_t *data, size_t size)
{
	static const enum dpdat_cm_event_type types[8] = {
		DPDAT_CM_ESTABLISHED, DPDAT_CM_REJECTED, DPDAT_CM_UNREACHABLE,
		DPDAT_CM_DISCONNECTED, DPDAT_CM_BROKEN,
		DPDAT_CM_CONNECT_REQUEST, DPDAT_CM_ESTABLISHED,
		DPDAT_CM_REJECTED };
	struct rsm_import m;
	struct dpdat_cm_event ev;
	struct rsm_rep rep;
	int r;

	if (size < 3)
		return;
	memset(&ev, 0, sizeof(ev));
	memset(&m, 0, sizeof(m));
	ev.type = types[data[0] & 7];
	ev.reason = data[1];
	ev.private_data_len = RTE_MIN((uint16_t)data[2],
				      (uint16_t)sizeof(ev.private_data));
	/* the CM hands over what the message carried, the rest zeroed */
	memcpy(ev.private_data, data + 3, RTE_MIN(size - 3,
		(size_t)ev.private_data_len));
	m.broken = 1;
	r = rsm_import_reply(&m, &ev);
	memcpy(&rep, ev.private_data, sizeof(rep));
	if (r == 0)
		check(ev.type == DPDAT_CM_ESTABLISHED && !m.broken &&
		      m.rkey == rep.rkey && m.rlen == rep.len &&
		      m.ticket == rep.ticket, "a reply taken from no REP");
	else
		check(rsmerr_documented(r) && m.broken && m.rkey == 0,
		      "an undocumented error, or a refusal taken");
}

static void
node_list(const uint8_t *data, size_t size)
{
	static struct rsm_ctlr cfg;
	char s[2100];

	size = RTE_MIN(size, sizeof(s) - 1);
	memcpy(s, data, size);
	s[size] = '\0';
	memset(&cfg, 0, sizeof(cfg));
	if (rsm_parse_nodes(&cfg, s) != 0)
		return;
	check(cfg.n_nodes >= 1 && cfg.n_nodes <= RSM_MAX_NODES, "node count");
	for (unsigned int i = 0; i < cfg.n_nodes; i++) {
		check(cfg.nodes[i].id != 0, "node 0");
		for (unsigned int j = 0; j < i; j++)
			check(cfg.nodes[j].id != cfg.nodes[i].id,
			      "a node twice");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (c == NULL)
		setup();
	if (size < 1)
		return 0;
	if (++inputs % 10000 == 0)	/* ARP entries age out after 300 s */
		for (int i = 0; i < N_PEERS; i++)
			fuzz_peer_arp_reply(&peers[i]);
	switch (data[0] % 3) {
	case 0:
		exporter(data + 1, size - 1);
		break;
	case 1:
		importer(data + 1, size - 1);
		break;
	default:
		node_list(data + 1, size - 1);
		break;
	}
	return 0;
}
