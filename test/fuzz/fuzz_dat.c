/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * libFuzzer harness for the DAT 2.0 plug-in (drivers/dat): an input is a
 * program, a sequence of calls with their arguments, run on a table of the
 * handles it created (IA, PZ, LMR, RMR, EVD, EP, PSP, RSP, CR, SRQ, CNO),
 * freed ones and handles of the wrong type included, and on out-of-range
 * arguments.
 *
 * The plug-in's objects are linked in, registered as the registry does
 * (dat_provider_init), and called through its DAT_PROVIDER table, as
 * libdat2's dat_* macros call it (for the calls on an IA handle the
 * registry's functions would first swap its own handle for ours: the
 * harness holds ours). One IA stays open across inputs, on a net_ring port
 * (a loopback: an EP may connect to a PSP of its own IA) whose engine runs
 * inline in the harness's thread.
 *
 * The port never learns its own address from ARP: the harness writes it
 * into the neighbour table before every input, so that connections to the
 * IA's own address go round the loopback (CRs arrive, accepts connect).
 *
 * Checked after every call: the return code is one dat_strerror() knows
 * (a documented type and subtype), never DAT_INTERNAL_ERROR; a call whose
 * handle is freed, of another type or no handle at all never succeeds; a
 * free of a live handle succeeds or says DAT_INVALID_STATE (dependants;
 * an RSP may have gone with the request it served);
 * at the end of an input every live handle frees in dependency order, and
 * the IA holds nothing but its asynchronous EVD: what an input created, it
 * freed. One exception, by design: the connection of an EP freed while it
 * was connecting lives on until the CM gives up (some seconds) and keeps
 * its EVD in use; the harness runs the CM's timers ahead at the end of the
 * input (run_cm_ahead) and frees such an EVD then, or at a later input;
 * one still in use after 30 s fails.
 *
 * Not passed: pointers to memory that is not the harness's (the plug-in
 * cannot tell them from handles, by design: handles are pointers checked
 * by a magic word), and the IA's own asynchronous EVD to a free. Freed
 * handles stay readable by design (obj.c retires objects to a free list of
 * their type), so passing them is safe; a retired handle reused by a new
 * object of its type is, for the harness, that new object.
 *
 * Input: bytes read as needed (0 past the end): an op byte, then its
 * arguments; handles are one byte (mostly a live handle of the type
 * wanted, else any slot of the table, or NULL, the IA, a small integer,
 * memory that is no object). At most 64 calls.
 *
 * Seeds (test/fuzz/corpus-dat): programs written after the flows of
 * test/unit/dat (connect, accept, send; a reject; a peer that does not
 * answer; double frees; CNO and EVD; SRQ), and the inputs of the findings
 * (late-conn-event-uaf, srq-in-use). FUZZ_DAT_TRACE=1 prints every call's
 * outcome.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dat2/udat.h>

#include <rte_cycles.h>

#include "cm_priv.h"
#include "dd.h"
#include "port_priv.h"
#include "fuzz_peer.h"

extern void dat_provider_init(const DAT_PROVIDER_INFO *info,
			      const char *params);

enum { T_IA, T_PZ, T_LMR, T_RMR, T_EVD, T_EP, T_PSP, T_RSP, T_CR, T_SRQ,
       T_CNO, T_N };
static const char *const tname[T_N] = { "IA", "PZ", "LMR", "RMR", "EVD",
	"EP", "PSP", "RSP", "CR", "SRQ", "CNO" };

#define MAX_SLOTS	48
#define BUF_SIZE	(256 * 1024)
#define QUAL_BASE	0x4000

static const DAT_PROVIDER *P;
static DAT_IA_HANDLE ia;
static DAT_EVD_HANDLE async_evd;
static struct dd_ia *dia;
static uint8_t buf[BUF_SIZE] __attribute__((aligned(4096)));
static uint64_t foreign[64];	/* memory that is no object */

static struct slot {
	DAT_HANDLE h;
	int type;
	bool live;
	DAT_LMR_CONTEXT lctx;	/* LMR: its context; RMR: after a bind */
} slots[MAX_SLOTS];
static int nslots;

/* EVDs that could not free yet: the CM connection of an EP freed while it
 * was connecting keeps the EVD's queue until it gives up (some seconds).
 * Retried at every input; one still there after DEFER_S fails. */
#define MAX_DEFERRED	1024
#define DEFER_S		30
static struct {
	DAT_EVD_HANDLE h;
	uint64_t since;
} deferred[MAX_DEFERRED];
static unsigned int ndeferred;
static bool trace;	/* FUZZ_DAT_TRACE: every call's outcome */

struct prog {
	const uint8_t *p;
	size_t n;
};

static uint8_t
u8(struct prog *g)
{
	if (g->n == 0)
		return 0;
	g->n--;
	return *g->p++;
}

static uint16_t
u16(struct prog *g)
{
	return (uint16_t)(u8(g) | u8(g) << 8);
}

static uint32_t
u32(struct prog *g)
{
	return (uint32_t)(u16(g) | (uint32_t)u16(g) << 16);
}

static uint64_t
u64(struct prog *g)
{
	return u32(g) | (uint64_t)u32(g) << 32;
}

/* Small counts, with a few out-of-range ones, one in 32. Not the
 * largest EVD (DD_MAX_EVD_QLEN, 65536 events): its 7.5 MiB, allocated and
 * freed under ASan, took half of the harness's time (1,100 inputs a
 * second), for a bound the unit tests check; one more than it is asked. */
