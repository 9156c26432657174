/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Endpoints (FI_EP_MSG: a dpdat QP connected by dpdat's CM) and passive
 * endpoints (a CM listener). Messages and RMA post native work requests;
 * the application's context is the wr_id.
 *
 * The QP is created at fi_enable (or at fi_connect / fi_accept when not
 * enabled yet): it needs the CQs, and a CQ not bound is replaced by one
 * of the endpoint's own whose completions nobody reads.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_random.h>

#include "df.h"

/* ports a passive endpoint takes when none is named (Linux's range) */
#define DF_EPHEMERAL_LO	32768
#define DF_EPHEMERAL_HI	61000

static inline struct df_ep *
ep_of(struct fid_ep *f)
{
	return container_of(f, struct df_ep, ep_fid);
}

/* ---- posting ---- */

static ssize_t
post_err(int ret)
{
	switch (ret) {
	case 0: return 0;
	case -ENOMEM: return -FI_EAGAIN;	/* queue full: progress, retry */
	case -EBUSY: return -FI_EOPBADSTATE;	/* not connected */
	case -EINVAL: return -FI_EINVAL;
	default: return -FI_EOTHER;
	}
}

/* iov[count] with their descriptors as SGEs. */
static int
to_sges(const struct iovec *iov, void **desc, size_t count,
	struct dpdat_sge *sg)
{
	if (count > DF_IOV_LIMIT || (count > 0 && (iov == NULL ||
						   desc == NULL)))
		return -FI_EINVAL;
	for (size_t i = 0; i < count; i++) {
		if (iov[i].iov_len > UINT32_MAX ||
		    df_desc_lkey(desc[i], &sg[i].lkey) != 0)
			return -FI_EINVAL;
		sg[i].addr = (uintptr_t)iov[i].iov_base;
		sg[i].length = (uint32_t)iov[i].iov_len;
	}
	return 0;
}

static bool
signaled(const struct df_ep *ep, uint64_t flags)
{
	return !(ep->send_flags & FI_SELECTIVE_COMPLETION) ||
	       (flags & FI_COMPLETION);
}

static ssize_t
post_send(struct df_ep *ep, enum dpdat_wr_opcode op, const struct iovec *iov,
	  void **desc, size_t count, uint64_t data, uint64_t addr,
	  uint64_t key, void *context, uint64_t flags)
{
	struct dpdat_sge sg[DF_IOV_LIMIT];
	struct dpdat_send_wr wr = {
		.wr_id = (uintptr_t)context, .opcode = op, .sg_list = sg,
		.num_sge = (uint32_t)count, .remote_addr = addr,
		.rkey = (uint32_t)key,
		.imm_data = htonl((uint32_t)data),
	};
	int ret;

	if (ep->qp == NULL)
		return -FI_EOPBADSTATE;
	if ((op == DPDAT_WR_SEND_IMM || op == DPDAT_WR_RDMA_WRITE_IMM) &&
	    !(ep->info->mode & FI_RX_CQ_DATA))
		return -FI_EOPNOTSUPP;	/* no remote CQ data offered */
	if (key > UINT32_MAX || (uint32_t)(data >> 32) != 0)
		return -FI_EINVAL;
	ret = to_sges(iov, desc, count, sg);
	if (ret != 0)
		return ret;
	if (signaled(ep, flags))
		wr.flags |= DPDAT_SEND_SIGNALED;
	if (flags & FI_FENCE)
		wr.flags |= DPDAT_SEND_FENCE;
	return post_err(dpdat_post_send(ep->qp, &wr));
}

static ssize_t
post_recv(struct df_ep *ep, const struct iovec *iov, void **desc,
	  size_t count, void *context)
{
	struct dpdat_sge sg[DF_IOV_LIMIT];
	struct dpdat_recv_wr wr = { .wr_id = (uintptr_t)context,
				    .sg_list = sg, .num_sge = (uint32_t)count };
	int ret;

	if (ep->qp == NULL)
		return -FI_EOPBADSTATE;
	ret = to_sges(iov, desc, count, sg);
	if (ret != 0)
		return ret;
	return post_err(dpdat_post_recv(ep->qp, &wr));
}

/* ---- messages ---- */

static ssize_t
ep_recv(struct fid_ep *f, void *buf, size_t len, void *desc,
	fi_addr_t src_addr, void *context)
{
	struct iovec iov = { buf, len };

	return post_recv(ep_of(f), &iov, &desc, 1, context);
}

static ssize_t
ep_recvv(struct fid_ep *f, const struct iovec *iov, void **desc,
	 size_t count, fi_addr_t src_addr, void *context)
{
	return post_recv(ep_of(f), iov, desc, count, context);
}

static ssize_t
ep_recvmsg(struct fid_ep *f, const struct fi_msg *msg, uint64_t flags)
{
	if (msg == NULL || (flags & ~(uint64_t)(FI_COMPLETION |
						FI_REMOTE_CQ_DATA)))
		return -FI_EINVAL;
	return post_recv(ep_of(f), msg->msg_iov, msg->desc, msg->iov_count,
			 msg->context);
}

static ssize_t
ep_send(struct fid_ep *f, const void *buf, size_t len, void *desc,
	fi_addr_t dest_addr, void *context)
{
	struct df_ep *ep = ep_of(f);
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return post_send(ep, DPDAT_WR_SEND, &iov, &desc, 1, 0, 0, 0, context,
			 ep->tx_op_flags);
}

static ssize_t
ep_sendv(struct fid_ep *f, const struct iovec *iov, void **desc,
	 size_t count, fi_addr_t dest_addr, void *context)
{
	struct df_ep *ep = ep_of(f);

	return post_send(ep, DPDAT_WR_SEND, iov, desc, count, 0, 0, 0,
			 context, ep->tx_op_flags);
}

static ssize_t
ep_sendmsg(struct fid_ep *f, const struct fi_msg *msg, uint64_t flags)
{
	if (msg == NULL || (flags & FI_INJECT))
		return -FI_EINVAL;	/* inject_size is 0 */
	return post_send(ep_of(f), flags & FI_REMOTE_CQ_DATA ?
			 DPDAT_WR_SEND_IMM : DPDAT_WR_SEND, msg->msg_iov,
			 msg->desc, msg->iov_count, msg->data, 0, 0,
			 msg->context, flags);
}

static ssize_t
ep_inject(struct fid_ep *f, const void *buf, size_t len, fi_addr_t dest)
{
	return -FI_ENOSYS;	/* inject_size is 0 */
}

static ssize_t
ep_senddata(struct fid_ep *f, const void *buf, size_t len, void *desc,
	    uint64_t data, fi_addr_t dest_addr, void *context)
{
	struct df_ep *ep = ep_of(f);
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return post_send(ep, DPDAT_WR_SEND_IMM, &iov, &desc, 1, data, 0, 0,
			 context, ep->tx_op_flags);
}

static ssize_t
ep_injectdata(struct fid_ep *f, const void *buf, size_t len, uint64_t data,
	      fi_addr_t dest)
{
	return -FI_ENOSYS;
}

static struct fi_ops_msg ep_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = ep_recv,
	.recvv = ep_recvv,
	.recvmsg = ep_recvmsg,
	.send = ep_send,
	.sendv = ep_sendv,
	.sendmsg = ep_sendmsg,
	.inject = ep_inject,
	.senddata = ep_senddata,
	.injectdata = ep_injectdata,
};

