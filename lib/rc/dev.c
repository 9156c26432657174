/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* A device: port + registration domain + the engine that runs them. The
 * engine is one loop: receive a burst and dispatch it, let every QP send,
 * run timers, flush the transmit batch. dev->busy says who runs it; the
 * control path takes it too, briefly, to change the QP table. */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_random.h>
#include <rte_telemetry.h>
#include <rte_udp.h>

#include "port_priv.h"
#include "rc_priv.h"

RTE_LOG_REGISTER(dpdat_rc_logtype, dpdat.rc, NOTICE);

/* Devices the telemetry commands can see. */
#define TEL_MAX_DEVS 16
static struct dpdat_dev *tel_devs[TEL_MAX_DEVS];
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;

static void
tel_dev(struct dpdat_dev *dev, bool add)
{
	pthread_mutex_lock(&tel_lock);
	for (unsigned int i = 0; i < TEL_MAX_DEVS; i++) {
		if (add && tel_devs[i] == NULL) {
			tel_devs[i] = dev;
			break;
		}
		if (!add && tel_devs[i] == dev)
			tel_devs[i] = NULL;
	}
	pthread_mutex_unlock(&tel_lock);
}

/* /dpdat/qps: the QP numbers of every device */
static int
tel_qps_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	pthread_mutex_lock(&tel_lock);
	for (unsigned int i = 0; i < TEL_MAX_DEVS; i++) {
		struct dpdat_dev *dev = tel_devs[i];

		if (dev == NULL)
			continue;
		pthread_mutex_lock(&dev->lock);
		for (uint32_t k = 0; k < dev->n_qps; k++)
			rte_tel_data_add_array_int(d, (int)dev->active[k]->qpn);
		pthread_mutex_unlock(&dev->lock);
	}
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

/* /dpdat/qp_stats,<qpn>: the counters of one QP */
static int
tel_qp_stats_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dpdat_qp_stats st = { 0 };
	bool found = false;
	char *end;
	long qpn;

	if (params == NULL || (qpn = strtol(params, &end, 0), *end != '\0'))
		return -EINVAL;
	pthread_mutex_lock(&tel_lock);
	for (unsigned int i = 0; i < TEL_MAX_DEVS && !found; i++) {
		struct dpdat_dev *dev = tel_devs[i];

		if (dev == NULL)
			continue;
		pthread_mutex_lock(&dev->lock);
		for (uint32_t k = 0; k < dev->n_qps && !found; k++)
			if (dev->active[k]->qpn == qpn) {
				st = dev->active[k]->st;
				found = true;
			}
		pthread_mutex_unlock(&dev->lock);
	}
	pthread_mutex_unlock(&tel_lock);
	if (!found)
		return -ENOENT;
	rte_tel_data_start_dict(d);
#define U64(f) rte_tel_data_add_dict_u64(d, #f, st.f)
	U64(tx_pkts); U64(rx_pkts); U64(tx_bytes); U64(rx_bytes);
	U64(retransmits); U64(timeouts); U64(naks_sent); U64(naks_rcvd);
	U64(rnr_naks_sent); U64(rnr_naks_rcvd); U64(dup_rcvd); U64(out_of_seq);
#undef U64
	return 0;
}

RTE_INIT(dpdat_rc_telemetry)
{
	rte_telemetry_register_cmd("/dpdat/qps", tel_qps_cb,
		"QP numbers of dpdat's devices. No parameters");
	rte_telemetry_register_cmd("/dpdat/qp_stats", tel_qp_stats_cb,
		"Counters of a QP. Parameters: int qpn");
}

void
rc_lock_engine(struct dpdat_dev *dev)
{
	while (__atomic_exchange_n(&dev->busy, 1, __ATOMIC_ACQUIRE) != 0)
		rte_pause();
}

void
rc_unlock_engine(struct dpdat_dev *dev)
{
	__atomic_store_n(&dev->busy, 0, __ATOMIC_RELEASE);
}

/* Send the batch; what the device cannot take now stays for the next
 * iteration (back-pressure instead of loss: producers check rc_tx_room). */
