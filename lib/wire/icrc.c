/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The RoCEv2 invariant CRC: standard CRC-32 (reflected 0xEDB88320, as zlib
 * and gzip; not CRC-32C) over 8 bytes of 0xff standing for the masked LRH,
 * the IPv4 header with TOS, TTL and checksum set to ones, the UDP header with
 * checksum 0xffff, the BTH with its FECN/BECN/reserved byte set to 0xff, then
 * the rest of the packet up to the ICRC. ISA-L's crc32_gzip_refl() chains
 * over pieces, so only the 40 masked header bytes are copied.
 */

#include <string.h>

#include <isa-l/crc.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "roce.h"

#define ICRC_HDRS (sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr) + \
		   sizeof(struct roce_bth))

static uint32_t
icrc_headers(const uint8_t *hdr)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff };
	uint8_t m[ICRC_HDRS];
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)m;
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	struct roce_bth *bth = (struct roce_bth *)(udp + 1);

	memcpy(m, hdr, ICRC_HDRS);
	ip->type_of_service = 0xff;
	ip->time_to_live = 0xff;
	ip->hdr_checksum = 0xffff;
	udp->dgram_cksum = 0xffff;
	((uint8_t *)&bth->qpn)[0] = 0xff;
	return crc32_gzip_refl(crc32_gzip_refl(0, lrh, sizeof(lrh)), m,
			       sizeof(m));
}

uint32_t
roce_icrc(const void *ip, unsigned int len)
{
	const uint8_t *p = ip;
	uint32_t crc;

	if (len < ICRC_HDRS)
		return 0;
	crc = icrc_headers(p);
	return crc32_gzip_refl(crc, p + ICRC_HDRS, len - ICRC_HDRS);
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
	crc = icrc_headers(p);
	left -= ICRC_HDRS;
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
