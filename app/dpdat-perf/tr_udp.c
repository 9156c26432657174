/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The kernel-path baseline: the same tests over one UDP socket a side.
 * A message of more than FRAG bytes travels as several datagrams, each with
 * a small header. write_bw and send_bw stream messages; the server
 * acknowledges the count it received whole, and the client keeps at most a
 * window of them unacknowledged, so the figure is delivered goodput. When
 * nothing comes back for STALL_MS the client asks for (write) or takes
 * (read) the count, and reports what was lost instead of waiting for it.
 * read_bw and read_lat ask for size bytes with a small datagram; write_lat
 * and send_lat are a ping-pong of size bytes. The parameters travel in a
 * first hello datagram. Both ends are the same kind of host: the header
 * is in host byte order.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "perf.h"

#define FRAG		65000u		/* payload of one datagram */
#define RX_BATCH	32
#define TX_BATCH	64
#define WIN_BYTES	(4u << 20)	/* unacknowledged bytes at most */
#define SOCK_BUF	(32 << 20)
#define STALL_MS	200
#define STALLS_MAX	25		/* 5 s without an answer: give up */
#define IDLE_MS		30000		/* the server's patience */
#define MS		1000000ull

enum udp_type {
	U_HELLO = 1, U_HELLO_ACK, U_DATA, U_ACK, U_PROBE, U_STATUS, U_READ,
	U_BYE, U_BYE_ACK,
};

struct udp_hdr {
	uint8_t type;
	uint8_t pad;
	uint16_t frag, nfrag;	/* datagram frag of nfrag of the message */
	uint16_t pad2;
	uint64_t seq;		/* message number, counted over the run */
	uint32_t size;		/* message bytes; READ: bytes asked for */
	uint32_t pad3;
	uint64_t count;		/* ACK, STATUS: messages received whole */
	uint64_t dgrams;	/* ACK, STATUS: data datagrams received */
};

/* A receiver putting messages together from their datagrams. They come in
 * order on one flow; a message whose datagrams did not all arrive is
 * dropped when the next one begins. */
struct rx_asm {
	uint64_t seq, done, dgrams;
	uint32_t got;
};

static int sock = -1;
static uint8_t *buf;		/* what we send from */
static uint8_t *rxbuf;		/* RX_BATCH payloads of FRAG bytes */
static struct udp_hdr rxh[RX_BATCH], txh[TX_BATCH];
static struct sockaddr_in rxa[RX_BATCH];
static struct iovec rxv[RX_BATCH][2], txv[TX_BATCH][2];
static struct mmsghdr rxm[RX_BATCH], txm[TX_BATCH];
static unsigned int ntx;

/* The client's account, over the whole run. */
static struct {
	uint64_t seq;		/* messages sent (READs asked) */
	uint64_t done;		/* of them, received whole */
	uint64_t lost;		/* of them, given up */
	uint64_t tx_dg;		/* data datagrams sent (READ: expected) */
	uint64_t rx_dg;		/* of them, received */
	uint64_t lost_dg;
	uint64_t resolved;	/* READ: answers below it are late */
	struct rx_asm in;	/* answers (READ, ping-pong) */
} st;

static uint32_t
nfrag(uint32_t len)
{
	return len > FRAG ? (len + FRAG - 1) / FRAG : 1;
}

static int
asm_add(struct rx_asm *a, const struct udp_hdr *h)
{
	a->dgrams++;
	if (h->frag == 0 || h->seq != a->seq) {
		a->seq = h->seq;
		a->got = 0;
	}
	if (++a->got < h->nfrag)
		return 0;
	a->done++;
	return 1;
}

static void
tx_flush(void)
{
	unsigned int sent = 0;
	int n;

	while (sent < ntx) {
		n = sendmmsg(sock, txm + sent, ntx - sent, 0);
		/* ECONNREFUSED: an ICMP error from before (a server not yet
		 * up); nothing was sent, try again */
		if (n < 0 && errno != EINTR && errno != ECONNREFUSED)
			perf_die("udp: send: %s", strerror(errno));
		sent += n > 0 ? (unsigned int)n : 0;
	}
	ntx = 0;
}

static void
tx_add(const struct udp_hdr *h, const void *data, uint32_t len)
{
	if (ntx == TX_BATCH)
		tx_flush();
	txh[ntx] = *h;
	txv[ntx][1] = (struct iovec){ (void *)(uintptr_t)data, len };
	txm[ntx].msg_hdr.msg_iovlen = len ? 2 : 1;
	ntx++;
}