void
rc_tx_flush(struct dpdat_dev *dev)
{
	uint16_t sent;

	if (dev->n_tx == 0)
		return;
	sent = port_tx_some(dev->port, dev->tx, dev->n_tx);
	if (sent != 0 && sent < dev->n_tx)
		memmove(dev->tx, dev->tx + sent,
			(dev->n_tx - sent) * sizeof(dev->tx[0]));
	dev->n_tx -= sent;
}

/* Drop queued packets of a QP that broke or is going away (the link may be
 * down and the batch stuck): their mbufs, and the zero-copy memory they
 * hold, go back now. Requests only unless all: a NAK telling the peer
 * about the error still goes out. Caller holds the engine. */
void
rc_tx_purge(struct dpdat_dev *dev, uint32_t dqpn, uint32_t dip, bool all)
{
	const struct rte_ipv4_hdr *ip;
	struct roce_bth b;
	uint16_t i, n = 0;

	for (i = 0; i < dev->n_tx; i++) {
		struct rte_mbuf *m = dev->tx[i];

		ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
					     sizeof(struct rte_ether_hdr));
		rc_mbuf_copy(m, PORT_HDR_LEN, (uint8_t *)&b, sizeof(b));
		if (ip->dst_addr == dip && roce_bth_qpn(&b) == dqpn &&
		    (all || b.opcode <= ROCE_OP_READ_REQUEST))
			rte_pktmbuf_free(m);
		else
			dev->tx[n++] = m;
	}
	dev->n_tx = n;
}

bool
rc_tx_room(struct dpdat_dev *dev)
{
	if (dev->n_tx >= RC_TX_BURST - 1)
		rc_tx_flush(dev);
	return dev->n_tx < RC_TX_BURST - 1;
}

void
rc_tx(struct dpdat_dev *dev, struct rte_mbuf *m)
{
	if (dev->n_tx == RC_TX_BURST)
		rc_tx_flush(dev);
	if (dev->n_tx == RC_TX_BURST) {
		/* control packets (ACK/NAK) may overflow: the peer retries */
		dev->port->st.drop_tx_full++;
		rte_pktmbuf_free(m);
		return;
	}
	dev->tx[dev->n_tx++] = m;
}

/* Check the ICRC and the BTH of a received frame and hand it to its QP;
 * the mbuf is consumed. */
void
rc_dispatch(struct dpdat_dev *dev, struct rte_mbuf *m)
{
	const unsigned int off = PORT_HDR_LEN;
	uint32_t len = rte_pktmbuf_pkt_len(m), icrc, qpn;
	struct roce_bth bth_copy;
	const struct roce_bth *bth;
	unsigned int ext, pad, paylen;
	struct dpdat_qp *qp;
	uint8_t t[4];

	rc_mbuf_copy(m, len - ROCE_ICRC_LEN, t, ROCE_ICRC_LEN);
	icrc = t[0] | t[1] << 8 | t[2] << 16 | (uint32_t)t[3] << 24;
	if (roce_icrc_mbuf(m, sizeof(struct rte_ether_hdr)) != icrc) {
		dev->port->st.drop_icrc++;
		goto drop;
	}
	bth = rte_pktmbuf_read(m, off, sizeof(*bth), &bth_copy);
	if (bth == NULL || !roce_op_valid(bth->opcode) ||
	    (bth->flags & 0x0f) != 0 ||
	    bth->pkey != rte_cpu_to_be_16(ROCE_PKEY_DEFAULT)) {
		dev->port->st.drop_bad_hdr++;
		goto drop;
	}
	ext = roce_ext_len(bth->opcode);
	pad = roce_bth_pad(bth);
	if (len < off + sizeof(*bth) + ext + pad + ROCE_ICRC_LEN) {
		dev->port->st.drop_bad_hdr++;
		goto drop;
	}
	paylen = len - off - sizeof(*bth) - ext - pad - ROCE_ICRC_LEN;
	/* an ACK may carry a SACK, checked against the QP's agreement */
	if (paylen != 0 && !(roce_op_flags[bth->opcode] & ROCE_F_PAYLOAD) &&
	    (bth->opcode != ROCE_OP_ACK || paylen != RC_SACK_LEN)) {
		dev->port->st.drop_bad_hdr++;
		goto drop;
	}
	qpn = roce_bth_qpn(bth);
	if (qpn == ROCE_QP1) {		/* connection management MADs */
		cm_input(dev, m, bth, off + sizeof(*bth), paylen);
		goto drop;
	}
	if (qpn < RC_QPN_BASE || qpn - RC_QPN_BASE >= dev->max_qps ||
	    (qp = dev->qps[qpn - RC_QPN_BASE]) == NULL ||
	    (qp->state != DPDAT_QPS_RTR && qp->state != DPDAT_QPS_RTS)) {
		dev->port->st.drop_no_qp++;
		goto drop;
	}
	/* a QP talks to its peer only: anyone else's packet, forged or
	 * misdirected, never reaches the responder or the completer */
	if (rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
			sizeof(struct rte_ether_hdr))->src_addr != qp->dip) {
		dev->port->st.drop_not_peer++;
		goto drop;
	}
	qp->st.rx_pkts++;
	qp->st.rx_bytes += paylen;
	switch (bth->opcode) {
	case ROCE_OP_ACK:
	case ROCE_OP_READ_RESP_FIRST:
	case ROCE_OP_READ_RESP_MIDDLE:
	case ROCE_OP_READ_RESP_LAST:
	case ROCE_OP_READ_RESP_ONLY:
		rc_completer(qp, m, bth, off + sizeof(*bth), paylen);
		rc_req_check(qp, "an answer");
		break;
	case ROCE_OP_UD_SEND_ONLY:
	case ROCE_OP_UD_SEND_ONLY_IMM:
		dev->port->st.drop_no_qp++;	/* QP1 arrives with the CM */
		break;
	default:
		rc_responder(qp, m, bth, off + sizeof(*bth), paylen);
		rc_resp_check(qp, "a request");
		break;
	}
