/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Not written yet: DAT_NOT_IMPLEMENTED until mem.c replaces this file. */

#include "dd_calls.h"

DAT_RETURN DAT_API
dd_lmr_create(DAT_IA_HANDLE a0,
	DAT_MEM_TYPE a1,
	DAT_REGION_DESCRIPTION a2,
	DAT_VLEN a3,
	DAT_PZ_HANDLE a4,
	DAT_MEM_PRIV_FLAGS a5,
	DAT_VA_TYPE a6,
	DAT_LMR_HANDLE *a7,
	DAT_LMR_CONTEXT *a8,
	DAT_RMR_CONTEXT *a9,
	DAT_VLEN *a10,
	DAT_VADDR *a11)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	(void)a6;
	(void)a7;
	(void)a8;
	(void)a9;
	(void)a10;
	(void)a11;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_lmr_query(DAT_LMR_HANDLE a0,
	DAT_LMR_PARAM_MASK a1,
	DAT_LMR_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_lmr_free(DAT_LMR_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_rmr_create(DAT_PZ_HANDLE a0,
	DAT_RMR_HANDLE *a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_rmr_query(DAT_RMR_HANDLE a0,
	DAT_RMR_PARAM_MASK a1,
	DAT_RMR_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_rmr_bind(DAT_RMR_HANDLE a0,
	DAT_LMR_HANDLE a1,
	const DAT_LMR_TRIPLET *a2,
	DAT_MEM_PRIV_FLAGS a3,
	DAT_VA_TYPE a4,
	DAT_EP_HANDLE a5,
	DAT_RMR_COOKIE a6,
	DAT_COMPLETION_FLAGS a7,
	DAT_RMR_CONTEXT *a8)
{
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	(void)a4;
	(void)a5;
	(void)a6;
	(void)a7;
	(void)a8;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_rmr_free(DAT_RMR_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_pz_create(DAT_IA_HANDLE a0,
	DAT_PZ_HANDLE *a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_pz_query(DAT_PZ_HANDLE a0,
	DAT_PZ_PARAM_MASK a1,
	DAT_PZ_PARAM *a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_pz_free(DAT_PZ_HANDLE a0)
{
	(void)a0;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_lmr_sync_rdma_read(DAT_IA_HANDLE a0,
	const DAT_LMR_TRIPLET *a1,
	DAT_VLEN a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_lmr_sync_rdma_write(DAT_IA_HANDLE a0,
	const DAT_LMR_TRIPLET *a1,
	DAT_VLEN a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return DAT_NOT_IMPLEMENTED;
}

DAT_RETURN DAT_API
dd_rmr_create_for_ep(DAT_PZ_HANDLE a0,
	DAT_RMR_HANDLE *a1)
{
	(void)a0;
	(void)a1;
	return DAT_NOT_IMPLEMENTED;
}
