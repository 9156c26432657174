/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_SWIFT_H
#define DPDAT_SWIFT_H

/*
 * Delay-based congestion control in the manner of Google's Swift (Kumar et
 * al., SIGCOMM 2020), the sender's part alone: a QP's window of packets in
 * flight follows its round trips. A round trip under the target (the
 * QP's smallest seen, plus the target queueing delay) grows the window by
 * ai packets; one above it shrinks the window by beta times the overshoot
 * over the round trip, at most max_mdf of it and at most once a round
 * trip. The engine times one packet a round trip (Karn), so each sample
 * stands for one round trip. The window never goes below one packet
 * (Swift's pacing below one packet a round trip is not done).
 *
 * Sender-side only: it changes nothing on the wire, so it needs no
 * agreement and works with any peer. Opt-in (DPDAT_SWIFT); pure functions
 * of the state, a sample and the time, for the unit tests.
 */

#include <stdbool.h>
#include <stdint.h>

#define SWIFT_ONE	1024u	/* windows in 1/1024 packets */

struct swift_conf {
	bool on;		/* DPDAT_SWIFT given */
	uint32_t target_us;	/* queueing delay aimed at [target_us: 50] */
	uint32_t ai;		/* packets a round trip under it [ai: 1] */
	uint32_t beta_pct;	/* share of the overshoot cut [beta_pct: 80] */
	uint32_t max_mdf_pct;	/* the most one cut takes [max_mdf_pct: 50] */
	uint32_t max_wnd;	/* packets in flight at most [max_wnd: 512] */
};

struct swift_dev {
	bool on;
	uint64_t target_tsc;
	uint32_t ai, beta_pct, max_mdf_pct, max_wnd;
};

/* A QP's state; zero: no sample yet (the window is max_wnd). */
struct swift {
	uint64_t wnd;		/* in 1/1024 packets */
	uint64_t base_tsc;	/* the smallest round trip seen */
	uint64_t cut_tsc;	/* the last cut */
	uint64_t cuts;
};

void swift_conf_default(struct swift_conf *c);
/* "on" or "key=value,..." (which turns it on): 0 or -EINVAL (logged). */
int swift_conf_parse(struct swift_conf *c, const char *s);
void swift_dev_init(struct swift_dev *d, const struct swift_conf *c,
		    uint64_t tsc_hz);
/* A round-trip sample of rtt cycles at now: the window in packets (>= 1). */
uint32_t swift_sample(struct swift *s, const struct swift_dev *d,
		      uint64_t rtt, uint64_t now);

#endif /* DPDAT_SWIFT_H */
