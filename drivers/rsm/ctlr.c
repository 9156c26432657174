/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Controllers: one dpdat device per process, configured from the
 * environment (doc/guides/rsm.md), and the exporter's connection service. */

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>

#include "rsm_priv.h"

RTE_LOG_REGISTER_DEFAULT(rsm_logtype, NOTICE);

struct rsm_ctlr rsm_ctlr0 = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct rsm_ctlr *
rsm_ctlr_check(rsmapi_controller_handle_t h, int *err)
{
	struct rsm_ctlr *c = (struct rsm_ctlr *)h;

	if (c != &rsm_ctlr0) {
		*err = RSMERR_BAD_CTLR_HNDL;
		return NULL;
	}
	if (!c->present) {
		*err = RSMERR_CTLR_NOT_PRESENT;
		return NULL;
	}
	*err = 0;
	return c;
}

uint32_t
rsm_node_ip(const struct rsm_ctlr *c, rsm_node_id_t node)
{
	for (unsigned int i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].id == node)
			return c->nodes[i].ip;
	return 0;
}

rsm_node_id_t
rsm_ip_node(const struct rsm_ctlr *c, uint32_t ip)
{
	for (unsigned int i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].ip == ip)
			return c->nodes[i].id;
	return 0;
}

int
rsm_parse_nodes(struct rsm_ctlr *c, const char *s)
{
	char buf[2048], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	c->n_nodes = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		unsigned long id;
		uint32_t ip;

		if (eq == NULL || c->n_nodes == RSM_MAX_NODES)
			return -1;
		*eq = '\0';
		id = strtoul(tok, &end, 0);
		if (*end != '\0' || id == 0 || id > UINT32_MAX ||
		    inet_pton(AF_INET, eq + 1, &ip) != 1 ||
		    rsm_node_ip(c, (rsm_node_id_t)id) != 0)
			return -1;
		c->nodes[c->n_nodes].id = (rsm_node_id_t)id;
		c->nodes[c->n_nodes].ip = ip;
		c->n_nodes++;
	}
	return c->n_nodes > 0 ? 0 : -1;
}

static int
ctlr_configure(struct rsm_ctlr *c)
{
	const char *nodes = dpdat_env_str("DPDAT_RSM_NODES");
	uint64_t node = 0, max_seg = 0, tot = 0, segs = 0;

	if (nodes == NULL || rsm_parse_nodes(c, nodes) != 0) {
		RSM_LOG(ERR, "bad DPDAT_RSM_NODES");
		return RSMERR_BAD_CONF;
	}
	/* the defaults are the registry's; a bad value is logged there */
	if (dpdat_env_uint("DPDAT_RSM_NODE", 1, UINT32_MAX, &node) < 0 ||
	    dpdat_env_uint("DPDAT_RSM_MAX_SEGMENT_SIZE", 1, SIZE_MAX,
			   &max_seg) < 0 ||
	    dpdat_env_uint("DPDAT_RSM_TOTAL_EXPORT", 1, SIZE_MAX, &tot) < 0 ||
	    dpdat_env_uint("DPDAT_RSM_MAX_SEGMENTS", 1, UINT_MAX, &segs) < 0)
		return RSMERR_BAD_CONF;
	c->node = (rsm_node_id_t)node;
	if (rsm_node_ip(c, c->node) == 0) {
		RSM_LOG(ERR, "DPDAT_RSM_NODE %u is not in DPDAT_RSM_NODES",
			c->node);
		return RSMERR_BAD_CONF;
	}
	c->page = (size_t)sysconf(_SC_PAGESIZE);
	c->max_seg = (size_t)max_seg;
	c->tot_export = (size_t)tot;
	c->max_segs = (unsigned int)segs;
	return 0;
}

