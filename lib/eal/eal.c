/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* EAL bring-up for dpdat: one place that decides the memory mode, keeps
 * DPDK away from the machine's own PCI devices unless told otherwise, and
 * gives every process its own runtime files. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <dirent.h>
#include <sched.h>
#include <stdbool.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_random.h>
#include <rte_cycles.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_env.h>
#include "eal_priv.h"

RTE_LOG_REGISTER(dpdat_eal_logtype, dpdat.eal, NOTICE);
#define EAL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpdat_eal_logtype, "dpdat: " fmt "\n", \
		##__VA_ARGS__)

#define EAL_DEFAULT_MB	256

static enum dpdat_mem_mode eal_mode;
static int eal_owned;
static int eal_used;	/* the EAL can be brought up once per process */

const char *
dpdat_mem_mode_str(enum dpdat_mem_mode mode)
{
	switch (mode) {
	case DPDAT_MEM_MODE_HUGE: return "hugepages";
	case DPDAT_MEM_MODE_NOHUGE: return "no-huge";
	case DPDAT_MEM_MODE_NONE: break;
	}
	return "none";
}

enum dpdat_mem_mode
dpdat_eal_mem_mode(void)
{
	return eal_mode;
}

/* Is a hugetlbfs mounted where we may create files? */
static int
hugetlbfs_usable(void)
{
	char dev[256], dir[PATH_MAX], type[64];
	int found = 0;
	FILE *f = fopen("/proc/mounts", "r");

	if (f == NULL)
		return 0;
	while (!found && fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir,
				type) == 3)
		found = strcmp(type, "hugetlbfs") == 0 &&
			access(dir, W_OK) == 0;
	fclose(f);
	return found;
}

/* Free hugepage memory in MiB, over every page size. */
static unsigned long
hugepages_free_mb(void)
{
	const char *base = "/sys/kernel/mm/hugepages";
	unsigned long total = 0, kb, n;
	struct dirent *d;
	char path[PATH_MAX];
	DIR *dir = opendir(base);
	FILE *f;

	if (dir == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		if (sscanf(d->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/free_hugepages", base,
			 d->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) == 1)
			total += n * kb / 1024;
		fclose(f);
	}
	closedir(dir);
	return total;
}

static int
env_policy(enum dpdat_huge_policy *policy)
{
	const char *v = dpdat_env_str("DPDAT_HUGE");

	if (v == NULL || *v == '\0')
		return 0;
	if (strcasecmp(v, "auto") == 0)
		*policy = DPDAT_HUGE_AUTO;
	else if (strcasecmp(v, "never") == 0 || strcmp(v, "0") == 0)
		*policy = DPDAT_HUGE_NEVER;
	else if (strcasecmp(v, "always") == 0 || strcmp(v, "1") == 0)
		*policy = DPDAT_HUGE_ALWAYS;
	else {
		EAL_LOG(ERR, "DPDAT_HUGE=%s: expected auto, never or always", v);
		return -EINVAL;
	}
	return 0;
}

static int
env_mem_mb(unsigned int *mb)
{
	uint64_t n;
	int ret = dpdat_env_uint("DPDAT_MEM_MB", 1, 1024 * 1024, &n);

	if (ret == 0)
		*mb = (unsigned int)n;
	return ret < 0 ? ret : 0;
}

/* Decide hugepages or not, and say why. */
static int
choose_mode(enum dpdat_huge_policy policy, unsigned int mb,
	    enum dpdat_mem_mode *mode, char *why, size_t whylen)
{
	unsigned long free_mb = hugepages_free_mb();
	int usable = hugetlbfs_usable();

	if (policy == DPDAT_HUGE_NEVER) {
		snprintf(why, whylen, "hugepages disabled by request");
		*mode = DPDAT_MEM_MODE_NOHUGE;
		return 0;
	}
	if (usable && free_mb >= mb) {
		snprintf(why, whylen, "%lu MiB of hugepages free", free_mb);
		*mode = DPDAT_MEM_MODE_HUGE;
		return 0;
	}
	snprintf(why, whylen, "%s%lu MiB of hugepages free, %u MiB wanted",
		 usable ? "" : "no writable hugetlbfs mount, ", free_mb, mb);
	if (policy == DPDAT_HUGE_ALWAYS) {
		EAL_LOG(ERR, "hugepages required but unavailable: %s", why);
		return -ENOMEM;
	}
	*mode = DPDAT_MEM_MODE_NOHUGE;
	return 0;
}

