/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Shared receive queues. The RC engine has none yet (a receive queue
 * belongs to one QP): srq_create checks its handles and answers
 * DAT_MODEL_NOT_SUPPORTED, so no SRQ handle ever exists and the other SRQ
 * calls answer DAT_INVALID_HANDLE. The IA reports max_srqs 0 and
 * srq_supported FALSE.
 */

#include "dd_calls.h"

DAT_RETURN DAT_API
dd_srq_create(DAT_IA_HANDLE iah, DAT_PZ_HANDLE pzh, DAT_SRQ_ATTR *attr,
	      DAT_SRQ_HANDLE *out)
{
	if (dd_obj_get(iah, DD_IA) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	if (dd_obj_get(pzh, DD_PZ) == NULL)
		return DD_BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
	if (attr == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG3);
	if (out == NULL)
		return DD_BAD_PARAM(DAT_INVALID_ARG4);
	return DAT_MODEL_NOT_SUPPORTED;
}

#define NO_SRQ(h)	((void)(h), DD_BAD_HANDLE(DAT_INVALID_HANDLE_SRQ))

DAT_RETURN DAT_API
dd_srq_free(DAT_SRQ_HANDLE h)
{
	return NO_SRQ(h);
}

DAT_RETURN DAT_API
dd_srq_post_recv(DAT_SRQ_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
		 DAT_DTO_COOKIE cookie)
{
	(void)n;
	(void)iov;
	(void)cookie;
	return NO_SRQ(h);
}

DAT_RETURN DAT_API
dd_srq_query(DAT_SRQ_HANDLE h, DAT_SRQ_PARAM_MASK mask, DAT_SRQ_PARAM *p)
{
	(void)mask;
	(void)p;
	return NO_SRQ(h);
}

DAT_RETURN DAT_API
dd_srq_resize(DAT_SRQ_HANDLE h, DAT_COUNT n)
{
	(void)n;
	return NO_SRQ(h);
}

DAT_RETURN DAT_API
dd_srq_set_lw(DAT_SRQ_HANDLE h, DAT_COUNT lw)
{
	(void)lw;
	return NO_SRQ(h);
}
