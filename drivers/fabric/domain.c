/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The domain (the process's device, with a protection zone of its own)
 * and memory registration on dpdat LMRs.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "df.h"

/* ---- memory regions ---- */

static int
mr_close(struct fid *fid)
{
	struct df_mr *mr = container_of(fid, struct df_mr, mr_fid.fid);
	int ret = dpdat_lmr_free(mr->lmr);

	if (ret != 0)	/* RMRs bound to it: none are, from here */
		return df_errno(-ret);
	pthread_mutex_lock(&mr->domain->lock);
	mr->domain->refs--;
	pthread_mutex_unlock(&mr->domain->lock);
	free(mr);
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = df_no_bind,
	.control = df_no_control,
	.ops_open = df_no_ops_open,
};

/* FI_REMOTE_* access as dpdat privileges; local access always (the
 * descriptor is what local operations use). */
static uint32_t
mr_privileges(uint64_t access)
{
	uint32_t p = DPDAT_MEM_PRIV_LOCAL_READ | DPDAT_MEM_PRIV_LOCAL_WRITE;

	if (access & FI_REMOTE_READ)
		p |= DPDAT_MEM_PRIV_REMOTE_READ;
	if (access & FI_REMOTE_WRITE)
		p |= DPDAT_MEM_PRIV_REMOTE_WRITE;
	return p;
}

static int
mr_reg_one(struct df_domain *dom, const void *buf, size_t len,
	   uint64_t access, uint64_t offset, uint64_t flags,
	   struct fid_mr **mr_fid, void *context)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_info li;
	struct df_mr *mr;

	if (mr_fid == NULL || (buf == NULL && len != 0))
		return -FI_EINVAL;
	/* FI_MR_VIRT_ADDR: keys name virtual addresses, not offsets; no
	 * events on remote access (FI_RMA_EVENT is not offered) */
	if (offset != 0 || (flags & FI_RMA_EVENT)) {
		DF_WARN(FI_LOG_MR, "offset %llu or flags 0x%llx not "
			"supported\n", (unsigned long long)offset,
			(unsigned long long)flags);
		return -FI_EINVAL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return -FI_ENOMEM;
	/* a zero-length region still gets keys (a zero-length RMA) */
	d.virt.addr = (void *)(uintptr_t)buf;
	d.virt.length = len;
	mr->lmr = dpdat_lmr_create(dom->pz, &d, mr_privileges(access));
	if (mr->lmr == NULL) {
		int err = rte_errno;

		free(mr);
		DF_WARN(FI_LOG_MR, "registering %zu bytes at %p: %s\n", len,
			buf, rte_strerror(err));
		return df_errno(err);
	}
	dpdat_lmr_query(mr->lmr, &li);
	mr->domain = dom;
	mr->lkey = li.lmr_context;
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = context;
	mr->mr_fid.fid.ops = &mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = li.rmr_context != 0 ? li.rmr_context :
					       li.lmr_context;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*mr_fid = &mr->mr_fid;
	return 0;
}

static int
mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
       uint64_t offset, uint64_t requested_key, uint64_t flags,
       struct fid_mr **mr, void *context)
{
	struct df_domain *dom = container_of(fid, struct df_domain,
					     domain_fid.fid);

	/* FI_MR_PROV_KEY: the key is ours, requested_key is ignored */
	(void)requested_key;
	return mr_reg_one(dom, buf, len, access, offset, flags, mr, context);
}

static int
mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
	uint64_t access, uint64_t offset, uint64_t requested_key,
	uint64_t flags, struct fid_mr **mr, void *context)
{
	if (count != 1 || iov == NULL)	/* mr_iov_limit is 1 */
		return -FI_EINVAL;
	return mr_reg(fid, iov[0].iov_base, iov[0].iov_len, access, offset,
		      requested_key, flags, mr, context);
}

static int
mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
	   struct fid_mr **mr)
{
	if (attr == NULL)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_EOPNOTSUPP;
	return mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
		       attr->offset, attr->requested_key, flags, mr,
		       attr->context);
}

static struct fi_ops_mr domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

/* ---- the domain ---- */

static int
domain_close(struct fid *fid)
{
	struct df_domain *dom = container_of(fid, struct df_domain,
					     domain_fid.fid);

	pthread_mutex_lock(&dom->lock);
	if (dom->refs != 0) {
		pthread_mutex_unlock(&dom->lock);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&dom->lock);
	if (dpdat_pz_free(dom->pz) != 0)
		return -FI_EBUSY;
	df_fabric_use(dom->fabric, -1);
	pthread_mutex_destroy(&dom->lock);
	free(dom);
	return 0;
}

static int
no_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
	   struct fid_av **av, void *context)
{
	return -FI_ENOSYS;	/* FI_EP_MSG only: no address vectors */
}

static int
no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
	       struct fid_ep **sep, void *context)
{
	return -FI_ENOSYS;
}

static int
no_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
	     struct fid_cntr **cntr, void *context)
{
	return -FI_ENOSYS;
}

static int
no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
	     struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

static int
no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
	   struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

static int
no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
	   struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

static int
no_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	return -FI_EOPNOTSUPP;
}

static int
no_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
		    struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_EOPNOTSUPP;
}

static int
domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags != 0)
		return -FI_EINVAL;
	return df_ep_open(domain, info, ep, context);
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = df_no_bind,
	.control = df_no_control,
	.ops_open = df_no_ops_open,
};

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = no_av_open,
	.cq_open = df_cq_open,
	.endpoint = df_ep_open,
	.scalable_ep = no_scalable_ep,
	.cntr_open = no_cntr_open,
	.poll_open = no_poll_open,
	.stx_ctx = no_stx_ctx,
	.srx_ctx = no_srx_ctx,
	.query_atomic = no_query_atomic,
	.query_collective = no_query_collective,
	.endpoint2 = domain_endpoint2,
};

int
df_domain_open(struct fid_fabric *fabric, struct fi_info *info,
	       struct fid_domain **domain, void *context)
{
	struct df_fabric *f = container_of(fabric, struct df_fabric,
					   fabric_fid);
	struct df_domain *dom;

	if (info == NULL || domain == NULL)
		return -FI_EINVAL;
	if (info->domain_attr != NULL && info->domain_attr->name != NULL &&
	    strcmp(info->domain_attr->name, f->dev->name) != 0)
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (dom == NULL)
		return -FI_ENOMEM;
	dom->pz = dpdat_pz_create(dpdat_dev_domain(f->dev->dev));
	if (dom->pz == NULL) {
		free(dom);
		return df_errno(rte_errno);
	}
	pthread_mutex_init(&dom->lock, NULL);
	dom->fabric = f;
	df_fabric_use(f, 1);
	dom->dev = f->dev;
	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &domain_fi_ops;
	dom->domain_fid.ops = &domain_ops;
	dom->domain_fid.mr = &domain_mr_ops;
	*domain = &dom->domain_fid;
	return 0;
}
