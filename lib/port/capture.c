/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* pcapng capture of a port's traffic through DPDK's librte_pcapng (an
 * experimental API in 22.11, hence the define). A debugging aid: it copies
 * every frame and writes each burst with one system call. It costs the
 * bursts nothing while off: received frames are captured by a DPDK receive
 * callback of the port's queue (inside the device burst, so before the
 * receive faults: as the wire carried them), transmitted frames by the
 * port's transmit path (what the device took, after the transmit faults),
 * both installed by dpdat_port_capture_start() and removed by _stop(), on
 * the port's thread or with its engine held. */

#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_pcapng.h>

#include "port_priv.h"

#define CAP_SNAPLEN 4400	/* a PMTU-4096 frame and headers */
#define CAP_BURST (2 * PORT_BURST + 1)	/* a transmit burst under faults */

struct port_capture {
	rte_pcapng_t *pcapng;
	struct rte_mempool *pool;
	char path[256];
};

/* Copies of n frames, NULL where a copy failed. */
static void
capture_copy(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n,
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
}

/* Write the first keep of n copies, free the rest. */
static void
capture_write(struct dpdat_port *p, struct rte_mbuf **copies, uint16_t n,
	      uint16_t keep)
{
	struct rte_mbuf *w[CAP_BURST];
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

/* The receive callback: every frame the device delivered. */
static uint16_t
capture_rx_cb(uint16_t port_id, uint16_t queue, struct rte_mbuf **pkts,
	      uint16_t nb, uint16_t max, void *arg)
{
	struct rte_mbuf *cp[CAP_BURST];
	struct dpdat_port *p = arg;
	uint16_t i, k;

	RTE_SET_USED(port_id);
	RTE_SET_USED(queue);
	RTE_SET_USED(max);
	for (i = 0; i < nb; i += k) {
		k = RTE_MIN(nb - i, CAP_BURST);
		capture_copy(p, pkts + i, k, cp, 0);
		capture_write(p, cp, k, k);
	}
	return nb;
}

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
	snprintf(name, sizeof(name), "dpdat_cap%u_%u", p->port_id, p->queue);
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
	p->cap_rx_cb = rte_eth_add_rx_callback(p->port_id, p->queue, capture_rx_cb,
					       p);
	if (p->cap_rx_cb == NULL) {
		ret = -rte_errno;
		PORT_LOG(ERR, "%s: cannot install the capture: %s", p->name,
			 rte_strerror(rte_errno));
		goto err_close;
	}
	port_path_update(p);
	PORT_LOG(NOTICE, "%s: capturing to %s", p->name, file);
	return 0;

err_close:
	p->cap = NULL;
	rte_pcapng_close(c->pcapng);
	rte_mempool_free(c->pool);
	free(c);
	return ret;
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
	port_rx_cb_remove(p, &p->cap_rx_cb);
	p->cap = NULL;
	port_path_update(p);
	rte_pcapng_close(c->pcapng);	/* closes the file descriptor */
	rte_mempool_free(c->pool);
	PORT_LOG(NOTICE, "%s: capture %s closed, %lu frames", p->name, c->path,
		 (unsigned long)p->st.captured);
	free(c);
	return 0;
}

/* Copies before the burst (the device may free what it sends at once),
 * written for what it took. */
uint16_t
port_capture_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *cp[CAP_BURST];
	uint64_t cut;
	uint16_t sent;

	if (p->cap == NULL)
		return p->dev_tx(p, pkts, n);
	n = RTE_MIN(n, CAP_BURST);
	capture_copy(p, pkts, n, cp, 1);
	cut = p->st.peer_unmapped;
	sent = p->dev_tx(p, pkts, n);
	/* a burst the guard cut short took every frame and sent none */
	capture_write(p, cp, n, p->st.peer_unmapped == cut ? sent : 0);
	return sent;
}
