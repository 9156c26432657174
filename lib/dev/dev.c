/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* A device: port + registration domain + RC state + connection manager,
 * and the engine that runs them. The engine is one loop: receive a burst
 * and dispatch it (QP1 to the CM, the rest to the RC layer), let every QP
 * send, run the CM's and the port's timers, flush the transmit batch.
 * dev->rc.busy says who runs it (the engine thread, or in inline mode the
 * consumer thread that polls); the control path takes it too, briefly. */

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "cm_priv.h"
#include "dev_priv.h"
#include "mr_priv.h"
#include "port_priv.h"
#include "rc_priv.h"

RTE_LOG_REGISTER(dpdat_dev_logtype, dpdat.dev, NOTICE);

/* A received frame to whoever it is for; the mbuf is consumed. */
void
dev_dispatch(struct dpdat_dev *dev, struct rte_mbuf *m)
{
	struct roce_rx rx;

	switch (roce_rx_parse(m, sizeof(struct rte_ether_hdr), PORT_HDR_LEN,
			      &rx)) {
	case ROCE_RX_OK:
		if (roce_bth_qpn(rx.bth) == ROCE_QP1)	/* CM MADs */
			cm_input(&dev->rc, m, rx.bth, rx.off, rx.paylen);
		else
			rc_input(&dev->rc, m, &rx);
		break;
	case ROCE_RX_BAD_ICRC:
		dev->rc.port->st.drop_icrc++;
		break;
	case ROCE_RX_BAD_HDR:
		dev->rc.port->st.drop_bad_hdr++;
		break;
	}
	rte_pktmbuf_free(m);
}

/* One engine iteration; the caller holds dev->rc.busy. */
static int
dev_iter(struct dpdat_dev *dev)
{
	struct rte_mbuf *pkts[PORT_BURST];
	uint64_t now;
	uint16_t n, i;

	/* work posted since the last pass leaves before the receive poll:
	 * a ping-pong's answer, posted right before this pass, does not wait
	 * for the device's receive burst */
	if (!rte_ring_empty(dev->rc.db)) {
		rc_progress(&dev->rc, rte_get_tsc_cycles());
		rc_tx_flush(&dev->rc);
	}
	n = port_rx(dev->rc.port, pkts, PORT_BURST);
	for (i = 0; i < n; i++)
		dev_dispatch(dev, pkts[i]);
	now = rte_get_tsc_cycles();
	rc_progress(&dev->rc, now);
	cm_progress(&dev->rc, now);
	if (now - dev->last_timer > dev->rc.tsc_hz / 1000) {
		dev->last_timer = now;
		port_timer(dev->rc.port);
	}
	rc_tx_flush(&dev->rc);
	dev->epoch++;
	return n;
}

/*
 * Inline progress: every polling thread reads registrations through a
 * reader of its own in the device's domain, one for all the devices of
 * that domain (a thread runs one engine at a time: dev_iter calls no
 * consumer code), found in a small per-thread cache by the uid of the
 * device that owns the domain (the one others share), which keeps the
 * list and unregisters them when it closes, before the domain goes.
 * Its own reader may go online before the engine lock is tried: the lock's
 * exchange is then the store-load barrier QSBR needs, and a thread that
 * loses the lock sets only its own reader offline again. With the device's
 * one shared reader, only the winner may touch it, after the lock, and pays
 * a fence of its own (dpdat_mr_reader_online()): one full barrier a poll
 * instead of two.
 */
#define DEV_NO_READER	UINT_MAX

struct dev_tls_reader {
	uint64_t uid;		/* 0: free */
	unsigned int id;	/* DEV_NO_READER: the domain had none left */
};

/* initial-exec: read at a fixed offset from the thread pointer, not
 * through __tls_get_addr() on every poll (1-2 % of a polling client's
 * samples); 132 bytes of the static TLS a dlopen()ed library may take */
static __thread struct dev_tls_reader tls_readers[8]
	__attribute__((tls_model("initial-exec")));
static __thread unsigned int tls_next
	__attribute__((tls_model("initial-exec")));
static uint64_t dev_uids;

/* The device whose domain it is. */
static inline struct dpdat_dev *
dev_owner(struct dpdat_dev *dev)
{
	return dev->share != NULL ? dev->share : dev;
}

/* A reader of dev's domain for the calling thread alone, registered on
 * its first poll of a device of that domain; DEV_NO_READER when the
 * domain's owner has none left to give (DEV_THREAD_READERS, or the
 * domain's max_readers). */
