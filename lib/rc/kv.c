/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Settings of the form "key=value,key=value" over a table of keys (the
 * congestion controls' DPDAT_DCQCN and DPDAT_SWIFT). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rc_priv.h"

/* One item: 0, or -EINVAL. */
static int
kv_set(const char *kv, size_t len, const struct rc_kv_key *keys, size_t n,
       void *base, const char *word, bool *word_seen)
{
	char buf[64], *eq, *end;
	unsigned long v;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, kv, len);
	buf[len] = '\0';
	if (word != NULL && strcmp(buf, word) == 0) {
		*word_seen = true;
		return 0;
	}
	eq = strchr(buf, '=');
	if (eq == NULL)
		return -EINVAL;
	*eq = '\0';
	errno = 0;
	v = strtoul(eq + 1, &end, 0);
	if (errno != 0 || end == eq + 1 || *end != '\0')
		return -EINVAL;
	for (size_t k = 0; k < n; k++) {
		if (strcmp(buf, keys[k].key) != 0)
			continue;
		if (v < keys[k].min || v > keys[k].max)
			return -EINVAL;
		*(uint32_t *)((char *)base + keys[k].off) = (uint32_t)v;
		return 0;
	}
	return -EINVAL;
}

int
rc_kv_parse(const char *var, const char *s, const struct rc_kv_key *keys,
	    size_t n, void *base, const char *word, bool *word_seen)
{
	const char *p = s, *comma;
	size_t len;

	if (s == NULL)
		return 0;
	for (;;) {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (kv_set(p, len, keys, n, base, word, word_seen) != 0) {
			RC_LOG(ERR, "%s=%s: '%.*s' is not %s%skey=value with "
			       "a key of its own and the value in range (see "
			       "the settings guide)", var, s, (int)len, p,
			       word != NULL ? word : "",
			       word != NULL ? " or " : "");
			return -EINVAL;
		}
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
}
