/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_ROCE_H
#define DPDAT_ROCE_H

/*
 * RoCEv2 wire format (IBTA Annex A17): Ethernet / IPv4 / UDP 4791 / BTH /
 * extension headers / payload / pad / ICRC. Internal to dpdat; shared by the
 * port, the RC engine, the connection manager and the device. Pure: no
 * state, no call into the rest of dpdat. All multi-byte fields big-endian.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#define ROCE_UDP_PORT		4791
#define ROCE_ICRC_LEN		4
/* The ECN field of the IP header (the low two bits of its TOS byte) */
#define ROCE_ECN_MASK	0x03
#define ROCE_ECN_ECT1	0x01
#define ROCE_ECN_ECT0	0x02
#define ROCE_ECN_CE	0x03
/* A CNP's 16 reserved bytes after the BTH; its BTH's BECN bit set */
#define ROCE_CNP_LEN	16
#define ROCE_BTH_BECN	0x40	/* in the QPN word's top byte */

#define ROCE_PKEY_DEFAULT	0xffff
#define ROCE_QP1		1
#define ROCE_QKEY_GSI		0x80010000u
#define ROCE_PSN_MASK		0xffffffu
#define ROCE_QPN_MASK		0xffffffu

/* RC opcodes (transport 000b) */
enum roce_opcode {
	ROCE_OP_SEND_FIRST		= 0x00,
	ROCE_OP_SEND_MIDDLE		= 0x01,
	ROCE_OP_SEND_LAST		= 0x02,
	ROCE_OP_SEND_LAST_IMM		= 0x03,
	ROCE_OP_SEND_ONLY		= 0x04,
	ROCE_OP_SEND_ONLY_IMM		= 0x05,
	ROCE_OP_WRITE_FIRST		= 0x06,
	ROCE_OP_WRITE_MIDDLE		= 0x07,
	ROCE_OP_WRITE_LAST		= 0x08,
	ROCE_OP_WRITE_LAST_IMM		= 0x09,
	ROCE_OP_WRITE_ONLY		= 0x0a,
	ROCE_OP_WRITE_ONLY_IMM		= 0x0b,
	ROCE_OP_READ_REQUEST		= 0x0c,
	ROCE_OP_READ_RESP_FIRST		= 0x0d,
	ROCE_OP_READ_RESP_MIDDLE	= 0x0e,
	ROCE_OP_READ_RESP_LAST		= 0x0f,
	ROCE_OP_READ_RESP_ONLY		= 0x10,
	ROCE_OP_ACK			= 0x11,
	ROCE_OP_ATOMIC_ACK		= 0x12,
	ROCE_OP_CMP_SWAP		= 0x13,
	ROCE_OP_FETCH_ADD		= 0x14,
	ROCE_OP_UD_SEND_ONLY		= 0x64,	/* UD 011b, SEND only */
	ROCE_OP_UD_SEND_ONLY_IMM	= 0x65,
	ROCE_OP_CNP			= 0x81,	/* congestion notification */
};

/* AETH syndromes */
#define ROCE_AETH_ACK		0x00
#define ROCE_AETH_RNR_NAK	0x20	/* | 5-bit timer */
#define ROCE_AETH_NAK_PSN	0x60
#define ROCE_AETH_NAK_INV_REQ	0x61
#define ROCE_AETH_NAK_REM_ACC	0x62
#define ROCE_AETH_NAK_REM_OP	0x63
#define ROCE_AETH_CREDIT_INVALID 0x1f
#define ROCE_AETH_TYPE_MASK	0xe0

struct roce_bth {
	uint8_t opcode;
	uint8_t flags;		/* SE:1 M:1 PadCnt:2 TVer:4 */
	rte_be16_t pkey;
	rte_be32_t qpn;		/* FECN:1 BECN:1 resv:6 | dest QP:24 */
	rte_be32_t apsn;	/* AckReq:1 resv:7 | PSN:24 */
} __rte_packed;

#define ROCE_BTH_SE		0x80
#define ROCE_BTH_MIG		0x40
#define ROCE_BTH_PAD_SHIFT	4
#define ROCE_BTH_PAD_MASK	0x30
#define ROCE_BTH_ACKREQ		0x80000000u
/* dpdat's extension between agreeing peers (DPDAT_QP_EXT_ACK_RIDE): a
 * reserved bit of the AckReq byte says that an ACK rides on this request,
 * in ROCE_RIDE_LEN bytes right after the BTH (reserved:8 | PSN:24, the
 * PSN acknowledged). Plain RoCEv2 sends the bit as zero. */
#define ROCE_BTH_RIDE		0x40000000u
#define ROCE_RIDE_LEN		4

struct roce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t dlen;
} __rte_packed;

struct roce_aeth {
	rte_be32_t smsn;	/* syndrome:8 | MSN:24 */
} __rte_packed;

struct roce_deth {
	rte_be32_t qkey;
	rte_be32_t sqp;		/* resv:8 | source QP:24 */
} __rte_packed;

