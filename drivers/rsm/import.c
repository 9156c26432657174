/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Import side: a connection per import to the exporter's service; get and
 * put are RDMA READ and WRITE through a registered staging buffer. The
 * entries of getv and putv whose local side is a local memory handle (an
 * LMR of the controller's PZ) are READ into and WRITTEN from that memory
 * directly, with the handle's lkey: no copy.
 *
 * Rebind: the exporter's old rkeys die at once. An access that meets a
 * dead key completes with a remote access error; the importer then resumes
 * the import (a new connection presenting its ticket, which keeps the
 * rights granted at connect time) and, when the segment's generation
 * changed, repeats the access on the new memory. With the same generation
 * the error was a real refusal: RSMERR_PERM_DENIED. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>

#include "rsm_priv.h"

struct rsm_import *
rsm_import_find(struct rsm_ctlr *c, const void *h)
{
	struct rsm_import *m;

	if (h == NULL || !c->opened)
		return NULL;
	TAILQ_FOREACH(m, &c->imports, next)
		if ((const void *)m == h)
			return m;
	return NULL;
}

/* Imports are used by one thread at a time (as in Solaris, the
 * application serialises operations on one handle). */
static struct rsm_import *
import_get(const void *h)
{
	struct rsm_import *m;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	m = rsm_import_find(&rsm_ctlr0, h);
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	return m;
}

static uint32_t
stage_lkey(struct rsm_import *m)
{
	struct dpdat_lmr_info li;

	dpdat_lmr_query(m->stage_lmr, &li);
	return li.lmr_context;
}

/* Tear the connection down (orderly when it still stands). */
static void
import_close(struct rsm_import *m, int bye)
{
	struct rsm_req q = { .magic = RSM_WIRE_MAGIC, .op = RSM_OP_BYE,
			     .ticket = m->ticket };
	struct dpdat_cm_event ev;
	double t0;

	if (m->conn == NULL)
		return;
	if (dpdat_cm_disconnect(m->conn, bye ? &q : NULL,
				bye ? sizeof(q) : 0) == 0) {
		t0 = (double)rte_get_tsc_cycles() / rte_get_tsc_hz();
		/* a QP that broke on a refused access may have taken the
		 * exporter's end with it (no DREP will come): do not wait
		 * long then; the exporter ends it when the import resumes */
		double limit = bye ? 3 : 0.3;

		while ((double)rte_get_tsc_cycles() / rte_get_tsc_hz() - t0 <
		       limit)
			if (dpdat_cm_eq_wait(m->eq, &ev, 100) == 1 &&
			    ev.conn == m->conn &&
			    (ev.type == DPDAT_CM_DISCONNECTED ||
			     ev.type == DPDAT_CM_BROKEN))
				break;
	}
	dpdat_cm_conn_free(m->conn);
	m->conn = NULL;
	/* its events still queued would be taken for the next one's (which
	 * may even get the same address) */
	while (dpdat_cm_eq_poll(m->eq, &ev) == 1)
		;
	if (m->qp != NULL) {
		struct dpdat_wc wc;

		dpdat_qp_free(m->qp);
		while (dpdat_cq_poll(m->cq, &wc, 1) == 1)
			;
		m->qp = NULL;
	}
	m->outstanding = 0;
	m->stage_used = 0;
	m->lmh_posted = 0;	/* the QP is gone: nothing reads a handle */
}

/* Who imports, for the exporter's choice of digit: the effective ids, as
 * for a file, and the supplementary groups other than the effective gid:
 * their number, and the first ones (as many as the REQ holds). */
static void
import_creds(struct rsm_req *q)
{
	gid_t *all = NULL;
	int n = getgroups(0, NULL);

	q->uid = geteuid();
	q->gid = getegid();
	q->ngroups = 0;
	if (n > 0)
		all = malloc((size_t)n * sizeof(*all));
	if (all != NULL)
		n = getgroups(n, all);
	for (int i = 0; all != NULL && i < n; i++)
		if (all[i] != (gid_t)q->gid) {
			if (q->ngroups < RSM_REQ_GROUPS)
				q->groups[q->ngroups] = all[i];
			q->ngroups++;
		}
	free(all);
}

/* An RSMERR code of the interface (rsmapi.h), not 0. */
static bool
rsm_err_known(uint32_t e)
{
	return (e >= RSMERR_BAD_LIBRARY_VERSION &&
		e <= RSMERR_SEG_NOT_CONNECTED) ||
	       e == RSMERR_INTERNAL_ERROR || e == RSMERR_UNSUPPORTED_OPERATION;
}

int
rsm_import_reply(struct rsm_import *m, const struct dpdat_cm_event *ev)
{
	struct rsm_rep rep;

	memcpy(&rep, ev->private_data, sizeof(rep));
	if (ev->type == DPDAT_CM_ESTABLISHED && rep.magic == RSM_WIRE_MAGIC &&
	    rep.status == 0) {
		m->raddr = rep.addr;
		m->rlen = rep.len;
		m->rkey = rep.rkey;
		m->gen = rep.gen;
		m->ticket = rep.ticket;
		m->broken = 0;
		return 0;
	}
	/* the exporter's code, when it is one: a REJ saying 0 (success) or
	 * a number of no meaning is no answer of RSM's */
	if (ev->type == DPDAT_CM_REJECTED && rep.magic == RSM_WIRE_MAGIC &&
	    ev->private_data_len >= sizeof(rep) && rsm_err_known(rep.status))
		return (int)rep.status;
	if (ev->type == DPDAT_CM_REJECTED &&
	    ev->reason == DPDAT_CM_REJ_INVALID_SERVICE)
		return RSMERR_SEG_NOT_PUBLISHED;	/* no RSM service there */
	return RSMERR_REMOTE_NODE_UNREACHABLE;
}

/* Connect (op NEW) or resume (op RESUME); 0 or an RSMERR code. */
static int
import_open(struct rsm_import *m, uint32_t op)
{
	struct dpdat_qp_conf qc = { .pz = m->ctlr->pz, .send_cq = m->cq,
				    .recv_cq = m->cq,
				    .max_send_wr = RSM_SQ_DEPTH,
				    .max_recv_wr = 4 };
	struct rsm_req q = { .magic = RSM_WIRE_MAGIC, .op = op,
			     .segid = m->segid, .perm = m->perm,
			     .node = m->ctlr->node, .ticket = m->ticket };
	struct dpdat_cm_event ev;
	int r;

	import_creds(&q);
	m->qp = dpdat_qp_create(m->ctlr->dev, &qc);
	if (m->qp == NULL)
		return RSMERR_INSUFFICIENT_RESOURCES;
	m->conn = dpdat_cm_connect(m->qp, m->ip, RSM_SERVICE, &q, sizeof(q),
				   m->eq);
	if (m->conn == NULL) {
		dpdat_qp_free(m->qp);
		m->qp = NULL;
		return RSMERR_INSUFFICIENT_RESOURCES;
	}
	/* late events of an earlier connection of this import are not ours */
	for (;;) {
		memset(&ev, 0, sizeof(ev));
		if (dpdat_cm_eq_wait(m->eq, &ev, 20000) != 1) {
			ev.type = DPDAT_CM_UNREACHABLE;
			break;
		}
		if (ev.conn == m->conn)
			break;
	}
	r = rsm_import_reply(m, &ev);
	if (r == 0)
		return 0;
	/* a connection still trying keeps its QP: the CM's REQs read it */
	if (dpdat_cm_conn_free(m->conn) == 0)
		dpdat_qp_free(m->qp);
	else
		RSM_LOG(WARNING, "segment %#x: connection attempt leaked",
			m->segid);
	m->conn = NULL;
	m->qp = NULL;
	return r;
}

/* The connection is gone or unusable: resume the import. */
static int
import_resume(struct rsm_import *m)
{
	int r;

	import_close(m, 0);
	r = import_open(m, RSM_OP_RESUME);
	if (r != 0) {
		RSM_LOG(INFO, "segment %#x: resume refused (%d)", m->segid, r);
		m->dead = 1;
		return RSMERR_CONN_ABORTED;
	}
	return 0;
}

/* Did the exporter end the connection (destroy, unpublish)? */
static void
import_events(struct rsm_import *m)
{
	struct dpdat_cm_event ev;

	while (dpdat_cm_eq_poll(m->eq, &ev) == 1)
		if (ev.conn == m->conn &&
		    (ev.type == DPDAT_CM_DISCONNECTED ||
		     ev.type == DPDAT_CM_BROKEN))
			m->broken = 1;
}

/* Wait for one completion; its status, or -1 on timeout. */
static int
import_wait(struct rsm_import *m, struct dpdat_wc *wc)
{
	for (int i = 0; i < RSM_WAIT_MS / 10; i++) {
		if (dpdat_cq_poll(m->cq, wc, 1) == 1) {
			m->outstanding--;
			if (wc->status != DPDAT_WC_SUCCESS)
				m->failures++;
			return (int)wc->status;
		}
		dpdat_cq_wait(m->cq, 10);
	}
	return -1;
}

/* Explicit mode: wait for every put in flight; 0 or the first failure. */
static int
import_drain(struct rsm_import *m)
{
	struct dpdat_wc wc;
	int st = 0;

	while (m->outstanding > 0) {
		int s = import_wait(m, &wc);

		if (s != 0 && st == 0)
			st = s;
		if (s < 0) {
			m->failures++;
			m->outstanding = 0;
			break;
		}
	}
	m->stage_used = 0;
	m->lmh_posted = 0;
	return st;
}

/* Post a READ or WRITE between local (registered under lkey: the staging
 * buffer or a local memory handle) and the segment at off. */
static int
import_post(struct rsm_import *m, enum dpdat_wr_opcode op, void *local,
	    uint32_t lkey, uint64_t off, size_t len)
{
	struct dpdat_sge sge = {
		.addr = (uint64_t)(uintptr_t)local,
		.length = (uint32_t)len, .lkey = lkey };
	struct dpdat_send_wr wr = { .opcode = op, .flags = DPDAT_SEND_SIGNALED,
				    .sg_list = &sge, .num_sge = 1,
				    .remote_addr = m->raddr + off,
				    .rkey = m->rkey };

	if (dpdat_post_send(m->qp, &wr) != 0)
		return -1;
	m->outstanding++;
	return 0;
}

/* Explicit mode: post a put and return (close_barrier reports the
 * outcome). Staged bytes take the next free part of the staging buffer,
 * drained when full; a handle's memory is itself the source, read until
 * the put completes (drained by barriers, set_mode, disconnect, and
 * rsm_free_localmemory_handle). A full send queue is drained first: a
 * refused post would cost the connection and the puts in flight. */
static int
import_defer(struct rsm_import *m, uint64_t off, uint8_t *buf, size_t len,
	     const struct rsm_lmh *lmh)
{
	if (m->outstanding >= RSM_SQ_DEPTH)
		import_drain(m);
	if (lmh != NULL) {
		if (import_post(m, DPDAT_WR_RDMA_WRITE, buf, lmh->lkey, off,
				len) != 0)
			return -1;
		m->lmh_posted = 1;
		return 0;
	}
	if (m->stage_used + len > RSM_STAGE_SIZE)
		import_drain(m);
	memcpy(m->stage + m->stage_used, buf, len);
	if (import_post(m, DPDAT_WR_RDMA_WRITE, m->stage + m->stage_used,
			stage_lkey(m), off, len) != 0)
		return -1;
	m->stage_used += len;
	return 0;
}

/* One READ or WRITE of at most RSM_STAGE_SIZE bytes, with resumption:
 * buf copied through the staging buffer or, with lmh (buf inside it),
 * reached by the transfer itself. */
static int
import_chunk(struct rsm_import *m, int write, uint64_t off, uint8_t *buf,
	     size_t len, const struct rsm_lmh *lmh)
{
	struct dpdat_wc wc;

	for (int attempt = 0; attempt < 4; attempt++) {
		uint32_t gen = m->gen;
		int s;

		if (m->broken && import_resume(m) != 0)
			return RSMERR_CONN_ABORTED;
		if (write && m->mode == RSM_BARRIER_MODE_EXPLICIT) {
			if (import_defer(m, off, buf, len, lmh) != 0) {
				m->broken = 1;
				continue;
			}
			return 0;
		}
		if (import_drain(m) != 0)
			m->broken = 1;	/* failed puts: the QP is in error */
		if (m->broken)
			continue;
		if (write && lmh == NULL)
			memcpy(m->stage, buf, len);
		if (import_post(m, write ? DPDAT_WR_RDMA_WRITE :
				DPDAT_WR_RDMA_READ, lmh != NULL ? buf : m->stage,
				lmh != NULL ? lmh->lkey : stage_lkey(m), off,
				len) != 0) {
			m->broken = 1;
			continue;
		}
		s = import_wait(m, &wc);
		if (s == DPDAT_WC_SUCCESS) {
			if (!write && lmh == NULL)
				memcpy(buf, m->stage, len);
			return 0;
		}
		if (import_resume(m) != 0)
			return RSMERR_CONN_ABORTED;
		/* the same memory refused it: no right; else it moved */
		if (s == DPDAT_WC_REM_ACCESS_ERR && m->gen == gen)
			return RSMERR_PERM_DENIED;
	}
	return RSMERR_CONN_ABORTED;
}

static int
import_xfer(void *h, int write, off_t offset, void *buf, size_t len,
	    const struct rsm_lmh *lmh)
{
	struct rsm_import *m = import_get(h);
	size_t done = 0;

	if (m == NULL)
		return RSMERR_BAD_SEG_HNDL;
	if (m->dead)
		return RSMERR_CONN_ABORTED;
	if (buf == NULL && len > 0)
		return RSMERR_BAD_ADDR;
	if (offset < 0 || (uint64_t)offset > m->rlen)
		return RSMERR_BAD_OFFSET;
	if (len > m->rlen - (uint64_t)offset)
		return RSMERR_BAD_LENGTH;
	import_events(m);
	while (done < len) {
		size_t n = RTE_MIN(len - done, (size_t)RSM_STAGE_SIZE);
		int r = import_chunk(m, write, (uint64_t)offset + done,
				     (uint8_t *)buf + done, n, lmh);

		if (r != 0)
			return r;
		done += n;
	}
	return 0;
}

int
rsm_memseg_import_connect(rsmapi_controller_handle_t controller,
			  rsm_node_id_t node_id, rsm_memseg_id_t segment_id,
			  rsm_permission_t perm,
			  rsm_memseg_import_handle_t *im_memseg)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct rsm_import *m;
	struct rsm_ctlr *c;
	int r;

	c = rsm_ctlr_check(controller, &r);
	if (c == NULL)
		return r;
	if (im_memseg == NULL)
		return RSMERR_BAD_SEG_HNDL;
	if (perm == 0 || (perm & ~(rsm_permission_t)RSM_PERM_RDWR) != 0)
		return RSMERR_BAD_PERMS;
	if (rsm_node_ip(c, node_id) == 0)
		return RSMERR_REMOTE_NODE_UNREACHABLE;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return RSMERR_INSUFFICIENT_MEM;
	m->ctlr = c;
	m->node = node_id;
	m->ip = rsm_node_ip(c, node_id);
	m->segid = segment_id;
	m->perm = perm;
	m->mode = RSM_BARRIER_MODE_IMPLICIT;
	r = RSMERR_INSUFFICIENT_MEM;
	if (posix_memalign((void **)&m->stage, 4096, RSM_STAGE_SIZE + 4096))
		goto err;
	d.virt.addr = m->stage;
	d.virt.length = RSM_STAGE_SIZE + 4096;	/* + the signal buffer */
	r = RSMERR_INSUFFICIENT_RESOURCES;
	m->stage_lmr = dpdat_lmr_create(c->pz, &d, DPDAT_MEM_PRIV_LOCAL_READ |
					DPDAT_MEM_PRIV_LOCAL_WRITE);
	m->cq = dpdat_cq_create(c->dev, 512);
	m->eq = dpdat_cm_eq_create(c->dev, 16);
	if (m->stage_lmr == NULL || m->cq == NULL || m->eq == NULL)
		goto err;
	r = import_open(m, RSM_OP_NEW);
	if (r != 0)
		goto err;
	pthread_mutex_lock(&c->lock);
	TAILQ_INSERT_TAIL(&c->imports, m, next);
	pthread_mutex_unlock(&c->lock);
	*im_memseg = (rsm_memseg_import_handle_t)m;
	return 0;
err:
	if (m->eq != NULL)
		dpdat_cm_eq_free(m->eq);
	if (m->cq != NULL)
		dpdat_cq_free(m->cq);
	if (m->stage_lmr != NULL)
		dpdat_lmr_free(m->stage_lmr);
	free(m->stage);
	free(m);
	return r;
}

