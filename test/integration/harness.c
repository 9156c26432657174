/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>

#include "harness.h"
#include "port_priv.h"

const char *h_role = "test";
void (*h_after_eal)(void);

double
h_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

unsigned int h_queues;

struct dpdat_dev *
h_open(int server, const char *sock, uint16_t mtu,
       enum dpdat_progress progress)
{
	struct dpdat_eal_conf ec = { .program = "dpdat-test", .mem_mb = 512 };
	struct dpdat_dev_conf dc = { .progress = progress };
	struct dpdat_dev *dev;
	char devargs[300];

	h_role = server ? "server" : "client";
	if (dpdat_eal_init(&ec) < 0)
		H_FAIL("EAL");
	if (h_after_eal != NULL)
		h_after_eal();
	snprintf(devargs, sizeof(devargs), "net_memif0,role=%s,socket=%s",
		 h_role, sock);
	dc.port.device = devargs;
	dc.port.ipv4 = server ? "198.18.0.1" : "198.18.0.2";
	dc.port.mtu = mtu;
	/* between two namespaces (run2-netns.sh): the interface's address
	 * and MTU */
	if (getenv("DPDAT_TEST_DEV") != NULL) {
		dc.port.device = getenv("DPDAT_TEST_DEV");
		dc.port.ipv4 = "auto";
		dc.port.mtu = 0;
	}
	dc.port.link_wait_s = 20;
	dc.port.queues = h_queues;
	dev = dpdat_dev_open(&dc);
	if (dev == NULL)
		H_FAIL("dev_open: %s", rte_strerror(rte_errno));
	return dev;
}

void
h_exchange(const char *sock, int server, char (*mine)[256],
	   char (*theirs)[256], int n)
{
	char me[512], peer[512], tmp[520];
	FILE *f;
	int i;

	snprintf(me, sizeof(me), "%s.%s", sock, server ? "srv" : "cli");
	snprintf(peer, sizeof(peer), "%s.%s", sock, server ? "cli" : "srv");
	snprintf(tmp, sizeof(tmp), "%s.tmp", me);
	f = fopen(tmp, "w");
	if (f == NULL)
		H_FAIL("cannot write %s", tmp);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", mine[i]);
	fclose(f);
	rename(tmp, me);
	for (i = 0; access(peer, R_OK) != 0; i++) {
		if (i > 3000)
			H_FAIL("no peer details in %s", peer);
		usleep(10000);
	}
	f = fopen(peer, "r");
	for (i = 0; i < n; i++) {
		if (fgets(theirs[i], 256, f) == NULL)
			H_FAIL("short peer details");
		theirs[i][strcspn(theirs[i], "\n")] = '\0';
	}
	fclose(f);
}

void
h_addr_str(struct dpdat_dev *dev, char *out, size_t len)
{
	struct dpdat_port_info pi;
	const uint8_t *m;

	dpdat_port_query(dpdat_dev_port(dev), &pi);
	m = pi.mac.addr_bytes;
	snprintf(out, len, "%u %u %u %u %u %u %u", pi.ipv4, m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

void
h_addr_parse(const char *s, struct dpdat_qp_remote *r)
{
	unsigned int m[6];

	if (sscanf(s, "%u %u %u %u %u %u %u", &r->ipv4, &m[0], &m[1], &m[2],
		   &m[3], &m[4], &m[5]) != 7)
		H_FAIL("bad address '%s'", s);
	for (int i = 0; i < 6; i++)
		r->mac.addr_bytes[i] = (uint8_t)m[i];
}

unsigned int
h_dev_slack(struct dpdat_port *port)
{
	return port->drv->tx_held;
}

int
h_wait(struct dpdat_cq *cq, struct dpdat_wc *wc, double timeout_s)
{
	double t0 = h_now();
	int n;

	while ((n = dpdat_cq_poll(cq, wc, 1)) == 0)
		if (h_now() - t0 > timeout_s)
			return -1;
	return n == 1 ? 0 : -1;
}
