/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The connection manager. Application calls change state under cm->lock and
 * leave what must be sent as "pending" on the connection; the engine (which
 * alone transmits) sends it from cm_progress(), retries it on a timer, and
 * handles the MADs that arrive. Lock order: the engine holds its flag and
 * then takes cm->lock; application calls never take the engine flag while
 * they hold cm->lock.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_random.h>
#include <rte_tailq.h>

#include <dpdat/dpdat_cm.h>

#include "cm_local.h"
#include "cm_priv.h"
#include "cm_wire.h"
#include "evq.h"
#include "port_priv.h"
#include "rc_priv.h"

#define CM_MAGIC_EQ	0x434d4551u
#define CM_MAGIC_LSN	0x434d4c53u
#define CM_MAGIC_CONN	0x434d434eu
#define CM_RETRY_MS	100	/* CM response timeout */
#define CM_MAX_TRIES	10	/* with backoff, about 6 s before giving up */
/* REQs sent before a REJ "nobody listens" is taken for an answer: the REQ
 * goes again at its retry times (100, 200, 400 ms), 0.7 s in all */
#define CM_NOLISTEN_TRIES 4
#define CM_RESOLVE_MS	2000	/* ARP */
#define CM_BACKLOG	1024	/* requests waiting for the consumer, at most */


enum conn_state {
	CS_RESOLVING = 1,	/* active: waiting for the peer's MAC */
	CS_REQ_SENT,		/* active: REQ out, waiting for REP or REJ */
	CS_REQ_RCVD,		/* passive: request shown to the consumer */
	CS_REP_SENT,		/* passive: accepted, waiting for RTU */
	CS_ESTABLISHED,
	CS_DREQ_SENT,		/* disconnecting, waiting for DREP */
	CS_CLOSED,		/* last event delivered; may be freed */
};

struct dpdat_cm_eq {
	uint32_t magic;
	struct rc_dev *dev;
	struct evq evq;		/* of struct dpdat_cm_event */
	uint32_t users;
};

struct dpdat_cm_listener {
	uint32_t magic;
	struct cm_dev *cm;
	uint64_t service_id;
	uint64_t conn_qual;
	struct dpdat_cm_eq *eq;
	TAILQ_ENTRY(dpdat_cm_listener) next;
};

struct dpdat_cm_conn {
	uint32_t magic;
	struct cm_dev *cm;
	enum conn_state state;
	bool active;
	uint32_t local_id, remote_id;
	uint64_t service_id, conn_qual, tid;
	uint32_t peer_ip;
	struct rte_ether_addr peer_mac;
	struct dpdat_qp *qp;
	struct dpdat_qp_remote remote;	/* the peer's QP, once known */
	struct dpdat_cm_eq *eq;
	uint16_t pending;	/* attribute to (re)send; 0: none */
	uint16_t rej_reason;
	uint32_t tries;
	uint64_t next_tsc, start_tsc;
	uint8_t pdata[DPDAT_CM_DREQ_PDATA_MAX];
	uint16_t plen;
	bool zombie;		/* freed by the consumer, a message still to go */
	uint64_t zombie_until;	/* a rejected one answers duplicates until */
	TAILQ_ENTRY(dpdat_cm_conn) next;
};

/* RDMA CM's port space for TCP-like services: 0x0000000001 0106 pppp */
static uint64_t
service_of(uint64_t conn_qual)
{
	return conn_qual <= 0xffff ? 0x0000000001060000ull | conn_qual :
				     conn_qual;
}

/* A QP goes (dpdat_qp_free(), engine held, through dev->qp_gone): a
 * connection that still names it (its application freed the QP before the
 * connection, which stays until the peer answers a disconnect, or as a
 * zombie) forgets it, so that a late DREQ or a timer never touches freed
 * memory. */
static void
cm_qp_gone(void *ctx, struct dpdat_qp *qp)
{
	struct cm_dev *cm = ctx;
	struct dpdat_cm_conn *c;

	if (cm == NULL)
		return;
	pthread_mutex_lock(&cm->lock);
	TAILQ_FOREACH(c, &cm->conns, next)
		if (c->qp == qp)
			c->qp = NULL;
	cm_offer_gone(cm, qp);
	pthread_mutex_unlock(&cm->lock);
}

int
cm_dev_create(struct rc_dev *dev)
{
	struct cm_dev *cm = calloc(1, sizeof(*cm));

	if (cm == NULL)
		return -ENOMEM;
	cm->dev = dev;
	pthread_mutex_init(&cm->lock, NULL);
	TAILQ_INIT(&cm->listeners);
	TAILQ_INIT(&cm->conns);
	TAILQ_INIT(&cm->offers);
	cm->ud_psn = (uint32_t)rte_rand() & ROCE_PSN_MASK;
	cm->retry_tsc = rte_get_tsc_hz() * CM_RETRY_MS / 1000;
	dev->cm = cm;
	dev->qp_gone_ctx = cm;
	dev->qp_gone = cm_qp_gone;
	return 0;
}

void
cm_dev_free(struct rc_dev *dev)
{
	struct cm_dev *cm = dev->cm;

	struct dpdat_cm_conn *c, *tmp;
	bool owned;

	if (cm == NULL)
		return;
	dev->qp_gone = NULL;
	owned = !TAILQ_EMPTY(&cm->listeners);

	/* zombies (freed, still answering duplicates) go quietly; what
	 * the application still holds is worth a word */
	RTE_TAILQ_FOREACH_SAFE(c, &cm->conns, next, tmp) {
		owned |= !c->zombie;
		TAILQ_REMOVE(&cm->conns, c, next);
		free(c);
	}
	cm_offers_free(cm);
	if (owned)
		RC_LOG(WARNING, "device closed with CM objects left");
	pthread_mutex_destroy(&cm->lock);
	free(cm);
	dev->cm = NULL;
}

/* ---- events ---- */

static bool
post_event(struct dpdat_cm_eq *eq, enum dpdat_cm_event_type type,
	   struct dpdat_cm_conn *c, struct dpdat_cm_listener *l,
	   const uint8_t *pdata, uint16_t plen, uint16_t reason)
{
	struct dpdat_cm_event ev;

	if (eq == NULL)
		return false;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.conn = c;
	ev.listener = l;
	ev.conn_qual = c->conn_qual;
	ev.peer_ipv4 = c->peer_ip;
	ev.reason = reason;
	ev.private_data_len = RTE_MIN(plen, (uint16_t)sizeof(ev.private_data));
	if (pdata != NULL)
		memcpy(ev.private_data, pdata, ev.private_data_len);
	if (!evq_push(&eq->evq, &ev)) {
		RC_LOG(ERR, "CM event queue full: event %d lost", type);
		return false;
	}
	return true;
}

