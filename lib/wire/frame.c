/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* The checks every received RoCEv2 frame passes before anyone reads it. */

#include <rte_mbuf.h>

#include "roce.h"

enum roce_rx_verdict
roce_rx_parse(const struct rte_mbuf *m, unsigned int l3_off,
	      unsigned int bth_off, struct roce_rx *rx)
{
	const uint32_t len = rte_pktmbuf_pkt_len(m);
	const struct roce_bth *bth;
	unsigned int ext, pad, ride;
	const uint8_t *t;
	uint8_t tb[ROCE_ICRC_LEN];
	uint32_t icrc;

	if (len < bth_off + ROCE_ICRC_LEN || l3_off >= bth_off)
		return ROCE_RX_BAD_HDR;
	t = rte_pktmbuf_read(m, len - ROCE_ICRC_LEN, ROCE_ICRC_LEN, tb);
	icrc = t[0] | t[1] << 8 | t[2] << 16 | (uint32_t)t[3] << 24;
	if (roce_icrc_mbuf(m, l3_off) != icrc)
		return ROCE_RX_BAD_ICRC;
	bth = rte_pktmbuf_read(m, bth_off, sizeof(*bth), &rx->copy);
	if (bth == NULL || !roce_op_valid(bth->opcode) || (bth->flags & 0x0f) != 0 ||
	    bth->pkey != rte_cpu_to_be_16(ROCE_PKEY_DEFAULT))
		return ROCE_RX_BAD_HDR;
	ext = roce_ext_len(bth->opcode);
	pad = roce_bth_pad(bth);
	ride = bth->apsn & rte_cpu_to_be_32(ROCE_BTH_RIDE) ? ROCE_RIDE_LEN : 0;
	if (ride != 0 && !roce_op_request(bth->opcode))
		return ROCE_RX_BAD_HDR;
	if (len < bth_off + sizeof(*bth) + ride + ext + pad + ROCE_ICRC_LEN)
		return ROCE_RX_BAD_HDR;
	rx->ride = ride != 0;
	if (ride != 0) {
		t = rte_pktmbuf_read(m, bth_off + sizeof(*bth), ROCE_RIDE_LEN,
				     tb);
		rx->ride_psn = ((uint32_t)t[1] << 16 | t[2] << 8 | t[3]);
	}
	rx->bth = bth;
	rx->off = bth_off + sizeof(*bth) + ride;
	rx->paylen = len - rx->off - ext - pad - ROCE_ICRC_LEN;
	if (rx->paylen != 0 && !(roce_op_flags[bth->opcode] & ROCE_F_PAYLOAD) &&
	    bth->opcode != ROCE_OP_ACK)
		return ROCE_RX_BAD_HDR;
	return ROCE_RX_OK;
}
