/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The DAT IB extensions of the plug-in through the real registry
 * (dat_extension_op(), dat_ib_extensions.h): what ia_query says of them,
 * the atomic memory privilege, RDMA write with immediate data, compare-
 * and-swap and fetch-and-add over a connection between IA "dpdat0" (memif
 * server) and "dpdat1" (its client) in this one process, with their
 * DAT_IB_DTO_EVENTs; every argument error, DAT_NOT_IMPLEMENTED for the
 * extensions dpdat lacks, and the remote access error of an atomic on
 * memory without the atomic privilege.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include <CUnit/Basic.h>
#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#include "dat_main.h"

#define QUAL		4713
#define WAIT_US		(10 * 1000 * 1000)
#define BUF		4096

static DAT_IA_HANDLE ia, cia;
static DAT_EVD_HANDLE async_evd;
static DAT_PZ_HANDLE pz, cpz;
static DAT_EVD_HANDLE s_cr, s_conn, s_dto, c_conn, c_dto;
static DAT_PSP_HANDLE psp;
static DAT_EP_HANDLE sep, cep;
/* the server's memory: target (atomics, immediate writes), plain (no
 * atomic privilege); the client's: source and results */
static uint8_t tbuf[BUF] __attribute__((aligned(4096)));
static uint8_t pbuf[BUF] __attribute__((aligned(4096)));
static uint8_t cbuf[BUF] __attribute__((aligned(4096)));
static DAT_LMR_HANDLE tl, pl, cl;
static DAT_LMR_CONTEXT tlc, plc, clc;
static DAT_RMR_CONTEXT trc, prc;

static DAT_RETURN
lmr(DAT_IA_HANDLE h, DAT_PZ_HANDLE p, void *b, DAT_MEM_PRIV_FLAGS priv,
    DAT_LMR_HANDLE *l, DAT_LMR_CONTEXT *lc, DAT_RMR_CONTEXT *rc)
{
	DAT_REGION_DESCRIPTION r = { .for_va = b };
	DAT_VLEN reg;
	DAT_VADDR va;

	return dat_lmr_create(h, DAT_MEM_TYPE_VIRTUAL, r, BUF, p, priv,
			      DAT_VA_TYPE_VA, l, lc, rc, &reg, &va);
}

#define next_event(e, ev) dat_test_next_event(e, ev, WAIT_US)

static DAT_IB_EXTENSION_EVENT_DATA *
ext_of(DAT_EVENT *ev)
{
	return (DAT_IB_EXTENSION_EVENT_DATA *)ev->event_extension_data;
}

static int
suite_init(void)
{
	DAT_EP_ATTR a = { .service_type = DAT_SERVICE_TYPE_RC,
		.max_message_size = BUF, .max_rdma_size = BUF,
		.max_recv_dtos = 8, .max_request_dtos = 8,
		.max_recv_iov = 1, .max_request_iov = 1,
		.max_rdma_read_in = 4, .max_rdma_read_out = 4,
		.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG,
		.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG };
	const DAT_MEM_PRIV_FLAGS atomic = DAT_MEM_PRIV_ALL_FLAG |
		DAT_IB_MEM_PRIV_REMOTE_ATOMIC;

	async_evd = DAT_HANDLE_NULL;
	if (dat_ia_open("dpdat0", 8, &async_evd, &ia) != DAT_SUCCESS ||
	    dat_test_open_client(&cia) != DAT_SUCCESS ||
	    dat_pz_create(ia, &pz) != DAT_SUCCESS ||
	    dat_pz_create(cia, &cpz) != DAT_SUCCESS ||
	    lmr(ia, pz, tbuf, atomic, &tl, &tlc, &trc) != DAT_SUCCESS ||
	    lmr(ia, pz, pbuf, DAT_MEM_PRIV_ALL_FLAG, &pl, &plc, &prc) !=
	    DAT_SUCCESS ||
	    lmr(cia, cpz, cbuf, atomic, &cl, &clc, NULL) != DAT_SUCCESS ||
	    dat_evd_create(ia, 4, NULL, DAT_EVD_CR_FLAG, &s_cr) ||
	    dat_evd_create(ia, 8, NULL, DAT_EVD_CONNECTION_FLAG, &s_conn) ||
	    dat_evd_create(ia, 16, NULL, DAT_EVD_DTO_FLAG, &s_dto) ||
	    dat_evd_create(cia, 8, NULL, DAT_EVD_CONNECTION_FLAG, &c_conn) ||
	    dat_evd_create(cia, 16, NULL, DAT_EVD_DTO_FLAG, &c_dto) ||
	    dat_psp_create(ia, QUAL, s_cr, DAT_PSP_CONSUMER_FLAG, &psp) ||
	    dat_ep_create(ia, pz, s_dto, s_dto, s_conn, &a, &sep) ||
	    dat_ep_create(cia, cpz, c_dto, c_dto, c_conn, &a, &cep))
		return -1;
	return 0;
}