struct dpdat_cm_eq *
dpdat_cm_eq_create(struct dpdat_dev *d, uint32_t size)
{
	struct rc_dev *dev = rc_dev(d);
	struct dpdat_cm_eq *eq;

	if (dev == NULL || dev->magic != RC_MAGIC_DEV) {
		rte_errno = EBADF;
		return NULL;
	}
	if (size == 0 || size > 65536) {
		rte_errno = EINVAL;
		return NULL;
	}
	eq = calloc(1, sizeof(*eq));
	if (eq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (evq_init(&eq->evq, "dpdat_cmeq", sizeof(struct dpdat_cm_event),
		     size, rc_dev_progress_fn(dev), dev) != 0) {
		free(eq);
		rte_errno = ENOMEM;
		return NULL;
	}
	eq->dev = dev;
	eq->magic = CM_MAGIC_EQ;
	return eq;
}

int
dpdat_cm_eq_poll(struct dpdat_cm_eq *eq, struct dpdat_cm_event *ev)
{
	if (eq == NULL || eq->magic != CM_MAGIC_EQ)
		return -EBADF;
	if (ev == NULL)
		return -EINVAL;
	return evq_poll(&eq->evq, ev, 1) == 1;
}

int
dpdat_cm_eq_wait(struct dpdat_cm_eq *eq, struct dpdat_cm_event *ev,
		 int timeout_ms)
{
	const uint64_t hz = rte_get_tsc_hz(), t0 = rte_get_tsc_cycles();
	uint64_t spent;
	int ret;

	for (;;) {
		ret = dpdat_cm_eq_poll(eq, ev);
		if (ret != 0)
			return ret;
		spent = (rte_get_tsc_cycles() - t0) * 1000 / hz;
		if (timeout_ms >= 0 && spent >= (uint64_t)timeout_ms)
			return 0;
		/* another consumer may take what woke us: poll again */
		evq_wait(&eq->evq, timeout_ms < 0 ? -1 :
			 timeout_ms - (int)spent);
	}
}

int
dpdat_cm_eq_fd(const struct dpdat_cm_eq *eq)
{
	if (eq == NULL || eq->magic != CM_MAGIC_EQ)
		return -EBADF;
	/* whoever asks for the fd watches it, as dpdat_cq_fd's caller */
	evq_watch(&((struct dpdat_cm_eq *)(uintptr_t)eq)->evq);
	return eq->evq.efd;
}

int
dpdat_cm_eq_free(struct dpdat_cm_eq *eq)
{
	if (eq == NULL || eq->magic != CM_MAGIC_EQ)
		return -EBADF;
	if (__atomic_load_n(&eq->users, __ATOMIC_ACQUIRE) != 0)
		return -EBUSY;
	eq->magic = 0;
	evq_fini(&eq->evq);
	free(eq);
	return 0;
}

static void
eq_use(struct dpdat_cm_eq *eq, int d)
{
	if (eq != NULL)
		__atomic_add_fetch(&eq->users, (uint32_t)d, __ATOMIC_ACQ_REL);
}

/* ---- sending (engine only) ---- */

uint8_t *
cm_mad_start(struct cm_dev *cm, struct rte_mbuf **mp, uint8_t mclass,
	     uint8_t version, uint16_t attr, uint64_t tid)
{
	struct dpdat_port *port = cm->dev->port;
	struct rte_mbuf *m = rte_pktmbuf_alloc(port->pool);
	struct roce_bth *bth;
	struct roce_deth *deth;
	uint8_t *mad;

	if (m == NULL)
		return NULL;
	bth = (struct roce_bth *)rte_pktmbuf_append(m, sizeof(*bth) +
		sizeof(*deth) + CM_MAD_LEN);
	if (bth == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(bth, 0, sizeof(*bth) + sizeof(*deth) + CM_MAD_LEN);
	bth->opcode = ROCE_OP_UD_SEND_ONLY;
	bth->pkey = rte_cpu_to_be_16(ROCE_PKEY_DEFAULT);
	bth->qpn = rte_cpu_to_be_32(ROCE_QP1);
	bth->apsn = rte_cpu_to_be_32(cm->ud_psn);
	cm->ud_psn = roce_psn_add(cm->ud_psn, 1);
	deth = (struct roce_deth *)(bth + 1);
	deth->qkey = rte_cpu_to_be_32(ROCE_QKEY_GSI);
	deth->sqp = rte_cpu_to_be_32(ROCE_QP1);
	mad = (uint8_t *)(deth + 1);
	mad[0] = 1;			/* base version */
	mad[1] = mclass;
	mad[2] = version;
	mad[3] = CM_METHOD_SEND;
	cm_put64(mad, 8, tid);
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
	*mp = m;
	return mad + CM_HDR_LEN;
}

void
cm_mad_send(struct cm_dev *cm, struct rte_mbuf *m, uint32_t ip,
	 const struct rte_ether_addr *mac)
{
	/* source port of QP1 traffic: as rxe, 0xC000 + hash of QPN 1 */
	if (port_frame(cm->dev->port, m, ip, mac, 0xc001) != 0) {
		rte_pktmbuf_free(m);
		return;
	}
	rc_tx(cm->dev, m);
}

static void
gid_of(uint8_t *gid, uint32_t ip)
{
	/* RoCEv2 over IPv4: the IPv4-mapped IPv6 address */
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &ip, 4);
}

static void
send_req(struct dpdat_cm_conn *c)
{
	struct dpdat_port *port = c->cm->dev->port;
	struct dpdat_qp *qp = c->qp;
	struct rte_mbuf *m;
	uint8_t *p;
	uint16_t pmtu = 4096;

	if (qp == NULL)
		return;		/* freed meanwhile (cm_qp_gone) */
	p = cm_mad_start(c->cm, &m, CM_MGMT_CLASS, CM_CLASS_VERSION,
			 CM_ATTR_REQ, c->tid);
	if (p == NULL)
		return;
	while ((pmtu + 64 > port->mtu || pmtu > c->remote.pmtu) && pmtu > 256)
		pmtu /= 2;	/* c->remote.pmtu: lowered by a REJ (on_rej) */
	cm_put32(p, REQ_LOCAL_ID, c->local_id);
	cm_put64(p, REQ_SERVICE_ID, c->service_id);
	cm_put32(p, REQ_QKEY, 0);
	cm_put32(p, REQ_QPN_RR, qp->qpn << 8 | RC_MAX_RD);
	cm_put32(p, REQ_EECN_ID, RC_MAX_RD);
	/* remote CM timeout 20 (4 s), transport RC (0) */
	cm_put32(p, REQ_REECN_TO, 20u << 3);
	cm_put32(p, REQ_PSN_TO, qp->req.isn << 8 | 20u << 3 | 7);
	p[REQ_PKEY] = 0xff;
	p[REQ_PKEY + 1] = 0xff;
	p[REQ_MTU_RNR] = (uint8_t)(cm_mtu_enc(pmtu) << 4 | 7);
	p[REQ_MAXRETRY] = CM_MAX_TRIES << 4;
	p[REQ_LID_L] = p[REQ_LID_L + 1] = 0xff;	/* permissive LID: RoCE */
	p[REQ_LID_R] = p[REQ_LID_R + 1] = 0xff;
	gid_of(p + REQ_GID_L, port->ip);
	gid_of(p + REQ_GID_R, c->peer_ip);
	p[REQ_HOPLIMIT] = 64;
	p[REQ_SL] = 0x08;			/* subnet local */
	p[REQ_ACKTO] = 14 << 3 | CM_EXT_NAK_REPEAT |
		       (c->cm->dev->go_back_n ? 0 : CM_EXT_SACK | CM_EXT_ACK_RIDE);
	if (cm_ip_service(c->service_id)) {
		/* rdma_cm's header, then the consumer's bytes; the source
		 * port stands for our end as a TCP port would */
		cm_ip_hdr_put(p + REQ_PDATA, port->ip, c->peer_ip,
			      (uint16_t)(0x8000 | (c->local_id & 0x7fff)));
		memcpy(p + REQ_PDATA + CM_IP_HDR_LEN, c->pdata,
		       RTE_MIN(c->plen, REQ_PDATA_LEN - CM_IP_HDR_LEN));
	} else {
		memcpy(p + REQ_PDATA, c->pdata, RTE_MIN(c->plen, REQ_PDATA_LEN));
	}
	cm_mad_send(c->cm, m, c->peer_ip, &c->peer_mac);
}

/* The extensions a REQ offers or a REP accepts (reserved bits, zero from
 * any CM but dpdat's) that this device allows. */
static uint8_t
ext_of(const struct cm_dev *cm, uint8_t bits)
{
	return ((bits & CM_EXT_SACK) && !cm->dev->go_back_n ?
		DPDAT_QP_EXT_SACK : 0) |
	       ((bits & CM_EXT_ACK_RIDE) && !cm->dev->go_back_n ?
		DPDAT_QP_EXT_ACK_RIDE : 0) |
	       (bits & CM_EXT_NAK_REPEAT ? DPDAT_QP_EXT_NAK_REPEAT : 0);
}

static void
send_rep(struct dpdat_cm_conn *c)
{
	struct rte_mbuf *m;
	uint8_t *p;

	if (c->qp == NULL)
		return;		/* freed meanwhile (cm_qp_gone) */
	p = cm_mad_start(c->cm, &m, CM_MGMT_CLASS, CM_CLASS_VERSION,
			 CM_ATTR_REP, c->tid);
	if (p == NULL)
		return;
	cm_put32(p, REP_LOCAL_ID, c->local_id);
	cm_put32(p, REP_REMOTE_ID, c->remote_id);
	cm_put32(p, REP_QPN, c->qp->qpn << 8);
	cm_put32(p, REP_PSN, c->qp->req.isn << 8);
	p[REP_RR] = RC_MAX_RD;
	/* our initiator depth: within the requester's responder resources */
	p[REP_ID] = c->remote.max_rd_atomic;
	p[REP_TAD] = 14 << 3;
	p[REP_RNR] = 7 << 5 |
		     (c->remote.ext & DPDAT_QP_EXT_SACK ? CM_EXT_SACK : 0) |
		     (c->remote.ext & DPDAT_QP_EXT_NAK_REPEAT ?
		      CM_EXT_NAK_REPEAT : 0) |
		     (c->remote.ext & DPDAT_QP_EXT_ACK_RIDE ?
		      CM_EXT_ACK_RIDE : 0);
	memcpy(p + REP_PDATA, c->pdata, RTE_MIN(c->plen, REP_PDATA_LEN));
	cm_mad_send(c->cm, m, c->peer_ip, &c->peer_mac);
}

/* RTU, DREP, DREQ and MRA: ids, then (DREQ) the peer's QPN, (MRA) what is
 * acknowledged and for how long, then private data */
static void
send_simple(struct dpdat_cm_conn *c, uint16_t attr)
{
	struct rte_mbuf *m;
	uint8_t *p;

	/* an ACK the QP holds for a request to ride on goes before the
	 * DREQ, which breaks the peer's QP: else its last requests flush */
	if (attr == CM_ATTR_DREQ && c->qp != NULL)
		rc_ack_last(c->qp);
	p = cm_mad_start(c->cm, &m, CM_MGMT_CLASS, CM_CLASS_VERSION,
			 attr, c->tid);
	if (p == NULL)
		return;
	cm_put32(p, 0, c->local_id);
	cm_put32(p, 4, c->remote_id);
	if (attr == CM_ATTR_MRA) {
		/* message MRAed: 0 = REQ; service timeout 22: 4.096 us *
		 * 2^22, about 17.2 s */
		p[MRA_MSG] = 0;
		p[MRA_TIMEOUT] = 22 << 3;
	} else if (attr == CM_ATTR_DREQ) {
		cm_put32(p, DREQ_QPN, c->remote.qpn << 8);
		memcpy(p + DREQ_PDATA, c->pdata,
		       RTE_MIN(c->plen, DREQ_PDATA_LEN));
	} else if (attr == CM_ATTR_RTU) {
		memcpy(p + RTU_PDATA, c->pdata, RTE_MIN(c->plen, RTU_PDATA_LEN));
	}
	cm_mad_send(c->cm, m, c->peer_ip, &c->peer_mac);
}

/* The largest IBTA path MTU a port carries with the RoCEv2 headers. */
static uint16_t
cm_port_pmtu(const struct dpdat_port *port)
{
	uint16_t pmtu = 4096;

	while (pmtu + 64 > port->mtu && pmtu > 256)
		pmtu /= 2;
	return pmtu;
}

static void
send_rej(struct cm_dev *cm, uint32_t local_id, uint32_t remote_id,
	 uint64_t tid, uint8_t msg, uint16_t reason, const uint8_t *pdata,
	 uint16_t plen, uint32_t ip, const struct rte_ether_addr *mac)
{
	struct rte_mbuf *m;
	uint8_t *p = cm_mad_start(cm, &m, CM_MGMT_CLASS, CM_CLASS_VERSION,
				  CM_ATTR_REJ, tid);

	if (p == NULL)
		return;
	cm_put32(p, REJ_LOCAL_ID, local_id);
	cm_put32(p, REJ_REMOTE_ID, remote_id);
	p[REJ_MSG] = (uint8_t)(msg << 6);
	p[REJ_REASON] = (uint8_t)(reason >> 8);
	p[REJ_REASON + 1] = (uint8_t)reason;
	if (reason == CM_REJ_INVALID_MTU) {
		/* additional information: the largest path MTU we carry */
		p[REJ_INFO_LEN] = 1 << 1;
		p[REJ_ARI] = (uint8_t)(cm_mtu_enc(cm_port_pmtu(cm->dev->port))
				       << 4);
	}
	if (pdata != NULL)
		memcpy(p + REJ_PDATA, pdata, RTE_MIN(plen, REJ_PDATA_LEN));
	cm_mad_send(cm, m, ip, mac);
}

static void
transmit(struct dpdat_cm_conn *c)
{
	switch (c->pending) {
	case CM_ATTR_REQ:
		send_req(c);
		break;
	case CM_ATTR_REP:
		send_rep(c);
		break;
	case CM_ATTR_REJ:
		send_rej(c->cm, c->local_id, c->remote_id, c->tid, 0,
			 c->rej_reason, c->pdata, c->plen, c->peer_ip,
			 &c->peer_mac);
		break;
	default:
		send_simple(c, c->pending);
	}
}

/* Set what goes out next; the engine sends it at once, then retries. */
static void
schedule(struct dpdat_cm_conn *c, uint16_t attr)
{
	c->pending = attr;
	c->tries = 0;
	c->next_tsc = 0;
	cm_kick(c->cm);
}

static void
conn_close(struct dpdat_cm_conn *c, enum dpdat_cm_event_type type,
	   const uint8_t *pdata, uint16_t plen, uint16_t reason)
{
	c->state = CS_CLOSED;
	c->pending = 0;
	post_event(c->eq, type, c, NULL, pdata, plen, reason);
}

/* One connection's timers; cm->lock held, engine held. */
static void
conn_timer(struct dpdat_cm_conn *c, uint64_t now)
{
	struct dpdat_port *port = c->cm->dev->port;
	int ret;

	if (c->state == CS_RESOLVING) {
		ret = port_resolve(port, c->peer_ip, &c->peer_mac);
		if (ret == 0) {
			c->remote.mac = c->peer_mac;
			c->state = CS_REQ_SENT;
			schedule(c, CM_ATTR_REQ);
		} else if ((ret != -EAGAIN && ret != -EHOSTUNREACH) ||
			   (int64_t)(now - c->start_tsc) >
			   (int64_t)(rte_get_tsc_hz() * CM_RESOLVE_MS / 1000)) {
			/* a neighbour that failed is asked again once its
			 * failure expires, within the deadline. Signed: the
			 * application may have set start_tsc after the
			 * engine read now. */
			conn_close(c, DPDAT_CM_UNREACHABLE, NULL, 0, 0);
		}
		return;
	}
	/* the RTU was lost but traffic arrives: the peer is established
	 * (IBTA's "communication established") */
	if (c->state == CS_REP_SENT && c->qp != NULL &&
	    c->qp->st.rx_pkts != 0) {
		c->state = CS_ESTABLISHED;
		c->pending = 0;
		post_event(c->eq, DPDAT_CM_ESTABLISHED, c, NULL, NULL, 0, 0);
		return;
	}
	/* an established QP that broke (peer gone, retries exhausted) */
	if (c->state == CS_ESTABLISHED && c->qp != NULL &&
	    __atomic_load_n(&c->qp->state, __ATOMIC_ACQUIRE) ==
	    DPDAT_QPS_ERR) {
		conn_close(c, DPDAT_CM_BROKEN, NULL, 0, 0);
		return;
	}
	if (c->pending == 0 || now < c->next_tsc)
		return;
	if (c->tries == CM_MAX_TRIES) {
		/* no answer */
		if (c->state == CS_DREQ_SENT)
			conn_close(c, DPDAT_CM_DISCONNECTED, NULL, 0, 0);
		else if (c->state == CS_REQ_SENT || c->state == CS_REP_SENT)
			conn_close(c, DPDAT_CM_UNREACHABLE, NULL, 0, 0);
		else
			c->pending = 0;	/* one-shot messages: RTU, DREP, REJ */
		return;
	}
	transmit(c);
	c->tries++;
	/* back off: 100, 200, 400, then 800 ms, about 6 s in all, so that
	 * a passive side busy with a thousand requests still answers */
	c->next_tsc = now + (c->cm->retry_tsc << RTE_MIN(c->tries - 1, 3u));
	/* RTU, DREP, REJ and MRA are answers: sent once, again only when the
	 * peer asks again (duplicate REP, DREQ or REQ) */
	if (c->pending == CM_ATTR_RTU || c->pending == CM_ATTR_DREP ||
	    c->pending == CM_ATTR_REJ || c->pending == CM_ATTR_MRA)
		c->pending = 0;
}

void
cm_progress(struct rc_dev *dev, uint64_t now)
{
	struct cm_dev *cm = dev->cm;
	struct dpdat_cm_conn *c, *tmp;

	/* conns with timers: look every millisecond, or when kicked */
	if (cm == NULL || (__atomic_load_n(&cm->work, __ATOMIC_ACQUIRE) == 0 &&
			   now - cm->last < rte_get_tsc_hz() / 1000))
		return;
	cm->last = now;
	__atomic_store_n(&cm->work, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&cm->lock);
	RTE_TAILQ_FOREACH_SAFE(c, &cm->conns, next, tmp) {
		if (c->state != CS_CLOSED || c->pending != 0)
			conn_timer(c, now);
		if (c->zombie && c->pending == 0 && now >= c->zombie_until) {
			TAILQ_REMOVE(&cm->conns, c, next);
			free(c);
		}
	}
	cm_offer_progress(cm, now);
	pthread_mutex_unlock(&cm->lock);
}

/* ---- receiving (engine only) ---- */

static struct dpdat_cm_conn *
find_conn(struct cm_dev *cm, uint32_t local_id, uint32_t ip)
{
	struct dpdat_cm_conn *c;

	TAILQ_FOREACH(c, &cm->conns, next)
		if (c->local_id == local_id && c->peer_ip == ip)
			return c;
	return NULL;
}

/* A message about an existing connection names both comm IDs (IBTA 12.6):
 * ours, and the sender's, which only the peer (or an on-path host) knows.
 * A source address is easily forged; the two IDs together are 64 bits a
 * blind sender must guess. */
static struct dpdat_cm_conn *
find_conn2(struct cm_dev *cm, const uint8_t *p, uint32_t ip)
{
	struct dpdat_cm_conn *c = find_conn(cm, cm_get32(p, DREQ_REMOTE_ID),
					    ip);

	/* RTU, DREQ and DREP put the two where DREQ does */
	return c != NULL && c->remote_id == cm_get32(p, DREQ_LOCAL_ID) ? c :
								   NULL;
}

/* A comm ID of our own, drawn at random: a stranger told one (a REJ, a
 * REP) learns nothing of the next (in sequence, it guessed them), and
 * none is in use twice. */
static uint32_t
conn_id_new(struct cm_dev *cm)
{
	struct dpdat_cm_conn *c;
	uint32_t id;

again:
	id = (uint32_t)rte_rand();
	if (id == 0)
		goto again;	/* 0 stands for "none" in a REJ */
	TAILQ_FOREACH(c, &cm->conns, next)
		if (c->local_id == id)
			goto again;
	return id;
}

static struct dpdat_cm_conn *
conn_new(struct cm_dev *cm)
{
	struct dpdat_cm_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->magic = CM_MAGIC_CONN;
	c->cm = cm;
	c->local_id = conn_id_new(cm);
	c->start_tsc = rte_get_tsc_cycles();
	TAILQ_INSERT_TAIL(&cm->conns, c, next);
	return c;
}

static void
on_req(struct cm_dev *cm, const uint8_t *p, uint64_t tid, uint32_t ip,
       const struct rte_ether_addr *mac)
{
	const uint32_t rid = cm_get32(p, REQ_LOCAL_ID);
	const uint64_t sid = cm_get64(p, REQ_SERVICE_ID);
	struct dpdat_cm_listener *l;
	struct dpdat_cm_conn *c;
	unsigned int pd_off = 0;	/* the consumer's private data */

	TAILQ_FOREACH(c, &cm->conns, next)
		if (!c->active && c->remote_id == rid && c->peer_ip == ip) {
			/* a duplicate: answer again if we did; if the
			 * consumer is still deciding, say so (MRA) */
			if (c->state == CS_REP_SENT)
				schedule(c, CM_ATTR_REP);
			else if (c->state == CS_REQ_RCVD)
				schedule(c, CM_ATTR_MRA);
			else if (c->state == CS_CLOSED && c->rej_reason)
				schedule(c, CM_ATTR_REJ);
			return;
		}
	TAILQ_FOREACH(l, &cm->listeners, next)
		if (l->service_id == sid)
			break;
	if (l == NULL) {
		send_rej(cm, 0, rid, tid, 0, DPDAT_CM_REJ_INVALID_SERVICE,
			 NULL, 0, ip, mac);
		return;
	}
	/* an IP CM service: rdma_cm's header first, a version-0 IPv4 one
	 * from the sender of the frame; rdma_cm refuses what is not */
	if (cm_ip_service(sid)) {
		uint32_t hsrc, hdst;
		uint16_t hport;

		if (cm_ip_hdr_get(p + REQ_PDATA, &hsrc, &hdst, &hport) != 0 ||
		    hsrc != ip) {
			RC_LOG(INFO, "REQ for service 0x%" PRIx64 " without a "
			       "valid IP CM header: rejected", sid);
			send_rej(cm, 0, rid, tid, 0, DPDAT_CM_REJ_CONSUMER,
				 NULL, 0, ip, mac);
			return;
		}
		pd_off = CM_IP_HDR_LEN;
	}
	/* a flood of requests must not grow without bound */
	{
		unsigned int waiting = 0;

		TAILQ_FOREACH(c, &cm->conns, next)
			waiting += c->state == CS_REQ_RCVD;
		if (waiting >= CM_BACKLOG) {
			send_rej(cm, 0, rid, tid, 0, DPDAT_CM_REJ_NO_RESOURCES,
				 NULL, 0, ip, mac);
			return;
		}
	}
	c = conn_new(cm);
	if (c == NULL)
		return;	/* the peer retries */
	c->state = CS_REQ_RCVD;
	c->remote_id = rid;
	c->service_id = sid;
	c->conn_qual = l->conn_qual;
	c->tid = tid;
	c->peer_ip = ip;
	c->peer_mac = *mac;
	c->remote.qpn = cm_get32(p, REQ_QPN_RR) >> 8;
	c->remote.psn = cm_get32(p, REQ_PSN_TO) >> 8;
	c->remote.retry_cnt = p[REQ_PSN_TO + 3] & 7;
	c->remote.rnr_retry = p[REQ_MTU_RNR] & 7;
	c->remote.pmtu = cm_mtu_dec(p[REQ_MTU_RNR] >> 4);
	/* the READs and atomics we may have outstanding: as many as the
	 * requester's responder resources hold (not its initiator depth,
	 * which bounds its own) */
	c->remote.max_rd_atomic = RTE_MAX(RTE_MIN(p[REQ_QPN_RR + 3],
					(uint8_t)RC_MAX_RD), (uint8_t)1);
	c->remote.timeout = p[REQ_ACKTO] >> 3;
	c->remote.ext = ext_of(cm, p[REQ_ACKTO]);
	c->remote.ipv4 = ip;
	c->remote.mac = *mac;
	if (c->remote.pmtu == 0 ||
	    c->remote.pmtu > cm_port_pmtu(cm->dev->port)) {
		/* frames of that size do not fit our port: say which do,
		 * the requester asks again with that (on_rej) */
		RC_LOG(INFO, "REQ with PMTU %u, above our port's %u: rejected "
		       "(invalid MTU)", c->remote.pmtu,
		       cm_port_pmtu(cm->dev->port));
		send_rej(cm, 0, rid, tid, 0, CM_REJ_INVALID_MTU, NULL, 0, ip,
			 mac);
		TAILQ_REMOVE(&cm->conns, c, next);
		free(c);
		return;
	}
	if (!post_event(l->eq, DPDAT_CM_CONNECT_REQUEST, c, l, p + REQ_PDATA +
			pd_off, REQ_PDATA_LEN - pd_off, 0)) {
		/* nobody will see it: no resources, say so, forget it */
		send_rej(cm, c->local_id, rid, tid, 0, DPDAT_CM_REJ_NO_RESOURCES,
			 NULL, 0, ip, mac);
		TAILQ_REMOVE(&cm->conns, c, next);
		free(c);
	}
}

/* The peer got our REQ and needs time: keep waiting, without resending,
 * as long as it keeps saying so (each duplicate REQ gets a fresh MRA). */
static void
on_mra(struct cm_dev *cm, const uint8_t *p, uint32_t ip)
{
	struct dpdat_cm_conn *c = find_conn(cm, cm_get32(p, RTU_REMOTE_ID),
					    ip);

	if (c == NULL || !c->active || c->state != CS_REQ_SENT)
		return;
	c->tries = 0;
	c->next_tsc = rte_get_tsc_cycles() + 10 * c->cm->retry_tsc;
}

static void
on_rep(struct cm_dev *cm, const uint8_t *p, uint32_t ip)
{
	struct dpdat_cm_conn *c = find_conn(cm, cm_get32(p, REP_REMOTE_ID),
					    ip);

	if (c == NULL || !c->active)
		return;
	if (c->state == CS_ESTABLISHED) {
		schedule(c, CM_ATTR_RTU);	/* our RTU was lost */
		return;
	}
	if (c->state != CS_REQ_SENT)
		return;
	c->remote_id = cm_get32(p, REP_LOCAL_ID);
	c->remote.qpn = cm_get32(p, REP_QPN) >> 8;
	c->remote.psn = cm_get32(p, REP_PSN) >> 8;
	/* READs we may have in flight: what the peer's responder offers */
	c->remote.max_rd_atomic = RTE_MIN(p[REP_RR], (uint8_t)RC_MAX_RD);
	if (c->remote.max_rd_atomic == 0)
		c->remote.max_rd_atomic = 1;
	/* an extension holds when we offered it and the peer took it */
	c->remote.ext = ext_of(cm, p[REP_RNR]);
	if (c->qp == NULL || rc_qp_remote_check(c->qp, &c->remote) != 0 ||
	    c->qp->state != DPDAT_QPS_INIT) {
		conn_close(c, DPDAT_CM_REJECTED, NULL, 0,
			   DPDAT_CM_REJ_CONSUMER);
		c->rej_reason = DPDAT_CM_REJ_CONSUMER;
		c->plen = 0;
		schedule(c, CM_ATTR_REJ);	/* after the close: it goes */
		return;
	}
	rc_qp_set_remote(c->qp, &c->remote);	/* engine held */
	c->state = CS_ESTABLISHED;
	c->plen = 0;
	/* the RTU leaves now, ahead of whatever the application does once
	 * it sees ESTABLISHED: a DREQ of an older connection, sent by the
	 * timer pass in list order, must not overtake it (the peer would
	 * see that disconnection before this establishment; dtestcm counts
	 * its events and waited forever for one) */
	c->pending = 0;
	send_simple(c, CM_ATTR_RTU);
	post_event(c->eq, DPDAT_CM_ESTABLISHED, c, NULL, p + REP_PDATA,
		   REP_PDATA_LEN, 0);
}

static void
on_rtu(struct cm_dev *cm, const uint8_t *p, uint32_t ip)
{
	struct dpdat_cm_conn *c = find_conn2(cm, p, ip);

	if (c == NULL || c->active || c->state != CS_REP_SENT)
		return;
	c->state = CS_ESTABLISHED;
	c->pending = 0;
	post_event(c->eq, DPDAT_CM_ESTABLISHED, c, NULL, p + RTU_PDATA,
		   RTU_PDATA_LEN, 0);
}

static void
on_rej(struct cm_dev *cm, const uint8_t *p, uint64_t tid, uint32_t ip)
{
	struct dpdat_cm_conn *c = find_conn(cm, cm_get32(p, REJ_REMOTE_ID),
					    ip);
	uint16_t reason = (uint16_t)(p[REJ_REASON] << 8 | p[REJ_REASON + 1]);

	if (c == NULL || (c->state != CS_REQ_SENT && c->state != CS_REP_SENT))
		return;
	/* one for our REP names the sender's comm ID too (as Linux's CM
	 * matches it); one for our REQ can name only ours, random */
	if (c->state == CS_REP_SENT &&
	    cm_get32(p, REJ_LOCAL_ID) != c->remote_id)
		return;
	if (reason == CM_REJ_INVALID_MTU && c->state == CS_REQ_SENT) {
		/* the passive side carries less: its largest path MTU is in
		 * the additional information (high or low nibble), else
		 * half ours; the same request again */
		uint8_t ari = (p[REJ_INFO_LEN] >> 1) ? p[REJ_ARI] : 0;
		uint16_t theirs = cm_mtu_dec(ari >> 4 ? ari >> 4 : ari & 0xf);
		uint16_t pmtu = c->remote.pmtu / 2;

		/* an answer to an earlier REQ (a duplicate REJ, or one for
		 * a REQ sent again) must not lower it twice: the passive
		 * side would take the new REQ for the one it accepted */
		if (tid != c->tid)
			return;
		if (theirs != 0 && theirs < pmtu)
			pmtu = theirs;
		if (pmtu < 256 || (theirs != 0 && theirs >= c->remote.pmtu)) {
			conn_close(c, DPDAT_CM_REJECTED, p + REJ_PDATA,
				   REJ_PDATA_LEN, reason);
			return;
		}
		RC_LOG(INFO, "peer takes PMTU %u at most: asking again",
		       pmtu);
		c->remote.pmtu = pmtu;
		c->tid = (uint64_t)c->local_id << 32 | (uint32_t)rte_rand();
		schedule(c, CM_ATTR_REQ);
		return;
	}
	if (reason == DPDAT_CM_REJ_INVALID_SERVICE && c->state == CS_REQ_SENT &&
	    c->tries < CM_NOLISTEN_TRIES) {
		/* nobody listens there yet: the REQ goes again at its next
		 * retry. A peer may tell its address before it listens
		 * (dtestx's server sends it to the client, then creates its
		 * PSP): an unmodified dtestx failed so between namespaces on
		 * a loaded machine. A blind third host's forged REJ of this
		 * kind no longer ends a connection at once either. */
		RC_LOG(DEBUG, "REQ to service 0x%" PRIx64 ": nobody listens "
		       "yet, asking again", c->service_id);
		return;
	}
	conn_close(c, DPDAT_CM_REJECTED, p + REJ_PDATA, REJ_PDATA_LEN,
		   reason);
}

static void
on_dreq(struct cm_dev *cm, const uint8_t *p, uint32_t ip)
{
	struct dpdat_cm_conn *c = find_conn2(cm, p, ip);

	if (c == NULL)
		return;
	if (c->state == CS_REP_SENT) {
		/* our RTU never came, but the peer acts established */
		c->state = CS_ESTABLISHED;
		post_event(c->eq, DPDAT_CM_ESTABLISHED, c, NULL, NULL, 0, 0);
	}
	if (c->state == CS_ESTABLISHED || c->state == CS_DREQ_SENT) {
		if (c->qp != NULL)
			rc_qp_error(c->qp);	/* engine held: flush */
		c->plen = 0;
		post_event(c->eq, DPDAT_CM_DISCONNECTED, c, NULL,
			   p + DREQ_PDATA, DREQ_PDATA_LEN, 0);
		c->state = CS_CLOSED;
	}
	if (c->state == CS_CLOSED)
		schedule(c, CM_ATTR_DREP);	/* again for a duplicate */
}

static void
on_drep(struct cm_dev *cm, const uint8_t *p, uint32_t ip)
{
	struct dpdat_cm_conn *c = find_conn2(cm, p, ip);

	if (c == NULL || c->state != CS_DREQ_SENT)
		return;
	conn_close(c, DPDAT_CM_DISCONNECTED, p + RTU_PDATA, RTU_PDATA_LEN, 0);
}

void
cm_input(struct rc_dev *dev, struct rte_mbuf *m,
	 const struct roce_bth *bth, unsigned int off, unsigned int paylen)
{
	struct cm_dev *cm = dev->cm;
	const struct rte_ipv4_hdr *ip;
	struct rte_ether_addr mac;
	struct roce_deth deth;
	uint8_t mad[CM_MAD_LEN];
	uint16_t attr;
	uint64_t tid;

	if (cm == NULL || bth->opcode != ROCE_OP_UD_SEND_ONLY ||
	    paylen != CM_MAD_LEN)
		return;
	rc_mbuf_copy(m, off, (uint8_t *)&deth, sizeof(deth));
	if (deth.qkey != rte_cpu_to_be_32(ROCE_QKEY_GSI))
		return;
	rc_mbuf_copy(m, off + sizeof(deth), mad, CM_MAD_LEN);
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
				     sizeof(struct rte_ether_hdr));
	mac = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)->src_addr;
	if (mad[0] == 1 && mad[1] == CM_VENDOR_CLASS &&
	    mad[2] == CM_VENDOR_VERSION && mad[3] == CM_METHOD_SEND) {
		cm_offer_input(cm, mad, ip->src_addr);
		return;
	}
	if (mad[0] != 1 || mad[1] != CM_MGMT_CLASS ||
	    mad[2] != CM_CLASS_VERSION || mad[3] != CM_METHOD_SEND)
		return;
	attr = (uint16_t)(mad[16] << 8 | mad[17]);
	tid = cm_get64(mad, 8);
	pthread_mutex_lock(&cm->lock);
	switch (attr) {
	case CM_ATTR_REQ:
		on_req(cm, mad + CM_HDR_LEN, tid, ip->src_addr, &mac);
		break;
	case CM_ATTR_REP:
		on_rep(cm, mad + CM_HDR_LEN, ip->src_addr);
		break;
	case CM_ATTR_RTU:
		on_rtu(cm, mad + CM_HDR_LEN, ip->src_addr);
		break;
	case CM_ATTR_REJ:
		on_rej(cm, mad + CM_HDR_LEN, tid, ip->src_addr);
		break;
	case CM_ATTR_DREQ:
		on_dreq(cm, mad + CM_HDR_LEN, ip->src_addr);
		break;
	case CM_ATTR_DREP:
		on_drep(cm, mad + CM_HDR_LEN, ip->src_addr);
		break;
	case CM_ATTR_MRA:
		on_mra(cm, mad + CM_HDR_LEN, ip->src_addr);
		break;
	default:	/* LAP, APR, SIDR: not spoken */
		break;
	}
	pthread_mutex_unlock(&cm->lock);
}

