/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* The provider's DAT calls, one per slot of DAT_PROVIDER, in its order. */

#ifndef DPDAT_DAT_DD_CALLS_H
#define DPDAT_DAT_DD_CALLS_H

#include <stdarg.h>

#include "dd.h"

DAT_RETURN DAT_API dd_ia_open(const DAT_NAME_PTR, DAT_COUNT, DAT_EVD_HANDLE *,
                              DAT_IA_HANDLE *);
DAT_RETURN DAT_API dd_ia_query(DAT_IA_HANDLE, DAT_EVD_HANDLE *,
                               DAT_IA_ATTR_MASK, DAT_IA_ATTR *,
                               DAT_PROVIDER_ATTR_MASK, DAT_PROVIDER_ATTR *);
DAT_RETURN DAT_API dd_ia_close(DAT_IA_HANDLE, DAT_CLOSE_FLAGS);
DAT_RETURN DAT_API dd_set_consumer_context(DAT_HANDLE, DAT_CONTEXT);
DAT_RETURN DAT_API dd_get_consumer_context(DAT_HANDLE, DAT_CONTEXT *);
DAT_RETURN DAT_API dd_get_handle_type(DAT_HANDLE, DAT_HANDLE_TYPE *);
DAT_RETURN DAT_API dd_cno_create(DAT_IA_HANDLE, DAT_OS_WAIT_PROXY_AGENT,
                                 DAT_CNO_HANDLE *);
DAT_RETURN DAT_API dd_cno_modify_agent(DAT_CNO_HANDLE,
                                       DAT_OS_WAIT_PROXY_AGENT);
DAT_RETURN DAT_API dd_cno_query(DAT_CNO_HANDLE, DAT_CNO_PARAM_MASK,
                                DAT_CNO_PARAM *);
DAT_RETURN DAT_API dd_cno_free(DAT_CNO_HANDLE);
DAT_RETURN DAT_API dd_cno_wait(DAT_CNO_HANDLE, DAT_TIMEOUT, DAT_EVD_HANDLE *);
DAT_RETURN DAT_API dd_cr_query(DAT_CR_HANDLE, DAT_CR_PARAM_MASK,
                               DAT_CR_PARAM *);
DAT_RETURN DAT_API dd_cr_accept(DAT_CR_HANDLE, DAT_EP_HANDLE, DAT_COUNT,
                                const DAT_PVOID);
DAT_RETURN DAT_API dd_cr_reject(DAT_CR_HANDLE, DAT_COUNT, const DAT_PVOID);
DAT_RETURN DAT_API dd_cr_handoff(DAT_CR_HANDLE, DAT_CONN_QUAL);
DAT_RETURN DAT_API dd_evd_create(DAT_IA_HANDLE, DAT_COUNT, DAT_CNO_HANDLE,
                                 DAT_EVD_FLAGS, DAT_EVD_HANDLE *);
DAT_RETURN DAT_API dd_evd_query(DAT_EVD_HANDLE, DAT_EVD_PARAM_MASK,
                                DAT_EVD_PARAM *);
DAT_RETURN DAT_API dd_evd_modify_cno(DAT_EVD_HANDLE, DAT_CNO_HANDLE);
DAT_RETURN DAT_API dd_evd_enable(DAT_EVD_HANDLE);
DAT_RETURN DAT_API dd_evd_disable(DAT_EVD_HANDLE);
DAT_RETURN DAT_API dd_evd_wait(DAT_EVD_HANDLE, DAT_TIMEOUT, DAT_COUNT,
                               DAT_EVENT *, DAT_COUNT *);
DAT_RETURN DAT_API dd_evd_resize(DAT_EVD_HANDLE, DAT_COUNT);
DAT_RETURN DAT_API dd_evd_post_se(DAT_EVD_HANDLE, const DAT_EVENT *);
DAT_RETURN DAT_API dd_evd_dequeue(DAT_EVD_HANDLE, DAT_EVENT *);
DAT_RETURN DAT_API dd_evd_free(DAT_EVD_HANDLE);
DAT_RETURN DAT_API dd_ep_create(DAT_IA_HANDLE, DAT_PZ_HANDLE, DAT_EVD_HANDLE,
                                DAT_EVD_HANDLE, DAT_EVD_HANDLE,
                                const DAT_EP_ATTR *, DAT_EP_HANDLE *);
DAT_RETURN DAT_API dd_ep_query(DAT_EP_HANDLE, DAT_EP_PARAM_MASK,
                               DAT_EP_PARAM *);
DAT_RETURN DAT_API dd_ep_modify(DAT_EP_HANDLE, DAT_EP_PARAM_MASK,
                                const DAT_EP_PARAM *);
DAT_RETURN DAT_API dd_ep_connect(DAT_EP_HANDLE, DAT_IA_ADDRESS_PTR,
                                 DAT_CONN_QUAL, DAT_TIMEOUT, DAT_COUNT,
                                 const DAT_PVOID, DAT_QOS, DAT_CONNECT_FLAGS);