int
rsm_memseg_import_disconnect(rsm_memseg_import_handle_t im_memseg)
{
	struct rsm_import *m;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	m = rsm_import_find(&rsm_ctlr0, im_memseg);
	if (m != NULL)
		TAILQ_REMOVE(&rsm_ctlr0.imports, m, next);
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	if (m == NULL)
		return RSMERR_BAD_SEG_HNDL;
	import_drain(m);
	import_events(m);
	import_close(m, 1);
	dpdat_cm_eq_free(m->eq);
	dpdat_cq_free(m->cq);
	dpdat_lmr_free(m->stage_lmr);
	free(m->stage);
	free(m);
	return 0;
}

int
rsm_memseg_import_get(rsm_memseg_import_handle_t im_memseg, off_t offset,
		      void *dst_addr, size_t length)
{
	return import_xfer(im_memseg, 0, offset, dst_addr, length, NULL);
}

int
rsm_memseg_import_put(rsm_memseg_import_handle_t im_memseg, off_t offset,
		      void *src_addr, size_t length)
{
	return import_xfer(im_memseg, 1, offset, src_addr, length, NULL);
}

/* The sized forms: offset aligned to the size (RSMERR_MISALIGNED_OFFSET). */
#define RSM_SIZED(bits) \
int \
rsm_memseg_import_get ## bits(rsm_memseg_import_handle_t im_memseg, \
			      off_t offset, uint ## bits ## _t *datap, \
			      ulong_t rep_cnt) \
{ \
	if (offset % (bits / 8) != 0) \
		return RSMERR_MISALIGNED_OFFSET; \
	return import_xfer(im_memseg, 0, offset, datap, \
			   rep_cnt * (bits / 8), NULL); \
} \
int \
rsm_memseg_import_put ## bits(rsm_memseg_import_handle_t im_memseg, \
			      off_t offset, uint ## bits ## _t *datap, \
			      ulong_t rep_cnt) \
{ \
	if (offset % (bits / 8) != 0) \
		return RSMERR_MISALIGNED_OFFSET; \
	return import_xfer(im_memseg, 1, offset, datap, \
			   rep_cnt * (bits / 8), NULL); \
}
RSM_SIZED(8)
RSM_SIZED(16)
RSM_SIZED(32)
RSM_SIZED(64)

