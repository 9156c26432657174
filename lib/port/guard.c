/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Bursts that survive a memif peer going away.
 *
 * DPDK 22.11's memif driver tears a connection down in the EAL interrupt
 * thread (memif_disconnect): it marks the link down, then unmaps the shared
 * regions and frees their descriptors. A burst that has already passed the
 * driver's "connected" test on the polling thread goes on reading the rings
 * and faults (SIGSEGV) when it was preempted across that window. Nothing
 * outside the driver can order the two threads, so the bursts of a memif
 * port run guarded: the signal handler sees that the fault happened inside
 * a burst of a port whose link is down (the driver marks it so before it
 * unmaps) and jumps back to the burst's caller, which counts the burst as
 * cut short (peer_unmapped) and goes on.
 *
 * A fault inside a burst with the link up is no such race (a driver bug,
 * or a peer that truncated its memfd under a live link: SIGBUS): it goes,
 * like every fault outside a burst, to the handler that was there before
 * ours (the default one, or a sanitizer's), so the crash is reported where
 * it happened.
 *
 * The guard is not optional work: a memif port needs it for as long as it
 * lives. port_guard_enable() makes these the port's device bursts when it
 * is configured; other ports call the device directly, with no test for
 * it. The capture's receive callback runs inside the guarded burst, after
 * the driver's part.
 *
 * Not covered: a poller held inside one burst for the whole of a
 * disconnect and a new connection (server role: the new client's regions
 * may be mapped where the old ones were) sees the new rings with the old
 * burst's state, as it would without the guard.
 */

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "port_priv.h"

/* A guarded burst's jump buffer lives in its frame; the thread's pointer to
 * it is initial-exec TLS, which a signal handler may read in any thread
 * (no lazy allocation, even in a dlopen()ed library). */
struct guard {
	sigjmp_buf env;
	uint16_t port_id;
	volatile int sig;
	void *volatile addr;
};

static __thread struct guard *guard_cur
	__attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void
guard_chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;
	bool sent = si == NULL || si->si_code <= 0;

	if (prev->sa_handler == SIG_IGN && sent)
		return;
	if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN) {
		/* a fault happens again when the instruction runs again, and
		 * takes the default action (core dump included; a fault
		 * cannot be ignored); a signal that was sent is sent again */
		signal(sig, SIG_DFL);
		if (sent)
			raise(sig);
		return;
	}
	if (prev->sa_flags & SA_SIGINFO)
		prev->sa_sigaction(sig, si, uc);
	else
		prev->sa_handler(sig);
}

/* Async-signal-safe for memif (and net_ring): link_update returns at once
 * in a primary process, the status is one atomic load. */
static bool
guard_link_down(uint16_t port_id)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_DOWN;
}

static void
guard_handler(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = guard_cur;

	if (g != NULL && si != NULL && si->si_code > 0) {
		guard_cur = NULL;
		if (guard_link_down(g->port_id)) {
			g->sig = sig;
			g->addr = si->si_addr;
			siglongjmp(g->env, 1);
		}
	}
	guard_chain(sig, si, uc);
}

static void
guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	/* SA_NODEFER: the jump leaves the handler, the signal must not stay
	 * blocked in the thread after it */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &prev_segv) != 0 ||
	    sigaction(SIGBUS, &sa, &prev_bus) != 0)
		PORT_LOG(WARNING, "cannot install the memif burst guard: %s",
			 strerror(errno));
}

void
port_guard_enable(struct dpdat_port *p)
{
	pthread_once(&guard_once, guard_install);
	p->dev_rx = port_guarded_rx;
	p->dev_tx = port_guarded_tx;
	port_path_update(p);
}

/* After a jump: the link was down, the driver had unmapped the rings. */
static void
guard_tripped(struct dpdat_port *p, const char *dir, const struct guard *g)
{
	p->st.peer_unmapped++;
	PORT_LOG(WARNING, "%s: %s burst cut short: the memif peer's memory "
		 "went away under it (%s at %p, link down); the port goes on",
		 p->name, dir, g->sig == SIGBUS ? "SIGBUS" : "SIGSEGV",
		 g->addr);
}

uint16_t
port_guarded_rx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct guard g;
	uint16_t nb;

	if (sigsetjmp(g.env, 0) != 0) {
		/* mbufs the driver had taken for this burst are lost */
		guard_tripped(p, "receive", &g);
		return 0;
	}
	g.port_id = p->port_id;
	guard_cur = &g;
	nb = rte_eth_rx_burst(p->port_id, p->queue, pkts, n);
	guard_cur = NULL;
	return nb;
}

/* The transmit burst under the guard; -1 when it was cut short. Apart
 * from the counting, whose locals a jump would clobber. */
static __rte_noinline int
guard_tx_burst(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct guard g;
	uint16_t nb;

	if (sigsetjmp(g.env, 0) != 0) {
		guard_tripped(p, "transmit", &g);
		return -1;
	}
	g.port_id = p->port_id;
	guard_cur = &g;
	nb = rte_eth_tx_burst(p->port_id, p->queue, pkts, n);
	guard_cur = NULL;
	return nb;
}

/* Counts what it sent, as port_dev_tx() does. */
uint16_t
port_guarded_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	const uint64_t bytes = port_tx_bytes(pkts, n);
	int nb = guard_tx_burst(p, pkts, n);

	/* cut short: the driver freed what it copied before the fault and
	 * may hold the rest: none of it is the caller's any more (a leak of
	 * at most one burst, never a double free), none counts as sent */
	if (nb < 0)
		return n;
	port_tx_count(p, pkts, n, (uint16_t)nb, bytes);
	return (uint16_t)nb;
}