/* ---- the API (any thread) ---- */

struct dpdat_cm_listener *
dpdat_cm_listen(struct dpdat_dev *d, uint64_t conn_qual,
		struct dpdat_cm_eq *eq)
{
	struct rc_dev *dev = rc_dev(d);
	struct dpdat_cm_listener *l, *o;
	struct cm_dev *cm;

	if (dev == NULL || dev->magic != RC_MAGIC_DEV || eq == NULL ||
	    eq->magic != CM_MAGIC_EQ || eq->dev != dev) {
		rte_errno = EBADF;
		return NULL;
	}
	cm = dev->cm;
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	l->magic = CM_MAGIC_LSN;
	l->cm = cm;
	l->conn_qual = conn_qual;
	l->service_id = service_of(conn_qual);
	l->eq = eq;
	pthread_mutex_lock(&cm->lock);
	TAILQ_FOREACH(o, &cm->listeners, next)
		if (o->service_id == l->service_id)
			break;
	if (o != NULL) {
		pthread_mutex_unlock(&cm->lock);
		free(l);
		rte_errno = EADDRINUSE;
		return NULL;
	}
	TAILQ_INSERT_TAIL(&cm->listeners, l, next);
	eq_use(eq, 1);
	pthread_mutex_unlock(&cm->lock);
	return l;
}

