/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* dpdat0: the device list, open and close, and the device, port and GID
 * queries (ibv_devinfo). */

#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include <dpdat/dpdat_env.h>
#include <dpdat/dpdat_port.h>

#include "dpdat_verbs_private.h"
#include "verbs_priv.h"

/* The layouts the inline calls of verbs.h depend on (rdma-core 44). */
_Static_assert(offsetof(struct verbs_context, context) +
	       sizeof(struct ibv_context) == sizeof(struct verbs_context),
	       "struct ibv_context is last in struct verbs_context");
_Static_assert(offsetof(struct ibv_context, abi_compat) ==
	       sizeof(struct ibv_context) - sizeof(void *),
	       "ibv_context.abi_compat is last");
_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0,
	       "struct ibv_qp begins struct ibv_qp_ex");

struct ibv_device dv_device = {
	.node_type = IBV_NODE_CA,
	.transport_type = IBV_TRANSPORT_IB,	/* RoCE says IB, as rxe */
	.name = DV_NAME,
	.dev_name = "uverbs-" DV_NAME,
	/* no sysfs: ibv_read_sysfs_file() of these finds nothing */
	.dev_path = "/nonexistent/dpdat/" DV_NAME,
	.ibdev_path = "/nonexistent/dpdat/" DV_NAME,
};


static pthread_mutex_t dv_lock = PTHREAD_MUTEX_INITIALIZER;
static bool dv_inline;		/* DPDAT_VERBS_PROGRESS=inline */
static struct dpdat_dev *dv_dev;	/* opened once, kept (as the DAT
					 * plug-in: a memif port is not closed
					 * safely while its thread runs) */
static bool dv_eal_up;

void *
dv_next(const char *name, const char *version)
{
	void *f = dlvsym(RTLD_NEXT, name, version);

	if (f == NULL)
		f = dlsym(RTLD_NEXT, name);
	return f;
}

void
dv_unsupported(const char *call, int *said, int err)
{
	if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
		DV_LOG("%s on %s: not supported (%s)", call, DV_NAME,
		       strerror(err));
	errno = err;
}

/* ---- the device list ---- */

/* Our list: the system's devices, then dpdat0, then NULL; the system's
 * array is kept just before it, to give back. */
struct ibv_device **
ibv_get_device_list(int *num)
{
	typedef struct ibv_device **(*fn_t)(int *);
	fn_t next = NEXT(ibv_get_device_list, "IBVERBS_1.1", fn_t);
	struct ibv_device **sys = NULL, **out;
	int n = 0, k;

	if (next != NULL)
		sys = next(&n);
	if (sys == NULL)
		n = 0;
	out = calloc((size_t)n + 3, sizeof(*out));
	if (out == NULL) {
		if (sys != NULL)
			NEXT(ibv_free_device_list, "IBVERBS_1.1",
			     void (*)(struct ibv_device **))(sys);
		errno = ENOMEM;
		return NULL;
	}
	out[0] = (struct ibv_device *)sys;
	for (k = 0; k < n; k++)
		out[1 + k] = sys[k];
	out[1 + n] = &dv_device;
	if (num != NULL)
		*num = n + 1;
	return out + 1;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	struct ibv_device **sys;

	if (list == NULL)
		return;
	sys = (struct ibv_device **)list[-1];
	if (sys != NULL)
		NEXT(ibv_free_device_list, "IBVERBS_1.1",
		     void (*)(struct ibv_device **))(sys);
	free(list - 1);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	if (dv_ours_dev(device))
		return dv_device.name;
	return NEXT(ibv_get_device_name, "IBVERBS_1.1",
		    const char *(*)(struct ibv_device *))(device);
}

/* The port's MAC as an EUI-64 (network order), as RoCE NICs do. */
static __be64
dv_guid(void)
{
	struct dpdat_port_info pi;
	uint8_t g[8] = { 0 };
	__be64 v;

	if (dv_dev != NULL &&
	    dpdat_port_query(dpdat_dev_port(dv_dev), &pi) == 0) {
		const uint8_t *m = pi.mac.addr_bytes;

		g[0] = m[0] ^ 0x02;
		g[1] = m[1];
		g[2] = m[2];
		g[3] = 0xff;
		g[4] = 0xfe;
		g[5] = m[3];
		g[6] = m[4];
		g[7] = m[5];
	}
	memcpy(&v, g, sizeof(v));
	return v;
}

__be64
ibv_get_device_guid(struct ibv_device *device)
{
	if (dv_ours_dev(device))
		return dv_guid();
	return NEXT(ibv_get_device_guid, "IBVERBS_1.1",
		    __be64 (*)(struct ibv_device *))(device);
}

int
ibv_get_device_index(struct ibv_device *device)
{
	if (dv_ours_dev(device))
		return -1;	/* no kernel index */
	return NEXT(ibv_get_device_index, "IBVERBS_1.9",
		    int (*)(struct ibv_device *))(device);
}

