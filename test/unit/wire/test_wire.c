/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * lib/wire on its own: the checks roce_rx_parse() makes of every received
 * frame (one verdict per way a frame can be wrong), the ICRC of a frame
 * dpdat sent (its ICRC checked by zlib's CRC-32, independent of ISA-L) in
 * one mbuf and split across two, the opcode table against IBTA vol. 1
 * table 38, PSN arithmetic across the 2^24 wrap, and the CM MAD layout
 * (cm_wire.h) against the byte offsets of IBTA vol. 1 section 12.6.
 * Frames that must reach the header checks get a correct ICRC from zlib,
 * so a verdict of BAD_HDR never stands for a wrong checksum.
 */

#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <zlib.h>

#include <rte_mbuf.h>

#include <dpdat/dpdat.h>

#include "cm_wire.h"
#include "roce.h"
#include "unit_run.h"

#define L2	14
#define L3	20
#define BTH_OFF	(L2 + L3 + 8)	/* Ethernet, IPv4, UDP */
#define ICRC	ROCE_ICRC_LEN

/* An RDMA WRITE ONLY as dpdat sent it (the fuzz corpus, op0a-1): dest QP
 * 0x10, PSN 0xea1181 with AckReq, RETH va 0x1182a06000 rkey 0x101 len 1,
 * one payload byte and three pad bytes. */
static const uint8_t write_only[] = {
	0xd2, 0x0c, 0x57, 0xc4, 0xb3, 0x5a, 0xae, 0x37, 0xe7, 0xa2, 0xa8, 0xa2,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0xae, 0x85, 0xc6, 0x12, 0x00, 0x02, 0xc6, 0x12, 0x00, 0x01, 0xd9, 0x64,
	0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00, 0x0a, 0x30, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x10, 0x80, 0xea, 0x11, 0x81, 0x00, 0x00, 0x00, 0x11, 0x82, 0xa0,
	0x60, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00,
	0x00, 0x00, 0x9e, 0xc5, 0x17, 0x69,
};

static struct rte_mempool *pool;

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The ICRC by IBTA annex A17 with zlib: 8 bytes of ones for the LRH, the
 * variant fields of IPv4, UDP and BTH set to ones. */
static uint32_t
zlib_icrc(const uint8_t *frame, unsigned int len)
{
	uint8_t q[8 + 2048];
	unsigned int n = len - L2 - ICRC;

	memset(q, 0xff, 8);
	memcpy(q + 8, frame + L2, n);
	q[8 + 1] = 0xff;
	q[8 + 8] = 0xff;
	q[8 + 10] = q[8 + 11] = 0xff;
	q[8 + L3 + 6] = q[8 + L3 + 7] = 0xff;
	q[8 + L3 + 8 + 4] = 0xff;
	return (uint32_t)crc32(0, q, 8 + n);
}

/* Make the IPv4 and UDP lengths and the ICRC right for a frame of len. */
static void
seal(uint8_t *f, unsigned int len)
{
	uint32_t c;

	f[L2 + 2] = (uint8_t)((len - L2) >> 8);
	f[L2 + 3] = (uint8_t)(len - L2);
	f[L2 + L3 + 4] = (uint8_t)((len - L2 - L3) >> 8);
	f[L2 + L3 + 5] = (uint8_t)(len - L2 - L3);
	c = zlib_icrc(f, len);
	f[len - 4] = (uint8_t)c;
	f[len - 3] = (uint8_t)(c >> 8);
	f[len - 2] = (uint8_t)(c >> 16);
	f[len - 1] = (uint8_t)(c >> 24);
}

/* A frame of opcode op with its extension headers, plen payload bytes and
 * pad in the BTH; returns its length. */
static unsigned int
frame_build(uint8_t *f, uint8_t op, unsigned int ext, unsigned int plen,
	    unsigned int pad)
{
	unsigned int len = BTH_OFF + 12 + ext + plen + ICRC;

	memset(f, 0, len);
	memcpy(f, write_only, BTH_OFF + 12);
	f[BTH_OFF] = op;
	f[BTH_OFF + 1] = (uint8_t)(pad << ROCE_BTH_PAD_SHIFT);
	for (unsigned int i = 0; i < plen; i++)
		f[BTH_OFF + 12 + ext + i] = (uint8_t)(0xa0 + i);
	seal(f, len);
	return len;
}

/* The frame in one mbuf, or in two chained at cut (0: one). */
static struct rte_mbuf *
mbuf_of(const uint8_t *f, unsigned int len, unsigned int cut)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *t;

	CU_ASSERT_FATAL(m != NULL);
	if (cut == 0 || cut >= len) {
		memcpy(rte_pktmbuf_append(m, (uint16_t)len), f, len);
		return m;
	}
	t = rte_pktmbuf_alloc(pool);
	CU_ASSERT_FATAL(t != NULL);
	memcpy(rte_pktmbuf_append(m, (uint16_t)cut), f, cut);
	memcpy(rte_pktmbuf_append(t, (uint16_t)(len - cut)), f + cut, len - cut);
	CU_ASSERT_FATAL(rte_pktmbuf_chain(m, t) == 0);
	return m;
}