/* ---- RMA ---- */

static ssize_t
ep_read(struct fid_ep *f, void *buf, size_t len, void *desc,
	fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	struct df_ep *ep = ep_of(f);
	struct iovec iov = { buf, len };

	return post_send(ep, DPDAT_WR_RDMA_READ, &iov, &desc, 1, 0, addr, key,
			 context, ep->tx_op_flags);
}

static ssize_t
ep_readv(struct fid_ep *f, const struct iovec *iov, void **desc,
	 size_t count, fi_addr_t src_addr, uint64_t addr, uint64_t key,
	 void *context)
{
	struct df_ep *ep = ep_of(f);

	return post_send(ep, DPDAT_WR_RDMA_READ, iov, desc, count, 0, addr,
			 key, context, ep->tx_op_flags);
}

static ssize_t
ep_readmsg(struct fid_ep *f, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (msg == NULL || msg->rma_iov_count != 1 || msg->rma_iov == NULL)
		return -FI_EINVAL;	/* rma_iov_limit is 1 */
	return post_send(ep_of(f), DPDAT_WR_RDMA_READ, msg->msg_iov,
			 msg->desc, msg->iov_count, 0, msg->rma_iov[0].addr,
			 msg->rma_iov[0].key, msg->context, flags);
}

static ssize_t
ep_write(struct fid_ep *f, const void *buf, size_t len, void *desc,
	 fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	struct df_ep *ep = ep_of(f);
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return post_send(ep, DPDAT_WR_RDMA_WRITE, &iov, &desc, 1, 0, addr,
			 key, context, ep->tx_op_flags);
}