static int
ctlr_open(struct rsm_ctlr *c)
{
	struct dpdat_eal_conf ec = { .program = "rsm", .mem_mb = 256 };
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_THREAD };
	const char *dev = dpdat_env_str("DPDAT_RSM_DEVICE");
	char devargs[300], ip[INET_ADDRSTRLEN];
	uint64_t cpu = 0;
	uint32_t myip;
	int server, pin;
	int r;

	r = ctlr_configure(c);
	if (r != 0)
		return r;
	pin = dpdat_env_uint("DPDAT_RSM_CPU", 0, UINT32_MAX, &cpu);
	if (pin < 0)
		return RSMERR_BAD_CONF;
	myip = rsm_node_ip(c, c->node);
	inet_ntop(AF_INET, &myip, ip, sizeof(ip));
	/* the memif pair: the lowest node id of the list is the server */
	server = 1;
	for (unsigned int i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].id < c->node)
			server = 0;
	if (dev == NULL || *dev == '\0') {
		snprintf(devargs, sizeof(devargs),
			 "net_memif0,role=%s,socket=/tmp/dpdat-rsm.sock",
			 server ? "server" : "client");
		dev = devargs;
	}
	if (dpdat_eal_mem_mode() == DPDAT_MEM_MODE_NONE &&
	    dpdat_eal_init(&ec) < 0 && dpdat_eal_attach() != 0) {
		RSM_LOG(ERR, "EAL initialisation failed");
		return RSMERR_CTLR_NOT_PRESENT;
	}
	dc.port.device = dev;
	dc.port.ipv4 = ip;
	dc.port.link_wait_s = strstr(dev, "role=client") != NULL ? 20 : 0;
	if (pin == 0) {	/* DPDAT_RSM_CPU set */
		dc.pin_cpu = true;
		dc.cpu = (unsigned int)cpu;
	}
	c->dev = dpdat_dev_open(&dc);
	if (c->dev == NULL) {
		RSM_LOG(ERR, "device %s: %s", dev, rte_strerror(rte_errno));
		return RSMERR_CTLR_NOT_PRESENT;
	}
	c->pz = dpdat_pz_create(dpdat_dev_domain(c->dev));
	c->eq = dpdat_cm_eq_create(c->dev, 256);
	if (c->pz == NULL || c->eq == NULL)
		return RSMERR_INSUFFICIENT_RESOURCES;
	c->listener = dpdat_cm_listen(c->dev, RSM_SERVICE, c->eq);
	if (c->listener == NULL)
		return RSMERR_INSUFFICIENT_RESOURCES;
	TAILQ_INIT(&c->exports);
	TAILQ_INIT(&c->imports);
	TAILQ_INIT(&c->lmhs);
	c->next_id = RSM_USER_APP_ID_BASE;
	if (pthread_create(&c->svc, NULL, rsm_service, c) != 0)
		return RSMERR_INSUFFICIENT_RESOURCES;
	c->opened = 1;
	return 0;
}

int
rsm_get_controller(char *name, rsmapi_controller_handle_t *controller)
{
	const char *want = dpdat_env_str("DPDAT_RSM_CONTROLLER");
	struct rsm_ctlr *c = &rsm_ctlr0;
	int r = 0;

	if (controller == NULL)
		return RSMERR_BAD_ADDR;
	if (name == NULL || want == NULL || strcmp(name, want) != 0)
		return RSMERR_CTLR_NOT_PRESENT;
	pthread_mutex_lock(&c->lock);
	/* the device stays open for the life of the process: the EAL and a
	 * memif port cannot be brought up twice */
	if (!c->opened)
		r = ctlr_open(c);
	if (r == 0) {
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->present = 1;
		c->refs++;
		*controller = (rsmapi_controller_handle_t)c;
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

int
rsm_release_controller(rsmapi_controller_handle_t controller)
{
	struct rsm_ctlr *c;
	int err;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	c = rsm_ctlr_check(controller, &err);
	if (c != NULL && --c->refs == 0)
		c->present = 0;
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	return err;
}

int
rsm_get_controller_attr(rsmapi_controller_handle_t chdl,
			rsmapi_controller_attr_t *attr)
{
	struct rsm_ctlr *c;
	int err;

	c = rsm_ctlr_check(chdl, &err);
	if (c == NULL)
		return err;
	if (attr == NULL)
		return RSMERR_BAD_ADDR;
	memset(attr, 0, sizeof(*attr));
	attr->attr_direct_access_sizes = RSM_DAS8 | RSM_DAS16 | RSM_DAS32 |
					 RSM_DAS64;
	attr->attr_atomic_sizes = 0;
	attr->attr_page_size = c->page;
	attr->attr_max_export_segment_size = c->max_seg;
	attr->attr_tot_export_segment_size = c->tot_export;
	attr->attr_max_export_segments = c->max_segs;
	attr->attr_max_import_map_size = 0;	/* no mapping */
	attr->attr_tot_import_map_size = 0;
	attr->attr_max_import_segments = 1024;
	return 0;
}

/* The node id of this process (not in the Solaris interface). */
rsm_node_id_t
dpdat_rsm_local_node(void)
{
	return rsm_ctlr0.opened ? rsm_ctlr0.node : 0;
}

static int
maps_writable(uintptr_t lo, uintptr_t hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perm[8];
	unsigned long a, b;

	if (f == NULL)
		return 1;	/* cannot tell: registration will */
	while (lo < hi && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3)
			continue;
		if (lo >= a && lo < b) {
			if (perm[0] != 'r' || perm[1] != 'w')
				break;
			lo = b;
		}
	}
	fclose(f);
	return lo >= hi;
}

/* Is [vaddr, vaddr + size) mapped (RSMERR_BAD_ADDR) and writable
 * (RSMERR_PERM_DENIED)? Exported memory may be written by importers. */
int
rsm_probe(void *vaddr, size_t size)
{
	unsigned char vec[256];
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), off, step;

	for (off = 0; off < size; off += step) {
		step = size - off < sizeof(vec) * pg ? size - off :
						       sizeof(vec) * pg;
		if (mincore((char *)vaddr + off, step, vec) != 0)
			return RSMERR_BAD_ADDR;
	}
	/* every page readable and writable: /proc/self/maps (madvise's
	 * MADV_POPULATE_WRITE would also fault the pages in, but needs 5.14) */
	return maps_writable((uintptr_t)vaddr, (uintptr_t)vaddr + size) ?
	       0 : RSMERR_PERM_DENIED;
}

