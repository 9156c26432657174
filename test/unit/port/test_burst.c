/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The port's bursts on a net_ring port, with the optional work (fault
 * injection, capture) off and on. Off, a receive burst fills the caller's
 * whole array (no room kept for duplicates nobody injects); with receive
 * faults on, the device is asked for fewer frames so that every duplicate
 * has room (a caller with too little room loses them, counted); the
 * capture sees the frames as the wire carried them (before the receive
 * faults), and off again nothing of either is left.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_port.h>
#include "port_priv.h"
#include "roce.h"
#include "unit_run.h"

#define RING_SLOTS 1024
#define BTH_LEN 12

static struct rte_ring *rx_ring, *tx_ring;
static struct dpdat_port *port;
static char cap_path[64];

static int
burst_suite_init(void)
{
	struct dpdat_port_conf pc = { .ipv4 = "198.18.3.1" };
	char name[RTE_ETH_NAME_MAX_LEN];
	int pid;

	rx_ring = rte_ring_create("burst_rx", RING_SLOTS, SOCKET_ID_ANY,
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	tx_ring = rte_ring_create("burst_tx", RING_SLOTS, SOCKET_ID_ANY,
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (rx_ring == NULL || tx_ring == NULL)
		return -1;
	pid = rte_eth_from_rings("burst", &rx_ring, 1, &tx_ring, 1, 0);
	if (pid < 0 || rte_eth_dev_get_name_by_port((uint16_t)pid, name))
		return -1;
	pc.device = name;
	port = dpdat_port_create(&pc);
	snprintf(cap_path, sizeof(cap_path), "/tmp/dpdat-burst-%d.pcapng",
		 (int)getpid());
	return port != NULL ? 0 : -1;
}

static int
burst_suite_clean(void)
{
	int ret = dpdat_port_free(port);

	unlink(cap_path);
	rte_ring_free(tx_ring);
	rte_ring_free(rx_ring);
	return ret;
}

/* A RoCEv2 frame for the port, as a peer would send it. */
static struct rte_mbuf *
roce_frame(void)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(port->pool);
	char *bth;

	if (m == NULL)
		return NULL;
	bth = rte_pktmbuf_append(m, BTH_LEN);
	memset(bth, 0, BTH_LEN);
	if (port_frame(port, m, port->ip, &port->mac, 49152) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

/* n frames waiting in the port's receive ring. */
static int
arrive(unsigned int n)
{
	struct rte_mbuf *m;

	for (unsigned int i = 0; i < n; i++) {
		m = roce_frame();
		if (m == NULL || rte_ring_enqueue(rx_ring, m) != 0)
			return -1;
	}
	return 0;
}

/* Receive until the ring is empty; the size of each burst in sizes. */
static unsigned int
drain(unsigned int *sizes, unsigned int max_bursts)
{
	struct rte_mbuf *pkts[PORT_BURST];
	unsigned int k = 0, total = 0;
	uint16_t n;

	while (k < max_bursts && (n = port_rx(port, pkts, PORT_BURST)) != 0) {
		sizes[k++] = n;
		total += n;
		rte_pktmbuf_free_bulk(pkts, n);
	}
	return total;
}

static unsigned int
tx_ring_drain(void)
{
	struct rte_mbuf *out[64];
	unsigned int n, total = 0;

	while ((n = rte_ring_dequeue_burst(tx_ring, (void **)out, 64,
					   NULL)) != 0) {
		rte_pktmbuf_free_bulk(out, n);
		total += n;
	}
	return total;
}

/* Faults off: the burst fills the caller's array. */
static void
test_full_burst(void)
{
	unsigned int sizes[4] = { 0 };

	CU_ASSERT_EQUAL_FATAL(arrive(PORT_BURST + 8), 0);
	CU_ASSERT_EQUAL(drain(sizes, 4), PORT_BURST + 8);
	CU_ASSERT_EQUAL(sizes[0], PORT_BURST);
	CU_ASSERT_EQUAL(sizes[1], 8);
}

/* Receive duplicates: each one made and counted, the device asked for
 * (PORT_BURST - 1) / 2 frames while faults are on; a caller with room for
 * one frame gets it, its duplicate is counted as not made. Off again, full
 * bursts and no more duplicates. */
static void
test_rx_dup(void)
{
	struct dpdat_fault_conf fc = { .rx = { .dup = 1 }, .seed = 3 };
	struct dpdat_port_stats st0, st;
	unsigned int sizes[8] = { 0 };
	uint64_t lost0 = port->fault_dup_lost;
	struct rte_mbuf *one;

	dpdat_port_stats(port, &st0);
	CU_ASSERT_EQUAL_FATAL(dpdat_port_set_faults(port, &fc), 0);
	CU_ASSERT_EQUAL_FATAL(arrive(8), 0);
	CU_ASSERT_EQUAL(drain(sizes, 8), 16);
	CU_ASSERT_EQUAL(sizes[0], 16);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.fault_dup, st0.fault_dup + 8);
	CU_ASSERT_EQUAL(st.rx_roce, st0.rx_roce + 16);
	/* more than a burst waiting: every frame and its duplicate */
	CU_ASSERT_EQUAL_FATAL(arrive(PORT_BURST), 0);
	memset(sizes, 0, sizeof(sizes));
	CU_ASSERT_EQUAL(drain(sizes, 8), 2 * PORT_BURST);
	CU_ASSERT_EQUAL(sizes[0], 2 * ((PORT_BURST - 1) / 2));
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.fault_dup, st0.fault_dup + 8 + PORT_BURST);
	CU_ASSERT_EQUAL(port->fault_dup_lost, lost0);
	/* no room for a duplicate */
	CU_ASSERT_EQUAL_FATAL(arrive(1), 0);
	CU_ASSERT_EQUAL(port_rx(port, &one, 1), 1);
	rte_pktmbuf_free(one);
	CU_ASSERT_EQUAL(port->fault_dup_lost, lost0 + 1);
	CU_ASSERT_EQUAL(dpdat_port_set_faults(port, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(arrive(PORT_BURST), 0);
	memset(sizes, 0, sizeof(sizes));
	CU_ASSERT_EQUAL(drain(sizes, 8), PORT_BURST);
	CU_ASSERT_EQUAL(sizes[0], PORT_BURST);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.fault_dup, st0.fault_dup + 8 + PORT_BURST);
}

/* A fault window: only the first frames of the direction are faulted
 * (every one dropped here), the rest pass; setting the faults again opens
 * a new window. */
static void
test_rx_frames(void)
{
	struct dpdat_fault_conf fc = { .rx = { .drop = 1 }, .frames = 5 };
	struct dpdat_port_stats st0, st;
	unsigned int sizes[8] = { 0 };

	dpdat_port_stats(port, &st0);
	CU_ASSERT_EQUAL_FATAL(dpdat_port_set_faults(port, &fc), 0);
	CU_ASSERT_EQUAL_FATAL(arrive(8), 0);
	CU_ASSERT_EQUAL(drain(sizes, 8), 3);
	CU_ASSERT_EQUAL_FATAL(arrive(8), 0);
	CU_ASSERT_EQUAL(drain(sizes, 8), 8);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.fault_drop, st0.fault_drop + 5);
	CU_ASSERT_EQUAL_FATAL(dpdat_port_set_faults(port, &fc), 0);
	CU_ASSERT_EQUAL_FATAL(arrive(6), 0);
	CU_ASSERT_EQUAL(drain(sizes, 8), 1);
	CU_ASSERT_EQUAL(dpdat_port_set_faults(port, NULL), 0);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.fault_drop, st0.fault_drop + 10);
}