static unsigned int
dev_thread_reader_new(struct dpdat_dev *dev)
{
	struct dpdat_dev *o = dev_owner(dev);
	unsigned int id = DEV_NO_READER, k;
	struct dev_tls_reader *e;

	pthread_mutex_lock(&o->rc.lock);
	if (o->n_treaders < DEV_THREAD_READERS &&
	    dpdat_mr_reader_register(o->rc.dom, &id) == 0)
		o->treader[o->n_treaders++] = id;
	else
		id = DEV_NO_READER;
	pthread_mutex_unlock(&o->rc.lock);
	k = tls_next++ % RTE_DIM(tls_readers);
	e = &tls_readers[k];
	/* an entry pushed out (a thread polling more than 8 domains) leaves
	 * its reader registered and offline, unused until the owner closes */
	e->uid = o->uid;
	e->id = id;
	return id;
}

static inline unsigned int
dev_thread_reader(struct dpdat_dev *dev)
{
	const uint64_t uid = dev_owner(dev)->uid;

	for (unsigned int k = 0; k < RTE_DIM(tls_readers); k++)
		if (tls_readers[k].uid == uid)
			return tls_readers[k].id;
	return dev_thread_reader_new(dev);
}

/* The device's shared reader, as a poller without one of its own. */
static int
dev_run_shared(struct dpdat_dev *dev)
{
	int n;

	if (__atomic_exchange_n(&dev->rc.busy, 1, __ATOMIC_ACQUIRE) != 0)
		return 0;	/* someone else is running it */
	/* the shared reader is the lock holder's: only now may it go
	 * online (before the lock, a loser's offline could hide the
	 * winner's reading from a writer) */
	dpdat_mr_reader_online(dev->rc.dom, dev->reader);
	n = dev_iter(dev);
	dpdat_mr_reader_offline(dev->rc.dom, dev->reader);
	rc_unlock_engine(&dev->rc);
	return n;
}

int
dev_run(struct rc_dev *rd)
{
	struct dpdat_dev *dev = dev_of(rd);
	unsigned int r = dev_thread_reader(dev);
	int n;

	if (unlikely(r == DEV_NO_READER)) {
		/* the shared reader is the engine thread's in hybrid mode
		 * (it stays online there): a poller without a reader of its
		 * own leaves the engine to the thread */
		if (dev->rc.progress == DPDAT_PROGRESS_HYBRID)
			return 0;
		return dev_run_shared(dev);
	}
	mr_reader_online_unfenced(dev->rc.dom, r);
	/* the full barrier between the reader's store and the engine's
	 * first read of the table (a locked instruction on x86) */
	if (__atomic_exchange_n(&dev->rc.busy, 1, __ATOMIC_SEQ_CST) != 0) {
		dpdat_mr_reader_offline(dev->rc.dom, r);
		return 0;	/* someone else is running it */
	}
#ifndef RTE_ARCH_X86
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	n = dev_iter(dev);
	dpdat_mr_reader_offline(dev->rc.dom, r);
	rc_unlock_engine(&dev->rc);
	return n;
}

/* At the domain owner's close: the readers polling threads registered for
 * themselves (the devices sharing the domain closed before). Their
 * threads' caches keep the uid, which no device has again. */
static void
dev_thread_readers_free(struct dpdat_dev *dev)
{
	for (uint32_t k = 0; k < dev->n_treaders; k++)
		dpdat_mr_reader_unregister(dev->rc.dom, dev->treader[k]);
	dev->n_treaders = 0;
}

/* Hybrid progress: a consumer polls busily when, in the last sample (of
 * DEV_POLL_SAMPLE_US or longer) and now, it was never DEV_POLL_STEADY_US
 * or more out of a poll (from the end of one to the start of the next: a
 * long iteration, 64 KiB messages to copy, is no gap; counting polls, 16
 * in 20 us, took such a consumer for an idle one, and the thread ran
 * beside it 50,000 times a second in ib_send_bw). The thread naps
 * meanwhile. A nap begins at DEV_NAP_US and doubles, up to DEV_NAP_MAX_US,
 * each time the consumer polled so all through the last one; a gap puts
 * it back. Each wake-up takes a core from a busy thread on a machine with
 * few: with 50 us naps (137 us with the timer's slack, here) they cost a
 * sixth of both processes' time in ib_write_bw. A consumer that stops
 * polling after polling steadily waits for the thread a long nap at most,
 * once: what stops and starts (ib_write_lat, which spins on memory between
 * polls) keeps short naps. */
