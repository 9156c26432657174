/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Copies between scatter/gather lists and packets. Every piece of an SGE is
 * checked against its key at the moment it is touched, so memory freed while
 * a work request is in flight fails the request instead of being used. */

#include <string.h>

#include "rc_priv.h"

/* Find the SGE holding byte off of the list; *skip is the offset inside. */
static int
sge_seek(const struct dpdat_sge *sge, uint32_t n, uint32_t off,
	 uint32_t *skip)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (off < sge[i].length) {
			*skip = off;
			return (int)i;
		}
		off -= sge[i].length;
	}
	*skip = 0;
	return (int)n;
}

enum dpdat_wc_status
rc_sge_to_buf(struct dpdat_qp *qp, const struct dpdat_sge *sge, uint32_t n,
	      uint32_t off, uint8_t *dst, uint32_t len)
{
	struct dpdat_mr_xlat x;
	uint32_t skip, c;
	int i = sge_seek(sge, n, off, &skip);

	for (; len != 0; i++, skip = 0) {
		if ((uint32_t)i >= n)
			return DPDAT_WC_LOC_LEN_ERR;
		c = RTE_MIN(len, sge[i].length - skip);
		enum dpdat_mr_check r = dpdat_mr_access_check(qp->dev->dom,
				sge[i].lkey, sge[i].addr + skip, c,
				DPDAT_MEM_PRIV_LOCAL_READ, qp->pz_id, &x);

		if (r != DPDAT_MR_CHECK_OK) {
			RC_LOG(INFO, "qp %u: local SGE 0x%08x %#lx+%u: %s",
			       qp->qpn, sge[i].lkey,
			       (unsigned long)(sge[i].addr + skip), c,
			       dpdat_mr_check_str(r));
			return DPDAT_WC_LOC_PROT_ERR;
		}
		memcpy(dst, x.addr, c);
		dst += c;
		len -= c;
	}
	return DPDAT_WC_SUCCESS;
}

void
rc_mbuf_copy(const struct rte_mbuf *m, uint32_t moff, uint8_t *dst,
	     uint32_t len)
{
	uint32_t c;

	while (m != NULL && moff >= m->data_len) {
		moff -= m->data_len;
		m = m->next;
	}
	for (; m != NULL && len != 0; m = m->next, moff = 0) {
		c = RTE_MIN(len, (uint32_t)m->data_len - moff);
		memcpy(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, moff),
		       c);
		dst += c;
		len -= c;
	}
}

enum dpdat_wc_status
rc_buf_to_sge(struct dpdat_qp *qp, const struct dpdat_sge *sge, uint32_t n,
	      uint32_t off, const uint8_t *src, uint32_t len)
{
	struct dpdat_mr_xlat x;
	uint32_t skip, c;
	int i = sge_seek(sge, n, off, &skip);

	for (; len != 0; i++, skip = 0) {
		if ((uint32_t)i >= n)
			return DPDAT_WC_LOC_LEN_ERR;
		c = RTE_MIN(len, sge[i].length - skip);
		if (dpdat_mr_access_check(qp->dev->dom, sge[i].lkey,
				sge[i].addr + skip, c,
				DPDAT_MEM_PRIV_LOCAL_WRITE, qp->pz_id,
				&x) != DPDAT_MR_CHECK_OK)
			return DPDAT_WC_LOC_PROT_ERR;
		memcpy(x.addr, src, c);
		src += c;
		len -= c;
	}
	return DPDAT_WC_SUCCESS;
}

enum dpdat_wc_status
rc_mbuf_to_sge(struct dpdat_qp *qp, const struct dpdat_sge *sge, uint32_t n,
	       uint32_t off, const struct rte_mbuf *m, uint32_t moff,
	       uint32_t len)
{
	struct dpdat_mr_xlat x;
	uint32_t skip, c;
	int i = sge_seek(sge, n, off, &skip);

	for (; len != 0; i++, skip = 0) {
		if ((uint32_t)i >= n)
			return DPDAT_WC_LOC_LEN_ERR;
		c = RTE_MIN(len, sge[i].length - skip);
		if (dpdat_mr_access_check(qp->dev->dom, sge[i].lkey,
				sge[i].addr + skip, c,
				DPDAT_MEM_PRIV_LOCAL_WRITE, qp->pz_id,
				&x) != DPDAT_MR_CHECK_OK)
			return DPDAT_WC_LOC_PROT_ERR;
		rc_mbuf_copy(m, moff, x.addr, c);
		moff += c;
		len -= c;
	}
	return DPDAT_WC_SUCCESS;
}