static DAT_COUNT
count(struct prog *g)
{
	static const DAT_COUNT odd[] = { 0, -1, 1 << 20, 0x7fffffff,
					 DD_MAX_DTOS, DD_MAX_DTOS + 1,
					 DD_MAX_IOV + 1, DD_MAX_EVD_QLEN + 1 };
	uint8_t b = u8(g);

	return b < 248 ? (DAT_COUNT)(b % 40) : odd[b & 7];
}

static void
fail(const char *what, int op, DAT_RETURN r)
{
	const char *major = "?", *minor = "?";

	dat_strerror(r, &major, &minor);
	fprintf(stderr, "fuzz_dat: op %d: %s (0x%08x %s %s)\n", op, what,
		(unsigned int)r, major, minor);
	abort();
}

static struct slot *
find(DAT_HANDLE h)
{
	for (int i = 0; i < nslots; i++)
		if (slots[i].h == h && slots[i].live)
			return &slots[i];
	return NULL;
}

static bool
live(DAT_HANDLE h, int type)
{
	struct slot *s;

	if (h == NULL)
		return false;
	if (type == T_IA)
		return h == ia;
	if (type == T_EVD && h == async_evd)
		return true;
	s = find(h);
	return s != NULL && s->type == type;
}

/* Every slot holding h is dead (a free, or h retired and reused). */
static void
bury(DAT_HANDLE h)
{
	for (int i = 0; i < nslots; i++)
		if (slots[i].h == h)
			slots[i].live = false;
}

static DAT_RETURN free_type(int type, DAT_HANDLE h);

/* A new live handle; a full table frees it at once. */
static struct slot *
add(DAT_HANDLE h, int type)
{
	struct slot *s;

	bury(h);
	if (nslots == MAX_SLOTS)	/* a dead slot makes room */
		for (int i = 0; i < nslots; i++)
			if (!slots[i].live) {
				slots[i] = slots[--nslots];
				break;
			}
	if (nslots == MAX_SLOTS) {
		if (free_type(type, h) != DAT_SUCCESS)
			abort();
		return NULL;
	}
	s = &slots[nslots++];
	memset(s, 0, sizeof(*s));
	s->h = h;
	s->type = type;
	s->live = true;
	return s;
}

static int
live_count(void)
{
	int n = 0;

	for (int i = 0; i < nslots; i++)
		n += slots[i].live;
	return n;
}

/* A handle argument: mostly a live one of the type, else anything. */
static DAT_HANDLE
pick(struct prog *g, int type, bool to_free)
{
	uint8_t b = u8(g);
	int n = 0, k;

	if (b < 176) {
		for (int i = 0; i < nslots; i++)
			n += slots[i].live && slots[i].type == type;
		if (type == T_IA)
			return ia;
		if (type == T_EVD && !to_free && b >= 168)
			return async_evd;
		if (n > 0) {
			k = b % n;
			for (int i = 0; i < nslots; i++)
				if (slots[i].live && slots[i].type == type &&
				    k-- == 0)
					return slots[i].h;
		}
	}
	if (b < 240 && nslots > 0)
		return slots[b % nslots].h;	/* freed, or of any type */
	switch (b & 7) {
	case 1:
		return ia;
	case 2:
		return to_free ? NULL : async_evd;
	case 3:
		return (DAT_HANDLE)(uintptr_t)(b & 0xf8);	/* small */
	case 4:
		return (DAT_HANDLE)foreign;
	default:
		return DAT_HANDLE_NULL;
	}
}

/* DAT 2.0's SRQ state subtypes (dat_error.h), which libdat2's
 * dat_strerror does not name: DAT_INVALID_STATE_SRQ_IN_USE, for one, is
 * what dat_srq_free says of an SRQ an EP still uses (seed srq-in-use). */
static bool
srq_state(DAT_RETURN r)
{
	return DAT_GET_TYPE(r) == DAT_INVALID_STATE &&
	       DAT_GET_SUBTYPE(r) >= DAT_INVALID_STATE_SRQ_OPERATIONAL &&
	       DAT_GET_SUBTYPE(r) <= DAT_INVALID_STATE_SRQ_SHUTDOWN;
}

/* The return code of a call on h (a handle of type want). */
static void
check(int op, DAT_RETURN r, DAT_HANDLE h, int want)
{
	const char *major, *minor;

	if (trace) {
		dat_strerror(r, &major, &minor);
		fprintf(stderr, "fuzz_dat: op %d on %s %p: %s %s\n", op,
			tname[want], h, major, minor);
	}
	if (dat_strerror(r, &major, &minor) != DAT_SUCCESS &&
	    !srq_state(r))
		fail("an undocumented return code", op, r);
	if (DAT_GET_TYPE(r) == DAT_INTERNAL_ERROR)
		fail("DAT_INTERNAL_ERROR", op, r);
	if (r == DAT_SUCCESS && !live(h, want))
		fail("success on a freed, wrong-type or no handle", op, r);
}

static DAT_LMR_CONTEXT
some_lctx(struct prog *g)
{
	uint8_t b = u8(g);

	for (int i = 0, k = b % (nslots + 1); i < nslots; i++)
		if (slots[i].type == T_LMR && k-- <= 0)
			return slots[i].lctx;
	return b < 128 ? 0 : u32(g);
}

/* An iov of n triplets in the harness's buffer (registered or not), n
 * out of range included: t has room for max + 1, n is at most that. */
