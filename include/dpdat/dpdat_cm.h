/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_CM_H
#define DPDAT_CM_H

/**
 * @file
 * Connection management in band: InfiniBand CM messages (REQ, REP, RTU,
 * REJ, DREQ, DREP) sent as UD SENDs to QP1 over the same port as the data.
 * A passive side listens on a service (the DAT conn_qual) with an event
 * queue; an active side connects a QP to (IPv4 address, conn_qual) with
 * private data; the passive side sees the request with that private data and
 * accepts it (binding a QP) or rejects it; both sides get established,
 * rejected, unreachable, disconnected or broken events.
 */

#include <stdint.h>

#include <dpdat/dpdat_qp.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DPDAT_CM_REQ_PDATA_MAX	92	/**< private data in a REQ */
/** ... in a REQ to a conn_qual of at most 0xffff: the IP CM's port space,
 *  where rdma_cm peers listen, and whose REQs begin with rdma_cm's 36-byte
 *  IP header (version, IP version, source port, addresses); the consumer's
 *  private data follows it. */
#define DPDAT_CM_REQ_PDATA_MAX_IP	56
#define DPDAT_CM_REP_PDATA_MAX	196	/**< ... in a REP */
#define DPDAT_CM_REJ_PDATA_MAX	148	/**< ... in a REJ */
#define DPDAT_CM_DREQ_PDATA_MAX	220	/**< ... in a DREQ */

struct dpdat_cm_eq;
struct dpdat_cm_listener;
struct dpdat_cm_conn;

enum dpdat_cm_event_type {
	DPDAT_CM_CONNECT_REQUEST = 1,	/**< passive: accept or reject it */
	DPDAT_CM_ESTABLISHED,		/**< both: the QP is connected (RTS) */
	DPDAT_CM_REJECTED,		/**< the peer said no (to our REQ or REP) */
	DPDAT_CM_UNREACHABLE,		/**< no answer (ARP, REQ or REP) */
	DPDAT_CM_DISCONNECTED,		/**< both: orderly end; QP flushed */
	DPDAT_CM_BROKEN,		/**< both: the QP failed (peer gone) */
};

/** IB CM reject reasons dpdat sends. */
#define DPDAT_CM_REJ_NO_RESOURCES	3	/**< the request could not be queued */
#define DPDAT_CM_REJ_INVALID_SERVICE	8	/**< nobody listens there */
#define DPDAT_CM_REJ_CONSUMER		28	/**< the application said no */

/** An event. For CONNECT_REQUEST, conn is new and the peer's QP details
 *  are already known to it. */
struct dpdat_cm_event {
	enum dpdat_cm_event_type type;
	struct dpdat_cm_conn *conn;
	struct dpdat_cm_listener *listener;	/**< CONNECT_REQUEST only */
	uint64_t conn_qual;
	uint32_t peer_ipv4;		/**< network order */
	uint16_t reason;		/**< REJECTED: the IB CM reason */
	uint16_t private_data_len;
	uint8_t private_data[DPDAT_CM_DREQ_PDATA_MAX];
};

/**
 * Create an event queue for connection events. Thread safe to poll.
 *
 * @return The queue, or NULL with rte_errno: EBADF, EINVAL, ENOMEM.
 */
struct dpdat_cm_eq *
dpdat_cm_eq_create(struct dpdat_dev *dev, uint32_t size);

/**
 * Take one event; in inline progress mode this runs the engine first.
 *
 * @return 1 with *ev filled, 0 when none, -EBADF, -EINVAL.
 */
int
dpdat_cm_eq_poll(struct dpdat_cm_eq *eq, struct dpdat_cm_event *ev);

/**
 * Wait up to timeout_ms (-1: forever) for an event and take it.
 *
 * @return 1, 0 on timeout, -EBADF, -EINVAL.
 */
int
dpdat_cm_eq_wait(struct dpdat_cm_eq *eq, struct dpdat_cm_event *ev,
		 int timeout_ms);

/**
 * The eventfd of an event queue, to watch with poll(2) or epoll: from this
 * call on, every event queued writes it. Poll the queue once after taking
 * it, and read it (8 bytes) to clear it before sleeping again. It belongs
 * to the queue (dpdat_cm_eq_free closes it).
 *
 * @return The file descriptor, or -EBADF.
 */
int
dpdat_cm_eq_fd(const struct dpdat_cm_eq *eq);

/** @return 0, -EBADF, -EBUSY (listeners or connections still use it). */
int
dpdat_cm_eq_free(struct dpdat_cm_eq *eq);

