/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_H
#define DPDAT_H

/**
 * @file
 * dpdat: a userspace, poll-mode RDMA provider on DPDK. This header brings up
 * (or attaches to) the DPDK EAL and includes the subsystem headers.
 */

#include <stddef.h>
#include <stdint.h>

#include <dpdat/dpdat_mr.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DPDAT_VERSION_MAJOR 0
#define DPDAT_VERSION_MINOR 1
#define DPDAT_VERSION_STR "0.1.0"

/** How the EAL memory is backed. */
enum dpdat_mem_mode {
	DPDAT_MEM_MODE_NONE = 0,	/**< EAL not initialised */
	DPDAT_MEM_MODE_HUGE,		/**< hugepages */
	DPDAT_MEM_MODE_NOHUGE,		/**< --no-huge: anonymous memory */
};

/** Hugepage choice of dpdat_eal_init(). */
enum dpdat_huge_policy {
	DPDAT_HUGE_AUTO = 0,	/**< hugepages when enough are free, else --no-huge */
	DPDAT_HUGE_NEVER,	/**< always --no-huge */
	DPDAT_HUGE_ALWAYS,	/**< hugepages or fail */
};

/** Parameters of dpdat_eal_init(); zero means default everywhere. */
struct dpdat_eal_conf {
	/** argv[0] for the EAL; default "dpdat". */
	const char *program;
	/** --file-prefix; default "dpdat-<pid>" (unique per process). */
	const char *file_prefix;
	/** Hugepage policy; DPDAT_HUGE_AUTO by default. Hugepages count as
	 *  available when a writable hugetlbfs is mounted and at least mem_mb
	 *  MiB of them are free. Environment DPDAT_HUGE=auto|never|always (or
	 *  0/1 for never/always) overrides it. */
	enum dpdat_huge_policy huge;
	/** Memory wanted in MiB; default 256. In no-huge mode it is the size of
	 *  the anonymous area (-m); in hugepage mode it is the free hugepage
	 *  memory required to choose that mode (memory then grows on demand).
	 *  Environment DPDAT_MEM_MB overrides it. */
	unsigned int mem_mb;
	/** Devices (at most 16): "vdev:<args>" adds --vdev, anything else is a
	 *  PCI address added with -a. Without any PCI address --no-pci is
	 *  passed. */
	const char *const *devices;
	unsigned int n_devices;
	/** Core list (-l). Default: lcore 0 unpinned, free to run on every CPU
	 *  of the process's affinity (--lcores=0@(...)); dpdat's engines bring
	 *  their own threads. */
	const char *lcores;
	/** Extra EAL arguments, appended as given. */
	const char *const *extra_args;
	unsigned int n_extra_args;
	/** EAL log level (--log-level); 0 leaves the EAL default. */
	unsigned int log_level;
	/** More extra EAL arguments as one string, separated by ';' (the
	 *  form of a setting such as the DAT plug-in's eal=), appended after
	 *  extra_args and before DPDAT_EAL's; NULL for none. */
	const char *extra_words;
};

/**
 * Initialise the DPDK EAL for dpdat: a unique --file-prefix, --no-pci unless
 * PCI devices are named, hugepages when available (with --in-memory, so no
 * hugepage files outlive the process) else --no-huge (with --no-shconf), and
 * a log line saying which memory mode was chosen and why. The EAL can be
 * brought up once per process: after any call that reached rte_eal_init(),
 * successful or not, and after dpdat_eal_cleanup(), this returns -EALREADY.
 *
 * @param conf
 *   Parameters, or NULL for defaults.
 * @return
 *   0; -EALREADY (see above, or the EAL is already up); -EINVAL (bad
 *   parameter or environment value, more than 16 devices, more than 32
 *   arguments of the user's or 2 KiB of extra_words and DPDAT_EAL, more
 *   than 63 EAL arguments in all); -ENOMEM (DPDAT_HUGE_ALWAYS without enough free
 *   hugepages, or out of memory); or the EAL's own negative error.
 */
int
dpdat_eal_init(const struct dpdat_eal_conf *conf);

/**
 * Use an EAL that the application initialised itself. Returns 0 without
 * doing anything when dpdat brought the EAL up.
 *
 * @return 0, or -ENODEV if the EAL is not initialised, or after a failed
 *   dpdat_eal_init() or a dpdat_eal_cleanup().
 */
int
dpdat_eal_attach(void);

/** Memory mode of the EAL dpdat runs on (DPDAT_MEM_MODE_NONE before init). */
enum dpdat_mem_mode
dpdat_eal_mem_mode(void);

/** Printable name of a memory mode ("hugepages", "no-huge", "none"). */
const char *
dpdat_mem_mode_str(enum dpdat_mem_mode mode);

/**
 * Release the EAL if dpdat_eal_init() brought it up (rte_eal_cleanup()).
 * An attached EAL is left to the application.
 *
 * @return 0, or the EAL's negative error.
 */
int
dpdat_eal_cleanup(void);

#ifdef __cplusplus
}
#endif

#endif /* DPDAT_H */