/* Frames leave Not-ECT (DPDAT_ECN's default), or ECT(0) when the port
 * says so; receive faults with ce 1 mark every ECT one CE, header
 * checksum still right, and count them, and leave Not-ECT ones alone (a
 * marking queue drops those instead). */
static void
test_rx_ce(void)
{
	struct dpdat_fault_conf fc = { .rx = { .ce = 1 }, .seed = 9 };
	struct dpdat_port_stats st0, st;
	struct rte_mbuf *pkts[PORT_BURST];
	struct rte_ipv4_hdr *ip;
	uint16_t n, sum;

	dpdat_port_stats(port, &st0);
	CU_ASSERT_EQUAL_FATAL(dpdat_port_set_faults(port, &fc), 0);
	CU_ASSERT_EQUAL_FATAL(arrive(1), 0);	/* Not-ECT */
	CU_ASSERT_EQUAL_FATAL(port_rx(port, pkts, PORT_BURST), 1);
	ip = rte_pktmbuf_mtod_offset(pkts[0], struct rte_ipv4_hdr *,
				     sizeof(struct rte_ether_hdr));
	CU_ASSERT_EQUAL(ip->type_of_service & 3, 0);
	rte_pktmbuf_free(pkts[0]);
	port->tos = ROCE_ECN_ECT0;
	CU_ASSERT_EQUAL_FATAL(arrive(4), 0);
	port->tos = 0;
	n = port_rx(port, pkts, PORT_BURST);
	CU_ASSERT_EQUAL(n, 4);
	for (uint16_t i = 0; i < n; i++) {
		ip = rte_pktmbuf_mtod_offset(pkts[i], struct rte_ipv4_hdr *,
					     sizeof(struct rte_ether_hdr));
		CU_ASSERT_EQUAL(ip->type_of_service & 3, 3);
		sum = ip->hdr_checksum;
		ip->hdr_checksum = 0;
		CU_ASSERT_EQUAL(rte_ipv4_cksum(ip), sum);
	}
	rte_pktmbuf_free_bulk(pkts, n);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.fault_ce, st0.fault_ce + 4);
	CU_ASSERT_EQUAL(dpdat_port_set_faults(port, NULL), 0);
}