static enum roce_rx_verdict
parse(const uint8_t *f, unsigned int len, unsigned int cut, struct roce_rx *rx)
{
	struct rte_mbuf *m = mbuf_of(f, len, cut);
	enum roce_rx_verdict v = roce_rx_parse(m, L2, BTH_OFF, rx);

	rte_pktmbuf_free(m);
	return v;
}

/* ---- ICRC ---- */

static void
test_icrc_known_frame(void)
{
	const unsigned int len = sizeof(write_only);
	const uint32_t want = le32(write_only + len - ICRC);
	unsigned int cut;

	CU_ASSERT_EQUAL(want, 0x6917c59eu);
	CU_ASSERT_EQUAL(zlib_icrc(write_only, len), want);
	CU_ASSERT_EQUAL(roce_icrc(write_only + L2, len - L2 - ICRC), want);
	/* every cut: inside Ethernet, the IPv4 and UDP headers, the BTH,
	 * the RETH, the payload, the pad and the ICRC itself */
	for (cut = 1; cut < len; cut++) {
		struct rte_mbuf *m = mbuf_of(write_only, len, cut);

		CU_ASSERT_EQUAL(m->nb_segs, 2);
		CU_ASSERT_EQUAL(roce_icrc_mbuf(m, L2), want);
		rte_pktmbuf_free(m);
	}
}

/* Every length from none to past the one-call path's bound (224 bytes
 * after the headers) and on to 1800 bytes (an mbuf of the pool), whole,
 * cut in the headers and cut in the payload: the same ICRC as zlib's. */
static void
test_icrc_lengths(void)
{
	static uint8_t f[1800 + 128];
	unsigned int len, plen, cuts[3], k;
	struct rte_mbuf *m;
	uint32_t want;

	for (plen = 0; plen <= 1800; plen += plen < 300 ? 1 : 61) {
		len = frame_build(f, ROCE_OP_WRITE_ONLY, 16, plen,
				  (-plen) & 3);
		want = le32(f + len - ICRC);
		CU_ASSERT_EQUAL_FATAL(zlib_icrc(f, len), want);
		CU_ASSERT_EQUAL(roce_icrc(f + L2, len - L2 - ICRC), want);
		cuts[0] = 0;
		cuts[1] = BTH_OFF + 5;
		cuts[2] = BTH_OFF + 12 + 16 + plen / 2 + 1;
		for (k = 0; k < RTE_DIM(cuts); k++) {
			m = mbuf_of(f, len, cuts[k]);
			CU_ASSERT_EQUAL(roce_icrc_mbuf(m, L2), want);
			rte_pktmbuf_free(m);
		}
	}
}

/* ---- roce_rx_parse ---- */

static void
test_parse_good(void)
{
	struct roce_rx rx;
	unsigned int cut;

	for (cut = 0; cut < sizeof(write_only); cut++) {
		memset(&rx, 0, sizeof(rx));
		CU_ASSERT_EQUAL_FATAL(parse(write_only, sizeof(write_only),
					    cut, &rx), ROCE_RX_OK);
		CU_ASSERT_EQUAL(rx.off, BTH_OFF + 12);
		CU_ASSERT_EQUAL(rx.paylen, 1);
		/* the BTH it points to, even when the cut runs through it
		 * (rx.copy then; the mbuf is freed, rx still holds it) */
		if (cut > BTH_OFF && cut < BTH_OFF + 12) {
			CU_ASSERT_PTR_EQUAL(rx.bth, &rx.copy);
			CU_ASSERT_EQUAL(rx.bth->opcode, ROCE_OP_WRITE_ONLY);
			CU_ASSERT_EQUAL(roce_bth_qpn(rx.bth), 0x10);
			CU_ASSERT_EQUAL(roce_bth_psn(rx.bth), 0xea1181);
			CU_ASSERT_EQUAL(roce_bth_pad(rx.bth), 3);
		}
	}
}