static ssize_t
ep_writev(struct fid_ep *f, const struct iovec *iov, void **desc,
	  size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
	  void *context)
{
	struct df_ep *ep = ep_of(f);

	return post_send(ep, DPDAT_WR_RDMA_WRITE, iov, desc, count, 0, addr,
			 key, context, ep->tx_op_flags);
}

static ssize_t
ep_writemsg(struct fid_ep *f, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (msg == NULL || msg->rma_iov_count != 1 || msg->rma_iov == NULL ||
	    (flags & FI_INJECT))
		return -FI_EINVAL;
	return post_send(ep_of(f), flags & FI_REMOTE_CQ_DATA ?
			 DPDAT_WR_RDMA_WRITE_IMM : DPDAT_WR_RDMA_WRITE,
			 msg->msg_iov, msg->desc, msg->iov_count, msg->data,
			 msg->rma_iov[0].addr, msg->rma_iov[0].key,
			 msg->context, flags);
}

static ssize_t
ep_inject_write(struct fid_ep *f, const void *buf, size_t len,
		fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	return -FI_ENOSYS;
}

static ssize_t
ep_writedata(struct fid_ep *f, const void *buf, size_t len, void *desc,
	     uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
	     void *context)
{
	struct df_ep *ep = ep_of(f);
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return post_send(ep, DPDAT_WR_RDMA_WRITE_IMM, &iov, &desc, 1, data,
			 addr, key, context, ep->tx_op_flags);
}

static ssize_t
ep_inject_writedata(struct fid_ep *f, const void *buf, size_t len,
		    uint64_t data, fi_addr_t dest_addr, uint64_t addr,
		    uint64_t key)
{
	return -FI_ENOSYS;
}

static struct fi_ops_rma ep_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = ep_read,
	.readv = ep_readv,
	.readmsg = ep_readmsg,
	.write = ep_write,
	.writev = ep_writev,
	.writemsg = ep_writemsg,
	.inject = ep_inject_write,
	.writedata = ep_writedata,
	.injectdata = ep_inject_writedata,
};

/* ---- the QP ---- */

static struct dpdat_cq *
own_cq(struct df_ep *ep, struct dpdat_cq **slot)
{
	if (*slot == NULL)
		*slot = dpdat_cq_create(ep->domain->dev->dev, DF_CQ_SIZE);
	return *slot;
}

/* The QP, once: fi_enable, or the first connect/accept. */
static int
ep_enable(struct df_ep *ep)
{
	struct dpdat_qp_conf qc = { .pz = ep->domain->pz };

	if (ep->qp != NULL)
		return 0;
	if (ep->state != DF_EP_IDLE)
		return -FI_EOPBADSTATE;
	qc.send_cq = ep->send_cq != NULL ? ep->send_cq->cq :
		     own_cq(ep, &ep->own_cq);
	qc.recv_cq = ep->recv_cq != NULL ? ep->recv_cq->cq :
		     own_cq(ep, &ep->own_cq);
	if (qc.send_cq == NULL || qc.recv_cq == NULL)
		return df_errno(rte_errno);
	qc.max_send_wr = ep->info->tx_attr != NULL &&
			 ep->info->tx_attr->size != 0 ?
			 (uint32_t)ep->info->tx_attr->size : DF_TX_SIZE;
	qc.max_recv_wr = ep->info->rx_attr != NULL &&
			 ep->info->rx_attr->size != 0 ?
			 (uint32_t)ep->info->rx_attr->size : DF_RX_SIZE;
	ep->qp = dpdat_qp_create(ep->domain->dev->dev, &qc);
	if (ep->qp == NULL) {
		DF_WARN(FI_LOG_EP_CTRL, "QP of %u/%u WRs: %s\n",
			qc.max_send_wr, qc.max_recv_wr,
			rte_strerror(rte_errno));
		return df_errno(rte_errno);
	}
	ep->state = DF_EP_ENABLED;
	return 0;
}