/**
 * Listen on a service: connection requests for conn_qual arrive on eq.
 *
 * @return The listener, or NULL with rte_errno: EBADF, EADDRINUSE (someone
 *   listens there already), ENOMEM.
 */
struct dpdat_cm_listener *
dpdat_cm_listen(struct dpdat_dev *dev, uint64_t conn_qual,
		struct dpdat_cm_eq *eq);

/** Stop listening. @return 0, -EBADF. */
int
dpdat_cm_listen_free(struct dpdat_cm_listener *l);

/**
 * Connect qp (created, not connected) to the service conn_qual of the host
 * at ipv4 (network order). Events for the connection go to eq.
 *
 * A conn_qual of at most 0xffff is a port of the IP CM's TCP port space
 * (service ID 0x0000000001060000 | conn_qual), where rdma_cm peers listen:
 * the REQ then begins with rdma_cm's IP header and takes at most
 * DPDAT_CM_REQ_PDATA_MAX_IP bytes of private data; a listener on such a
 * conn_qual takes only REQs with that header and hands on what follows it.
 *
 * @return The connection, or NULL with rte_errno: EBADF, EINVAL (private
 *   data longer than DPDAT_CM_REQ_PDATA_MAX, or DPDAT_CM_REQ_PDATA_MAX_IP
 *   for a conn_qual of at most 0xffff; QP already connected), ENOMEM.
 */
struct dpdat_cm_conn *
dpdat_cm_connect(struct dpdat_qp *qp, uint32_t ipv4, uint64_t conn_qual,
		 const void *pdata, uint16_t plen, struct dpdat_cm_eq *eq);

/**
 * Accept a connection request with qp (created, not connected); the
 * connection's events go to eq.
 *
 * @return 0, -EBADF (not a request, a QP or an event queue of this device),
 *   -EINVAL (private data too long, or the QP cannot take the request's
 *   path MTU: reject then), -EBUSY (not a pending request, or the QP is
 *   already connected).
 */
int
dpdat_cm_accept(struct dpdat_cm_conn *c, struct dpdat_qp *qp,
		const void *pdata, uint16_t plen, struct dpdat_cm_eq *eq);

/**
 * Reject a connection request with private data.
 *
 * @return 0, -EBADF, -EINVAL, -EBUSY (not a pending request).
 */
int
dpdat_cm_reject(struct dpdat_cm_conn *c, const void *pdata, uint16_t plen);

/**
 * Disconnect: the QP goes to the error state (pending work flushed), a DREQ
 * tells the peer, and DISCONNECTED arrives when it answers or times out.
 *
 * @return 0, -EBADF, -EINVAL (private data too long), -EBUSY (neither
 *   established nor accepted and waiting for the RTU).
 */
int
dpdat_cm_disconnect(struct dpdat_cm_conn *c, const void *pdata,
		    uint16_t plen);

/**
 * Release a connection after its last event (rejected, unreachable,
 * disconnected, broken), or a request the consumer does not want (it is
 * rejected). The QP stays with the caller.
 *
 * @return 0, -EBADF, -EBUSY (still connected or connecting).
 */
int
dpdat_cm_conn_free(struct dpdat_cm_conn *c);

/** The QP of a connection (NULL before accept on the passive side). */
struct dpdat_qp *
dpdat_cm_conn_qp(const struct dpdat_cm_conn *c);

/**
 * Offer dpdat's extensions in band, for a QP the consumer connected itself
 * (dpdat_qp_connect() with details exchanged out of band, as verbs
 * programs do): today ACKs riding on requests (DPDAT_QP_EXT_ACK_RIDE).
 *
 * Call it once the QP is connected: the offer names both QPs and the
 * peer's first send PSN as the QP was told it, which the peer checks. It
 * goes to the peer's QP1 as a MAD of a vendor-specific class, a few times
 * over about 130 ms; a plain RoCE peer's GSI drops it, and the
 * QP speaks plain RoCEv2 RC. A dpdat peer whose QP (connected to this
 * one) made the same offer answers, and from then on both QPs use the
 * extension: dpdat_qp_query() shows it in ext. An offer that arrives
 * before the peer's QP offers is dropped; the peer's own offer, later,
 * is answered. Until agreed, the QP understands the extension from the
 * peer but does not use it.
 *
 * @return 0, -EBADF, -EINVAL (the QP is not connected, RTR or RTS),
 *   -ENOTSUP (the device speaks plain RoCEv2 only:
 *   dpdat_dev_conf.go_back_n), -ENOMEM.
 */
int
dpdat_cm_offer(struct dpdat_qp *qp);

#ifdef __cplusplus
}
#endif

#endif /* DPDAT_CM_H */