static int
lmh_valid(struct rsm_lmh *h)
{
	struct rsm_lmh *x;
	int ok = 0;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	if (rsm_ctlr0.opened)
		TAILQ_FOREACH(x, &rsm_ctlr0.lmhs, next)
			if (x == h)
				ok = 1;
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	return ok;
}

/* The local side of an entry: its address and, for a handle, the handle,
 * live and holding the whole range. 0 or an RSMERR code. */
static int
sgio_local(const rsm_iovec_t *v, char **local, const struct rsm_lmh **lmh)
{
	struct rsm_lmh *h = (struct rsm_lmh *)v->local.handle;

	*lmh = NULL;
	if (v->io_type == RSM_VA_TYPE) {
		*local = (char *)v->local.vaddr + v->local_offset;
		return 0;
	}
	if (v->io_type != RSM_HANDLE_TYPE)
		return RSMERR_BAD_SGIO;
	if (!lmh_valid(h))
		return RSMERR_BAD_LOCALMEM_HNDL;
	if (v->local_offset > h->len ||
	    v->transfer_length > h->len - v->local_offset)
		return RSMERR_BAD_LENGTH;
	*local = h->vaddr + v->local_offset;
	*lmh = h;
	return 0;
}

static int
import_sgio(rsm_scat_gath_t *sg, int write)
{
	const struct rsm_lmh *lmh;
	struct rsm_import *m;
	char *local;
	ulong_t i;
	int r;

	if (sg == NULL)
		return RSMERR_BAD_SGIO;
	if (sg->io_request_count == 0 ||
	    sg->io_request_count > RSM_MAX_SGIOREQS || sg->iovec == NULL)
		return RSMERR_BAD_SGIO;
	m = import_get(sg->remote_handle);
	if (m == NULL)
		return RSMERR_BAD_SEG_HNDL;
	sg->io_residual_count = sg->io_request_count;
	if (m->dead)
		return RSMERR_CONN_ABORTED;
	/* every entry is checked before the first moves a byte */
	for (i = 0; i < sg->io_request_count; i++) {
		const rsm_iovec_t *v = &sg->iovec[i];

		r = sgio_local(v, &local, &lmh);
		if (r != 0)
			return r;
		if (v->remote_offset > m->rlen)
			return RSMERR_BAD_OFFSET;
		if (v->transfer_length > m->rlen - v->remote_offset)
			return RSMERR_BAD_LENGTH;
	}
	for (i = 0; i < sg->io_request_count; i++) {
		rsm_iovec_t *v = &sg->iovec[i];

		r = sgio_local(v, &local, &lmh);
		if (r == 0)
			r = import_xfer(sg->remote_handle, write,
					(off_t)v->remote_offset, local,
					v->transfer_length, lmh);
		if (r != 0)
			return r;
		sg->io_residual_count--;
	}
	if (sg->flags & RSM_IMPLICIT_SIGPOST)
		return rsm_intr_signal_post(sg->remote_handle, 0);
	return 0;
}

