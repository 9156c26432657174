/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * memif, dpdat's link between two processes of one host: its entry of the
 * driver table (drv.c) and its quirks. A stale server socket is removed
 * before the probe; a client waits for its server at start; buffers hold
 * a whole frame; the bursts run guarded (guard.c); and the shared memory
 * is faulted in when the link comes up:
 *
 * DPDK 22.11's memif keeps its rings and packet buffers in a memfd
 * ("memif_region_N") that both processes map with 4 KiB pages, and maps it
 * afresh at every connection. Left alone, each page faults on its first
 * use in each process: the first pass over the rings (1024 slots a
 * direction by default, so the first ~1000 round trips) pays several
 * microseconds a message (figures: doc/guides/tools.md, architecture.md
 * section 9). MADV_POPULATE_WRITE (Linux 5.14) builds the page
 * tables of every memif region of the process in one call each, without
 * touching a byte; where the kernel lacks it, nothing is done.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "port_priv.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void
port_memif_prefault(struct dpdat_port *p)
{
	unsigned int regions = 0, failed = 0;
	uintptr_t lo, hi;
	size_t bytes = 0;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "/memfd:memif_region_") == NULL ||
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2 ||
		    hi <= lo)
			continue;
		/* the driver may unmap it meanwhile (the peer went away):
		 * then this fails with ENOMEM and nothing is touched */
		if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0) {
			regions++;
			bytes += hi - lo;
		} else if (errno == EINVAL) {
			failed++;	/* an older kernel */
			break;
		}
	}
	fclose(f);
	if (failed)
		PORT_LOG(DEBUG, "%s: memif memory not faulted in "
			 "(no MADV_POPULATE_WRITE)", p->name);
	else
		PORT_LOG(DEBUG, "%s: memif memory faulted in: %u region(s), "
			 "%zu KiB", p->name, regions, bytes >> 10);
}

/* A memif server socket left by a process that died (nobody accepts on
 * it) would make the probe fail with EADDRINUSE: remove it. */
static int
memif_pre_probe(struct dpdat_port *p, const char *device)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char role[16], path[sizeof(sa.sun_path)];
	int fd;

	RTE_SET_USED(p);
	if ((port_devarg(device, "role", role, sizeof(role)) != NULL &&
	     strcmp(role, "server") != 0) ||
	    port_devarg(device, "socket", path, sizeof(path)) == NULL ||
	    path[0] == '@' || access(path, F_OK) != 0)
		return 0;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
	    errno == ECONNREFUSED && unlink(path) == 0)
		PORT_LOG(NOTICE, "removed %s: a socket nobody serves", path);
	close(fd);
	return 0;
}

/* True for a memif device in the client role (memif's default is server). */
static bool
memif_client(const char *device)
{
	char role[16];

	return port_devarg(device, "role", role, sizeof(role)) != NULL &&
	       strcmp(role, "client") == 0;
}

/* Whether a memif server listens on path: a file, or an abstract socket
 * (memif's default, socket-abstract=yes), which shows as "@path" in
 * /proc/net/unix. */
static bool
memif_listening(const char *path, bool abstract)
{
	char line[512], *name;
	bool found = false;
	size_t n;
	FILE *f;

	if (!abstract)
		return access(path, F_OK) == 0;
	f = fopen("/proc/net/unix", "r");
	if (f == NULL)
		return true;	/* cannot tell: try */
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		n = strcspn(line, "\n");
		line[n] = '\0';
		name = strrchr(line, ' ');
		found = name != NULL && name[1] == '@' &&
			strcmp(name + 2, path) == 0;
	}
	fclose(f);
	return found;
}

/* Start the port. A memif client cannot start until its server's socket
 * accepts (DPDK 22.11 connects once, in dev_start): it waits for up to
 * wait_s seconds, so that two processes can be started in either order,
 * and tries again whenever the socket is there (every 100 ms while it
 * refuses). A server refuses the handshake between its probe, which opens
 * the socket, and its own start ("disabled"), and memif never tries
 * again: a client whose link is not up 2 s after a start stops and starts
 * once more, within the same wait_s. */
static int
memif_start(struct dpdat_port *p, const char *device, unsigned int wait_s)
{
	uint64_t end = rte_get_timer_cycles() + wait_s * rte_get_timer_hz();
	char path[108] = "/run/memif.sock", abs[8] = "yes";	/* defaults */
	bool said = false, abstract;
	int ret;

	if (!memif_client(device))
		return rte_eth_dev_start(p->port_id);
	port_devarg(device, "socket", path, sizeof(path));
	port_devarg(device, "socket-abstract", abs, sizeof(abs));
	abstract = strcmp(abs, "no") != 0;
	for (;;) {
		ret = rte_eth_dev_start(p->port_id);
		if (ret == 0) {
			uint64_t now = rte_get_timer_cycles();

			if (now >= end || port_wait_link(p, RTE_MIN((uint64_t)2000,
			    (end - now) * 1000 / rte_get_timer_hz())) == 0 ||
			    rte_get_timer_cycles() >= end)
				return 0;	/* the link wait decides */
			PORT_LOG(NOTICE, "%s: no memif handshake 2 s after "
				 "connecting: connecting again", p->name);
			rte_eth_dev_stop(p->port_id);
			continue;
		}
		if (rte_get_timer_cycles() >= end)
			break;
		if (!said) {
			PORT_LOG(NOTICE, "%s: waiting up to %u s for a memif "
				 "server at %s%s", p->name, wait_s,
				 abstract ? "@" : "", path);
			said = true;
		}
		do
			rte_delay_us_sleep(100 * 1000);
		while (!memif_listening(path, abstract) &&
		       rte_get_timer_cycles() < end);
	}
	if (ret < 0 && !memif_listening(path, abstract)) {
		PORT_LOG(ERR, "%s: no memif server at %s%s%s", p->name,
			 abstract ? "@" : "", path,
			 wait_s ? " (gave up waiting)" : "");
		ret = -ECONNREFUSED;
	}
	return ret;
}

/* memif chains 2 KiB descriptors for bigger frames by default, and its
 * chained receive path misbehaves when the peer floods it (frames seen
 * again): give it buffers that hold a whole frame unless told otherwise. */
static int
memif_devargs(const char *device, uint16_t mtu, char *out, size_t len)
{
	unsigned int bsize = 2048;

	while (bsize < (unsigned int)mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN)
		bsize <<= 1;
	if (strstr(device, "bsize=") != NULL)
		return snprintf(out, len, "%s", device);
	return snprintf(out, len, "%s,bsize=%u", device, bsize);
}

/* memif is dpdat's own link (no kernel, no switch): it carries what its
 * buffers hold, so its MTU defaults to RoCE's jumbo one, PMTU 4096 plus
 * the headers (a 64 KiB WRITE stream gains over PMTU 1024). A peer with a
 * smaller MTU still gets its own: the CM settles on the lower PMTU. DPDK
 * 22.11's memif advertises a 1500 MTU yet carries frames of any size as
 * descriptor chains: the MTU is dpdat's to keep. */
const struct port_drv port_drv_memif = {
	.name = "net_memif",
	.mtu = 4200,
	.own_mtu = true,
	.queues = true,
	.tx_copies = true,	/* into the shared rings */
	.devargs = memif_devargs,
	.pre_probe = memif_pre_probe,
	.configure = port_guard_enable,
	.start = memif_start,
	.link_up = port_memif_prefault,
};
