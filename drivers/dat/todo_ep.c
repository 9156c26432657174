/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Not written yet: DAT_NOT_IMPLEMENTED until ep.c replaces this file. */

#include "dd_calls.h"

DAT_RETURN DAT_API
dd_cr_query(DAT_CR_HANDLE a0,
	DAT_CR_PARAM_MASK a1,
	DAT_CR_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cr_accept(DAT_CR_HANDLE a0,
	DAT_EP_HANDLE a1,
	DAT_COUNT a2,
	const DAT_PVOID a3)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cr_reject(DAT_CR_HANDLE a0,
	DAT_COUNT a1,
	const DAT_PVOID a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cr_handoff(DAT_CR_HANDLE a0,
	DAT_CONN_QUAL a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_create(DAT_IA_HANDLE a0,
	DAT_PZ_HANDLE a1,
	DAT_EVD_HANDLE a2,
	DAT_EVD_HANDLE a3,
	DAT_EVD_HANDLE a4,
	const DAT_EP_ATTR *a5,
	DAT_EP_HANDLE *a6)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	(void)a6;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_query(DAT_EP_HANDLE a0,
	DAT_EP_PARAM_MASK a1,
	DAT_EP_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_modify(DAT_EP_HANDLE a0,
	DAT_EP_PARAM_MASK a1,
	const DAT_EP_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_connect(DAT_EP_HANDLE a0,
	DAT_IA_ADDRESS_PTR a1,
	DAT_CONN_QUAL a2,
	DAT_TIMEOUT a3,
	DAT_COUNT a4,
	const DAT_PVOID a5,
	DAT_QOS a6,
	DAT_CONNECT_FLAGS a7)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	(void)a6;
	(void)a7;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_dup_connect(DAT_EP_HANDLE a0,
	DAT_EP_HANDLE a1,
	DAT_TIMEOUT a2,
	DAT_COUNT a3,
	const DAT_PVOID a4,
	DAT_QOS a5)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_disconnect(DAT_EP_HANDLE a0,
	DAT_CLOSE_FLAGS a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_post_send(DAT_EP_HANDLE a0,
	DAT_COUNT a1,
	DAT_LMR_TRIPLET *a2,
	DAT_DTO_COOKIE a3,
	DAT_COMPLETION_FLAGS a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_post_recv(DAT_EP_HANDLE a0,
	DAT_COUNT a1,
	DAT_LMR_TRIPLET *a2,
	DAT_DTO_COOKIE a3,
	DAT_COMPLETION_FLAGS a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_post_rdma_read(DAT_EP_HANDLE a0,
	DAT_COUNT a1,
	DAT_LMR_TRIPLET *a2,
	DAT_DTO_COOKIE a3,
	const DAT_RMR_TRIPLET *a4,
	DAT_COMPLETION_FLAGS a5)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_post_rdma_write(DAT_EP_HANDLE a0,
	DAT_COUNT a1,
	DAT_LMR_TRIPLET *a2,
	DAT_DTO_COOKIE a3,
	const DAT_RMR_TRIPLET *a4,
	DAT_COMPLETION_FLAGS a5)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_get_status(DAT_EP_HANDLE a0,
	DAT_EP_STATE *a1,
	DAT_BOOLEAN *a2,
	DAT_BOOLEAN *a3)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_free(DAT_EP_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_psp_create(DAT_IA_HANDLE a0,
	DAT_CONN_QUAL a1,
	DAT_EVD_HANDLE a2,
	DAT_PSP_FLAGS a3,
	DAT_PSP_HANDLE *a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_psp_query(DAT_PSP_HANDLE a0,
	DAT_PSP_PARAM_MASK a1,
	DAT_PSP_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_psp_free(DAT_PSP_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_rsp_create(DAT_IA_HANDLE a0,
	DAT_CONN_QUAL a1,
	DAT_EP_HANDLE a2,
	DAT_EVD_HANDLE a3,
	DAT_RSP_HANDLE *a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_rsp_query(DAT_RSP_HANDLE a0,
	DAT_RSP_PARAM_MASK a1,
	DAT_RSP_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_rsp_free(DAT_RSP_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_psp_create_any(DAT_IA_HANDLE a0,
	DAT_CONN_QUAL *a1,
	DAT_EVD_HANDLE a2,
	DAT_PSP_FLAGS a3,
	DAT_PSP_HANDLE *a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_reset(DAT_EP_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_create_with_srq(DAT_IA_HANDLE a0,
	DAT_PZ_HANDLE a1,
	DAT_EVD_HANDLE a2,
	DAT_EVD_HANDLE a3,
	DAT_EVD_HANDLE a4,
	DAT_SRQ_HANDLE a5,
	const DAT_EP_ATTR *a6,
	DAT_EP_HANDLE *a7)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	(void)a6;
	(void)a7;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_recv_query(DAT_EP_HANDLE a0,
	DAT_COUNT *a1,
	DAT_COUNT *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_set_watermark(DAT_EP_HANDLE a0,
	DAT_COUNT a1,
	DAT_COUNT a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_srq_create(DAT_IA_HANDLE a0,
	DAT_PZ_HANDLE a1,
	DAT_SRQ_ATTR *a2,
	DAT_SRQ_HANDLE *a3)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_srq_free(DAT_SRQ_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_srq_post_recv(DAT_SRQ_HANDLE a0,
	DAT_COUNT a1,
	DAT_LMR_TRIPLET *a2,
	DAT_DTO_COOKIE a3)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_srq_query(DAT_SRQ_HANDLE a0,
	DAT_SRQ_PARAM_MASK a1,
	DAT_SRQ_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_srq_resize(DAT_SRQ_HANDLE a0,
	DAT_COUNT a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_srq_set_lw(DAT_SRQ_HANDLE a0,
	DAT_COUNT a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_csp_create(DAT_IA_HANDLE a0,
	DAT_COMM *a1,
	DAT_IA_ADDRESS_PTR a2,
	DAT_EVD_HANDLE a3,
	DAT_CSP_HANDLE *a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_csp_query(DAT_CSP_HANDLE a0,
	DAT_CSP_PARAM_MASK a1,
	DAT_CSP_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_csp_free(DAT_CSP_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_common_connect(DAT_EP_HANDLE a0,
	DAT_IA_ADDRESS_PTR a1,
	DAT_TIMEOUT a2,
	DAT_COUNT a3,
	const DAT_PVOID a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_post_send_with_invalidate(DAT_EP_HANDLE a0,
	DAT_COUNT a1,
	DAT_LMR_TRIPLET *a2,
	DAT_DTO_COOKIE a3,
	DAT_COMPLETION_FLAGS a4,
	DAT_BOOLEAN a5,
	DAT_RMR_CONTEXT a6)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	(void)a6;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_ep_post_rdma_read_to_rmr(DAT_EP_HANDLE a0,
	const DAT_RMR_TRIPLET *a1,
	DAT_DTO_COOKIE a2,
	const DAT_RMR_TRIPLET *a3,
	DAT_COMPLETION_FLAGS a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}
bool
dd_dto_event(struct dd_evd *evd, const struct dpdat_wc *wc, DAT_EVENT *ev)
{
	(void)evd;
	(void)wc;
	(void)ev;
	return false;
}

bool
dd_cm_event(struct dd_evd *evd, const struct dpdat_cm_event *cm, DAT_EVENT *ev)
{
	(void)evd;
	(void)cm;
	(void)ev;
	return false;
}
