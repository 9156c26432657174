/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_CM_WIRE_H
#define DPDAT_CM_WIRE_H

/* InfiniBand CM MADs (IBTA vol. 1, 12.6): a 24-byte MAD header and 232
 * bytes of message, sent as a UD SEND to QP1 with the GSI Q_Key. Offsets
 * below are within the 232 message bytes; fields are big-endian and some
 * share a byte or a word, hence accessors rather than a packed struct. */

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#define CM_MAD_LEN		256
#define CM_HDR_LEN		24
#define CM_MGMT_CLASS		0x07
#define CM_CLASS_VERSION	2
#define CM_METHOD_SEND		0x03

#define CM_ATTR_REQ	0x0010
#define CM_ATTR_MRA	0x0011
#define CM_ATTR_REJ	0x0012
#define CM_ATTR_REP	0x0013
#define CM_ATTR_RTU	0x0014
#define CM_ATTR_DREQ	0x0015
#define CM_ATTR_DREP	0x0016

/* dpdat's offer of its extensions for a QP whose details the consumer
 * exchanged itself (dpdat_cm_offer()): a MAD of a vendor-specific class
 * without OUI (IBTA vol. 1, 13.4.4), method Send, to QP1. A GSI with no
 * agent for the class drops it (a Send asks for no answer), so a plain
 * RoCE peer never sees more than a MAD it ignores. Offsets within the
 * data after the MAD header; fields big-endian. */
#define CM_VENDOR_CLASS		0x0e
#define CM_VENDOR_VERSION	1
#define CM_ATTR_EXT_OFFER	0x0001	/* "my QP offers these to yours" */
#define CM_ATTR_EXT_ANSWER	0x0002	/* "mine offered them too: agreed" */
#define OFFER_MAGIC		0	/* CM_OFFER_MAGIC */
#define OFFER_SRC_QPN		4	/* the sender's QP */
#define OFFER_DST_QPN		8	/* the receiver's QP */
#define OFFER_EXT		12	/* CM_EXT_* offered */
#define OFFER_DST_PSN		16	/* the receiver's first send PSN, as
					 * the sender was told it */
#define CM_OFFER_MAGIC		0x64706474u	/* "dpdt" */

/* REQ */
#define REQ_LOCAL_ID	0
#define REQ_SERVICE_ID	8
#define REQ_CA_GUID	16
#define REQ_QKEY	28
#define REQ_QPN_RR	32	/* QPN:24 responder resources:8 */
#define REQ_EECN_ID	36	/* EECN:24 initiator depth:8 */
#define REQ_REECN_TO	40	/* remote EECN:24 remote CM timeout:5 TST:2 E2E:1 */
#define REQ_PSN_TO	44	/* starting PSN:24 local CM timeout:5 retry:3 */
#define REQ_PKEY	48
#define REQ_MTU_RNR	50	/* path MTU:4 RDC:1 RNR retry:3 */
#define REQ_MAXRETRY	51	/* max CM retries:4 SRQ:1 ext TST:3 */
#define REQ_LID_L	52
#define REQ_LID_R	54
#define REQ_GID_L	56
#define REQ_GID_R	72
#define REQ_FLOW	88	/* flow label:20 rsvd:6 packet rate:6 */
#define REQ_TCLASS	92
#define REQ_HOPLIMIT	93
#define REQ_SL		94	/* SL:4 subnet local:1 rsvd:3 */
#define REQ_ACKTO	95	/* local ACK timeout:5 rsvd:3 */
/* dpdat's extensions ride in reserved bits, which other CMs send as zero
 * and ignore: the REQ offers (low bits of the local ACK timeout byte), the
 * REP accepts (low bits of the RNR retry byte). Only between dpdat peers. */
#define CM_EXT_SACK	0x01	/* selective repeat (DPDAT_QP_EXT_SACK) */
#define CM_EXT_NAK_REPEAT 0x02	/* DPDAT_QP_EXT_NAK_REPEAT */
#define CM_EXT_ACK_RIDE	0x04	/* DPDAT_QP_EXT_ACK_RIDE */
#define REQ_PDATA	140
#define REQ_PDATA_LEN	92

/* REJ reasons (IBTA vol. 1, table 112) dpdat handles itself */
#define CM_REJ_INVALID_MTU	26	/* ARI: the largest MTU (4 bits) */

/* REP */
#define REP_LOCAL_ID	0
#define REP_REMOTE_ID	4
#define REP_QKEY	8
#define REP_QPN		12	/* QPN:24 rsvd:8 */
#define REP_PSN		20	/* starting PSN:24 rsvd:8 */
#define REP_RR		24
#define REP_ID		25
#define REP_TAD		26	/* target ACK delay:5 failover:2 E2E:1 */
#define REP_RNR		27	/* RNR retry:3 SRQ:1 rsvd:4 */
#define REP_CA_GUID	28
#define REP_PDATA	36
#define REP_PDATA_LEN	196

