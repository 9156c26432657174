/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * fi_getinfo and the fabric: what the provider offers, matched against
 * the application's hints, and the fabric object (domains, passive
 * endpoints, event queues).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "df.h"

#define DF_MSG_ORDER	(FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | \
			 FI_ORDER_WAW | FI_ORDER_WAS | FI_ORDER_SAW | \
			 FI_ORDER_SAS)

/* node:service as an IPv4 address (numeric, or a name the resolver
 * knows) and a port; either may be NULL. */
static int
resolve(const char *node, const char *service, struct sockaddr_in *sin)
{
	struct addrinfo hints = { .ai_family = AF_INET };
	struct addrinfo *res = NULL;
	char *end;
	unsigned long port = 0;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if (service != NULL) {
		errno = 0;
		port = strtoul(service, &end, 10);
		if (errno != 0 || *end != '\0' || end == service ||
		    port > 0xffff) {
			DF_WARN(FI_LOG_CORE, "service \"%s\": not a port "
				"number (0..65535)\n", service);
			return -FI_EINVAL;
		}
		sin->sin_port = htons((uint16_t)port);
	}
	if (node == NULL)
		return 0;
	if (getaddrinfo(node, NULL, &hints, &res) != 0 || res == NULL) {
		DF_WARN(FI_LOG_CORE, "node \"%s\": no IPv4 address\n", node);
		return -FI_ENODATA;
	}
	sin->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

static void *
sin_dup(const struct sockaddr_in *sin)
{
	struct sockaddr_in *p = malloc(sizeof(*p));

	if (p != NULL)
		*p = *sin;
	return p;
}

/* The application's MR modes as bits: FI_MR_BASIC (and, before API 1.5,
 * FI_MR_UNSPEC), with FI_LOCAL_MR in mode, mean the basic ones. */
static uint64_t
hint_mr_mode(uint32_t version, const struct fi_info *hints)
{
	uint64_t m = hints->domain_attr->mr_mode;

	if (m == FI_MR_BASIC ||
	    (m == FI_MR_UNSPEC && FI_VERSION_LT(version, FI_VERSION(1, 5))))
		m = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
		    ((hints->mode & FI_LOCAL_MR) ? FI_MR_LOCAL : 0);
	return m;
}

/* The MR modes the provider needs for caps: local descriptors always;
 * provider keys and virtual addresses where a peer names our memory
 * (RMA targets, as libfabric's own rule has it). */
static uint64_t
needed_mr_mode(uint64_t caps)
{
	return caps == 0 || (caps & (FI_RMA | FI_REMOTE_READ |
				     FI_REMOTE_WRITE | FI_ATOMIC)) ?
	       DF_MR_MODE : FI_MR_LOCAL;
}

/* Whether the hints can be met; why not, logged at INFO. */
static bool
hints_ok(uint32_t version, const struct fi_info *hints,
	 const struct df_dev *d)
{
	const struct fi_ep_attr *ea = hints->ep_attr;
	const struct fi_domain_attr *da = hints->domain_attr;
	const struct fi_tx_attr *ta = hints->tx_attr;
	const struct fi_rx_attr *ra = hints->rx_attr;

	if (hints->caps & ~(uint64_t)DF_CAPS) {
		DF_INFO(FI_LOG_CORE, "caps 0x%llx not offered\n",
			(unsigned long long)(hints->caps & ~(uint64_t)DF_CAPS));
		return false;
	}
	if (ea != NULL && ea->type != FI_EP_UNSPEC && ea->type != FI_EP_MSG) {
		DF_INFO(FI_LOG_CORE, "endpoint type %d: FI_EP_MSG only\n",
			ea->type);
		return false;
	}
	if (ea != NULL && ((ea->protocol != FI_PROTO_UNSPEC &&
			    ea->protocol != FI_PROTO_RDMA_CM_IB_RC) ||
			   ea->max_msg_size > DF_MAX_MSG ||
			   ea->tx_ctx_cnt > 1 || ea->rx_ctx_cnt > 1 ||
			   ea->auth_key_size != 0))
		return false;
	if (hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_SOCKADDR_IN &&
	    hints->addr_format != FI_SOCKADDR)
		return false;
	if (hints->fabric_attr != NULL && hints->fabric_attr->name != NULL &&
	    strcmp(hints->fabric_attr->name, DF_FABRIC_NAME) != 0)
		return false;
	if (da != NULL) {
		if (da->name != NULL && strcmp(da->name, d->name) != 0)
			return false;
		const uint64_t need = needed_mr_mode(hints->caps);

		if ((hint_mr_mode(version, hints) & need) != need) {
			DF_INFO(FI_LOG_CORE, "mr_mode 0x%llx lacks what dpdat "
				"needs (0x%llx)\n",
				(unsigned long long)hint_mr_mode(version, hints),
				(unsigned long long)need);
			return false;
		}
		if (da->cq_data_size > sizeof(uint32_t) ||
		    da->mr_key_size > sizeof(uint32_t))
			return false;
		if (!d->auto_progress &&
		    (da->control_progress == FI_PROGRESS_AUTO ||
		     da->data_progress == FI_PROGRESS_AUTO)) {
			DF_INFO(FI_LOG_CORE, "automatic progress asked: "
				"FI_DPDAT_PROGRESS=auto gives it\n");
			return false;
		}
		if (da->av_type != FI_AV_UNSPEC && da->av_type != FI_AV_MAP &&
		    da->av_type != FI_AV_TABLE)
			return false;
	}
	if ((ta != NULL && (ta->msg_order & ~(uint64_t)DF_MSG_ORDER)) ||
	    (ra != NULL && (ra->msg_order & ~(uint64_t)DF_MSG_ORDER)))
		return false;
	if (ta != NULL && (ta->size > DF_TX_SIZE || ta->iov_limit >
			   DF_IOV_LIMIT || ta->rma_iov_limit > 1 ||
			   ta->inject_size > 0 || (ta->caps & ~(uint64_t)DF_CAPS)))
		return false;
	if (ra != NULL && (ra->size > DF_RX_SIZE || ra->iov_limit >
			   DF_IOV_LIMIT || ra->total_buffered_recv > 0 ||
			   (ra->caps & ~(uint64_t)DF_CAPS)))
		return false;
	return true;
}

/* The one fi_info of the device; caps as asked (all when not asked). */
static struct fi_info *
info_new(const struct fi_info *hints, const struct df_dev *d,
	 const struct sockaddr_in *src, const struct sockaddr_in *dst)
{
	struct fi_info *fi = fi_allocinfo();
	uint64_t caps = DF_CAPS;

	if (fi == NULL)
		return NULL;
	if (hints != NULL && hints->caps != 0) {
		caps = hints->caps;
		/* the primary caps asked imply their secondary ones */
		if (caps & FI_MSG && !(caps & (FI_SEND | FI_RECV)))
			caps |= FI_SEND | FI_RECV;
		if (caps & FI_RMA && !(caps & (FI_READ | FI_WRITE |
					       FI_REMOTE_READ |
					       FI_REMOTE_WRITE)))
			caps |= FI_READ | FI_WRITE | FI_REMOTE_READ |
				FI_REMOTE_WRITE;
		caps |= FI_LOCAL_COMM | FI_REMOTE_COMM;
	}
	fi->caps = caps;
	/* remote CQ data takes a posted receive: only for those that agree */
	fi->mode = hints == NULL || (hints->mode & FI_RX_CQ_DATA) ?
		   DF_MODE : 0;
	fi->addr_format = FI_SOCKADDR_IN;
	fi->src_addrlen = sizeof(*src);
	fi->src_addr = sin_dup(src);
	if (dst != NULL) {
		fi->dest_addrlen = sizeof(*dst);
		fi->dest_addr = sin_dup(dst);
	}

	fi->tx_attr->caps = caps;
	fi->tx_attr->mode = fi->mode;
	fi->tx_attr->msg_order = DF_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_STRICT;
	fi->tx_attr->inject_size = 0;
	/* queue depths asked for (smaller than ours: hints_ok) */
	fi->tx_attr->size = hints != NULL && hints->tx_attr != NULL &&
			    hints->tx_attr->size != 0 ?
			    hints->tx_attr->size : DF_TX_SIZE;
	fi->tx_attr->iov_limit = DF_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = 1;

	fi->rx_attr->caps = caps;
	fi->rx_attr->mode = fi->mode;
	fi->rx_attr->msg_order = DF_MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_STRICT | FI_ORDER_DATA;
	fi->rx_attr->size = hints != NULL && hints->rx_attr != NULL &&
			    hints->rx_attr->size != 0 ?
			    hints->rx_attr->size : DF_RX_SIZE;
	fi->rx_attr->iov_limit = DF_IOV_LIMIT;

	fi->ep_attr->type = FI_EP_MSG;
	fi->ep_attr->protocol = FI_PROTO_RDMA_CM_IB_RC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = DF_MAX_MSG;
	fi->ep_attr->max_order_raw_size = DF_MAX_MSG;
	fi->ep_attr->max_order_war_size = 0;
	fi->ep_attr->max_order_waw_size = DF_MAX_MSG;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->name = strdup(d->name);
	fi->domain_attr->threading = hints != NULL &&
		hints->domain_attr != NULL &&
		hints->domain_attr->threading != FI_THREAD_UNSPEC ?
		hints->domain_attr->threading : FI_THREAD_SAFE;
	fi->domain_attr->control_progress = d->auto_progress ?
					    FI_PROGRESS_AUTO :
					    FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = fi->domain_attr->control_progress;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = FI_AV_UNSPEC;
	fi->domain_attr->mr_mode = needed_mr_mode(caps);
	fi->domain_attr->mr_key_size = sizeof(uint32_t);
	fi->domain_attr->cq_data_size = fi->mode & FI_RX_CQ_DATA ?
					sizeof(uint32_t) : 0;
	fi->domain_attr->cq_cnt = DF_MAX_EP;
	fi->domain_attr->ep_cnt = DF_MAX_EP;
	fi->domain_attr->tx_ctx_cnt = DF_MAX_EP;
	fi->domain_attr->rx_ctx_cnt = DF_MAX_EP;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	fi->domain_attr->mr_cnt = 1u << 20;

	fi->fabric_attr->name = strdup(DF_FABRIC_NAME);
	fi->fabric_attr->prov_version = DF_VERSION;
	fi->fabric_attr->api_version = DF_API_VERSION;
	if (fi->src_addr == NULL || fi->domain_attr->name == NULL ||
	    fi->fabric_attr->name == NULL || (dst != NULL &&
					      fi->dest_addr == NULL)) {
		fi_freeinfo(fi);
		return NULL;
	}
	return fi;
}

int
df_getinfo(uint32_t version, const char *node, const char *service,
	   uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
	const struct df_dev *d;
	struct sockaddr_in src, dst, *dp = NULL;
	int ret;

	*info = NULL;
	if (hints != NULL && hints->ep_attr != NULL &&
	    hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != FI_EP_MSG)
		return -FI_ENODATA;	/* before opening anything */
	d = df_dev_get();
	if (d == NULL)
		return -FI_ENODATA;
	if (hints != NULL && !hints_ok(version, hints, d))
		return -FI_ENODATA;
	memset(&src, 0, sizeof(src));
	src.sin_family = AF_INET;
	src.sin_addr.s_addr = d->ipv4;
	if (flags & FI_SOURCE) {
		/* node:service name our own address */
		ret = resolve(node, service, &dst);
		if (ret != 0)
			return ret;
		if (node != NULL && dst.sin_addr.s_addr != d->ipv4 &&
		    dst.sin_addr.s_addr != htonl(INADDR_ANY))
			return -FI_ENODATA;
		src.sin_port = dst.sin_port;
	} else if (node != NULL || service != NULL) {
		ret = resolve(node, service, &dst);
		if (ret != 0)
			return ret;
		if (node == NULL)	/* a port of our own address */
			dst.sin_addr.s_addr = d->ipv4;
		dp = &dst;
	}
	if (hints != NULL && hints->src_addr != NULL) {
		const struct sockaddr_in *s = hints->src_addr;

		if (hints->src_addrlen < sizeof(*s) ||
		    s->sin_family != AF_INET)
			return -FI_ENODATA;
		if (s->sin_addr.s_addr != d->ipv4 &&
		    s->sin_addr.s_addr != htonl(INADDR_ANY))
			return -FI_ENODATA;
		src.sin_port = s->sin_port;
	}
	if (hints != NULL && hints->dest_addr != NULL) {
		if (hints->dest_addrlen < sizeof(dst) ||
		    ((const struct sockaddr_in *)hints->dest_addr)->sin_family
		    != AF_INET)
			return -FI_ENODATA;
		dst = *(const struct sockaddr_in *)hints->dest_addr;
		dp = &dst;
	}
	*info = info_new(hints, d, &src, dp);
	return *info != NULL ? 0 : -FI_ENOMEM;
}

/* ---- the fabric ---- */

static int
fabric_close(struct fid *fid)
{
	struct df_fabric *f = container_of(fid, struct df_fabric,
					   fabric_fid.fid);

	if (__atomic_load_n(&f->refs, __ATOMIC_ACQUIRE) != 0)
		return -FI_EBUSY;
	free(f);
	return 0;
}

/* Whether the application may block on the objects' wait objects: the
 * engine thread makes progress, so only what is ready already says no. */
static int
fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	int ret;

	if (count > 0 && fids == NULL)
		return -FI_EINVAL;
	for (int i = 0; i < count; i++) {
		switch (fids[i]->fclass) {
		case FI_CLASS_CQ:
			ret = df_cq_trywait(fids[i]);
			break;
		case FI_CLASS_EQ:
			ret = df_eq_trywait(fids[i]);
			break;
		default:
			return -FI_EINVAL;
		}
		if (ret != 0)
			return ret;
	}
	return 0;
}

static int
fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		 struct fid_wait **waitset)
{
	(void)fabric;
	(void)attr;
	(void)waitset;
	return -FI_ENOSYS;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = df_no_bind,
	.control = df_no_control,
	.ops_open = df_no_ops_open,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = df_domain_open,
	.passive_ep = df_pep_open,
	.eq_open = df_eq_open,
	.wait_open = fabric_wait_open,
	.trywait = fabric_trywait,
};

int
df_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
	       void *context)
{
	struct df_fabric *f;
	const struct df_dev *d;

	if (attr == NULL || fabric == NULL)
		return -FI_EINVAL;
	if (attr->name != NULL && strcmp(attr->name, DF_FABRIC_NAME) != 0)
		return -FI_ENODATA;
	d = df_dev_get();
	if (d == NULL)
		return -FI_ENODEV;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -FI_ENOMEM;
	f->dev = d;
	f->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	f->fabric_fid.fid.context = context;
	f->fabric_fid.fid.ops = &fabric_fi_ops;
	f->fabric_fid.ops = &fabric_ops;
	f->fabric_fid.api_version = DF_API_VERSION;
	*fabric = &f->fabric_fid;
	return 0;
}