drop:
	rte_pktmbuf_free(m);
}

/* One engine iteration; the caller holds dev->busy. */
static int
rc_engine_iter(struct dpdat_dev *dev)
{
	struct rte_mbuf *pkts[PORT_BURST];
	struct dpdat_qp *qp;
	uint64_t now;
	uint16_t n, i;
	uint32_t k;

	n = port_rx(dev->port, pkts, PORT_BURST);
	for (i = 0; i < n; i++)
		rc_dispatch(dev, pkts[i]);
	/* coalesced ACKs: one per QP per burst */
	while ((qp = dev->ack_list) != NULL) {
		dev->ack_list = qp->ack_next;
		qp->ack_next = NULL;
		qp->on_ack_list = false;
		/* responses leave in PSN order: an ACK covering PSNs after a
		 * READ waits until the READ's answers are out */
		if (qp->ack_due && qp->nres == 0)
			rc_send_ack(qp, ROCE_AETH_ACK, roce_psn_add(qp->epsn,
							ROCE_PSN_MASK));
	}
	now = rte_get_tsc_cycles();
	for (k = 0; k < dev->n_qps; k++) {
		qp = dev->active[k];
		rc_pull_posted(qp);
		if (qp->zc_check && qp->state == DPDAT_QPS_RTS)
			rc_complete_acked(qp);
		if (qp->state == DPDAT_QPS_RTS) {
			rc_responder_reads(qp);
			/* deadlines are scanned, no timer per packet */
			if (qp->sq_head != qp->sq_started)
				rc_requester_timer(qp, now);
			rc_requester(qp, now);
			rc_req_check(qp, "sending");
			rc_resp_check(qp, "sending");
		}
	}
	cm_progress(dev, now);
	if (now - dev->last_timer > dev->tsc_hz / 1000) {
		dev->last_timer = now;
		port_timer(dev->port);
	}
	rc_tx_flush(dev);
	dev->epoch++;
	return n;
}

int
rc_engine_run(struct dpdat_dev *dev)
{
	int n;

	if (__atomic_exchange_n(&dev->busy, 1, __ATOMIC_ACQUIRE) != 0)
		return 0;	/* someone else is running it */
	dpdat_mr_reader_online(dev->dom, dev->reader);
	n = rc_engine_iter(dev);
	dpdat_mr_reader_offline(dev->dom, dev->reader);
	rc_unlock_engine(dev);
	return n;
}