/* RTU, DREP */
#define RTU_LOCAL_ID	0
#define RTU_REMOTE_ID	4
#define RTU_PDATA	8
#define RTU_PDATA_LEN	224

/* REJ */
#define REJ_LOCAL_ID	0
#define REJ_REMOTE_ID	4
#define REJ_MSG		8	/* message rejected:2 rsvd:6 (0 REQ, 1 REP) */
#define REJ_INFO_LEN	9
#define REJ_REASON	10
#define REJ_ARI		12	/* additional reject information, 72 bytes */
#define REJ_PDATA	84
#define REJ_PDATA_LEN	148

/* MRA */
#define MRA_MSG		8	/* message MRAed:2 rsvd:6 */
#define MRA_TIMEOUT	9	/* service timeout:5 rsvd:3 */

/* DREQ */
#define DREQ_LOCAL_ID	0
#define DREQ_REMOTE_ID	4
#define DREQ_QPN	8
#define DREQ_PDATA	12
#define DREQ_PDATA_LEN	220

static inline uint32_t
cm_get32(const uint8_t *p, unsigned int off)
{
	uint32_t v;

	memcpy(&v, p + off, 4);
	return rte_be_to_cpu_32(v);
}

static inline void
cm_put32(uint8_t *p, unsigned int off, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p + off, &v, 4);
}

static inline uint64_t
cm_get64(const uint8_t *p, unsigned int off)
{
	uint64_t v;

	memcpy(&v, p + off, 8);
	return rte_be_to_cpu_64(v);
}

static inline void
cm_put64(uint8_t *p, unsigned int off, uint64_t v)
{
	v = rte_cpu_to_be_64(v);
	memcpy(p + off, &v, 8);
}

/* Path MTU encoding: 1 = 256 ... 5 = 4096 */
static inline uint8_t
cm_mtu_enc(uint16_t mtu)
{
	uint8_t e = 1;

	while ((256u << (e - 1)) < mtu && e < 5)
		e++;
	return e;
}

static inline uint16_t
cm_mtu_dec(uint8_t e)
{
	return e >= 1 && e <= 5 ? (uint16_t)(256u << (e - 1)) : 0;
}

/* The IP CM service (IBTA vol. 1, annex A11), as rdma_cm writes and
 * expects it: a REQ to a service ID of an IP port space (RDMA_PS_TCP
 * 0x0106, RDMA_PS_IB 0x013F: 0x0000000001PP0000 | port) starts its private
 * data with a 36-byte header: version 0, IP version in the high nibble,
 * the source port, then source and destination address in 16 bytes each
 * (IPv4 in the last 4, after 12 zero bytes). The consumer's private data
 * follows it. */
#define CM_IP_HDR_LEN		36
#define CM_IP_VERSION		0x00
#define CM_IP_HDR_SRC		4
#define CM_IP_HDR_DST		20
#define CM_PS_TCP		0x0106
#define CM_PS_IB		0x013f

/* Is sid a service ID of the IP CM (whose REQs carry the header)? */
static inline int
cm_ip_service(uint64_t sid)
{
	uint64_t ps = sid >> 16;

	return ps == CM_PS_TCP || ps == CM_PS_IB;
}

static inline void
cm_ip_hdr_put(uint8_t *p, uint32_t src, uint32_t dst, uint16_t src_port)
{
	uint16_t port = rte_cpu_to_be_16(src_port);

	memset(p, 0, CM_IP_HDR_LEN);
	p[0] = CM_IP_VERSION;
	p[1] = 4 << 4;
	memcpy(p + 2, &port, 2);
	memcpy(p + CM_IP_HDR_SRC + 12, &src, 4);	/* network order */
	memcpy(p + CM_IP_HDR_DST + 12, &dst, 4);
}

/* 0, or -1 when the header is not a version-0 IPv4 one. */
static inline int
cm_ip_hdr_get(const uint8_t *p, uint32_t *src, uint32_t *dst,
	      uint16_t *src_port)
{
	uint16_t port;

	if (p[0] != CM_IP_VERSION || (p[1] >> 4) != 4)
		return -1;
	memcpy(&port, p + 2, 2);
	*src_port = rte_be_to_cpu_16(port);
	memcpy(src, p + CM_IP_HDR_SRC + 12, 4);
	memcpy(dst, p + CM_IP_HDR_DST + 12, 4);
	return 0;
}

#endif /* DPDAT_CM_WIRE_H */