int
rsm_memseg_import_getv(rsm_scat_gath_t *sg_io)
{
	return import_sgio(sg_io, 0);
}

int
rsm_memseg_import_putv(rsm_scat_gath_t *sg_io)
{
	return import_sgio(sg_io, 1);
}

/* rte_errno of dpdat_lmr_create() as the interface's codes. */
static int
lmh_error(int e)
{
	switch (e) {
	case ENOMEM:
		return RSMERR_INSUFFICIENT_MEM;
	case EINVAL:	/* a page not mapped readable and writable */
		return RSMERR_BAD_ADDR;
	default:	/* ENOSPC: no free context */
		return RSMERR_INSUFFICIENT_RESOURCES;
	}
}

int
rsm_create_localmemory_handle(rsmapi_controller_handle_t controller,
			      rsm_localmemory_handle_t *handle,
			      caddr_t vaddr, size_t length)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	struct rsm_lmh *h;
	struct rsm_ctlr *c;
	int r;

	c = rsm_ctlr_check(controller, &r);
	if (c == NULL)
		return r;
	if (handle == NULL || vaddr == NULL)
		return RSMERR_BAD_ADDR;
	if (length == 0 || (uintptr_t)vaddr + length < (uintptr_t)vaddr)
		return RSMERR_BAD_LENGTH;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return RSMERR_INSUFFICIENT_MEM;
	h->vaddr = vaddr;
	h->len = length;
	d.virt.addr = vaddr;
	d.virt.length = length;
	/* local read for putv's WRITEs, local write for getv's READs */
	h->lmr = dpdat_lmr_create(c->pz, &d, DPDAT_MEM_PRIV_LOCAL_READ |
				  DPDAT_MEM_PRIV_LOCAL_WRITE);
	if (h->lmr == NULL) {
		r = lmh_error(rte_errno);
		free(h);
		return r;
	}
	dpdat_lmr_query(h->lmr, &li);
	h->lkey = li.lmr_context;
	pthread_mutex_lock(&c->lock);
	TAILQ_INSERT_TAIL(&c->lmhs, h, next);
	pthread_mutex_unlock(&c->lock);
	*handle = (rsm_localmemory_handle_t)h;
	return 0;
}

