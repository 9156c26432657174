/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Between the endpoint (ep.c) and connection (cm.c) modules. */

#ifndef DPDAT_DAT_DD_EP_H
#define DPDAT_DAT_DD_EP_H

#include "dd.h"

/* EP state: read, compare-and-swap, set (ep.c). */
DAT_EP_STATE dd_ep_state(const struct dd_ep *ep);
bool dd_ep_move(struct dd_ep *ep, DAT_EP_STATE from, DAT_EP_STATE to);
void dd_ep_set_state(struct dd_ep *ep, DAT_EP_STATE to);

/* Which EP owns a native connection (cm.c). dd_conn_forget() unlinks it;
 * dd_conn_zombie() marks a connection nobody owns any more, to be freed
 * when its last event (DISCONNECTED, BROKEN) is drained. */
void dd_conn_forget(struct dpdat_cm_conn *conn);
void dd_conn_zombie(struct dpdat_cm_conn *conn);

/* The IB extensions' requests (ext.c): the extra arguments of a post,
 * and which argument numbers the two pointers were (for the error). */
struct dd_post_ext {
	uint32_t imm;		/* RDMA write with immediate data */
	uint64_t compare_add;	/* atomics */
	uint64_t swap;
	DAT_RETURN count_arg, iov_arg, remote_arg;	/* DAT_INVALID_ARGn */
};

DAT_RETURN dd_ep_post_ext(DAT_EP_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
			  DAT_DTO_COOKIE cookie, const DAT_RMR_TRIPLET *remote,
			  DAT_COMPLETION_FLAGS flags, DAT_DTOS op,
			  const struct dd_post_ext *x);
/* A DTO event of an IB extension's operation, or of a receive with
 * immediate data, made an IB extension event (DAT_IB_DTO_EVENT). */
void dd_dto_ext(DAT_EVENT *ev, const struct dpdat_wc *wc);

#endif /* DPDAT_DAT_DD_EP_H */
