/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* RSMAPI example, import side: import segment (argument, default 0x600000)
 * of node 1, read its greeting, write one back at offset 4096, signal.
 *   DPDAT_RSM_NODE=2 rsm-importer            # 198.18.0.2, memif client
 * With "bench [N]" after the segment id, it first times N getv/putv
 * through a local memory handle and through plain addresses over the
 * exporter's 1 MiB (rsm_bench.c):
 *   DPDAT_RSM_NODE=2 rsm-importer 0x600000 bench 256 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rsm/rsmapi.h>

#include "rsm_bench.h"

#define SEG_LEN (1 << 20)	/* what rsm-exporter publishes */

int
main(int argc, char **argv)
{
	rsm_memseg_id_t id = argc > 1 ? (rsm_memseg_id_t)strtoul(argv[1],
						NULL, 0) : 0x600000;
	char msg[64], reply[] = "hello from the importer";
	rsmapi_controller_handle_t ctl;
	rsm_memseg_import_handle_t seg;
	int r, i;

	r = rsm_get_controller("dpdat0", &ctl);
	if (r != 0) {
		fprintf(stderr, "importer: controller: %d\n", r);
		return 1;
	}
	/* the exporter may not have published yet */
	for (i = 0; i < 100; i++) {
		r = rsm_memseg_import_connect(ctl, 1, id, RSM_PERM_RDWR, &seg);
		if (r != RSMERR_SEG_NOT_PUBLISHED &&
		    r != RSMERR_REMOTE_NODE_UNREACHABLE)
			break;
		usleep(200000);
	}
	if (r == 0)
		r = rsm_memseg_import_get(seg, 0, msg, sizeof(msg));
	if (r == 0) {
		msg[sizeof(msg) - 1] = '\0';
		printf("importer: the segment says \"%s\"\n", msg);
		if (argc > 2 && strcmp(argv[2], "bench") == 0)
			r = rsm_bench(ctl, seg, SEG_LEN, argc > 3 ?
				      (unsigned int)strtoul(argv[3], NULL, 0) :
				      256);
	}
	if (r == 0) {
		r = rsm_memseg_import_put(seg, 4096, reply, sizeof(reply));
	}
	if (r == 0)
		r = rsm_intr_signal_post(seg, 0);
	if (r != 0) {
		fprintf(stderr, "importer: error %d\n", r);
		return 1;
	}
	rsm_memseg_import_disconnect(seg);
	rsm_release_controller(ctl);
	return 0;
}