static void
test_parse_bad_icrc(void)
{
	uint8_t f[sizeof(write_only)];
	struct roce_rx rx;

	memcpy(f, write_only, sizeof(f));
	f[BTH_OFF + 28] ^= 0x01;		/* the payload byte */
	CU_ASSERT_EQUAL(parse(f, sizeof(f), 0, &rx), ROCE_RX_BAD_ICRC);
	memcpy(f, write_only, sizeof(f));
	f[sizeof(f) - 1] ^= 0x80;		/* the ICRC */
	CU_ASSERT_EQUAL(parse(f, sizeof(f), 0, &rx), ROCE_RX_BAD_ICRC);
	CU_ASSERT_EQUAL(parse(f, sizeof(f), 50, &rx), ROCE_RX_BAD_ICRC);
	/* a masked field changes nothing: still good */
	memcpy(f, write_only, sizeof(f));
	f[L2 + 8] = 1;				/* TTL */
	CU_ASSERT_EQUAL(parse(f, sizeof(f), 0, &rx), ROCE_RX_OK);
}

static void
test_parse_unknown_opcode(void)
{
	/* atomic ACK, CmpSwap, FetchAdd: too short for their headers here;
	 * the others unknown */
	static const uint8_t bad[] = { 0x12, 0x13, 0x14, 0x1f, 0x20, 0x63,
				       0x66, 0x80, 0x82, 0xff };
	uint8_t f[128];
	struct roce_rx rx;
	unsigned int len;

	for (size_t i = 0; i < RTE_DIM(bad); i++) {
		len = frame_build(f, bad[i], 0, 0, 0);
		CU_ASSERT_EQUAL(parse(f, len, 0, &rx), ROCE_RX_BAD_HDR);
	}
}

static void
test_parse_tver(void)
{
	uint8_t f[sizeof(write_only)];
	struct roce_rx rx;

	for (int bit = 0; bit < 4; bit++) {
		memcpy(f, write_only, sizeof(f));
		f[BTH_OFF + 1] |= (uint8_t)(1u << bit);
		seal(f, sizeof(f));
		CU_ASSERT_EQUAL(parse(f, sizeof(f), 0, &rx), ROCE_RX_BAD_HDR);
	}
	/* SE and M are not TVer */
	memcpy(f, write_only, sizeof(f));
	f[BTH_OFF + 1] |= ROCE_BTH_SE | ROCE_BTH_MIG;
	seal(f, sizeof(f));
	CU_ASSERT_EQUAL(parse(f, sizeof(f), 0, &rx), ROCE_RX_OK);
}

static void
test_parse_pkey(void)
{
	static const uint16_t keys[] = { 0x7fff, 0x0000, 0x8001, 0xfffe };
	uint8_t f[sizeof(write_only)];
	struct roce_rx rx;

	for (size_t i = 0; i < RTE_DIM(keys); i++) {
		memcpy(f, write_only, sizeof(f));
		f[BTH_OFF + 2] = (uint8_t)(keys[i] >> 8);
		f[BTH_OFF + 3] = (uint8_t)keys[i];
		seal(f, sizeof(f));
		CU_ASSERT_EQUAL(parse(f, sizeof(f), 0, &rx), ROCE_RX_BAD_HDR);
	}
}

static void
test_parse_truncated(void)
{
	uint8_t f[sizeof(write_only)];
	struct roce_rx rx;
	unsigned int len;

	/* the RETH cut short: 12 of its 16 bytes, then the ICRC */
	memcpy(f, write_only, sizeof(f));
	len = BTH_OFF + 12 + 12 + ICRC;
	f[BTH_OFF + 1] = 0;			/* no pad either */
	seal(f, len);
	CU_ASSERT_EQUAL(parse(f, len, 0, &rx), ROCE_RX_BAD_HDR);
	/* half a BTH */
	memcpy(f, write_only, sizeof(f));
	len = BTH_OFF + 6 + ICRC;
	seal(f, len);
	CU_ASSERT_NOT_EQUAL(parse(f, len, 0, &rx), ROCE_RX_OK);
	/* not even room for an ICRC after the UDP header */
	CU_ASSERT_EQUAL(parse(write_only, BTH_OFF + 3, 0, &rx), ROCE_RX_BAD_HDR);
	/* an ACK without its AETH */
	len = frame_build(f, ROCE_OP_ACK, 0, 0, 0);
	CU_ASSERT_EQUAL(parse(f, len, 0, &rx), ROCE_RX_BAD_HDR);
}