/* The CPUs this process may run on, as "0,1,2". */
static void
cpu_list(char *out, size_t len)
{
	cpu_set_t set;
	size_t n = 0;
	int cpu;

	out[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		snprintf(out, len, "0");
		return;
	}
	for (cpu = 0; cpu < CPU_SETSIZE && n + 8 < len; cpu++)
		if (CPU_ISSET(cpu, &set))
			n += (size_t)snprintf(out + n, len - n, "%s%d",
					      n ? "," : "", cpu);
	if (n == 0)
		snprintf(out, len, "0");
}

static int
add_arg(char **argv, int *argc, const char *fmt, const char *val)
{
	char buf[PATH_MAX];

	if (*argc >= EAL_MAX_ARGS - 1)
		return -EINVAL;	/* too many arguments */
	snprintf(buf, sizeof(buf), fmt, val);
	argv[*argc] = strdup(buf);
	if (argv[*argc] == NULL)
		return -ENOMEM;
	(*argc)++;
	return 0;
}

/* Does the user's EAL argument list hold one of the options in names
 * ("-l", "--lcores", ...: the option alone, glued to its value, or
 * --name=value)? */
static bool
user_has(const struct eal_user *u, const char *const *names)
{
	for (unsigned int i = 0; i < u->n; i++)
		for (const char *const *n = names; *n != NULL; n++) {
			size_t k = strlen(*n);

			if (strncmp(u->args[i], *n, k) == 0 &&
			    (u->args[i][k] == '\0' || u->args[i][k] == '=' ||
			     ((*n)[1] != '-' && k == 2)))
				return true;
		}
	return false;
}

int
eal_user_add(struct eal_user *u, const char *s, const char *seps)
{
	unsigned int n = u->n;
	char *save = NULL, *w, *copy = u->buf + u->used;
	size_t len;

	if (s == NULL)
		return 0;
	len = strlen(s);
	if (len >= sizeof(u->buf) - u->used)
		return -EINVAL;
	memcpy(copy, s, len + 1);
	for (w = strtok_r(copy, seps, &save); w != NULL;
	     w = strtok_r(NULL, seps, &save)) {
		if (n >= RTE_DIM(u->args))
			return -EINVAL;
		u->args[n++] = w;
	}
	u->n = n;
	u->used += len + 1;
	return 0;
}

int
eal_user_split(const char *env, struct eal_user *u)
{
	u->n = 0;
	u->used = 0;
	return eal_user_add(u, env, " \t\n");
}

/* dpdat's defaults give way to what the user's EAL arguments (conf's extra
 * arguments and DPDAT_EAL) say about the same thing: the EAL refuses -l
 * with --lcores, and two --file-prefix or memory modes. */
