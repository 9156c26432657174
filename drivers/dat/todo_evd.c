/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Not written yet: DAT_NOT_IMPLEMENTED until evd.c replaces this file. */

#include "dd_calls.h"

DAT_RETURN DAT_API
dd_cno_create(DAT_IA_HANDLE a0,
	DAT_OS_WAIT_PROXY_AGENT a1,
	DAT_CNO_HANDLE *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cno_modify_agent(DAT_CNO_HANDLE a0,
	DAT_OS_WAIT_PROXY_AGENT a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cno_query(DAT_CNO_HANDLE a0,
	DAT_CNO_PARAM_MASK a1,
	DAT_CNO_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cno_free(DAT_CNO_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cno_wait(DAT_CNO_HANDLE a0,
	DAT_TIMEOUT a1,
	DAT_EVD_HANDLE *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_create(DAT_IA_HANDLE a0,
	DAT_COUNT a1,
	DAT_CNO_HANDLE a2,
	DAT_EVD_FLAGS a3,
	DAT_EVD_HANDLE *a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_query(DAT_EVD_HANDLE a0,
	DAT_EVD_PARAM_MASK a1,
	DAT_EVD_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_modify_cno(DAT_EVD_HANDLE a0,
	DAT_CNO_HANDLE a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_enable(DAT_EVD_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_disable(DAT_EVD_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_wait(DAT_EVD_HANDLE a0,
	DAT_TIMEOUT a1,
	DAT_COUNT a2,
	DAT_EVENT *a3,
	DAT_COUNT *a4)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_resize(DAT_EVD_HANDLE a0,
	DAT_COUNT a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_post_se(DAT_EVD_HANDLE a0,
	const DAT_EVENT *a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_dequeue(DAT_EVD_HANDLE a0,
	DAT_EVENT *a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_free(DAT_EVD_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_set_unwaitable(DAT_EVD_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_evd_clear_unwaitable(DAT_EVD_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cno_fd_create(DAT_IA_HANDLE a0,
	DAT_FD *a1,
	DAT_CNO_HANDLE *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_cno_trigger(DAT_CNO_HANDLE a0,
	DAT_EVD_HANDLE *a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}
struct dd_evd *
dd_evd_get(DAT_EVD_HANDLE h, DAT_EVD_FLAGS need)
{
	(void)h;
	(void)need;
	return NULL;
}

DAT_RETURN
dd_evd_push(struct dd_evd *evd, const DAT_EVENT *ev)
{
	(void)evd;
	(void)ev;
	return DAT_NOT_IMPLEMENTED;
}
