/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Between the event dispatcher (evd.c) and CNO (cno.c) modules. */

#ifndef DPDAT_DAT_DD_EVD_H
#define DPDAT_DAT_DD_EVD_H

#include "dd.h"

/* The CNO side of the link with its EVDs (cno.c), called by evd.c with
 * the EVD lock held. dd_cno_link() fails when the CNO is being freed;
 * dd_cno_notify() triggers the CNO and hands back, in *agent, the proxy
 * agent to call once no lock is held. */
bool dd_cno_link(struct dd_cno *cno, struct dd_evd *evd);
void dd_cno_unlink(struct dd_cno *cno, struct dd_evd *evd);
void dd_cno_notify(struct dd_cno *cno, struct dd_evd *evd,
		   DAT_OS_WAIT_PROXY_AGENT *agent);

/* The EVD side of a CNO wait (evd.c): drain an EVD that feeds cno, with
 * no lock held; the events it holds then. *native becomes true when the
 * EVD has a native source to poll. */
DAT_COUNT dd_evd_cno_poll(struct dd_evd *evd, const struct dd_cno *cno,
			  bool *native);

#endif /* DPDAT_DAT_DD_EVD_H */