/* Explicit-mode puts may still be reading the handle's memory: the call
 * drains every import with such puts in flight (their outcome stays for
 * close_barrier) before the LMR goes. The interface has no "in use"
 * error to refuse with. */
int
rsm_free_localmemory_handle(rsmapi_controller_handle_t controller,
			    rsm_localmemory_handle_t handle)
{
	struct rsm_lmh *h = (struct rsm_lmh *)handle, *x;
	struct rsm_import *m;
	struct rsm_ctlr *c;
	int r;

	c = rsm_ctlr_check(controller, &r);
	if (c == NULL)
		return r;
	pthread_mutex_lock(&c->lock);
	TAILQ_FOREACH(x, &c->lmhs, next)
		if (x == h)
			break;
	if (x == NULL || !c->opened) {
		pthread_mutex_unlock(&c->lock);
		return RSMERR_BAD_LOCALMEM_HNDL;
	}
	TAILQ_REMOVE(&c->lmhs, h, next);
	TAILQ_FOREACH(m, &c->imports, next)
		if (m->lmh_posted && import_drain(m) != 0)
			m->broken = 1;	/* failed puts: the QP is in error */
	pthread_mutex_unlock(&c->lock);
	if (dpdat_lmr_free(h->lmr) != 0)
		RSM_LOG(WARNING, "local memory handle %p: LMR not freed",
			(void *)h);
	free(h);
	return 0;
}

