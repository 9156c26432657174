/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Every public function of the native API that takes a handle, called with
 * NULL and with a handle of another type (a live object, so nothing is
 * read past its end): the documented error, no crash, and nothing
 * changed (the objects still work afterwards). Then the out-of-range
 * arguments a caller is most likely to get wrong. Table-driven: one line
 * per call.
 *
 * A freed handle is not in the table: the native API's handles are
 * pointers, and a freed one is freed memory (the magic numbers catch most
 * such calls, but "most" is no promise; the DAT plug-in's handles are
 * checked against its live objects instead).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <rte_errno.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_cm.h>
#include <dpdat/dpdat_env.h>
#include <dpdat/dpdat_mr.h>
#include <dpdat/dpdat_port.h>
#include <dpdat/dpdat_qp.h>

#include "unit_run.h"

static struct dpdat_dev *dev;
static struct dpdat_mr_domain *dom;
static struct dpdat_pz *pz;
static struct dpdat_lmr *lmr;
static struct dpdat_rmr *rmr;
static struct dpdat_cq *cq;
static struct dpdat_qp *qp;
static struct dpdat_srq *srq;
static struct dpdat_cm_eq *eq;
static struct dpdat_cm_listener *lsn;
static uint8_t *mem;

/* "wrong": a live object of another type where a handle is wanted */
#define WRONG(type) ((type *)(void *)cq)
#define WRONG_CQ ((struct dpdat_cq *)(void *)qp)

static unsigned int checked;

static void
want_int(const char *what, int got, int want)
{
	checked++;
	if (got != want) {
		printf("\n  %s: %d, want %d", what, got, want);
		CU_FAIL(what);
	}
}

static void
want_null(const char *what, const void *got, int err)
{
	checked++;
	if (got != NULL || rte_errno != err) {
		printf("\n  %s: %p, rte_errno %d, want NULL and %d", what, got,
		       rte_errno, err);
		CU_FAIL(what);
	}
}

#define INT(call, want) want_int(#call, (call), (want))
#define PTR(call, err) do { rte_errno = 0; \
	want_null(#call, (const void *)(call), (err)); } while (0)

static int
setup(void)
{
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_INLINE };
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_qp_conf qc = { 0 };
	struct dpdat_srq_conf sc = { 0 };

	dc.port.device = "net_null0";
	dc.port.ipv4 = "198.18.4.1";
	dev = dpdat_dev_open(&dc);
	if (dev == NULL)
		return -1;
	dom = dpdat_dev_domain(dev);
	pz = dpdat_pz_create(dom);
	mem = dpdat_mem_alloc(1 << 16, 4096, -1);
	d.virt.addr = mem;
	d.virt.length = 1 << 16;
	lmr = pz && mem ? dpdat_lmr_create(pz, &d, DPDAT_MEM_PRIV_ALL) : NULL;
	rmr = pz ? dpdat_rmr_create(pz) : NULL;
	cq = dpdat_cq_create(dev, 256);
	srq = dpdat_srq_create(dev, &sc);
	qc.pz = pz;
	qc.send_cq = qc.recv_cq = cq;
	qp = cq && pz ? dpdat_qp_create(dev, &qc) : NULL;
	eq = dpdat_cm_eq_create(dev, 16);
	lsn = eq ? dpdat_cm_listen(dev, 0x1000000042ull, eq) : NULL;
	return lmr && rmr && cq && srq && qp && eq && lsn ? 0 : -1;
}

static void
teardown(void)
{
	dpdat_cm_listen_free(lsn);
	dpdat_cm_eq_free(eq);
	dpdat_qp_free(qp);
	dpdat_srq_free(srq);
	dpdat_cq_free(cq);
	dpdat_rmr_free(rmr);
	dpdat_lmr_free(lmr);
	dpdat_pz_free(pz);
	dpdat_mem_free(mem);
	dpdat_dev_close(dev);
}