/* Queue a message: len bytes of payload (0 for a READ request). */
static void
send_msg(uint8_t type, uint64_t seq, uint32_t size, uint32_t len)
{
	struct udp_hdr h = { .type = type, .seq = seq, .size = size,
			     .nfrag = (uint16_t)nfrag(len) };
	uint32_t off = 0;

	do {
		tx_add(&h, buf + off, perf_min(FRAG, len - off));
		off += FRAG;
		h.frag++;
	} while (off < len);
}

static void
send_ctl(uint8_t type, uint64_t count, uint64_t dgrams, const void *data,
	 uint32_t len)
{
	struct udp_hdr h = { .type = type, .nfrag = 1, .count = count,
			     .dgrams = dgrams };

	tx_add(&h, data, len);
}

/* Datagrams (at most RX_BATCH) received by the deadline, or 0. Latency
 * tests spin (as perftest polls), the others sleep in poll(). */
static int
rx(uint64_t deadline, int spin)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	uint64_t now;
	int n, k;

	for (;;) {
		for (k = 0; k < RX_BATCH; k++)
			rxm[k].msg_hdr.msg_namelen = sizeof(rxa[k]);
		n = recvmmsg(sock, rxm, RX_BATCH, MSG_DONTWAIT, NULL);
		for (k = 0; k < n; k++)	/* runts: not ours */
			if (rxm[k].msg_len < sizeof(struct udp_hdr))
				rxh[k].type = 0;
		if (n > 0)
			return n;
		if (n < 0 && errno != EAGAIN && errno != EINTR &&
		    errno != ECONNREFUSED)
			perf_die("udp: receive: %s", strerror(errno));
		now = perf_now_ns();
		if (now >= deadline)
			return 0;
		if (!spin)
			poll(&p, 1, (int)((deadline - now) / MS) + 1);
	}
}

static void
sock_buf(int force, int opt, const char *what)
{
	int bytes = SOCK_BUF;
	socklen_t len = sizeof(bytes);

	/* beyond net.core.[rw]mem_max only as root */
	if (setsockopt(sock, SOL_SOCKET, force, &bytes, sizeof(bytes)) == 0)
		return;
	setsockopt(sock, SOL_SOCKET, opt, &bytes, sizeof(bytes));
	getsockopt(sock, SOL_SOCKET, opt, &bytes, &len);
	fprintf(stderr, "dpdat-perf: udp: %s buffer %d B (more needs root): "
		"large messages may be lost\n", what, bytes);
}

static void
setup(void)
{
	struct sockaddr_in me = { .sin_family = AF_INET };

	buf = calloc(1, PERF_MAX_SIZE);
	rxbuf = malloc((size_t)RX_BATCH * FRAG);
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	if (buf == NULL || rxbuf == NULL || sock < 0)
		perf_die("udp: setup: %s", strerror(errno));
	for (int k = 0; k < RX_BATCH; k++) {
		rxv[k][0] = (struct iovec){ &rxh[k], sizeof(rxh[k]) };
		rxv[k][1] = (struct iovec){ rxbuf + (size_t)k * FRAG, FRAG };
		rxm[k].msg_hdr = (struct msghdr){ .msg_name = &rxa[k],
			.msg_iov = rxv[k], .msg_iovlen = 2 };
	}
	for (int k = 0; k < TX_BATCH; k++) {
		txv[k][0] = (struct iovec){ &txh[k], sizeof(txh[k]) };
		txm[k].msg_hdr = (struct msghdr){ .msg_iov = txv[k] };
	}
	sock_buf(SO_SNDBUFFORCE, SO_SNDBUF, "send");
	sock_buf(SO_RCVBUFFORCE, SO_RCVBUF, "receive");
	if (perf_opt.ip != NULL &&
	    inet_pton(AF_INET, perf_opt.ip, &me.sin_addr) != 1)
		perf_die("udp: bad --ip %s", perf_opt.ip);
	if (perf_opt.server)
		me.sin_port = htons(perf_opt.service);
	if (bind(sock, (struct sockaddr *)&me, sizeof(me)) != 0)
		perf_die("udp: bind to port %u: %s", ntohs(me.sin_port),
			 strerror(errno));
}