#define DEV_POLL_SAMPLE_US	20
#define DEV_POLL_STEADY_US	50
#define DEV_NAP_US		50u
#define DEV_NAP_MAX_US		1000u
/* Hybrid: a thread whose consumer has not polled for so long looks again
 * without leaving the core (nobody waits for it); see dev_engine_thread. */
#define DEV_ALONE_US		1000

struct dev_hybrid {
	uint64_t period;	/* DEV_POLL_SAMPLE_US in TSC cycles */
	uint64_t steady;	/* DEV_POLL_STEADY_US in TSC cycles */
	uint64_t alone;		/* DEV_ALONE_US in TSC cycles */
	uint64_t tsc;		/* the last sample */
	uint32_t nap_us;	/* the next nap */
	bool busy;
};

/* TSC cycles from then to now, 0 if then is later (a consumer stored it
 * after now was read). */
static uint64_t
dev_since(uint64_t now, uint64_t then)
{
	return (int64_t)(now - then) > 0 ? now - then : 0;
}

/* Hybrid: how long no consumer has been in a poll now (0: one is). */
static uint64_t
dev_poll_gap_now(const struct dpdat_dev *dev, uint64_t now)
{
	uint64_t start = __atomic_load_n(&dev->rc.poll_start, __ATOMIC_RELAXED);
	uint64_t end = __atomic_load_n(&dev->rc.poll_end, __ATOMIC_RELAXED);

	return (int64_t)(start - end) > 0 ? 0 : dev_since(now, end);
}

/* Hybrid: the consumers polled without a gap since the last sample (or
 * nap), and are in a poll or just out of one; a new sample starts. */
static bool
dev_polled_steadily(struct dpdat_dev *dev, struct dev_hybrid *hy,
		    uint64_t now)
{
	uint64_t gap = RTE_MAX(__atomic_exchange_n(&dev->rc.poll_gap, 0,
						   __ATOMIC_RELAXED),
			       dev_poll_gap_now(dev, now));

	hy->tsc = now;
	return gap < hy->steady;
}

static bool
dev_consumer_polls(struct dpdat_dev *dev, struct dev_hybrid *hy)
{
	uint64_t now = rte_get_tsc_cycles();

	if (now - hy->tsc >= hy->period) {
		hy->busy = dev_polled_steadily(dev, hy, now);
		if (!hy->busy)
			hy->nap_us = DEV_NAP_US;
	}
	return hy->busy;
}

/* Hybrid: no consumer has polled for DEV_ALONE_US (a server that waits on
 * its own socket, say): the thread is the only engine runner. */
static bool
dev_alone(const struct dpdat_dev *dev, const struct dev_hybrid *hy)
{
	return dev_since(rte_get_tsc_cycles(),
			 __atomic_load_n(&dev->rc.poll_end,
					 __ATOMIC_RELAXED)) >= hy->alone;
}

/* Hybrid: the engine thread sleeps while a consumer runs the engine; then
 * the next nap is longer if the consumer polled all through this one, or
 * the thread runs (and samples anew) if it stopped. */
static void
dev_nap(struct dpdat_dev *dev, struct dev_hybrid *hy)
{
	__atomic_store_n(&dev->rc.poll_gap, 0, __ATOMIC_RELAXED);
	dpdat_mr_reader_offline(dev->rc.dom, dev->reader);
	rte_delay_us_sleep(hy->nap_us);
	dpdat_mr_reader_online(dev->rc.dom, dev->reader);
	hy->busy = dev_polled_steadily(dev, hy, rte_get_tsc_cycles());
	hy->nap_us = hy->busy ? RTE_MIN(hy->nap_us * 2, DEV_NAP_MAX_US) :
				DEV_NAP_US;
}

