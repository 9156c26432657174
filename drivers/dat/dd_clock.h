/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* The monotonic clock of the waits (evd.c, cno.c): condition variables are
 * created with CLOCK_MONOTONIC, and deadlines are nanoseconds of it. */

#ifndef DPDAT_DAT_DD_CLOCK_H
#define DPDAT_DAT_DD_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define DD_NS_PER_US	1000ull
#define DD_NS_PER_MS	1000000ull
#define DD_NEVER	UINT64_MAX	/* a deadline that never comes */

static inline uint64_t
dd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep on cond until signalled or the monotonic time until (DD_NEVER: no
 * limit). */
static inline void
dd_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock,
		   uint64_t until)
{
	struct timespec ts;

	if (until == DD_NEVER) {
		pthread_cond_wait(cond, lock);
		return;
	}
	ts.tv_sec = (time_t)(until / 1000000000ull);
	ts.tv_nsec = (long)(until % 1000000000ull);
	pthread_cond_timedwait(cond, lock, &ts);
}

#endif /* DPDAT_DAT_DD_CLOCK_H */