int
eal_args_build(const struct dpdat_eal_conf *c, const struct eal_user *u,
	       enum dpdat_mem_mode mode, unsigned int mb, char **argv,
	       int *argc)
{
	static const char *const cores[] = { "-l", "-c", "--lcores", NULL };
	static const char *const prefix_opt[] = { "--file-prefix", NULL };
	/* a memory mode of the user's replaces dpdat's; a size only its -m */
	static const char *const mode_opt[] = { "--no-huge", "--in-memory",
		"--legacy-mem", NULL };
	static const char *const size_opt[] = { "-m", "--socket-mem", NULL };
	/* an allow-list (or the user's own --no-pci) replaces --no-pci; a
	 * block list does not: every other PCI device would be probed */
	static const char *const dev_opt[] = { "-a", "--allow", "--no-pci",
		NULL };
	char num[32], prefix[64];
	int pci = 0, ret = 0;
	unsigned int i;

	/* ret keeps the first error: later add_arg() calls return it too */
#define ADD(...) (ret = ret < 0 ? ret : add_arg(argv, argc, __VA_ARGS__))

	snprintf(prefix, sizeof(prefix), "dpdat-%d", (int)getpid());
	ADD("%s", c->program ? c->program : "dpdat");
	if (c->lcores != NULL && !user_has(u, cores)) {
		ADD("-l%s", c->lcores);
	} else if (!user_has(u, cores)) {
		/* lcore 0 free to run on any CPU we may use: the EAL would
		 * otherwise pin every dpdat process to CPU 0, and two polling
		 * processes would share one core */
		char cpus[256];

		cpu_list(cpus, sizeof(cpus));
		ADD("--lcores=0@(%s)", cpus);
	}
	if (!user_has(u, prefix_opt))
		ADD("--file-prefix=%s", c->file_prefix ? c->file_prefix :
		    prefix);
	/* no runtime or hugepage files to leak if the process dies;
	 * --no-huge implies legacy memory, which refuses --in-memory */
	if (user_has(u, mode_opt)) {
		/* the user chose the memory mode */
	} else if (mode == DPDAT_MEM_MODE_NOHUGE) {
		snprintf(num, sizeof(num), "%u", mb);
		ADD("%s", "--no-huge");
		ADD("%s", "--no-shconf");
		if (!user_has(u, size_opt))
			ADD("-m%s", num);
	} else {
		ADD("%s", "--in-memory");
	}
	for (i = 0; i < c->n_devices; i++) {
		if (strncmp(c->devices[i], "vdev:", 5) == 0) {
			ADD("--vdev=%s", c->devices[i] + 5);
		} else {
			ADD("-a%s", c->devices[i]);
			pci = 1;
		}
	}
	/* PCI devices named by the user (-a, -b) or by dpdat: no --no-pci */
	if (!pci && !user_has(u, dev_opt))
		ADD("%s", "--no-pci");
	if (c->log_level != 0) {
		snprintf(num, sizeof(num), "%u", c->log_level);
		ADD("--log-level=%s", num);
	}
	for (i = 0; i < u->n; i++)
		ADD("%s", u->args[i]);
	return ret;
#undef ADD
}

/* DPDAT_LOG=<level> (a number 1..8 or a name: err, warning, notice,
 * info, debug) sets the level of every dpdat log type. */
static void
log_level_from_env(void)
{
	static const char *const names[] = { "", "emerg", "alert", "crit",
		"err", "warning", "notice", "info", "debug" };
	const char *v = dpdat_env_str("DPDAT_LOG");
	unsigned int level = 0;

	if (v == NULL)
		return;
	for (unsigned int i = 1; i < RTE_DIM(names); i++)
		if (strcmp(v, names[i]) == 0)
			level = i;
	if (level == 0)
		level = (unsigned int)strtoul(v, NULL, 0);
	if (level < RTE_LOG_EMERG || level > RTE_LOG_DEBUG) {
		EAL_LOG(WARNING, "DPDAT_LOG=%s: not a log level", v);
		return;
	}
	rte_log_set_level_pattern("dpdat*", level);
}

/* conf's extra arguments, its extra_words, then DPDAT_EAL's words. */
static int
eal_user_args(const struct dpdat_eal_conf *c, struct eal_user *u)
{
	const char *env = dpdat_env_str("DPDAT_EAL");
	unsigned int i;
	int ret;

	u->n = 0;
	u->used = 0;
	ret = eal_user_add(u, c->extra_words, ";");
	if (ret == 0)
		ret = eal_user_add(u, env, " \t\n");
	if (ret < 0) {
		EAL_LOG(ERR, "extra_words and DPDAT_EAL: more than %u "
			"arguments or %zu bytes in all",
			(unsigned int)RTE_DIM(u->args), sizeof(u->buf));
		return ret;
	}
	if (c->n_extra_args + u->n > RTE_DIM(u->args))
		return -EINVAL;
	/* conf's first: a DPDAT_EAL option given again wins (the EAL keeps
	 * the last of most options) */
	memmove(u->args + c->n_extra_args, u->args, u->n * sizeof(u->args[0]));
	for (i = 0; i < c->n_extra_args; i++)
		u->args[i] = (char *)c->extra_args[i];
	u->n += c->n_extra_args;
	return 0;
}