static void *
dev_engine_thread(void *arg)
{
	struct dpdat_dev *dev = arg;
	const uint64_t us = rte_get_tsc_hz() / 1000000;
	struct dev_hybrid hy = {
		.period = us * DEV_POLL_SAMPLE_US,
		.steady = us * DEV_POLL_STEADY_US,
		.alone = us * DEV_ALONE_US,
		.nap_us = DEV_NAP_US };
	unsigned int idle = 0;
	uint32_t held;

	dpdat_mr_reader_online(dev->rc.dom, dev->reader);
	while (!__atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE)) {
		/* hybrid: a consumer polls busily and runs the engine; leave
		 * it the core (nothing of the thread's can be held: no
		 * zero-copy READs in this mode). One that polls now and then
		 * (after each wake-up) is not busy: the thread runs. */
		if (dev->rc.progress == DPDAT_PROGRESS_HYBRID &&
		    dev_consumer_polls(dev, &hy)) {
			dev_nap(dev, &hy);
			idle = 0;
			continue;
		}
		/* The engine is taken: in hybrid mode by a consumer's poll,
		 * as a rule. Leave the core to it rather than spin on the flag
		 * (two threads spinning on two vCPUs took half of them,
		 * measured with ib_send_bw, whose consumer's iterations are
		 * long: see dev_consumer_polls for how busy is told). Napping
		 * only when the consumer had polled since the thread last ran
		 * or napped kept most of the spinning (2.6x less bandwidth);
		 * the nap's cost, what arrives while the consumer stops
		 * polling waits up to a nap, did not show in the latency
		 * tests' medians or 99th percentiles. A control call (thread
		 * mode) is waited for. */
		if (__atomic_exchange_n(&dev->rc.busy, 1,
					__ATOMIC_ACQUIRE) != 0) {
			if (dev->rc.progress == DPDAT_PROGRESS_HYBRID)
				dev_nap(dev, &hy);
			else
				rte_pause();
			idle = 0;
			continue;
		}
		if (dev_iter(dev) == 0)
			idle++;
		else
			idle = 0;
		/* a device that frees sent mbufs lazily would hold the last
		 * zero-copy READ responses (and with them every writer of
		 * the domain) until the next burst: ask it, when idle */
		if (idle != 0 && __atomic_load_n(&dev->rc.zc_rd_out,
						 __ATOMIC_RELAXED) != 0)
			rte_eth_tx_done_cleanup(dev->rc.port->port_id,
						dev->rc.port->queue, 0);
		rc_unlock_engine(&dev->rc);
		/* a zero-copy READ response the device still holds reads
		 * registered memory: no quiescent state (and no going
		 * offline) before it is released (rc_zc_read_payload) */
		held = __atomic_load_n(&dev->rc.zc_rd_out, __ATOMIC_ACQUIRE);
		if (held == 0)
			dpdat_mr_reader_quiescent(dev->rc.dom, dev->reader);
		/* hybrid: an idle thread leaves the core between looks, outside
		 * the engine lock, to whoever else wants it. The scheduler
		 * takes a busy thread's core at any instant on a shared
		 * machine; taken with the lock held, the consumer's polls find
		 * the engine busy until the thread runs again, a scheduler
		 * tick later (4 ms), and what they post meanwhile waits: the
		 * peer times out. And a consumer that spins on memory for what
		 * the thread received gets it only when the thread leaves
		 * the core: a busy gap (1 us) kept it until a tick, and
		 * ib_write_lat took 4 ms a round trip in half the runs. A
		 * thread alone looks without leaving: what arrives (a READ
		 * request to a server that only waits on its socket) waited up
		 * to the gap (read_lat 1.6x dpdat-perf's). */
		if (idle != 0 && dev->rc.progress == DPDAT_PROGRESS_HYBRID &&
		    !dev_alone(dev, &hy))
			sched_yield();
		/* on a shared machine give the core away when nothing moves */
		if (idle > 4096) {
			if (held == 0)
				dpdat_mr_reader_offline(dev->rc.dom, dev->reader);
			sched_yield();
			if (held == 0)
				dpdat_mr_reader_online(dev->rc.dom, dev->reader);
			idle = 2048;
		}
	}
	dpdat_mr_reader_offline(dev->rc.dom, dev->reader);
	return NULL;
}

/* Run one port call with the engine held between two iterations. */
#define WITH_ENGINE(dev, call) do {					\
	int ret_;							\
	if ((dev) == NULL || (dev)->rc.magic != RC_MAGIC_DEV)		\
		return -EBADF;						\
	rc_lock_engine(&(dev)->rc);					\
	ret_ = (call);							\
	rc_unlock_engine(&(dev)->rc);					\
	return ret_;							\
} while (0)

int
dpdat_dev_set_faults(struct dpdat_dev *dev, const struct dpdat_fault_conf *conf)
{
	WITH_ENGINE(dev, dpdat_port_set_faults(dev->rc.port, conf));
}

int
dpdat_dev_capture_start(struct dpdat_dev *dev, const char *path)
{
	WITH_ENGINE(dev, dpdat_port_capture_start(dev->rc.port, path));
}

