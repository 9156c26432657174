/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* pcapng capture of a port's traffic through DPDK's librte_pcapng (an
 * experimental API in 22.11, hence the define). A debugging aid: it copies
 * every frame and writes each burst with one system call. */

#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_pcapng.h>

#include "port_priv.h"

#define CAP_SNAPLEN 4400	/* a PMTU-4096 frame and headers */

struct port_capture {
	rte_pcapng_t *pcapng;
	struct rte_mempool *pool;
	char path[256];
};

int
dpdat_port_capture_start(struct dpdat_port *p, const char *path)
{
	char name[RTE_MEMPOOL_NAMESIZE], file[256];
	struct port_capture *c;
	const char *pp;
	int fd, ret;

	if (p == NULL || p->magic != PORT_MAGIC)
		return -EBADF;
	if (path == NULL)
		return -EINVAL;
	if (p->cap != NULL)
		return -EBUSY;
	/* "%p" becomes the pid: one file per process */
	pp = strstr(path, "%p");
	if (pp != NULL)
		snprintf(file, sizeof(file), "%.*s%d%s", (int)(pp - path), path,
			 (int)getpid(), pp + 2);
	else
		snprintf(file, sizeof(file), "%s", path);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	snprintf(c->path, sizeof(c->path), "%s", file);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		ret = -errno;
		PORT_LOG(ERR, "capture %s: %s", file, strerror(errno));
		free(c);
		return ret;
	}
	snprintf(name, sizeof(name), "dpdat_cap%u", p->port_id);
	c->pool = rte_pktmbuf_pool_create(name, 2047, 64, 0,
					  rte_pcapng_mbuf_size(CAP_SNAPLEN),
					  SOCKET_ID_ANY);
	c->pcapng = rte_pcapng_fdopen(fd, NULL, NULL, "dpdat", p->name);
	if (c->pool == NULL || c->pcapng == NULL) {
		if (c->pcapng != NULL)
			rte_pcapng_close(c->pcapng);
		else
			close(fd);
		rte_mempool_free(c->pool);
		free(c);
		return -ENOMEM;
	}
	p->cap = c;
	PORT_LOG(NOTICE, "%s: capturing to %s", p->name, file);
	return 0;
}

int
dpdat_port_capture_stop(struct dpdat_port *p)
{
	struct port_capture *c;

	if (p == NULL || p->magic != PORT_MAGIC)
		return -EBADF;
	c = p->cap;
	if (c == NULL)
		return -ENOENT;
	p->cap = NULL;
	rte_pcapng_close(c->pcapng);	/* closes the file descriptor */
	rte_mempool_free(c->pool);
	PORT_LOG(NOTICE, "%s: capture %s closed, %lu frames", p->name, c->path,
		 (unsigned long)p->st.captured);
	free(c);
	return 0;
}

/* Copies of n frames, NULL where a copy failed. */
uint16_t
port_capture_copy(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n,
		  struct rte_mbuf **copies, int tx)
{
	const uint64_t now = rte_get_tsc_cycles();
	uint16_t i;

	for (i = 0; i < n; i++) {
		copies[i] = rte_pcapng_copy(p->port_id, 0, pkts[i],
			p->cap->pool, CAP_SNAPLEN, now,
			tx ? RTE_PCAPNG_DIRECTION_OUT : RTE_PCAPNG_DIRECTION_IN);
		if (copies[i] == NULL)
			p->st.capture_lost++;
	}
	return n;
}

/* Write the first keep copies, free the rest. */
void
port_capture_write(struct dpdat_port *p, struct rte_mbuf **copies,
		   uint16_t n, uint16_t keep)
{
	struct rte_mbuf *w[2 * PORT_BURST + 1];
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (copies[i] == NULL)
			continue;
		if (i < keep && k < RTE_DIM(w))
			w[k++] = copies[i];
		else
			rte_pktmbuf_free(copies[i]);
	}
	if (k == 0)
		return;
	if (rte_pcapng_write_packets(p->cap->pcapng, w, k) >= 0)
		p->st.captured += k;
	else
		p->st.capture_lost += k;
}