static DAT_COUNT
iov(struct prog *g, DAT_LMR_TRIPLET *t, DAT_COUNT max)
{
	DAT_COUNT n = count(g) % (max + 2);

	memset(t, 0, (size_t)(max + 1) * sizeof(*t));
	for (DAT_COUNT i = 0; i < n && i <= max; i++) {
		uint32_t off = u16(g) * 4u % BUF_SIZE;

		t[i].lmr_context = some_lctx(g);
		t[i].virtual_address = (DAT_VADDR)(uintptr_t)(buf + off);
		t[i].segment_length = u8(g) < 250 ?
				      u16(g) % (BUF_SIZE - off + 1) : u32(g);
	}
	return n;
}

static DAT_RETURN
free_type(int type, DAT_HANDLE h)
{
	switch (type) {
	case T_PZ: return P->pz_free_func(h);
	case T_LMR: return P->lmr_free_func(h);
	case T_RMR: return P->rmr_free_func(h);
	case T_EVD: return P->evd_free_func(h);
	case T_EP: return P->ep_free_func(h);
	case T_PSP: return P->psp_free_func(h);
	case T_RSP: return P->rsp_free_func(h);
	case T_CR: return P->cr_reject_func(h, 0, NULL);
	case T_SRQ: return P->srq_free_func(h);
	case T_CNO: return P->cno_free_func(h);
	default: return P->ia_close_func(h, DAT_CLOSE_GRACEFUL_FLAG);
	}
}

/* An RSP serves one connection request and goes with it (cm.c, as DAPL
 * does): its handle may die whenever the request's event is converted,
 * which the harness does not always see (a CNO's wait converts too). */
static bool
consumed(int type, DAT_RETURN r)
{
	return type == T_RSP && DAT_GET_TYPE(r) == DAT_INVALID_HANDLE;
}

static void
op_free(struct prog *g, int op)
{
	int type = u8(g) % T_N;
	DAT_HANDLE h = pick(g, type, true);
	bool was_live = live(h, type);
	DAT_RETURN r;

	if (h == ia || h == async_evd)
		return;		/* the IA stays, with its async EVD */
	r = free_type(type, h);
	check(op, r, h, type);
	if (was_live && consumed(type, r)) {
		bury(h);
		return;
	}
	if (was_live && r != DAT_SUCCESS &&
	    DAT_GET_TYPE(r) != DAT_INVALID_STATE)
		fail("a live handle did not free", op, r);
	if (r == DAT_SUCCESS)
		bury(h);
}

static void
op_query(struct prog *g, int op)
{
	union {
		DAT_PZ_PARAM pz;
		DAT_LMR_PARAM lmr;
		DAT_RMR_PARAM rmr;
		DAT_EVD_PARAM evd;
		DAT_EP_PARAM ep;
		DAT_PSP_PARAM psp;
		DAT_RSP_PARAM rsp;
		DAT_CR_PARAM cr;
		DAT_SRQ_PARAM srq;
		DAT_CNO_PARAM cno;
	} pa;
	int type = u8(g) % T_N;
	DAT_HANDLE h = pick(g, type, false);
	uint32_t mask = u8(g) < 200 ? 0xffffffffu : u32(g);
	void *out = u8(g) < 240 ? &pa : NULL;
	DAT_RETURN r;

	switch (type) {
	case T_PZ: r = P->pz_query_func(h, mask, out); break;
	case T_LMR: r = P->lmr_query_func(h, mask, out); break;
	case T_RMR: r = P->rmr_query_func(h, mask, out); break;
	case T_EVD: r = P->evd_query_func(h, mask, out); break;
	case T_EP: r = P->ep_query_func(h, mask, out); break;
	case T_PSP: r = P->psp_query_func(h, mask, out); break;
	case T_RSP: r = P->rsp_query_func(h, mask, out); break;
	case T_CR: r = P->cr_query_func(h, mask, out); break;
	case T_SRQ: r = P->srq_query_func(h, mask, out); break;
	case T_CNO: r = P->cno_query_func(h, mask, out); break;
	default: {
		DAT_IA_ATTR ia_attr;
		DAT_PROVIDER_ATTR pattr;
		DAT_EVD_HANDLE ae;

		r = P->ia_query_func(h, u8(g) & 1 ? &ae : NULL, mask,
				     u8(g) & 1 ? &ia_attr : NULL, mask,
				     u8(g) & 1 ? &pattr : NULL);
		break;
	}
	}
	check(op, r, h, type);
}

static void
op_lmr_create(struct prog *g, int op)
{
	static const DAT_MEM_TYPE types[4] = { DAT_MEM_TYPE_VIRTUAL,
		DAT_MEM_TYPE_LMR, DAT_MEM_TYPE_SHARED_VIRTUAL, 0x4000 };
	DAT_REGION_DESCRIPTION rd;
	DAT_MEM_TYPE mt = types[u8(g) & 3];
	uint32_t off = (uint32_t)u16(g) * 8 % BUF_SIZE;
	uint8_t lb = u8(g);
	DAT_VLEN len = lb < 200 ? (DAT_VLEN)u16(g) * 4 % (BUF_SIZE - off) + 1 :
		       lb < 220 ? 0 : lb < 240 ? BUF_SIZE - off : UINT64_MAX;
	DAT_PZ_HANDLE pz = pick(g, T_PZ, false);
	DAT_MEM_PRIV_FLAGS priv = u8(g) < 128 ? DAT_MEM_PRIV_ALL_FLAG : u8(g);
	DAT_VA_TYPE va = u8(g) & 1 ? DAT_VA_TYPE_VA : DAT_VA_TYPE_ZB;
	DAT_LMR_HANDLE h = NULL;
	struct slot *s;
	DAT_LMR_CONTEXT lc = 0;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN rl;
	DAT_VADDR ra;
	DAT_RETURN r;

	memset(&rd, 0, sizeof(rd));
	if (mt == DAT_MEM_TYPE_LMR)
		rd.for_lmr_handle = pick(g, T_LMR, false);
	else if (mt == DAT_MEM_TYPE_SHARED_VIRTUAL)
		rd.for_shared_memory.virtual_address = buf + off;
	else
		rd.for_va = buf + off;
	r = P->lmr_create_func(ia, mt, rd, len, pz, priv, va, &h,
			       u8(g) & 1 ? &lc : NULL, &rc, &rl, &ra);
	check(op, r, pz, T_PZ);
	if (r == DAT_SUCCESS && (s = add(h, T_LMR)) != NULL)
		s->lctx = lc;
}