/* The connection the other tests use (dat_test_connect() asserts). */
static void
test_connect(void)
{
	CU_ASSERT_EQUAL_FATAL(dat_test_connect(cep, sep, QUAL, s_cr, s_conn,
					       c_conn), 0);
}

/* A free that fails says which and why. */
static int
freed(const char *what, DAT_RETURN r)
{
	if (r == DAT_SUCCESS)
		return 0;
	printf("\n  %s: %s", what, dat_test_ret_str(r));
	return 1;
}

static int
suite_clean(void)
{
	DAT_HANDLE *eps[] = { &sep, &cep };
	DAT_HANDLE *evds[] = { &s_cr, &s_conn, &s_dto, &c_conn, &c_dto };
	DAT_HANDLE *lmrs[] = { &tl, &pl, &cl };
	DAT_EVENT ev;
	int bad = 0;

	/* the connection ends first, as a program ends it: both sides see
	 * it go (the last test broke it: the events may be there already) */
	if (cep != NULL) {
		dat_ep_disconnect(cep, DAT_CLOSE_ABRUPT_FLAG);
		next_event(c_conn, &ev);
		next_event(s_conn, &ev);
	}
	for (unsigned int i = 0; i < 2; i++)
		if (*eps[i] != NULL)
			bad |= freed("dat_ep_free", dat_ep_free(*eps[i]));
	if (psp != NULL)
		bad |= freed("dat_psp_free", dat_psp_free(psp));
	for (unsigned int i = 0; i < 5; i++)
		if (*evds[i] != NULL)
			bad |= freed(i < 3 ? "dat_evd_free (server)" :
				      "dat_evd_free (client)",
				      dat_evd_free(*evds[i]));
	for (unsigned int i = 0; i < 3; i++)
		if (*lmrs[i] != NULL)
			bad |= freed("dat_lmr_free", dat_lmr_free(*lmrs[i]));
	if (cpz != NULL)
		bad |= freed("dat_pz_free", dat_pz_free(cpz));
	if (pz != NULL)
		bad |= freed("dat_pz_free", dat_pz_free(pz));
	if (cia != NULL)
		dat_ia_close(cia, DAT_CLOSE_ABRUPT_FLAG);
	dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG);
	return bad ? -1 : 0;
}

