/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* What the libfabric test programs (fabric_test.c, fabric_atomic.c)
 * share: failure counting and a clock. */

#ifndef DPDAT_TEST_FABRIC_UTIL_H
#define DPDAT_TEST_FABRIC_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include <rdma/fi_errno.h>

extern const char *role;	/* "server" or "client", in every message */
extern int failures;		/* fail()s so far */

/* Print "<role>: FAIL: <message>" and count it; the program goes on. */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(cond, ...) do { if (!(cond)) fail(__VA_ARGS__); } while (0)
/* A libfabric call that must return 0: else the program ends, status 1. */
#define MUST(call) do { \
	int _r = (int)(call); \
	if (_r != 0) { \
		fprintf(stderr, "%s: %s: %s\n", role, #call, fi_strerror(-_r)); \
		exit(1); \
	} \
} while (0)

/* CLOCK_MONOTONIC in seconds. */
double now_s(void);

#endif