DAT_RETURN DAT_API dd_ep_dup_connect(DAT_EP_HANDLE, DAT_EP_HANDLE, DAT_TIMEOUT,
                                     DAT_COUNT, const DAT_PVOID, DAT_QOS);
DAT_RETURN DAT_API dd_ep_disconnect(DAT_EP_HANDLE, DAT_CLOSE_FLAGS);
DAT_RETURN DAT_API dd_ep_post_send(DAT_EP_HANDLE, DAT_COUNT, DAT_LMR_TRIPLET *,
                                   DAT_DTO_COOKIE, DAT_COMPLETION_FLAGS);
DAT_RETURN DAT_API dd_ep_post_recv(DAT_EP_HANDLE, DAT_COUNT, DAT_LMR_TRIPLET *,
                                   DAT_DTO_COOKIE, DAT_COMPLETION_FLAGS);
DAT_RETURN DAT_API dd_ep_post_rdma_read(DAT_EP_HANDLE, DAT_COUNT,
                                        DAT_LMR_TRIPLET *, DAT_DTO_COOKIE,
                                        const DAT_RMR_TRIPLET *,
                                        DAT_COMPLETION_FLAGS);
DAT_RETURN DAT_API dd_ep_post_rdma_write(DAT_EP_HANDLE, DAT_COUNT,
                                         DAT_LMR_TRIPLET *, DAT_DTO_COOKIE,
                                         const DAT_RMR_TRIPLET *,
                                         DAT_COMPLETION_FLAGS);
DAT_RETURN DAT_API dd_ep_get_status(DAT_EP_HANDLE, DAT_EP_STATE *,
                                    DAT_BOOLEAN *, DAT_BOOLEAN *);
DAT_RETURN DAT_API dd_ep_free(DAT_EP_HANDLE);
DAT_RETURN DAT_API
dd_lmr_create(DAT_IA_HANDLE,
	DAT_MEM_TYPE,
	DAT_REGION_DESCRIPTION,
	DAT_VLEN,
	DAT_PZ_HANDLE,
	DAT_MEM_PRIV_FLAGS,
	DAT_VA_TYPE,
	DAT_LMR_HANDLE *,
	DAT_LMR_CONTEXT *,
	DAT_RMR_CONTEXT *,
	DAT_VLEN *,
	DAT_VADDR *);
DAT_RETURN DAT_API dd_lmr_query(DAT_LMR_HANDLE, DAT_LMR_PARAM_MASK,
                                DAT_LMR_PARAM *);
DAT_RETURN DAT_API dd_lmr_free(DAT_LMR_HANDLE);
DAT_RETURN DAT_API dd_rmr_create(DAT_PZ_HANDLE, DAT_RMR_HANDLE *);
DAT_RETURN DAT_API dd_rmr_query(DAT_RMR_HANDLE, DAT_RMR_PARAM_MASK,
                                DAT_RMR_PARAM *);
DAT_RETURN DAT_API dd_rmr_bind(DAT_RMR_HANDLE, DAT_LMR_HANDLE,
                               const DAT_LMR_TRIPLET *, DAT_MEM_PRIV_FLAGS,
                               DAT_VA_TYPE, DAT_EP_HANDLE, DAT_RMR_COOKIE,
                               DAT_COMPLETION_FLAGS, DAT_RMR_CONTEXT *);
DAT_RETURN DAT_API dd_rmr_free(DAT_RMR_HANDLE);
DAT_RETURN DAT_API dd_psp_create(DAT_IA_HANDLE, DAT_CONN_QUAL, DAT_EVD_HANDLE,
                                 DAT_PSP_FLAGS, DAT_PSP_HANDLE *);
DAT_RETURN DAT_API dd_psp_query(DAT_PSP_HANDLE, DAT_PSP_PARAM_MASK,
                                DAT_PSP_PARAM *);
DAT_RETURN DAT_API dd_psp_free(DAT_PSP_HANDLE);
DAT_RETURN DAT_API dd_rsp_create(DAT_IA_HANDLE, DAT_CONN_QUAL, DAT_EP_HANDLE,
                                 DAT_EVD_HANDLE, DAT_RSP_HANDLE *);
DAT_RETURN DAT_API dd_rsp_query(DAT_RSP_HANDLE, DAT_RSP_PARAM_MASK,
                                DAT_RSP_PARAM *);
DAT_RETURN DAT_API dd_rsp_free(DAT_RSP_HANDLE);
DAT_RETURN DAT_API dd_pz_create(DAT_IA_HANDLE, DAT_PZ_HANDLE *);
DAT_RETURN DAT_API dd_pz_query(DAT_PZ_HANDLE, DAT_PZ_PARAM_MASK,
                               DAT_PZ_PARAM *);
