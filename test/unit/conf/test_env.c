/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The settings registry (lib/conf) as code and users meet it: defaults
 * when a variable is unset or empty, good and bad values of each type,
 * unknown names and wrong types, the help text, the one-time warning
 * about a mistyped DPDAT_* variable. And the registry against the tree:
 * every name the code reads is registered with the type it is read as,
 * no getenv("DPDAT_...") is left, every DPDAT_* variable a script or a
 * page sets is registered, and doc/guides/settings.md has one row per
 * setting with its type, default and reader. No EAL is brought up.
 *
 * Usage: test_env <source root>
 */

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <rte_errno.h>
#include <rte_log.h>

#include <dpdat/dpdat_env.h>

#include "unit_run.h"

static const char *src_root;
static char *log_buf;		/* what dpdat logged so far */
static size_t log_len;
static FILE *log_f;

static const char *const type_names[] = { "string", "bool", "uint" };

/* What was logged since the program started. */
static const char *
logged(void)
{
	fflush(log_f);
	return log_buf != NULL ? log_buf : "";
}

static void
unset_all(void)
{
	const struct dpdat_env_info *s;

	for (unsigned int i = 0; (s = dpdat_env_info(i)) != NULL; i++)
		unsetenv(s->name);
}

static unsigned int
count_of(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* main() set DPDAT_ZERCOPY before anything read a setting. */
static void
test_typo_warned_once(void)
{
	const char *l;

	dpdat_env_str("DPDAT_EAL");
	dpdat_env_str("DPDAT_LOG");
	l = logged();
	CU_ASSERT_EQUAL(count_of(l, "DPDAT_ZERCOPY is set but is no dpdat "
				 "setting"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(l, "(DPDAT_ZEROCOPY?)"));
	unsetenv("DPDAT_ZERCOPY");
}

static void
test_registry_well_formed(void)
{
	const struct dpdat_env_info *s, *t;
	unsigned int i, j;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dpdat_env_info(0));
	for (i = 0; (s = dpdat_env_info(i)) != NULL; i++) {
		CU_ASSERT(strncmp(s->name, "DPDAT_", 6) == 0);
		for (const char *c = s->name; *c; c++)
			CU_ASSERT(isupper((unsigned char)*c) ||
				  isdigit((unsigned char)*c) || *c == '_');
		CU_ASSERT(s->type <= DPDAT_ENV_UINT);
		CU_ASSERT(s->help != NULL && strlen(s->help) > 10);
		CU_ASSERT(strcmp(s->reader, "library") == 0 ||
			  strcmp(s->reader, "dat") == 0 ||
			  strcmp(s->reader, "rsm") == 0 ||
			  strcmp(s->reader, "verbs") == 0 ||
			  strcmp(s->reader, "tests") == 0);
		for (j = 0; j < i; j++) {
			t = dpdat_env_info(j);
			CU_ASSERT_STRING_NOT_EQUAL(s->name, t->name);
		}
	}
	CU_ASSERT(i >= 20);
	CU_ASSERT_PTR_NULL(dpdat_env_info(i + 1000));
}

/* Unset: the registered default, parsed by its type, and 1. */
static void
test_defaults(void)
{
	const struct dpdat_env_info *s;
	uint64_t u = 77;
	bool b = true;

	unset_all();
	for (unsigned int i = 0; (s = dpdat_env_info(i)) != NULL; i++) {
		const char *v = dpdat_env_str(s->name);

		CU_ASSERT(s->def == NULL ? v == NULL :
			  v != NULL && strcmp(v, s->def) == 0);
		if (s->type == DPDAT_ENV_UINT)
			CU_ASSERT_EQUAL(dpdat_env_uint(s->name, 0, UINT64_MAX,
						       &u), 1);
		if (s->type == DPDAT_ENV_BOOL)
			CU_ASSERT_EQUAL(dpdat_env_bool(s->name, &b), 1);
	}
	CU_ASSERT_STRING_EQUAL(dpdat_env_str("DPDAT_RSM_CONTROLLER"),
			       "dpdat0");
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_RSM_MAX_SEGMENTS", 1, 1000, &u),
			1);
	CU_ASSERT_EQUAL(u, 256);
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_RSM_TOTAL_EXPORT", 1,
				       UINT64_MAX, &u), 1);
	CU_ASSERT_EQUAL(u, 4ULL << 30);
	b = true;
	CU_ASSERT_EQUAL(dpdat_env_bool("DPDAT_DAT_DEBUG", &b), 1);
	CU_ASSERT_FALSE(b);
	/* no default: out untouched */
	u = 77;
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_MEM_MB", 1, 1 << 20, &u), 1);
	CU_ASSERT_EQUAL(u, 77);
	b = true;
	CU_ASSERT_EQUAL(dpdat_env_bool("DPDAT_ZEROCOPY", &b), 1);
	CU_ASSERT_TRUE(b);
}

