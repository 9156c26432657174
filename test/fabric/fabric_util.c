/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <stdarg.h>
#include <time.h>

#include "fabric_util.h"

const char *role = "?";
int failures;

void
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: FAIL: ", role);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