void
df_ep_cm_event(struct df_ep *ep, const struct dpdat_cm_event *ev)
{
	ep->state = ev->type == DPDAT_CM_ESTABLISHED ? DF_EP_CONNECTED :
						       DF_EP_SHUTDOWN;
}

/* ---- connection management ---- */

static int
ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct df_ep *ep = container_of(fid, struct df_ep, ep_fid.fid);
	const struct sockaddr_in *s = addr;

	if (s == NULL || addrlen < sizeof(*s) || s->sin_family != AF_INET ||
	    (s->sin_addr.s_addr != ep->domain->dev->ipv4 &&
	     s->sin_addr.s_addr != htonl(INADDR_ANY)))
		return -FI_EINVAL;
	ep->src.sin_port = s->sin_port;
	return 0;
}

static int
name_copy(const struct sockaddr_in *sin, void *addr, size_t *addrlen)
{
	size_t have;

	if (addrlen == NULL)
		return -FI_EINVAL;
	have = *addrlen;
	*addrlen = sizeof(*sin);
	if (addr == NULL || have < sizeof(*sin))
		return -FI_ETOOSMALL;
	memcpy(addr, sin, sizeof(*sin));
	return 0;
}

static int
ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct df_ep *ep = container_of(fid, struct df_ep, ep_fid.fid);

	return name_copy(&ep->src, addr, addrlen);
}

static int
ep_getpeer(struct fid_ep *f, void *addr, size_t *addrlen)
{
	struct df_ep *ep = ep_of(f);

	if (ep->dst.sin_family != AF_INET)
		return -FI_ENOTCONN;
	return name_copy(&ep->dst, addr, addrlen);
}

uint16_t
df_cm_frame(uint8_t *pd, const void *data, size_t len)
{
	pd[0] = (uint8_t)len;
	if (len > 0)
		memcpy(pd + 1, data, len);
	return (uint16_t)(len + 1);
}

