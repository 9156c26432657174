/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The provider's entry point, its settings and the process's device.
 *
 * Settings (fi_param_define: `fi_info -e` lists them; FI_DPDAT_<NAME> in
 * the environment):
 *   FI_DPDAT_DEVICE    DPDK device arguments of the port
 *   FI_DPDAT_IPV4      the port's IPv4 address, or "auto": the interface's
 *                      (af_xdp, af_packet, a PCI NIC beside the kernel)
 *   FI_DPDAT_MTU       the port's MTU (0: the port's default)
 *   FI_DPDAT_EAL       EAL arguments, ';' between them
 *   FI_DPDAT_CPU       the engine thread's CPU (-1: not pinned)
 *   FI_DPDAT_MEM_MB    memory the EAL takes, in MiB
 *   FI_DPDAT_PROGRESS  who runs the engine:
 *                      auto (default): the application's reads (as
 *                        dpdat-perf runs it: no thread competes with the
 *                        application for a CPU), and a thread that runs
 *                        it every FI_DPDAT_TICK_US when they do not (a
 *                        peer waiting for our ACK while the application
 *                        sleeps elsewhere). FI_PROGRESS_AUTO.
 *                      manual: only the application's reads.
 *                        FI_PROGRESS_MANUAL (no FI_WAIT_FD).
 *                      thread: an engine thread that polls all the time
 *                        (a CPU of its own). FI_PROGRESS_AUTO.
 *   FI_DPDAT_TICK_US   auto: the thread's period (default 200 us)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>

#include "df.h"

#define DF_DEFAULT_DEVICE "net_memif0,role=server,socket=/tmp/dpdat-fi.sock"
#define DF_DEFAULT_IPV4 "198.18.0.1"

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct df_dev the_dev;
static bool dev_tried;

int
df_errno(int err)
{
	switch (err) {
	case 0: return 0;
	case ENOMEM: return -FI_ENOMEM;
	case EINVAL: return -FI_EINVAL;
	case EBUSY: return -FI_EBUSY;
	case ENOSPC: return -FI_ENOSPC;
	case EADDRINUSE: return -FI_EADDRINUSE;
	case EAGAIN: return -FI_EAGAIN;
	case EBADF: return -FI_EBADF;
	case ENODEV: return -FI_ENODEV;
	case ETIMEDOUT: return -FI_ETIMEDOUT;
	case ECONNREFUSED: return -FI_ECONNREFUSED;
	default: return -FI_EOTHER;
	}
}

static char *
param_str(const char *name, const char *def)
{
	char *v = NULL;

	if (fi_param_get_str(&df_prov, name, &v) != FI_SUCCESS || v == NULL ||
	    v[0] == '\0')
		return (char *)(uintptr_t)def;
	return v;
}

static int
param_int(const char *name, int def)
{
	int v;

	return fi_param_get_int(&df_prov, name, &v) == FI_SUCCESS ? v : def;
}

static unsigned int tick_us;
uint64_t df_reads;

/* FI_DPDAT_PROGRESS=auto: the engine runs at least every tick_us when
 * the application does not read (the device lives as long as the
 * process, and so does this thread). While it reads (df_reads moves),
 * the thread backs off to a look every DF_TICK_IDLE_US: each wake-up of
 * a thread on a CPU a busy-polling application holds costs a context
 * switch, and at every tick_us it cost fi_pingpong 1.7 us of its 4.5 us
 * round trip (2.8 with manual progress, which dpdat-perf matches). A
 * peer waiting for our ACK while the application stops reading waits at
 * most DF_TICK_IDLE_US more. */
static void *
ticker(void *arg)
{
	const struct df_dev *d = arg;
	uint64_t seen = 0, now;
	unsigned int sleep_us = tick_us;

	pthread_setname_np(pthread_self(), "dpdat-fi-tick");
	for (;;) {
		usleep(sleep_us);
		now = __atomic_load_n(&df_reads, __ATOMIC_RELAXED);
		if (now != seen) {	/* the application runs it */
			seen = now;
			sleep_us = RTE_MIN(sleep_us * 2, DF_TICK_IDLE_US);
			continue;
		}
		dpdat_dev_progress(d->dev);
		sleep_us = tick_us;
	}
	return NULL;
}