/* ia_query: the IB extensions, and which of them dpdat has. */
static void
test_query(void)
{
	DAT_PROVIDER_ATTR p;
	DAT_IA_ATTR a;
	int found = 0;

	EXPECT(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &a,
			    DAT_PROVIDER_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT_EQUAL(a.extension_supported, DAT_EXTENSION_IB);
	CU_ASSERT_EQUAL(a.extension_version, DAT_IB_EXTENSION_VERSION);
	for (int i = 0; i < p.num_provider_specific_attr; i++) {
		const DAT_NAMED_ATTR *n = &p.provider_specific_attr[i];

		if (strcmp(n->name, DAT_IB_ATTR_CMP_AND_SWAP) == 0 ||
		    strcmp(n->name, DAT_IB_ATTR_FETCH_AND_ADD) == 0 ||
		    strcmp(n->name, DAT_IB_ATTR_IMMED_DATA) == 0) {
			CU_ASSERT_STRING_EQUAL(n->value, "TRUE");
			found++;
		}
	}
	CU_ASSERT_EQUAL(found, 3);
}

/* The atomic privilege needs local write; an RMR may be bound with it. */
static void
test_privilege(void)
{
	DAT_LMR_HANDLE l;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;

	EXPECT(lmr(ia, pz, pbuf, DAT_MEM_PRIV_LOCAL_READ_FLAG |
		   DAT_IB_MEM_PRIV_REMOTE_ATOMIC, &l, &lc, &rc),
	       BAD_PARAM(DAT_INVALID_ARG6));
	EXPECT(lmr(ia, pz, pbuf, DAT_MEM_PRIV_ALL_FLAG | 0x80, &l, &lc, &rc),
	       BAD_PARAM(DAT_INVALID_ARG6));
	EXPECT(lmr(ia, pz, pbuf, DAT_MEM_PRIV_LOCAL_WRITE_FLAG |
		   DAT_IB_MEM_PRIV_REMOTE_ATOMIC, &l, &lc, &rc), DAT_SUCCESS);
	CU_ASSERT_NOT_EQUAL(rc, 0);	/* a remote privilege: a context */
	EXPECT(dat_lmr_free(l), DAT_SUCCESS);
}

/* RDMA write with immediate data: the data lands, the receive it takes
 * says DAT_IB_RDMA_WRITE_IMMED_DATA with the value, the request
 * DAT_IB_RDMA_WRITE_IMMED. */
static void
test_write_immed(void)
{
	DAT_LMR_TRIPLET src = { .lmr_context = clc, .segment_length = 300,
				.virtual_address = (uintptr_t)cbuf };
	DAT_LMR_TRIPLET rcv = { .lmr_context = plc, .segment_length = 64,
				.virtual_address = (uintptr_t)pbuf };
	DAT_RMR_TRIPLET dst = { .rmr_context = trc, .segment_length = 300,
				.virtual_address = (uintptr_t)tbuf + 1000 };
	DAT_DTO_COOKIE c = { .as_64 = 77 }, rc = { .as_64 = 5 };
	DAT_EVENT ev;

	memset(cbuf, 0xa7, 300);
	EXPECT(dat_ep_post_recv(sep, 1, &rcv, rc, DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	EXPECT(dat_ib_post_rdma_write_immed(cep, 1, &src, c, &dst, 0x7777,
					    DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(next_event(c_dto, &ev), DAT_IB_DTO_EVENT);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.status,
			DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.operation,
			(DAT_DTOS)DAT_IB_DTO_RDMA_WRITE_IMMED);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.user_cookie.as_64,
			77);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.transfered_length,
			300);
	CU_ASSERT_EQUAL(ext_of(&ev)->type, DAT_IB_RDMA_WRITE_IMMED);
	CU_ASSERT_EQUAL(ext_of(&ev)->status, DAT_OP_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(next_event(s_dto, &ev), DAT_IB_DTO_EVENT);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.operation,
			(DAT_DTOS)DAT_IB_DTO_RECV_IMMED);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.user_cookie.as_64,
			5);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.transfered_length,
			300);
	CU_ASSERT_PTR_EQUAL(ev.event_data.dto_completion_event_data.ep_handle,
			    sep);
	CU_ASSERT_EQUAL(ext_of(&ev)->type, DAT_IB_RDMA_WRITE_IMMED_DATA);
	CU_ASSERT_EQUAL(ext_of(&ev)->val.immed.data, 0x7777);
	CU_ASSERT_EQUAL(tbuf[1000], 0xa7);
	CU_ASSERT_EQUAL(tbuf[1299], 0xa7);
	CU_ASSERT_EQUAL(tbuf[1300], 0);
	/* no data at all: the immediate alone, a notification */
	rc.as_64 = 6;
	EXPECT(dat_ep_post_recv(sep, 1, &rcv, rc, DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	dst.segment_length = 0;
	EXPECT(dat_ib_post_rdma_write_immed(cep, 0, NULL, c, &dst, 0x42,
					    DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(next_event(c_dto, &ev), DAT_IB_DTO_EVENT);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.status,
			DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(next_event(s_dto, &ev), DAT_IB_DTO_EVENT);
	CU_ASSERT_EQUAL(ext_of(&ev)->val.immed.data, 0x42);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.transfered_length,
			0);
}

/* The next request event of the client: an atomic of type t, done. */
static void
expect_atomic(DAT_IB_EXT_TYPE t, uint64_t cookie)
{
	DAT_EVENT ev;

	CU_ASSERT_EQUAL_FATAL(next_event(c_dto, &ev), DAT_IB_DTO_EVENT);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.status,
			DAT_DTO_SUCCESS);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.user_cookie.as_64,
			cookie);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.transfered_length,
			8);
	CU_ASSERT_EQUAL(ext_of(&ev)->type, t);
	CU_ASSERT_EQUAL(ext_of(&ev)->status, DAT_OP_SUCCESS);
}