int
rsm_memseg_import_map(rsm_memseg_import_handle_t im_memseg, void **address,
		      rsm_attribute_t attr, rsm_permission_t perm,
		      off_t offset, size_t length)
{
	if (import_get(im_memseg) == NULL)
		return RSMERR_BAD_SEG_HNDL;
	/* loads and stores cannot reach another host over Ethernet */
	return RSMERR_UNSUPPORTED_OPERATION;
}

int
rsm_memseg_import_unmap(rsm_memseg_import_handle_t im_memseg)
{
	if (import_get(im_memseg) == NULL)
		return RSMERR_BAD_SEG_HNDL;
	return RSMERR_SEG_NOT_MAPPED;
}

/* ---- barriers ---- */

#define RSM_BARRIER_MAGIC	((void *)(uintptr_t)0x52534d42)

static struct rsm_import *
barrier_import(rsmapi_barrier_t *b, int *err)
{
	struct rsm_import *m;

	*err = RSMERR_BAD_BARRIER_PTR;
	if (b == NULL)
		return NULL;
	*err = RSMERR_BARRIER_UNINITIALIZED;
	if (b->privdata != RSM_BARRIER_MAGIC)
		return NULL;
	m = import_get(b->seg);
	*err = m != NULL ? 0 : RSMERR_BAD_SEG_HNDL;
	return m;
}