/* An empty variable is unset: the default again. */
static void
test_empty_is_unset(void)
{
	uint64_t u = 0;

	setenv("DPDAT_RSM_CONTROLLER", "", 1);
	CU_ASSERT_STRING_EQUAL(dpdat_env_str("DPDAT_RSM_CONTROLLER"),
			       "dpdat0");
	setenv("DPDAT_RSM_NODE", "", 1);
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_RSM_NODE", 1, 9, &u), 1);
	CU_ASSERT_EQUAL(u, 1);
	setenv("DPDAT_PCAP", "", 1);
	CU_ASSERT_PTR_NULL(dpdat_env_str("DPDAT_PCAP"));
	unset_all();
}

/* Read on each call: a program may set a variable between two opens. */
static void
test_not_cached(void)
{
	setenv("DPDAT_DAT_PARAMS", "device=a", 1);
	CU_ASSERT_STRING_EQUAL(dpdat_env_str("DPDAT_DAT_PARAMS"), "device=a");
	setenv("DPDAT_DAT_PARAMS", "device=b", 1);
	CU_ASSERT_STRING_EQUAL(dpdat_env_str("DPDAT_DAT_PARAMS"), "device=b");
	unsetenv("DPDAT_DAT_PARAMS");
	CU_ASSERT_PTR_NULL(dpdat_env_str("DPDAT_DAT_PARAMS"));
}

static void
test_bool_values(void)
{
	static const struct { const char *v; int ret; bool out; } cases[] = {
		{ "1", 0, true }, { "0", 0, false },
		{ "true", 0, true }, { "FALSE", 0, false },
		{ "yes", 0, true }, { "No", 0, false },
		{ "on", 0, true }, { "off", 0, false },
		{ "2", -EINVAL, true }, { "y", -EINVAL, true },
		{ " 1", -EINVAL, true }, { "1 ", -EINVAL, true },
		{ "enable", -EINVAL, true },
	};

	for (unsigned int i = 0; i < RTE_DIM(cases); i++) {
		bool b = true;

		setenv("DPDAT_ZEROCOPY", cases[i].v, 1);
		CU_ASSERT_EQUAL(dpdat_env_bool("DPDAT_ZEROCOPY", &b),
				cases[i].ret);
		CU_ASSERT_EQUAL(b, cases[i].out);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(logged(), "DPDAT_ZEROCOPY=enable: "
				      "expected 1, 0"));
	CU_ASSERT_EQUAL(dpdat_env_bool("DPDAT_ZEROCOPY", NULL), -EINVAL);
	unsetenv("DPDAT_ZEROCOPY");
}

