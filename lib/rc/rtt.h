/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_RC_RTT_H
#define DPDAT_RC_RTT_H

/*
 * The round-trip estimator of a requester (RFC 6298, in TSC cycles): one
 * sample at a time, taken from a packet sent once (Karn: never from a
 * retransmission). rto is the retransmit timeout: srtt + 4 rttvar, between
 * a floor (a scheduling hiccup of a shared machine must not look like loss)
 * and the consumer's local ACK timeout, which stays the upper bound.
 * Doubled at each expiry without progress (backoff), back to the estimate
 * at the next sample.
 */

#include <stdint.h>

struct rc_rtt {
	uint64_t srtt;		/* smoothed round trip; 0: no sample yet */
	uint64_t rttvar;	/* its mean deviation */
	uint64_t rto;		/* current retransmit timeout, backoff included */
	uint64_t floor;		/* lowest rto */
	uint64_t ceil;		/* highest rto: the consumer's ACK timeout */
	uint32_t backoff;	/* expiries since the last sample */
};

static inline uint64_t
rc_rtt_clamp(const struct rc_rtt *r, uint64_t v)
{
	return v < r->floor ? r->floor : v > r->ceil ? r->ceil : v;
}

/* No sample yet: the timeout starts at init (clamped). */
static inline void
rc_rtt_init(struct rc_rtt *r, uint64_t floor, uint64_t ceil, uint64_t init)
{
	r->srtt = 0;
	r->rttvar = 0;
	r->floor = floor < ceil ? floor : ceil;
	r->ceil = ceil;
	r->backoff = 0;
	r->rto = rc_rtt_clamp(r, init);
}

static inline void
rc_rtt_sample(struct rc_rtt *r, uint64_t sample)
{
	uint64_t d;

	if (sample == 0)
		sample = 1;
	if (r->srtt == 0) {
		r->srtt = sample;
		r->rttvar = sample / 2;
	} else {
		d = r->srtt > sample ? r->srtt - sample : sample - r->srtt;
		r->rttvar = (3 * r->rttvar + d) / 4;
		r->srtt = (7 * r->srtt + sample) / 8;
	}
	r->backoff = 0;
	r->rto = rc_rtt_clamp(r, r->srtt + 4 * r->rttvar);
}

/* The timeout expired without progress: wait twice as long next time. */
static inline void
rc_rtt_backoff(struct rc_rtt *r)
{
	r->backoff++;
	r->rto = rc_rtt_clamp(r, r->rto * 2);
}

/* Progress: the backoff ends (as Linux TCP does on new data acknowledged;
 * no sample needed: the peer answers). */
static inline void
rc_rtt_progress(struct rc_rtt *r)
{
	if (r->backoff == 0)
		return;
	if (r->srtt != 0)
		r->rto = rc_rtt_clamp(r, r->srtt + 4 * r->rttvar);
	else
		r->rto = rc_rtt_clamp(r, r->rto >> r->backoff);
	r->backoff = 0;
}

/* The tail probe's wait: two round trips, at least the floor's eighth and
 * never beyond the retransmit timeout. */
static inline uint64_t
rc_rtt_pto(const struct rc_rtt *r)
{
	uint64_t v = r->srtt != 0 ? 2 * r->srtt : r->rto / 2;

	if (v < r->floor / 8)
		v = r->floor / 8;
	return v < r->rto ? v : r->rto;
}

#endif /* DPDAT_RC_RTT_H */