static void
op_rmr(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 3;
	DAT_RMR_HANDLE h = NULL;
	DAT_HANDLE x;
	DAT_RETURN r;

	if (sub < 2) {
		x = pick(g, T_PZ, false);
		r = sub == 0 ? P->rmr_create_func(x, &h) :
			       P->rmr_create_for_ep_func(x, &h);
		check(op, r, x, T_PZ);
		if (r == DAT_SUCCESS)
			add(h, T_RMR);
		return;
	} else {
		DAT_LMR_TRIPLET t[2];
		DAT_RMR_CONTEXT rc;
		DAT_RMR_COOKIE ck = { .as_64 = u64(g) };
		DAT_RMR_HANDLE rmr = pick(g, T_RMR, false);
		DAT_LMR_HANDLE lmr = pick(g, T_LMR, false);
		DAT_EP_HANDLE ep = pick(g, T_EP, false);
		DAT_MEM_PRIV_FLAGS priv = u8(g);

		iov(g, t, 1);
		r = P->rmr_bind_func(rmr, lmr, u8(g) < 250 ? t : NULL, priv,
				     u8(g) & 1 ? DAT_VA_TYPE_VA :
						 DAT_VA_TYPE_ZB, ep, ck,
				     u8(g) & 3, &rc);
		check(op, r, rmr, T_RMR);
		if (r == DAT_SUCCESS && ep != NULL && !live(ep, T_EP))
			fail("a bind through no EP", op, r);
		if (r == DAT_SUCCESS && find(rmr) != NULL)
			find(rmr)->lctx = rc;
	}
}

static void
op_evd_create(struct prog *g, int op)
{
	static const DAT_EVD_FLAGS fl[8] = { DAT_EVD_DTO_FLAG,
		DAT_EVD_CONNECTION_FLAG, DAT_EVD_CR_FLAG,
		DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
		DAT_EVD_SOFTWARE_FLAG, DAT_EVD_CONNECTION_FLAG |
		DAT_EVD_CR_FLAG | DAT_EVD_DTO_FLAG, DAT_EVD_ASYNC_FLAG, 0 };
	uint8_t b = u8(g);
	DAT_EVD_FLAGS f = b < 240 ? fl[b & 7] : u16(g);
	DAT_COUNT qlen = count(g);
	DAT_CNO_HANDLE cno = u8(g) < 128 ? DAT_HANDLE_NULL :
				pick(g, T_CNO, false);
	DAT_EVD_HANDLE h = NULL;
	DAT_RETURN r;

	r = P->evd_create_func(ia, qlen, cno, f, &h);
	check(op, r, ia, T_IA);
	if (r == DAT_SUCCESS)
		add(h, T_EVD);
}

/* An event taken from an EVD: a CR becomes a handle of the table. */
static void
took(const DAT_EVENT *ev)
{
	if (ev->event_number == DAT_CONNECTION_REQUEST_EVENT)
		add(ev->event_data.cr_arrival_event_data.cr_handle, T_CR);
}

static void
op_evd(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 10;
	DAT_EVD_HANDLE h = pick(g, T_EVD, false);
	DAT_EVENT ev;
	DAT_COUNT n = 0;
	DAT_RETURN r;

	memset(&ev, 0, sizeof(ev));
	switch (sub) {
	case 0:
		r = P->evd_dequeue_func(h, &ev);
		break;
	case 1:
		r = P->evd_wait_func(h, 0, count(g), &ev, &n);
		break;
	case 2:
		r = P->evd_enable_func(h);
		break;
	case 3:
		r = P->evd_disable_func(h);
		break;
	case 4:
		r = P->evd_resize_func(h, count(g));
		break;
	case 5:
		ev.event_number = u8(g) < 200 ? DAT_SOFTWARE_EVENT : u32(g);
		ev.evd_handle = h;
		ev.event_data.software_event_data.pointer = foreign;
		r = P->evd_post_se_func(h, u8(g) < 250 ? &ev : NULL);
		break;
	case 6: {
		DAT_CNO_HANDLE cno = u8(g) < 64 ? DAT_HANDLE_NULL :
					pick(g, T_CNO, false);

		r = P->evd_modify_cno_func(h, cno);
		break;
	}
	case 7:
		r = P->evd_set_unwaitable_func(h);
		break;
	case 8:
		r = P->evd_clear_unwaitable_func(h);
		break;
	default:
		r = P->evd_dequeue_func(h, NULL);
		break;
	}
	check(op, r, h, T_EVD);
	/* a wait's success returns an event too (n counts those left) */
	if (r == DAT_SUCCESS && (sub == 0 || sub == 1))
		took(&ev);
}