static void
test_uint_values(void)
{
	static const struct { const char *v; int ret; uint64_t out; } cases[] = {
		{ "1", 0, 1 }, { "256", 0, 256 }, { "1048576", 0, 1048576 },
		{ "0x100", 0, 256 }, { "0X1f", 0, 31 }, { "0256", 0, 256 },
		{ "0", -EINVAL, 7 }, { "1048577", -EINVAL, 7 },
		{ "-1", -EINVAL, 7 }, { "+1", -EINVAL, 7 },
		{ " 1", -EINVAL, 7 }, { "1 ", -EINVAL, 7 },
		{ "64k", -EINVAL, 7 }, { "0x", -EINVAL, 7 },
		{ "abc", -EINVAL, 7 }, { "1.5", -EINVAL, 7 },
		{ "99999999999999999999999", -EINVAL, 7 },
	};
	uint64_t u;

	for (unsigned int i = 0; i < RTE_DIM(cases); i++) {
		u = 7;
		setenv("DPDAT_MEM_MB", cases[i].v, 1);
		CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_MEM_MB", 1, 1 << 20, &u),
				cases[i].ret);
		CU_ASSERT_EQUAL(u, cases[i].out);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(logged(), "DPDAT_MEM_MB=64k: expected a "
				      "number in 1..1048576"));
	setenv("DPDAT_MEM_MB", "18446744073709551615", 1);
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_MEM_MB", 0, UINT64_MAX, &u), 0);
	CU_ASSERT_EQUAL(u, UINT64_MAX);
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_MEM_MB", 2, 1, &u), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_MEM_MB", 0, 1, NULL), -EINVAL);
	unsetenv("DPDAT_MEM_MB");
}

static void
test_unknown_and_wrong_type(void)
{
	uint64_t u = 5;
	bool b = false;

	rte_errno = 0;
	CU_ASSERT_PTR_NULL(dpdat_env_str("DPDAT_ZEROCOPYY"));
	CU_ASSERT_EQUAL(rte_errno, ENOENT);
	CU_ASSERT_PTR_NULL(dpdat_env_str(NULL));
	CU_ASSERT_EQUAL(dpdat_env_bool("DPDAT_NOPE", &b), -ENOENT);
	CU_ASSERT_EQUAL(dpdat_env_uint("HOME", 0, 1, &u), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(logged(), "DPDAT_NOPE: not a registered "
				      "setting"));
	/* a string read as a number, a number as a boolean */
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_PCAP", 0, 1, &u), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_env_bool("DPDAT_MEM_MB", &b), -EINVAL);
	CU_ASSERT_EQUAL(dpdat_env_uint("DPDAT_ZEROCOPY", 0, 1, &u), -EINVAL);
	CU_ASSERT_EQUAL(u, 5);
	/* any setting's text */
	setenv("DPDAT_MEM_MB", "512", 1);
	CU_ASSERT_STRING_EQUAL(dpdat_env_str("DPDAT_MEM_MB"), "512");
	unsetenv("DPDAT_MEM_MB");
}

static void
test_help(void)
{
	const struct dpdat_env_info *s;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	setenv("DPDAT_PCAP", "/tmp/x-%p.pcapng", 1);
	setenv("DPDAT_FAULTS", "rx:drop=0.1", 1);
	CU_ASSERT_EQUAL(dpdat_env_help(f), 0);
	fclose(f);
	for (unsigned int i = 0; (s = dpdat_env_info(i)) != NULL; i++) {
		CU_ASSERT_PTR_NOT_NULL(strstr(out, s->name));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, s->help));
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "set to \"/tmp/x-%p.pcapng\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "default: /etc/rsm/rsm.segmentid"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "DPDAT_FAULTS: set, but no dpdat "
				      "setting; did you mean DPDAT_FAULT"));
	CU_ASSERT_EQUAL(dpdat_env_help(NULL), -EINVAL);
	free(out);
	unsetenv("DPDAT_PCAP");
	unsetenv("DPDAT_FAULTS");
}

/* ---- the registry against the tree ---------------------------------- */

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (f == NULL)
		return NULL;
	n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static const struct dpdat_env_info *
find(const char *name, size_t len)
{
	const struct dpdat_env_info *s;

	for (unsigned int i = 0; (s = dpdat_env_info(i)) != NULL; i++)
		if (strlen(s->name) == len && strncmp(s->name, name, len) == 0)
			return s;
	return NULL;
}

static unsigned int n_reads, n_bad;

static void
bad(const char *path, const char *what, const char *p)
{
	int len = 0;

	while (isalnum((unsigned char)p[len]) || p[len] == '_')
		len++;
	fprintf(stderr, "%s: %s %.*s\n", path, what, len, p);
	n_bad++;
}

/* C sources: the accessors' names registered with the type read as, and
 * no getenv() of a DPDAT_* variable. */
