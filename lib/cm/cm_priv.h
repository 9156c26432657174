/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_CM_PRIV_H
#define DPDAT_CM_PRIV_H

/*
 * lib/cm: the IB connection manager, above the RC layer (it moves QPs
 * through their states) and below the device (which creates it, hands it
 * the QP1 frames and runs its timers). The RC layer tells it of a freed QP
 * through the dev->qp_gone hook that cm_dev_create() sets.
 */

#include <rte_mbuf.h>

#include "rc_priv.h"

/* On a device whose RC state is up: 0 or -ENOMEM. */
int cm_dev_create(struct rc_dev *dev);
void cm_dev_free(struct rc_dev *dev);
/* A QP1 frame (engine held); the caller frees m. */
void cm_input(struct rc_dev *dev, struct rte_mbuf *m,
	      const struct roce_bth *bth, unsigned int off,
	      unsigned int paylen);
/* Once per engine iteration: what is pending goes out, timers run. */
void cm_progress(struct rc_dev *dev, uint64_t now);

#endif /* DPDAT_CM_PRIV_H */
