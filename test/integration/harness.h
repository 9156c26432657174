/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_TEST_HARNESS_H
#define DPDAT_TEST_HARNESS_H

/* Shared plumbing of the two-process tests: device bring-up over memif, an
 * out-of-band exchange of lines through files next to the memif socket,
 * waiting for completions with a deadline. */

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_qp.h>

extern const char *h_role;	/* "server" or "client", for messages */

#define H_FAIL(...) do { fprintf(stderr, "%s: ", h_role); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* EAL + device on one end of the memif at sock (server: 198.18.0.1);
 * h_after_eal, when set, runs between the two. */
extern void (*h_after_eal)(void);
/* Queues of the port h_open() brings up (dpdat_port_conf.queues). */
extern unsigned int h_queues;
struct dpdat_dev *h_open(int server, const char *sock, uint16_t mtu,
			 enum dpdat_progress progress);

/* Publish our n lines, read the peer's n lines (each < 256 chars). */
void h_exchange(const char *sock, int server, char (*mine)[256],
		char (*theirs)[256], int n);

/* Our address as "ip m0 m1 m2 m3 m4 m5" and its parser. */
void h_addr_str(struct dpdat_dev *dev, char *out, size_t len);
void h_addr_parse(const char *s, struct dpdat_qp_remote *r);

/* One completion within timeout_s, or -1. */
int h_wait(struct dpdat_cq *cq, struct dpdat_wc *wc, double timeout_s);

double h_now(void);
/* The server's address for a client to connect to: DPDAT_TEST_SERVER's
 * (one application of several on a host, test/integration/
 * multiapp_netns.sh) or 198.18.0.1. -1 when the setting is no address. */
static inline int
h_server_ip(uint32_t *ip)
{
	const char *s = getenv("DPDAT_TEST_SERVER");

	return inet_pton(AF_INET, s != NULL ? s : "198.18.0.1", ip) == 1 ?
		0 : -1;
}

/* Sent mbufs the device may still hold when a test counts its pool: DPDK
 * 22.11's af_xdp takes its transmit completions back only once half of its
 * 2048-entry completion ring has filled (af_xdp_tx_zc), so up to 1024 sent
 * mbufs wait there; memif and ring keep none. */
unsigned int h_dev_slack(struct dpdat_port *port);

/* Whether the resident set can tell a leak: not under AddressSanitizer,
 * whose quarantine holds freed memory (hundreds of MiB); LeakSanitizer
 * finds the leaks there. */
#if defined(__SANITIZE_ADDRESS__)
#define H_RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define H_RSS_CHECKED 0
#endif
#endif
#ifndef H_RSS_CHECKED
#define H_RSS_CHECKED 1
#endif

#endif
