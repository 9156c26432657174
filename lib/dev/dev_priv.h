/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_DEV_PRIV_H
#define DPDAT_DEV_PRIV_H

/*
 * lib/dev: the top of the library. It opens a device (registration domain,
 * port, RC state, connection manager, in that order) and owns the engine
 * loop that runs them; nothing below calls into it except through the
 * hooks it sets in the device's struct rc_dev (lib/rc/rc_priv.h):
 * rc.run, one engine iteration, for event queues that make progress
 * inline; lib/cm sets rc.qp_gone.
 */

#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "rc_priv.h"

/* Polling threads of one domain with a registration reader of their own
 * (inline progress); more poll through each device's shared reader. */
#define DEV_THREAD_READERS 16

/* An application's device handle. The RC layer and the CM see only rc,
 * which comes first (rc_dev() casts the handle to it; the assertion
 * below checks). */
struct dpdat_dev {
	struct rc_dev rc;
	unsigned int reader;	/* the engine thread's, or inline pollers'
				 * when they have none of their own */
	/* Inline progress, the device that owns rc.dom: readers of the
	 * domain that polling threads registered for themselves, one a
	 * thread for every device of the domain (dev_thread_reader),
	 * unregistered at close; uid (never 0, never reused) names the
	 * domain in their caches. */
	uint64_t uid;
	unsigned int treader[DEV_THREAD_READERS];
	uint32_t n_treaders;	/* under rc.lock */
	/* another engine of the same port (dpdat_dev_conf.share): its port
	 * is a queue of share's device, its domain share's */
	struct dpdat_dev *share;
	uint32_t n_sharers;	/* devices sharing this one; under rc.lock */
	pthread_t thread;	/* the engine thread, if any */
	int thread_started;
	int stop;
	uint64_t epoch;		/* engine iterations */
	uint64_t last_timer;	/* the port's timers last ran */
};

/* what rc_dev() relies on */
static_assert(offsetof(struct dpdat_dev, rc) == 0,
	      "struct dpdat_dev begins with its struct rc_dev");

static inline struct dpdat_dev *
dev_of(struct rc_dev *rd)
{
	return container_of(rd, struct dpdat_dev, rc);
}

extern int dpdat_dev_logtype;
#define DEV_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpdat_dev_logtype, "dpdat_dev: " fmt "\n", \
		##__VA_ARGS__)

/* One engine iteration unless someone else runs the engine; frames
 * received. */
int dev_run(struct rc_dev *rd);
/* A received frame to the CM (QP1) or the RC layer; the mbuf is consumed.
 * Caller holds the engine. */
void dev_dispatch(struct dpdat_dev *dev, struct rte_mbuf *m);

/* telemetry.c: the devices /dpdat/qps and /dpdat/qp_stats can see */
void dev_tel_add(struct dpdat_dev *dev);
void dev_tel_del(struct dpdat_dev *dev);

#endif /* DPDAT_DEV_PRIV_H */
