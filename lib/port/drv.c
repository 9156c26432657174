/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The kinds of link dpdat knows, one struct port_drv each (port_priv.h):
 * memif (memif.c), af_xdp and af_packet (kern.c), and here any other
 * device: a PCI NIC, with the kernel interface it may have beside DPDK
 * (mlx5's bifurcated driver), or a virtual device dpdat has no quirks for
 * (net_ring, net_null). A new kind of link is a new entry in drvs[].
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_errno.h>

#include "port_priv.h"

/* The PCI device's kernel interface, if it has one. */
static int
other_ifname(const char *device, const char *bus, char *ifname)
{
	char name[RTE_DEV_NAME_MAX_LEN];
	size_t n = strcspn(device, ",");

	if (bus == NULL || strcmp(bus, "pci") != 0 || n >= sizeof(name))
		return -ENOENT;
	memcpy(name, device, n);
	name[n] = '\0';
	return port_kern_pci_ifname(name, ifname);
}

/* A device that is no virtual one: most likely a PCI NIC the EAL was not
 * given or that no DPDK driver holds. */
static int
other_probe_failed(const char *device, int ret)
{
	size_t n = strcspn(device, ",");

	if (strncmp(device, "net_", 4) == 0)
		return 0;
	PORT_LOG(ERR, "cannot probe PCI device '%.*s' (%s): is it bound to "
		 "vfio-pci or a bifurcated driver (mlx5), and allowed to the "
		 "EAL (-a)? dpdk-devbind.py -s lists devices", (int)n, device,
		 rte_strerror(-ret));
	return -ENODEV;
}

static const struct port_drv port_drv_other = {
	.name = NULL,
	.ifname = other_ifname,
	.probe_failed = other_probe_failed,
};

static const struct port_drv *const drvs[] = {
	&port_drv_memif, &port_drv_af_xdp, &port_drv_af_packet,
};

const struct port_drv *
port_drv_of(const char *name)
{
	for (unsigned int i = 0; i < RTE_DIM(drvs); i++)
		if (strncmp(name, drvs[i]->name, strlen(drvs[i]->name)) == 0)
			return drvs[i];
	return &port_drv_other;
}