static int
ep_connect(struct fid_ep *f, const void *addr, const void *param,
	   size_t paramlen)
{
	struct df_ep *ep = ep_of(f);
	const struct sockaddr_in *d = addr;
	uint8_t pd[DF_CM_DATA + 1];
	int ret;

	if (d == NULL)
		d = ep->info->dest_addr;
	if (d == NULL || d->sin_family != AF_INET || d->sin_port == 0 ||
	    paramlen > DF_CM_DATA || (paramlen > 0 && param == NULL))
		return -FI_EINVAL;
	if (ep->eq == NULL)
		return -FI_ENOEQ;
	pthread_mutex_lock(&ep->lock);
	ret = ep_enable(ep);
	if (ret == 0 && ep->state != DF_EP_ENABLED)
		ret = -FI_EOPBADSTATE;
	if (ret == 0) {
		pthread_mutex_lock(&ep->eq->lock);
		ep->conn = dpdat_cm_connect(ep->qp, d->sin_addr.s_addr,
					    ntohs(d->sin_port), pd,
					    df_cm_frame(pd, param, paramlen),
					    ep->eq->cmeq);
		if (ep->conn == NULL) {
			DF_WARN(FI_LOG_EP_CTRL, "connect: %s\n",
				rte_strerror(rte_errno));
			ret = df_errno(rte_errno);
		} else {
			ep->dst = *d;
			ep->state = DF_EP_CONNECTING;
		}
		pthread_mutex_unlock(&ep->eq->lock);
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

static int
ep_accept(struct fid_ep *f, const void *param, size_t paramlen)
{
	struct df_ep *ep = ep_of(f);
	struct df_connreq *cr = ep->connreq;
	uint8_t pd[DF_ACCEPT_DATA + 1];
	int ret;

	if (cr == NULL)
		return -FI_EINVAL;	/* not made for a request */
	if (paramlen > DF_ACCEPT_DATA ||
	    (paramlen > 0 && param == NULL))
		return -FI_EINVAL;
	if (ep->eq == NULL)
		return -FI_ENOEQ;
	pthread_mutex_lock(&ep->lock);
	ret = ep_enable(ep);
	if (ret == 0 && ep->state != DF_EP_ENABLED)
		ret = -FI_EOPBADSTATE;
	if (ret == 0) {
		pthread_mutex_lock(&ep->eq->lock);
		ret = dpdat_cm_accept(cr->conn, ep->qp, pd,
				      df_cm_frame(pd, param, paramlen),
				      ep->eq->cmeq);
		if (ret == 0) {
			ep->conn = cr->conn;
			ep->dst = cr->peer;
			ep->state = DF_EP_CONNECTING;
			ep->connreq = NULL;
			ep->info->handle = NULL;
			free(cr);	/* the application's handle is spent */
		}
		pthread_mutex_unlock(&ep->eq->lock);
		if (ret != 0)
			DF_WARN(FI_LOG_EP_CTRL, "accept: %s\n",
				strerror(-ret));
		ret = ret == 0 ? 0 : df_errno(-ret);
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

static int
ep_shutdown(struct fid_ep *f, uint64_t flags)
{
	struct df_ep *ep = ep_of(f);
	int ret = 0;

	pthread_mutex_lock(&ep->lock);
	if (ep->conn == NULL || (ep->state != DF_EP_CONNECTED &&
				 ep->state != DF_EP_CONNECTING))
		ret = -FI_ENOTCONN;
	else if (dpdat_cm_disconnect(ep->conn, NULL, 0) != 0)
		ret = -FI_ENOTCONN;
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

static int
no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

static int
no_reject(struct fid_pep *pep, fid_t handle, const void *param,
	  size_t paramlen)
{
	return -FI_ENOSYS;
}

static int
no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
	struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

static struct fi_ops_cm ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = ep_setname,
	.getname = ep_getname,
	.getpeer = ep_getpeer,
	.connect = ep_connect,
	.listen = no_listen,
	.accept = ep_accept,
	.reject = no_reject,
	.shutdown = ep_shutdown,
	.join = no_join,
};

/* ---- the endpoint object ---- */

static int
ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_CM_DATA_SIZE:
		if (optval == NULL || optlen == NULL ||
		    *optlen < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)optval = DF_CM_DATA;
		*optlen = sizeof(size_t);
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int
ep_setopt(fid_t fid, int level, int optname, const void *optval,
	  size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

static ssize_t
ep_cancel(fid_t fid, void *context)
{
	return -FI_ENOENT;	/* posted work is never taken back */
}

static int
no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
	  struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

static int
no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
	  struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

static struct fi_ops_ep ep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = no_size_left,
	.tx_size_left = no_size_left,
};

static int
ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct df_ep *ep = container_of(fid, struct df_ep, ep_fid.fid);
	struct df_cq *cq;
	struct df_eq *eq;

	if (bfid == NULL)
		return -FI_EINVAL;
	if (ep->qp != NULL)
		return -FI_EOPBADSTATE;	/* bind before enabling */
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		cq = container_of(bfid, struct df_cq, cq_fid.fid);
		if (cq->domain != ep->domain || (flags & ~(uint64_t)
		    (FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
		    !(flags & (FI_TRANSMIT | FI_RECV)))
			return -FI_EINVAL;
		if ((flags & FI_TRANSMIT) && ep->send_cq != NULL)
			return -FI_EINVAL;
		if ((flags & FI_RECV) && ep->recv_cq != NULL)
			return -FI_EINVAL;
		if (flags & FI_TRANSMIT) {
			ep->send_cq = cq;
			ep->send_flags = flags;
			__atomic_add_fetch(&cq->refs, 1, __ATOMIC_RELEASE);
		}
		if (flags & FI_RECV) {
			ep->recv_cq = cq;
			ep->recv_flags = flags;
			__atomic_add_fetch(&cq->refs, 1, __ATOMIC_RELEASE);
		}
		return 0;
	case FI_CLASS_EQ:
		eq = container_of(bfid, struct df_eq, eq_fid.fid);
		if (ep->eq != NULL || flags != 0)
			return -FI_EINVAL;
		pthread_mutex_lock(&eq->lock);
		ep->eq = eq;
		eq->refs++;
		LIST_INSERT_HEAD(&eq->eps, ep, eq_next);
		pthread_mutex_unlock(&eq->lock);
		return 0;
	default:
		return -FI_ENOSYS;	/* counters, AVs, shared contexts */
	}
}

static int
ep_control(struct fid *fid, int command, void *arg)
{
	struct df_ep *ep = container_of(fid, struct df_ep, ep_fid.fid);
	struct fi_alias *alias;
	int ret;

	switch (command) {
	case FI_ENABLE:
		pthread_mutex_lock(&ep->lock);
		ret = ep_enable(ep);
		pthread_mutex_unlock(&ep->lock);
		return ret;
	case FI_GETOPSFLAG:
		if (arg == NULL)
			return -FI_EINVAL;
		*(uint64_t *)arg = (*(uint64_t *)arg & FI_TRANSMIT) ?
				   ep->tx_op_flags : ep->rx_op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (arg == NULL)
			return -FI_EINVAL;
		if (*(uint64_t *)arg & FI_TRANSMIT)
			ep->tx_op_flags = *(uint64_t *)arg & ~(uint64_t)
					  (FI_TRANSMIT | FI_RECV);
		else
			ep->rx_op_flags = *(uint64_t *)arg & ~(uint64_t)
					  (FI_TRANSMIT | FI_RECV);
		return 0;
	case FI_ALIAS:
		alias = arg;
		(void)alias;
		return -FI_ENOSYS;
	default:
		return -FI_ENOSYS;
	}
}

static int
ep_close(struct fid *fid)
{
	struct df_ep *ep = container_of(fid, struct df_ep, ep_fid.fid);

	if (ep->eq != NULL)
		pthread_mutex_lock(&ep->eq->lock);
	if (ep->conn != NULL) {
		/* A connection is freed only after its last event is taken
		 * (the CM queues it, the EQ converts it under the lock held
		 * here): freed before, its queued event would name freed
		 * memory, or a new connection at the same address. Ended
		 * already: free it; else end it, and its last event frees
		 * it (eq.c, convert(): no endpoint has it any more). */
		if (ep->state == DF_EP_SHUTDOWN)
			dpdat_cm_conn_free(ep->conn);
		else
			dpdat_cm_disconnect(ep->conn, NULL, 0);
		ep->conn = NULL;
	}
	if (ep->connreq != NULL) {	/* never accepted: rejected */
		struct df_connreq *cr = ep->connreq;

		if (cr->conn != NULL) {
			dpdat_cm_reject(cr->conn, NULL, 0);
			dpdat_cm_conn_free(cr->conn);
			cr->conn = NULL;	/* a tombstone: df.h */
		}
		cr->ep = NULL;
		ep->info->handle = NULL;
	}
	if (ep->eq != NULL) {
		LIST_REMOVE(ep, eq_next);
		df_eq_forget(ep->eq, &ep->ep_fid.fid);
		ep->eq->refs--;
		pthread_mutex_unlock(&ep->eq->lock);
	}
	if (ep->qp != NULL)
		dpdat_qp_free(ep->qp);
	if (ep->own_cq != NULL)
		dpdat_cq_free(ep->own_cq);
	if (ep->send_cq != NULL)
		__atomic_sub_fetch(&ep->send_cq->refs, 1, __ATOMIC_RELEASE);
	if (ep->recv_cq != NULL)
		__atomic_sub_fetch(&ep->recv_cq->refs, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&ep->domain->lock);
	ep->domain->refs--;
	pthread_mutex_unlock(&ep->domain->lock);
	fi_freeinfo(ep->info);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return 0;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = df_no_ops_open,
};

int
df_ep_open(struct fid_domain *domain, struct fi_info *info,
	   struct fid_ep **ep_fid, void *context)
{
	struct df_domain *dom = container_of(domain, struct df_domain,
					     domain_fid);
	struct df_ep *ep;

	if (info == NULL || ep_fid == NULL || (info->ep_attr != NULL &&
	    info->ep_attr->type != FI_EP_MSG &&
	    info->ep_attr->type != FI_EP_UNSPEC))
		return -FI_EINVAL;
	if (info->handle != NULL && info->handle->fclass != FI_CLASS_CONNREQ)
		return -FI_EINVAL;
	if ((info->tx_attr != NULL && (info->tx_attr->size > DF_TX_SIZE ||
				       info->tx_attr->inject_size > 0)) ||
	    (info->rx_attr != NULL && info->rx_attr->size > DF_RX_SIZE))
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (ep->info == NULL) {
		free(ep);
		return -FI_ENOMEM;
	}
	if (info->handle != NULL) {
		ep->connreq = container_of(info->handle, struct df_connreq,
					   fid);
		if (ep->connreq->conn == NULL) {	/* answered already */
			fi_freeinfo(ep->info);
			free(ep);
			return -FI_EINVAL;
		}
		ep->connreq->ep = ep;
	}
	pthread_mutex_init(&ep->lock, NULL);
	ep->domain = dom;
	ep->src.sin_family = AF_INET;
	ep->src.sin_addr.s_addr = dom->dev->ipv4;
	if (info->src_addr != NULL && info->src_addrlen >= sizeof(ep->src))
		ep->src.sin_port =
			((struct sockaddr_in *)info->src_addr)->sin_port;
	ep->tx_op_flags = info->tx_attr != NULL ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr != NULL ? info->rx_attr->op_flags : 0;
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &ep_fi_ops;
	ep->ep_fid.ops = &ep_ep_ops;
	ep->ep_fid.cm = &ep_cm_ops;
	ep->ep_fid.msg = &ep_msg_ops;
	ep->ep_fid.rma = &ep_rma_ops;
	ep->ep_fid.tagged = &df_no_tagged_ops;
	ep->ep_fid.atomic = &df_no_atomic_ops;
	ep->ep_fid.collective = &df_no_collective_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*ep_fid = &ep->ep_fid;
	return 0;
}

/* ---- passive endpoints ---- */

static int
pep_listen(struct fid_pep *f)
{
	struct df_pep *pep = container_of(f, struct df_pep, pep_fid);

	if (pep->eq == NULL)
		return -FI_ENOEQ;
	if (pep->listener != NULL)
		return -FI_EOPBADSTATE;
	pthread_mutex_lock(&pep->eq->lock);
	if (pep->src.sin_port != 0) {
		pep->listener = dpdat_cm_listen(pep->fabric->dev->dev,
						ntohs(pep->src.sin_port),
						pep->eq->cmeq);
	} else {
		/* no port named: one of the ephemeral range that is free
		 * (fi_getname tells which) */
		uint16_t port = (uint16_t)(DF_EPHEMERAL_LO +
			rte_rand() % (DF_EPHEMERAL_HI - DF_EPHEMERAL_LO));

		for (int i = 0; i < 64 && pep->listener == NULL; i++) {
			pep->listener = dpdat_cm_listen(pep->fabric->dev->dev,
							port, pep->eq->cmeq);
			if (pep->listener == NULL && rte_errno != EADDRINUSE)
				break;
			if (pep->listener != NULL)
				pep->src.sin_port = htons(port);
			port = port + 1 < DF_EPHEMERAL_HI ? port + 1 :
							      DF_EPHEMERAL_LO;
		}
	}
	pthread_mutex_unlock(&pep->eq->lock);
	return pep->listener != NULL ? 0 : df_errno(rte_errno);
}

static int
pep_reject(struct fid_pep *f, fid_t handle, const void *param,
	   size_t paramlen)
{
	struct df_connreq *cr;
	uint8_t pd[DF_REJECT_DATA + 1];
	int ret;

	if (handle == NULL || handle->fclass != FI_CLASS_CONNREQ ||
	    paramlen > DF_REJECT_DATA || (paramlen > 0 && param == NULL))
		return -FI_EINVAL;
	cr = container_of(handle, struct df_connreq, fid);
	if (cr->ep != NULL) {
		/* an endpoint opened for it: it no longer has a request */
		cr->ep->connreq = NULL;
		cr->ep->info->handle = NULL;
	}
	if (cr->conn == NULL) {	/* its endpoint closed: rejected then */
		free(cr);
		return 0;
	}
	ret = dpdat_cm_reject(cr->conn, pd, df_cm_frame(pd, param, paramlen));
	dpdat_cm_conn_free(cr->conn);
	free(cr);
	return ret == 0 ? 0 : df_errno(-ret);
}

static int
pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct df_pep *pep = container_of(fid, struct df_pep, pep_fid.fid);
	const struct sockaddr_in *s = addr;

	if (s == NULL || addrlen < sizeof(*s) || s->sin_family != AF_INET ||
	    (s->sin_addr.s_addr != pep->fabric->dev->ipv4 &&
	     s->sin_addr.s_addr != htonl(INADDR_ANY)))
		return -FI_EINVAL;
	if (pep->listener != NULL)
		return -FI_EOPBADSTATE;
	pep->src.sin_port = s->sin_port;
	return 0;
}

static int
pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct df_pep *pep = container_of(fid, struct df_pep, pep_fid.fid);

	return name_copy(&pep->src, addr, addrlen);
}

static int
no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

static int
no_connect(struct fid_ep *ep, const void *addr, const void *param,
	   size_t paramlen)
{
	return -FI_ENOSYS;
}

static int
no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

static int
no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

static struct fi_ops_cm pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = pep_setname,
	.getname = pep_getname,
	.getpeer = no_getpeer,
	.connect = no_connect,
	.listen = pep_listen,
	.accept = no_accept,
	.reject = pep_reject,
	.shutdown = no_shutdown,
	.join = no_join,
};

static int
pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct df_pep *pep = container_of(fid, struct df_pep, pep_fid.fid);
	struct df_eq *eq;

	if (bfid == NULL || bfid->fclass != FI_CLASS_EQ || flags != 0)
		return -FI_EINVAL;
	if (pep->eq != NULL)
		return -FI_EINVAL;
	eq = container_of(bfid, struct df_eq, eq_fid.fid);
	pthread_mutex_lock(&eq->lock);
	pep->eq = eq;
	eq->refs++;
	LIST_INSERT_HEAD(&eq->peps, pep, eq_next);
	pthread_mutex_unlock(&eq->lock);
	return 0;
}

