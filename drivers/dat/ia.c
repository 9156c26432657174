/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Interface adapters: one dpdat device per IA name and process, shared by
 * every open IA of that name. The EAL is brought up by the first open and
 * stays up for the life of the process (it cannot be initialised twice;
 * the library is linked -z nodelete for the same reason).
 *
 * ia_params (dat.conf) are space-separated key=value words:
 *   device=<DPDK device arguments>  [ipv4=<address>|auto]  [mtu=<bytes>]
 *   [cpu=<engine thread's CPU>]  [eal=<EAL argument>;<EAL argument>...]
 * ipv4 defaults to auto: the interface's own address on a port beside the
 * kernel (af_xdp, af_packet, a PCI NIC with a netdev); memif and ring ports
 * need one. mtu defaults to the port's (memif 4200, other ports of dpdat's
 * own 1500, beside the kernel the interface's).
 * The environment variable DPDAT_DAT_PARAMS, when set, replaces them for
 * every IA the process opens: two processes that open the same IA name
 * (dtest) can so take the two sides of a memif pair.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include <dpdat/dpdat_env.h>

#include "dd_calls.h"

#define DD_VENDOR	"dpdat"

struct dd_devref {
	char name[DAT_NAME_MAX_LENGTH];
	struct dd_ia_conf conf;
	struct dpdat_dev *dev;
	unsigned int refs;
};

/* DPDAT_DAT_DEBUG: set by ia_open, raises dpdat.dat to DEBUG */
static int dd_debug;

static struct dd_devref devs[16];
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static bool eal_up;

/* The device of an IA name, opened on first use. Takes devs_lock. */
static struct dpdat_dev *
dev_get(const char *name, const struct dd_ia_conf *conf)
{
	struct dpdat_eal_conf ec = { .program = "dpdat-dat", .mem_mb = 1024 };
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_THREAD,
				     .max_qps = DD_MAX_EP + 16 };
	struct dd_devref *r = NULL;
	struct dpdat_dev *dev = NULL;
	unsigned int i;
	int ret;

	pthread_mutex_lock(&devs_lock);
	for (i = 0; i < RTE_DIM(devs); i++) {
		if (devs[i].dev != NULL && strcmp(devs[i].name, name) == 0) {
			devs[i].refs++;
			dev = devs[i].dev;
			goto out;
		}
		if (devs[i].dev == NULL && r == NULL)
			r = &devs[i];
	}
	if (r == NULL)
		goto out;
	if (!eal_up && dpdat_eal_attach() == 0) {
		/* the application's EAL (its own DPDK, or dpdat's native
		 * API) is up: the IA runs on it */
		if (conf->eal[0] != '\0')
			DD_LOG(WARNING, "%s: eal= ignored: the application "
			       "brought the EAL up", name);
		eal_up = true;
	} else if (!eal_up) {
		/* eal=-l1;-a0000:3b:00.0: the first IA of the process
		 * brings the EAL up, so its eal= counts */
		ec.extra_words = conf->eal;
		ret = dpdat_eal_init(&ec);
		if (ret < 0) {
			DD_LOG(ERR, "%s: EAL%s: %s", name,
			       ret == -EINVAL ? " (eal= among others)" : "",
			       rte_strerror(-ret));
			goto out;
		}
		eal_up = true;
	} else if (conf->eal[0] != '\0') {
		DD_LOG(WARNING, "%s: eal= ignored: the EAL is up already "
		       "(the process's first IA brought it up)", name);
	}
	dc.port.device = conf->device;
	dc.port.ipv4 = conf->ipv4;
	dc.port.mtu = (uint16_t)conf->mtu;
	dc.pin_cpu = conf->cpu >= 0;
	dc.cpu = conf->cpu >= 0 ? (unsigned int)conf->cpu : 0;
	dc.port.link_wait_s = 0;
	dev = dpdat_dev_open(&dc);
	if (dev == NULL) {
		DD_LOG(ERR, "%s: device %s: %s", name, conf->device,
		       rte_strerror(rte_errno));
		goto out;
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->conf = *conf;
	r->dev = dev;
	r->refs = 1;
out:
	pthread_mutex_unlock(&devs_lock);
	return dev;
}

/* The device stays open when its last IA closes: the next open of the
 * name finds it (and its memif link) again. Nothing is torn down at exit
 * either: closing a memif port while its control thread runs is not safe
 * in DPDK 22.11 (a crash about once in 25 exits), and the process's end
 * frees everything; a memif server socket left behind is removed by the
 * next server that wants it (lib/port). */
static void
dev_put(struct dpdat_dev *dev)
{
	pthread_mutex_lock(&devs_lock);
	for (unsigned int i = 0; i < RTE_DIM(devs); i++)
		if (devs[i].refs > 0 && devs[i].dev == dev)
			devs[i].refs--;
	pthread_mutex_unlock(&devs_lock);
}

/* The provider-specific attributes of an IA. DAT_IB_TRANSPORT_MTU, as
 * DAPL's verbs providers name it, is the path MTU connections use: the
 * largest IB MTU that fits the port with the RoCEv2 headers (lib/cm).
 * dtestsrq sizes its messages by it. */
static void
fill_specific(struct dd_ia *ia)
{
	struct dpdat_port_info pi = { .mtu = 1500 };
	unsigned int pmtu = 4096;

	dpdat_port_query(dpdat_dev_port(ia->dev), &pi);
	while (pmtu + 64 > pi.mtu && pmtu > 256)
		pmtu /= 2;
	snprintf(ia->mtu_str, sizeof(ia->mtu_str), "%u", pmtu);
	ia->specific[0] = (DAT_NAMED_ATTR){ "DAT_IB_RDMA_READ", "TRUE" };
	ia->specific[1] = (DAT_NAMED_ATTR){ "DAT_IB_TRANSPORT_MTU",
					    ia->mtu_str };
	ia->specific[2] = (DAT_NAMED_ATTR){ "DPDAT_TRANSPORT",
					    "RoCEv2 over DPDK" };
	ia->specific[3] = (DAT_NAMED_ATTR){ DAT_IB_ATTR_CMP_AND_SWAP, "TRUE" };
	ia->specific[4] = (DAT_NAMED_ATTR){ DAT_IB_ATTR_FETCH_AND_ADD, "TRUE" };
	ia->specific[5] = (DAT_NAMED_ATTR){ DAT_IB_ATTR_IMMED_DATA, "TRUE" };
}

DAT_RETURN DAT_API
dd_ia_open(const DAT_NAME_PTR name, DAT_COUNT async_qlen,
	   DAT_EVD_HANDLE *async_evd, DAT_IA_HANDLE *ia_handle)
{
	const DAT_PROVIDER *prov;
	struct sockaddr_in *sin;
	struct dpdat_port_info pi;
	struct dd_ia_conf conf;
	char params[1024];
	const char *env = dpdat_env_str("DPDAT_DAT_PARAMS");
	struct dd_ia *ia;
	DAT_RETURN ret;
	bool debug = false;

	dd_debug = dpdat_env_bool("DPDAT_DAT_DEBUG", &debug) >= 0 && debug;
	if (name == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG1);
	if (async_evd == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	if (ia_handle == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	prov = dd_provider(name, params, sizeof(params));
	if (prov == NULL)
		return DAT_PROVIDER_NOT_FOUND;
	if (dd_ia_params_parse(env != NULL ? env : params, &conf) != 0) {
		DD_LOG(ERR, "%s: bad ia_params \"%s\" (want "
		       "device=<devargs> [ipv4=<address>|auto] [mtu=<n>] "
		       "[cpu=<n>] [eal=<arg>;<arg>...])", name,
		       env != NULL ? env : params);
		return DD_BAD_PARAM(DAT_INVALID_ARG1);
	}
	ia = dd_obj_new(NULL, DD_IA, sizeof(*ia));
	if (ia == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	ia->h.provider = prov;
	ia->h.ia = ia;
	pthread_mutex_init(&ia->lock, NULL);
	TAILQ_INIT(&ia->objs);
	ia->conf = conf;
	snprintf(ia->name, sizeof(ia->name), "%s", name);
	sin = (struct sockaddr_in *)&ia->addr;
	sin->sin_family = AF_INET;
	if (strcmp(conf.ipv4, "auto") != 0 &&
	    inet_pton(AF_INET, conf.ipv4, &sin->sin_addr) != 1) {
		ret = DD_BAD_PARAM(DAT_INVALID_ARG1);
		goto err_obj;
	}
	ia->dev = dev_get(name, &conf);
	if (ia->dev == NULL) {
		ret = DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_DEVICE;
		goto err_obj;
	}
	/* once the EAL is up, whose log options (DPDAT_LOG, --log-level)
	 * have been applied by then: DPDAT_DAT_DEBUG wins over them */
	if (dd_debug)
		rte_log_set_level(dd_logtype, RTE_LOG_DEBUG);
	/* the port's address: the interface's own with ipv4=auto */
	dpdat_port_query(dpdat_dev_port(ia->dev), &pi);
	sin->sin_addr.s_addr = pi.ipv4;
	ia->ipv4 = pi.ipv4;
	fill_specific(ia);
	if (*async_evd == DAT_EVD_ASYNC_EXISTS) {
		ia->async_evd = NULL;
	} else if (*async_evd == DAT_HANDLE_NULL) {
		ret = dd_evd_create(ia, async_qlen > 0 ? async_qlen : 8,
				    DAT_HANDLE_NULL, DAT_EVD_ASYNC_FLAG,
				    async_evd);
		if (ret != DAT_SUCCESS)
			goto err_dev;
		ia->async_evd = dd_obj_get(*async_evd, DD_EVD);
		ia->async_evd_ours = true;
	} else {
		ia->async_evd = dd_evd_get(*async_evd, DAT_EVD_ASYNC_FLAG);
		if (ia->async_evd == NULL) {
			ret = DD_BAD_HANDLE(DAT_INVALID_HANDLE_EVD_ASYNC);
			goto err_dev;
		}
	}
	*ia_handle = ia;
	return DAT_SUCCESS;
err_dev:
	dev_put(ia->dev);
err_obj:
	dd_obj_free(ia);
	return ret;
}

/* Free one object through the provider's table, as the consumer would. */
static DAT_RETURN
free_one(struct dd_obj *o)
{
	const DAT_PROVIDER *p = o->provider;

	switch (o->type) {
	case DD_EP: return p->ep_free_func(o);
	case DD_CR: return p->cr_reject_func(o, 0, NULL);
	case DD_PSP: return p->psp_free_func(o);
	case DD_RSP: return p->rsp_free_func(o);
	case DD_CSP: return p->csp_free_func(o);
	case DD_RMR: return p->rmr_free_func(o);
	case DD_LMR: return p->lmr_free_func(o);
	case DD_SRQ: return p->srq_free_func(o);
	case DD_EVD: return p->evd_free_func(o);
	case DD_CNO: return p->cno_free_func(o);
	case DD_PZ: return p->pz_free_func(o);
	default: return DAT_INTERNAL_ERROR;
	}
}

/* Free every object of the IA, dependants first (abrupt close). An object
 * that refuses is retired anyway: its native resources go with the
 * device. */
static void
free_all(struct dd_ia *ia)
{
	static const enum dd_type order[] = {
		DD_EP, DD_CR, DD_PSP, DD_RSP, DD_CSP, DD_RMR, DD_LMR, DD_SRQ,
		DD_EVD, DD_CNO, DD_PZ };
	struct dd_obj *o, *tmp;

	for (unsigned int k = 0; k < RTE_DIM(order); k++) {
		pthread_mutex_lock(&ia->lock);
		for (o = TAILQ_FIRST(&ia->objs); o != NULL; o = tmp) {
			tmp = TAILQ_NEXT(o, next);
			if (o->type != order[k])
				continue;
			pthread_mutex_unlock(&ia->lock);
			if (free_one(o) != DAT_SUCCESS)
				dd_obj_free(o);	/* the device goes anyway */
			pthread_mutex_lock(&ia->lock);
			tmp = TAILQ_FIRST(&ia->objs);	/* the list changed */
		}
		pthread_mutex_unlock(&ia->lock);
	}
}

DAT_RETURN DAT_API
dd_ia_close(DAT_IA_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	struct dd_ia *ia = dd_obj_get(h, DD_IA);
	struct dd_obj *o;
	bool others = false;

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (flags != DAT_CLOSE_ABRUPT_FLAG && flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	pthread_mutex_lock(&ia->lock);
	TAILQ_FOREACH(o, &ia->objs, next)
		if (!(ia->async_evd_ours && o == &ia->async_evd->h))
			others = true;
	pthread_mutex_unlock(&ia->lock);
	if (others && flags == DAT_CLOSE_GRACEFUL_FLAG)
		return DD_BAD_STATE(DAT_INVALID_STATE_IA_IN_USE);
	/* the async EVD refuses to go while its IA is open: no more */
	pthread_mutex_lock(&ia->lock);
	ia->async_evd = NULL;
	pthread_mutex_unlock(&ia->lock);
	free_all(ia);
	dev_put(ia->dev);
	dd_obj_free(ia);
	return DAT_SUCCESS;
}


static void
fill_ia_attr(const struct dd_ia *ia, DAT_IA_ATTR *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->adapter_name, sizeof(a->adapter_name), "%s", ia->name);
	snprintf(a->vendor_name, sizeof(a->vendor_name), DD_VENDOR);
	a->hardware_version_major = 0;
	a->firmware_version_minor = 1;
	a->ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ia->addr;
	a->max_eps = DD_MAX_EP;
	a->max_dto_per_ep = DD_MAX_DTOS;
	a->max_rdma_read_per_ep_in = DD_MAX_RDMA_READ_IN;
	a->max_rdma_read_per_ep_out = DD_MAX_RDMA_READ_IN;
	a->max_evds = 4 * DD_MAX_EP;
	a->max_evd_qlen = DD_MAX_EVD_QLEN;
	a->max_iov_segments_per_dto = DD_MAX_IOV;
	a->max_lmrs = 1 << 20;
	a->max_lmr_block_size = UINT32_MAX;
	a->max_lmr_virtual_address = UINT64_MAX;
	a->max_pzs = 1 << 16;
	a->max_message_size = DD_MAX_RDMA_SIZE;
	a->max_rdma_size = DD_MAX_RDMA_SIZE;
	a->max_rmrs = 1 << 20;
	a->max_rmr_target_address = UINT64_MAX;
	a->max_srqs = DD_MAX_SRQ;
	a->max_ep_per_srq = DD_MAX_EP;
	a->max_recv_per_srq = DD_MAX_SRQ_DTOS;
	a->max_iov_segments_per_rdma_read = DD_MAX_IOV;
	a->max_iov_segments_per_rdma_write = DD_MAX_IOV;
	a->max_rdma_read_in = DD_MAX_RDMA_READ_IN * DD_MAX_EP;
	a->max_rdma_read_out = DD_MAX_RDMA_READ_IN * DD_MAX_EP;
	a->max_rdma_read_per_ep_in_guaranteed = DAT_TRUE;
	a->max_rdma_read_per_ep_out_guaranteed = DAT_TRUE;
	a->zb_supported = DAT_FALSE;
	/* the IB extensions' atomics and RDMA write with immediate data
	 * (ext.c); the others answer DAT_NOT_IMPLEMENTED */
	a->extension_supported = DAT_EXTENSION_IB;
	a->extension_version = DAT_IB_EXTENSION_VERSION;
}

static void
fill_provider_attr(struct dd_ia *ia, DAT_PROVIDER_ATTR *p)
{
	DAT_BOOLEAN merge[6][6];

	memset(p, 0, sizeof(*p));
	snprintf(p->provider_name, sizeof(p->provider_name), "dpdat");
	p->provider_version_major = 0;
	p->provider_version_minor = 1;
	p->dapl_version_major = DAT_VERSION_MAJOR;
	p->dapl_version_minor = DAT_VERSION_MINOR;
	p->lmr_mem_types_supported = DAT_MEM_TYPE_VIRTUAL | DAT_MEM_TYPE_LMR |
				     DAT_MEM_TYPE_SHARED_VIRTUAL;
	p->iov_ownership_on_return = DAT_IOV_CONSUMER;
	p->dat_qos_supported = DAT_QOS_BEST_EFFORT;
	p->completion_flags_supported = DAT_COMPLETION_DEFAULT_FLAG |
		DAT_COMPLETION_SUPPRESS_FLAG | DAT_COMPLETION_UNSIGNALLED_FLAG |
		DAT_COMPLETION_SOLICITED_WAIT_FLAG |
		DAT_COMPLETION_BARRIER_FENCE_FLAG;
	/* the registry finds a provider again by (name, thread safety) as
	 * dat.conf registered it: "nonthreadsafe", which is what the
	 * installed headers ask for. The provider is thread safe all the
	 * same (dapltest shares one IA between threads). */
	p->is_thread_safe = DAT_FALSE;
	p->max_private_data_size = DD_MAX_PDATA;
	p->supports_multipath = DAT_FALSE;
	p->ep_creator = DAT_PSP_CREATES_EP_NEVER;
	p->pz_support = DAT_PZ_UNIQUE;
	p->optimal_buffer_alignment = 64;
	/* any flags may share one EVD (evd.c keeps a CQ and a CM queue) */
	for (int i = 0; i < 6; i++)
		for (int k = 0; k < 6; k++)
			merge[i][k] = DAT_TRUE;
	memcpy((void *)p->evd_stream_merging_supported, merge, sizeof(merge));
	p->srq_supported = DAT_TRUE;
	p->lmr_sync_req = DAT_FALSE;
	p->dto_async_return_guaranteed = DAT_TRUE;
	p->rdma_write_for_rdma_read_req = DAT_FALSE;
	p->rdma_read_lmr_rmr_context_exposure = DAT_FALSE;
	p->rmr_scope_supported = DAT_RMR_SCOPE_ANY;	/* PZ and EP */
	p->is_signal_safe = DAT_FALSE;
	p->ha_supported = DAT_FALSE;
	p->num_provider_specific_attr = RTE_DIM(ia->specific);
	p->provider_specific_attr = ia->specific;
}

DAT_RETURN DAT_API
dd_ia_query(DAT_IA_HANDLE h, DAT_EVD_HANDLE *async_evd,
	    DAT_IA_ATTR_MASK ia_mask, DAT_IA_ATTR *ia_attr,
	    DAT_PROVIDER_ATTR_MASK prov_mask, DAT_PROVIDER_ATTR *prov_attr)
{
	struct dd_ia *ia = dd_obj_get(h, DD_IA);

	if (ia == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (ia_mask != 0 && ia_attr == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	if (prov_mask != 0 && prov_attr == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG6);
	if (async_evd != NULL)
		*async_evd = ia->async_evd != NULL ? (DAT_EVD_HANDLE)ia->async_evd
						   : DAT_EVD_ASYNC_EXISTS;
	if (ia_mask != 0)
		fill_ia_attr(ia, ia_attr);
	if (prov_mask != 0)
		fill_provider_attr(ia, prov_attr);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_ia_ha_related(DAT_IA_HANDLE h, const DAT_NAME_PTR name, DAT_BOOLEAN *answer)
{
	(void)name;
	if (dd_obj_get(h, DD_IA) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (answer == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	return DAT_MODEL_NOT_SUPPORTED;	/* no high availability */
}

/* ---- the generic handle calls ---- */

DAT_RETURN DAT_API
dd_set_consumer_context(DAT_HANDLE h, DAT_CONTEXT ctx)
{
	struct dd_obj *o = dd_obj_any(h);

	if (o == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE1);
	o->context = ctx;
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_get_consumer_context(DAT_HANDLE h, DAT_CONTEXT *ctx)
{
	struct dd_obj *o = dd_obj_any(h);

	if (o == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE1);
	if (ctx == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	*ctx = o->context;
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API
dd_get_handle_type(DAT_HANDLE h, DAT_HANDLE_TYPE *type)
{
	static const DAT_HANDLE_TYPE types[DD_TYPE_COUNT] = {
		[DD_IA] = DAT_HANDLE_TYPE_IA, [DD_EP] = DAT_HANDLE_TYPE_EP,
		[DD_LMR] = DAT_HANDLE_TYPE_LMR, [DD_RMR] = DAT_HANDLE_TYPE_RMR,
		[DD_PZ] = DAT_HANDLE_TYPE_PZ, [DD_PSP] = DAT_HANDLE_TYPE_PSP,
		[DD_RSP] = DAT_HANDLE_TYPE_RSP, [DD_CR] = DAT_HANDLE_TYPE_CR,
		[DD_CNO] = DAT_HANDLE_TYPE_CNO, [DD_EVD] = DAT_HANDLE_TYPE_EVD,
		[DD_SRQ] = DAT_HANDLE_TYPE_SRQ, [DD_CSP] = DAT_HANDLE_TYPE_CSP,
	};
	struct dd_obj *o = dd_obj_any(h);

	if (o == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE1);
	if (type == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	*type = types[o->type];
	return DAT_SUCCESS;
}