static void
test_dev(void)
{
	struct dpdat_neigh n[2];
	struct dpdat_fault_conf fc = { 0 };
	struct dpdat_dev *w = WRONG(struct dpdat_dev);

	PTR(dpdat_dev_open(NULL), EINVAL);
	INT(dpdat_dev_close(NULL), -EBADF);
	INT(dpdat_dev_close(w), -EBADF);
	INT(dpdat_dev_close(dev), -EBUSY);	/* objects remain */
	INT(dpdat_dev_domain(NULL) == NULL, 1);
	INT(dpdat_dev_domain(w) == NULL, 1);
	INT(dpdat_dev_port(NULL) == NULL, 1);
	INT(dpdat_dev_port(w) == NULL, 1);
	INT(dpdat_dev_set_faults(NULL, &fc), -EBADF);
	INT(dpdat_dev_set_faults(w, &fc), -EBADF);
	INT(dpdat_dev_capture_start(NULL, "/tmp/x"), -EBADF);
	INT(dpdat_dev_capture_start(w, "/tmp/x"), -EBADF);
	INT(dpdat_dev_capture_stop(NULL), -EBADF);
	INT(dpdat_dev_capture_stop(w), -EBADF);
	INT(dpdat_dev_neighbours(NULL, n, 2), -EBADF);
	INT(dpdat_dev_neighbours(w, n, 2), -EBADF);
	INT(dpdat_dev_progress(NULL), -EBADF);
	INT(dpdat_dev_progress(w), -EBADF);
}

static void
test_cq_qp_srq(void)
{
	struct dpdat_qp_conf qc = { .pz = pz, .send_cq = cq, .recv_cq = cq };
	struct dpdat_sge sge = { (uintptr_t)mem, 8, 0 };
	struct dpdat_send_wr wr = { .opcode = DPDAT_WR_SEND, .sg_list = &sge,
				    .num_sge = 1 };
	struct dpdat_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct dpdat_qp_remote r = { .qpn = 0x10, .pmtu = 1024 };
	struct dpdat_srq_conf sc = { 0 };
	struct dpdat_qp_info qi;
	struct dpdat_qp_stats qs;
	struct dpdat_srq_info si;
	struct dpdat_wc wc;
	struct dpdat_qp *wq = WRONG(struct dpdat_qp);
	struct dpdat_srq *ws = WRONG(struct dpdat_srq);
	struct dpdat_cq *wc_ = WRONG_CQ;
	uint32_t n = 0;
	uint64_t ov;

	PTR(dpdat_cq_create(NULL, 16), EBADF);
	PTR(dpdat_cq_create(WRONG(struct dpdat_dev), 16), EBADF);
	INT(dpdat_cq_poll(NULL, &wc, 1), -EBADF);
	INT(dpdat_cq_poll(wc_, &wc, 1), -EBADF);
	INT(dpdat_cq_wait(NULL, 0), -EBADF);
	INT(dpdat_cq_wait(wc_, 0), -EBADF);
	INT(dpdat_cq_fd(NULL), -EBADF);
	INT(dpdat_cq_fd(wc_), -EBADF);
	INT(dpdat_cq_overruns(NULL, &ov), -EBADF);
	INT(dpdat_cq_overruns(wc_, &ov), -EBADF);
	INT(dpdat_cq_overruns(cq, NULL), -EINVAL);
	INT(dpdat_cq_overruns(cq, &ov), 0);
	INT(dpdat_cq_free(NULL), -EBADF);
	INT(dpdat_cq_free(wc_), -EBADF);
	INT(dpdat_cq_free(cq), -EBUSY);		/* a QP uses it */

	PTR(dpdat_qp_create(NULL, &qc), EBADF);
	PTR(dpdat_qp_create(WRONG(struct dpdat_dev), &qc), EBADF);
	PTR(dpdat_qp_create(dev, NULL), EBADF);	/* as documented */
	INT(dpdat_qp_connect(NULL, &r), -EBADF);
	INT(dpdat_qp_connect(wq, &r), -EBADF);
	INT(dpdat_qp_connect(qp, NULL), -EINVAL);
	INT(dpdat_qp_query(NULL, &qi), -EBADF);
	INT(dpdat_qp_query(wq, &qi), -EBADF);
	INT(dpdat_qp_stats(NULL, &qs), -EBADF);
	INT(dpdat_qp_stats(wq, &qs), -EBADF);
	INT(dpdat_qp_dump(NULL, stdout), -EBADF);
	INT(dpdat_qp_dump(wq, stdout), -EBADF);
	INT(dpdat_qp_set_error(NULL), -EBADF);
	INT(dpdat_qp_set_error(wq), -EBADF);
	INT(dpdat_qp_free(NULL), -EBADF);
	INT(dpdat_qp_free(wq), -EBADF);
	INT(dpdat_post_send(NULL, &wr), -EBADF);
	INT(dpdat_post_send(wq, &wr), -EBADF);
	INT(dpdat_post_send(qp, NULL), -EINVAL);
	INT(dpdat_post_send_burst(NULL, &wr, 1, &n), -EBADF);
	INT(dpdat_post_send_burst(wq, &wr, 1, &n), -EBADF);
	INT(dpdat_post_recv(NULL, &rwr), -EBADF);
	INT(dpdat_post_recv(wq, &rwr), -EBADF);
	INT(dpdat_post_recv(qp, NULL), -EINVAL);

	PTR(dpdat_srq_create(NULL, &sc), EBADF);
	PTR(dpdat_srq_create(WRONG(struct dpdat_dev), &sc), EBADF);
	INT(dpdat_post_srq_recv(NULL, &rwr), -EBADF);
	INT(dpdat_post_srq_recv(ws, &rwr), -EBADF);
	INT(dpdat_srq_arm(NULL, 1), -EBADF);
	INT(dpdat_srq_arm(ws, 1), -EBADF);
	INT(dpdat_srq_query(NULL, &si), -EBADF);
	INT(dpdat_srq_query(ws, &si), -EBADF);
	INT(dpdat_srq_free(NULL), -EBADF);
	INT(dpdat_srq_free(ws), -EBADF);

	/* nothing changed: the objects still work */
	INT(dpdat_qp_query(qp, &qi), 0);
	INT(dpdat_cq_poll(cq, &wc, 1), 0);
	INT(dpdat_srq_query(srq, &si), 0);
}

