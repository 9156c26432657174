/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* ia_params: the words of an IA's dat.conf line (see ia.c). Received from
 * a file any user may edit, or the environment: every byte is checked and
 * nothing is cut short silently. */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_params.h"

int
dd_ia_params_parse(const char *params, struct dd_ia_conf *c)
{
	char buf[1024], *save = NULL, *w, *end;

	memset(c, 0, sizeof(*c));
	c->cpu = -1;
	if (params == NULL || strlen(params) >= sizeof(buf))
		return -1;
	memcpy(buf, params, strlen(params) + 1);
	for (w = strtok_r(buf, " \t\"", &save); w != NULL;
	     w = strtok_r(NULL, " \t\"", &save)) {
		if (strncmp(w, "device=", 7) == 0) {
			if (strlen(w + 7) >= sizeof(c->device))
				return -1;	/* never cut short */
			memcpy(c->device, w + 7, strlen(w + 7) + 1);
		} else if (strncmp(w, "ipv4=", 5) == 0) {
			if (strlen(w + 5) >= sizeof(c->ipv4))
				return -1;
			memcpy(c->ipv4, w + 5, strlen(w + 5) + 1);
		} else if (strncmp(w, "mtu=", 4) == 0) {
			unsigned long mtu;

			errno = 0;
			mtu = strtoul(w + 4, &end, 0);
			if (errno != 0 || *end != '\0' || end == w + 4 ||
			    w[4] == '-' || w[4] == '+' || mtu > 9600)
				return -1;	/* never cut short */
			c->mtu = (unsigned int)mtu;
		} else if (strncmp(w, "eal=", 4) == 0) {
			if (strlen(w + 4) >= sizeof(c->eal))
				return -1;	/* never cut short */
			snprintf(c->eal, sizeof(c->eal), "%s", w + 4);
		} else if (strncmp(w, "cpu=", 4) == 0) {
			long cpu;

			errno = 0;
			cpu = strtol(w + 4, &end, 10);
			if (errno != 0 || *end != '\0' || end == w + 4 ||
			    cpu < 0 || cpu >= CPU_SETSIZE)
				return -1;
			c->cpu = (int)cpu;
		} else {
			return -1;
		}
	}
	/* beside the kernel the interface's address; elsewhere the port
	 * says that it needs one */
	if (c->ipv4[0] == '\0')
		snprintf(c->ipv4, sizeof(c->ipv4), "auto");
	return c->device[0] != '\0' ? 0 : -1;
}