static void
scan_code(const char *path, const char *text)
{
	static const struct { const char *call; int type; } calls[] = {
		{ "dpdat_env_str(\"", -1 },
		{ "dpdat_env_bool(\"", DPDAT_ENV_BOOL },
		{ "dpdat_env_uint(\"", DPDAT_ENV_UINT },
	};
	const struct dpdat_env_info *s;

	for (const char *p = text; (p = strstr(p, "getenv(\"DPDAT_")); p++)
		bad(path, "reads with getenv()", p + 8);
	for (unsigned int k = 0; k < RTE_DIM(calls); k++)
		for (const char *p = text; (p = strstr(p, calls[k].call)); p++) {
			const char *name = p + strlen(calls[k].call);
			const char *q = strchr(name, '"');

			if (q == NULL)
				continue;
			n_reads++;
			s = find(name, (size_t)(q - name));
			if (s == NULL)
				bad(path, "reads an unregistered", name);
			else if (calls[k].type >= 0 &&
				 s->type != (enum dpdat_env_type)calls[k].type)
				bad(path, "reads with the wrong type", name);
		}
}

/* Scripts, meson files and pages: a DPDAT_* variable set ("NAME=") or
 * read ("$NAME", "${NAME") is registered. */
static void
scan_vars(const char *path, const char *text)
{
	for (const char *p = text; (p = strstr(p, "DPDAT_")); p++) {
		size_t len = 6;
		bool shell = (p > text && p[-1] == '$') ||
			     (p > text + 1 && p[-1] == '{' && p[-2] == '$');

		if (p > text && (isalnum((unsigned char)p[-1]) ||
				 p[-1] == '_'))
			continue;
		while (isupper((unsigned char)p[len]) ||
		       isdigit((unsigned char)p[len]) || p[len] == '_')
			len++;
		if (p >= text + 2 && p[-2] == '-' && p[-1] == 'D')
			continue;	/* a C macro given to the compiler */
		if ((p[len] == '=' && p[len + 1] != '=') || shell)
			if (find(p, len) == NULL)
				bad(path, "uses an unregistered variable", p);
	}
}

static int
scan_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	size_t n = strlen(base);
	char *text;

	(void)st;
	if (flag == FTW_D && (strncmp(base, "build", 5) == 0 ||
			      strcmp(base, "img") == 0 || base[0] == '.'))
		return FTW_SKIP_SUBTREE;
	if (flag != FTW_F)
		return FTW_CONTINUE;
	bool c = n > 2 && (strcmp(base + n - 2, ".c") == 0 ||
			   strcmp(base + n - 2, ".h") == 0);
	bool other = (n > 3 && (strcmp(base + n - 3, ".sh") == 0 ||
				strcmp(base + n - 3, ".md") == 0 ||
				strcmp(base + n - 3, ".py") == 0)) ||
		     strcmp(base, "meson.build") == 0;

	/* the docs test's guide of stale names, made so on purpose */
	if ((!c && !other) || strstr(path, "/test/docs/stale.md") != NULL)
		return FTW_CONTINUE;
	text = slurp(path);
	if (text == NULL)
		return FTW_CONTINUE;
	if (c && strstr(path, "/test/") == NULL &&
	    strstr(path, "/lib/conf/") == NULL)
		scan_code(path, text);
	scan_vars(path, text);
	free(text);
	return FTW_CONTINUE;
}

static void
test_code_uses_registered_names(void)
{
	static const char *const dirs[] = { "lib", "drivers", "app",
		"devtools", "test", "doc", "README.md" };
	char path[4096];

	n_reads = n_bad = 0;
	for (unsigned int i = 0; i < RTE_DIM(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", src_root, dirs[i]);
		CU_ASSERT_EQUAL(nftw(path, scan_one, 16,
				     FTW_PHYS | FTW_ACTIONRETVAL), 0);
	}
	CU_ASSERT_EQUAL(n_bad, 0);
	CU_ASSERT(n_reads >= 19);	/* the scan found the readers */
}

/* The cells of the markdown row starting at p, trimmed, into cell[]. */
static unsigned int
row_cells(const char *p, char cell[][256], unsigned int max)
{
	unsigned int n = 0;
	const char *end = strchr(p, '\n');

	if (end == NULL)
		end = p + strlen(p);
	p++;	/* the leading | */
	while (p < end && n < max) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		size_t len;

		if (bar == NULL)
			break;
		while (p < bar && *p == ' ')
			p++;
		len = (size_t)(bar - p);
		while (len > 0 && p[len - 1] == ' ')
			len--;
		snprintf(cell[n++], 256, "%.*s", (int)len, p);
		p = bar + 1;
	}
	return n;
}

