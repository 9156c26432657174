/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eal_args.h"

static const char **eal_args;
static unsigned int n_eal_args;

void
app_eal_split(int *argc, char ***argv)
{
	int i;

	for (i = 1; i < *argc; i++)
		if (strcmp((*argv)[i], "--") == 0)
			break;
	if (i == *argc)
		return;		/* no "--": all the tool's */
	eal_args = (const char **)(*argv + 1);
	n_eal_args = (unsigned int)(i - 1);
	/* the tool's part keeps argv[0] in front of it */
	(*argv)[i] = (*argv)[0];
	*argv += i;
	*argc -= i;
}

void
app_eal_conf(struct dpdat_eal_conf *ec)
{
	ec->extra_args = eal_args;
	ec->n_extra_args = n_eal_args;
}

unsigned int
app_cpu_arg(const char *tool, const char *arg)
{
	cpu_set_t set;
	unsigned long cpu;
	char *end;

	errno = 0;
	cpu = strtoul(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(set), &set) != 0 ||
	    !CPU_ISSET(cpu, &set)) {
		fprintf(stderr, "%s: --cpu %s: not a CPU this process may run "
			"on (taskset -p %d shows them)\n", tool, arg,
			(int)getpid());
		exit(2);
	}
	return (unsigned int)cpu;
}

int
app_pin_self(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