static void
test_parse_pad(void)
{
	uint8_t f[128];
	struct roce_rx rx;
	unsigned int len;

	/* SEND ONLY, 2 bytes after the BTH, pad 3: the pad does not fit */
	len = frame_build(f, ROCE_OP_SEND_ONLY, 0, 2, 3);
	CU_ASSERT_EQUAL(parse(f, len, 0, &rx), ROCE_RX_BAD_HDR);
	/* 5 bytes, pad 3: two of payload */
	len = frame_build(f, ROCE_OP_SEND_ONLY, 0, 5, 3);
	CU_ASSERT_EQUAL_FATAL(parse(f, len, 0, &rx), ROCE_RX_OK);
	CU_ASSERT_EQUAL(rx.paylen, 2);
	/* the pad counted after the extension header, not into it */
	len = frame_build(f, ROCE_OP_SEND_ONLY_IMM, 4, 2, 3);
	CU_ASSERT_EQUAL(parse(f, len, 0, &rx), ROCE_RX_BAD_HDR);
}

static void
test_parse_payload_where_none(void)
{
	uint8_t f[128];
	struct roce_rx rx;
	unsigned int len;

	len = frame_build(f, ROCE_OP_READ_REQUEST, 16, 0, 0);
	CU_ASSERT_EQUAL_FATAL(parse(f, len, 0, &rx), ROCE_RX_OK);
	CU_ASSERT_EQUAL(rx.paylen, 0);
	len = frame_build(f, ROCE_OP_READ_REQUEST, 16, 4, 0);
	CU_ASSERT_EQUAL(parse(f, len, 0, &rx), ROCE_RX_BAD_HDR);
	/* an ACK may carry one (a dpdat peer's SACK) */
	len = frame_build(f, ROCE_OP_ACK, 4, 0, 0);
	CU_ASSERT_EQUAL_FATAL(parse(f, len, 0, &rx), ROCE_RX_OK);
	CU_ASSERT_EQUAL(rx.paylen, 0);
	len = frame_build(f, ROCE_OP_ACK, 4, 8, 0);
	CU_ASSERT_EQUAL_FATAL(parse(f, len, 0, &rx), ROCE_RX_OK);
	CU_ASSERT_EQUAL(rx.off, BTH_OFF + 12);
	CU_ASSERT_EQUAL(rx.paylen, 8);
}

/* ---- opcodes, PSNs ---- */

/* IBTA vol. 1 table 38 for the opcodes dpdat speaks, and RoCEv2's CNP
 * (annex A17: no extension header, 16 reserved bytes): extension header
 * bytes, payload, first, last. */
static const struct {
	uint8_t op, ext, payload, first, last;
} ibta_ops[] = {
	{ 0x00, 0, 1, 1, 0 }, { 0x01, 0, 1, 0, 0 }, { 0x02, 0, 1, 0, 1 },
	{ 0x03, 4, 1, 0, 1 }, { 0x04, 0, 1, 1, 1 }, { 0x05, 4, 1, 1, 1 },
	{ 0x06, 16, 1, 1, 0 }, { 0x07, 0, 1, 0, 0 }, { 0x08, 0, 1, 0, 1 },
	{ 0x09, 4, 1, 0, 1 }, { 0x0a, 16, 1, 1, 1 }, { 0x0b, 20, 1, 1, 1 },
	{ 0x0c, 16, 0, 1, 1 }, { 0x0d, 4, 1, 1, 0 }, { 0x0e, 0, 1, 0, 0 },
	{ 0x0f, 4, 1, 0, 1 }, { 0x10, 4, 1, 1, 1 }, { 0x11, 4, 0, 1, 1 },
	{ 0x12, 12, 0, 1, 1 }, { 0x13, 28, 0, 1, 1 }, { 0x14, 28, 0, 1, 1 },
	{ 0x64, 8, 1, 1, 1 }, { 0x65, 12, 1, 1, 1 }, { 0x81, 0, 1, 1, 1 },
};