int
dpdat_cm_listen_free(struct dpdat_cm_listener *l)
{
	struct cm_dev *cm;

	if (l == NULL || l->magic != CM_MAGIC_LSN)
		return -EBADF;
	cm = l->cm;
	pthread_mutex_lock(&cm->lock);
	TAILQ_REMOVE(&cm->listeners, l, next);
	l->magic = 0;
	eq_use(l->eq, -1);
	pthread_mutex_unlock(&cm->lock);
	free(l);
	return 0;
}

struct dpdat_cm_conn *
dpdat_cm_connect(struct dpdat_qp *qp, uint32_t ipv4, uint64_t conn_qual,
		 const void *pdata, uint16_t plen, struct dpdat_cm_eq *eq)
{
	struct dpdat_cm_conn *c;
	struct cm_dev *cm;

	if (qp == NULL || qp->magic != RC_MAGIC_QP || eq == NULL ||
	    eq->magic != CM_MAGIC_EQ || eq->dev != qp->dev) {
		rte_errno = EBADF;
		return NULL;
	}
	if (plen > (cm_ip_service(service_of(conn_qual)) ?
		    DPDAT_CM_REQ_PDATA_MAX_IP : DPDAT_CM_REQ_PDATA_MAX) ||
	    (plen && pdata == NULL) ||
	    qp->state != DPDAT_QPS_INIT) {
		rte_errno = EINVAL;
		return NULL;
	}
	cm = qp->dev->cm;
	pthread_mutex_lock(&cm->lock);
	c = conn_new(cm);
	if (c == NULL) {
		pthread_mutex_unlock(&cm->lock);
		rte_errno = ENOMEM;
		return NULL;
	}
	c->active = true;
	c->qp = qp;
	c->eq = eq;
	eq_use(eq, 1);
	c->conn_qual = conn_qual;
	c->service_id = service_of(conn_qual);
	c->tid = (uint64_t)c->local_id << 32 | (uint32_t)rte_rand();
	c->peer_ip = ipv4;
	c->remote.ipv4 = ipv4;
	c->remote.retry_cnt = 7;
	c->remote.rnr_retry = 7;
	c->remote.timeout = 14;
	c->remote.pmtu = 4096;
	while (c->remote.pmtu + 64 > qp->dev->port->mtu && c->remote.pmtu > 256)
		c->remote.pmtu /= 2;
	if (plen != 0)	/* pdata may be NULL then */
		memcpy(c->pdata, pdata, plen);
	c->plen = plen;
	c->state = CS_RESOLVING;	/* the engine asks ARP, then sends REQ */
	cm_kick(cm);
	pthread_mutex_unlock(&cm->lock);
	return c;
}

