/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* DCQCN's reaction point: see dcqcn.h. */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "dcqcn.h"
#include "rc_priv.h"

#define DCQCN_LINE_MBPS_UNKNOWN	100000u
#define DCQCN_MAX_STEPS		64	/* recovery steps taken at once */
#define DCQCN_BURST_US		10	/* a late sender's catch-up */
#define DCQCN_LINE_MBPS_MAX	400000u	/* above: a device that does not
					 * know (RTE_ETH_SPEED_NUM_UNKNOWN) */

void
dcqcn_conf_default(struct dcqcn_conf *c)
{
	*c = (struct dcqcn_conf){
		.g = 1019, .alpha_us = 1, .alpha0 = 1023, .first_mbps = 0,
		.min_dec_pct = 50, .min_mbps = 1, .monitor_us = 4,
		.time_reset_us = 300, .byte_reset = 32767, .threshold = 1,
		.ai_mbps = 5, .hai_mbps = 50,
	};
}

static const struct rc_kv_key dcqcn_keys[] = {
#define K(name, lo, hi) { #name, offsetof(struct dcqcn_conf, name), lo, hi }
	K(g, 0, DCQCN_ONE - 1),
	K(alpha_us, 1, 131071),
	K(alpha0, 1, DCQCN_ONE - 1),
	K(first_mbps, 0, 400000),
	K(min_dec_pct, 0, 100),
	K(min_mbps, 1, 400000),
	K(monitor_us, 0, 1000000),
	K(time_reset_us, 1, 1000000),
	K(byte_reset, 1, 1u << 30),
	K(threshold, 0, 31),
	K(ai_mbps, 0, 400000),
	K(hai_mbps, 0, 400000),
#undef K
};

int
dcqcn_conf_parse(struct dcqcn_conf *c, const char *s)
{
	return rc_kv_parse("DPDAT_DCQCN", s, dcqcn_keys, RTE_DIM(dcqcn_keys),
			   c, "off", &c->off);
}

void
dcqcn_dev_init(struct dcqcn_dev *d, const struct dcqcn_conf *c,
	       uint64_t tsc_hz, uint32_t line_mbps)
{
	const uint64_t us = tsc_hz / 1000000;

	if (line_mbps == 0 || line_mbps > DCQCN_LINE_MBPS_MAX)
		line_mbps = DCQCN_LINE_MBPS_UNKNOWN;
	*d = (struct dcqcn_dev){
		.off = c->off, .g = c->g, .alpha0 = c->alpha0,
		.min_dec_pct = c->min_dec_pct, .byte_reset = c->byte_reset,
		.threshold = c->threshold, .tsc_hz = tsc_hz,
		.line_bps = (uint64_t)line_mbps * 1000000,
		.min_bps = (uint64_t)c->min_mbps * 1000000,
		.first_bps = (uint64_t)RTE_MIN(c->first_mbps, line_mbps) *
			     1000000,
		.ai_bps = (uint64_t)c->ai_mbps * 1000000,
		.hai_bps = (uint64_t)c->hai_mbps * 1000000,
		.alpha_tsc = RTE_MAX(us * c->alpha_us, (uint64_t)1),
		.monitor_tsc = us * c->monitor_us,
		.time_reset_tsc = RTE_MAX(us * c->time_reset_us, (uint64_t)1),
		.burst_tsc = us * DCQCN_BURST_US,
	};
	if (d->min_bps > d->line_bps)
		d->min_bps = d->line_bps;
}

/* Alpha over the periods passed: the first (the current one, when it
 * ended) grows it if a CNP came in it, every other shrinks it. */
static void
alpha_age(struct dcqcn *q, const struct dcqcn_dev *d, uint64_t now)
{
	uint64_t n = (now - q->alpha_tsc) / d->alpha_tsc;

	if (n == 0)
		return;
	q->alpha_tsc += n * d->alpha_tsc;
	if (q->cnp_seen)
		q->alpha = (d->g * q->alpha + (DCQCN_ONE - d->g) * DCQCN_ONE) /
			   DCQCN_ONE;
	else
		q->alpha = d->g * q->alpha / DCQCN_ONE;
	q->cnp_seen = false;
	/* the alpha of 1024 shrinks to 0 within about 1,400 periods at the
	 * default gain: no longer loop than that */
	for (n = RTE_MIN(n - 1, (uint64_t)2048); n != 0 && q->alpha != 0; n--)
		q->alpha = d->g * q->alpha / DCQCN_ONE;
}