static int
dev_open(struct df_dev *d)
{
	struct dpdat_eal_conf ec = { .program = "dpdat-fi" };
	struct dpdat_dev_conf dc = { .max_qps = DF_MAX_EP + 16 };
	const char *progress = param_str("progress", "auto");
	struct dpdat_port_info pi;
	int cpu = param_int("cpu", -1), mtu = param_int("mtu", 0);
	int mem = param_int("mem_mb", 1024), tick = param_int("tick_us", 200);
	unsigned int pmtu = 4096;

	ec.extra_words = param_str("eal", "");	/* "-l1;--log-level=7" */
	if (mtu < 0 || mtu > 9600 || mem <= 0) {
		DF_WARN(FI_LOG_CORE, "FI_DPDAT_MTU %d or FI_DPDAT_MEM_MB %d "
			"out of range\n", mtu, mem);
		return -FI_EINVAL;
	}
	if (strcmp(progress, "manual") == 0 || strcmp(progress, "auto") == 0) {
		dc.progress = DPDAT_PROGRESS_INLINE;
		d->auto_progress = progress[0] == 'a';
	} else if (strcmp(progress, "thread") == 0) {
		dc.progress = DPDAT_PROGRESS_THREAD;
		d->auto_progress = true;
	} else {
		DF_WARN(FI_LOG_CORE, "FI_DPDAT_PROGRESS \"%s\": auto, manual "
			"or thread\n", progress);
		return -FI_EINVAL;
	}
	if (tick <= 0 || tick > 1000000) {
		DF_WARN(FI_LOG_CORE, "FI_DPDAT_TICK_US %d: 1..1000000\n",
			tick);
		return -FI_EINVAL;
	}
	ec.mem_mb = (unsigned int)mem;
	if (dpdat_eal_attach() != 0) {
		int ret = dpdat_eal_init(&ec);

		if (ret < 0) {
			DF_WARN(FI_LOG_CORE, "EAL%s: %s\n", ret == -EINVAL ?
				" (FI_DPDAT_EAL among others)" : "",
				rte_strerror(-ret));
			return df_errno(-ret);
		}
	}
	dc.port.device = param_str("device", DF_DEFAULT_DEVICE);
	dc.port.ipv4 = param_str("ipv4", DF_DEFAULT_IPV4);
	dc.port.mtu = (uint16_t)mtu;
	dc.pin_cpu = cpu >= 0;
	dc.cpu = cpu >= 0 ? (unsigned int)cpu : 0;
	d->dev = dpdat_dev_open(&dc);
	if (d->dev == NULL) {
		DF_WARN(FI_LOG_CORE, "device %s (ipv4 %s): %s\n",
			dc.port.device, dc.port.ipv4, rte_strerror(rte_errno));
		return df_errno(rte_errno);
	}
	dpdat_port_query(dpdat_dev_port(d->dev), &pi);
	d->ipv4 = pi.ipv4;
	snprintf(d->name, sizeof(d->name), "%s", pi.name);
	while (pmtu + 64 > pi.mtu && pmtu > 256)
		pmtu /= 2;
	d->pmtu = (uint16_t)pmtu;
	if (progress[0] == 'a') {
		pthread_t t;

		tick_us = (unsigned int)tick;
		if (pthread_create(&t, NULL, ticker, d) != 0) {
			DF_WARN(FI_LOG_CORE, "no progress thread\n");
			return -FI_ENOMEM;
		}
		pthread_detach(t);
	}
	DF_INFO(FI_LOG_CORE, "device %s up, memory: %s, progress: %s\n",
		d->name, dpdat_mem_mode_str(dpdat_eal_mem_mode()), progress);
	return 0;
}

const struct df_dev *
df_dev_get(void)
{
	const struct df_dev *d = NULL;

	pthread_mutex_lock(&dev_lock);
	if (!dev_tried) {
		dev_tried = true;
		if (dev_open(&the_dev) != 0)
			the_dev.dev = NULL;
	}
	if (the_dev.dev != NULL)
		d = &the_dev;
	pthread_mutex_unlock(&dev_lock);
	return d;
}

/* The device stays open: see df.h. */
static void
df_cleanup(void)
{
}

struct fi_provider df_prov = {
	.name = DF_PROV_NAME,
	.version = DF_VERSION,
	.fi_version = DF_API_VERSION,
	.getinfo = df_getinfo,
	.fabric = df_fabric_open,
	.cleanup = df_cleanup,
};

FI_EXT_INI
{
	fi_param_define(&df_prov, "device", FI_PARAM_STRING,
			"DPDK device arguments of the port (default: "
			DF_DEFAULT_DEVICE ")");
	fi_param_define(&df_prov, "ipv4", FI_PARAM_STRING,
			"the port's IPv4 address, or auto: its interface's "
			"(af_xdp, af_packet) (default: " DF_DEFAULT_IPV4 ")");
	fi_param_define(&df_prov, "mtu", FI_PARAM_INT,
			"the port's MTU (default: 0, the port's own: memif "
			"4200, beside the kernel the interface's)");
	fi_param_define(&df_prov, "eal", FI_PARAM_STRING,
			"EAL arguments, separated by ';' (default: none)");
	fi_param_define(&df_prov, "cpu", FI_PARAM_INT,
			"CPU of the engine thread (default: -1, not pinned)");
	fi_param_define(&df_prov, "progress", FI_PARAM_STRING,
			"who runs the engine: auto: the application's reads, "
			"and a thread every tick_us when they do not; manual: "
			"the application's reads only (FI_PROGRESS_MANUAL); "
			"thread: an engine thread polling all the time "
			"(default: auto)");
	fi_param_define(&df_prov, "tick_us", FI_PARAM_INT,
			"progress=auto: microseconds between the thread's "
			"runs of the engine (default: 200)");
	fi_param_define(&df_prov, "mem_mb", FI_PARAM_INT,
			"memory of the EAL in MiB; hugepages when that much "
			"is free, else --no-huge (default: 1024)");
	return &df_prov;
}