static void
test_atomics(void)
{
	DAT_LMR_TRIPLET res = { .lmr_context = clc, .segment_length = 8,
				.virtual_address = (uintptr_t)cbuf + 2048 };
	DAT_RMR_TRIPLET w = { .rmr_context = trc, .segment_length = 8,
			      .virtual_address = (uintptr_t)tbuf + 64 };
	volatile uint64_t *word = (uint64_t *)(tbuf + 64);
	volatile uint64_t *got = (uint64_t *)(cbuf + 2048);
	DAT_DTO_COOKIE c = { .as_64 = 1 };

	*word = 0x12345;
	EXPECT(dat_ib_post_cmp_and_swap(cep, 0x12345, 0x98765, &res, c, &w,
					DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	expect_atomic(DAT_IB_CMP_AND_SWAP, 1);
	CU_ASSERT_EQUAL(*got, 0x12345);
	CU_ASSERT_EQUAL(*word, 0x98765);
	c.as_64 = 2;
	EXPECT(dat_ib_post_cmp_and_swap(cep, 1, 2, &res, c, &w,
					DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	expect_atomic(DAT_IB_CMP_AND_SWAP, 2);
	CU_ASSERT_EQUAL(*got, 0x98765);
	CU_ASSERT_EQUAL(*word, 0x98765);
	c.as_64 = 3;
	EXPECT(dat_ib_post_fetch_and_add(cep, 0x100, &res, c, &w,
					 DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	expect_atomic(DAT_IB_FETCH_AND_ADD, 3);
	CU_ASSERT_EQUAL(*got, 0x98765);
	CU_ASSERT_EQUAL(*word, 0x98865);
}

/* Every argument error, and the extensions dpdat lacks. */
static void
test_arguments(void)
{
	DAT_LMR_TRIPLET res = { .lmr_context = clc, .segment_length = 8,
				.virtual_address = (uintptr_t)cbuf + 2048 };
	DAT_LMR_TRIPLET shrt = res;
	DAT_RMR_TRIPLET w = { .rmr_context = trc, .segment_length = 8,
			      .virtual_address = (uintptr_t)tbuf + 64 };
	DAT_DTO_COOKIE c = { .as_64 = 9 };
	DAT_UINT64 cnt[4];

	shrt.segment_length = 4;
	/* (a pointer that is no handle at all never reaches the provider:
	 * libdat2 finds the provider through the handle) */
	EXPECT(dat_ib_post_fetch_and_add(cia, 1, &res, c, &w,
					 DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_HANDLE(DAT_INVALID_HANDLE_EP));
	EXPECT(dat_ib_post_fetch_and_add(cep, 1, NULL, c, &w,
					 DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG4));
	EXPECT(dat_ib_post_fetch_and_add(cep, 1, &shrt, c, &w,
					 DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG4));
	EXPECT(dat_ib_post_fetch_and_add(cep, 1, &res, c, NULL,
					 DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG6));
	EXPECT(dat_ib_post_cmp_and_swap(cep, 1, 2, &shrt, c, &w,
					DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG5));
	EXPECT(dat_ib_post_cmp_and_swap(cep, 1, 2, &res, c, NULL,
					DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG7));
	EXPECT(dat_ib_post_rdma_write_immed(cep, 1, NULL, c, &w, 1,
					    DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG4));
	EXPECT(dat_ib_post_rdma_write_immed(cep, -1, &res, c, &w, 1,
					    DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG3));
	EXPECT(dat_ib_post_rdma_write_immed(cep, 17, &res, c, &w, 1,
					    DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG3));
	EXPECT(dat_ib_post_rdma_write_immed(cep, 1, &res, c, NULL, 1,
					    DAT_COMPLETION_DEFAULT_FLAG),
	       BAD_PARAM(DAT_INVALID_ARG6));
	/* not in dpdat: datagrams, counters */
	EXPECT(dat_ib_post_send_ud(cep, 1, &res, NULL, c,
				   DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_NOT_IMPLEMENTED);
	EXPECT(dat_extension_op(ia, DAT_IB_QUERY_COUNTERS_OP, 0, cnt, 0),
	       DAT_NOT_IMPLEMENTED);
	/* nothing was posted: no event */
	CU_ASSERT_EQUAL(dat_evd_dequeue(c_dto, &(DAT_EVENT){ 0 }),
			DAT_QUEUE_EMPTY);
}

/* An atomic on memory registered without the atomic privilege: a remote
 * access error, the IB extension status DAT_IB_OP_ERR; the connection
 * breaks (last test). */
static void
test_atomic_no_privilege(void)
{
	DAT_LMR_TRIPLET res = { .lmr_context = clc, .segment_length = 8,
				.virtual_address = (uintptr_t)cbuf + 2048 };
	DAT_RMR_TRIPLET w = { .rmr_context = prc, .segment_length = 8,
			      .virtual_address = (uintptr_t)pbuf + 64 };
	volatile uint64_t *word = (uint64_t *)(pbuf + 64);
	DAT_DTO_COOKIE c = { .as_64 = 4 };
	DAT_EVENT ev;

	*word = 5;
	EXPECT(dat_ib_post_fetch_and_add(cep, 1, &res, c, &w,
					 DAT_COMPLETION_DEFAULT_FLAG),
	       DAT_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(next_event(c_dto, &ev), DAT_IB_DTO_EVENT);
	CU_ASSERT_EQUAL(ev.event_data.dto_completion_event_data.status,
			DAT_DTO_ERR_REMOTE_ACCESS);
	CU_ASSERT_EQUAL(ext_of(&ev)->type, DAT_IB_FETCH_AND_ADD);
	CU_ASSERT_EQUAL(ext_of(&ev)->status, DAT_IB_OP_ERR);
	CU_ASSERT_EQUAL(*word, 5);
}

/* EP attributes around the extensions: unreliable datagrams are not
 * dpdat's (DAT_MODEL_NOT_SUPPORTED, not an invalid argument); an EP with no
 * request EVD may ask for no request DTOs, as OFA DAPL lets it. */
static void
test_ep_attributes(void)
{
	DAT_EP_ATTR a = { .service_type = DAT_SERVICE_TYPE_RC,
		.max_message_size = BUF, .max_rdma_size = BUF,
		.max_recv_dtos = 8, .max_request_dtos = 0,
		.max_recv_iov = 1, .max_request_iov = 1,
		.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG,
		.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG };
	DAT_EP_HANDLE ep;

	EXPECT(dat_ep_create(ia, pz, s_dto, NULL, s_conn, &a, &ep),
	       DAT_SUCCESS);
	EXPECT(dat_ep_free(ep), DAT_SUCCESS);
	EXPECT(dat_ep_create(ia, pz, s_dto, s_dto, s_conn, &a, &ep),
	       BAD_PARAM(DAT_INVALID_ARG6));
	a.max_request_dtos = 8;
	a.service_type = (DAT_SERVICE_TYPE)DAT_IB_SERVICE_TYPE_UD;
	EXPECT(dat_ep_create(ia, pz, s_dto, s_dto, s_conn, &a, &ep),
	       DAT_MODEL_NOT_SUPPORTED);
	a.service_type = (DAT_SERVICE_TYPE)(DAT_IB_SERVICE_TYPE_UD + 1);
	EXPECT(dat_ep_create(ia, pz, s_dto, s_dto, s_conn, &a, &ep),
	       BAD_PARAM(DAT_INVALID_ARG6));
}

/* The IB extension's EVD flag: a DTO EVD, which an EP may use; a bit past
 * it is refused. */
static void
test_evd_flag(void)
{
	DAT_EVD_HANDLE e;
	DAT_EVD_PARAM p;
	DAT_EP_HANDLE ep;

	EXPECT(dat_evd_create(ia, 8, NULL,
			      (DAT_EVD_FLAGS)DAT_IB_EVD_EXTENSION_FLAG, &e),
	       DAT_SUCCESS);
	EXPECT(dat_evd_query(e, DAT_EVD_FIELD_ALL, &p), DAT_SUCCESS);
	CU_ASSERT(p.evd_flags & DAT_EVD_DTO_FLAG);
	EXPECT(dat_ep_create(ia, pz, e, e, s_conn, NULL, &ep), DAT_SUCCESS);
	EXPECT(dat_ep_free(ep), DAT_SUCCESS);
	EXPECT(dat_evd_free(e), DAT_SUCCESS);
	EXPECT(dat_evd_create(ia, 8, NULL,
			      (DAT_EVD_FLAGS)(DAT_IB_EVD_EXTENSION_FLAG << 1),
			      &e), BAD_PARAM(DAT_INVALID_ARG4));
}

static CU_TestInfo ext_tests[] = {
	{ "EP attributes: datagrams, no request DTOs", test_ep_attributes },
	{ "the extension's EVD flag", test_evd_flag },
	{ "ia_query: the IB extensions", test_query },
	{ "connect dpdat1 to dpdat0", test_connect },
	{ "the atomic privilege", test_privilege },
	{ "RDMA write with immediate data", test_write_immed },
	{ "compare-and-swap, fetch-and-add", test_atomics },
	{ "argument errors, extensions not implemented", test_arguments },
	{ "atomic without the privilege: remote access error",
	  test_atomic_no_privilege },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "dat_ext", suite_init, suite_clean, NULL, NULL, ext_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	dat_test_main(argc, argv, "ext", suites);
}