/* doc/guides/settings.md: | `NAME` | type | default | read by | help |,
 * default as `value` or "none"; every row a setting, every setting a row. */
static void
test_doc_table(void)
{
	const struct dpdat_env_info *s;
	char path[4096], cell[8][256], want[300];
	unsigned int rows = 0, settings = 0;
	char *doc;

	snprintf(path, sizeof(path), "%s/doc/guides/settings.md", src_root);
	doc = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	for (unsigned int i = 0; (s = dpdat_env_info(i)) != NULL; i++) {
		char key[128];
		const char *row;

		snprintf(key, sizeof(key), "\n| `%s` |", s->name);
		row = strstr(doc, key);
		if (row == NULL) {
			fprintf(stderr, "settings.md: no row for %s\n", s->name);
			CU_FAIL("a setting without its row");
			continue;
		}
		CU_ASSERT_PTR_NULL(strstr(row + 1, key));	/* one row */
		CU_ASSERT_EQUAL_FATAL(row_cells(row + 1, cell, 8), 5);
		CU_ASSERT_STRING_EQUAL(cell[1], type_names[s->type]);
		if (s->def != NULL)
			snprintf(want, sizeof(want), "`%s`", s->def);
		else
			snprintf(want, sizeof(want), "none");
		if (strcmp(cell[2], want) != 0)
			fprintf(stderr, "settings.md: %s default '%s', want "
				"'%s'\n", s->name, cell[2], want);
		CU_ASSERT_STRING_EQUAL(cell[2], want);
		CU_ASSERT_STRING_EQUAL(cell[3], s->reader);
	}
	for (const char *p = doc; (p = strstr(p, "\n| `DPDAT_")); p++) {
		const char *name = p + 4;
		size_t len = strcspn(name, "`");

		rows++;
		if (find(name, len) == NULL) {
			fprintf(stderr, "settings.md: %.*s is no setting\n",
				(int)len, name);
			CU_FAIL("a row without its setting");
		}
	}
	for (unsigned int i = 0; dpdat_env_info(i) != NULL; i++)
		settings++;
	CU_ASSERT_EQUAL(rows, settings);
	free(doc);
}

static CU_TestInfo env_tests[] = {
	{ "a mistyped DPDAT_* variable is reported once", test_typo_warned_once },
	{ "the registry is well formed", test_registry_well_formed },
	{ "unset: the registered defaults", test_defaults },
	{ "empty is unset", test_empty_is_unset },
	{ "read on each call, not cached", test_not_cached },
	{ "booleans good and bad", test_bool_values },
	{ "numbers good, bad and out of range", test_uint_values },
	{ "unknown names and wrong types", test_unknown_and_wrong_type },
	{ "--help-env text", test_help },
	CU_TEST_INFO_NULL,
};

static CU_TestInfo tree_tests[] = {
	{ "the code reads registered names only",
	  test_code_uses_registered_names },
	{ "doc/guides/settings.md lists every setting", test_doc_table },
	CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
	{ "env", NULL, NULL, NULL, NULL, env_tests },
	{ "env_tree", NULL, NULL, NULL, NULL, tree_tests },
	CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
	int failed;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <source root>\n", argv[0]);
		return 2;
	}
	src_root = argv[1];
	/* before any setting is read: the first read reports it */
	setenv("DPDAT_ZERCOPY", "1", 1);
	log_f = open_memstream(&log_buf, &log_len);
	if (log_f == NULL || rte_openlog_stream(log_f) != 0)
		return 1;
	failed = unit_run(suites);
	rte_openlog_stream(NULL);
	fclose(log_f);
	free(log_buf);
	return failed;
}