/* Transmit faults act like the wire: every frame handed over is taken,
 * each duplicate goes out too. */
static void
test_tx_dup(void)
{
	struct dpdat_fault_conf fc = { .tx = { .dup = 1 }, .seed = 5 };
	struct dpdat_port_stats st0, st;
	struct rte_mbuf *m[4];

	for (int i = 0; i < 4; i++)
		CU_ASSERT_PTR_NOT_NULL_FATAL(m[i] = roce_frame());
	dpdat_port_stats(port, &st0);
	CU_ASSERT_EQUAL_FATAL(dpdat_port_set_faults(port, &fc), 0);
	CU_ASSERT_EQUAL(port_tx(port, m, 4), 4);
	CU_ASSERT_EQUAL(dpdat_port_set_faults(port, NULL), 0);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.fault_dup, st0.fault_dup + 4);
	CU_ASSERT_EQUAL(st.tx_pkts, st0.tx_pkts + 8);
	CU_ASSERT_EQUAL(tx_ring_drain(), 8);
	/* off: one frame, one frame out */
	CU_ASSERT_PTR_NOT_NULL_FATAL(m[0] = roce_frame());
	CU_ASSERT_EQUAL(port_tx(port, m, 1), 1);
	CU_ASSERT_EQUAL(tx_ring_drain(), 1);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.fault_dup, st0.fault_dup + 4);
}

/* The capture writes received frames as they arrived (before the receive
 * faults) and transmitted frames the device took; stopped, it counts no
 * more. */
static void
test_capture(void)
{
	struct dpdat_fault_conf fc = { .rx = { .dup = 1 }, .seed = 7 };
	struct dpdat_port_stats st0, st;
	unsigned int sizes[4] = { 0 };
	struct rte_mbuf *m[2];

	dpdat_port_stats(port, &st0);
	CU_ASSERT_EQUAL_FATAL(dpdat_port_set_faults(port, &fc), 0);
	CU_ASSERT_EQUAL_FATAL(dpdat_port_capture_start(port, cap_path), 0);
	CU_ASSERT_EQUAL(dpdat_port_capture_start(port, cap_path), -EBUSY);
	CU_ASSERT_EQUAL_FATAL(arrive(4), 0);
	CU_ASSERT_EQUAL(drain(sizes, 4), 8);
	for (int i = 0; i < 2; i++)
		CU_ASSERT_PTR_NOT_NULL_FATAL(m[i] = roce_frame());
	CU_ASSERT_EQUAL(port_tx(port, m, 2), 2);
	CU_ASSERT_EQUAL(tx_ring_drain(), 2);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.captured, st0.captured + 6);
	CU_ASSERT_EQUAL(st.capture_lost, st0.capture_lost);
	CU_ASSERT_EQUAL(dpdat_port_set_faults(port, NULL), 0);
	CU_ASSERT_EQUAL(dpdat_port_capture_stop(port), 0);
	CU_ASSERT_EQUAL(dpdat_port_capture_stop(port), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(arrive(3), 0);
	CU_ASSERT_EQUAL(drain(sizes, 4), 3);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.captured, st0.captured + 6);
}

/* Several queues: memif only; a port of one queue has none to attach. */
static void
test_queues_refused(void)
{
	struct dpdat_port_conf pc = { .ipv4 = "198.18.3.1" };
	struct dpdat_port_info pi;
	unsigned int sizes[4];

	CU_ASSERT_EQUAL_FATAL(dpdat_port_query(port, &pi), 0);
	pc.device = pi.name;
	pc.queues = 17;
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_port_create(&pc));
	CU_ASSERT_EQUAL(rte_errno, EINVAL);
	pc.queues = 2;		/* net_ring: no queues of dpdat's yet */
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_port_create(&pc));
	CU_ASSERT_EQUAL(rte_errno, ENOTSUP);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_port_attach(port));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_port_attach(NULL));
	CU_ASSERT_EQUAL(rte_errno, EBADF);
	CU_ASSERT_EQUAL(dpdat_port_queue(port), 0);
	CU_ASSERT_EQUAL(dpdat_port_queue(NULL), -EBADF);
	/* the port still works */
	CU_ASSERT_EQUAL_FATAL(arrive(2), 0);
	CU_ASSERT_EQUAL(drain(sizes, 4), 2);
}

static CU_TestInfo burst_tests[] = {
	{ "faults off: a full burst", test_full_burst },
	{ "receive duplicates: all made, counted", test_rx_dup },
	{ "receive drops in the first frames only", test_rx_frames },
	{ "ECT(0) out, CE marks in, counted", test_rx_ce },
	{ "transmit duplicates: all taken, all sent", test_tx_dup },
	{ "capture: what the wire carried, then nothing", test_capture },
	{ "queues: memif only, none to attach to one", test_queues_refused },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "port_burst", burst_suite_init, burst_suite_clean, NULL, NULL,
	  burst_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	(void)argc;
	return unit_run_eal(argv[0], suites, NULL, NULL);
}
