/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The burst guard (lib/port/guard.c) on a net_ring port whose receive ring
 * lives in memory the test maps itself: unmapping it makes the driver's
 * burst fault the way memif's does when its interrupt thread unmaps a gone
 * peer's rings. A fault in a burst of a port whose link is down is
 * survived and counted; with the link up, and anywhere outside a burst,
 * the process must still die of it.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_port.h>
#include "port_priv.h"
#include "unit_run.h"

#define RING_SLOTS 1024

static struct rte_ring *rx_ring, *tx_ring;
static size_t ring_len;
static struct dpdat_port *port;
static struct rte_mempool *pool;

/* A ring in its own mapping, at the same address every time. */
static struct rte_ring *
ring_map(void *at, const char *name)
{
	void *m = mmap(at, ring_len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		       MAP_ANONYMOUS | (at != NULL ? MAP_FIXED_NOREPLACE : 0),
		       -1, 0);

	if (m == MAP_FAILED || (at != NULL && m != at) ||
	    rte_ring_init(m, name, RING_SLOTS,
			  RING_F_SP_ENQ | RING_F_SC_DEQ) != 0)
		return NULL;
	return m;
}

static int
guard_suite_init(void)
{
	struct dpdat_port_conf pc = { .ipv4 = "198.18.2.1" };
	char name[RTE_ETH_NAME_MAX_LEN];
	int pid;

	ring_len = RTE_ALIGN_CEIL((size_t)rte_ring_get_memsize(RING_SLOTS),
				  (size_t)getpagesize());
	rx_ring = ring_map(NULL, "guard_rx");
	tx_ring = ring_map(NULL, "guard_tx");
	pool = rte_pktmbuf_pool_create("guard", 255, 0, 0, 256, SOCKET_ID_ANY);
	if (rx_ring == NULL || tx_ring == NULL || pool == NULL)
		return -1;
	pid = rte_eth_from_rings("guard", &rx_ring, 1, &tx_ring, 1, 0);
	if (pid < 0 || rte_eth_dev_get_name_by_port((uint16_t)pid, name))
		return -1;
	pc.device = name;
	port = dpdat_port_create(&pc);
	if (port == NULL)
		return -1;
	port_guard_enable(port);	/* as for memif */
	return 0;
}

static int
guard_suite_clean(void)
{
	int ret = dpdat_port_free(port);

	munmap(tx_ring, ring_len);
	munmap(rx_ring, ring_len);
	rte_mempool_free(pool);
	return ret;
}

/* Run fn in a child; its wait status. */
static int
in_child(void (*fn)(void))
{
	int st;
	pid_t c;

	fflush(NULL);
	c = fork();
	if (c == 0) {
		fn();
		_exit(0);	/* it survived */
	}
	if (c < 0 || waitpid(c, &st, 0) != c)
		return -1;
	return st;
}

/* A receive burst on a ring that is gone, the link down: the burst ends
 * early, is counted, and the port keeps working once the ring is back. */
static void
test_unmap_link_down(void)
{
	struct rte_mbuf *pkts[64];
	struct dpdat_port_stats st;

	CU_ASSERT_EQUAL_FATAL(rte_eth_dev_set_link_down(port->port_id), 0);
	CU_ASSERT_EQUAL(munmap(rx_ring, ring_len), 0);
	CU_ASSERT_EQUAL(port_rx(port, pkts, 64), 0);
	CU_ASSERT_EQUAL(port_rx(port, pkts, 64), 0);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.peer_unmapped, 2);
	/* the ring back, at the same address */
	CU_ASSERT_PTR_EQUAL_FATAL(ring_map(rx_ring, "guard_rx"), rx_ring);
	CU_ASSERT_EQUAL(rte_eth_dev_set_link_up(port->port_id), 0);
	CU_ASSERT_EQUAL(port_rx(port, pkts, 64), 0);
	dpdat_port_stats(port, &st);
	CU_ASSERT_EQUAL(st.peer_unmapped, 2);
}

/* How a child killed by a SIGSEGV ends: by the signal, or under
 * AddressSanitizer by its report, then exit(1) or abort() (as meson's
 * ASAN_OPTIONS ask). */
