/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dat_main.h"
#include "unit_run.h"

static char sock_path[64];

void
dat_test_main(int argc, char **argv, const char *tag, CU_SuiteInfo *suites)
{
	const char *override = getenv("DAT_OVERRIDE");
	char params[256];
	int failed;

	if (argc < 2) {
		fprintf(stderr, "usage: %s <dat.conf>\n", argv[0]);
		exit(2);
	}
	if (override == NULL || strcmp(override, argv[1]) != 0) {
		setenv("DAT_OVERRIDE", argv[1], 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		exit(2);
	}
	snprintf(sock_path, sizeof(sock_path), "/tmp/dpdat-%s-%d.sock", tag,
		 (int)getpid());
	snprintf(params, sizeof(params),
		 "device=net_memif0,role=server,socket=%s ipv4=198.18.0.1",
		 sock_path);
	setenv("DPDAT_DAT_PARAMS", params, 1);
	failed = unit_run(suites);
	unlink(sock_path);
	/* exit handlers run (LeakSanitizer's among them); the plug-in
	 * itself leaves its devices open to the end of the process */
	exit(failed != 0);
}

DAT_RETURN
dat_test_open_client(DAT_IA_HANDLE *ia)
{
	DAT_EVD_HANDLE async = DAT_EVD_ASYNC_EXISTS;	/* none needed */
	const char *env = getenv("DPDAT_DAT_PARAMS");
	char *server = strdup(env != NULL ? env : ""), params[256];
	DAT_RETURN r;

	if (server == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	snprintf(params, sizeof(params),
		 "device=net_memif1,role=client,socket=%s ipv4=198.18.0.2",
		 sock_path);
	setenv("DPDAT_DAT_PARAMS", params, 1);
	r = dat_ia_open("dpdat1", 8, &async, ia);
	setenv("DPDAT_DAT_PARAMS", server, 1);
	free(server);
	return r;
}