static void
op_cno(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 6;
	DAT_OS_WAIT_PROXY_AGENT agent = { NULL, NULL };
	DAT_CNO_HANDLE h = NULL, x;
	DAT_EVD_HANDLE evd;
	DAT_FD fd;
	DAT_RETURN r;

	switch (sub) {
	case 0:
		r = P->cno_create_func(ia, agent, &h);
		check(op, r, ia, T_IA);
		if (r == DAT_SUCCESS)
			add(h, T_CNO);
		return;
	case 1:
		r = P->cno_fd_create_func(ia, &fd, &h);
		check(op, r, ia, T_IA);
		if (r == DAT_SUCCESS)
			add(h, T_CNO);
		return;
	case 2:
		x = pick(g, T_CNO, false);
		r = P->cno_wait_func(x, 0, &evd);
		break;
	case 3:
		x = pick(g, T_CNO, false);
		r = P->cno_modify_agent_func(x, agent);
		break;
	case 4:
		x = pick(g, T_CNO, false);
		r = P->cno_trigger_func(x, &evd);
		break;
	default:
		x = pick(g, T_CNO, false);
		r = P->cno_wait_func(x, 0, NULL);
		break;
	}
	check(op, r, x, T_CNO);
}

static void
ep_attr(struct prog *g, DAT_EP_ATTR *a)
{
	memset(a, 0, sizeof(*a));
	a->service_type = u8(g) < 240 ? DAT_SERVICE_TYPE_RC : u8(g);
	a->max_message_size = u8(g) < 200 ? 65536 : u32(g);
	a->max_rdma_size = u8(g) < 200 ? 65536 : u64(g);
	a->qos = u8(g) < 200 ? DAT_QOS_BEST_EFFORT : u8(g);
	a->recv_completion_flags = u8(g) & 0x1f;
	a->request_completion_flags = u8(g) & 0x1f;
	a->max_recv_dtos = count(g);
	a->max_request_dtos = count(g);
	a->max_recv_iov = count(g);
	a->max_request_iov = count(g);
	a->max_rdma_read_in = count(g);
	a->max_rdma_read_out = count(g);
	a->srq_soft_hw = count(g);
	a->max_rdma_read_iov = count(g);
	a->max_rdma_write_iov = count(g);
}

static void
op_ep_create(struct prog *g, int op)
{
	DAT_EP_ATTR a;
	bool srq = u8(g) & 1;
	DAT_PZ_HANDLE pz = pick(g, T_PZ, false);
	DAT_EVD_HANDLE rv = u8(g) < 32 ? NULL : pick(g, T_EVD, false);
	DAT_EVD_HANDLE rq = u8(g) < 32 ? NULL : pick(g, T_EVD, false);
	DAT_EVD_HANDLE cn = u8(g) < 32 ? NULL : pick(g, T_EVD, false);
	DAT_SRQ_HANDLE s = srq ? pick(g, T_SRQ, false) : NULL;
	bool with = u8(g) < 160;
	DAT_EP_HANDLE h = NULL;
	DAT_RETURN r;

	ep_attr(g, &a);
	if (srq)
		r = P->ep_create_with_srq_func(ia, pz, rv, rq, cn, s,
					       with ? &a : NULL, &h);
	else
		r = P->ep_create_func(ia, pz, rv, rq, cn, with ? &a : NULL,
				      &h);
	/* no PZ is allowed (one comes with ep_modify) */
	check(op, r, pz != NULL ? pz : ia, pz != NULL ? T_PZ : T_IA);
	if (r == DAT_SUCCESS && ((rv != NULL && !live(rv, T_EVD)) ||
				 (rq != NULL && !live(rq, T_EVD)) ||
				 (cn != NULL && !live(cn, T_EVD)) ||
				 (srq && !live(s, T_SRQ))))
		fail("an EP on a freed or wrong-type EVD or SRQ", op, r);
	if (r == DAT_SUCCESS)
		add(h, T_EP);
}

static DAT_CONN_QUAL
qual(struct prog *g)
{
	uint8_t b = u8(g);

	return b < 224 ? QUAL_BASE + (b & 3) : u64(g);
}

static void
op_ep(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 9;
	DAT_EP_HANDLE h = pick(g, T_EP, false);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint8_t pd[128];
	DAT_EP_PARAM pa;
	DAT_RETURN r;

	memset(pd, u8(g), sizeof(pd));
	switch (sub) {
	case 0: {
		uint8_t a = u8(g);

		/* ourselves (a loopback), a host nobody answers, 0 */
		sin.sin_addr.s_addr = a < 192 ? dia->ipv4 : a < 224 ?
				      htonl(0xc6120063) : 0;
		if (a >= 248)
			sin.sin_family = AF_INET6;
		r = P->ep_connect_func(h, a == 255 ? NULL :
				       (DAT_IA_ADDRESS_PTR)&sin, qual(g),
				       u8(g) < 200 ? 2000000 : 0,
				       count(g) % 100, pd,
				       u8(g) < 200 ? DAT_QOS_BEST_EFFORT :
						     u8(g),
				       u8(g) & 3);
		break;
	}
	case 1:
		r = P->ep_disconnect_func(h, u8(g) & 1 ?
					  DAT_CLOSE_ABRUPT_FLAG :
					  DAT_CLOSE_GRACEFUL_FLAG);
		break;
	case 2: {
		DAT_EP_STATE st;
		DAT_BOOLEAN in, out;

		r = P->ep_get_status_func(h, &st, &in, &out);
		break;
	}
	case 3:
		r = P->ep_reset_func(h);
		break;
	case 4: {
		DAT_COUNT a, b;

		r = P->ep_recv_query_func(h, &a, &b);
		break;
	}
	case 5:
		r = P->ep_set_watermark_func(h, count(g), count(g));
		break;
	case 6:
		memset(&pa, 0, sizeof(pa));
		ep_attr(g, &pa.ep_attr);
		r = P->ep_modify_func(h, u8(g) < 128 ? DAT_EP_FIELD_EP_ATTR_ALL :
				      u32(g), &pa);
		break;
	case 7:
		r = P->ep_dup_connect_func(h, pick(g, T_EP, false), 2000000,
					   count(g) % 100, pd,
					   DAT_QOS_BEST_EFFORT);
		break;
	default:
		sin.sin_addr.s_addr = dia->ipv4;
		r = P->ep_common_connect_func(h, (DAT_IA_ADDRESS_PTR)&sin,
					      2000000, count(g) % 100, pd);
		break;
	}
	check(op, r, h, T_EP);
}