/* The EAL command line, at INFO: what a user would type to reproduce it. */
static void
eal_args_log(char **argv, int argc)
{
	char line[1024];
	size_t n = 0;

	for (int i = 0; i < argc && n < sizeof(line) - 1; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s",
				      i ? " " : "", argv[i]);
	EAL_LOG(INFO, "EAL arguments: %s", line);
}

int
dpdat_eal_init(const struct dpdat_eal_conf *conf)
{
	static const struct dpdat_eal_conf defaults;
	const struct dpdat_eal_conf *c = conf ? conf : &defaults;
	enum dpdat_huge_policy policy = c->huge;
	unsigned int mb = c->mem_mb ? c->mem_mb : EAL_DEFAULT_MB;
	char *argv[EAL_MAX_ARGS] = { NULL }, *eal_argv[EAL_MAX_ARGS];
	struct eal_user user;
	enum dpdat_mem_mode mode;
	char why[160];
	int argc = 0, i, ret;

	if (eal_used || rte_lcore_count() != 0)
		return -EALREADY;
	if (policy > DPDAT_HUGE_ALWAYS || c->n_devices > 16 ||
	    (c->n_devices && c->devices == NULL) ||
	    (c->n_extra_args && c->extra_args == NULL))
		return -EINVAL;
	ret = env_policy(&policy);
	if (ret == 0)
		ret = env_mem_mb(&mb);
	if (ret == 0)
		ret = eal_user_args(c, &user);
	if (ret == 0)
		ret = choose_mode(policy, mb, &mode, why, sizeof(why));
	if (ret == 0)
		ret = eal_args_build(c, &user, mode, mb, argv, &argc);
	if (ret < 0)
		goto out;
	eal_args_log(argv, argc);
	memcpy(eal_argv, argv, sizeof(argv));	/* the EAL permutes argv */
	eal_used = 1;
	ret = rte_eal_init(argc, eal_argv);
	if (ret < 0) {
		ret = -rte_errno;
		EAL_LOG(ERR, "rte_eal_init failed: %s", rte_strerror(-ret));
		goto out;
	}
	ret = 0;
	/* DPDK seeds rte_rand() in a constructor, before any fork(): two
	 * processes forked from one parent would draw the same PSNs, QP
	 * numbers and key generations. Give each its own sequence. */
	rte_srand(rte_rdtsc() ^ ((uint64_t)getpid() << 32));
	log_level_from_env();
	eal_owned = 1;
	if ((rte_eal_has_hugepages() != 0) != (mode == DPDAT_MEM_MODE_HUGE)) {
		/* the user's EAL arguments chose the memory */
		mode = rte_eal_has_hugepages() ? DPDAT_MEM_MODE_HUGE :
						 DPDAT_MEM_MODE_NOHUGE;
		snprintf(why, sizeof(why), "as the EAL arguments say");
	}
	eal_mode = mode;
	if (mode == DPDAT_MEM_MODE_HUGE)
		EAL_LOG(NOTICE, "EAL up in hugepage mode (%s)", why);
	else
		EAL_LOG(NOTICE, "EAL up in no-huge mode with %u MiB (%s)", mb,
			why);
out:
	for (i = 0; i < argc; i++)
		free(argv[i]);
	return ret;
}

int
dpdat_eal_attach(void)
{
	if (eal_mode != DPDAT_MEM_MODE_NONE)
		return 0;
	/* never initialised, or failed, or already cleaned up */
	if (eal_used || rte_lcore_count() == 0)
		return -ENODEV;
	eal_used = 1;
	eal_mode = rte_eal_has_hugepages() ? DPDAT_MEM_MODE_HUGE :
					     DPDAT_MEM_MODE_NOHUGE;
	EAL_LOG(INFO, "attached to the application's EAL (%s)",
		dpdat_mem_mode_str(eal_mode));
	return 0;
}

int
dpdat_eal_cleanup(void)
{
	int ret = 0;

	if (eal_owned)
		ret = rte_eal_cleanup();
	eal_owned = 0;
	eal_mode = DPDAT_MEM_MODE_NONE;
	return ret;
}