static void
test_opcode_table(void)
{
	bool listed[256] = { false };

	for (size_t i = 0; i < RTE_DIM(ibta_ops); i++) {
		uint8_t op = ibta_ops[i].op;
		uint16_t f = roce_op_flags[op];

		listed[op] = true;
		CU_ASSERT(roce_op_valid(op));
		CU_ASSERT_EQUAL(roce_ext_len(op), ibta_ops[i].ext);
		CU_ASSERT_EQUAL(!!(f & ROCE_F_PAYLOAD), ibta_ops[i].payload);
		CU_ASSERT_EQUAL(!!(f & ROCE_F_FIRST), ibta_ops[i].first);
		CU_ASSERT_EQUAL(!!(f & ROCE_F_LAST), ibta_ops[i].last);
		/* an immediate exactly where the name says so */
		CU_ASSERT_EQUAL(!!(f & ROCE_F_IMM),
				op == 0x03 || op == 0x05 || op == 0x09 ||
				op == 0x0b || op == 0x65);
	}
	for (unsigned int op = 0; op < 256; op++)
		if (!listed[op])
			CU_ASSERT_EQUAL(roce_op_flags[op], 0);
}

static void
test_psn_wrap(void)
{
	static const uint32_t base[] = { 0, 1, 0x7fffff, 0x800000, 0xfffff0,
					 0xffffff };
	static const uint32_t step[] = { 0, 1, 2, 15, 16, 0x1000, 0x7fffff };

	for (size_t i = 0; i < RTE_DIM(base); i++)
		for (size_t j = 0; j < RTE_DIM(step); j++) {
			uint32_t b = base[i], n = step[j];
			uint32_t a = roce_psn_add(b, n);

			CU_ASSERT(a <= ROCE_PSN_MASK);
			CU_ASSERT_EQUAL(a, (b + n) % (1u << 24));
			CU_ASSERT_EQUAL(roce_psn_diff(a, b), (int32_t)n);
			CU_ASSERT_EQUAL(roce_psn_diff(b, a), -(int32_t)n);
		}
	/* the bits above 24 of an operand do not count */
	CU_ASSERT_EQUAL(roce_psn_diff(0x01000005, 0x02000003), 2);
	CU_ASSERT_EQUAL(roce_psn_add(0xffffff, 0x01000001), 0);
	/* half the space away: the far side of the window */
	CU_ASSERT(roce_psn_diff(roce_psn_add(5, 0x800000), 5) < 0);
}

/* ---- CM MADs ---- */

#define MSG	(CM_MAD_LEN - CM_HDR_LEN)	/* 232 */

static void
test_cm_layout(void)
{
	/* every message ends its private data at the end of the MAD */
	CU_ASSERT_EQUAL(MSG, 232);
	CU_ASSERT_EQUAL(REQ_PDATA + REQ_PDATA_LEN, MSG);
	CU_ASSERT_EQUAL(REP_PDATA + REP_PDATA_LEN, MSG);
	CU_ASSERT_EQUAL(RTU_PDATA + RTU_PDATA_LEN, MSG);
	CU_ASSERT_EQUAL(REJ_PDATA + REJ_PDATA_LEN, MSG);
	CU_ASSERT_EQUAL(DREQ_PDATA + DREQ_PDATA_LEN, MSG);
	CU_ASSERT_EQUAL(REJ_ARI + 72, REJ_PDATA);
	/* the public limits are the wire's */
	CU_ASSERT_EQUAL(REQ_PDATA_LEN, 92);
	CU_ASSERT_EQUAL(REP_PDATA_LEN, 196);
	CU_ASSERT_EQUAL(REJ_PDATA_LEN, 148);
	CU_ASSERT_EQUAL(DREQ_PDATA_LEN, 220);
	CU_ASSERT_EQUAL(REQ_PDATA_LEN - CM_IP_HDR_LEN, 56);
}

/* A REQ written field by field, read back, and its bytes where IBTA puts
 * them (vol. 1, 12.6.5): local ID at 0, service ID at 8, QPN and
 * responder resources at 32, PSN with the CM timeout and retry count at
 * 44, P_Key at 48, MTU at 50 (high nibble), GIDs at 56 and 72, private
 * data at 140. */
