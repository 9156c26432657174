/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Two processes over a memif link, one per role:
 *   port_echo server <socket> <count>   198.18.0.1, echoes RoCE frames
 *   port_echo client <socket> <count>   198.18.0.2, resolves the server by
 *                                       ARP, sends <count> frames, checks
 *                                       every echo (ICRC, PSN, payload)
 * Bounded in time; exit status 0 only when every frame came back intact.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_port.h>
#include "port_priv.h"
#include "roce.h"

#define SERVER_IP "198.18.0.1"
#define CLIENT_IP "198.18.0.2"
#define PAYLOAD 1024
#define TIMEOUT_S 20

static double
elapsed(uint64_t t0)
{
	return (double)(rte_get_tsc_cycles() - t0) / rte_get_tsc_hz();
}

/* A WRITE ONLY frame with PSN psn and a payload derived from it. */
static struct rte_mbuf *
build(struct dpdat_port *p, uint32_t psn)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	struct roce_bth *bth;
	struct roce_reth *reth;
	uint8_t *pay;
	unsigned int k;

	if (m == NULL)
		return NULL;
	bth = (struct roce_bth *)rte_pktmbuf_append(m, sizeof(*bth) +
		sizeof(*reth) + PAYLOAD);
	if (bth == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(bth, 0, sizeof(*bth));
	bth->opcode = ROCE_OP_WRITE_ONLY;
	bth->pkey = rte_cpu_to_be_16(ROCE_PKEY_DEFAULT);
	bth->qpn = rte_cpu_to_be_32(0x11);
	bth->apsn = rte_cpu_to_be_32(psn);
	reth = (struct roce_reth *)(bth + 1);
	reth->dlen = rte_cpu_to_be_32(PAYLOAD);
	pay = (uint8_t *)(reth + 1);
	for (k = 0; k < PAYLOAD; k++)
		pay[k] = (uint8_t)(psn * 7 + k);
	return m;
}

static int
check(struct rte_mbuf *m, uint32_t *psn)
{
	uint8_t buf[2048];
	const uint8_t *f = rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), buf);
	unsigned int len = rte_pktmbuf_pkt_len(m), k;
	const struct roce_bth *bth;
	const uint8_t *pay, *t;
	uint32_t icrc;

	if (f == NULL || len != PORT_HDR_LEN + 12 + 16 + PAYLOAD + 4)
		return -EINVAL;
	t = f + len - 4;
	icrc = t[0] | t[1] << 8 | t[2] << 16 | (uint32_t)t[3] << 24;
	if (roce_icrc_mbuf(m, sizeof(struct rte_ether_hdr)) != icrc)
		return -EBADMSG;
	bth = (const struct roce_bth *)(f + PORT_HDR_LEN);
	*psn = roce_bth_psn(bth);
	pay = f + PORT_HDR_LEN + 12 + 16;
	for (k = 0; k < PAYLOAD; k++)
		if (pay[k] != (uint8_t)(*psn * 7 + k))
			return -EIO;
	return 0;
}

static int
run_server(struct dpdat_port *p, unsigned int count)
{
	struct rte_mbuf *pkts[PORT_BURST];
	const struct rte_ipv4_hdr *ip;
	struct rte_ether_addr mac;
	unsigned int got = 0;
	uint64_t t0 = rte_get_tsc_cycles();
	uint16_t n, i;
	uint32_t psn, src;

	while (got < count && elapsed(t0) < TIMEOUT_S) {
		n = port_rx(p, pkts, PORT_BURST);
		for (i = 0; i < n; i++) {
			if (check(pkts[i], &psn) != 0) {
				fprintf(stderr, "server: bad frame\n");
				return 1;
			}
			ip = rte_pktmbuf_mtod_offset(pkts[i],
				const struct rte_ipv4_hdr *,
				sizeof(struct rte_ether_hdr));
			src = ip->src_addr;
			mac = rte_pktmbuf_mtod(pkts[i],
				const struct rte_ether_hdr *)->src_addr;
			rte_pktmbuf_free(pkts[i]);
			pkts[i] = build(p, psn);
			if (pkts[i] == NULL ||
			    port_frame(p, pkts[i], src, &mac, 0xc000) != 0)
				return 1;
			port_tx(p, &pkts[i], 1);
			got++;
		}
		port_timer(p);
	}
	printf("server: echoed %u/%u frames\n", got, count);
	return got == count ? 0 : 1;
}