static void
test_mr(void)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };
	struct dpdat_lmr_triplet t = { 0 };
	struct dpdat_pz_info pi;
	struct dpdat_lmr_info li;
	struct dpdat_rmr_info ri;
	struct dpdat_pz *wp = WRONG(struct dpdat_pz);
	struct dpdat_lmr *wl = WRONG(struct dpdat_lmr);
	struct dpdat_rmr *wr = WRONG(struct dpdat_rmr);
	struct dpdat_mr_domain *wd = WRONG(struct dpdat_mr_domain);
	unsigned int rd;

	d.virt.addr = mem;
	d.virt.length = 4096;
	INT(dpdat_mr_domain_free(NULL), -EBADF);
	INT(dpdat_mr_domain_free(wd), -EBADF);
	INT(dpdat_mr_domain_count(NULL), 0);
	INT(dpdat_mr_domain_count(wd), 0);
	PTR(dpdat_pz_create(NULL), EBADF);
	PTR(dpdat_pz_create(wd), EBADF);
	INT(dpdat_pz_query(NULL, &pi), -EBADF);
	INT(dpdat_pz_query(wp, &pi), -EBADF);
	INT(dpdat_pz_free(NULL), -EBADF);
	INT(dpdat_pz_free(wp), -EBADF);
	INT(dpdat_pz_free(pz), -EBUSY);		/* LMRs, RMRs, a QP */
	PTR(dpdat_lmr_create(NULL, &d, DPDAT_MEM_PRIV_ALL), EBADF);
	PTR(dpdat_lmr_create(wp, &d, DPDAT_MEM_PRIV_ALL), EBADF);
	PTR(dpdat_lmr_create(pz, NULL, DPDAT_MEM_PRIV_ALL), EINVAL);
	INT(dpdat_lmr_query(NULL, &li), -EBADF);
	INT(dpdat_lmr_query(wl, &li), -EBADF);
	INT(dpdat_lmr_free(NULL), -EBADF);
	INT(dpdat_lmr_free(wl), -EBADF);
	PTR(dpdat_rmr_create(NULL), EBADF);
	PTR(dpdat_rmr_create(wp), EBADF);
	INT(dpdat_rmr_query(NULL, &ri), -EBADF);
	INT(dpdat_rmr_query(wr, &ri), -EBADF);
	INT(dpdat_rmr_bind(NULL, &t, DPDAT_MEM_PRIV_ALL, &t.lmr_context),
	    -EBADF);
	INT(dpdat_rmr_bind(wr, &t, DPDAT_MEM_PRIV_ALL, &t.lmr_context),
	    -EBADF);
	INT(dpdat_rmr_bind_qp(NULL, qp, &t, DPDAT_MEM_PRIV_ALL,
			      &t.lmr_context), -EBADF);
	INT(dpdat_rmr_bind_qp(rmr, WRONG(struct dpdat_qp), &t,
			      DPDAT_MEM_PRIV_ALL, &t.lmr_context), -EBADF);
	INT(dpdat_rmr_free(NULL), -EBADF);
	INT(dpdat_rmr_free(wr), -EBADF);
	INT(dpdat_mr_reader_register(NULL, &rd), -EBADF);
	INT(dpdat_mr_reader_register(wd, &rd), -EBADF);
	INT(dpdat_mr_reader_unregister(NULL, 0), -EBADF);
	INT(dpdat_mr_reader_unregister(wd, 0), -EBADF);
	INT(dpdat_lmr_sync_rdma_read(NULL, &t, 1), -EBADF);
	INT(dpdat_lmr_sync_rdma_write(wd, &t, 1), -EBADF);
	/* nothing changed */
	INT(dpdat_lmr_query(lmr, &li), 0);
	INT(dpdat_rmr_query(rmr, &ri), 0);
	INT(dpdat_pz_query(pz, &pi), 0);
}

