/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_VERBS_PRIVATE_H
#define DPDAT_VERBS_PRIVATE_H

/*
 * What libdpdat-verbs exports to libdpdat-rdmacm alone (symbol version
 * DPDAT_VERBS_PRIVATE): the objects behind the verbs ones. No application
 * calls these.
 */

#include <sys/epoll.h>

#include <infiniband/verbs.h>

struct dpdat_dev;
struct dpdat_qp;

/* dpdat0's context, opened on first use, shared by every rdma_cm id;
 * NULL with errno when dpdat0 does not open. */
struct ibv_context *dpdat_verbs_context(void);
/* The dpdat device of a dpdat0 context; NULL for another device's. */
struct dpdat_dev *dpdat_verbs_dev(struct ibv_context *ctx);
/* The dpdat QP of a dpdat0 QP; NULL for another device's. */
struct dpdat_qp *dpdat_verbs_qp(struct ibv_qp *qp);
/* verbs' state of a QP the program's rdma_cm call moved. */
void dpdat_verbs_qp_state(struct ibv_qp *qp, enum ibv_qp_state state);
/* A QP rdma_cm connects: its verbs state follows the dpdat QP's. */
void dpdat_verbs_qp_cm(struct ibv_qp *qp);
/* epoll_wait(epfd, ev, 1, timeout_ms) for a wait on dpdat0's behalf. With
 * inline progress only the program's calls run the engine, and this one
 * waits for what the engine receives: it runs the engine and looks again
 * until an event, the timeout (-1: none) or an error (spinning, as an
 * inline program polls); with timeout 0, once. */
int dpdat_verbs_wait_fd(int epfd, struct epoll_event *ev, int timeout_ms);

#endif /* DPDAT_VERBS_PRIVATE_H */
