/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Between the EVD/CNO test files. */

#ifndef DPDAT_TEST_EVD_H
#define DPDAT_TEST_EVD_H

#include <stdint.h>

#include <CUnit/Basic.h>
#include <dat2/udat.h>

#define IA_NAME		"dpdat0"
#define QLEN_MAX	(1 << 16)	/* DD_MAX_EVD_QLEN */
#define MS		1000u		/* DAT_TIMEOUT: microseconds */
#define LONG		(5000 * MS)	/* "forever" that still fails */
/* A woken waiter returns within a slice (1 ms) when nothing is lost, at
 * LONG when a wake-up is lost: the bound leaves room for a loaded
 * machine (2 vCPUs, engine threads polling) */
#define WOKEN_MS	500

#define TYPE(r)		DAT_GET_TYPE(r)
#define SUB(r)		DAT_GET_SUBTYPE(r)
#define ASSERT_RET(r, t, s) do { \
	DAT_RETURN r_ = (r); \
	CU_ASSERT_EQUAL(TYPE(r_), (DAT_UINT32)(t)); \
	CU_ASSERT_EQUAL(SUB(r_), (DAT_UINT32)(s)); \
} while (0)
#define ASSERT_OK(r)	CU_ASSERT_EQUAL((r), DAT_SUCCESS)

uint64_t evd_now_ms(void);

/* evd_dto.c: completions through EVDs over a real connection. */
int evd_dto_init(void);
int evd_dto_clean(void);
extern CU_TestInfo evd_dto_tests[];

#endif /* DPDAT_TEST_EVD_H */
