/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The RoCEv2 invariant CRC: standard CRC-32 (reflected 0xEDB88320, as zlib
 * and gzip; not CRC-32C) over 8 bytes of 0xff standing for the masked LRH,
 * the IPv4 header with TOS, TTL and checksum set to ones, the UDP header with
 * checksum 0xffff, the BTH with its FECN/BECN/reserved byte set to 0xff, then
 * the rest of the packet up to the ICRC. ISA-L's crc32_gzip_refl() chains
 * over pieces, so only the 40 masked header bytes are copied, and with
 * them the rest of a small packet (one call instead of two).
 */

#include <string.h>

#include <isa-l/crc.h>
#include <rte_branch_prediction.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "roce.h"

#define ICRC_HDRS (sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr) + \
		   sizeof(struct roce_bth))
/* Up to this many bytes after the headers (an 8-byte WRITE has 28: RETH
 * and payload) go through one CRC call with the masked headers: each call
 * has a fixed cost, and three calls a small packet (the LRH's ones, the
 * headers, the rest) made the CRC 17 % of an 8-byte WRITE stream's CPU. */
#define ICRC_SMALL 224

/* The CRC of the 8 bytes of ones standing for the LRH: every ICRC starts
 * from it (computed once; a race computes the same value twice). */
static uint32_t
icrc_seed(void)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff };
	static uint32_t seed;
	uint32_t v = __atomic_load_n(&seed, __ATOMIC_RELAXED);

	if (unlikely(v == 0)) {
		v = crc32_gzip_refl(0, lrh, sizeof(lrh));
		__atomic_store_n(&seed, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* The headers with their variant fields set to ones, into m. */
static inline void
icrc_mask(uint8_t *m, const uint8_t *hdr)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)m;
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	struct roce_bth *bth = (struct roce_bth *)(udp + 1);

	memcpy(m, hdr, ICRC_HDRS);
	ip->type_of_service = 0xff;
	ip->time_to_live = 0xff;
	ip->hdr_checksum = 0xffff;
	udp->dgram_cksum = 0xffff;
	((uint8_t *)&bth->qpn)[0] = 0xff;
}

/* The ICRC of the headers at hdr and the rest, n bytes at rest (short). */
static inline uint32_t
icrc_small(const uint8_t *hdr, const uint8_t *rest, unsigned int n)
{
	uint8_t m[ICRC_HDRS + ICRC_SMALL];

	icrc_mask(m, hdr);
	memcpy(m + ICRC_HDRS, rest, n);
	return crc32_gzip_refl(icrc_seed(), m, ICRC_HDRS + n);
}

static uint32_t
icrc_headers(const uint8_t *hdr)
{
	uint8_t m[ICRC_HDRS];

	icrc_mask(m, hdr);
	return crc32_gzip_refl(icrc_seed(), m, sizeof(m));
}

uint32_t
roce_icrc(const void *ip, unsigned int len)
{
	const uint8_t *p = ip;

	if (len < ICRC_HDRS)
		return 0;
	if (len - ICRC_HDRS <= ICRC_SMALL)
		return icrc_small(p, p + ICRC_HDRS, len - ICRC_HDRS);
	return crc32_gzip_refl(icrc_headers(p), p + ICRC_HDRS,
			       len - ICRC_HDRS);
}

uint32_t
roce_icrc_mbuf(const struct rte_mbuf *m, unsigned int l3_off)
{
	unsigned int left = rte_pktmbuf_pkt_len(m) - l3_off - ROCE_ICRC_LEN;
	unsigned int off = l3_off + ICRC_HDRS, n;
	uint8_t hdr[ICRC_HDRS];
	const uint8_t *p;
	uint32_t crc;

	p = rte_pktmbuf_read(m, l3_off, ICRC_HDRS, hdr);
	if (p == NULL || rte_pktmbuf_pkt_len(m) < l3_off + ICRC_HDRS +
						  ROCE_ICRC_LEN)
		return 0;
	left -= ICRC_HDRS;
	/* a small packet in one segment: one call */
	if (left <= ICRC_SMALL && off + left <= m->data_len)
		return icrc_small(p, rte_pktmbuf_mtod_offset(m, const uint8_t *,
							     off), left);
	crc = icrc_headers(p);
	/* walk to the segment holding off, then chain over the rest */
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	for (; m != NULL && left != 0; m = m->next, off = 0) {
		n = RTE_MIN(left, (unsigned int)m->data_len - off);
		crc = crc32_gzip_refl(crc, rte_pktmbuf_mtod_offset(m,
				const uint8_t *, off), n);
		left -= n;
	}
	return crc;
}