/* ---- open and close ---- */

/* QPs connected by ibv_modify_qp offer dpdat's extensions in band */
bool dv_offer = true;
/* QPs say their counters as they go */
bool dv_qp_stats;

/* The dpdat device of dpdat0, opened on first use. */
static struct dpdat_dev *
dv_open_dev(void)
{
	struct dpdat_eal_conf ec = { .program = "dpdat-verbs",
				     .mem_mb = 1024 };
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_HYBRID,
				     .max_qps = DV_MAX_QP };
	uint64_t mtu = 0;
	const char *eal, *prog;
	int ret;

	pthread_mutex_lock(&dv_lock);
	if (dv_dev != NULL)
		goto out;
	if (!dv_eal_up && dpdat_eal_attach() == 0) {
		dv_eal_up = true;	/* the program's own EAL */
	} else if (!dv_eal_up) {
		eal = dpdat_env_str("DPDAT_VERBS_EAL");
		ec.extra_words = eal != NULL ? eal : "";
		ret = dpdat_eal_init(&ec);
		if (ret < 0) {
			DV_LOG("%s: EAL: %s", DV_NAME, rte_strerror(-ret));
			errno = -ret;
			goto out;
		}
		dv_eal_up = true;
	}
	prog = dpdat_env_str("DPDAT_VERBS_PROGRESS");
	if (prog == NULL || strcmp(prog, "hybrid") == 0) {
		dc.progress = DPDAT_PROGRESS_HYBRID;
	} else if (strcmp(prog, "thread") == 0) {
		dc.progress = DPDAT_PROGRESS_THREAD;
	} else if (strcmp(prog, "inline") == 0) {
		dc.progress = DPDAT_PROGRESS_INLINE;
	} else {
		DV_LOG("DPDAT_VERBS_PROGRESS=%s: not hybrid, thread or inline",
		       prog);
		errno = EINVAL;
		goto out;
	}
	dv_inline = dc.progress == DPDAT_PROGRESS_INLINE;
	dc.port.device = dpdat_env_str("DPDAT_VERBS_DEVICE");
	dc.port.ipv4 = dpdat_env_str("DPDAT_VERBS_IPV4");
	if (dpdat_env_uint("DPDAT_VERBS_MTU", 576, 9216, &mtu) < 0) {
		errno = EINVAL;
		goto out;
	}
	dc.port.mtu = (uint16_t)mtu;
	if (dpdat_env_bool("DPDAT_VERBS_OFFER", &dv_offer) < 0 ||
	    dpdat_env_bool("DPDAT_VERBS_QP_STATS", &dv_qp_stats) < 0) {
		errno = EINVAL;
		goto out;
	}
	dc.port.link_wait_s = 0;	/* the port comes up on its own */
	dv_dev = dpdat_dev_open(&dc);
	if (dv_dev == NULL) {
		DV_LOG("%s: device %s: %s", DV_NAME, dc.port.device,
		       rte_strerror(rte_errno));
		errno = rte_errno;
	}
out:
	pthread_mutex_unlock(&dv_lock);
	return dv_dev;
}

bool
dv_port_active(struct dpdat_dev *dev)
{
	struct dpdat_port_info pi;

	/* a memif link is up once the other process attaches, which it does
	 * only after this one started: programs that check the port before
	 * they wait for their peer (perftest) would stop. Such a port is
	 * active as a cabled NIC is; the physical state tells the truth. */
	return dpdat_port_query(dpdat_dev_port(dev), &pi) == 0 &&
	       (pi.link_up || strncmp(pi.name, "net_memif", 9) == 0);
}

static int dv_query_port(struct ibv_context *ctx, uint8_t port,
			 struct ibv_port_attr *attr, size_t len);
static int dv_query_device_ex(struct ibv_context *ctx,
			      const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *attr, size_t len);

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct dv_context *c;

	if (!dv_ours_dev(device))
		return NEXT(ibv_open_device, "IBVERBS_1.1",
			    struct ibv_context *(*)(struct ibv_device *))(device);
	if (dv_open_dev() == NULL)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = dv_dev;
	c->async.port_active = dv_port_active(c->dev);
	errno = dv_async_init(c);
	if (errno != 0) {
		free(c);
		return NULL;
	}
	c->vc.sz = sizeof(c->vc);
	c->vc.query_port = dv_query_port;
	c->vc.query_device_ex = dv_query_device_ex;
	dv_cq_ops(&c->vc);
	dv_qp_ops(&c->vc);
	dv_srq_ops(&c->vc);
	c->vc.context.device = &dv_device;
	c->vc.context.cmd_fd = -1;
	c->vc.context.async_fd = c->async.efd;
	c->vc.context.num_comp_vectors = 1;
	pthread_mutex_init(&c->vc.context.mutex, NULL);
	c->vc.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	return &c->vc.context;
}

