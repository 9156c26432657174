/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_DAT_ERR_H
#define DPDAT_DAT_ERR_H

#include <dat2/udat.h>

/* Subtypes to attach when a native error maps to a DAT type that has them;
 * zero fields leave the subtype empty. */
struct dpdat_dat_sub {
	DAT_RETURN_SUBTYPE handle;	/* for DAT_INVALID_HANDLE */
	DAT_RETURN_SUBTYPE param;	/* for DAT_INVALID_PARAMETER */
	DAT_RETURN_SUBTYPE state;	/* for DAT_INVALID_STATE */
	DAT_RETURN_SUBTYPE priv;	/* for DAT_PRIVILEGES_VIOLATION */
	DAT_RETURN_SUBTYPE prot;	/* for DAT_PROTECTION_VIOLATION */
};

/* The one conversion from a native result (0 or a negative errno, as every
 * dpdat function returns) to a DAT_RETURN. sub may be NULL. */
DAT_RETURN
dpdat_dat_err(int err, const struct dpdat_dat_sub *sub);

#endif /* DPDAT_DAT_ERR_H */