struct roce_immdt {
	rte_be32_t imm;
} __rte_packed;

/* Atomic request (CmpSwap, FetchAdd): the 8-byte aligned target, the value
 * to swap in or add, and the value to compare with (CmpSwap only). */
struct roce_atometh {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t compare;
} __rte_packed;

/* Atomic response: the target's value before the operation. */
struct roce_atomackh {
	rte_be64_t orig;
} __rte_packed;

/* Which extension headers an RC opcode carries, and its place in a message. */
#define ROCE_F_RETH	0x01
#define ROCE_F_AETH	0x02
#define ROCE_F_IMM	0x04
#define ROCE_F_DETH	0x08
#define ROCE_F_PAYLOAD	0x10
#define ROCE_F_FIRST	0x20
#define ROCE_F_LAST	0x40
#define ROCE_F_VALID	0x80
#define ROCE_F_ATOMIC	0x100	/* AtomicETH */
#define ROCE_F_ATOMICACK 0x200	/* AtomicAckETH */

extern const uint16_t roce_op_flags[256];

static inline bool
roce_op_valid(uint8_t op)
{
	return roce_op_flags[op] & ROCE_F_VALID;
}

/* Length of the headers that follow the BTH for this opcode. */
static inline unsigned int
roce_ext_len(uint8_t op)
{
	uint16_t f = roce_op_flags[op];

	return (f & ROCE_F_RETH ? sizeof(struct roce_reth) : 0) +
	       (f & ROCE_F_AETH ? sizeof(struct roce_aeth) : 0) +
	       (f & ROCE_F_IMM ? sizeof(struct roce_immdt) : 0) +
	       (f & ROCE_F_DETH ? sizeof(struct roce_deth) : 0) +
	       (f & ROCE_F_ATOMIC ? sizeof(struct roce_atometh) : 0) +
	       (f & ROCE_F_ATOMICACK ? sizeof(struct roce_atomackh) : 0);
}

/* A request (SEND, WRITE, READ, atomic), as opposed to an answer. */
static inline bool
roce_op_request(uint8_t op)
{
	return op <= ROCE_OP_READ_REQUEST || op == ROCE_OP_CMP_SWAP ||
	       op == ROCE_OP_FETCH_ADD;
}

static inline uint32_t
roce_bth_qpn(const struct roce_bth *b)
{
	return rte_be_to_cpu_32(b->qpn) & ROCE_QPN_MASK;
}

static inline uint32_t
roce_bth_psn(const struct roce_bth *b)
{
	return rte_be_to_cpu_32(b->apsn) & ROCE_PSN_MASK;
}

static inline unsigned int
roce_bth_pad(const struct roce_bth *b)
{
	return (b->flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
}

/* PSNs are 24-bit and compared modulo 2^24: a - b as a signed 24-bit value. */
static inline int32_t
roce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline uint32_t
roce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/* ICRC over an IPv4 RoCEv2 packet held contiguously from the IPv4 header
 * (ip) for len bytes, ICRC excluded. Returns the value as it is stored on the
 * wire when read as a little-endian 32-bit word. */
uint32_t roce_icrc(const void *ip, unsigned int len);

struct rte_mbuf;
/* ICRC of the packet in m whose IPv4 header starts at l3_off; the packet
 * (which may span several segments) ends with the ICRC, not covered. */
uint32_t roce_icrc_mbuf(const struct rte_mbuf *m, unsigned int l3_off);

/* A received frame's transport part, once roce_rx_parse() accepted it. */
struct roce_rx {
	const struct roce_bth *bth;	/* in the mbuf, or in copy */
	struct roce_bth copy;		/* when the BTH spans segments */
	unsigned int off;		/* first byte after the BTH (and after a
					 * riding ACK) */
	unsigned int paylen;		/* payload, without pad and ICRC */
	bool ride;			/* a request with an ACK riding on it */
	uint32_t ride_psn;		/* the PSN that ACK acknowledges */
};

enum roce_rx_verdict {
	ROCE_RX_OK = 0,
	ROCE_RX_BAD_ICRC,	/* the ICRC does not match */
	ROCE_RX_BAD_HDR,	/* unknown opcode, reserved bits, P_Key,
				 * lengths, payload where none belongs */
};

/* Check a RoCEv2 frame whose IPv4 header is at l3_off and BTH at bth_off:
 * ICRC, BTH (known opcode, TVer 0, default P_Key), and that the extension
 * headers, pad and ICRC fit. An ACK may carry a payload (a dpdat peer's
 * selective ACK: the QP's agreement decides); other opcodes only where the
 * opcode has one. On ROCE_RX_OK rx says where things are; rx->bth is valid
 * as long as both m and rx are. */
enum roce_rx_verdict roce_rx_parse(const struct rte_mbuf *m,
				   unsigned int l3_off, unsigned int bth_off,
				   struct roce_rx *rx);

#endif /* DPDAT_ROCE_H */
