/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "pair.h"

int
pair_fork(struct pair *p, const struct pair_conf *c)
{
	struct dpdat_eal_conf ec = { .program = "dpdat", .mem_mb = 512 };
	struct dpdat_dev_conf dc = { .progress = c->progress };
	int to_client[2], to_server[2];
	char devargs[160], go;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	snprintf(p->sock, sizeof(p->sock), "/tmp/dpdat-pair-%d.sock",
		 (int)getpid());
	unlink(p->sock);
	if (pipe(to_client) != 0 || pipe(to_server) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	p->server = pid != 0;
	p->child = pid;
	p->name = p->server ? "server" : "client";
	p->rd = p->server ? to_server[0] : to_client[0];
	p->wr = p->server ? to_client[1] : to_server[1];
	close(p->server ? to_server[1] : to_client[1]);
	close(p->server ? to_client[0] : to_server[0]);
	if (dpdat_eal_init(&ec) < 0)
		return -1;
	snprintf(devargs, sizeof(devargs), "net_memif0,role=%s,socket=%s",
		 p->name, p->sock);
	dc.port.device = devargs;
	dc.port.ipv4 = p->server ? "198.18.0.1" : "198.18.0.2";
	dc.port.mtu = c->mtu;
	/* the memif client must find the server's socket: the server comes
	 * up first and says so over the pipe */
	dc.port.link_wait_s = p->server ? 0 : 20;
	if (!p->server && read(p->rd, &go, 1) != 1)
		return -1;
	p->dev = dpdat_dev_open(&dc);
	if (p->dev == NULL) {
		fprintf(stderr, "%s: device: %s\n", p->name,
			rte_strerror(rte_errno));
		return -1;
	}
	if (p->server) {
		struct dpdat_port_info pi;
		uint64_t t0 = rte_get_tsc_cycles();

		if (write(p->wr, "g", 1) != 1)
			return -1;
		do {
			rte_delay_us_sleep(10000);
			dpdat_port_query(dpdat_dev_port(p->dev), &pi);
		} while (!pi.link_up &&
			 rte_get_tsc_cycles() - t0 < 20 * rte_get_tsc_hz());
		if (!pi.link_up) {
			fprintf(stderr, "server: memif link down after 20 s\n");
			return -1;
		}
	}
	p->pz = dpdat_pz_create(dpdat_dev_domain(p->dev));
	return p->pz != NULL ? 0 : -1;
}

int
pair_swap(struct pair *p, const char *mine, char *theirs, size_t len)
{
	char buf[256];
	size_t n = strlen(mine) + 1, got = 0;
	ssize_t r;

	if (n > sizeof(buf) || write(p->wr, mine, n) != (ssize_t)n)
		return -1;
	/* one message at a time, a byte per read: two messages in flight must
	 * not be read as one (the second was lost that way); the engine
	 * keeps running while we wait (inline progress) */
	while (got == 0 || buf[got - 1] != '\0') {
		struct pollfd pfd = { .fd = p->rd, .events = POLLIN };

		if (got == sizeof(buf))
			return -1;
		if (poll(&pfd, 1, 0) == 0) {
			/* a system call per 256 engine runs, not per run */
			for (int i = 0; i < 256; i++)
				if (p->dev == NULL ||
				    dpdat_dev_progress(p->dev) == -EBUSY) {
					poll(&pfd, 1, 10);
					break;
				}
			continue;
		}
		r = read(p->rd, buf + got, 1);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	snprintf(theirs, len, "%s", buf);
	return 0;
}

#define PAIR_SERVICE 7471

struct pair_region {	/* the private data both ways */
	uint64_t addr;
	uint32_t rkey;
} __attribute__((packed));

static int
pair_event(struct pair *p, enum dpdat_cm_event_type type,
	   struct dpdat_cm_event *ev)
{
	if (dpdat_cm_eq_wait(p->eq, ev, 10000) != 1 || ev->type != type) {
		fprintf(stderr, "%s: CM event %d, wanted %d\n", p->name,
			ev->type, type);
		return -1;
	}
	return 0;
}

int
pair_qp(struct pair *p, struct dpdat_cq *cq, uint16_t pmtu, uint64_t addr,
	uint32_t rkey, struct dpdat_qp **qpp, uint64_t *peer_addr,
	uint32_t *peer_rkey)
{
	struct dpdat_qp_conf qc = { .pz = p->pz, .send_cq = cq, .recv_cq = cq,
				    .max_send_wr = 256, .max_recv_wr = 256 };
	struct pair_region mine = { addr, rkey }, theirs;
	struct dpdat_cm_event ev;
	struct dpdat_qp *qp;
	char line[16];
	uint32_t ip;

	(void)pmtu;	/* the CM agrees on the path MTU of the port */
	qp = dpdat_qp_create(p->dev, &qc);
	p->eq = dpdat_cm_eq_create(p->dev, 16);
	if (qp == NULL || p->eq == NULL)
		return -1;
	if (p->server) {
		p->listener = dpdat_cm_listen(p->dev, PAIR_SERVICE, p->eq);
		if (p->listener == NULL ||
		    pair_swap(p, "listening", line, sizeof(line)) != 0 ||
		    pair_event(p, DPDAT_CM_CONNECT_REQUEST, &ev) != 0)
			return -1;
		memcpy(&theirs, ev.private_data, sizeof(theirs));
		p->conn = ev.conn;
		if (dpdat_cm_accept(p->conn, qp, &mine, sizeof(mine),
				    p->eq) != 0 ||
		    pair_event(p, DPDAT_CM_ESTABLISHED, &ev) != 0)
			return -1;
	} else {
		inet_pton(AF_INET, "198.18.0.1", &ip);
		if (pair_swap(p, "connecting", line, sizeof(line)) != 0)
			return -1;
		p->conn = dpdat_cm_connect(qp, ip, PAIR_SERVICE, &mine,
					   sizeof(mine), p->eq);
		if (p->conn == NULL ||
		    pair_event(p, DPDAT_CM_ESTABLISHED, &ev) != 0)
			return -1;
		memcpy(&theirs, ev.private_data, sizeof(theirs));
	}
	*peer_addr = theirs.addr;
	*peer_rkey = theirs.rkey;
	*qpp = qp;
	return 0;
}

/* Orderly end of the connection: the client disconnects, both wait for
 * DISCONNECTED. Before the QP is freed. */
void
pair_disconnect(struct pair *p)
{
	struct dpdat_cm_event ev;

	if (p->conn == NULL)
		return;
	if (!p->server)
		dpdat_cm_disconnect(p->conn, NULL, 0);
	if (dpdat_cm_eq_wait(p->eq, &ev, 5000) == 1 &&
	    ev.type == DPDAT_CM_DISCONNECTED)
		dpdat_cm_conn_free(p->conn);
	p->conn = NULL;
}

int
pair_finish(struct pair *p, int status)
{
	int st = 0;

	/* a last round trip: neither side closes while the other still
	 * needs its ACKs */
	if (p->dev != NULL) {
		char b[8];
		uint64_t t0 = rte_get_tsc_cycles();

		while (rte_get_tsc_cycles() - t0 < rte_get_tsc_hz() / 5)
			dpdat_dev_progress(p->dev);
		pair_swap(p, "bye", b, sizeof(b));
	}
	close(p->rd);
	close(p->wr);
	/* stop polling and close the port before the process goes */
	if (p->listener != NULL)
		dpdat_cm_listen_free(p->listener);
	if (p->eq != NULL)
		dpdat_cm_eq_free(p->eq);
	if (p->pz != NULL)
		dpdat_pz_free(p->pz);
	if (p->dev != NULL && dpdat_dev_close(p->dev) == 0)
		dpdat_eal_cleanup();
	if (p->server && p->child > 0) {
		waitpid(p->child, &st, 0);
		unlink(p->sock);
		if (status == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
			status = 1;
	}
	return status;
}
