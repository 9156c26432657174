/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The settings registry: every DPDAT_* environment variable dpdat knows,
 * with its type, default, reader and help, in the one table below (the
 * bottom layer: it uses nothing else of dpdat). Values are looked up in
 * the environment on each call, as libfabric's fi_param_get does, not
 * cached: programs and tests set a variable between two opens (one
 * DPDAT_DAT_PARAMS per IA, a fresh DPDAT_RSM_SEGMENTID_FILE) and every
 * reader runs once per open, off the fast path. No state but a
 * pthread_once that reports, the first time any setting is read, the
 * DPDAT_* variables that are no setting. Any thread may call in; like
 * getenv() itself, not while another thread changes the environment.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>

#include <dpdat/dpdat_env.h>

RTE_LOG_REGISTER(dpdat_conf_logtype, dpdat.conf, NOTICE);
#define CONF_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpdat_conf_logtype, "dpdat: " fmt "\n", \
		##__VA_ARGS__)

extern char **environ;

#define S DPDAT_ENV_STR
#define B DPDAT_ENV_BOOL
#define U DPDAT_ENV_UINT

/* Keep doc/guides/settings.md in step: test_env checks both ways. */
static const struct dpdat_env_info conf_table[] = {
	/* the library, every program */
	{ "DPDAT_EAL", S, NULL, "library",
	  "extra EAL arguments, split at blanks; they replace dpdat's own for the same option" },
	{ "DPDAT_HUGE", S, NULL, "library",
	  "hugepages: auto (when enough are free), never (or 0), always (or 1); unset: dpdat_eal_conf.huge" },
	{ "DPDAT_MEM_MB", U, NULL, "library",
	  "MiB of EAL memory, 1..1048576 (no-huge: the anonymous area); unset: dpdat_eal_conf.mem_mb, else 256" },
	{ "DPDAT_LOG", S, NULL, "library",
	  "level of every dpdat log type: err, warning, notice, info, debug or 1..8" },
	{ "DPDAT_FAULT", S, NULL, "library",
	  "fault injection on every port, as dpdat_fault_parse(): rx:drop=R,dup=R,reorder=R,corrupt=R,ce=R;tx:...;seed=N;frames=N" },
	{ "DPDAT_ECN", S, "off", "library",
	  "ECN codepoint of every RoCEv2 frame but CNPs: off (not ECT), ect0 or ect1 (RFC 9331's L4S); marks are answered with CNPs, which slow the sender (DPDAT_DCQCN)" },
	{ "DPDAT_DCQCN", S, NULL, "library",
	  "DCQCN's reaction to CNPs: off, or key=value,... over the defaults (g=1019 alpha_us=1 alpha0=1023 first_mbps=0 min_dec_pct=50 min_mbps=1 monitor_us=4 time_reset_us=300 byte_reset=32767 threshold=1 ai_mbps=5 hai_mbps=50)" },
	{ "DPDAT_SWIFT", S, NULL, "library",
	  "delay-based control (the sender's window follows its round trips, as Swift): on, or key=value,... (target_us=50 ai=1 beta_pct=80 max_mdf_pct=50 max_wnd=512); unset: off" },
	{ "DPDAT_PCAP", S, NULL, "library",
	  "capture every port into this pcapng file (%p: the process id)" },
	{ "DPDAT_ZEROCOPY", B, NULL, "library",
	  "zero-copy transmit: 1 also on memif, 0 nowhere; unset: where the device sends chained mbufs, memif aside" },
	{ "DPDAT_XDP_PROG", S, NULL, "library",
	  "XDP object an af_xdp port loads; unset: the installed dpdat_xdp.o, else the built one" },
	/* the DAT plug-in */
	{ "DPDAT_DAT_PARAMS", S, NULL, "dat",
	  "replaces the ia_params of every IA the process opens (device=... ipv4=... mtu=... cpu=... eal=...)" },
	{ "DPDAT_DAT_DEBUG", B, "0", "dat",
	  "log completions and connection events as converted, LMRs, refused posts, a QP dump on a broken connection" },
	/* the verbs library (dpdat-run) */
	{ "DPDAT_VERBS_DEVICE", S, "net_memif0,role=server,socket=/tmp/dpdat-verbs.sock", "verbs",
	  "device arguments of dpdat0's port (dpdat-run --dev)" },
	{ "DPDAT_VERBS_IPV4", S, "198.18.0.1", "verbs",
	  "dpdat0's IPv4 address, or auto (the interface's, af_xdp and af_packet) (dpdat-run --ip)" },
	{ "DPDAT_VERBS_MTU", U, NULL, "verbs",
	  "dpdat0's port MTU; unset: dpdat's default for the device (4200 on memif)" },
	{ "DPDAT_VERBS_EAL", S, NULL, "verbs",
	  "extra EAL arguments when dpdat0 brings the EAL up, split at ';'" },
	{ "DPDAT_VERBS_PROGRESS", S, "hybrid", "verbs",
	  "who runs dpdat0's engine: hybrid (a thread, and the program's polls while it polls busily), thread, or inline (the program's polls only)" },
	{ "DPDAT_VERBS_OFFER", B, "1", "verbs",
	  "a QP connected by ibv_modify_qp offers dpdat's extensions (riding ACKs) to its peer in band; 0: plain RoCEv2 only" },
	{ "DPDAT_VERBS_QP_STATS", B, "0", "verbs",
	  "each QP prints its counters (extensions, packets, ACKs that rode, retransmits) on stderr as ibv_destroy_qp destroys it" },
	{ "DPDAT_VERBS_LIB", S, NULL, "verbs",
	  "the libdpdat-verbs.so dpdat-run preloads; unset: the build tree's, else the installed one" },
	/* the RSMAPI library */
	{ "DPDAT_RSM_CONTROLLER", S, "dpdat0", "rsm",
	  "the name of the process's one controller" },
	{ "DPDAT_RSM_NODES", S, "1=198.18.0.1,2=198.18.0.2", "rsm",
	  "node ids to IPv4 addresses, id=a.b.c.d,... (ids 1..2^32-1, at most 64)" },
	{ "DPDAT_RSM_NODE", U, "1", "rsm",
	  "this process's node id, one of DPDAT_RSM_NODES; its address is the device's" },
	{ "DPDAT_RSM_DEVICE", S, NULL, "rsm",
	  "device arguments of the port; unset: net_memif0, server for the lowest node id, else client" },
	{ "DPDAT_RSM_CPU", U, NULL, "rsm",
	  "pin the controller's engine thread to this CPU; unset: unpinned" },
	{ "DPDAT_RSM_MAX_SEGMENT_SIZE", U, "1073741824", "rsm",
	  "attr_max_export_segment_size: bytes of one exported segment at most" },
	{ "DPDAT_RSM_TOTAL_EXPORT", U, "4294967296", "rsm",
	  "attr_tot_export_segment_size: bytes of all exported segments together" },
	{ "DPDAT_RSM_MAX_SEGMENTS", U, "256", "rsm",
	  "attr_max_export_segments: segments exported at once" },
	{ "DPDAT_RSM_SEGMENTID_FILE", S, "/etc/rsm/rsm.segmentid", "rsm",
	  "the segment id reservations (rsm.segmentid, as on Solaris)" },
	{ "DPDAT_LOCAL_RANK", S, NULL, "library",
	  "this process's local rank, for %l in device arguments (else the MPI launcher's)" },
	/* tests and devtools, not the library: listed so that they are no typo */
	{ "DPDAT_TEST_DEV", S, NULL, "tests",
	  "integration tests: device arguments instead of the memif pair" },
	{ "DPDAT_TEST_SERVER", S, "198.18.0.1", "tests",
	  "integration tests: the server's address, one application of several on a host" },
	{ "DPDAT_UNIT_TEST", S, NULL, "tests",
	  "unit test programs: run only the tests these shell patterns name ('suite/test' or 'test', ';' between patterns)" },
	{ "DPDAT_UNIT_LIST", B, "0", "tests",
	  "unit test programs: list the tests' names instead of running them" },
	{ "DPDAT_NETNS", S, NULL, "tests",
	  "demo and conformance scripts: af_xdp or af_packet, between two network namespaces" },
	{ "DPDAT_HUGEPAGES", U, "1024", "tests",
	  "2 MiB pages devtools/setup.sh reserves (0: leave alone)" },
};