int
rsm_memseg_import_init_barrier(rsm_memseg_import_handle_t im_memseg,
			       rsm_barrier_type_t type,
			       rsmapi_barrier_t *barrier)
{
	if (import_get(im_memseg) == NULL)
		return RSMERR_BAD_SEG_HNDL;
	if (barrier == NULL)
		return RSMERR_BAD_BARRIER_PTR;
	if (type != RSM_BARRIER_SEGMENT && type != RSM_BARRIER_NODE &&
	    type != RSM_BARRIER_SEGMENT_THREAD &&
	    type != RSM_BARRIER_NODE_THREAD)
		return RSMERR_BAD_BARRIER_PTR;
	barrier->seg = im_memseg;
	barrier->gnum = 0;	/* 1 while open */
	barrier->privdata = RSM_BARRIER_MAGIC;
	return 0;
}

int
rsm_memseg_import_open_barrier(rsmapi_barrier_t *barrier)
{
	struct rsm_import *m;
	int err;

	m = barrier_import(barrier, &err);
	if (m == NULL)
		return err;
	import_events(m);
	if (m->dead || (m->broken && import_resume(m) != 0))
		return RSMERR_BARRIER_OPEN_FAILED;
	m->bar_mark = m->failures;
	m->bar_open = 1;
	barrier->gnum = 1;
	return 0;
}

/* Wait for everything since open; RSMERR_BARRIER_FAILURE when any
 * transfer since then failed. */
int
rsm_memseg_import_close_barrier(rsmapi_barrier_t *barrier)
{
	struct rsm_import *m;
	int err;

	m = barrier_import(barrier, &err);
	if (m == NULL)
		return err;
	if (!m->bar_open || barrier->gnum != 1)
		return RSMERR_BARRIER_NOT_OPENED;
	if (import_drain(m) != 0)
		m->broken = 1;
	m->bar_open = 0;
	barrier->gnum = 0;
	if (m->failures != m->bar_mark)
		return RSMERR_BARRIER_FAILURE;
	return 0;
}

int
rsm_memseg_import_order_barrier(rsmapi_barrier_t *barrier)
{
	struct rsm_import *m;
	int err;

	m = barrier_import(barrier, &err);
	if (m == NULL)
		return err;
	if (!m->bar_open)
		return RSMERR_BARRIER_NOT_OPENED;
	/* RC keeps writes in order already; this makes them complete */
	if (import_drain(m) != 0) {
		m->broken = 1;
		return RSMERR_BARRIER_FAILURE;
	}
	return 0;
}

