/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_DCQCN_H
#define DPDAT_DCQCN_H

/*
 * DCQCN's reaction point (Zhu et al., SIGCOMM 2015, as RoCE NICs run it): a
 * QP that receives CNPs cuts its sending rate by alpha/2, alpha being a
 * moving estimate of how often CNPs come; without CNPs it recovers, first
 * halfway back to the rate it had (fast recovery), then by additive and
 * hyper-additive steps of the target, each step on a timer or a byte
 * count. A QP that never got a CNP is not limited (no pacing, no cost but
 * one branch a packet). Pure functions of the state and the time, so the
 * unit tests check them against the formulas.
 *
 * The parameters are those of the NICs' firmware (and MLNX_OFED's roce_rp
 * names), with their documented defaults; DPDAT_DCQCN sets them.
 */

#include <stdbool.h>
#include <stdint.h>

#define DCQCN_ONE	1024u	/* alpha and g are fractions of 1024 */

/* Settings, as set (DPDAT_DCQCN keys in brackets). */
struct dcqcn_conf {
	bool off;		/* no reaction: CNPs are only counted [off] */
	uint32_t g;		/* alpha gain, of 1024 [g: 1019] */
	uint32_t alpha_us;	/* alpha update period [alpha_us: 1] */
	uint32_t alpha0;	/* alpha at the first CNP, of 1024 [alpha0:
				 * 1023] */
	uint32_t first_mbps;	/* rate set by the first CNP; 0: a cut from
				 * the line rate [first_mbps: 0] */
	uint32_t min_dec_pct;	/* a cut keeps at least this share of the
				 * rate [min_dec_pct: 50] */
	uint32_t min_mbps;	/* never below [min_mbps: 1] */
	uint32_t monitor_us;	/* at most one cut in this long [monitor_us:
				 * 4] */
	uint32_t time_reset_us;	/* a recovery step this often without CNP
				 * [time_reset_us: 300] */
	uint32_t byte_reset;	/* and one each this many bytes sent
				 * [byte_reset: 32767] */
	uint32_t threshold;	/* fast recovery steps before the target
				 * grows (F) [threshold: 1] */
	uint32_t ai_mbps;	/* additive step of the target [ai_mbps: 5] */
	uint32_t hai_mbps;	/* hyper-additive step [hai_mbps: 50] */
};

/* A device's parameters, in its units. */
struct dcqcn_dev {
	bool off;
	uint32_t g, alpha0, min_dec_pct, byte_reset, threshold;
	uint64_t tsc_hz;
	uint64_t line_bps, min_bps, first_bps, ai_bps, hai_bps;
	uint64_t alpha_tsc, monitor_tsc, time_reset_tsc;
	uint64_t burst_tsc;	/* a late sender catches up so much */
};

/* A QP's state; all zero: never cut, not limited. */
struct dcqcn {
	uint64_t rc, rt;	/* current and target rate (bit/s); rc 0: not
				 * limited */
	uint64_t next_tsc;	/* paced: the next packet not before */
	uint64_t alpha_tsc;	/* the last alpha update */
	uint64_t cut_tsc;	/* the last cut */
	uint64_t inc_tsc;	/* the last recovery step by time */
	uint64_t bytes;		/* sent since the last step by bytes */
	uint32_t alpha;		/* of 1024 */
	uint32_t t_stage, b_stage;
	bool cnp_seen;		/* a CNP in the current alpha period */
	uint64_t cuts;
};

/* The defaults. */
void dcqcn_conf_default(struct dcqcn_conf *c);
/* Parse "off" or "key=value,key=value" over c: 0, or -EINVAL (logged). */
int dcqcn_conf_parse(struct dcqcn_conf *c, const char *s);
/* c in a device's units; line_mbps 0: unknown (100 Gb/s taken). */
void dcqcn_dev_init(struct dcqcn_dev *d, const struct dcqcn_conf *c,
		    uint64_t tsc_hz, uint32_t line_mbps);

/* A CNP for the QP at now. */
void dcqcn_cnp(struct dcqcn *q, const struct dcqcn_dev *d, uint64_t now);
/* bytes left (limited QPs only: q->rc != 0): the pace and recovery. */
void dcqcn_sent(struct dcqcn *q, const struct dcqcn_dev *d, uint32_t bytes,
		uint64_t now);

/* Whether the QP may send a packet now. */
static inline bool
dcqcn_may_send(const struct dcqcn *q, uint64_t now)
{
	return q->rc == 0 || now >= q->next_tsc;
}

#endif /* DPDAT_DCQCN_H */