static int
run_client(struct dpdat_port *p, unsigned int count)
{
	struct rte_mbuf *pkts[PORT_BURST], *m;
	struct rte_ether_addr mac;
	uint32_t server, psn, next = 0;
	unsigned int got = 0, inflight = 0;
	uint64_t t0 = rte_get_tsc_cycles();
	uint8_t *seen = calloc(count, 1);
	uint16_t n, i;
	int ret;

	inet_pton(AF_INET, SERVER_IP, &server);
	while ((ret = port_resolve(p, server, &mac)) == -EAGAIN &&
	       elapsed(t0) < TIMEOUT_S) {
		n = port_rx(p, pkts, PORT_BURST);
		rte_pktmbuf_free_bulk(pkts, n);
		port_timer(p);
	}
	if (ret != 0) {
		fprintf(stderr, "client: ARP for %s: %s\n", SERVER_IP,
			strerror(-ret));
		return 1;
	}
	printf("client: %s is at " RTE_ETHER_ADDR_PRT_FMT " (%.3f s)\n",
	       SERVER_IP, RTE_ETHER_ADDR_BYTES(&mac), elapsed(t0));
	while (got < count && elapsed(t0) < TIMEOUT_S) {
		while (next < count && inflight < 64) {
			m = build(p, next);
			if (m == NULL || port_frame(p, m, server, &mac,
						    0xc000) != 0)
				break;
			if (port_tx(p, &m, 1) == 1) {
				inflight++;
				next++;
			}
		}
		n = port_rx(p, pkts, PORT_BURST);
		for (i = 0; i < n; i++) {
			if (check(pkts[i], &psn) != 0 || psn >= count ||
			    seen[psn]) {
				fprintf(stderr, "client: bad echo\n");
				return 1;
			}
			seen[psn] = 1;
			got++;
			inflight--;
			rte_pktmbuf_free(pkts[i]);
		}
	}
	printf("client: %u/%u echoes intact\n", got, count);
	free(seen);
	return got == count ? 0 : 1;
}

/* Of the memif shared memory mapped here, the KiB mapped and the KiB
 * resident (smaps: Size, Rss). */
static void
memif_resident(unsigned long *size, unsigned long *rss)
{
	char line[512];
	unsigned long v;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	*size = *rss = 0;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strchr(line, '-') != NULL && strchr(line, ':') != NULL &&
		    line[0] != ' ' && strstr(line, " kB") == NULL)
			in = strstr(line, "/memfd:memif_region_") != NULL;
		else if (in && sscanf(line, "Size: %lu kB", &v) == 1)
			*size += v;
		else if (in && sscanf(line, "Rss: %lu kB", &v) == 1)
			*rss += v;
	}
	fclose(f);
}

/* Whether this kernel has MADV_POPULATE_WRITE (5.14), which dpdat's
 * prefault needs. */
static int
can_populate(void)
{
	size_t len = (size_t)getpagesize();
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok;

	if (m == MAP_FAILED)
		return 0;
	ok = madvise(m, len, 23 /* MADV_POPULATE_WRITE */) == 0;
	munmap(m, len);
	return ok;
}

int
main(int argc, char **argv)
{
	unsigned long size, rss;
	struct dpdat_eal_conf ec = { .program = argv[0] };
	struct dpdat_port_conf pc = { .link_wait_s = 10 };
	struct dpdat_port_stats st;
	struct dpdat_port *p;
	char dev[256];
	int server, ret;

	if (argc != 4) {
		fprintf(stderr, "usage: %s server|client <socket> <count>\n",
			argv[0]);
		return 2;
	}
	server = strcmp(argv[1], "server") == 0;
	if (dpdat_eal_init(&ec) < 0)
		return 1;
	snprintf(dev, sizeof(dev), "net_memif0,role=%s,socket=%s",
		 server ? "server" : "client", argv[2]);
	pc.device = dev;
	pc.ipv4 = server ? SERVER_IP : CLIENT_IP;
	p = dpdat_port_create(&pc);
	if (p == NULL) {
		fprintf(stderr, "port: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	/* the link is up: its first timer faults the shared memory in, so
	 * that the first pass over the rings takes no page faults */
	port_timer(p);
	memif_resident(&size, &rss);
	printf("%s: memif memory %lu KiB, %lu KiB resident before any "
	       "traffic\n", argv[1], size, rss);
	if (!can_populate())
		printf("%s: the kernel has no MADV_POPULATE_WRITE (before "
		       "5.14): not checked\n", argv[1]);
	else if (size == 0 || rss < size) {
		fprintf(stderr, "%s: memif memory not faulted in\n", argv[1]);
		return 1;
	}
	ret = server ? run_server(p, (unsigned int)atoi(argv[3])) :
		       run_client(p, (unsigned int)atoi(argv[3]));
	dpdat_port_stats(p, &st);
	printf("%s: rx %lu tx %lu roce %lu arp rx %lu tx %lu drops %lu/%lu/%lu\n",
	       argv[1], st.rx_pkts, st.tx_pkts, st.rx_roce, st.rx_arp,
	       st.tx_arp, st.drop_not_ours, st.drop_malformed, st.drop_tx_full);
	/* let the peer drain before the link goes away */
	rte_delay_us_sleep(200 * 1000);
	dpdat_port_free(p);
	dpdat_eal_cleanup();
	return ret;
}
