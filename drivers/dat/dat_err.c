/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The conversions at the DAT boundary: native results (negative errnos)
 * and native completion statuses to their DAT codes. Every file of the
 * plug-in converts through these, with the subtypes of its call; the unit
 * tests check them case by case.
 */

#include <errno.h>
#include <stddef.h>

#include "dat_err.h"

DAT_RETURN
dpdat_dat_err(int err, const struct dpdat_dat_sub *sub)
{
	static const struct dpdat_dat_sub none;
	const struct dpdat_dat_sub *s = sub ? sub : &none;

	switch (-err) {
	case 0:
		return DAT_SUCCESS;
	case ENOMEM:
	case ENOSPC:
	case EAGAIN:
		return DAT_INSUFFICIENT_RESOURCES | s->res;
	case EINVAL:
	case ERANGE:
		return DAT_INVALID_PARAMETER | s->param;
	case EBADF:
		return DAT_INVALID_HANDLE | s->handle;
	case EBUSY:
	case EBADFD:
		return DAT_INVALID_STATE | s->state;
	case ENOTSUP:
		return DAT_MODEL_NOT_SUPPORTED;
	case EACCES:
		return DAT_PRIVILEGES_VIOLATION | s->priv;
	case EPERM:
		return DAT_PROTECTION_VIOLATION | s->prot;
	case EMSGSIZE:
		return DAT_LENGTH_ERROR;
	case EADDRINUSE:
		return DAT_CONN_QUAL_IN_USE;
	case ETIMEDOUT:
		return DAT_TIMEOUT_EXPIRED;
	case ENOSYS:
		return DAT_NOT_IMPLEMENTED;
	default:
		return DAT_INTERNAL_ERROR;
	}
}

DAT_DTO_COMPLETION_STATUS
dpdat_dat_dto_status(enum dpdat_wc_status s)
{
	switch (s) {
	case DPDAT_WC_SUCCESS: return DAT_DTO_SUCCESS;
	case DPDAT_WC_LOC_LEN_ERR: return DAT_DTO_ERR_LOCAL_LENGTH;
	case DPDAT_WC_LOC_QP_OP_ERR: return DAT_DTO_ERR_LOCAL_EP;
	case DPDAT_WC_LOC_PROT_ERR: return DAT_DTO_ERR_LOCAL_PROTECTION;
	case DPDAT_WC_WR_FLUSH_ERR: return DAT_DTO_ERR_FLUSHED;
	case DPDAT_WC_REM_ACCESS_ERR: return DAT_DTO_ERR_REMOTE_ACCESS;
	case DPDAT_WC_RETRY_EXC_ERR: return DAT_DTO_ERR_TRANSPORT;
	case DPDAT_WC_RNR_RETRY_EXC_ERR: return DAT_DTO_ERR_RECEIVER_NOT_READY;
	default: return DAT_DTO_ERR_REMOTE_RESPONDER;
	}
}