int
dpdat_cm_accept(struct dpdat_cm_conn *c, struct dpdat_qp *qp,
		const void *pdata, uint16_t plen, struct dpdat_cm_eq *eq)
{
	struct dpdat_qp_remote r;
	struct cm_dev *cm;
	int ret;

	if (c == NULL || c->magic != CM_MAGIC_CONN || qp == NULL ||
	    qp->magic != RC_MAGIC_QP || eq == NULL ||
	    eq->magic != CM_MAGIC_EQ || qp->dev != c->cm->dev ||
	    eq->dev != c->cm->dev)
		return -EBADF;
	if (plen > DPDAT_CM_REP_PDATA_MAX || (plen && pdata == NULL))
		return -EINVAL;
	cm = c->cm;
	pthread_mutex_lock(&cm->lock);
	if (c->state != CS_REQ_RCVD) {
		pthread_mutex_unlock(&cm->lock);
		return -EBUSY;
	}
	r = c->remote;
	pthread_mutex_unlock(&cm->lock);
	/* the REQ chose the path MTU (IB CM has no way to lower it in the
	 * REP): if our port cannot carry it, dpdat_qp_connect refuses with
	 * -EINVAL and the consumer rejects */
	ret = dpdat_qp_connect(qp, &r);	/* takes the engine: not locked */
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&cm->lock);
	c->qp = qp;
	c->eq = eq;
	eq_use(eq, 1);
	if (plen != 0)	/* pdata may be NULL then */
		memcpy(c->pdata, pdata, plen);
	c->plen = plen;
	c->state = CS_REP_SENT;
	schedule(c, CM_ATTR_REP);
	pthread_mutex_unlock(&cm->lock);
	return 0;
}