static void
test_cm_req(void)
{
	uint8_t p[MSG], pd[REQ_PDATA_LEN];

	memset(p, 0, sizeof(p));
	for (unsigned int i = 0; i < sizeof(pd); i++)
		pd[i] = (uint8_t)(i + 1);
	cm_put32(p, REQ_LOCAL_ID, 0xa1b2c3d4);
	cm_put64(p, REQ_SERVICE_ID, 0x0000000001061234ull);
	cm_put64(p, REQ_CA_GUID, 0x0102030405060708ull);
	cm_put32(p, REQ_QKEY, 0x11223344);
	cm_put32(p, REQ_QPN_RR, 0xabcdefu << 8 | 0x10);
	cm_put32(p, REQ_PSN_TO, 0x123456u << 8 | 20u << 3 | 7);
	p[REQ_PKEY] = 0xff;
	p[REQ_PKEY + 1] = 0xff;
	p[REQ_MTU_RNR] = (uint8_t)(cm_mtu_enc(1024) << 4 | 7);
	memset(p + REQ_GID_L, 0x5a, 16);
	memset(p + REQ_GID_R, 0xa5, 16);
	memcpy(p + REQ_PDATA, pd, sizeof(pd));

	CU_ASSERT_EQUAL(cm_get32(p, REQ_LOCAL_ID), 0xa1b2c3d4);
	CU_ASSERT_EQUAL(cm_get64(p, REQ_SERVICE_ID), 0x0000000001061234ull);
	CU_ASSERT_EQUAL(cm_get64(p, REQ_CA_GUID), 0x0102030405060708ull);
	CU_ASSERT_EQUAL(cm_get32(p, REQ_QKEY), 0x11223344);
	CU_ASSERT_EQUAL(cm_get32(p, REQ_QPN_RR) >> 8, 0xabcdef);
	CU_ASSERT_EQUAL(cm_get32(p, REQ_PSN_TO) >> 8, 0x123456);
	CU_ASSERT_EQUAL(cm_mtu_dec(p[REQ_MTU_RNR] >> 4), 1024);
	CU_ASSERT_EQUAL(memcmp(p + REQ_PDATA, pd, sizeof(pd)), 0);
	CU_ASSERT(cm_ip_service(cm_get64(p, REQ_SERVICE_ID)));

	/* the bytes, by IBTA's numbers */
	CU_ASSERT(p[0] == 0xa1 && p[3] == 0xd4);
	CU_ASSERT(p[14] == 0x12 && p[15] == 0x34 && p[13] == 0x06);
	CU_ASSERT(p[16] == 0x01 && p[23] == 0x08);
	CU_ASSERT(p[28] == 0x11 && p[31] == 0x44);
	CU_ASSERT(p[32] == 0xab && p[33] == 0xcd && p[34] == 0xef &&
		  p[35] == 0x10);
	CU_ASSERT(p[44] == 0x12 && p[46] == 0x56 && p[47] == (20 << 3 | 7));
	CU_ASSERT(p[48] == 0xff && p[49] == 0xff);
	CU_ASSERT_EQUAL(p[50], 3 << 4 | 7);
	CU_ASSERT(p[56] == 0x5a && p[71] == 0x5a && p[72] == 0xa5 &&
		  p[87] == 0xa5);
	CU_ASSERT(p[140] == 1 && p[231] == 92);
	/* the alternate path (96..139): no field above spills into it */
	for (unsigned int i = 96; i < 140; i++)
		CU_ASSERT_EQUAL(p[i], 0);
}

