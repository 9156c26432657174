/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_DAT_ERR_H
#define DPDAT_DAT_ERR_H

#include <dat2/udat.h>

#include <dpdat/dpdat_qp.h>

/* Subtypes to attach when a native error maps to a DAT type that has them;
 * zero fields leave the subtype empty. */
struct dpdat_dat_sub {
	DAT_RETURN_SUBTYPE handle;	/* for DAT_INVALID_HANDLE */
	DAT_RETURN_SUBTYPE param;	/* for DAT_INVALID_PARAMETER */
	DAT_RETURN_SUBTYPE state;	/* for DAT_INVALID_STATE */
	DAT_RETURN_SUBTYPE priv;	/* for DAT_PRIVILEGES_VIOLATION */
	DAT_RETURN_SUBTYPE prot;	/* for DAT_PROTECTION_VIOLATION */
	DAT_RETURN_SUBTYPE res;		/* for DAT_INSUFFICIENT_RESOURCES */
};

/* The one conversion from a native result (0 or a negative errno, as every
 * dpdat function returns) to a DAT_RETURN. sub may be NULL.
 *   0                        DAT_SUCCESS
 *   ENOMEM, ENOSPC, EAGAIN   DAT_INSUFFICIENT_RESOURCES | sub->res
 *   EINVAL, ERANGE           DAT_INVALID_PARAMETER | sub->param
 *   EBADF                    DAT_INVALID_HANDLE | sub->handle
 *   EBUSY, EBADFD            DAT_INVALID_STATE | sub->state
 *   EACCES                   DAT_PRIVILEGES_VIOLATION | sub->priv
 *   EPERM                    DAT_PROTECTION_VIOLATION | sub->prot
 *   EMSGSIZE                 DAT_LENGTH_ERROR
 *   EADDRINUSE               DAT_CONN_QUAL_IN_USE
 *   ENOTSUP                  DAT_MODEL_NOT_SUPPORTED
 *   ETIMEDOUT                DAT_TIMEOUT_EXPIRED
 *   ENOSYS                   DAT_NOT_IMPLEMENTED
 *   anything else            DAT_INTERNAL_ERROR */
DAT_RETURN
dpdat_dat_err(int err, const struct dpdat_dat_sub *sub);

/* The DAT status of a native completion status; the errors DAT has no
 * name for are the remote responder's (DAT_DTO_ERR_REMOTE_RESPONDER). */
DAT_DTO_COMPLETION_STATUS
dpdat_dat_dto_status(enum dpdat_wc_status s);

#endif /* DPDAT_DAT_ERR_H */
