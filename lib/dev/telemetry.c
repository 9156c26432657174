/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* DPDK telemetry commands over dpdat's devices (dpdk-telemetry.py). */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <rte_telemetry.h>

#include "dev_priv.h"

/* Devices the telemetry commands can see. */
#define TEL_MAX_DEVS 16
static struct dpdat_dev *tel_devs[TEL_MAX_DEVS];
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;

static void
tel_dev(struct dpdat_dev *dev, bool add)
{
	pthread_mutex_lock(&tel_lock);
	for (unsigned int i = 0; i < TEL_MAX_DEVS; i++) {
		if (add && tel_devs[i] == NULL) {
			tel_devs[i] = dev;
			break;
		}
		if (!add && tel_devs[i] == dev)
			tel_devs[i] = NULL;
	}
	pthread_mutex_unlock(&tel_lock);
}

/* /dpdat/qps: the QP numbers of every device */
static int
tel_qps_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	pthread_mutex_lock(&tel_lock);
	for (unsigned int i = 0; i < TEL_MAX_DEVS; i++) {
		struct dpdat_dev *dev = tel_devs[i];

		if (dev == NULL)
			continue;
		pthread_mutex_lock(&dev->rc.lock);
		for (uint32_t k = 0; k < dev->rc.n_qps; k++)
			rte_tel_data_add_array_int(d, (int)dev->rc.active[k]->qpn);
		pthread_mutex_unlock(&dev->rc.lock);
	}
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

/* /dpdat/qp_stats,<qpn>: the counters of one QP */
static int
tel_qp_stats_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dpdat_qp_stats st = { 0 };
	bool found = false;
	char *end;
	long qpn;

	if (params == NULL || (qpn = strtol(params, &end, 0), *end != '\0'))
		return -EINVAL;
	pthread_mutex_lock(&tel_lock);
	for (unsigned int i = 0; i < TEL_MAX_DEVS && !found; i++) {
		struct dpdat_dev *dev = tel_devs[i];

		if (dev == NULL)
			continue;
		pthread_mutex_lock(&dev->rc.lock);
		for (uint32_t k = 0; k < dev->rc.n_qps && !found; k++)
			if (dev->rc.active[k]->qpn == qpn) {
				st = dev->rc.active[k]->st;
				found = true;
			}
		pthread_mutex_unlock(&dev->rc.lock);
	}
	pthread_mutex_unlock(&tel_lock);
	if (!found)
		return -ENOENT;
	rte_tel_data_start_dict(d);
#define U64(f) rte_tel_data_add_dict_u64(d, #f, st.f)
	U64(tx_pkts); U64(rx_pkts); U64(tx_bytes); U64(rx_bytes);
	U64(retransmits); U64(timeouts); U64(naks_sent); U64(naks_rcvd);
	U64(rnr_naks_sent); U64(rnr_naks_rcvd); U64(dup_rcvd); U64(out_of_seq);
#undef U64
	return 0;
}

RTE_INIT(dpdat_dev_telemetry)
{
	rte_telemetry_register_cmd("/dpdat/qps", tel_qps_cb,
		"QP numbers of dpdat's devices. No parameters");
	rte_telemetry_register_cmd("/dpdat/qp_stats", tel_qp_stats_cb,
		"Counters of a QP. Parameters: int qpn");
}

void
dev_tel_add(struct dpdat_dev *dev)
{
	tel_dev(dev, true);
}

void
dev_tel_del(struct dpdat_dev *dev)
{
	tel_dev(dev, false);
}