static void
test_cm(void)
{
	struct dpdat_cm_event ev;
	struct dpdat_cm_eq *we = WRONG(struct dpdat_cm_eq);
	struct dpdat_cm_listener *wl = WRONG(struct dpdat_cm_listener);
	struct dpdat_cm_conn *wc_ = WRONG(struct dpdat_cm_conn);

	PTR(dpdat_cm_eq_create(NULL, 16), EBADF);
	PTR(dpdat_cm_eq_create(WRONG(struct dpdat_dev), 16), EBADF);
	INT(dpdat_cm_eq_poll(NULL, &ev), -EBADF);
	INT(dpdat_cm_eq_poll(we, &ev), -EBADF);
	INT(dpdat_cm_eq_wait(NULL, &ev, 0), -EBADF);
	INT(dpdat_cm_eq_wait(we, &ev, 0), -EBADF);
	INT(dpdat_cm_eq_fd(NULL), -EBADF);
	INT(dpdat_cm_eq_fd(we), -EBADF);
	CU_ASSERT(dpdat_cm_eq_fd(eq) >= 0);
	INT(dpdat_cm_eq_free(NULL), -EBADF);
	INT(dpdat_cm_eq_free(we), -EBADF);
	INT(dpdat_cm_eq_free(eq), -EBUSY);	/* the listener uses it */
	PTR(dpdat_cm_listen(NULL, 1, eq), EBADF);
	PTR(dpdat_cm_listen(dev, 1, we), EBADF);
	PTR(dpdat_cm_listen(dev, 0x1000000042ull, eq), EADDRINUSE);
	INT(dpdat_cm_listen_free(NULL), -EBADF);
	INT(dpdat_cm_listen_free(wl), -EBADF);
	PTR(dpdat_cm_connect(NULL, 0x020012c6, 1, NULL, 0, eq), EBADF);
	PTR(dpdat_cm_connect(WRONG(struct dpdat_qp), 0x020012c6, 1, NULL, 0,
			     eq), EBADF);
	PTR(dpdat_cm_connect(qp, 0x020012c6, 1, NULL, 0, we), EBADF);
	INT(dpdat_cm_accept(NULL, qp, NULL, 0, eq), -EBADF);
	INT(dpdat_cm_accept(wc_, qp, NULL, 0, eq), -EBADF);
	INT(dpdat_cm_reject(NULL, NULL, 0), -EBADF);
	INT(dpdat_cm_reject(wc_, NULL, 0), -EBADF);
	INT(dpdat_cm_disconnect(NULL, NULL, 0), -EBADF);
	INT(dpdat_cm_disconnect(wc_, NULL, 0), -EBADF);
	INT(dpdat_cm_conn_free(NULL), -EBADF);
	INT(dpdat_cm_conn_free(wc_), -EBADF);
	INT(dpdat_cm_conn_qp(NULL) == NULL, 1);
	INT(dpdat_cm_conn_qp(wc_) == NULL, 1);
	INT(dpdat_cm_eq_poll(eq, &ev), 0);	/* nothing changed */
}

