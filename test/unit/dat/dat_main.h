/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * What the DAT test programs share: running CUnit suites through the real
 * registry, and the client end of the memif pair they configure.
 */

#ifndef DPDAT_TEST_DAT_MAIN_H
#define DPDAT_TEST_DAT_MAIN_H

#include <CUnit/Basic.h>
#include <dat2/udat.h>

/*
 * Run the suites with argv[1] as the registry's dat.conf. libdat2 reads
 * DAT_OVERRIDE when it is loaded, before main(): this sets it and executes
 * the program again. Every IA the process opens is, through
 * DPDAT_DAT_PARAMS, a memif server (198.18.0.1) on a socket of its own,
 * /tmp/dpdat-<tag>-<pid>.sock. Exits 0 when every test passed, 1 when one
 * failed, 2 on bad usage.
 */
void dat_test_main(int argc, char **argv, const char *tag,
		   CU_SuiteInfo *suites) __attribute__((noreturn));

/* Open IA "dpdat1" as the memif client (198.18.0.2) of that socket; the
 * server's DPDAT_DAT_PARAMS are back in place on return. */
DAT_RETURN dat_test_open_client(DAT_IA_HANDLE *ia);

/* Connect the client EP cep to qual on the server IA (198.18.0.1), asking
 * again while the memif link comes up, and accept the request on sep:
 * 0 when both ends are established (events on s_cr, s_conn and c_conn,
 * 10 s each at most), -1 otherwise. */
int dat_test_connect(DAT_EP_HANDLE cep, DAT_EP_HANDLE sep, DAT_CONN_QUAL qual,
		     DAT_EVD_HANDLE s_cr, DAT_EVD_HANDLE s_conn,
		     DAT_EVD_HANDLE c_conn);

/* The next event of e within us microseconds (DAT_TEST_WAIT_US: 10 s):
 * its number, or 0. */
#define DAT_TEST_WAIT_US	(10 * 1000 * 1000)
DAT_EVENT_NUMBER dat_test_next_event(DAT_EVD_HANDLE e, DAT_EVENT *ev,
				     DAT_TIMEOUT us);

/* An EVD of qlen events and flags, without a CNO. */
DAT_RETURN dat_test_evd(DAT_IA_HANDLE ia, DAT_COUNT qlen, DAT_EVD_FLAGS flags,
			DAT_EVD_HANDLE *e);

/* A suite's IA "dpdat0" (the memif server) and two PZs on it; *async as
 * dat_ia_open(3) takes it (DAT_HANDLE_NULL: the provider makes one).
 * 0, or -1 when one of them could not be made. */
int dat_test_ia_pzs(DAT_IA_HANDLE *ia, DAT_EVD_HANDLE *async,
		    DAT_PZ_HANDLE *pz1, DAT_PZ_HANDLE *pz2);
/* ... freed and closed, each failure said: 0 or -1. */
int dat_test_ia_pzs_close(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz1,
			  DAT_PZ_HANDLE pz2);

/* The codes of the DAT calls' misuse, with their subtype. */
#define BAD_HANDLE(s)	((DAT_RETURN)(DAT_INVALID_HANDLE | (s)))
#define BAD_PARAM(n)	((DAT_RETURN)(DAT_INVALID_PARAMETER | (n)))
#define BAD_STATE(s)	((DAT_RETURN)(DAT_INVALID_STATE | (s)))

/* "MAJOR MINOR (0x...)" of a DAT return code, in a static buffer (the
 * next call overwrites it). */
const char *dat_test_ret_str(DAT_RETURN r);

/* A CUnit assertion that a DAT call returned want, saying both if not. */
#define EXPECT(got, want) do {						\
	DAT_RETURN g_ = (got), w_ = (want);				\
	if (g_ != w_) {							\
		printf("\n  %s:%d: got %s", __FILE__, __LINE__,	\
		       dat_test_ret_str(g_));				\
		printf(", want %s", dat_test_ret_str(w_));		\
	}								\
	CU_ASSERT_EQUAL(g_, w_);					\
} while (0)

#endif /* DPDAT_TEST_DAT_MAIN_H */