static void *
rc_engine_thread(void *arg)
{
	struct dpdat_dev *dev = arg;
	unsigned int idle = 0;

	dpdat_mr_reader_online(dev->dom, dev->reader);
	while (!__atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE)) {
		rc_lock_engine(dev);
		if (rc_engine_iter(dev) == 0)
			idle++;
		else
			idle = 0;
		rc_unlock_engine(dev);
		dpdat_mr_reader_quiescent(dev->dom, dev->reader);
		/* on a shared machine give the core away when nothing moves */
		if (idle > 4096) {
			dpdat_mr_reader_offline(dev->dom, dev->reader);
			sched_yield();
			dpdat_mr_reader_online(dev->dom, dev->reader);
			idle = 2048;
		}
	}
	dpdat_mr_reader_offline(dev->dom, dev->reader);
	return NULL;
}

/* Run one port call with the engine held between two iterations. */
#define WITH_ENGINE(dev, call) do {					\
	int ret_;							\
	if ((dev) == NULL || (dev)->magic != RC_MAGIC_DEV)		\
		return -EBADF;						\
	rc_lock_engine(dev);						\
	ret_ = (call);							\
	rc_unlock_engine(dev);						\
	return ret_;							\
} while (0)

int
dpdat_dev_set_faults(struct dpdat_dev *dev, const struct dpdat_fault_conf *conf)
{
	WITH_ENGINE(dev, dpdat_port_set_faults(dev->port, conf));
}

int
dpdat_dev_capture_start(struct dpdat_dev *dev, const char *path)
{
	WITH_ENGINE(dev, dpdat_port_capture_start(dev->port, path));
}

int
dpdat_dev_capture_stop(struct dpdat_dev *dev)
{
	WITH_ENGINE(dev, dpdat_port_capture_stop(dev->port));
}

int
dpdat_dev_neighbours(struct dpdat_dev *dev, struct dpdat_neigh *out,
		     unsigned int max)
{
	WITH_ENGINE(dev, dpdat_port_neighbours(dev->port, out, max));
}

int
dpdat_dev_progress(struct dpdat_dev *dev)
{
	if (dev == NULL || dev->magic != RC_MAGIC_DEV)
		return -EBADF;
	if (dev->progress != DPDAT_PROGRESS_INLINE)
		return -EBUSY;
	return rc_engine_run(dev);
}

static bool
rc_cpu_allowed(unsigned int cpu)
{
	cpu_set_t set;

	return cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof(set), &set) == 0 &&
	       CPU_ISSET(cpu, &set);
}

