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
 * and faults (SIGSEGV) when it was preempted across that window; a peer that
 * truncates its memfd gives SIGBUS the same way. Nothing outside the driver
 * can order the two threads, so the bursts of a memif port run guarded: a
 * fault inside one jumps back to the burst's caller, which then checks that
 * the link is indeed down (the driver marks it so before it unmaps). If it
 * is, the burst counts as cut short (peer_unmapped) and the port goes on;
 * if it is not, the fault is no such race and the process aborts.
 *
 * Faults anywhere else go to the handler that was there before ours (the
 * default one, or a sanitizer's), as if ours were not installed.
 */

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "port_priv.h"

/* A guarded burst's jump buffer lives in its frame; the thread's pointer to
 * it is initial-exec TLS, which a signal handler may read in any thread
 * (no lazy allocation, even in a dlopen()ed library). */
struct guard {
	sigjmp_buf env;
	volatile int sig;
};

static __thread struct guard *guard_cur
	__attribute__((tls_model("initial-exec")));
static struct sigaction prev_segv, prev_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void
guard_chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;

	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, si, uc);
		return;
	}
	if (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN) {
		/* a fault happens again when the instruction runs again, and
		 * takes the default action (core dump included); a signal
		 * that was sent is sent again */
		signal(sig, SIG_DFL);
		if (si == NULL || si->si_code <= 0)
			raise(sig);
		return;
	}
	prev->sa_handler(sig);
}

static void
guard_handler(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = guard_cur;

	if (g != NULL && si != NULL && si->si_code > 0) {
		guard_cur = NULL;
		g->sig = sig;
		siglongjmp(g->env, 1);
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
	p->guarded = true;
}

/* After a jump: the driver marked the link down before unmapping, so a
 * link still up means the fault was something else. */
static void
guard_tripped(struct dpdat_port *p, const char *dir, int sig)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
	    link.link_status == RTE_ETH_LINK_DOWN) {
		p->st.peer_unmapped++;
		PORT_LOG(WARNING, "%s: %s burst cut short: the memif peer's "
			 "memory went away under it (%s); the port goes on",
			 p->name, dir, sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
		return;
	}
	PORT_LOG(CRIT, "%s: %s inside a %s burst with the link up: not a "
		 "memif disconnect, aborting", p->name,
		 sig == SIGBUS ? "SIGBUS" : "SIGSEGV", dir);
	abort();
}

uint16_t
port_guarded_rx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct guard g;
	uint16_t nb;

	if (sigsetjmp(g.env, 0) != 0) {
		/* mbufs the driver had taken for this burst are lost */
		guard_tripped(p, "receive", g.sig);
		return 0;
	}
	guard_cur = &g;
	nb = rte_eth_rx_burst(p->port_id, 0, pkts, n);
	guard_cur = NULL;
	return nb;
}

uint16_t
port_guarded_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct guard g;
	uint16_t nb;

	if (sigsetjmp(g.env, 0) != 0) {
		/* the driver freed what it copied before the fault and may
		 * hold the rest: none of it is the caller's any more (a leak
		 * of at most one burst, never a double free) */
		guard_tripped(p, "transmit", g.sig);
		return n;
	}
	guard_cur = &g;
	nb = rte_eth_tx_burst(p->port_id, 0, pkts, n);
	guard_cur = NULL;
	return nb;
}