static void
test_port(void)
{
	struct dpdat_port *w = WRONG(struct dpdat_port);
	struct dpdat_port_info pi;
	struct dpdat_port_stats st;
	struct dpdat_fault_conf fc = { 0 };
	struct dpdat_neigh n[2];
	struct rte_mbuf *m[1];

	PTR(dpdat_port_create(NULL), EINVAL);
	INT(dpdat_port_free(NULL), -EBADF);
	INT(dpdat_port_free(w), -EBADF);
	INT(dpdat_port_query(NULL, &pi), -EBADF);
	INT(dpdat_port_query(w, &pi), -EBADF);
	INT(dpdat_port_stats(NULL, &st), -EBADF);
	INT(dpdat_port_stats(w, &st), -EBADF);
	INT(dpdat_port_set_faults(NULL, &fc), -EBADF);
	INT(dpdat_port_set_faults(w, &fc), -EBADF);
	INT(dpdat_port_capture_start(NULL, "/tmp/x"), -EBADF);
	INT(dpdat_port_capture_stop(w), -EBADF);
	INT(dpdat_port_neighbours(NULL, n, 2), -EBADF);
	INT(dpdat_port_neighbours(w, n, 2), -EBADF);
	INT(dpdat_port_rx_burst(NULL, m, 1), 0);
	INT(dpdat_port_rx_burst(w, m, 1), 0);
	INT(dpdat_port_tx_burst(NULL, m, 1), 0);
	INT(dpdat_port_tx_burst(w, m, 1), 0);
	PTR(dpdat_port_attach(NULL), EBADF);
	PTR(dpdat_port_attach(w), EBADF);
	INT(dpdat_port_queue(NULL), -EBADF);
	INT(dpdat_port_queue(w), -EBADF);
	INT(dpdat_port_query(dpdat_dev_port(dev), &pi), 0);
}

/* Functions without handles: out-of-range values get a string or an
 * error, never a crash. */
static void
test_values(void)
{
	struct dpdat_fault_conf fc;

	INT(dpdat_wc_status_str((enum dpdat_wc_status)9999) != NULL, 1);
	INT(dpdat_mr_check_str((enum dpdat_mr_check)9999) != NULL, 1);
	INT(dpdat_mem_kind_str((enum dpdat_mem_kind)9999) != NULL, 1);
	INT(dpdat_mem_mode_str((enum dpdat_mem_mode)9999) != NULL, 1);
	INT(dpdat_fault_parse(NULL, &fc), -EINVAL);
	INT(dpdat_fault_parse("rx:drop=2", &fc), -EINVAL);
	INT(dpdat_fault_parse("frames=-1", &fc), -EINVAL);
	INT(dpdat_fault_parse("frames=9x", &fc), -EINVAL);
	INT(dpdat_fault_parse("frames=", &fc), -EINVAL);
	INT(dpdat_fault_parse("frames= -1", &fc), -EINVAL);
	INT(dpdat_fault_parse("tx:drop=0.5;frames=0x10", &fc), 0);
	INT((int)fc.frames, 16);
	INT(dpdat_env_info(100000) == NULL, 1);
	INT(dpdat_env_str("DPDAT_NO_SUCH_SETTING") == NULL, 1);
	PTR(dpdat_mem_alloc(0, 4096, -1), EINVAL);
	dpdat_mem_free(NULL);
	printf("\n  %u calls checked", checked);
}

static CU_TestInfo misuse_tests[] = {
	{ "devices", test_dev },
	{ "CQs, QPs, SRQs, posting", test_cq_qp_srq },
	{ "registration: domains, PZs, LMRs, RMRs, readers", test_mr },
	{ "connection manager", test_cm },
	{ "ports", test_port },
	{ "values out of range", test_values },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "api_misuse", NULL, NULL, NULL, NULL, misuse_tests },
	CU_SUITE_INFO_NULL,
};

int
main(void)
{
	return unit_run_eal("test_misuse", suites, setup, teardown) != 0;
}
