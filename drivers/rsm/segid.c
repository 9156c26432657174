/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Segment id ranges reserved for applications: the file rsm.segmentid
 * (DPDAT_RSM_SEGMENTID_FILE, default /etc/rsm/rsm.segmentid), one
 * "appid baseid length" a line, '#' to the end of a line a comment.
 *
 * The whole file is checked on every call, not only up to the line asked
 * for: a file with a bad line, a repeated application id or overlapping
 * ranges is RSMERR_BAD_CONF whichever id is asked for, so a mistake shows
 * at once rather than when some other application starts.
 *
 * rsm_segid_walk() is the one reader: rsm_get_segmentid_range() looks an
 * application up with it, rsm_memseg_export_publish() learns the reserved
 * ranges with it (export.c). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsm_priv.h"

#define RSM_SEGMENTID_FILE	"/etc/rsm/rsm.segmentid"
#define RSM_SEGMENTID_LINE	(1023 + 2)	/* 1023 characters, newline, NUL */

struct segid_range {
	char *appid;
	uint64_t base, end;	/* end included */
};

struct segid_file {
	const char *path;
	unsigned int line;
	struct segid_range *r;
	unsigned int n, cap;
};

static int
segid_bad(const struct segid_file *f, const char *why)
{
	RSM_LOG(ERR, "%s:%u: %s", f->path, f->line, why);
	return RSMERR_BAD_CONF;
}

/* A 32-bit unsigned number in C notation (0x hex, 0 octal, decimal). */
static int
segid_number(const char *s, uint64_t *v)
{
	char *end;

	if (*s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || *v > UINT32_MAX)
		return -1;
	return 0;
}

/* One line: nothing, or a range added to f; 0 or RSMERR_BAD_CONF. */
static int
segid_line(struct segid_file *f, char *line)
{
	char *field[4], *save = NULL, *hash = strchr(line, '#');
	struct segid_range *r;
	uint64_t base, len;
	int n = 0;

	if (hash != NULL)
		*hash = '\0';
	for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL && n < 4;
	     t = strtok_r(NULL, " \t\r\n", &save))
		field[n++] = t;
	if (n == 0)
		return 0;
	if (n != 3)
		return segid_bad(f, "not \"appid baseid length\"");
	if (segid_number(field[1], &base) != 0 ||
	    segid_number(field[2], &len) != 0)
		return segid_bad(f, "baseid or length not a 32-bit number");
	if (len == 0)
		return segid_bad(f, "empty range");
	/* 64-bit sums: a range running past 0xFFFFFFFF cannot wrap */
	if (base < RSM_USER_APP_ID_BASE || base + len - 1 > RSM_USER_APP_ID_END)
		return segid_bad(f, "range outside RSM_USER_APP_ID_BASE.."
				 "RSM_USER_APP_ID_END");
	for (unsigned int i = 0; i < f->n; i++) {
		if (strcmp(f->r[i].appid, field[0]) == 0)
			return segid_bad(f, "application id repeated");
		if (base <= f->r[i].end && f->r[i].base <= base + len - 1)
			return segid_bad(f, "range overlaps another");
	}
	if (f->n == f->cap) {
		unsigned int cap = f->cap != 0 ? 2 * f->cap : 16;

		r = realloc(f->r, cap * sizeof(*r));
		if (r == NULL)
			return RSMERR_INSUFFICIENT_MEM;
		f->r = r;
		f->cap = cap;
	}
	r = &f->r[f->n];
	r->appid = strdup(field[0]);
	if (r->appid == NULL)
		return RSMERR_INSUFFICIENT_MEM;
	r->base = base;
	r->end = base + len - 1;
	f->n++;
	return 0;
}

static int
segid_read(struct segid_file *f, FILE *fp)
{
	char buf[RSM_SEGMENTID_LINE];
	int r;

	while (fgets(buf, sizeof(buf), fp) != NULL) {
		f->line++;
		if (strchr(buf, '\n') == NULL && !feof(fp))
			return segid_bad(f, "line too long");
		r = segid_line(f, buf);
		if (r != 0)
			return r;
	}
	if (ferror(fp)) {
		RSM_LOG(ERR, "%s: read error", f->path);
		return RSMERR_BAD_CONF;
	}
	return 0;
}

static const char *
segid_path(void)
{
	const char *path = dpdat_env_str("DPDAT_RSM_SEGMENTID_FILE");

	return path != NULL ? path : RSM_SEGMENTID_FILE;
}

static void
segid_free(struct segid_file *f)
{
	for (unsigned int i = 0; i < f->n; i++)
		free(f->r[i].appid);
	free(f->r);
}

int
rsm_segid_walk(rsm_segid_fn fn, void *arg)
{
	struct segid_file f = { .path = segid_path() };
	FILE *fp;
	int r;

	fp = fopen(f.path, "re");
	if (fp == NULL) {
		/* no file is the usual case for publish: not an error here */
		if (errno == ENOENT)
			return -ENOENT;
		RSM_LOG(ERR, "%s: %s", f.path, strerror(errno));
		return RSMERR_BAD_CONF;
	}
	r = segid_read(&f, fp);
	fclose(fp);
	/* only a file checked to the end is walked */
	for (unsigned int i = 0; r == 0 && i < f.n; i++)
		r = fn(f.r[i].appid, f.r[i].base, f.r[i].end, arg);
	segid_free(&f);
	return r;
}

struct segid_find {
	const char *appid;
	rsm_memseg_id_t *baseid;
	uint32_t *length;
};

static int
segid_find_appid(const char *appid, uint64_t base, uint64_t end, void *arg)
{
	struct segid_find *q = arg;

	if (strcmp(appid, q->appid) != 0)
		return 0;
	*q->baseid = (rsm_memseg_id_t)base;
	*q->length = (uint32_t)(end - base + 1);
	return 1;
}

int
rsm_get_segmentid_range(const char *appid, rsm_memseg_id_t *baseid,
			uint32_t *length)
{
	struct segid_find q = { appid, baseid, length };
	int r;

	if (appid == NULL || baseid == NULL || length == NULL)
		return RSMERR_BAD_ADDR;
	r = rsm_segid_walk(segid_find_appid, &q);
	if (r == -ENOENT) {
		RSM_LOG(ERR, "%s: %s", segid_path(), strerror(ENOENT));
		return RSMERR_BAD_CONF;
	}
	if (r == 1)
		return 0;
	return r != 0 ? r : RSMERR_BAD_APPID;
}
