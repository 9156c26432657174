/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The DAT IB extensions (dat_ib_extensions.h, reached through
 * dat_extension_op()): RDMA write with immediate data, compare-and-swap
 * and fetch-and-add, posted on an EP as its other requests are (ep.c),
 * their completions DAT_IB_DTO_EVENTs (dd_dto_ext()). The extensions dpdat
 * lacks (unreliable datagrams, counters, collectives, the query ops)
 * answer DAT_NOT_IMPLEMENTED once the handle is known to be good.
 */

#include <stdarg.h>

#include "dd_calls.h"
#include "dd_ep.h"

/* The arguments of an extension post, in dat_ib_extensions.h's order. */
static DAT_RETURN
ext_post(DAT_EP_HANDLE h, DAT_IB_OP op, va_list args)
{
	struct dd_post_ext x = { .count_arg = DAT_INVALID_ARG3,
				 .iov_arg = DAT_INVALID_ARG4,
				 .remote_arg = DAT_INVALID_ARG6 };
	DAT_COMPLETION_FLAGS flags;
	const DAT_RMR_TRIPLET *remote;
	DAT_LMR_TRIPLET *iov;
	DAT_DTO_COOKIE cookie;
	DAT_COUNT n = 1;
	DAT_DTOS dto;

	switch (op) {
	case DAT_IB_RDMA_WRITE_IMMED_OP:
		/* (segments, lbuf, cookie, rbuf, idata, flags) */
		n = va_arg(args, DAT_COUNT);
		iov = va_arg(args, DAT_LMR_TRIPLET *);
		cookie = va_arg(args, DAT_DTO_COOKIE);
		remote = va_arg(args, const DAT_RMR_TRIPLET *);
		x.imm = va_arg(args, DAT_UINT32);
		flags = va_arg(args, DAT_COMPLETION_FLAGS);
		dto = (DAT_DTOS)DAT_IB_DTO_RDMA_WRITE_IMMED;
		break;
	case DAT_IB_CMP_AND_SWAP_OP:
		/* (compare, swap, lbuf, cookie, rbuf, flags) */
		x.compare_add = va_arg(args, DAT_UINT64);
		x.swap = va_arg(args, DAT_UINT64);
		iov = va_arg(args, DAT_LMR_TRIPLET *);
		cookie = va_arg(args, DAT_DTO_COOKIE);
		remote = va_arg(args, const DAT_RMR_TRIPLET *);
		flags = va_arg(args, DAT_COMPLETION_FLAGS);
		x.count_arg = x.iov_arg = DAT_INVALID_ARG5;
		x.remote_arg = DAT_INVALID_ARG7;
		dto = (DAT_DTOS)DAT_IB_DTO_CMP_SWAP;
		break;
	default:	/* DAT_IB_FETCH_AND_ADD_OP: (add, lbuf, cookie, rbuf,
			 * flags) */
		x.compare_add = va_arg(args, DAT_UINT64);
		iov = va_arg(args, DAT_LMR_TRIPLET *);
		cookie = va_arg(args, DAT_DTO_COOKIE);
		remote = va_arg(args, const DAT_RMR_TRIPLET *);
		flags = va_arg(args, DAT_COMPLETION_FLAGS);
		x.count_arg = DAT_INVALID_ARG4;	/* the one local segment */
		dto = (DAT_DTOS)DAT_IB_DTO_FETCH_ADD;
		break;
	}
	/* a write with immediate data may carry no data (n 0, no iov) */
	return dd_ep_post_ext(h, n, iov, cookie, remote, flags, dto, &x);
}

DAT_RETURN DAT_API
dd_handle_extendedop(DAT_HANDLE h, DAT_EXTENDED_OP op, va_list args)
{
	va_list copy;
	DAT_RETURN ret;

	switch (op) {
	case DAT_IB_RDMA_WRITE_IMMED_OP:
	case DAT_IB_CMP_AND_SWAP_OP:
	case DAT_IB_FETCH_AND_ADD_OP:
		if (dd_obj_get(h, DD_EP) == NULL)
			return DD_BAD_HANDLE(DAT_INVALID_HANDLE_EP);
		va_copy(copy, args);
		ret = ext_post(h, (DAT_IB_OP)op, copy);
		va_end(copy);
		return ret;
	default:
		/* UD, counters, collectives, open/close query */
		if (dd_obj_any(h) == NULL)
			return DD_BAD_HANDLE(DAT_INVALID_HANDLE1);
		return DAT_NOT_IMPLEMENTED;
	}
}
