/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_APP_EAL_ARGS_H
#define DPDAT_APP_EAL_ARGS_H

/* dpdk-testpmd's habit in every dpdat tool: DPDK EAL arguments first, then
 * "--", then the tool's own ("dpdat-perf -l 1 -a 0000:3b:00.0 -- write_bw
 * --dev 0000:3b:00.0"). Without "--" every argument is the tool's. The EAL
 * part goes to dpdat_eal_init() as extra arguments, where it replaces
 * dpdat's defaults for the same options (lib/eal). And --cpu N, the
 * tools' way to pin the thread that runs dpdat's engine. */

#include <stdbool.h>

#include <dpdat/dpdat.h>

/* Split argv at "--": *argc and *argv become the tool's part (argv[0]
 * kept); the EAL part is remembered for app_eal_conf(). */
void app_eal_split(int *argc, char ***argv);

/* Put the remembered EAL arguments in ec. */
void app_eal_conf(struct dpdat_eal_conf *ec);

/* --cpu's value: a CPU this process may run on, or exit(2) saying why. */
unsigned int app_cpu_arg(const char *tool, const char *arg);

/* Pin the calling thread (an inline poller) to cpu: 0 or -errno. */
int app_pin_self(unsigned int cpu);

#endif
