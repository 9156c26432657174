/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Delay-based congestion control, the sender's part: see swift.h. */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "rc_priv.h"
#include "swift.h"

void
swift_conf_default(struct swift_conf *c)
{
	*c = (struct swift_conf){ .target_us = 50, .ai = 1, .beta_pct = 80,
				  .max_mdf_pct = 50, .max_wnd = 512 };
}

static const struct rc_kv_key swift_keys[] = {
#define K(name, lo, hi) { #name, offsetof(struct swift_conf, name), lo, hi }
	K(target_us, 1, 1000000),
	K(ai, 1, 64),
	K(beta_pct, 1, 100),
	K(max_mdf_pct, 1, 99),
	K(max_wnd, 1, 512),
#undef K
};

int
swift_conf_parse(struct swift_conf *c, const char *s)
{
	bool on = false;
	int ret;

	if (s == NULL)
		return 0;
	ret = rc_kv_parse("DPDAT_SWIFT", s, swift_keys, RTE_DIM(swift_keys),
			  c, "on", &on);
	if (ret == 0)
		c->on = true;	/* "on", or any key */
	return ret;
}

void
swift_dev_init(struct swift_dev *d, const struct swift_conf *c,
	       uint64_t tsc_hz)
{
	*d = (struct swift_dev){
		.on = c->on, .target_tsc = tsc_hz / 1000000 * c->target_us,
		.ai = c->ai, .beta_pct = c->beta_pct,
		.max_mdf_pct = c->max_mdf_pct, .max_wnd = c->max_wnd,
	};
}

uint32_t
swift_sample(struct swift *s, const struct swift_dev *d, uint64_t rtt,
	     uint64_t now)
{
	const uint64_t max = (uint64_t)d->max_wnd * SWIFT_ONE;
	uint64_t target, cut;

	if (rtt == 0)
		rtt = 1;
	if (s->wnd == 0) {	/* the first sample: from the full window */
		s->wnd = max;
		s->base_tsc = rtt;
		s->cut_tsc = now - rtt;
	}
	s->base_tsc = RTE_MIN(s->base_tsc, rtt);
	target = s->base_tsc + d->target_tsc;
	if (rtt <= target) {
		s->wnd = RTE_MIN(s->wnd + (uint64_t)d->ai * SWIFT_ONE, max);
	} else if (now - s->cut_tsc >= rtt) {
		/* beta x overshoot / rtt, at most max_mdf: in percent */
		cut = (uint64_t)d->beta_pct * (rtt - target) / rtt;
		cut = RTE_MIN(cut, (uint64_t)d->max_mdf_pct);
		s->wnd = RTE_MAX(s->wnd * (100 - cut) / 100,
				 (uint64_t)SWIFT_ONE);
		s->cut_tsc = now;
		s->cuts++;
	}
	return (uint32_t)(s->wnd / SWIFT_ONE);
}
