/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Misuse of the DAT plug-in, table-driven, through the real registry:
 * every call that takes a handle, given a live handle of every other type,
 * a handle already freed, and NULL, answers DAT_INVALID_HANDLE and touches
 * nothing (the objects still work afterwards; under the sanitizers nothing
 * leaks). A handle that is no object at all never reaches the provider:
 * libdat2 finds the provider through the handle's first word; nor does
 * the consumer's IA handle, which libdat2 maps itself, where a handle of
 * another kind is due.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include <CUnit/Basic.h>
#include <dat2/udat.h>

#include "dat_main.h"

#define QUAL	4714
#define BUF	4096

enum kind { K_IA, K_PZ, K_LMR, K_RMR, K_EVD, K_CNO, K_EP, K_PSP, K_RSP,
	    K_SRQ, K_N };

static const char *const kind_name[K_N] = { "IA", "PZ", "LMR", "RMR", "EVD",
	"CNO", "EP", "PSP", "RSP", "SRQ" };

static DAT_IA_HANDLE ia;
static DAT_HANDLE live[K_N];	/* one live object of each kind */
static DAT_HANDLE freed[K_N];	/* one freed object of each kind (not IA) */
static uint8_t buf[BUF] __attribute__((aligned(4096)));
static DAT_LMR_CONTEXT lc;

/* ---- the calls, each with arguments good but for the handle h ---- */

static DAT_RETURN
c_ia_query(DAT_HANDLE h)
{
	DAT_IA_ATTR a;

	return dat_ia_query(h, NULL, DAT_IA_FIELD_ALL, &a, 0, NULL);
}

static DAT_RETURN
c_pz_create(DAT_HANDLE h)
{
	DAT_PZ_HANDLE p;

	return dat_pz_create(h, &p);
}

static DAT_RETURN
c_evd_create(DAT_HANDLE h)
{
	DAT_EVD_HANDLE e;

	return dat_evd_create(h, 4, NULL, DAT_EVD_DTO_FLAG, &e);
}

static DAT_RETURN
c_cno_create(DAT_HANDLE h)
{
	DAT_CNO_HANDLE c;

	return dat_cno_create(h, DAT_OS_WAIT_PROXY_AGENT_NULL, &c);
}

static DAT_RETURN
c_lmr_create(DAT_HANDLE h)
{
	DAT_REGION_DESCRIPTION r = { .for_va = buf };
	DAT_LMR_HANDLE l;
	DAT_LMR_CONTEXT c;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN n;
	DAT_VADDR a;

	return dat_lmr_create(h, DAT_MEM_TYPE_VIRTUAL, r, BUF, live[K_PZ],
			      DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &l, &c,
			      &rc, &n, &a);
}

static DAT_RETURN
c_ep_create(DAT_HANDLE h)
{
	DAT_EP_HANDLE e;

	return dat_ep_create(h, live[K_PZ], live[K_EVD], live[K_EVD],
			     live[K_EVD], NULL, &e);
}

static DAT_RETURN
c_psp_create(DAT_HANDLE h)
{
	DAT_PSP_HANDLE p;

	return dat_psp_create(h, QUAL + 100, live[K_EVD],
			      DAT_PSP_CONSUMER_FLAG, &p);
}

static DAT_RETURN
c_psp_create_any(DAT_HANDLE h)
{
	DAT_CONN_QUAL q;
	DAT_PSP_HANDLE p;

	return dat_psp_create_any(h, &q, live[K_EVD], DAT_PSP_CONSUMER_FLAG,
				  &p);
}

static DAT_RETURN
c_srq_create(DAT_HANDLE h)
{
	DAT_SRQ_ATTR a = { .max_recv_dtos = 4, .max_recv_iov = 1 };
	DAT_SRQ_HANDLE s;

	return dat_srq_create(h, live[K_PZ], &a, &s);
}

static DAT_RETURN
c_lmr_sync(DAT_HANDLE h)
{
	DAT_LMR_TRIPLET t = { .lmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };

	return dat_lmr_sync_rdma_read(h, &t, 1);
}

static DAT_RETURN
c_pz_query(DAT_HANDLE h)
{
	DAT_PZ_PARAM p;

	return dat_pz_query(h, DAT_PZ_FIELD_ALL, &p);
}

static DAT_RETURN
c_pz_free(DAT_HANDLE h)
{
	return dat_pz_free(h);
}

