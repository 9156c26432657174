/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* RSMAPI example, export side: publish 1 MiB under a segment id (argument,
 * default 0x600000) for any node, wait for the importer's signal, print
 * what it wrote. Node and device from the environment (doc/guides/rsm.md):
 *   DPDAT_RSM_NODE=1 rsm-exporter            # 198.18.0.1, memif server */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rsm/rsmapi.h>

#define LEN (1 << 20)

int
main(int argc, char **argv)
{
	rsm_memseg_id_t id = argc > 1 ? (rsm_memseg_id_t)strtoul(argv[1],
						NULL, 0) : 0x600000;
	rsmapi_controller_handle_t ctl;
	rsm_memseg_export_handle_t seg;
	char *mem;
	int r;

	mem = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	snprintf(mem, LEN, "hello from the exporter");
	r = rsm_get_controller("dpdat0", &ctl);
	if (r == 0)
		r = rsm_memseg_export_create(ctl, &seg, mem, LEN, 0);
	if (r == 0)
		r = rsm_memseg_export_publish(seg, &id, NULL, 0);
	if (r != 0) {
		fprintf(stderr, "exporter: error %d\n", r);
		return 1;
	}
	printf("exporter: segment %#x published, waiting for a signal\n", id);
	fflush(stdout);
	r = rsm_intr_signal_wait(seg, 60000);
	if (r != 0) {
		fprintf(stderr, "exporter: no signal (%d)\n", r);
		return 1;
	}
	printf("exporter: the importer wrote \"%s\"\n", mem + 4096);
	rsm_memseg_export_unpublish(seg);
	rsm_memseg_export_destroy(seg);
	rsm_release_controller(ctl);
	return 0;
}
