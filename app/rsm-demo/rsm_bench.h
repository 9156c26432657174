/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef RSM_BENCH_H
#define RSM_BENCH_H

#include <stddef.h>

#include <rsm/rsmapi.h>

/**
 * Time getv and putv through a local memory handle and through a plain
 * address on seg (at offset 0, seg_len bytes long) and print MiB/s for
 * each, 4 KiB, 64 KiB and 1 MiB transfers (those within seg_len).
 *
 * @param iters
 *   Transfers per figure for 4 KiB and 64 KiB; fewer above, as many bytes
 *   as 64 KiB transfers move (at least 4).
 * @return 0 or the first RSMERR code met.
 */
int
rsm_bench(rsmapi_controller_handle_t ctl, rsm_memseg_import_handle_t seg,
	  size_t seg_len, unsigned int iters);

#endif /* RSM_BENCH_H */