static void
test_cm_rep_rtu(void)
{
	uint8_t p[MSG];

	memset(p, 0, sizeof(p));
	cm_put32(p, REP_LOCAL_ID, 0x01020304);
	cm_put32(p, REP_REMOTE_ID, 0x05060708);
	cm_put32(p, REP_QKEY, 0x0a0b0c0d);
	cm_put32(p, REP_QPN, 0x00beefu << 8);
	cm_put32(p, REP_PSN, 0xfedcbau << 8);
	p[REP_RR] = 16;
	p[REP_ID] = 8;
	p[REP_TAD] = 14 << 3;
	p[REP_RNR] = 7 << 5 | CM_EXT_SACK | CM_EXT_NAK_REPEAT;
	cm_put64(p, REP_CA_GUID, 0x1122334455667788ull);
	memset(p + REP_PDATA, 0x77, REP_PDATA_LEN);
	CU_ASSERT_EQUAL(cm_get32(p, REP_LOCAL_ID), 0x01020304);
	CU_ASSERT_EQUAL(cm_get32(p, REP_REMOTE_ID), 0x05060708);
	CU_ASSERT_EQUAL(cm_get32(p, REP_QKEY), 0x0a0b0c0d);
	CU_ASSERT_EQUAL(cm_get32(p, REP_QPN) >> 8, 0x00beef);
	CU_ASSERT_EQUAL(cm_get32(p, REP_PSN) >> 8, 0xfedcba);
	CU_ASSERT_EQUAL(cm_get64(p, REP_CA_GUID), 0x1122334455667788ull);
	/* IBTA 12.6.8: QPN 12, PSN 20, RR 24, ID 25, TAD 26, RNR 27, GUID 28,
	 * private data 36 */
	CU_ASSERT(p[12] == 0x00 && p[13] == 0xbe && p[14] == 0xef);
	CU_ASSERT(p[20] == 0xfe && p[22] == 0xba);
	CU_ASSERT(p[24] == 16 && p[25] == 8 && p[26] == 14 << 3);
	CU_ASSERT_EQUAL(p[27] >> 5, 7);		/* RNR retry, top 3 bits */
	CU_ASSERT_EQUAL(p[27] & 0x10, 0);	/* SRQ bit not used by ext */
	CU_ASSERT(p[28] == 0x11 && p[35] == 0x88);
	CU_ASSERT(p[35] != 0x77 && p[36] == 0x77 && p[231] == 0x77);

	memset(p, 0, sizeof(p));		/* RTU and DREP: ids only */
	cm_put32(p, RTU_LOCAL_ID, 0xcafe0001);
	cm_put32(p, RTU_REMOTE_ID, 0xcafe0002);
	memset(p + RTU_PDATA, 0x42, RTU_PDATA_LEN);
	CU_ASSERT_EQUAL(cm_get32(p, RTU_LOCAL_ID), 0xcafe0001);
	CU_ASSERT_EQUAL(cm_get32(p, RTU_REMOTE_ID), 0xcafe0002);
	CU_ASSERT(p[7] == 0x02 && p[8] == 0x42);
}

static void
test_cm_rej_dreq_mra(void)
{
	uint8_t p[MSG];

	memset(p, 0, sizeof(p));
	cm_put32(p, REJ_LOCAL_ID, 7);
	cm_put32(p, REJ_REMOTE_ID, 9);
	p[REJ_MSG] = 1 << 6;			/* REP rejected */
	p[REJ_INFO_LEN] = 1 << 1;		/* 1 byte of ARI, 7 bits */
	p[REJ_REASON] = 0;
	p[REJ_REASON + 1] = CM_REJ_INVALID_MTU;
	p[REJ_ARI] = 3 << 4;
	memset(p + REJ_PDATA, 0x99, REJ_PDATA_LEN);
	CU_ASSERT_EQUAL(cm_get32(p, REJ_LOCAL_ID), 7);
	CU_ASSERT_EQUAL(cm_get32(p, REJ_REMOTE_ID), 9);
	/* IBTA 12.6.7: message rejected at 8, reason at 10, ARI 12..83,
	 * private data 84 */
	CU_ASSERT_EQUAL(p[8] >> 6, 1);
	CU_ASSERT_EQUAL(p[10] << 8 | p[11], 26);
	CU_ASSERT_EQUAL(p[12], 0x30);
	CU_ASSERT(p[83] == 0 && p[84] == 0x99);

	memset(p, 0, sizeof(p));
	cm_put32(p, DREQ_LOCAL_ID, 0x10);
	cm_put32(p, DREQ_REMOTE_ID, 0x20);
	cm_put32(p, DREQ_QPN, 0x123456u << 8);
	memset(p + DREQ_PDATA, 0x33, DREQ_PDATA_LEN);
	CU_ASSERT_EQUAL(cm_get32(p, DREQ_QPN) >> 8, 0x123456);
	CU_ASSERT(p[8] == 0x12 && p[10] == 0x56 && p[11] == 0 &&
		  p[12] == 0x33);

	memset(p, 0, sizeof(p));
	p[MRA_MSG] = 0 << 6;			/* REQ MRAed */
	p[MRA_TIMEOUT] = 20 << 3;
	CU_ASSERT_EQUAL(MRA_MSG, 8);
	CU_ASSERT_EQUAL(p[9] >> 3, 20);
}