#undef S
#undef B
#undef U

static const char *const type_names[] = {
	[DPDAT_ENV_STR] = "string",
	[DPDAT_ENV_BOOL] = "bool",
	[DPDAT_ENV_UINT] = "uint",
};

static pthread_once_t conf_once = PTHREAD_ONCE_INIT;

const struct dpdat_env_info *
dpdat_env_info(unsigned int i)
{
	return i < RTE_DIM(conf_table) ? &conf_table[i] : NULL;
}

/* The registered setting of a variable name, name ending at len. */
static const struct dpdat_env_info *
conf_find(const char *name, size_t len)
{
	for (unsigned int i = 0; i < RTE_DIM(conf_table); i++)
		if (strncmp(conf_table[i].name, name, len) == 0 &&
		    conf_table[i].name[len] == '\0')
			return &conf_table[i];
	return NULL;
}

/* Edit distance of a (alen) and b, capped at 9: enough to suggest. */
static unsigned int
conf_distance(const char *a, size_t alen, const char *b)
{
	unsigned int row[64], i, j, prev, tmp;
	size_t blen = strlen(b);

	if (alen >= RTE_DIM(row) || blen >= RTE_DIM(row))
		return 9;
	for (j = 0; j <= blen; j++)
		row[j] = j;
	for (i = 1; i <= alen; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= blen; j++) {
			tmp = row[j];
			row[j] = RTE_MIN(RTE_MIN(row[j], row[j - 1]) + 1,
					 prev + (a[i - 1] != b[j - 1]));
			prev = tmp;
		}
	}
	return RTE_MIN(row[blen], 9u);
}