static int
died_of_segv(int st)
{
#if defined(__SANITIZE_ADDRESS__)
	return (WIFEXITED(st) && WEXITSTATUS(st) != 0) ||
	       (WIFSIGNALED(st) && (WTERMSIG(st) == SIGSEGV ||
				    WTERMSIG(st) == SIGABRT));
#else
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
#endif
}

/* The same on transmit: the burst takes the frames and sends none (the
 * counters say so); the ring back, frames go out again. */
static void
test_unmap_tx_link_down(void)
{
	struct dpdat_port_stats before, cut, after;
	struct rte_mbuf *m[4], *out[4];

	CU_ASSERT_EQUAL_FATAL(rte_pktmbuf_alloc_bulk(pool, m, 4), 0);
	for (int i = 0; i < 4; i++)
		rte_pktmbuf_append(m[i], 60);
	dpdat_port_stats(port, &before);
	CU_ASSERT_EQUAL_FATAL(rte_eth_dev_set_link_down(port->port_id), 0);
	CU_ASSERT_EQUAL(munmap(tx_ring, ring_len), 0);
	/* m[0] and m[1] go down with the ring: lost, as in a cut burst */
	CU_ASSERT_EQUAL(port_tx(port, m, 2), 2);
	dpdat_port_stats(port, &cut);
	CU_ASSERT_EQUAL(cut.peer_unmapped, before.peer_unmapped + 1);
	CU_ASSERT_EQUAL(cut.tx_pkts, before.tx_pkts);
	CU_ASSERT_EQUAL(cut.tx_bytes, before.tx_bytes);
	CU_ASSERT_EQUAL(cut.drop_tx_full, before.drop_tx_full);
	CU_ASSERT_PTR_EQUAL_FATAL(ring_map(tx_ring, "guard_tx"), tx_ring);
	CU_ASSERT_EQUAL(rte_eth_dev_set_link_up(port->port_id), 0);
	CU_ASSERT_EQUAL(port_tx(port, m + 2, 2), 2);
	dpdat_port_stats(port, &after);
	CU_ASSERT_EQUAL(after.tx_pkts, cut.tx_pkts + 2);
	CU_ASSERT_EQUAL(after.tx_bytes, cut.tx_bytes + 120);
	CU_ASSERT_EQUAL(after.peer_unmapped, cut.peer_unmapped);
	CU_ASSERT_EQUAL(rte_ring_dequeue_burst(tx_ring, (void **)out, 4,
					       NULL), 2);
	rte_pktmbuf_free_bulk(out, 2);
}

static void
burst_link_up_unmapped(void)
{
	struct rte_mbuf *pkts[64];

	munmap(rx_ring, ring_len);
	port_rx(port, pkts, 64);
}

/* The same fault with the link up is not the race: it is not caught, and
 * kills where it happened (a sanitizer's report shows the driver). */
static void
test_unmap_link_up_kills(void)
{
	printf("(a child crashes on purpose now) ");
	CU_ASSERT_TRUE(died_of_segv(in_child(burst_link_up_unmapped)));
}

static void
fault_outside(void)
{
	volatile int *volatile bad = (volatile int *)(uintptr_t)8;

	*bad = 1;
}

static void
sent_segv(void)
{
	kill(getpid(), SIGSEGV);
}

/* Faults outside a burst, and SIGSEGV sent by kill(), still end the
 * process, as they would without the guard. */
static void
test_other_faults_kill(void)
{
	int st;

	printf("(children crash on purpose now; a sanitizer reports them)\n");
	st = in_child(fault_outside);
	CU_ASSERT_TRUE(died_of_segv(st));
	st = in_child(sent_segv);
	CU_ASSERT_TRUE(died_of_segv(st));
}

static CU_TestInfo guard_tests[] = {
	{ "unmapped ring, link down: burst cut short", test_unmap_link_down },
	{ "unmapped transmit ring, link down: taken, not sent",
	  test_unmap_tx_link_down },
	{ "unmapped ring, link up: the fault kills",
	  test_unmap_link_up_kills },
	{ "faults outside bursts still kill", test_other_faults_kill },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "port_guard", guard_suite_init, guard_suite_clean, NULL, NULL,
	  guard_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	(void)argc;
	return unit_run_eal(argv[0], suites, NULL, NULL);
}