static DAT_RETURN
c_rmr_create(DAT_HANDLE h)
{
	DAT_RMR_HANDLE r;

	return dat_rmr_create(h, &r);
}

static DAT_RETURN
c_lmr_query(DAT_HANDLE h)
{
	DAT_LMR_PARAM p;

	return dat_lmr_query(h, DAT_LMR_FIELD_ALL, &p);
}

static DAT_RETURN
c_lmr_free(DAT_HANDLE h)
{
	return dat_lmr_free(h);
}

static DAT_RETURN
c_rmr_query(DAT_HANDLE h)
{
	DAT_RMR_PARAM p;

	return dat_rmr_query(h, DAT_RMR_FIELD_ALL, &p);
}

static DAT_RETURN
c_rmr_bind(DAT_HANDLE h)
{
	DAT_LMR_TRIPLET t = { .lmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };
	DAT_RMR_COOKIE ck = { .as_64 = 1 };
	DAT_RMR_CONTEXT c;

	return dat_rmr_bind(h, live[K_LMR], &t, DAT_MEM_PRIV_REMOTE_READ_FLAG,
			    DAT_VA_TYPE_VA, live[K_EP], ck,
			    DAT_COMPLETION_DEFAULT_FLAG, &c);
}

static DAT_RETURN
c_rmr_free(DAT_HANDLE h)
{
	return dat_rmr_free(h);
}

static DAT_RETURN
c_cno_query(DAT_HANDLE h)
{
	DAT_CNO_PARAM p;

	return dat_cno_query(h, DAT_CNO_FIELD_ALL, &p);
}

static DAT_RETURN
c_cno_wait(DAT_HANDLE h)
{
	DAT_EVD_HANDLE e;

	return dat_cno_wait(h, 0, &e);
}

static DAT_RETURN
c_cno_modify_agent(DAT_HANDLE h)
{
	return dat_cno_modify_agent(h, DAT_OS_WAIT_PROXY_AGENT_NULL);
}

static DAT_RETURN
c_cno_free(DAT_HANDLE h)
{
	return dat_cno_free(h);
}

static DAT_RETURN
c_ep_query(DAT_HANDLE h)
{
	DAT_EP_PARAM p;

	return dat_ep_query(h, DAT_EP_FIELD_ALL, &p);
}

static DAT_RETURN
c_ep_modify(DAT_HANDLE h)
{
	DAT_EP_PARAM p = { 0 };

	return dat_ep_modify(h, 0, &p);
}

static DAT_RETURN
c_ep_connect(DAT_HANDLE h)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(0xc6120001) };

	return dat_ep_connect(h, (DAT_IA_ADDRESS_PTR)&sin, QUAL, 1000000, 0,
			      NULL, DAT_QOS_BEST_EFFORT,
			      DAT_CONNECT_DEFAULT_FLAG);
}

static DAT_RETURN
c_ep_dup_connect(DAT_HANDLE h)
{
	return dat_ep_dup_connect(h, live[K_EP], 1000000, 0, NULL,
				  DAT_QOS_BEST_EFFORT);
}

static DAT_RETURN
c_ep_disconnect(DAT_HANDLE h)
{
	return dat_ep_disconnect(h, DAT_CLOSE_ABRUPT_FLAG);
}

static DAT_RETURN
c_ep_reset(DAT_HANDLE h)
{
	return dat_ep_reset(h);
}

static DAT_RETURN
c_ep_get_status(DAT_HANDLE h)
{
	DAT_EP_STATE s;
	DAT_BOOLEAN a, b;

	return dat_ep_get_status(h, &s, &a, &b);
}