static void
op_post(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 7;
	DAT_EP_HANDLE h = pick(g, T_EP, false);
	DAT_LMR_TRIPLET t[DD_MAX_IOV + 3];
	DAT_RMR_TRIPLET rt;
	DAT_DTO_COOKIE ck = { .as_64 = u64(g) };
	DAT_COMPLETION_FLAGS fl = u8(g) & 0x1f;
	DAT_COUNT n = iov(g, t, DD_MAX_IOV + 2);
	DAT_RETURN r;

	rt.rmr_context = u8(g) < 128 ? some_lctx(g) : u32(g);
	rt.virtual_address = (DAT_VADDR)(uintptr_t)(buf + u16(g) % BUF_SIZE);
	rt.segment_length = u16(g);
	switch (sub) {
	case 0:
		r = P->ep_post_send_func(h, n, t, ck, fl);
		break;
	case 1:
		r = P->ep_post_recv_func(h, n, t, ck, fl);
		break;
	case 2:
		r = P->ep_post_rdma_read_func(h, n, t, ck, &rt, fl);
		break;
	case 3:
		r = P->ep_post_rdma_write_func(h, n, t, ck, &rt, fl);
		break;
	case 4:
		r = P->ep_post_send_with_invalidate_func(h, n, t, ck, fl,
							 u8(g) & 1, u32(g));
		break;
	case 5: {
		DAT_RMR_TRIPLET lt = { .virtual_address = t[0].virtual_address,
				       .segment_length = t[0].segment_length,
				       .rmr_context = t[0].lmr_context };

		r = P->ep_post_rdma_read_to_rmr_func(h, &lt, ck, &rt, fl);
		break;
	}
	default: {
		DAT_SRQ_HANDLE s = pick(g, T_SRQ, false);

		r = P->srq_post_recv_func(s, n, t, ck);
		check(op, r, s, T_SRQ);
		return;
	}
	}
	check(op, r, h, T_EP);
}

static void
op_sp(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 3;
	DAT_EVD_HANDLE evd = pick(g, T_EVD, false);
	DAT_PSP_FLAGS fl = u8(g) < 200 ? DAT_PSP_CONSUMER_FLAG : u8(g);
	DAT_CONN_QUAL q = qual(g);
	DAT_HANDLE h = NULL;
	DAT_RETURN r;

	switch (sub) {
	case 0:
		r = P->psp_create_func(ia, q, evd, fl, &h);
		check(op, r, evd, T_EVD);
		if (r == DAT_SUCCESS)
			add(h, T_PSP);
		break;
	case 1:
		r = P->psp_create_any_func(ia, &q, evd, fl, &h);
		check(op, r, evd, T_EVD);
		if (r == DAT_SUCCESS)
			add(h, T_PSP);
		break;
	default: {
		DAT_EP_HANDLE ep = pick(g, T_EP, false);

		r = P->rsp_create_func(ia, q, ep, evd, &h);
		check(op, r, ep, T_EP);
		if (r == DAT_SUCCESS)
			add(h, T_RSP);
		break;
	}
	}
}

static void
op_cr(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 3;
	DAT_CR_HANDLE h = pick(g, T_CR, false);
	DAT_EP_HANDLE ep;
	uint8_t pd[128];
	DAT_RETURN r;

	memset(pd, u8(g), sizeof(pd));
	switch (sub) {
	case 0:
		ep = u8(g) < 16 ? NULL : pick(g, T_EP, false);
		r = P->cr_accept_func(h, ep, count(g) % 100, pd);
		if (r == DAT_SUCCESS && ep != NULL && !live(ep, T_EP))
			fail("an accept on no EP", op, r);
		break;
	case 1:
		r = P->cr_reject_func(h, count(g) % 100, pd);
		break;
	default:
		r = P->cr_handoff_func(h, qual(g));
		break;
	}
	check(op, r, h, T_CR);
	if (r == DAT_SUCCESS)
		bury(h);	/* the CR is consumed */
}

static void
op_srq(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 3;
	DAT_SRQ_ATTR a = { .max_recv_dtos = count(g),
			   .max_recv_iov = count(g),
			   .low_watermark = count(g) };
	DAT_HANDLE h = NULL, x;
	DAT_RETURN r;

	switch (sub) {
	case 0:
		x = pick(g, T_PZ, false);
		r = P->srq_create_func(ia, x, u8(g) < 250 ? &a : NULL, &h);
		check(op, r, x, T_PZ);
		if (r == DAT_SUCCESS)
			add(h, T_SRQ);
		return;
	case 1:
		x = pick(g, T_SRQ, false);
		r = P->srq_resize_func(x, count(g));
		break;
	default:
		x = pick(g, T_SRQ, false);
		r = P->srq_set_lw_func(x, count(g));
		break;
	}
	check(op, r, x, T_SRQ);
}

