/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Port statistics through DPDK telemetry (usertools/dpdk-telemetry.py):
 *   /dpdat/ports               the DPDK port ids dpdat runs on
 *   /dpdat/port_stats,<id>     dpdat's counters of that port */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "port_priv.h"

#define TEL_MAX_PORTS 32

static struct dpdat_port *tel_ports[TEL_MAX_PORTS];
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;

void
port_telemetry_add(struct dpdat_port *p)
{
	pthread_mutex_lock(&tel_lock);
	for (unsigned int i = 0; i < TEL_MAX_PORTS; i++)
		if (tel_ports[i] == NULL) {
			tel_ports[i] = p;
			break;
		}
	pthread_mutex_unlock(&tel_lock);
}

void
port_telemetry_del(struct dpdat_port *p)
{
	pthread_mutex_lock(&tel_lock);
	for (unsigned int i = 0; i < TEL_MAX_PORTS; i++)
		if (tel_ports[i] == p)
			tel_ports[i] = NULL;
	pthread_mutex_unlock(&tel_lock);
}

static int
tel_ports_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	pthread_mutex_lock(&tel_lock);
	/* a device of several queues once: its queue 0 */
	for (unsigned int i = 0; i < TEL_MAX_PORTS; i++)
		if (tel_ports[i] != NULL && tel_ports[i]->queue == 0)
			rte_tel_data_add_array_int(d, tel_ports[i]->port_id);
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

static int
tel_stats_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dpdat_port_stats st = { 0 }, one;
	struct dpdat_port *p = NULL;
	uint64_t dup_lost = 0, *sum = (uint64_t *)&st, *add = (uint64_t *)&one;
	unsigned int nq = 0;
	char *end;
	long id;

	RTE_BUILD_BUG_ON(sizeof(st) % sizeof(uint64_t) != 0);
	if (params == NULL || *params == '\0')
		return -EINVAL;
	id = strtol(params, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	pthread_mutex_lock(&tel_lock);
	/* the sum over the device's queues: counters of running engines,
	 * a snapshot */
	for (unsigned int i = 0; i < TEL_MAX_PORTS; i++) {
		if (tel_ports[i] == NULL || tel_ports[i]->port_id != id)
			continue;
		p = tel_ports[i];
		one = p->st;
		for (size_t k = 0; k < sizeof(st) / sizeof(*sum); k++)
			sum[k] += add[k];
		dup_lost += p->fault_dup_lost;
		nq++;
	}
	if (p == NULL) {
		pthread_mutex_unlock(&tel_lock);
		return -ENODEV;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", p->name);
	pthread_mutex_unlock(&tel_lock);
	rte_tel_data_add_dict_u64(d, "queues", nq);
#define U64(f) rte_tel_data_add_dict_u64(d, #f, st.f)
	U64(rx_pkts); U64(rx_bytes); U64(tx_pkts); U64(tx_bytes);
	U64(rx_roce); U64(rx_arp); U64(tx_arp); U64(drop_not_ours);
	U64(drop_malformed); U64(drop_tx_full); U64(drop_icrc);
	U64(drop_bad_hdr); U64(drop_no_qp); U64(drop_not_peer);
	U64(fault_drop);
	U64(fault_dup); U64(fault_reorder); U64(fault_corrupt);
	U64(fault_ce);
	U64(captured); U64(capture_lost);
	U64(peer_unmapped);
	U64(rx_steered); U64(drop_steer_full);
#undef U64
	rte_tel_data_add_dict_u64(d, "fault_dup_lost", dup_lost);
	return 0;
}

RTE_INIT(dpdat_port_telemetry)
{
	rte_telemetry_register_cmd("/dpdat/ports", tel_ports_cb,
		"DPDK port ids of dpdat's ports. No parameters");
	rte_telemetry_register_cmd("/dpdat/port_stats", tel_stats_cb,
		"dpdat counters of a port (the sum of its queues). "
		"Parameters: int port_id");
}
