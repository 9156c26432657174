/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
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
		return DAT_INSUFFICIENT_RESOURCES;
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
	case ETIMEDOUT:
		return DAT_TIMEOUT_EXPIRED;
	case ENOSYS:
		return DAT_NOT_IMPLEMENTED;
	default:
		return DAT_INTERNAL_ERROR;
	}
}
