/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <inttypes.h>
#include <stdio.h>

#include "demo.h"

const char *
demo_priv_str(uint32_t priv, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s",
		 priv & DPDAT_MEM_PRIV_LOCAL_READ ? "lr " : "",
		 priv & DPDAT_MEM_PRIV_LOCAL_WRITE ? "lw " : "",
		 priv & DPDAT_MEM_PRIV_REMOTE_READ ? "rr " : "",
		 priv & DPDAT_MEM_PRIV_REMOTE_WRITE ? "rw " : "");
	if (priv == 0)
		snprintf(buf, len, "none");
	return buf;
}

static int
print_row(uint32_t ctx, struct dpdat_lmr *lmr, struct dpdat_rmr *rmr,
	  void *arg)
{
	static const char *const types[] = { "VIRTUAL", "LMR", "SHARED",
					     "SO_VIRT" };
	struct dpdat_lmr_info li;
	struct dpdat_rmr_info ri;
	struct dpdat_pz_info pi;
	char pbuf[32];

	(void)arg;
	if (lmr != NULL) {
		dpdat_lmr_query(lmr, &li);
		dpdat_pz_query(li.pz, &pi);
		printf("  0x%08x  LMR %-8s pz %-3u %-6s 0x%012" PRIx64
		       " %10" PRIu64 "  %-12s share %u rmrs %u\n", ctx,
		       types[li.type], pi.id, dpdat_mem_kind_str(li.kind),
		       li.address, li.length,
		       demo_priv_str(li.privileges, pbuf, sizeof(pbuf)),
		       li.share_count, li.rmr_count);
	} else {
		dpdat_rmr_query(rmr, &ri);
		dpdat_pz_query(ri.pz, &pi);
		printf("  0x%08x  RMR %-8s pz %-3u %-6s 0x%012" PRIx64
		       " %10" PRIu64 "  %-12s\n", ctx, "window", pi.id, "",
		       ri.address, ri.length,
		       demo_priv_str(ri.privileges, pbuf, sizeof(pbuf)));
	}
	return 0;
}

void
demo_print_table(struct dpdat_mr_domain *dom)
{
	printf("  %-10s  %-12s %-6s %-6s %-14s %10s  %-12s\n", "context",
	       "object", "pz", "kind", "address", "length", "privileges");
	dpdat_mr_domain_walk(dom, print_row, NULL);
	printf("  (%u live contexts)\n", dpdat_mr_domain_count(dom));
}