int
dpdat_cm_reject(struct dpdat_cm_conn *c, const void *pdata, uint16_t plen)
{
	struct cm_dev *cm;

	if (c == NULL || c->magic != CM_MAGIC_CONN)
		return -EBADF;
	if (plen > DPDAT_CM_REJ_PDATA_MAX || (plen && pdata == NULL))
		return -EINVAL;
	cm = c->cm;
	pthread_mutex_lock(&cm->lock);
	if (c->state != CS_REQ_RCVD) {
		pthread_mutex_unlock(&cm->lock);
		return -EBUSY;
	}
	if (plen != 0)	/* pdata may be NULL then */
		memcpy(c->pdata, pdata, plen);
	c->plen = plen;
	c->rej_reason = DPDAT_CM_REJ_CONSUMER;
	c->state = CS_CLOSED;
	schedule(c, CM_ATTR_REJ);
	pthread_mutex_unlock(&cm->lock);
	return 0;
}

int
dpdat_cm_disconnect(struct dpdat_cm_conn *c, const void *pdata,
		    uint16_t plen)
{
	struct dpdat_qp *qp;
	struct cm_dev *cm;

	if (c == NULL || c->magic != CM_MAGIC_CONN)
		return -EBADF;
	if (plen > DPDAT_CM_DREQ_PDATA_MAX || (plen && pdata == NULL))
		return -EINVAL;
	cm = c->cm;
	pthread_mutex_lock(&cm->lock);
	if (c->state != CS_ESTABLISHED && c->state != CS_REP_SENT) {
		pthread_mutex_unlock(&cm->lock);
		return -EBUSY;
	}
	if (plen != 0)	/* pdata may be NULL then */
		memcpy(c->pdata, pdata, plen);
	c->plen = plen;
	c->state = CS_DREQ_SENT;
	qp = c->qp;
	schedule(c, CM_ATTR_DREQ);
	pthread_mutex_unlock(&cm->lock);
	/* pending work is flushed (outside the CM lock: takes the engine) */
	return qp != NULL ? dpdat_qp_set_error(qp) : 0;
}