int
ibv_close_device(struct ibv_context *ctx)
{
	if (!dv_ours(ctx))
		return NEXT(ibv_close_device, "IBVERBS_1.1",
			    int (*)(struct ibv_context *))(ctx);
	pthread_mutex_destroy(&ctx->mutex);
	dv_async_fini(dv_ctx(ctx));
	free(dv_ctx(ctx));
	return 0;
}

/* ---- queries ---- */

static void
dv_device_attr(struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "dpdat %s", DPDAT_VERSION_STR);
	a->node_guid = dv_guid();
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 4096;
	a->vendor_id = DV_VENDOR_ID;
	a->max_qp = DV_MAX_QP;
	a->max_qp_wr = DV_MAX_WR;
	/* SRQs are not resized (ibv_modify_srq with IBV_SRQ_MAX_WR) */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_SHUTDOWN_PORT;
	a->max_sge = DPDAT_MAX_SGE;
	a->max_sge_rd = DPDAT_MAX_SGE;
	a->max_cq = DV_MAX_QP * 2;
	a->max_cqe = DV_MAX_CQE;
	a->max_mr = DPDAT_MR_MAX_CONTEXTS;
	a->max_pd = 1024;
	a->max_qp_rd_atom = DV_MAX_RD;
	a->max_qp_init_rd_atom = DV_MAX_RD;
	a->max_res_rd_atom = DV_MAX_RD * DV_MAX_QP;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_srq = DV_MAX_QP;
	a->max_srq_wr = DV_MAX_WR;
	a->max_srq_sge = DPDAT_MAX_SGE;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
}

int
ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	if (!dv_ours(ctx))
		return NEXT(ibv_query_device, "IBVERBS_1.1",
			    int (*)(struct ibv_context *,
				    struct ibv_device_attr *))(ctx, attr);
	dv_device_attr(attr);
	return 0;
}

static int
dv_query_device_ex(struct ibv_context *ctx,
		   const struct ibv_query_device_ex_input *in,
		   struct ibv_device_attr_ex *attr, size_t len)
{
	(void)ctx;
	if (in != NULL && in->comp_mask != 0)
		return EINVAL;
	if (len < sizeof(attr->orig_attr))
		return EINVAL;
	memset(attr, 0, len);
	dv_device_attr(&attr->orig_attr);
	return 0;
}

/* The largest IBTA MTU a frame of mtu bytes carries with the RoCEv2
 * headers (IPv4, UDP, BTH, RETH, immediate, ICRC: 64 bytes). */
static enum ibv_mtu
dv_mtu(unsigned int mtu)
{
	enum ibv_mtu m = IBV_MTU_256;

	for (unsigned int b = 512, e = IBV_MTU_512; b <= 4096; b *= 2, e++)
		if (b + 64 <= mtu)
			m = (enum ibv_mtu)e;
	return m;
}

static int
dv_query_port(struct ibv_context *ctx, uint8_t port,
	      struct ibv_port_attr *attr, size_t len)
{
	struct dpdat_port_info pi;
	struct ibv_port_attr a;

	if (port != 1)
		return EINVAL;
	if (dpdat_port_query(dpdat_dev_port(dv_ctx(ctx)->dev), &pi) != 0)
		return EIO;
	memset(&a, 0, sizeof(a));
	a.state = dv_port_active(dv_ctx(ctx)->dev) ? IBV_PORT_ACTIVE :
						     IBV_PORT_DOWN;
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu = dv_mtu(pi.mtu);
	a.gid_tbl_len = 1;
	a.port_cap_flags = IBV_PORT_CM_SUP;
	a.max_msg_sz = 1U << 31;
	a.pkey_tbl_len = 1;
	a.active_width = 1;	/* 1X */
	a.active_speed = 0x20;	/* 25 Gb/s a lane, as 25 GbE NICs say */
	a.phys_state = pi.link_up ? 5 : 3;	/* LinkUp : Disabled */
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

int
ibv_query_port(struct ibv_context *ctx, uint8_t port,
	       struct _compat_ibv_port_attr *attr)
{
	if (!dv_ours(ctx))
		return NEXT(ibv_query_port, "IBVERBS_1.1",
			    int (*)(struct ibv_context *, uint8_t,
				    struct _compat_ibv_port_attr *))(ctx, port,
								     attr);
	/* the old layout is the new one up to flags */
	return dv_query_port(ctx, port, (struct ibv_port_attr *)attr,
			     offsetof(struct ibv_port_attr, flags) +
			     sizeof(((struct ibv_port_attr *)0)->flags));
}

int
ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index,
	      union ibv_gid *gid)
{
	struct dpdat_port_info pi;

