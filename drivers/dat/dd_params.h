/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_DD_PARAMS_H
#define DPDAT_DD_PARAMS_H

/* An IA's ia_params (dat.conf, or DPDAT_DAT_PARAMS): what the plug-in
 * needs of them, and their parser (params.c; also fuzzed on its own). */

struct dd_ia_conf {
	char device[256];		/* DPDK device arguments */
	char ipv4[16];			/* "auto": the interface's */
	unsigned int mtu;		/* 0: the port's default */
	char eal[512];			/* EAL arguments, ';' between them */
	int cpu;			/* engine thread's CPU, or -1 */
	char role[8];			/* memif role, "server" or "client" */
};

/* Parse space-separated key=value words (device= required; ipv4=, mtu=,
 * cpu=, eal=): 0, or -1 for an unknown key, a bad value, a value that
 * does not fit, or no device. */
int dd_ia_params_parse(const char *params, struct dd_ia_conf *c);

#endif /* DPDAT_DD_PARAMS_H */
