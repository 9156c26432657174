/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Registration with the DAT registry (libdat2). The registry dlopen()s this
 * library for an IA name of dat.conf and calls dat_provider_init() with the
 * entry's ia_params; we register one DAT_PROVIDER per IA name. The library
 * is linked -z nodelete, so these entries outlive dat_provider_fini() and a
 * later init of the same name finds its entry again.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_calls.h"

static const DAT_PROVIDER dd_ops = {
	.ia_open_func = dd_ia_open,
	.ia_query_func = dd_ia_query,
	.ia_close_func = dd_ia_close,
	.set_consumer_context_func = dd_set_consumer_context,
	.get_consumer_context_func = dd_get_consumer_context,
	.get_handle_type_func = dd_get_handle_type,
	.cno_create_func = dd_cno_create,
	.cno_modify_agent_func = dd_cno_modify_agent,
	.cno_query_func = dd_cno_query,
	.cno_free_func = dd_cno_free,
	.cno_wait_func = dd_cno_wait,
	.cr_query_func = dd_cr_query,
	.cr_accept_func = dd_cr_accept,
	.cr_reject_func = dd_cr_reject,
	.cr_handoff_func = dd_cr_handoff,
	.evd_create_func = dd_evd_create,
	.evd_query_func = dd_evd_query,
	.evd_modify_cno_func = dd_evd_modify_cno,
	.evd_enable_func = dd_evd_enable,
	.evd_disable_func = dd_evd_disable,
	.evd_wait_func = dd_evd_wait,
	.evd_resize_func = dd_evd_resize,
	.evd_post_se_func = dd_evd_post_se,
	.evd_dequeue_func = dd_evd_dequeue,
	.evd_free_func = dd_evd_free,
	.ep_create_func = dd_ep_create,
	.ep_query_func = dd_ep_query,
	.ep_modify_func = dd_ep_modify,
	.ep_connect_func = dd_ep_connect,
	.ep_dup_connect_func = dd_ep_dup_connect,
	.ep_disconnect_func = dd_ep_disconnect,
	.ep_post_send_func = dd_ep_post_send,
	.ep_post_recv_func = dd_ep_post_recv,
	.ep_post_rdma_read_func = dd_ep_post_rdma_read,
	.ep_post_rdma_write_func = dd_ep_post_rdma_write,
	.ep_get_status_func = dd_ep_get_status,
	.ep_free_func = dd_ep_free,
	.lmr_create_func = dd_lmr_create,
	.lmr_query_func = dd_lmr_query,
	.lmr_free_func = dd_lmr_free,
	.rmr_create_func = dd_rmr_create,
	.rmr_query_func = dd_rmr_query,
	.rmr_bind_func = dd_rmr_bind,
	.rmr_free_func = dd_rmr_free,
	.psp_create_func = dd_psp_create,
	.psp_query_func = dd_psp_query,
	.psp_free_func = dd_psp_free,
	.rsp_create_func = dd_rsp_create,
	.rsp_query_func = dd_rsp_query,
	.rsp_free_func = dd_rsp_free,
	.pz_create_func = dd_pz_create,
	.pz_query_func = dd_pz_query,
	.pz_free_func = dd_pz_free,
	.psp_create_any_func = dd_psp_create_any,
	.ep_reset_func = dd_ep_reset,
	.evd_set_unwaitable_func = dd_evd_set_unwaitable,
	.evd_clear_unwaitable_func = dd_evd_clear_unwaitable,
	.lmr_sync_rdma_read_func = dd_lmr_sync_rdma_read,
	.lmr_sync_rdma_write_func = dd_lmr_sync_rdma_write,
	.ep_create_with_srq_func = dd_ep_create_with_srq,
	.ep_recv_query_func = dd_ep_recv_query,
	.ep_set_watermark_func = dd_ep_set_watermark,
	.srq_create_func = dd_srq_create,
	.srq_free_func = dd_srq_free,
	.srq_post_recv_func = dd_srq_post_recv,
	.srq_query_func = dd_srq_query,
	.srq_resize_func = dd_srq_resize,
	.srq_set_lw_func = dd_srq_set_lw,
	.csp_create_func = dd_csp_create,
	.csp_query_func = dd_csp_query,
	.csp_free_func = dd_csp_free,
	.ep_common_connect_func = dd_ep_common_connect,
	.rmr_create_for_ep_func = dd_rmr_create_for_ep,
	.ep_post_send_with_invalidate_func = dd_ep_post_send_with_invalidate,
	.ep_post_rdma_read_to_rmr_func = dd_ep_post_rdma_read_to_rmr,
	.cno_fd_create_func = dd_cno_fd_create,
	.cno_trigger_func = dd_cno_trigger,
	.ia_ha_related_func = dd_ia_ha_related,
#ifdef DAT_EXTENSIONS
	.handle_extendedop_func = dd_handle_extendedop,
#endif
};

struct dd_prov {
	DAT_PROVIDER ops;		/* registered; device_name = name */
	DAT_PROVIDER_INFO info;
	char name[DAT_NAME_MAX_LENGTH];
	char params[1024];
	bool registered;
	struct dd_prov *next;
};

static struct dd_prov *provs;
static pthread_mutex_t provs_lock = PTHREAD_MUTEX_INITIALIZER;

static struct dd_prov *
find(const char *name)
{
	struct dd_prov *p;

	for (p = provs; p != NULL; p = p->next)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

void DAT_API
dat_provider_init(const DAT_PROVIDER_INFO *info, const char *params)
{
	struct dd_prov *p;

	if (info == NULL)
		return;
	pthread_mutex_lock(&provs_lock);
	p = find(info->ia_name);
	if (p == NULL) {
		p = calloc(1, sizeof(*p));
		if (p == NULL) {
			pthread_mutex_unlock(&provs_lock);
			DD_LOG(ERR, "no memory for %s", info->ia_name);
			return;
		}
		snprintf(p->name, sizeof(p->name), "%s", info->ia_name);
		p->ops = dd_ops;
		p->ops.device_name = p->name;
		p->next = provs;
		provs = p;
	}
	p->info = *info;
	if (params != NULL && strlen(params) >= sizeof(p->params)) {
		/* never cut short: an IA of a device nobody named; empty
		 * params make its open fail, and say so */
		DD_LOG(ERR, "%s: ia_params of %zu bytes, above %zu: the IA "
		       "will not open", info->ia_name, strlen(params),
		       sizeof(p->params) - 1);
		p->params[0] = '\0';
	} else {
		snprintf(p->params, sizeof(p->params), "%s",
			 params ? params : "");
	}
	if (!p->registered &&
	    dat_registry_add_provider(&p->ops, &p->info) == DAT_SUCCESS)
		p->registered = true;
	pthread_mutex_unlock(&provs_lock);
}

void DAT_API
dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
	struct dd_prov *p;

	if (info == NULL)
		return;
	pthread_mutex_lock(&provs_lock);
	p = find(info->ia_name);
	if (p != NULL && p->registered) {
		dat_registry_remove_provider(&p->ops, &p->info);
		p->registered = false;
	}
	pthread_mutex_unlock(&provs_lock);
}

const DAT_PROVIDER *
dd_provider(const char *name, char *params, size_t len)
{
	struct dd_prov *p;

	pthread_mutex_lock(&provs_lock);
	p = find(name);
	if (p != NULL && params != NULL)
		snprintf(params, len, "%s", p->params);
	pthread_mutex_unlock(&provs_lock);
	return p != NULL ? &p->ops : NULL;
}