/* The engine thread, born on its CPU when one is asked for. */
static int
rc_engine_start(struct dpdat_dev *dev, const struct dpdat_dev_conf *conf)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	pthread_attr_init(&attr);
	if (conf->pin_cpu) {
		CPU_ZERO(&set);
		CPU_SET(conf->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	ret = pthread_create(&dev->thread, &attr, rc_engine_thread, dev);
	pthread_attr_destroy(&attr);
	if (ret != 0)
		return ret;
	dev->thread_started = 1;
	pthread_setname_np(dev->thread, "dpdat-engine");
	if (conf->pin_cpu)
		RC_LOG(INFO, "%s: engine thread on CPU %u", dev->port->name,
		       conf->cpu);
	return 0;
}

struct dpdat_dev *
dpdat_dev_open(const struct dpdat_dev_conf *conf)
{
	struct dpdat_dev *dev;
	int ret;

	if (conf == NULL || conf->progress > DPDAT_PROGRESS_INLINE ||
	    conf->max_qps > (1u << 20) ||
	    (conf->pin_cpu && !rc_cpu_allowed(conf->cpu))) {
		rte_errno = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	dev->max_qps = conf->max_qps ? conf->max_qps : 1024;
	/* QP numbers are not the first thing a stranger guesses right */
	dev->next_qpn = (uint32_t)(rte_rand() % dev->max_qps);
	dev->qps = calloc(dev->max_qps, sizeof(*dev->qps));
	dev->active = calloc(dev->max_qps, sizeof(*dev->active));
	if (dev->qps == NULL || dev->active == NULL) {
		ret = ENOMEM;
		goto err_free;
	}
	pthread_mutex_init(&dev->lock, NULL);
	dev->progress = conf->progress;
	dev->tsc_hz = rte_get_tsc_hz();
	dev->dom = dpdat_mr_domain_create(&conf->mr);
	if (dev->dom == NULL) {
		ret = rte_errno;
		goto err_free;
	}
	ret = -dpdat_mr_reader_register(dev->dom, &dev->reader);
	if (ret != 0)
		goto err_dom;
	dev->port = dpdat_port_create(&conf->port);
	if (dev->port == NULL) {
		ret = rte_errno;
		goto err_reader;
	}
	dev->go_back_n = conf->go_back_n;
	/* selective repeat holds received mbufs: at most a quarter of the
	 * pool, the rest keeps receiving */
	dev->max_held = dev->port->pool->size / 4;
	/* one QP (one peer) never takes all of it; less than a window made
	 * a fast sender's packets beyond it come again (1 MiB write_bw at
	 * 5 % loss: 0.14 of lossless with 255, 0.89 with a window) */
	dev->max_held_qp = RTE_MIN((uint32_t)RC_SR_WND - 1, dev->max_held / 2);
	ret = -rc_zc_pool_create(dev);
	if (ret == 0)
		ret = -cm_dev_create(dev);
	if (ret != 0)
		goto err_port_only;
	dev->magic = RC_MAGIC_DEV;
	tel_dev(dev, true);
	if (dev->progress == DPDAT_PROGRESS_THREAD) {
		ret = rc_engine_start(dev, conf);
		if (ret != 0)
			goto err_port;
	} else if (conf->pin_cpu) {
		RC_LOG(NOTICE, "%s: inline progress: the threads that poll run "
		       "the engine; pin them to CPU %u (taskset -c %u, or "
		       "pthread_setaffinity_np)", dev->port->name, conf->cpu,
		       conf->cpu);
	}
	return dev;

err_port:
	tel_dev(dev, false);
	dev->magic = 0;
err_port_only:
	cm_dev_free(dev);
	dpdat_port_free(dev->port);
	rte_mempool_free(dev->zc_pool);
err_reader:
	dpdat_mr_reader_unregister(dev->dom, dev->reader);
err_dom:
	dpdat_mr_domain_free(dev->dom);
err_free:
	free(dev->qps);
	free(dev->active);
	free(dev);
	rte_errno = ret;
	return NULL;
}

int
dpdat_dev_close(struct dpdat_dev *dev)
{
	if (dev == NULL || dev->magic != RC_MAGIC_DEV)
		return -EBADF;
	pthread_mutex_lock(&dev->lock);
	if (dev->n_qps != 0 || dev->n_cqs != 0 || dev->n_srqs != 0) {
		pthread_mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	dev->magic = 0;
	pthread_mutex_unlock(&dev->lock);
	tel_dev(dev, false);
	if (dev->thread_started) {
		__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
		pthread_join(dev->thread, NULL);
	}
	rte_pktmbuf_free_bulk(dev->tx, dev->n_tx);
	dev->n_tx = 0;
	cm_dev_free(dev);
	dpdat_port_free(dev->port);	/* the device lets go of its mbufs */
	rte_mempool_free(dev->zc_pool);
	dpdat_mr_reader_unregister(dev->dom, dev->reader);
	/* PZs left by the consumer keep the domain; say so rather than leak
	 * silently */
	if (dpdat_mr_domain_free(dev->dom) != 0)
		RC_LOG(WARNING, "device closed with protection zones left");
	free(dev->qps);
	free(dev->active);
	free(dev);
	return 0;
}

struct dpdat_mr_domain *
dpdat_dev_domain(struct dpdat_dev *dev)
{
	return dev != NULL && dev->magic == RC_MAGIC_DEV ? dev->dom : NULL;
}

struct dpdat_port *
dpdat_dev_port(struct dpdat_dev *dev)
{
	return dev != NULL && dev->magic == RC_MAGIC_DEV ? dev->port : NULL;
}
