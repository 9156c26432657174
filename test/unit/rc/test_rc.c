/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Wire basics of the RC engine: ICRC against packets built and checksummed
 * by an independent implementation (scapy's RoCE layer), ICRC over chained
 * mbufs, ICRC against zlib's CRC-32 on random packets, PSN arithmetic and
 * the opcode table. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "unit_run.h"
#include "cm_wire.h"
#include <zlib.h>

#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <dpdat/dpdat.h>
#include "roce.h"

/* Generated with scapy 2.5 (scapy.contrib.roce), ICRC computed by scapy:
 * RDMA WRITE ONLY, RETH va 0x7f0012345678 rkey 0x301 len 13, "hello, roce!!"
 * and 3 pad bytes, AckReq, PSN 0xabcdef, dest QP 0x11. */
static const uint8_t pkt_write_only[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x4c, 0x00, 0x07, 0x40, 0x00, 0x40, 0x11,
	0xae, 0x72, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02, 0xc1, 0x23,
	0x12, 0xb7, 0x00, 0x38, 0x00, 0x00, 0x0a, 0x30, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x11, 0x80, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x7f, 0x00, 0x12, 0x34,
	0x56, 0x78, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x00, 0x0d, 0x68, 0x65,
	0x6c, 0x6c, 0x6f, 0x2c, 0x20, 0x72, 0x6f, 0x63, 0x65, 0x21, 0x21, 0x00,
	0x00, 0x00, 0xa9, 0x9d, 0x20, 0xc8,
};

static const uint8_t pkt_ack[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x08, 0x00, 0x45, 0x02, 0x00, 0x30, 0x00, 0x09, 0x40, 0x00, 0x40, 0x11,
	0xae, 0x8a, 0xc6, 0x12, 0x00, 0x02, 0xc6, 0x12, 0x00, 0x01, 0xc4, 0x56,
	0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x12, 0x00, 0xab, 0xcd, 0xef, 0x1f, 0x00, 0x00, 0x05, 0x54, 0x2a,
	0x37, 0xca,
};

#define L2 sizeof(struct rte_ether_hdr)

static struct rte_mempool *pool;

static uint32_t
stored_icrc(const uint8_t *pkt, size_t len)
{
	const uint8_t *p = pkt + len - 4;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void
test_icrc_vectors(void)
{
	CU_ASSERT_EQUAL(roce_icrc(pkt_write_only + L2,
				  sizeof(pkt_write_only) - L2 - 4),
			stored_icrc(pkt_write_only, sizeof(pkt_write_only)));
	CU_ASSERT_EQUAL(roce_icrc(pkt_ack + L2, sizeof(pkt_ack) - L2 - 4),
			stored_icrc(pkt_ack, sizeof(pkt_ack)));
}

/* The masked fields do not change the ICRC; the others do. */
static void
test_icrc_masking(void)
{
	uint8_t p[sizeof(pkt_write_only)];
	const uint32_t want = stored_icrc(pkt_write_only, sizeof(p));
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + L2);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	struct roce_bth *bth = (struct roce_bth *)(udp + 1);
	const unsigned int n = sizeof(p) - L2 - 4;

	memcpy(p, pkt_write_only, sizeof(p));
	ip->time_to_live = 3;
	ip->type_of_service = 0x2e;
	ip->hdr_checksum = 0x1234;
	udp->dgram_cksum = 0x4321;
	((uint8_t *)&bth->qpn)[0] = 0xc0;	/* FECN, BECN */
	CU_ASSERT_EQUAL(roce_icrc(ip, n), want);
	bth->pkey = 0x7fff;
	CU_ASSERT_NOT_EQUAL(roce_icrc(ip, n), want);
	memcpy(p, pkt_write_only, sizeof(p));
	p[sizeof(p) - 8] ^= 1;	/* a payload bit */
	CU_ASSERT_NOT_EQUAL(roce_icrc(ip, n), want);
	CU_ASSERT_EQUAL(roce_icrc(ip, 10), 0);	/* shorter than the headers */
}

/* The packet cut into chained segments at every split point gives the same
 * ICRC as the contiguous one. */
static void
test_icrc_mbuf_chain(void)
{
	const size_t len = sizeof(pkt_write_only);
	const uint32_t want = stored_icrc(pkt_write_only, len);
	size_t a, b;

	for (a = 1; a < len - 1; a += 3) {
		for (b = a + 1; b < len; b += 5) {
			struct rte_mbuf *m[3];
			size_t cut[4] = { 0, a, b, len };
			int k;

			for (k = 0; k < 3; k++) {
				m[k] = rte_pktmbuf_alloc(pool);
				CU_ASSERT_FATAL(m[k] != NULL);
				memcpy(rte_pktmbuf_append(m[k],
					cut[k + 1] - cut[k]),
				       pkt_write_only + cut[k],
				       cut[k + 1] - cut[k]);
			}
			CU_ASSERT_FATAL(rte_pktmbuf_chain(m[0], m[1]) == 0);
			CU_ASSERT_FATAL(rte_pktmbuf_chain(m[0], m[2]) == 0);
			CU_ASSERT_EQUAL(roce_icrc_mbuf(m[0], L2), want);
			rte_pktmbuf_free(m[0]);
		}
	}
}

/* Against zlib on random packets, with the masking done by hand. */
static void
test_icrc_vs_zlib(void)
{
	uint8_t p[2048], q[8 + 2048];
	unsigned int i, k, n;
	uint32_t z;

	srand(4791);
	for (k = 0; k < 200; k++) {
		n = 40 + (unsigned int)rand() % 2000;
		for (i = 0; i < n; i++)
			p[i] = (uint8_t)rand();
		memset(q, 0xff, 8);
		memcpy(q + 8, p, n);
		q[8 + 1] = 0xff;			/* TOS */
		q[8 + 8] = 0xff;			/* TTL */
		q[8 + 10] = q[8 + 11] = 0xff;		/* IP checksum */
		q[8 + 26] = q[8 + 27] = 0xff;		/* UDP checksum */
		q[8 + 32] = 0xff;			/* BTH FECN/BECN/resv */
		z = (uint32_t)crc32(0, q, 8 + n);
		CU_ASSERT_EQUAL(roce_icrc(p, n), z);
	}
}

static void
test_psn(void)
{
	CU_ASSERT_EQUAL(roce_psn_add(0xffffff, 1), 0);
	CU_ASSERT_EQUAL(roce_psn_add(0xfffffe, 5), 3);
	CU_ASSERT_EQUAL(roce_psn_diff(3, 0xfffffe), 5);
	CU_ASSERT_EQUAL(roce_psn_diff(0xfffffe, 3), -5);
	CU_ASSERT_EQUAL(roce_psn_diff(10, 10), 0);
	CU_ASSERT_EQUAL(roce_psn_diff(0x7fffff, 0), 0x7fffff);
	CU_ASSERT_EQUAL(roce_psn_diff(0x800000, 0), -0x800000);
}

static void
test_opcodes(void)
{
	const struct roce_bth *b = (const void *)(pkt_write_only + L2 + 28);
	unsigned int op, n = 0;

	CU_ASSERT_EQUAL(b->opcode, ROCE_OP_WRITE_ONLY);
	CU_ASSERT_EQUAL(roce_bth_qpn(b), 0x11);
	CU_ASSERT_EQUAL(roce_bth_psn(b), 0xabcdef);
	CU_ASSERT_EQUAL(roce_bth_pad(b), 3);
	CU_ASSERT(rte_be_to_cpu_32(b->apsn) & ROCE_BTH_ACKREQ);
	CU_ASSERT_EQUAL(roce_ext_len(ROCE_OP_WRITE_ONLY), 16);
	CU_ASSERT_EQUAL(roce_ext_len(ROCE_OP_WRITE_ONLY_IMM), 20);
	CU_ASSERT_EQUAL(roce_ext_len(ROCE_OP_READ_RESP_MIDDLE), 0);
	CU_ASSERT_EQUAL(roce_ext_len(ROCE_OP_READ_RESP_FIRST), 4);
	CU_ASSERT_EQUAL(roce_ext_len(ROCE_OP_UD_SEND_ONLY), 8);
	for (op = 0; op < 256; op++)
		n += roce_op_valid((uint8_t)op);
	CU_ASSERT_EQUAL(n, 24);
	CU_ASSERT_TRUE(roce_op_valid(ROCE_OP_CNP));
	CU_ASSERT_EQUAL(roce_ext_len(ROCE_OP_CNP), 0);
	CU_ASSERT_TRUE(roce_op_valid(0x13));	/* CmpSwap */
	CU_ASSERT_EQUAL(roce_ext_len(ROCE_OP_CMP_SWAP), 28);
	CU_ASSERT_EQUAL(roce_ext_len(ROCE_OP_ATOMIC_ACK), 12);
	CU_ASSERT_FALSE(roce_op_valid(0x15));
	CU_ASSERT_FALSE(roce_op_valid(0xff));
}

/* rdma_cm's IP CM header (the kernel's struct cma_hdr) for 198.18.0.2
 * port 0x8001 -> 198.18.0.1, written out byte by byte from that struct. */
static void
test_cm_ip_hdr(void)
{
	static const uint8_t want[CM_IP_HDR_LEN] = {
		0x00, 0x40, 0x80, 0x01,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 198, 18, 0, 2,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 198, 18, 0, 1,
	};
	uint8_t got[CM_IP_HDR_LEN + 4];
	uint32_t a = RTE_BE32(0xc6120002), b = RTE_BE32(0xc6120001), s, d;
	uint16_t port;

	memset(got, 0xee, sizeof(got));
	cm_ip_hdr_put(got, a, b, 0x8001);
	CU_ASSERT_EQUAL(memcmp(got, want, sizeof(want)), 0);
	CU_ASSERT_EQUAL(got[CM_IP_HDR_LEN], 0xee);	/* nothing beyond */
	CU_ASSERT_EQUAL(cm_ip_hdr_get(want, &s, &d, &port), 0);
	CU_ASSERT_EQUAL(s, a);
	CU_ASSERT_EQUAL(d, b);
	CU_ASSERT_EQUAL(port, 0x8001);
	memcpy(got, want, sizeof(want));
	got[1] = 0x60;		/* IPv6: dpdat takes none */
	CU_ASSERT_EQUAL(cm_ip_hdr_get(got, &s, &d, &port), -1);
	got[1] = 0x40;
	got[0] = 1;		/* an unknown version */
	CU_ASSERT_EQUAL(cm_ip_hdr_get(got, &s, &d, &port), -1);
	/* the TCP and IB port spaces carry it; dpdat's own IDs do not */
	CU_ASSERT_TRUE(cm_ip_service(0x0000000001064791ull));
	CU_ASSERT_TRUE(cm_ip_service(0x00000000013f0001ull));
	CU_ASSERT_FALSE(cm_ip_service(0x52534d0000000001ull));
	CU_ASSERT_FALSE(cm_ip_service(0x0000000001110001ull));	/* UDP */
}

static CU_TestInfo rc_wire_tests[] = {
	{ "ICRC of scapy-built packets", test_icrc_vectors },
	{ "ICRC masks exactly the variant fields", test_icrc_masking },
	{ "ICRC over chained mbufs", test_icrc_mbuf_chain },
	{ "ICRC against zlib crc32", test_icrc_vs_zlib },
	{ "PSN arithmetic modulo 2^24", test_psn },
	{ "opcode table", test_opcodes },
	{ "rdma_cm IP CM header layout", test_cm_ip_hdr },
	CU_TEST_INFO_NULL,
};

extern CU_TestInfo rc_engine_tests[];
extern CU_TestInfo rc_loss_tests[];
extern CU_TestInfo rc_post_tests[];
extern CU_TestInfo rc_atomic_tests[];
extern CU_TestInfo rc_dcqcn_tests[];
int atomic_suite_init(void);
int atomic_suite_clean(void);
int engine_suite_init(void);
int loss_suite_init(void);
int post_suite_init(void);

static CU_SuiteInfo suites[] = {
	{ "rc_wire", NULL, NULL, NULL, NULL, rc_wire_tests },
	{ "rc_engine", engine_suite_init, NULL, NULL, NULL, rc_engine_tests },
	/* the same rig, opened by rc_engine */
	{ "rc_loss", loss_suite_init, NULL, NULL, NULL, rc_loss_tests },
	{ "rc_post", post_suite_init, NULL, NULL, NULL, rc_post_tests },
	/* the same rig */
	{ "rc_atomic", atomic_suite_init, atomic_suite_clean, NULL, NULL,
	  rc_atomic_tests },
	/* the same rig, its last user */
	{ "rc_dcqcn", NULL, NULL, NULL, NULL, rc_dcqcn_tests },
	CU_SUITE_INFO_NULL,
};

static int
pool_create(void)
{
	pool = rte_pktmbuf_pool_create("test_rc", 64, 0, 0, 256, -1);
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