int
dpdat_dev_capture_stop(struct dpdat_dev *dev)
{
	WITH_ENGINE(dev, dpdat_port_capture_stop(dev->rc.port));
}

int
dpdat_dev_neighbours(struct dpdat_dev *dev, struct dpdat_neigh *out,
		     unsigned int max)
{
	WITH_ENGINE(dev, dpdat_port_neighbours(dev->rc.port, out, max));
}

int
dpdat_dev_resolve(struct dpdat_dev *dev, uint32_t ipv4,
		  struct rte_ether_addr *mac, int timeout_ms)
{
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t end;
	int ret;

	if (dev == NULL || dev->rc.magic != RC_MAGIC_DEV)
		return -EBADF;
	if (mac == NULL || timeout_ms < 0)
		return -EINVAL;
	end = rte_get_tsc_cycles() + hz * (uint64_t)timeout_ms / 1000;
	for (;;) {
		rc_lock_engine(&dev->rc);
		ret = port_resolve(dev->rc.port, ipv4, mac);
		rc_unlock_engine(&dev->rc);
		if (ret != -EAGAIN)
			return ret;
		if ((int64_t)(rte_get_tsc_cycles() - end) >= 0)
			return -EHOSTUNREACH;
		if (dev->rc.progress == DPDAT_PROGRESS_INLINE)
			dev_run(&dev->rc);
		else
			rte_delay_us_sleep(200);
	}
}

int
dpdat_dev_progress(struct dpdat_dev *dev)
{
	if (dev == NULL || dev->rc.magic != RC_MAGIC_DEV)
		return -EBADF;
	if (dev->rc.progress == DPDAT_PROGRESS_HYBRID)
		return rc_dev_poll_run(&dev->rc);
	if (dev->rc.progress != DPDAT_PROGRESS_INLINE)
		return -EBUSY;
	return dev_run(&dev->rc);
}

static bool
dev_cpu_allowed(unsigned int cpu)
{
	cpu_set_t set;

	return cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof(set), &set) == 0 &&
	       CPU_ISSET(cpu, &set);
}

