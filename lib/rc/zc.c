/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Zero-copy transmit. The payload of a SEND or WRITE over DPDK memory (whose
 * IOVA the registration recorded) is attached to the packet as an external
 * buffer instead of being copied: the packet is a chain of a header mbuf,
 * the attached payload and a small trailer for the pad and the ICRC. A WR
 * sent this way completes only when the peer acknowledged it and every mbuf
 * that held its memory was released by the device: the consumer may then
 * reuse the buffer. Used when the port transmits chained mbufs.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_memory.h>
#include <rte_mempool.h>

#include <dpdat/dpdat_env.h>

#include "port_priv.h"
#include "rc_priv.h"

int
rc_zc_pool_create(struct rc_dev *dev)
{
	static uint32_t seq;
	char name[RTE_MEMPOOL_NAMESIZE];
	bool zc = false;
	int set = dpdat_env_bool("DPDAT_ZEROCOPY", &zc);

	const char *why = NULL;

	/* a device that copies every frame anyway (memif, into its shared
	 * rings) only has more work with the payload attached: off there
	 * unless DPDAT_ZEROCOPY=1 asks for it */
	if (set < 0)
		return set;
	if (!(dev->port->tx_offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS))
		why = "the device sends no chained mbufs";
	else if (set == 0 && !zc)
		why = "DPDAT_ZEROCOPY=0";
	else if (set != 0 && dev->port->drv->tx_copies)
		why = "the device copies anyway; DPDAT_ZEROCOPY=1 forces it";
	if (why != NULL) {
		RC_LOG(INFO, "%s: zero-copy transmit off (%s)", dev->port->name,
		       why);
		return 0;
	}
	snprintf(name, sizeof(name), "dpdat_zc%u",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	dev->zc_pool = rte_mempool_create(name, 8191, sizeof(struct rc_zc),
					  0, 0, NULL, NULL, NULL, NULL,
					  SOCKET_ID_ANY,
					  MEMPOOL_F_SP_PUT | MEMPOOL_F_SC_GET);
	return dev->zc_pool != NULL ? 0 : -ENOMEM;
}

/* The device released the last mbuf holding the payload. */
static void
zc_free_cb(void *addr, void *opaque)
{
	struct rc_zc *zc = opaque;

	(void)addr;
	if (zc->orphan) {
		rte_mempool_put(zc->pool, zc);
		return;
	}
	zc->released = true;
	zc->qp->comp.zc_check = true;	/* an in-order completion may wait */
}

void
rc_zc_start(struct dpdat_qp *qp, struct rc_swqe *w)
{
	struct rc_zc *zc;
	void *obj;

	w->zc = NULL;
	w->zc_own_dropped = false;
	if (qp->dev->zc_pool == NULL || w->len < RC_ZC_MIN ||
	    (w->opcode != DPDAT_WR_SEND && w->opcode != DPDAT_WR_SEND_IMM &&
	     w->opcode != DPDAT_WR_RDMA_WRITE &&
	     w->opcode != DPDAT_WR_RDMA_WRITE_IMM) ||
	    rte_mempool_get(qp->dev->zc_pool, &obj) != 0)
		return;
	zc = obj;
	memset(zc, 0, sizeof(*zc));
	zc->qp = qp;
	zc->pool = qp->dev->zc_pool;
	zc->shinfo.free_cb = zc_free_cb;
	zc->shinfo.fcb_opaque = zc;
	rte_mbuf_ext_refcnt_set(&zc->shinfo, 1);	/* the WR's own */
	w->zc = zc;
}

/* May w complete? Gives up the WR's own reference the first time. */
bool
rc_zc_done(struct rc_swqe *w)
{
	struct rc_zc *zc = w->zc;

	if (zc == NULL)
		return true;
	if (!w->zc_own_dropped) {
		w->zc_own_dropped = true;
		if (rte_mbuf_ext_refcnt_update(&zc->shinfo, -1) == 0)
			zc->released = true;
	}
	if (!zc->released)
		return false;
	rte_mempool_put(zc->pool, zc);
	w->zc = NULL;
	return true;
}

/* The WR completes without waiting (flushed, failed): whatever the device
 * still holds goes back to the pool when it lets go. */
void
rc_zc_abandon(struct rc_swqe *w)
{
	struct rc_zc *zc = w->zc;

	if (zc == NULL)
		return;
	w->zc = NULL;
	zc->orphan = true;
	if (!w->zc_own_dropped &&
	    rte_mbuf_ext_refcnt_update(&zc->shinfo, -1) == 0)
		rte_mempool_put(zc->pool, zc);
	else if (w->zc_own_dropped && zc->released)
		rte_mempool_put(zc->pool, zc);
}

/* The IOVA of a byte of DPDK memory from its memseg. Not
 * rte_mem_virt2iova(): in PA mode it reads /proc/self/pagemap (an open,
 * a seek, a read and a close: four system calls a packet). */
static rte_iova_t
zc_iova(const void *va)
{
	const struct rte_memseg *ms = rte_mem_virt2memseg(va, NULL);

	if (ms == NULL || ms->iova == RTE_BAD_IOVA)
		return RTE_BAD_IOVA;
	return ms->iova + ((uintptr_t)va - ms->addr_64);
}

/* The IOVA of the n bytes at x->addr, or RTE_BAD_IOVA when they are not
 * DPDK memory in one IOVA-contiguous piece (then they are copied). */
static rte_iova_t
zc_range_iova(const struct dpdat_mr_xlat *x, uint32_t n)
{
	rte_iova_t iova;

	if (x->kind != DPDAT_MEM_KIND_DPDK)
		return RTE_BAD_IOVA;
	if (x->iova != UINT64_MAX)
		return x->iova;
	/* the region is not IOVA-contiguous (hugepages in PA mode): this
	 * packet's bytes may still be */
	iova = zc_iova(x->addr);
	if (iova == RTE_BAD_IOVA ||
	    zc_iova((uint8_t *)x->addr + n - 1) != iova + n - 1)
		return RTE_BAD_IOVA;
	return iova;
}

/* n bytes at addr attached to an mbuf under shinfo (which takes one more
 * reference), followed by a trailer holding pad zeros; NULL when out of
 * mbufs. */
static struct rte_mbuf *
zc_attach(struct dpdat_qp *qp, void *addr, rte_iova_t iova, uint32_t n,
	  unsigned int pad, struct rte_mbuf_ext_shared_info *shinfo)
{
	struct rte_mempool *pool = qp->dev->port->pool;
	struct rte_mbuf *m, *t;
	uint8_t *p;

	m = rte_pktmbuf_alloc(pool);
	t = rte_pktmbuf_alloc(pool);
	if (m == NULL || t == NULL) {
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(t);
		return NULL;
	}
	rte_mbuf_ext_refcnt_update(shinfo, 1);
	rte_pktmbuf_attach_extbuf(m, addr, iova, (uint16_t)n, shinfo);
	m->data_off = 0;
	m->data_len = (uint16_t)n;
	m->pkt_len = n;
	p = (uint8_t *)rte_pktmbuf_append(t, (uint16_t)pad);
	if (pad != 0)
		memset(p, 0, pad);
	if (rte_pktmbuf_chain(m, t) != 0) {
		rte_pktmbuf_free(m);	/* releases the reference again */
		rte_pktmbuf_free(t);
		return NULL;
	}
	qp->st.tx_zerocopy++;
	return m;
}

/* The payload [off, off + n) of w as an attached mbuf followed by a trailer
 * holding pad zeros, or NULL when it must be copied instead (several SGEs,
 * memory that is not DPDK's own or whose IOVA is not contiguous). */
struct rte_mbuf *
rc_zc_payload(struct dpdat_qp *qp, struct rc_swqe *w, uint32_t off,
	      uint32_t n, unsigned int pad)
{
	struct dpdat_mr_xlat x;
	rte_iova_t iova;
	uint32_t i, skip = off;

	if (w->zc == NULL || n == 0)
		return NULL;
	for (i = 0; i < w->num_sge && skip >= w->sge[i].length; i++)
		skip -= w->sge[i].length;
	if (i == w->num_sge || w->sge[i].length - skip < n ||
	    dpdat_mr_access_check(qp->dev->dom, w->sge[i].lkey,
				  w->sge[i].addr + skip, n,
				  DPDAT_MEM_PRIV_LOCAL_READ, qp->pz_id,
				  &x) != DPDAT_MR_CHECK_OK)
		return NULL;
	iova = zc_range_iova(&x, n);
	if (iova == RTE_BAD_IOVA)
		return NULL;
	return zc_attach(qp, x.addr, iova, n, pad, &w->zc->shinfo);
}

/* The device released a READ response's memory. */
static void
zc_read_free_cb(void *addr, void *opaque)
{
	struct rc_zc *zc = opaque;
	struct rc_dev *dev = zc->dev;

	(void)addr;
	rte_mempool_put(zc->pool, zc);
	__atomic_fetch_sub(&dev->zc_rd_out, 1, __ATOMIC_RELEASE);
}

/*
 * n bytes of a READ response, checked (x) against the registration, as an
 * attached mbuf and its pad trailer; NULL: copy them.
 *
 * There is no work request here to hold the memory: the consumer that
 * registered it may free the LMR (or unbind the RMR) and then the memory
 * while the device still holds the response. The rule: a zero-copy READ
 * response counts as a reader of the registration until the device
 * releases it. Freeing a context waits (mr_domain_sync) for a quiescent
 * state of every engine, and the engine thread reports one only when none
 * of its zero-copy READ responses is out (dev->zc_rd_out, dev.c); so
 * dpdat_lmr_free() returns only after the device let go of the memory, and
 * a READ arriving after it fails its key check (NAK, remote access error).
 * An engine run inline by the consumer goes offline after every iteration,
 * so it could not keep that promise: it copies.
 */
struct rte_mbuf *
rc_zc_read_payload(struct dpdat_qp *qp, const struct dpdat_mr_xlat *x,
		   uint32_t n, unsigned int pad)
{
	struct rc_dev *dev = qp->dev;
	struct rte_mbuf *m;
	struct rc_zc *zc;
	rte_iova_t iova;
	void *obj;

	if (dev->zc_pool == NULL || dev->progress != DPDAT_PROGRESS_THREAD ||
	    n < RC_ZC_MIN)
		return NULL;
	iova = zc_range_iova(x, n);
	if (iova == RTE_BAD_IOVA || rte_mempool_get(dev->zc_pool, &obj) != 0)
		return NULL;
	zc = obj;
	memset(zc, 0, sizeof(*zc));
	zc->dev = dev;
	zc->pool = dev->zc_pool;
	zc->shinfo.free_cb = zc_read_free_cb;
	zc->shinfo.fcb_opaque = zc;
	/* a reference of our own while the mbuf is built: a failure inside
	 * zc_attach() then never runs the release callback */
	rte_mbuf_ext_refcnt_set(&zc->shinfo, 1);
	__atomic_fetch_add(&dev->zc_rd_out, 1, __ATOMIC_RELAXED);
	m = zc_attach(qp, x->addr, iova, n, pad, &zc->shinfo);
	if (rte_mbuf_ext_refcnt_update(&zc->shinfo, -1) == 0) {
		/* no mbuf holds it */
		__atomic_fetch_sub(&dev->zc_rd_out, 1, __ATOMIC_RELAXED);
		rte_mempool_put(dev->zc_pool, zc);
	}
	return m;
}