int
rsm_memseg_import_destroy_barrier(rsmapi_barrier_t *barrier)
{
	struct rsm_import *m;
	int err;

	m = barrier_import(barrier, &err);
	if (m == NULL)
		return err;
	m->bar_open = 0;
	barrier->privdata = NULL;
	return 0;
}

int
rsm_memseg_import_get_mode(rsm_memseg_import_handle_t im_memseg,
			   rsm_barrier_mode_t *mode)
{
	struct rsm_import *m = import_get(im_memseg);

	if (m == NULL)
		return RSMERR_BAD_SEG_HNDL;
	if (mode == NULL)
		return RSMERR_BAD_ADDR;
	*mode = m->mode;
	return 0;
}

int
rsm_memseg_import_set_mode(rsm_memseg_import_handle_t im_memseg,
			   rsm_barrier_mode_t mode)
{
	struct rsm_import *m = import_get(im_memseg);

	if (m == NULL)
		return RSMERR_BAD_SEG_HNDL;
	if (mode != RSM_BARRIER_MODE_EXPLICIT &&
	    mode != RSM_BARRIER_MODE_IMPLICIT)
		return RSMERR_BAD_MODE;
	if (mode == RSM_BARRIER_MODE_IMPLICIT && import_drain(m) != 0)
		m->broken = 1;
	m->mode = mode;
	return 0;
}

/* ---- signals ---- */

int
rsm_intr_signal_post(void *im_memseg, uint_t flags)
{
	struct rsm_import *m = import_get(im_memseg);
	struct dpdat_wc wc;
	int s;

	if (m == NULL)
		return RSMERR_BAD_SEG_HNDL;
	if (m->dead)
		return RSMERR_CONN_ABORTED;
	import_events(m);
	for (int attempt = 0; attempt < 2; attempt++) {
		struct dpdat_sge sge = {
			.addr = (uint64_t)(uintptr_t)(m->stage +
						      RSM_STAGE_SIZE),
			.length = 8, .lkey = stage_lkey(m) };
		struct dpdat_send_wr wr = { .opcode = DPDAT_WR_SEND,
					    .flags = DPDAT_SEND_SIGNALED,
					    .sg_list = &sge, .num_sge = 1 };

		if (m->broken && import_resume(m) != 0)
			return RSMERR_CONN_ABORTED;
		if (import_drain(m) != 0) {
			m->broken = 1;
			continue;
		}
		memcpy(m->stage + RSM_STAGE_SIZE, &flags, sizeof(flags));
		if (dpdat_post_send(m->qp, &wr) != 0) {
			m->broken = 1;
			continue;
		}
		m->outstanding++;
		s = import_wait(m, &wc);
		if (s == DPDAT_WC_SUCCESS)
			return 0;
		m->broken = 1;	/* the next operation resumes the import */
		if (s < 0)	/* the exporter took no signal for 10 s */
			return RSMERR_TIMEOUT;
	}
	return RSMERR_CONN_ABORTED;
}

int
rsm_intr_signal_wait(void *memseg, int timeout)
{
	struct rsm_export *e;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	e = rsm_export_find(&rsm_ctlr0, memseg);
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	if (e == NULL)
		return RSMERR_BAD_SEG_HNDL;
	return rsm_export_signal_wait(e, timeout);
}

int
rsm_memseg_get_pollfd(void *memseg, struct pollfd *fd)
{
	struct rsm_export *e;
	int r;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	e = rsm_export_find(&rsm_ctlr0, memseg);
	r = e == NULL ? RSMERR_BAD_SEG_HNDL : fd == NULL ? RSMERR_BAD_ADDR :
	    rsm_export_pollfd(e, fd, 1);
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	return r;
}

int
rsm_memseg_release_pollfd(void *memseg)
{
	struct rsm_export *e;
	int r;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	e = rsm_export_find(&rsm_ctlr0, memseg);
	r = e == NULL ? RSMERR_BAD_SEG_HNDL : rsm_export_pollfd(e, NULL, 0);
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	return r;
}