static int
pep_close(struct fid *fid)
{
	struct df_pep *pep = container_of(fid, struct df_pep, pep_fid.fid);

	if (pep->eq != NULL)
		pthread_mutex_lock(&pep->eq->lock);
	if (pep->listener != NULL)
		dpdat_cm_listen_free(pep->listener);
	if (pep->eq != NULL) {
		/* the requests it has not handed out are answered: a
		 * requester would otherwise wait on it for good */
		df_eq_drop_pep(pep->eq, pep);
		LIST_REMOVE(pep, eq_next);
		pep->eq->refs--;
		pthread_mutex_unlock(&pep->eq->lock);
	}
	df_fabric_use(pep->fabric, -1);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static struct fi_ops pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = pep_close,
	.bind = pep_bind,
	.control = df_no_control,
	.ops_open = df_no_ops_open,
};

static struct fi_ops_ep pep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = no_size_left,
	.tx_size_left = no_size_left,
};

int
df_pep_open(struct fid_fabric *fabric, struct fi_info *info,
	    struct fid_pep **pep_fid, void *context)
{
	struct df_fabric *f = container_of(fabric, struct df_fabric,
					   fabric_fid);
	struct df_pep *pep;

	if (info == NULL || pep_fid == NULL)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (pep == NULL)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	if (pep->info == NULL) {
		free(pep);
		return -FI_ENOMEM;
	}
	pep->fabric = f;
	df_fabric_use(f, 1);
	pep->src.sin_family = AF_INET;
	pep->src.sin_addr.s_addr = f->dev->ipv4;
	if (info->src_addr != NULL && info->src_addrlen >= sizeof(pep->src))
		pep->src.sin_port =
			((struct sockaddr_in *)info->src_addr)->sin_port;
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &pep_fi_ops;
	pep->pep_fid.ops = &pep_ep_ops;
	pep->pep_fid.cm = &pep_cm_ops;
	*pep_fid = &pep->pep_fid;
	return 0;
}
