/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_DEMO_H
#define DPDAT_DEMO_H

#include <dpdat/dpdat.h>

/* Print the live contexts of a domain as a table. */
void demo_print_table(struct dpdat_mr_domain *dom);

/* Short text of a DPDAT_MEM_PRIV_* mask, e.g. "lr|rr|lw". */
const char *demo_priv_str(uint32_t priv, char *buf, size_t len);

/* The two-process RDMA demo (rdma.c). */
int demo_rdma(void);

#endif
