/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_ENV_H
#define DPDAT_ENV_H

/**
 * @file
 * dpdat's settings: every DPDAT_* environment variable that the library,
 * the DAT plug-in, the RSMAPI library or the tests read, in one registry
 * with its type, default and help (as libfabric's fi_param_define). Code
 * reads a setting through the accessors below, never with getenv(); a
 * malformed value is an error the caller sees, and a DPDAT_* variable that
 * is not a setting (a typo) is reported once. The table is listed by each
 * tool's --help-env and in doc/guides/settings.md.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a setting's value is. */
enum dpdat_env_type {
	DPDAT_ENV_STR = 0,	/**< text, interpreted by its reader */
	DPDAT_ENV_BOOL,		/**< 1/0, true/false, yes/no, on/off */
	DPDAT_ENV_UINT,		/**< unsigned integer, decimal or 0x hex */
};

/** One registered setting. */
struct dpdat_env_info {
	const char *name;		/**< the variable, DPDAT_... */
	enum dpdat_env_type type;	/**< how its value is parsed */
	const char *def;		/**< value when unset; NULL: none */
	const char *reader;		/**< "library", "dat", "rsm", "verbs" or "tests" */
	const char *help;		/**< one line */
};

/**
 * The i-th registered setting, to walk the registry.
 *
 * @param i
 *   0 .. count - 1.
 * @return
 *   The setting, or NULL when i is past the last one.
 */
const struct dpdat_env_info *
dpdat_env_info(unsigned int i);

/**
 * A setting's text. An empty variable counts as unset.
 *
 * @param name
 *   A registered name (any type).
 * @return
 *   The variable's value when set, else the registered default (NULL when
 *   the setting has none). NULL with rte_errno set to ENOENT when name is
 *   not registered (logged).
 */
const char *
dpdat_env_str(const char *name);

/**
 * A boolean setting: 1, true, yes, on or 0, false, no, off (any case).
 *
 * @param name
 *   A registered DPDAT_ENV_BOOL setting.
 * @param out
 *   Receives the value; when unset, the default (untouched if none).
 * @return
 *   0 when the variable is set, 1 when it is not, -EINVAL when its value
 *   is not a boolean or the setting is not DPDAT_ENV_BOOL, -ENOENT when
 *   name is not registered. Errors are logged.
 */
int
dpdat_env_bool(const char *name, bool *out);

/**
 * An unsigned integer setting, decimal or 0x hexadecimal, in min..max.
 *
 * @param name
 *   A registered DPDAT_ENV_UINT setting.
 * @param min
 *   Smallest value accepted.
 * @param max
 *   Largest value accepted.
 * @param out
 *   Receives the value; when unset, the default (untouched if none).
 * @return
 *   0 when the variable is set, 1 when it is not, -EINVAL when its value
 *   is not a number in min..max or the setting is not DPDAT_ENV_UINT,
 *   -ENOENT when name is not registered. Errors are logged.
 */
int
dpdat_env_uint(const char *name, uint64_t min, uint64_t max, uint64_t *out);

/**
 * Print every setting (name, type, default, reader, help and the current
 * value when set), then the DPDAT_* variables set that are no setting.
 *
 * @param f
 *   Where to print.
 * @return
 *   0, or -EINVAL when f is NULL.
 */
int
dpdat_env_help(FILE *f);

#ifdef __cplusplus
}
#endif

#endif