static void
op_generic(struct prog *g, int op)
{
	int type = u8(g) % T_N;
	DAT_HANDLE h = pick(g, type, false);
	uint8_t sub = u8(g) % 3;
	DAT_CONTEXT ctx = { .as_64 = u64(g) };
	DAT_HANDLE_TYPE ht;
	DAT_RETURN r;

	if (sub == 0)
		r = P->set_consumer_context_func(h, ctx);
	else if (sub == 1)
		r = P->get_consumer_context_func(h, u8(g) < 250 ? &ctx : NULL);
	else
		r = P->get_handle_type_func(h, u8(g) < 250 ? &ht : NULL);
	/* of any type: success only on a live handle of some type */
	if (r == DAT_SUCCESS && h != ia && h != async_evd && find(h) == NULL)
		fail("success on a freed or no handle", op, r);
	check(op, r, h, find(h) != NULL ? find(h)->type : h == ia ? T_IA :
			T_EVD);
}

static void
op_misc(struct prog *g, int op)
{
	uint8_t sub = u8(g) % 4;
	DAT_LMR_TRIPLET t[5];
	DAT_VLEN n;
	DAT_RETURN r;
	DAT_HANDLE h;

	/* the count of segments cannot be checked against the array: no
	 * more than there are */
	switch (sub) {
	case 0:
		n = (DAT_VLEN)RTE_MAX(iov(g, t, 4), 0);
		r = P->lmr_sync_rdma_read_func(ia, t, n);
		check(op, r, ia, T_IA);
		break;
	case 1:
		n = (DAT_VLEN)RTE_MAX(iov(g, t, 4), 0);
		r = P->lmr_sync_rdma_write_func(ia, t, n);
		check(op, r, ia, T_IA);
		break;
	case 2:
		/* an IA close of anything but the IA */
		h = pick(g, u8(g) % T_N, true);
		if (h == ia)
			return;
		r = P->ia_close_func(h, u8(g) & 1 ? DAT_CLOSE_ABRUPT_FLAG :
					DAT_CLOSE_GRACEFUL_FLAG);
		check(op, r, h, T_IA);
		break;
	default:
		for (int i = 0; i < 4; i++)
			dpdat_dev_progress(dia->dev);
		break;
	}
}

/* The events left on every live EVD: their CRs join the table. */
static void
drain(void)
{
	DAT_EVENT ev;

	for (int i = 0; i < nslots; i++)
		if (slots[i].live && slots[i].type == T_EVD)
			while (P->evd_dequeue_func(slots[i].h, &ev) ==
			       DAT_SUCCESS)
				took(&ev);
}

/* Take every event of an EVD, rejecting its connection requests. */
static void
reject_all(DAT_EVD_HANDLE h)
{
	DAT_EVENT ev;
	DAT_RETURN r;

	while (P->evd_dequeue_func(h, &ev) == DAT_SUCCESS) {
		if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
			continue;
		r = P->cr_reject_func(
			ev.event_data.cr_arrival_event_data.cr_handle, 0, NULL);
		if (r != DAT_SUCCESS)
			fail("a CR did not free", -1, r);
	}
}

/* What the CM still holds of this input: a connection whose EP was freed
 * while it connected (it lives until the CM gives up, some seconds, and
 * keeps its EVD in use), a rejected request kept to answer its repeats.
 * Its timers run ahead, a try at a time, until nothing is left to
 * retry; then the deferred EVDs free now. Left to the clock, thousands
 * of inputs' connections would be held at once, each input would end
 * with more allocated than freed, and libFuzzer would scan for leaks
 * after each (this ran at about 1,100 inputs a second). */
static void
run_cm_ahead(void)
{
	const uint64_t hz = rte_get_tsc_hz(), t = rte_get_tsc_cycles();
	DAT_EVENT ev;

	for (int i = 1; i <= 16; i++) {
		cm_progress(rc_dev(dia->dev), t + (uint64_t)i * 10 * hz);
		dpdat_dev_progress(dia->dev);
	}
	for (unsigned int i = 0; i < ndeferred; i++) {
		while (P->evd_dequeue_func(deferred[i].h, &ev) == DAT_SUCCESS)
			;
		if (P->evd_free_func(deferred[i].h) == DAT_SUCCESS)
			deferred[i--] = deferred[--ndeferred];
	}
}