int
dpdat_cm_conn_free(struct dpdat_cm_conn *c)
{
	struct cm_dev *cm;

	if (c == NULL || c->magic != CM_MAGIC_CONN)
		return -EBADF;
	cm = c->cm;
	pthread_mutex_lock(&cm->lock);
	if (c->state != CS_CLOSED && c->state != CS_REQ_RCVD) {
		pthread_mutex_unlock(&cm->lock);
		return -EBUSY;
	}
	if (c->state == CS_REQ_RCVD) {
		/* a request nobody answered: tell the peer no */
		c->plen = 0;
		c->rej_reason = DPDAT_CM_REJ_CONSUMER;
		c->state = CS_CLOSED;
		schedule(c, CM_ATTR_REJ);
	}
	c->magic = 0;
	eq_use(c->eq, -1);
	c->eq = NULL;
	if (c->rej_reason != 0) {
		/* a rejected request may come again (our REJ lost): keep
		 * answering it for a few retry periods */
		c->zombie = true;
		c->zombie_until = rte_get_tsc_cycles() +
				  (CM_MAX_TRIES + 2) * cm->retry_tsc;
		cm_kick(cm);
		pthread_mutex_unlock(&cm->lock);
		return 0;
	}
	if (c->pending != 0) {
		/* a REJ or DREP still to go: the engine frees it after */
		c->zombie = true;
		cm_kick(cm);
		pthread_mutex_unlock(&cm->lock);
		return 0;
	}
	TAILQ_REMOVE(&cm->conns, c, next);
	pthread_mutex_unlock(&cm->lock);
	free(c);
	return 0;
}

struct dpdat_qp *
dpdat_cm_conn_qp(const struct dpdat_cm_conn *c)
{
	return c != NULL && c->magic == CM_MAGIC_CONN ? c->qp : NULL;
}