/* The engine thread, born on its CPU when one is asked for. */
static int
dev_engine_start(struct dpdat_dev *dev, const struct dpdat_dev_conf *conf)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	pthread_attr_init(&attr);
	if (conf->pin_cpu) {
		CPU_ZERO(&set);
		CPU_SET(conf->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	ret = pthread_create(&dev->thread, &attr, dev_engine_thread, dev);
	pthread_attr_destroy(&attr);
	if (ret != 0)
		return ret;
	dev->thread_started = 1;
	pthread_setname_np(dev->thread, "dpdat-engine");
	if (conf->pin_cpu)
		DEV_LOG(INFO, "%s: engine thread on CPU %u", dev->rc.port->name,
			conf->cpu);
	return 0;
}

/* A device opened with share holds it open from before it reads share's
 * domain until after its own reader left it (dpdat_dev_close() of share
 * answers -EBUSY meanwhile). -1: share is closing or shares another. */
static int
dev_share_hold(struct dpdat_dev *share)
{
	int ret = -1;

	pthread_mutex_lock(&share->rc.lock);
	if (share->rc.magic == RC_MAGIC_DEV && share->share == NULL) {
		share->n_sharers++;
		ret = 0;
	}
	pthread_mutex_unlock(&share->rc.lock);
	return ret;
}

static void
dev_share_release(struct dpdat_dev *share)
{
	pthread_mutex_lock(&share->rc.lock);
	share->n_sharers--;
	pthread_mutex_unlock(&share->rc.lock);
}

struct dpdat_dev *
dpdat_dev_open(const struct dpdat_dev_conf *conf)
{
	struct dpdat_dev *dev;
	int ret;

	if (conf == NULL || conf->progress > DPDAT_PROGRESS_HYBRID ||
	    conf->max_qps > (1u << 20) ||
	    (conf->pin_cpu && !dev_cpu_allowed(conf->cpu)) ||
	    (conf->share != NULL && conf->share->rc.magic != RC_MAGIC_DEV) ||
	    ((conf->share != NULL || conf->port.queues > 1) &&
	     conf->max_qps > (1u << PORT_QPN_QUEUE_SHIFT) - RC_QPN_BASE)) {
		rte_errno = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	dev->rc.run = dev_run;
	dev->uid = __atomic_add_fetch(&dev_uids, 1, __ATOMIC_RELAXED);
	if (conf->share != NULL && dev_share_hold(conf->share) != 0) {
		ret = EINVAL;
		goto err_free;
	}
	dev->share = conf->share;
	dev->rc.dom = dev->share != NULL ? dev->share->rc.dom :
		   dpdat_mr_domain_create(&conf->mr);
	if (dev->rc.dom == NULL) {
		ret = rte_errno;
		goto err_free;
	}
	ret = -dpdat_mr_reader_register(dev->rc.dom, &dev->reader);
	if (ret != 0)
		goto err_dom;
	dev->rc.port = dev->share != NULL ? dpdat_port_attach(dev->share->rc.port) :
		    dpdat_port_create(&conf->port);
	if (dev->rc.port == NULL) {
		ret = rte_errno;
		goto err_reader;
	}
	ret = -rc_dev_init(&dev->rc, conf);
	if (ret != 0)
		goto err_port;
	ret = -cm_dev_create(&dev->rc);
	if (ret != 0)
		goto err_rc;
	dev->rc.magic = RC_MAGIC_DEV;
	dev_tel_add(dev);
	if (dev->rc.progress != DPDAT_PROGRESS_INLINE) {
		ret = dev_engine_start(dev, conf);
		if (ret != 0)
			goto err_cm;
	} else if (conf->pin_cpu) {
		DEV_LOG(NOTICE, "%s: inline progress: the threads that poll "
			"run the engine; pin them to CPU %u (taskset -c %u, or "
			"pthread_setaffinity_np)", dev->rc.port->name, conf->cpu,
			conf->cpu);
	}
	return dev;

err_cm:
	dev_tel_del(dev);
	dev->rc.magic = 0;
	cm_dev_free(&dev->rc);
err_rc:
	rc_dev_drain(&dev->rc);
	dpdat_port_free(dev->rc.port);
	rc_dev_fini(&dev->rc);
	goto err_reader;
err_port:
	dpdat_port_free(dev->rc.port);
err_reader:
	dev_thread_readers_free(dev);
	dpdat_mr_reader_unregister(dev->rc.dom, dev->reader);
err_dom:
	if (dev->share == NULL)
		dpdat_mr_domain_free(dev->rc.dom);
	else
		dev_share_release(dev->share);
err_free:
	free(dev);
	rte_errno = ret;
	return NULL;
}

int
dpdat_dev_close(struct dpdat_dev *dev)
{
	if (dev == NULL || dev->rc.magic != RC_MAGIC_DEV)
		return -EBADF;
	pthread_mutex_lock(&dev->rc.lock);
	/* queue 0 goes last: also after queues attached by hand */
	if (dev->rc.n_qps != 0 || dev->rc.n_cqs != 0 || dev->rc.n_srqs != 0 ||
	    dev->n_sharers != 0 ||
	    (dev->share == NULL && port_queue_detach(dev->rc.port) != 0)) {
		pthread_mutex_unlock(&dev->rc.lock);
		return -EBUSY;
	}
	dev->rc.magic = 0;
	pthread_mutex_unlock(&dev->rc.lock);
	dev_tel_del(dev);
	if (dev->thread_started) {
		__atomic_store_n(&dev->stop, 1, __ATOMIC_RELEASE);
		pthread_join(dev->thread, NULL);
	}
	rc_dev_drain(&dev->rc);
	cm_dev_free(&dev->rc);
	dpdat_port_free(dev->rc.port);	/* the device lets go of its mbufs */
	rc_dev_fini(&dev->rc);		/* then the zero-copy buffers go */
	dev_thread_readers_free(dev);
	dpdat_mr_reader_unregister(dev->rc.dom, dev->reader);
	/* PZs left by the consumer keep the domain; say so rather than leak
	 * silently */
	if (dev->share == NULL && dpdat_mr_domain_free(dev->rc.dom) != 0)
		DEV_LOG(WARNING, "device closed with protection zones left");
	if (dev->share != NULL)		/* last: share may close now */
		dev_share_release(dev->share);
	free(dev);
	return 0;
}

struct dpdat_mr_domain *
dpdat_dev_domain(struct dpdat_dev *dev)
{
	return dev != NULL && dev->rc.magic == RC_MAGIC_DEV ? dev->rc.dom : NULL;
}

struct dpdat_port *
dpdat_dev_port(struct dpdat_dev *dev)
{
	return dev != NULL && dev->rc.magic == RC_MAGIC_DEV ? dev->rc.port : NULL;
}