/* One recovery step (its stage counted first): halfway back to the
 * target. The first `threshold` steps of either counter are fast recovery
 * (the target stays); then the target grows by ai (additive), and once
 * both counters passed the threshold by i times hai, i the smaller one's
 * lead (hyper-additive). Back at the line rate, the QP is no longer
 * limited. */
static void
increase(struct dcqcn *q, const struct dcqcn_dev *d)
{
	const uint32_t lo = RTE_MIN(q->t_stage, q->b_stage);
	const uint32_t hi = RTE_MAX(q->t_stage, q->b_stage);

	if (lo > d->threshold)
		q->rt += (uint64_t)(lo - d->threshold) * d->hai_bps;
	else if (hi > d->threshold)
		q->rt += d->ai_bps;
	q->rt = RTE_MIN(q->rt, d->line_bps);
	q->rc = (q->rt + q->rc) / 2;
	if (q->rt == d->line_bps && d->line_bps - q->rc <= d->line_bps / 1024) {
		q->rc = q->rt = 0;	/* recovered: not limited */
		q->t_stage = q->b_stage = 0;
	}
}

static void
stages_reset(struct dcqcn *q, uint64_t now)
{
	q->t_stage = q->b_stage = 0;
	q->bytes = 0;
	q->inc_tsc = now;
}

void
dcqcn_cnp(struct dcqcn *q, const struct dcqcn_dev *d, uint64_t now)
{
	uint64_t rc;

	if (q->rc == 0) {	/* not limited until now */
		q->alpha = d->alpha0;
		q->alpha_tsc = now;
		q->cnp_seen = false;
		q->next_tsc = now;
		if (d->first_bps != 0) {
			q->rc = q->rt = d->first_bps;
			q->cut_tsc = now;
			q->cnp_seen = true;
			q->cuts++;
			stages_reset(q, now);
			return;
		}
		q->rc = q->rt = d->line_bps;
		q->cut_tsc = now - d->monitor_tsc;
	}
	alpha_age(q, d, now);
	q->cnp_seen = true;
	if (now - q->cut_tsc < d->monitor_tsc)
		return;
	q->rt = q->rc;
	rc = q->rc - q->rc * q->alpha / (2 * DCQCN_ONE);
	rc = RTE_MAX(rc, q->rc * d->min_dec_pct / 100);
	q->rc = RTE_MAX(rc, d->min_bps);
	q->cut_tsc = now;
	q->cuts++;
	stages_reset(q, now);
}

void
dcqcn_sent(struct dcqcn *q, const struct dcqcn_dev *d, uint32_t bytes,
	   uint64_t now)
{
	uint64_t n;

	/* paced: this packet's time on the wire at the current rate, from
	 * when the last one's ended; a sender behind its pace (the engine
	 * passes are coarse) catches up by at most DCQCN_BURST_US, idle time
	 * beyond that is not credit */
	q->next_tsc = RTE_MAX(q->next_tsc, now - d->burst_tsc) +
		      (uint64_t)bytes * 8 * d->tsc_hz / q->rc;
	alpha_age(q, d, now);
	q->bytes += bytes;
	while (q->bytes >= d->byte_reset && q->rc != 0) {
		q->bytes -= d->byte_reset;
		q->b_stage++;
		increase(q, d);
	}
	n = (now - q->inc_tsc) / d->time_reset_tsc;
	if (n == 0 || q->rc == 0)
		return;
	q->inc_tsc = n > DCQCN_MAX_STEPS ? now :
		     q->inc_tsc + n * d->time_reset_tsc;
	for (n = RTE_MIN(n, (uint64_t)DCQCN_MAX_STEPS); n != 0 && q->rc != 0;
	     n--) {
		q->t_stage++;
		increase(q, d);
	}
}
