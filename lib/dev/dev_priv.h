/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_DEV_PRIV_H
#define DPDAT_DEV_PRIV_H

/*
 * lib/dev: the top of the library. It opens a device (registration domain,
 * port, RC state, connection manager, in that order) and owns the engine
 * loop that runs them; nothing below calls into it except through the
 * hooks it sets in struct dpdat_dev (dev->run for event queues that make
 * progress inline).
 */

#include <rte_log.h>
#include <rte_mbuf.h>

#include "rc_priv.h"

extern int dpdat_dev_logtype;
#define DEV_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpdat_dev_logtype, "dpdat_dev: " fmt "\n", \
		##__VA_ARGS__)

/* One engine iteration unless someone else runs the engine; frames
 * received. */
int dev_run(struct dpdat_dev *dev);
/* A received frame to the CM (QP1) or the RC layer; the mbuf is consumed.
 * Caller holds the engine. */
void dev_dispatch(struct dpdat_dev *dev, struct rte_mbuf *m);

/* telemetry.c: the devices /dpdat/qps and /dpdat/qp_stats can see */
void dev_tel_add(struct dpdat_dev *dev);
void dev_tel_del(struct dpdat_dev *dev);

#endif /* DPDAT_DEV_PRIV_H */