void
rsm_service_event(struct rsm_ctlr *c, struct dpdat_cm_event *ev)
{
	switch (ev->type) {
	case DPDAT_CM_CONNECT_REQUEST:
		rsm_export_request(c, ev);
		break;
	case DPDAT_CM_DISCONNECTED:
	case DPDAT_CM_BROKEN:
	case DPDAT_CM_REJECTED:
	case DPDAT_CM_UNREACHABLE:
		rsm_export_conn_gone(c, ev);
		break;
	default:
		break;
	}
}

void *
rsm_service(void *arg)
{
	struct rsm_ctlr *c = arg;
	struct dpdat_cm_event ev;

	while (!c->stop)
		if (dpdat_cm_eq_wait(c->eq, &ev, 100) == 1)
			rsm_service_event(c, &ev);
	return NULL;
}

int
rsm_get_interconnect_topology(rsm_topology_t **topology_data)
{
	struct rsm_ctlr cfg, *c = &rsm_ctlr0;
	const char *cname = dpdat_env_str("DPDAT_RSM_CONTROLLER");
	rsm_connections_t *conn;
	rsm_topology_t *t;
	unsigned int i, n = 0;
	int r = 0;

	if (topology_data == NULL)
		return RSMERR_BAD_TOPOLOGY_PTR;
	pthread_mutex_lock(&c->lock);
	if (!c->opened) {
		/* the configuration alone, without opening the device */
		memset(&cfg, 0, sizeof(cfg));
		r = ctlr_configure(&cfg);
		c = &cfg;
	}
	if (r != 0)
		goto out;
	t = calloc(1, sizeof(*t));
	conn = calloc(1, sizeof(*conn) +
		      c->n_nodes * sizeof(conn->remote_cntlr[0]));
	if (t == NULL || conn == NULL) {
		free(t);
		free(conn);
		r = RSMERR_INSUFFICIENT_MEM;
		goto out;
	}
	t->topology_hdr.local_nodeid = c->node;
	t->topology_hdr.local_cntlr_count = 1;
	t->connections[0] = conn;
	snprintf(conn->hdr.cntlr_name, sizeof(conn->hdr.cntlr_name), "%s",
		 cname);
	conn->hdr.local_hwaddr = rsm_node_ip(c, c->node);
	for (i = 0; i < c->n_nodes; i++) {
		rsm_remote_cntlr_t *rc = &conn->remote_cntlr[n];

		if (c->nodes[i].id == c->node)
			continue;
		rc->remote_nodeid = c->nodes[i].id;
		snprintf(rc->remote_cntlrname, sizeof(rc->remote_cntlrname),
			 "%s", cname);
		rc->remote_hwaddr = c->nodes[i].ip;
		rc->connection_state = RSM_CONNECTION_ACTIVE;
		n++;
	}
	conn->hdr.remote_cntlr_count = (int)n;
	*topology_data = t;
out:
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	return r;
}

void
rsm_free_interconnect_topology(rsm_topology_t *topology_data)
{
	if (topology_data == NULL)
		return;
	free(topology_data->connections[0]);
	free(topology_data);
}