static void
test_cm_mtu(void)
{
	static const uint16_t mtu[] = { 256, 512, 1024, 2048, 4096 };

	for (unsigned int i = 0; i < RTE_DIM(mtu); i++) {
		CU_ASSERT_EQUAL(cm_mtu_enc(mtu[i]), i + 1);
		CU_ASSERT_EQUAL(cm_mtu_dec((uint8_t)(i + 1)), mtu[i]);
	}
	CU_ASSERT_EQUAL(cm_mtu_enc(1000), 3);	/* rounded up to 1024 */
	CU_ASSERT_EQUAL(cm_mtu_enc(100), 1);
	CU_ASSERT_EQUAL(cm_mtu_enc(9000), 5);
	CU_ASSERT_EQUAL(cm_mtu_dec(0), 0);
	CU_ASSERT_EQUAL(cm_mtu_dec(6), 0);
	CU_ASSERT_EQUAL(cm_mtu_dec(15), 0);
}

static void
test_cm_ip_hdr_roundtrip(void)
{
	uint8_t h[CM_IP_HDR_LEN];
	uint32_t src, dst;
	uint16_t port;

	cm_ip_hdr_put(h, rte_cpu_to_be_32(0xc6120001),
		      rte_cpu_to_be_32(0xc6120002), 0x8123);
	CU_ASSERT_EQUAL_FATAL(cm_ip_hdr_get(h, &src, &dst, &port), 0);
	CU_ASSERT_EQUAL(src, rte_cpu_to_be_32(0xc6120001));
	CU_ASSERT_EQUAL(dst, rte_cpu_to_be_32(0xc6120002));
	CU_ASSERT_EQUAL(port, 0x8123);
	h[1] = 6 << 4;				/* IPv6: not taken */
	CU_ASSERT_EQUAL(cm_ip_hdr_get(h, &src, &dst, &port), -1);
	h[1] = 4 << 4;
	h[0] = 1;				/* version 1 */
	CU_ASSERT_EQUAL(cm_ip_hdr_get(h, &src, &dst, &port), -1);
	CU_ASSERT(cm_ip_service(0x0000000001060000ull | 80));
	CU_ASSERT(cm_ip_service(0x00000000013f0000ull | 80));
	CU_ASSERT(!cm_ip_service(0x0000000001110000ull));
	CU_ASSERT(!cm_ip_service(4711));
}

static CU_TestInfo wire_tests[] = {
	{ "ICRC of a sent frame, whole and cut in two", test_icrc_known_frame },
	{ "ICRC of every length, one call or chained", test_icrc_lengths },
	{ "parse: a good frame, whole and cut in two", test_parse_good },
	{ "parse: bad ICRC", test_parse_bad_icrc },
	{ "parse: unknown opcodes", test_parse_unknown_opcode },
	{ "parse: TVer bits", test_parse_tver },
	{ "parse: P_Key other than the default", test_parse_pkey },
	{ "parse: truncated frames", test_parse_truncated },
	{ "parse: pad larger than the payload", test_parse_pad },
	{ "parse: payload where the opcode has none", test_parse_payload_where_none },
	{ "opcode table against IBTA", test_opcode_table },
	{ "PSN arithmetic across the wrap", test_psn_wrap },
	CU_TEST_INFO_NULL,
};

static CU_TestInfo cm_wire_tests[] = {
	{ "message lengths and private data ends", test_cm_layout },
	{ "REQ fields round trip at IBTA offsets", test_cm_req },
	{ "REP, RTU fields round trip", test_cm_rep_rtu },
	{ "REJ, DREQ, MRA fields", test_cm_rej_dreq_mra },
	{ "path MTU encoding", test_cm_mtu },
	{ "IP CM header round trip", test_cm_ip_hdr_roundtrip },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "wire_roce", NULL, NULL, NULL, NULL, wire_tests },
	{ "wire_cm", NULL, NULL, NULL, NULL, cm_wire_tests },
	CU_SUITE_INFO_NULL,
};

static int
pool_create(void)
{
	pool = rte_pktmbuf_pool_create("test_wire", 64, 0, 0, 2048, -1);
	return pool == NULL;
}

static void
pool_free(void)
{
	rte_mempool_free(pool);
}

int
main(int argc, char **argv)
{
	(void)argc;
	return unit_run_eal(argv[0], suites, pool_create, pool_free);
}
