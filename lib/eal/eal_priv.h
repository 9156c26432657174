/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_EAL_PRIV_H
#define DPDAT_EAL_PRIV_H

/* The EAL command line dpdat builds, apart so that unit tests can read it
 * without bringing an EAL up. */

#include <dpdat/dpdat.h>

#define EAL_MAX_ARGS	64

/* The user's EAL arguments: dpdat_eal_conf's extra ones, the words of its
 * extra_words and of DPDAT_EAL. args point into buf or into the conf. */
struct eal_user {
	char buf[2048];
	size_t used;	/* of buf */
	char *args[EAL_MAX_ARGS / 2];
	unsigned int n;
};

/* Append the words of s (NULL: none), split at any of seps, to u.
 * -EINVAL when they do not fit; u is then as before. */
int eal_user_add(struct eal_user *u, const char *s, const char *seps);

/* Split a DPDAT_EAL value (NULL: none) at blanks into an empty u. */
int eal_user_split(const char *env, struct eal_user *u);

/* argv (strdup()ed strings, the caller frees them) for rte_eal_init():
 * program name, cores, --file-prefix, memory mode, devices, --no-pci when
 * nobody names a PCI device, log level, then the user's arguments; dpdat's
 * default for an option the user gives is left out. */
int eal_args_build(const struct dpdat_eal_conf *c, const struct eal_user *u,
		   enum dpdat_mem_mode mode, unsigned int mb, char **argv,
		   int *argc);

#endif /* DPDAT_EAL_PRIV_H */
