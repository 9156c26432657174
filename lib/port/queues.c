/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Several queues of one device, one engine each. The port that brings the
 * device up (queue 0) configures every queue, each with its own pool and
 * steering ring; dpdat_port_attach() hands out the others, which share the
 * device's identity (address, MAC, MTU) and keep their own counters,
 * faults and neighbour table. memif pairs queue i of one side with queue i
 * of the other, so a QP whose two ends sit on the same queue index never
 * crosses engines. Where a frame still lands on another queue (a peer
 * that spread its QPs differently, RSS on a NIC), the QP number tells
 * whose it is: the receiving engine hands it over through a ring. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "port_priv.h"
#include "roce.h"

static pthread_mutex_t group_lock = PTHREAD_MUTEX_INITIALIZER;

int
port_group_create(struct dpdat_port *p, unsigned int nq, unsigned int n_mbufs)
{
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];
	struct port_group *g;
	uint16_t room = rte_pktmbuf_data_room_size(p->pool);
	uint32_t id;

	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	g->nq = (uint16_t)nq;
	g->pool[0] = p->pool;
	g->q[0] = p;
	for (unsigned int i = 0; i < nq; i++) {
		id = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
		snprintf(name, sizeof(name), "dpdat_st%u_%u", p->port_id, id);
		g->steer[i] = rte_ring_create(name, PORT_STEER_RING,
					      rte_eth_dev_socket_id(p->port_id),
					      RING_F_SC_DEQ);
		if (i > 0) {
			snprintf(name, sizeof(name), "dpdat_q%u_%u", p->port_id,
				 id);
			g->pool[i] = rte_pktmbuf_pool_create(name, n_mbufs, 256,
				0, room, rte_eth_dev_socket_id(p->port_id));
		}
		if (g->steer[i] == NULL || g->pool[i] == NULL) {
			g->pool[0] = NULL;	/* the port's own */
			port_group_free(g);
			return -ENOMEM;
		}
	}
	p->grp = g;
	return 0;
}

void
port_group_free(struct port_group *g)
{
	struct rte_mbuf *m = NULL;

	if (g == NULL)
		return;
	for (unsigned int i = 0; i < g->nq; i++) {
		while (g->steer[i] != NULL &&
		       rte_ring_dequeue(g->steer[i], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(g->steer[i]);
	}
	/* queue 0's pool is its port's, freed with it */
	for (unsigned int i = 1; i < g->nq; i++)
		rte_mempool_free(g->pool[i]);
	free(g);
}

bool
port_steer_other(struct dpdat_port *p, struct rte_mbuf *m)
{
	const struct roce_bth *bth =
		rte_pktmbuf_mtod_offset(m, const struct roce_bth *,
					PORT_HDR_LEN);
	const uint32_t qpn = roce_bth_qpn(bth);
	const uint32_t q = qpn >> PORT_QPN_QUEUE_SHIFT;
	struct port_group *g = p->grp;

	/* QP1 (the CM) is every queue's own: a peer's CM speaks to the
	 * queue its own side sends on */
	if (q == p->queue || q >= g->nq || qpn <= ROCE_QP1 ||
	    __atomic_load_n(&g->q[q], __ATOMIC_ACQUIRE) == NULL)
		return false;	/* the engine judges it (no such QP) */
	if (rte_ring_mp_enqueue(g->steer[q], m) != 0) {
		p->st.drop_steer_full++;
		rte_pktmbuf_free(m);
		return true;
	}
	p->st.rx_steered++;
	return true;
}

struct dpdat_port *
dpdat_port_attach(struct dpdat_port *first)
{
	struct dpdat_port *p;
	struct port_group *g;
	struct rte_mbuf *m = NULL;
	unsigned int q;

	if (first == NULL || first->magic != PORT_MAGIC || first->queue != 0 ||
	    first->grp == NULL) {
		rte_errno = EBADF;
		return NULL;
	}
	g = first->grp;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&group_lock);
	for (q = 1; q < g->nq && g->q[q] != NULL; q++)
		;
	if (q == g->nq) {
		pthread_mutex_unlock(&group_lock);
		free(p);
		rte_errno = ENOSPC;
		return NULL;
	}
	/* the device's identity (what queue 0's engine never writes); a
	 * queue's own state from nothing */
	p->magic = PORT_MAGIC;
	p->port_id = first->port_id;
	p->grp = g;
	memcpy(p->name, first->name, sizeof(p->name));
	p->mac = first->mac;
	p->ip = first->ip;
	p->mtu = first->mtu;
	p->tx_offloads = first->tx_offloads;
	p->tsc_hz = first->tsc_hz;
	p->dev_rx = first->dev_rx;	/* memif's guarded bursts */
	p->dev_tx = first->dev_tx;
	p->drv = first->drv;
	p->link_up = true;
	p->xdp_lock = -1;
	p->guard_fd = -1;
	p->queue = (uint16_t)q;
	p->pool = g->pool[q];
	p->rng = 0x9e3779b97f4a7c15ull ^ q;
	port_path_update(p);
	/* frames a queue of this number left behind are nobody's now */
	while (rte_ring_dequeue(g->steer[q], (void **)&m) == 0)
		rte_pktmbuf_free(m);
	if (port_env_apply(p) < 0) {
		pthread_mutex_unlock(&group_lock);
		free(p);
		rte_errno = EINVAL;
		return NULL;
	}
	__atomic_store_n(&g->q[q], p, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&group_lock);
	port_telemetry_add(p);
	PORT_LOG(INFO, "%s: queue %u of %u attached", p->name, q, g->nq);
	return p;
}

/* A port from dpdat_port_attach() goes; 0, or -EBUSY for a queue 0 that
 * still has company (then nothing changed). */
int
port_queue_detach(struct dpdat_port *p)
{
	struct port_group *g = p->grp;
	int ret = 0;

	if (g == NULL)
		return 0;
	pthread_mutex_lock(&group_lock);
	if (p->queue == 0) {
		for (unsigned int q = 1; q < g->nq; q++)
			if (g->q[q] != NULL)
				ret = -EBUSY;
	} else {
		__atomic_store_n(&g->q[p->queue], NULL, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&group_lock);
	return ret;
}

int
dpdat_port_queue(const struct dpdat_port *p)
{
	if (p == NULL || p->magic != PORT_MAGIC)
		return -EBADF;
	return p->queue;
}