/* The registered name nearest to a mistyped one, or NULL. */
static const char *
conf_nearest(const char *name, size_t len)
{
	const char *best = NULL;
	unsigned int d, best_d = 3;	/* three edits at most */

	for (unsigned int i = 0; i < RTE_DIM(conf_table); i++) {
		d = conf_distance(name, len, conf_table[i].name);
		if (d < best_d) {
			best_d = d;
			best = conf_table[i].name;
		}
	}
	return best;
}

/* Call fn for each DPDAT_* variable of the environment that is no
 * setting: name and length of the name. */
static void
conf_unknown_walk(void (*fn)(const char *, size_t, void *), void *arg)
{
	for (char **e = environ; e != NULL && *e != NULL; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq != NULL ? (size_t)(eq - *e) : strlen(*e);

		if (strncmp(*e, "DPDAT_", 6) == 0 && conf_find(*e, len) == NULL)
			fn(*e, len, arg);
	}
}

static void
conf_warn_one(const char *name, size_t len, void *arg)
{
	const char *near = conf_nearest(name, len);

	RTE_SET_USED(arg);
	CONF_LOG(WARNING, "%.*s is set but is no dpdat setting%s%s%s (see "
		 "--help-env)", (int)len, name, near ? " (" : "",
		 near ? near : "", near ? "?)" : "");
}

static void
conf_warn_unknown(void)
{
	conf_unknown_walk(conf_warn_one, NULL);
}

/* The setting called name, or NULL (logged) with rte_errno ENOENT. */
static const struct dpdat_env_info *
conf_lookup(const char *name)
{
	const struct dpdat_env_info *s;

	pthread_once(&conf_once, conf_warn_unknown);
	s = name != NULL ? conf_find(name, strlen(name)) : NULL;
	if (s == NULL) {
		CONF_LOG(ERR, "%s: not a registered setting",
			 name != NULL ? name : "(null)");
		rte_errno = ENOENT;
	}
	return s;
}