/* Server: wait for the hello, talk only to its sender from then on. */
static void
accept_hello(struct perf_params *pr)
{
	uint64_t deadline = perf_now_ns() + PERF_WAIT_CLIENT_MS * MS;

	for (;;) {
		int n = rx(deadline, 0);

		if (n == 0)
			perf_die("udp: no client in %d s", PERF_WAIT_CLIENT_MS /
							   1000);
		for (int k = 0; k < n; k++) {
			if (rxh[k].type != U_HELLO ||
			    rxm[k].msg_len < sizeof(rxh[k]) + sizeof(*pr))
				continue;
			memcpy(pr, rxbuf + (size_t)k * FRAG, sizeof(*pr));
			if (perf_params_check(pr) != 0)
				perf_die("udp: bad parameters from the client");
			if (connect(sock, (struct sockaddr *)&rxa[k],
				    sizeof(rxa[k])) != 0)
				perf_die("udp: connect: %s", strerror(errno));
			send_ctl(U_HELLO_ACK, 0, 0, NULL, 0);
			tx_flush();
			return;
		}
	}
}

/* Client: send a control datagram; 1 if the answer came in STALL_MS. */
static int
ask(uint8_t type, uint8_t answer, const void *data, uint32_t len)
{
	uint64_t deadline = perf_now_ns() + STALL_MS * MS;
	int n;

	send_ctl(type, 0, 0, data, len);
	tx_flush();
	while ((n = rx(deadline, 0)) > 0)
		for (int k = 0; k < n; k++)
			if (rxh[k].type == answer)
				return 1;
	return 0;
}

/* Client: hello every STALL_MS until the server answers. */
static void
send_hello(const struct perf_params *pr)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(perf_opt.service) };

	if (inet_pton(AF_INET, perf_opt.peer, &to.sin_addr) != 1)
		perf_die("udp: bad server address %s", perf_opt.peer);
	if (connect(sock, (struct sockaddr *)&to, sizeof(to)) != 0)
		perf_die("udp: connect: %s", strerror(errno));
	for (int t = 0; t < 20 * 1000 / STALL_MS; t++)
		if (ask(U_HELLO, U_HELLO_ACK, pr, sizeof(*pr)))
			return;
	perf_die("udp: no answer from %s port %u in 20 s", perf_opt.peer,
		 perf_opt.service);
}

static void
connect_peer(struct perf_params *pr, struct perf_info *info)
{
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	char ip[INET_ADDRSTRLEN];

	if (perf_opt.server)
		accept_hello(pr);
	else
		send_hello(pr);
	getsockname(sock, (struct sockaddr *)&me, &len);
	inet_ntop(AF_INET, &me.sin_addr, ip, sizeof(ip));
	snprintf(info->dev, sizeof(info->dev), "kernel UDP socket");
	info->type = "UDP (kernel sockets)";
	info->cm = "OFF";
	info->exchange = "UDP hello datagram";
	info->mtu = FRAG;
	snprintf(info->local[0], sizeof(info->local[0]), "IP %s UDP port %u",
		 ip, ntohs(me.sin_port));
	info->nlocal = 1;
}

/* Everything not received whole by now never will be. */
static void
resolve(void)
{
	st.lost = st.seq - st.done;
	st.lost_dg = st.tx_dg - st.rx_dg;
	st.resolved = st.seq;
}

/* A datagram for a bandwidth client. */
static void
take(const struct udp_hdr *h)
{
	if ((h->type == U_ACK || h->type == U_STATUS) && h->count >= st.done) {
		st.done = h->count;
		st.rx_dg = h->dgrams;
		if (h->type == U_STATUS)
			resolve();
	} else if (h->type == U_DATA && h->seq >= st.resolved) {
		st.rx_dg++;
		st.done += (uint64_t)asm_add(&st.in, h);
	}
}

static void
warn_lost(const char *what, uint64_t n, uint32_t size)
{
	if (n != 0)
		fprintf(stderr, "dpdat-perf: udp: %lu %s lost at %u B (not "
			"counted)\n", (unsigned long)n, what, size);
}