	if (!dv_ours(ctx))
		return NEXT(ibv_query_gid, "IBVERBS_1.1",
			    int (*)(struct ibv_context *, uint8_t, int,
				    union ibv_gid *))(ctx, port, index, gid);
	if (port != 1 || index != 0 ||
	    dpdat_port_query(dpdat_dev_port(dv_ctx(ctx)->dev), &pi) != 0)
		return -1;
	/* RoCEv2 over IPv4: the IPv4-mapped IPv6 address */
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &pi.ipv4, 4);
	return 0;
}

/* libibverbs' private query of a GID's type (ibv_devinfo uses it), in
 * its private enum ibv_gid_type_sysfs: IB or RoCE v1 0, RoCE v2 1 */
int
ibv_query_gid_type(struct ibv_context *ctx, uint8_t port,
		   unsigned int index, int *type)
{
	if (!dv_ours(ctx))
		return NEXT(ibv_query_gid_type, "IBVERBS_PRIVATE_34",
			    int (*)(struct ibv_context *, uint8_t,
				    unsigned int, int *))(ctx, port, index,
							  type);
	if (port != 1 || index != 0)
		return -1;
	*type = 1;	/* IBV_GID_TYPE_SYSFS_ROCE_V2 */
	return 0;
}

/* GID 0 as an entry of the extended queries (the inline ibv_query_gid_ex
 * and ibv_query_gid_table call these). */
static int
dv_gid_entry(struct ibv_context *ctx, struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	if (ibv_query_gid(ctx, 1, 0, &e->gid) != 0)
		return EIO;
	e->gid_index = 0;
	e->port_num = 1;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = 0;	/* no kernel interface */
	return 0;
}

int
_ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t size)
{
	struct ibv_gid_entry e;
	int ret;

	if (!dv_ours(ctx))
		return NEXT(_ibv_query_gid_ex, "IBVERBS_1.11",
			    int (*)(struct ibv_context *, uint32_t, uint32_t,
				    struct ibv_gid_entry *, uint32_t,
				    size_t))(ctx, port, index, entry, flags,
					     size);
	if (flags != 0 || entry == NULL || size < sizeof(e))
		return EINVAL;
	if (port != 1 || index != 0)
		return ENODATA;
	ret = dv_gid_entry(ctx, &e);
	if (ret == 0)
		memcpy(entry, &e, sizeof(e));
	return ret;
}

ssize_t
_ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries,
		     size_t max, uint32_t flags, size_t size)
{
	int ret;

	if (!dv_ours(ctx))
		return NEXT(_ibv_query_gid_table, "IBVERBS_1.11",
			    ssize_t (*)(struct ibv_context *,
					struct ibv_gid_entry *, size_t,
					uint32_t, size_t))(ctx, entries, max,
							   flags, size);
	if (flags != 0 || entries == NULL || size < sizeof(*entries))
		return -EINVAL;
	if (max < 1)
		return -EINVAL;
	ret = dv_gid_entry(ctx, entries);
	return ret == 0 ? 1 : -ret;
}

int
ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index,
	       __be16 *pkey)
{
	if (!dv_ours(ctx))
		return NEXT(ibv_query_pkey, "IBVERBS_1.1",
			    int (*)(struct ibv_context *, uint8_t, int,
				    __be16 *))(ctx, port, index, pkey);
	if (port != 1 || index != 0)
		return -1;
	*pkey = htobe16(0xffff);	/* the default partition */
	return 0;
}

/* ---- for libdpdat-rdmacm (version DPDAT_VERBS_PRIVATE) ---- */

/* The one context of dpdat0 that every rdma_cm id shares. */
struct ibv_context *
dpdat_verbs_context(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct dv_context *owner;	/* kept for the process */
	struct ibv_context *ctx;

	pthread_mutex_lock(&lock);
	if (owner == NULL) {
		ctx = ibv_open_device(&dv_device);
		if (ctx != NULL)
			owner = dv_ctx(ctx);
	}
	pthread_mutex_unlock(&lock);
	return owner != NULL ? &owner->vc.context : NULL;
}

struct dpdat_dev *
dpdat_verbs_dev(struct ibv_context *ctx)
{
	return dv_ours(ctx) ? dv_ctx(ctx)->dev : NULL;
}

int
dpdat_verbs_wait_fd(int epfd, struct epoll_event *ev, int timeout_ms)
{
	uint64_t end, hz = rte_get_tsc_hz();
	int n;

	if (!dv_inline || dv_dev == NULL)
		return epoll_wait(epfd, ev, 1, timeout_ms);
	end = rte_get_tsc_cycles() + (uint64_t)timeout_ms * hz / 1000;
	do {
		dpdat_dev_progress(dv_dev);
		n = epoll_wait(epfd, ev, 1, 0);
	} while (n == 0 && (timeout_ms < 0 || rte_get_tsc_cycles() < end));
	return n;
}