/* Free what the input created, dependants first: each must go. */
static void
cleanup(void)
{
	static const int order[] = { T_CR, T_EP, T_RSP, T_PSP, T_CR, T_RMR,
				     T_LMR, T_SRQ, T_EVD, T_CNO, T_PZ };
	DAT_EVENT ev;
	DAT_RETURN r;

	for (int i = 0; i < 8; i++)
		dpdat_dev_progress(dia->dev);
	drain();
	/* the IA's async EVD as it was: no CNO (which could not go), enabled
	 * and waitable */
	P->evd_modify_cno_func(async_evd, DAT_HANDLE_NULL);
	P->evd_enable_func(async_evd);
	P->evd_clear_unwaitable_func(async_evd);
	for (unsigned int k = 0; k < RTE_DIM(order); k++) {
		for (int i = 0; i < nslots; i++) {
			if (!slots[i].live || slots[i].type != order[k])
				continue;
			r = free_type(order[k], slots[i].h);
			if (order[k] == T_EVD &&
			    r == DD_BAD_STATE(DAT_INVALID_STATE_EVD_IN_USE) &&
			    ndeferred < MAX_DEFERRED) {
				/* its CNO may go meanwhile; the requests
				 * it holds are answered now */
				P->evd_modify_cno_func(slots[i].h,
						       DAT_HANDLE_NULL);
				reject_all(slots[i].h);
				deferred[ndeferred].h = slots[i].h;
				deferred[ndeferred++].since = rte_get_tsc_cycles();
				bury(slots[i].h);
				continue;
			}
			if (r != DAT_SUCCESS && !consumed(order[k], r)) {
				fprintf(stderr, "fuzz_dat: cleanup: %s %p\n",
					tname[order[k]], slots[i].h);
				if (order[k] == T_EVD)
					fprintf(stderr, "fuzz_dat: users %u "
						"waiters %u\n",
						((struct dd_evd *)slots[i].h)->users,
						((struct dd_evd *)slots[i].h)->waiters);
				fail("a live handle did not free", -1, r);
			}
			bury(slots[i].h);
		}
		if (order[k] == T_PSP) {
			/* no request comes now: the last CRs */
			dpdat_dev_progress(dia->dev);
			drain();
		}
	}
	run_cm_ahead();
	while (P->evd_dequeue_func(async_evd, &ev) == DAT_SUCCESS)
		;
	nslots = 0;
	/* the IA holds its async EVD and the deferred EVDs, nothing else */
	pthread_mutex_lock(&dia->lock);
	{
		struct dd_obj *o;
		unsigned int n = 0;

		TAILQ_FOREACH(o, &dia->objs, next)
			n += o != (struct dd_obj *)async_evd;
		if (n != ndeferred) {
			TAILQ_FOREACH(o, &dia->objs, next)
				fprintf(stderr, "fuzz_dat: left: type %d\n",
					o->type);
			abort();
		}
	}
	pthread_mutex_unlock(&dia->lock);
}

static void
retry_deferred(void)
{
	static unsigned long calls;

	/* hundreds may wait: a try every 64 inputs is enough */
	if (++calls % 64 != 0)
		return;
	for (unsigned int i = 0; i < ndeferred; i++) {
		if (P->evd_free_func(deferred[i].h) == DAT_SUCCESS) {
			deferred[i--] = deferred[--ndeferred];
			continue;
		}
		if (rte_get_tsc_cycles() - deferred[i].since >
		    DEFER_S * rte_get_tsc_hz())
			fail("an EVD still in use long after its EP", -1,
			     DD_BAD_STATE(DAT_INVALID_STATE_EVD_IN_USE));
	}
}

/* The IA's own address resolves to its own MAC (the port never learns
 * itself from ARP): connections to it go round the loopback. */
static void
resolve_self(void)
{
	struct dpdat_port *p = dpdat_dev_port(dia->dev);
	struct port_neigh *e = port_neigh_find(p, p->ip, true);

	if (e != NULL) {
		e->mac = p->mac;
		e->state = NEIGH_REACHABLE;
		e->tries = 0;
		e->tsc = rte_get_tsc_cycles();
	}
}

static void
setup(void)
{
	DAT_PROVIDER_INFO info = { .ia_name = "dpdatfz",
				   .dapl_version_major = 2,
				   .is_thread_safe = DAT_FALSE };
	DAT_RETURN r;

	trace = getenv("FUZZ_DAT_TRACE") != NULL;
	setenv("DPDAT_HUGE", "never", 1);
	setenv("DPDAT_MEM_MB", "256", 1);
	setenv("DPDAT_LOG", "1", 0);
	/* a loopback: what the IA sends, it receives */
	setenv("DPDAT_DAT_PARAMS", "device=net_ring0 ipv4=198.18.0.1", 1);
	dat_provider_init(&info, "");
	P = dd_provider("dpdatfz", NULL, 0);
	if (P == NULL)
		abort();
	async_evd = DAT_HANDLE_NULL;
	r = P->ia_open_func("dpdatfz", 8, &async_evd, &ia);
	if (r != DAT_SUCCESS)
		fail("ia_open", -1, r);
	dia = ia;
	fuzz_dev_inline(dia->dev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prog g = { data, size };
	int op = 0;

	if (ia == NULL)
		setup();
	resolve_self();
	retry_deferred();
	while (g.n > 0 && op < 64) {
		uint8_t code = u8(&g);

		/* creators stop at half the table: the rest is for CRs */
		if (live_count() >= MAX_SLOTS / 2 && code % 16 < 8)
			code = 15;
		if (trace)
			fprintf(stderr, "fuzz_dat: op %d: code %d\n", op,
				code % 16);
		switch (code % 16) {
		case 0: {
			DAT_PZ_HANDLE h = NULL;
			DAT_IA_HANDLE x = pick(&g, T_IA, false);
			DAT_RETURN r = P->pz_create_func(x, &h);

			check(op, r, x, T_IA);
			if (r == DAT_SUCCESS)
				add(h, T_PZ);
			break;
		}
		case 1: op_lmr_create(&g, op); break;
		case 2: op_rmr(&g, op); break;
		case 3: op_evd_create(&g, op); break;
		case 4: op_ep_create(&g, op); break;
		case 5: op_sp(&g, op); break;
		case 6: op_cno(&g, op); break;
		case 7: op_srq(&g, op); break;
		case 8: op_free(&g, op); break;
		case 9: op_query(&g, op); break;
		case 10: op_evd(&g, op); break;
		case 11: op_ep(&g, op); break;
		case 12: op_post(&g, op); break;
		case 13: op_cr(&g, op); break;
		case 14: op_generic(&g, op); break;
		default: op_misc(&g, op); break;
		}
		op++;
	}
	cleanup();
	return 0;
}