static void
udp_bw(const struct perf_params *pr, uint32_t size, struct perf_bw *res)
{
	const int rd = pr->test == R_BW;
	const uint32_t win = perf_min(pr->depth, perf_max(WIN_BYTES / size, 1));
	uint64_t posted = 0, done0 = st.done, lost0 = st.lost_dg;
	struct perf_meter m;
	int more, n, stalls = 0;

	perf_meter_start(&m);
	for (;;) {
		while ((more = perf_more(pr, &m, posted)) &&
		       st.seq - st.done - st.lost < win) {
			send_msg(rd ? U_READ : U_DATA, st.seq++, size,
				 rd ? 0 : size);
			st.tx_dg += nfrag(size);
			posted++;
		}
		tx_flush();
		if (!more && st.seq - st.done - st.lost == 0)
			break;
		n = rx(perf_now_ns() + STALL_MS * MS, 0);
		if (n == 0 && ++stalls > STALLS_MAX)
			perf_die("udp: no answer from the server for %d s",
				 STALL_MS * STALLS_MAX / 1000);
		if (n == 0 && rd)
			resolve();
		else if (n == 0)
			send_ctl(U_PROBE, 0, 0, NULL, 0);
		for (int k = 0; k < n; k++)
			take(&rxh[k]);
		stalls = n > 0 ? 0 : stalls;
		perf_meter_tick(&m, st.done - done0, size);
	}
	perf_meter_end(&m, st.done - done0, size, res);
	res->lost = st.lost_dg - lost0;
	warn_lost("datagrams", res->lost, size);
}

/* Spin until message st.seq came back whole, or STALL_MS passed. */
static int
wait_answer(void)
{
	uint64_t deadline = perf_now_ns() + STALL_MS * MS;
	int n;

	while ((n = rx(deadline, 1)) > 0)
		for (int k = 0; k < n; k++)
			if (rxh[k].type == U_DATA && rxh[k].seq == st.seq &&
			    asm_add(&st.in, &rxh[k]))
				return 1;
	return 0;
}

/* Ping-pong (write_lat, send_lat) or READ round trips; a round trip lost
 * is repeated, not counted. */
static void
udp_lat(const struct perf_params *pr, uint32_t size, double *rtt)
{
	const int rd = pr->test == R_LAT;
	const uint32_t warm = perf_warmup(pr, size);
	uint32_t i = 0, lost = 0, stalls = 0;
	uint64_t t;

	while (i < warm + pr->iters) {
		t = perf_now_ns();
		send_msg(rd ? U_READ : U_DATA, st.seq, size, rd ? 0 : size);
		tx_flush();
		if (wait_answer()) {
			if (i >= warm)
				rtt[i - warm] =
					(double)(perf_now_ns() - t) / 1e3;
			i++;
			stalls = 0;
		} else if (lost++, ++stalls > STALLS_MAX) {
			perf_die("udp: no answer from the server for %d s",
				 STALL_MS * STALLS_MAX / 1000);
		}
		st.seq++;
	}
	warn_lost("round trips", lost, size);
}

/* One datagram for the server; nonzero at the end of the test. */
static int
serve_one(const struct perf_params *pr, const struct udp_hdr *h,
	  struct rx_asm *in)
{
	switch (h->type) {
	case U_DATA:
		if (asm_add(in, h) && perf_is_lat(pr->test))
			send_msg(U_DATA, h->seq, h->size, h->size);
		break;
	case U_READ:
		send_msg(U_DATA, h->seq, h->size, perf_min(h->size,
							   PERF_MAX_SIZE));
		break;
	case U_PROBE:
		send_ctl(U_STATUS, in->done, in->dgrams, NULL, 0);
		break;
	case U_HELLO:	/* our HELLO_ACK was lost */
		send_ctl(U_HELLO_ACK, 0, 0, NULL, 0);
		break;
	case U_BYE:
		send_ctl(U_BYE_ACK, 0, 0, NULL, 0);
		return 1;
	}
	return 0;
}

static void
udp_serve(const struct perf_params *pr)
{
	struct rx_asm in = { .seq = UINT64_MAX };
	uint64_t acked = 0;
	int n, end = 0;

	while (!end) {
		n = rx(perf_now_ns() + IDLE_MS * MS, perf_is_lat(pr->test));
		if (n == 0)
			perf_die("udp: the client was silent for %d s",
				 IDLE_MS / 1000);
		for (int k = 0; k < n && !end; k++)
			end = serve_one(pr, &rxh[k], &in);
		if (in.done != acked && !perf_is_lat(pr->test)) {
			acked = in.done;
			send_ctl(U_ACK, in.done, in.dgrams, NULL, 0);
		}
		tx_flush();
	}
}

/* The client says goodbye (a few times, the server may have gone with
 * its answer lost); both close. */
static void
finish(void)
{
	for (int t = 0; !perf_opt.server && t < 5; t++)
		if (ask(U_BYE, U_BYE_ACK, NULL, 0))
			break;
	close(sock);
	free(buf);
	free(rxbuf);
}

const struct perf_transport perf_udp = {
	.name = "udp", .max_qps = 1,
	.setup = setup, .connect = connect_peer, .bw = udp_bw,
	.lat = udp_lat, .serve = udp_serve, .finish = finish,
};
