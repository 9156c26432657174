/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include "roce.h"

#define V ROCE_F_VALID
#define P ROCE_F_PAYLOAD
#define F ROCE_F_FIRST
#define L ROCE_F_LAST

/* The headers and message position of every opcode dpdat speaks. */
const uint16_t roce_op_flags[256] = {
	[ROCE_OP_SEND_FIRST]	= V | P | F,
	[ROCE_OP_SEND_MIDDLE]	= V | P,
	[ROCE_OP_SEND_LAST]	= V | P | L,
	[ROCE_OP_SEND_LAST_IMM]	= V | P | L | ROCE_F_IMM,
	[ROCE_OP_SEND_ONLY]	= V | P | F | L,
	[ROCE_OP_SEND_ONLY_IMM]	= V | P | F | L | ROCE_F_IMM,
	[ROCE_OP_WRITE_FIRST]	= V | P | F | ROCE_F_RETH,
	[ROCE_OP_WRITE_MIDDLE]	= V | P,
	[ROCE_OP_WRITE_LAST]	= V | P | L,
	[ROCE_OP_WRITE_LAST_IMM] = V | P | L | ROCE_F_IMM,
	[ROCE_OP_WRITE_ONLY]	= V | P | F | L | ROCE_F_RETH,
	[ROCE_OP_WRITE_ONLY_IMM] = V | P | F | L | ROCE_F_RETH | ROCE_F_IMM,
	[ROCE_OP_READ_REQUEST]	= V | F | L | ROCE_F_RETH,
	[ROCE_OP_READ_RESP_FIRST] = V | P | F | ROCE_F_AETH,
	[ROCE_OP_READ_RESP_MIDDLE] = V | P,
	[ROCE_OP_READ_RESP_LAST] = V | P | L | ROCE_F_AETH,
	[ROCE_OP_READ_RESP_ONLY] = V | P | F | L | ROCE_F_AETH,
	[ROCE_OP_ACK]		= V | F | L | ROCE_F_AETH,
	[ROCE_OP_ATOMIC_ACK]	= V | F | L | ROCE_F_AETH | ROCE_F_ATOMICACK,
	[ROCE_OP_CMP_SWAP]	= V | F | L | ROCE_F_ATOMIC,
	[ROCE_OP_FETCH_ADD]	= V | F | L | ROCE_F_ATOMIC,
	[ROCE_OP_UD_SEND_ONLY]	= V | P | F | L | ROCE_F_DETH,
	[ROCE_OP_UD_SEND_ONLY_IMM] = V | P | F | L | ROCE_F_DETH | ROCE_F_IMM,
	/* RoCEv2's congestion notification: 16 reserved bytes */
	[ROCE_OP_CNP]		= V | P | F | L,
};