static DAT_RETURN
c_ep_post_send(DAT_HANDLE h)
{
	DAT_LMR_TRIPLET t = { .lmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };
	DAT_DTO_COOKIE ck = { .as_64 = 1 };

	return dat_ep_post_send(h, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN
c_ep_post_recv(DAT_HANDLE h)
{
	DAT_LMR_TRIPLET t = { .lmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };
	DAT_DTO_COOKIE ck = { .as_64 = 1 };

	return dat_ep_post_recv(h, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN
c_ep_post_rdma_write(DAT_HANDLE h)
{
	DAT_LMR_TRIPLET t = { .lmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };
	DAT_RMR_TRIPLET r = { .rmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };
	DAT_DTO_COOKIE ck = { .as_64 = 1 };

	return dat_ep_post_rdma_write(h, 1, &t, ck, &r,
				      DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN
c_ep_post_rdma_read(DAT_HANDLE h)
{
	DAT_LMR_TRIPLET t = { .lmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };
	DAT_RMR_TRIPLET r = { .rmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };
	DAT_DTO_COOKIE ck = { .as_64 = 1 };

	return dat_ep_post_rdma_read(h, 1, &t, ck, &r,
				     DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN
c_ep_recv_query(DAT_HANDLE h)
{
	DAT_COUNT a, b;

	return dat_ep_recv_query(h, &a, &b);
}

static DAT_RETURN
c_ep_set_watermark(DAT_HANDLE h)
{
	return dat_ep_set_watermark(h, 1, 1);
}

static DAT_RETURN
c_ep_free(DAT_HANDLE h)
{
	return dat_ep_free(h);
}

static DAT_RETURN
c_psp_query(DAT_HANDLE h)
{
	DAT_PSP_PARAM p;

	return dat_psp_query(h, DAT_PSP_FIELD_ALL, &p);
}

static DAT_RETURN
c_psp_free(DAT_HANDLE h)
{
	return dat_psp_free(h);
}

static DAT_RETURN
c_rsp_query(DAT_HANDLE h)
{
	DAT_RSP_PARAM p;

	return dat_rsp_query(h, DAT_RSP_FIELD_ALL, &p);
}

static DAT_RETURN
c_rsp_free(DAT_HANDLE h)
{
	return dat_rsp_free(h);
}

static DAT_RETURN
c_srq_query(DAT_HANDLE h)
{
	DAT_SRQ_PARAM p;

	return dat_srq_query(h, DAT_SRQ_FIELD_ALL, &p);
}

static DAT_RETURN
c_srq_post_recv(DAT_HANDLE h)
{
	DAT_LMR_TRIPLET t = { .lmr_context = lc, .segment_length = 64,
			      .virtual_address = (uintptr_t)buf };
	DAT_DTO_COOKIE ck = { .as_64 = 1 };

	return dat_srq_post_recv(h, 1, &t, ck);
}

static DAT_RETURN
c_srq_resize(DAT_HANDLE h)
{
	return dat_srq_resize(h, 8);
}

static DAT_RETURN
c_srq_set_lw(DAT_HANDLE h)
{
	return dat_srq_set_lw(h, 1);
}

static DAT_RETURN
c_srq_free(DAT_HANDLE h)
{
	return dat_srq_free(h);
}

static DAT_RETURN
c_cr_query(DAT_HANDLE h)
{
	DAT_CR_PARAM p;

	return dat_cr_query(h, DAT_CR_FIELD_ALL, &p);
}

static DAT_RETURN
c_cr_accept(DAT_HANDLE h)
{
	return dat_cr_accept(h, live[K_EP], 0, NULL);
}

static DAT_RETURN
c_cr_reject(DAT_HANDLE h)
{
	return dat_cr_reject(h, 0, NULL);
}

/* The calls, by the kind of handle their first argument is (K_N: a CR,
 * of which there is no live one here: every handle given is wrong). */
static const struct call {
	const char *name;
	enum kind kind;
	DAT_RETURN (*fn)(DAT_HANDLE h);
} calls[] = {
	{ "ia_query", K_IA, c_ia_query },
	{ "pz_create", K_IA, c_pz_create },
	{ "evd_create", K_IA, c_evd_create },
	{ "cno_create", K_IA, c_cno_create },
	{ "lmr_create", K_IA, c_lmr_create },
	{ "ep_create", K_IA, c_ep_create },
	{ "psp_create", K_IA, c_psp_create },
	{ "psp_create_any", K_IA, c_psp_create_any },
	{ "srq_create", K_IA, c_srq_create },
	{ "lmr_sync_rdma_read", K_IA, c_lmr_sync },
	{ "pz_query", K_PZ, c_pz_query },
	{ "rmr_create", K_PZ, c_rmr_create },
	{ "pz_free", K_PZ, c_pz_free },
	{ "lmr_query", K_LMR, c_lmr_query },
	{ "lmr_free", K_LMR, c_lmr_free },
	{ "rmr_query", K_RMR, c_rmr_query },
	{ "rmr_bind", K_RMR, c_rmr_bind },
	{ "rmr_free", K_RMR, c_rmr_free },
	{ "cno_query", K_CNO, c_cno_query },
	{ "cno_wait", K_CNO, c_cno_wait },
	{ "cno_modify_agent", K_CNO, c_cno_modify_agent },
	{ "cno_free", K_CNO, c_cno_free },
	{ "ep_query", K_EP, c_ep_query },
	{ "ep_modify", K_EP, c_ep_modify },
	{ "ep_connect", K_EP, c_ep_connect },
	{ "ep_dup_connect", K_EP, c_ep_dup_connect },
	{ "ep_disconnect", K_EP, c_ep_disconnect },
	{ "ep_reset", K_EP, c_ep_reset },
	{ "ep_get_status", K_EP, c_ep_get_status },
	{ "ep_post_send", K_EP, c_ep_post_send },
	{ "ep_post_recv", K_EP, c_ep_post_recv },
	{ "ep_post_rdma_write", K_EP, c_ep_post_rdma_write },
	{ "ep_post_rdma_read", K_EP, c_ep_post_rdma_read },
	{ "ep_recv_query", K_EP, c_ep_recv_query },
	{ "ep_set_watermark", K_EP, c_ep_set_watermark },
	{ "ep_free", K_EP, c_ep_free },
	{ "psp_query", K_PSP, c_psp_query },
	{ "psp_free", K_PSP, c_psp_free },
	{ "rsp_query", K_RSP, c_rsp_query },
	{ "rsp_free", K_RSP, c_rsp_free },
	{ "srq_query", K_SRQ, c_srq_query },
	{ "srq_post_recv", K_SRQ, c_srq_post_recv },
	{ "srq_resize", K_SRQ, c_srq_resize },
	{ "srq_set_lw", K_SRQ, c_srq_set_lw },
	{ "srq_free", K_SRQ, c_srq_free },
	{ "cr_query", K_N, c_cr_query },
	{ "cr_accept", K_N, c_cr_accept },
	{ "cr_reject", K_N, c_cr_reject },
};

static int tried, refused;

static void
expect_bad_handle(const struct call *c, const char *what, DAT_HANDLE h)
{
	DAT_RETURN r = c->fn(h);

	tried++;
	if (DAT_GET_TYPE(r) == DAT_INVALID_HANDLE) {
		refused++;
		return;
	}
	printf("\n  dat_%s with %s: %s, want DAT_INVALID_HANDLE", c->name, what,
	       dat_test_ret_str(r));
	CU_FAIL("a bad handle was not refused");
}

/* One object of every kind, live; and one of every kind freed. */
static int
make_objects(DAT_HANDLE *o, DAT_CONN_QUAL qual, DAT_LMR_CONTEXT *ctx)
{
	DAT_REGION_DESCRIPTION r = { .for_va = buf };
	DAT_SRQ_ATTR sa = { .max_recv_dtos = 4, .max_recv_iov = 1 };
	DAT_RMR_CONTEXT rc;
	DAT_VLEN n;
	DAT_VADDR a;

	o[K_IA] = ia;
	if (dat_pz_create(ia, &o[K_PZ]) != DAT_SUCCESS ||
	    dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, r, BUF, o[K_PZ],
			   DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &o[K_LMR],
			   ctx, &rc, &n, &a) != DAT_SUCCESS ||
	    dat_rmr_create(o[K_PZ], &o[K_RMR]) != DAT_SUCCESS ||
	    dat_evd_create(ia, 8, NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CR_FLAG |
			   DAT_EVD_CONNECTION_FLAG | DAT_EVD_RMR_BIND_FLAG,
			   &o[K_EVD]) != DAT_SUCCESS ||
	    dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &o[K_CNO]) !=
	    DAT_SUCCESS ||
	    dat_ep_create(ia, o[K_PZ], o[K_EVD], o[K_EVD], o[K_EVD], NULL,
			  &o[K_EP]) != DAT_SUCCESS ||
	    dat_psp_create(ia, qual, o[K_EVD], DAT_PSP_CONSUMER_FLAG,
			   &o[K_PSP]) != DAT_SUCCESS ||
	    dat_srq_create(ia, o[K_PZ], &sa, &o[K_SRQ]) != DAT_SUCCESS)
		return -1;
	/* an RSP takes an EP of its own */
	{
		DAT_EP_HANDLE ep;

		if (dat_ep_create(ia, o[K_PZ], o[K_EVD], o[K_EVD], o[K_EVD],
				  NULL, &ep) != DAT_SUCCESS ||
		    dat_rsp_create(ia, qual + 1, ep, o[K_EVD], &o[K_RSP]) !=
		    DAT_SUCCESS)
			return -1;
	}
	return 0;
}

static int
free_objects(DAT_HANDLE *o)
{
	DAT_RSP_PARAM rp;
	int bad = 0;

	if (dat_rsp_query(o[K_RSP], DAT_RSP_FIELD_ALL, &rp) != DAT_SUCCESS)
		bad = 1;
	bad |= dat_rsp_free(o[K_RSP]) != DAT_SUCCESS;
	bad |= dat_ep_free(rp.ep_handle) != DAT_SUCCESS;
	bad |= dat_psp_free(o[K_PSP]) != DAT_SUCCESS;
	bad |= dat_ep_free(o[K_EP]) != DAT_SUCCESS;
	bad |= dat_srq_free(o[K_SRQ]) != DAT_SUCCESS;
	bad |= dat_cno_free(o[K_CNO]) != DAT_SUCCESS;
	bad |= dat_evd_free(o[K_EVD]) != DAT_SUCCESS;
	bad |= dat_rmr_free(o[K_RMR]) != DAT_SUCCESS;
	bad |= dat_lmr_free(o[K_LMR]) != DAT_SUCCESS;
	bad |= dat_pz_free(o[K_PZ]) != DAT_SUCCESS;
	return bad ? -1 : 0;
}

static int
suite_init(void)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_LMR_CONTEXT gone;

	if (dat_ia_open("dpdat0", 8, &async, &ia) != DAT_SUCCESS)
		return -1;
	/* the live ones first: the plug-in recycles a freed object's memory
	 * for the next of its kind, whose handle is then the same pointer
	 * (and live); nothing of the kinds freed is made after */
	if (make_objects(live, QUAL, &lc) != 0 ||
	    make_objects(freed, QUAL + 10, &gone) != 0 ||
	    free_objects(freed) != 0)
		return -1;
	freed[K_IA] = NULL;
	return 0;
}

static int
suite_clean(void)
{
	int bad = free_objects(live);

	return dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) != DAT_SUCCESS ||
	       bad ? -1 : 0;
}

/* Every call, every wrong live kind, the freed one of its kind, NULL. */
static void
test_bad_handles(void)
{
	char what[32];

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		const struct call *c = &calls[i];

		for (int k = 0; k < K_N; k++) {
			/* an IA handle is libdat2's own (it maps it to the
			 * provider's), no provider object: libdat2 would
			 * read a provider out of it for a call of another
			 * kind */
			if (k == (int)c->kind || (k == K_IA && c->kind != K_IA))
				continue;
			snprintf(what, sizeof(what), "a live %s",
				 kind_name[k]);
			expect_bad_handle(c, what, live[k]);
		}
		if (c->kind != K_IA && c->kind != K_N)
			expect_bad_handle(c, "a freed handle",
					  freed[c->kind]);
		expect_bad_handle(c, "NULL", DAT_HANDLE_NULL);
	}
	printf("\n  %d calls with a bad handle, %d refused", tried, refused);
}

/* After all that, the live objects still work. */
static void
test_still_alive(void)
{
	DAT_EP_PARAM ep;
	DAT_LMR_PARAM lp;
	DAT_SRQ_PARAM sp;

	EXPECT(dat_ep_query(live[K_EP], DAT_EP_FIELD_ALL, &ep), DAT_SUCCESS);
	CU_ASSERT_EQUAL(ep.ep_state, DAT_EP_STATE_UNCONNECTED);
	EXPECT(dat_lmr_query(live[K_LMR], DAT_LMR_FIELD_ALL, &lp),
	       DAT_SUCCESS);
	CU_ASSERT_EQUAL(lp.lmr_context, lc);
	EXPECT(dat_srq_query(live[K_SRQ], DAT_SRQ_FIELD_ALL, &sp),
	       DAT_SUCCESS);
	EXPECT(c_ep_post_recv(live[K_EP]), DAT_SUCCESS);
}

static CU_TestInfo misuse_tests[] = {
	{ "every call with wrong-type, freed and NULL handles",
	  test_bad_handles },
	{ "the objects still work", test_still_alive },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "dat_misuse", suite_init, suite_clean, NULL, NULL, misuse_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	dat_test_main(argc, argv, "misuse", suites);
}
