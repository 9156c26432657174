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

#endif /* DPDAT_DAT_DD_EP_H */