DAT_RETURN DAT_API dd_pz_free(DAT_PZ_HANDLE);
DAT_RETURN DAT_API dd_psp_create_any(DAT_IA_HANDLE, DAT_CONN_QUAL *,
                                     DAT_EVD_HANDLE, DAT_PSP_FLAGS,
                                     DAT_PSP_HANDLE *);
DAT_RETURN DAT_API dd_ep_reset(DAT_EP_HANDLE);
DAT_RETURN DAT_API dd_evd_set_unwaitable(DAT_EVD_HANDLE);
DAT_RETURN DAT_API dd_evd_clear_unwaitable(DAT_EVD_HANDLE);
DAT_RETURN DAT_API
dd_lmr_sync_rdma_read(DAT_IA_HANDLE,
	const DAT_LMR_TRIPLET *,
	DAT_VLEN);
DAT_RETURN DAT_API dd_lmr_sync_rdma_write(DAT_IA_HANDLE,
                                          const DAT_LMR_TRIPLET *, DAT_VLEN);
DAT_RETURN DAT_API dd_ep_create_with_srq(DAT_IA_HANDLE, DAT_PZ_HANDLE,
                                         DAT_EVD_HANDLE, DAT_EVD_HANDLE,
                                         DAT_EVD_HANDLE, DAT_SRQ_HANDLE,
                                         const DAT_EP_ATTR *, DAT_EP_HANDLE *);
DAT_RETURN DAT_API dd_ep_recv_query(DAT_EP_HANDLE, DAT_COUNT *, DAT_COUNT *);
DAT_RETURN DAT_API dd_ep_set_watermark(DAT_EP_HANDLE, DAT_COUNT, DAT_COUNT);
DAT_RETURN DAT_API dd_srq_create(DAT_IA_HANDLE, DAT_PZ_HANDLE, DAT_SRQ_ATTR *,
                                 DAT_SRQ_HANDLE *);
DAT_RETURN DAT_API dd_srq_free(DAT_SRQ_HANDLE);
DAT_RETURN DAT_API dd_srq_post_recv(DAT_SRQ_HANDLE, DAT_COUNT,
                                    DAT_LMR_TRIPLET *, DAT_DTO_COOKIE);
DAT_RETURN DAT_API dd_srq_query(DAT_SRQ_HANDLE, DAT_SRQ_PARAM_MASK,
                                DAT_SRQ_PARAM *);
DAT_RETURN DAT_API dd_srq_resize(DAT_SRQ_HANDLE, DAT_COUNT);
DAT_RETURN DAT_API dd_srq_set_lw(DAT_SRQ_HANDLE, DAT_COUNT);
DAT_RETURN DAT_API dd_csp_create(DAT_IA_HANDLE, DAT_COMM *, DAT_IA_ADDRESS_PTR,
                                 DAT_EVD_HANDLE, DAT_CSP_HANDLE *);
DAT_RETURN DAT_API dd_csp_query(DAT_CSP_HANDLE, DAT_CSP_PARAM_MASK,
                                DAT_CSP_PARAM *);
DAT_RETURN DAT_API dd_csp_free(DAT_CSP_HANDLE);
DAT_RETURN DAT_API dd_ep_common_connect(DAT_EP_HANDLE, DAT_IA_ADDRESS_PTR,
                                        DAT_TIMEOUT, DAT_COUNT,
                                        const DAT_PVOID);
DAT_RETURN DAT_API dd_rmr_create_for_ep(DAT_PZ_HANDLE, DAT_RMR_HANDLE *);
DAT_RETURN DAT_API dd_ep_post_send_with_invalidate(DAT_EP_HANDLE, DAT_COUNT,
                                                   DAT_LMR_TRIPLET *,
                                                   DAT_DTO_COOKIE,
                                                   DAT_COMPLETION_FLAGS,
                                                   DAT_BOOLEAN,
                                                   DAT_RMR_CONTEXT);
DAT_RETURN DAT_API dd_ep_post_rdma_read_to_rmr(DAT_EP_HANDLE,
                                               const DAT_RMR_TRIPLET *,
                                               DAT_DTO_COOKIE,
                                               const DAT_RMR_TRIPLET *,
                                               DAT_COMPLETION_FLAGS);
DAT_RETURN DAT_API dd_cno_fd_create(DAT_IA_HANDLE, DAT_FD *, DAT_CNO_HANDLE *);
DAT_RETURN DAT_API dd_cno_trigger(DAT_CNO_HANDLE, DAT_EVD_HANDLE *);
DAT_RETURN DAT_API dd_ia_ha_related(DAT_IA_HANDLE, const DAT_NAME_PTR,
                                    DAT_BOOLEAN *);
#ifdef DAT_EXTENSIONS
DAT_RETURN DAT_API dd_handle_extendedop(DAT_HANDLE, DAT_EXTENDED_OP, va_list);
#endif

#endif /* DPDAT_DAT_DD_CALLS_H */