/* The variable's value, NULL when unset or empty. */
static const char *
conf_getenv(const struct dpdat_env_info *s)
{
	const char *v = getenv(s->name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* Look name up, check its type, and get its text: the variable's, else
 * the default (*from_env says which). 0, or a negative errno. */
static int
conf_text(const char *name, enum dpdat_env_type type, const char **text,
	  bool *from_env)
{
	const struct dpdat_env_info *s = conf_lookup(name);

	if (s == NULL)
		return -ENOENT;
	if (s->type != type) {
		CONF_LOG(ERR, "%s is a %s setting, not %s", name,
			 type_names[s->type], type_names[type]);
		return -EINVAL;
	}
	*text = conf_getenv(s);
	*from_env = *text != NULL;
	if (*text == NULL)
		*text = s->def;
	return 0;
}

const char *
dpdat_env_str(const char *name)
{
	const struct dpdat_env_info *s = conf_lookup(name);
	const char *v;

	if (s == NULL)
		return NULL;
	v = conf_getenv(s);
	return v != NULL ? v : s->def;
}

static int
conf_parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };

	for (unsigned int i = 0; i < RTE_DIM(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int
dpdat_env_bool(const char *name, bool *out)
{
	const char *v;
	bool from_env;
	int ret;

	if (out == NULL)
		return -EINVAL;
	ret = conf_text(name, DPDAT_ENV_BOOL, &v, &from_env);
	if (ret < 0)
		return ret;
	if (v == NULL)
		return 1;
	if (conf_parse_bool(v, out) < 0) {
		CONF_LOG(ERR, "%s=%s%s: expected 1, 0, true, false, yes, no, "
			 "on or off", name, v, from_env ? "" : " (default)");
		return -EINVAL;
	}
	return from_env ? 0 : 1;
}

/* Decimal or 0x hexadecimal, nothing else: no sign, blank or suffix. */
static int
conf_parse_uint(const char *v, uint64_t *out)
{
	int hex = v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
	const char *digits = hex ? v + 2 : v;
	unsigned long long n;
	char *end;

	if (!(hex ? isxdigit((unsigned char)*digits) :
	      isdigit((unsigned char)*digits)))
		return -EINVAL;
	errno = 0;
	n = strtoull(digits, &end, hex ? 16 : 10);
	if (errno != 0 || *end != '\0')
		return -EINVAL;
	*out = n;
	return 0;
}

int
dpdat_env_uint(const char *name, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *v;
	bool from_env;
	uint64_t n;
	int ret;

	if (out == NULL || min > max)
		return -EINVAL;
	ret = conf_text(name, DPDAT_ENV_UINT, &v, &from_env);
	if (ret < 0)
		return ret;
	if (v == NULL)
		return 1;
	if (conf_parse_uint(v, &n) < 0 || n < min || n > max) {
		CONF_LOG(ERR, "%s=%s%s: expected a number in %" PRIu64 "..%"
			 PRIu64, name, v, from_env ? "" : " (default)", min,
			 max);
		return -EINVAL;
	}
	*out = n;
	return from_env ? 0 : 1;
}

static void
conf_help_unknown(const char *name, size_t len, void *arg)
{
	const char *near = conf_nearest(name, len);

	fprintf(arg, "%.*s: set, but no dpdat setting%s%s\n", (int)len, name,
		near ? "; did you mean " : "", near ? near : "");
}

int
dpdat_env_help(FILE *f)
{
	if (f == NULL)
		return -EINVAL;
	fprintf(f, "dpdat settings (environment variables; an empty one is "
		"unset; doc/guides/settings.md):\n"
		"  %-27s %-6s %-7s\n", "name", "type", "read by");
	for (unsigned int i = 0; i < RTE_DIM(conf_table); i++) {
		const struct dpdat_env_info *s = &conf_table[i];
		const char *v = conf_getenv(s);

		fprintf(f, "  %-27s %-6s %-7s default: %s\n", s->name,
			type_names[s->type], s->reader,
			s->def != NULL ? s->def : "none");
		fprintf(f, "      %s\n", s->help);
		if (v != NULL)
			fprintf(f, "      set to \"%s\"\n", v);
	}
	conf_unknown_walk(conf_help_unknown, f);
	return 0;
}
