/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * The raw baseline (--transport=raw): the link itself under the very same
 * port and EAL setup as the dpdat transport, moving the frames dpdat would
 * put on the wire for a WRITE of that size (Ethernet, IPv4, UDP 4791, BTH,
 * a RETH on the first, the payload, 4 bytes where the ICRC goes), with no
 * engine: no ICRC, no PSNs, no ACKs, no completions.
 *   - latency: the client sends a message's frames, the server sends each
 *     frame straight back (addresses swapped), the client times the round
 *     trip of the whole message;
 *   - bandwidth: the client fills frames from its buffer as fast as the
 *     device takes them, the server copies every payload out into its
 *     buffer and counts whole messages; the figure is what arrived.
 * The parameters and the end travel as in the dpdat transport (its CM
 * connection); during the test neither side runs the engine. Frames name
 * no QP (QPN 0xffffff), so a late one the engine sees is dropped.
 *
 * --transport=bare (write_lat): the same ping-pong with nothing of dpdat's
 * port layer in it, the floor of the link: the DPDK device's own
 * rte_eth_rx_burst()/rte_eth_tx_burst() on queue 0, each frame copied from
 * one prepared once a size, the server swapping the addresses and sending
 * the frame it got straight back. What raw costs beyond bare is dpdat's
 * port layer (classification, counters, frame building).
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#include <dpdat/dpdat.h>
#include <dpdat/dpdat_port.h>
#include <dpdat/dpdat_qp.h>

#include "perf.h"

#define RAW_HDR		(RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + \
			 sizeof(struct rte_udp_hdr))
#define RAW_BTH		12
#define RAW_RETH	16
#define RAW_ICRC	4
#define RAW_BURST	32
#define RAW_MAGIC	0x44504457u	/* control frames */
#define RAW_RETRY_NS	(50ull * 1000 * 1000)
#define RAW_GIVE_UP_NS	(10ull * 1000 * 1000 * 1000)

enum raw_kind { RAW_MARK = 1, RAW_MARK_ACK, RAW_BYE, RAW_BYE_ACK };

struct raw_ctl {
	uint32_t magic, kind, seq, pad;
	uint64_t count;		/* MARK_ACK: whole messages received so far */
};

/* BTH opcodes, as dpdat's WRITEs (and a SEND only for control) */
enum { OP_W_FIRST = 0x06, OP_W_MIDDLE = 0x07, OP_W_LAST = 0x08,
       OP_W_ONLY = 0x0a, OP_SEND_ONLY = 0x04 };

static struct dpdat_port *port;
static uint16_t port_id;	/* its DPDK device, for --transport=bare */
static bool bare;
static struct rte_mempool *pool;
static uint8_t hdr[RAW_HDR];	/* client: Ethernet/IPv4/UDP to the server */
static uint16_t pmtu;
static uint32_t ctl_seq;

static void
raw_setup(void)
{
	perf_dpdat.setup();
}

static void
bare_setup(void)
{
	bare = true;
	perf_dpdat.setup();
}

/* The link's bursts: dpdat's port layer, or with bare the device's own. */
static uint16_t
rx_burst(struct rte_mbuf **m, uint16_t n)
{
	return bare ? rte_eth_rx_burst(port_id, 0, m, n) :
		      dpdat_port_rx_burst(port, m, n);
}

static uint16_t
tx_burst(struct rte_mbuf **m, uint16_t n)
{
	return bare ? rte_eth_tx_burst(port_id, 0, m, n) :
		      dpdat_port_tx_burst(port, m, n);
}

static void
raw_connect(struct perf_params *pr, struct perf_info *info)
{
	struct dpdat_port_info pi;
	struct dpdat_neigh nb[64];
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)hdr;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint32_t peer = 0;
	int n, k;

	perf_dpdat.connect(pr, info);
	info->type = bare ? "bare frames (rte_eth bursts, no dpdat port)" :
		     "raw frames (no RoCE engine)";
	info->exchange = "dpdat CM private data, then bare frames";
	port = dpdat_dev_port(perf_dpdat_dev());
	pmtu = perf_dpdat_pmtu();
	/* one segment a frame: room for the largest */
	pool = rte_pktmbuf_pool_create("perf_raw", 4095, 256, 0,
				       RTE_PKTMBUF_HEADROOM + RAW_HDR +
				       RAW_BTH + RAW_RETH + 4096 + RAW_ICRC,
				       -1);
	if (pool == NULL || port == NULL || pmtu == 0)
		perf_die("raw: no frame pool or port");
	dpdat_port_query(port, &pi);
	port_id = pi.port_id;
	if (perf_opt.server)
		return;		/* it answers with the client's addresses */
	if (inet_pton(AF_INET, perf_opt.peer, &peer) != 1)
		perf_die("raw: '%s' is no IPv4 address", perf_opt.peer);
	/* the CM resolved the server's MAC for the connection */
	n = dpdat_port_neighbours(port, nb, RTE_DIM(nb));
	for (k = 0; k < n; k++)
		if (nb[k].ipv4 == peer && strcmp(nb[k].state, "reachable") == 0)
			break;
	if (k >= n)
		perf_die("raw: no MAC address known for %s", perf_opt.peer);
	eth->dst_addr = nb[k].mac;
	eth->src_addr = pi.mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = pi.ipv4;
	ip->dst_addr = peer;
	udp->src_port = rte_cpu_to_be_16(0xc000);
	udp->dst_port = rte_cpu_to_be_16(4791);
}

/* A frame with the client's headers, lengths set, the BTH after them. */
static struct rte_mbuf *
frame(uint8_t op, unsigned int ext, unsigned int paylen, uint8_t **body)
{
	const unsigned int l4 = RAW_BTH + ext + paylen + RAW_ICRC;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint8_t *p;

	if (m == NULL)
		perf_die("raw: frame pool empty");
	p = (uint8_t *)rte_pktmbuf_append(m, RAW_HDR + l4);
	memcpy(p, hdr, RAW_HDR);
	ip = (struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);
	udp = (struct rte_udp_hdr *)(ip + 1);
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + sizeof(*udp) + l4);
	udp->dgram_len = rte_cpu_to_be_16(sizeof(*udp) + l4);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);	/* as dpdat's frames */
	p += RAW_HDR;
	memset(p, 0, RAW_BTH + ext);
	p[0] = op;
	p[2] = p[3] = 0xff;			/* P_Key */
	p[5] = p[6] = p[7] = 0xff;		/* no QP */
	memset(p + RAW_BTH + ext + paylen, 0, RAW_ICRC);
	*body = p + RAW_BTH + ext;
	return m;
}

static void
send_all(struct rte_mbuf **m, unsigned int n)
{
	uint64_t t0 = perf_now_ns();
	unsigned int sent = 0;

	while (sent < n) {
		sent += tx_burst(m + sent, (uint16_t)(n - sent));
		if (perf_now_ns() - t0 > RAW_GIVE_UP_NS)
			perf_die("raw: the device takes no frames");
	}
}

static unsigned int
npkts(uint32_t size)
{
	return size == 0 ? 1 : (size + pmtu - 1) / pmtu;
}

/* The k-th of n frames of a message of size bytes from buf. */
static struct rte_mbuf *
data_frame(uint32_t size, unsigned int k, unsigned int n)
{
	const uint32_t off = k * pmtu;
	const uint32_t len = RTE_MIN((uint32_t)pmtu, size - off);
	uint8_t op = n == 1 ? OP_W_ONLY : k == 0 ? OP_W_FIRST :
		     k == n - 1 ? OP_W_LAST : OP_W_MIDDLE;
	uint8_t *body;
	struct rte_mbuf *m = frame(op, k == 0 ? RAW_RETH : 0, len, &body);

	memcpy(body, perf_raw_buf() + off, len);
	return m;
}

static void
ctl_send(uint32_t kind, uint32_t seq)
{
	struct raw_ctl c = { .magic = RAW_MAGIC, .kind = kind, .seq = seq };
	uint8_t *body;
	struct rte_mbuf *m = frame(OP_SEND_ONLY, 0, sizeof(c), &body);

	memcpy(body, &c, sizeof(c));
	send_all(&m, 1);
}

/* The control frame in m, if it is one. */
static bool
ctl_of(const struct rte_mbuf *m, struct raw_ctl *c)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *) + RAW_HDR;

	if (rte_pktmbuf_data_len(m) < RAW_HDR + RAW_BTH + sizeof(*c) ||
	    p[0] != OP_SEND_ONLY)
		return false;
	memcpy(c, p + RAW_BTH, sizeof(*c));
	return c->magic == RAW_MAGIC;
}

/* Client: send a control frame until its answer comes; data frames that
 * arrive meanwhile are dropped. Returns the answer. */
static struct raw_ctl
ctl_call(uint32_t kind, uint32_t want)
{
	struct rte_mbuf *in[RAW_BURST];
	const uint64_t t0 = perf_now_ns();
	uint64_t last = 0;
	struct raw_ctl c;
	uint32_t seq = ++ctl_seq;

	for (;;) {
		if (perf_now_ns() - last > RAW_RETRY_NS) {
			if (perf_now_ns() - t0 > RAW_GIVE_UP_NS)
				perf_die("raw: the server does not answer");
			ctl_send(kind, seq);
			last = perf_now_ns();
		}
		uint16_t n = rx_burst(in, RAW_BURST);

		for (uint16_t i = 0; i < n; i++) {
			bool got = ctl_of(in[i], &c) && c.kind == want &&
				   c.seq == seq;

			rte_pktmbuf_free(in[i]);
			if (got) {
				rte_pktmbuf_free_bulk(in + i + 1, n - i - 1);
				return c;
			}
		}
	}
}

static void
raw_lat(const struct perf_params *pr, uint32_t size, double *rtt)
{
	const unsigned int n = npkts(size);
	const uint32_t warm = perf_warmup(pr, size);
	struct rte_mbuf *out[RAW_BURST], *in[RAW_BURST];

	for (uint32_t it = 0; it < warm + pr->iters; it++) {
		uint64_t t0 = perf_now_ns(), sent = t0;
		unsigned int back = 0, k = 0, c;

		while (back < n) {
			/* the message out a burst at a time, the echoes
			 * taken meanwhile (the receive ring must not fill) */
			if (k < n) {
				c = RTE_MIN(n - k, (unsigned int)RAW_BURST);
				for (unsigned int j = 0; j < c; j++)
					out[j] = data_frame(size, k + j, n);
				send_all(out, c);
				k += c;
				sent = perf_now_ns();
			}
			uint16_t got = rx_burst(in, RAW_BURST);

			back += got;
			rte_pktmbuf_free_bulk(in, got);
			if (back < n && perf_now_ns() - sent > RAW_RETRY_NS) {
				/* a lost frame (af_xdp, af_packet): again */
				if (perf_now_ns() - t0 > RAW_GIVE_UP_NS)
					perf_die("raw: no answer from the "
						 "server");
				k = 0;
				back = 0;
			}
		}
		if (it >= warm)
			rtt[it - warm] =
				(double)(perf_now_ns() - t0) / 1e3;
	}
}

/* n frames, copies of tmpl's, out with the device's own burst */
static void
bare_send(struct rte_mbuf *const *tmpl, struct rte_mbuf **out, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		uint16_t len = rte_pktmbuf_data_len(tmpl[k]);

		out[k] = rte_pktmbuf_alloc(pool);
		if (out[k] == NULL)
			perf_die("bare: frame pool empty");
		rte_memcpy(rte_pktmbuf_append(out[k], len),
			   rte_pktmbuf_mtod(tmpl[k], void *), len);
	}
	send_all(out, n);
}

/* bare: the ping-pong of raw_lat, each frame a copy of one prepared for
 * this size, sent and taken with the device's own bursts. */
static void
bare_lat(const struct perf_params *pr, uint32_t size, double *rtt)
{
	const unsigned int n = npkts(size);
	const uint32_t warm = perf_warmup(pr, size);
	struct rte_mbuf *tmpl[RAW_BURST], *out[RAW_BURST], *in[RAW_BURST];

	if (n > RAW_BURST)
		perf_die("bare: %u B is %u frames, %u at most", size, n,
			 RAW_BURST);
	for (unsigned int k = 0; k < n; k++)
		tmpl[k] = data_frame(size, k, n);
	for (uint32_t it = 0; it < warm + pr->iters; it++) {
		uint64_t t0 = perf_now_ns(), sent;
		unsigned int back = 0;

		bare_send(tmpl, out, n);
		sent = perf_now_ns();
		while (back < n) {
			uint16_t got = rte_eth_rx_burst(port_id, 0, in,
							RAW_BURST);

			back += got;
			rte_pktmbuf_free_bulk(in, got);
			if (back < n && perf_now_ns() - sent > RAW_RETRY_NS) {
				/* a lost frame (af_xdp, af_packet): again */
				if (perf_now_ns() - t0 > RAW_GIVE_UP_NS)
					perf_die("bare: no answer from the "
						 "server");
				bare_send(tmpl, out, n);
				sent = perf_now_ns();
				back = 0;
			}
		}
		if (it >= warm)
			rtt[it - warm] =
				(double)(perf_now_ns() - t0) / 1e3;
	}
	rte_pktmbuf_free_bulk(tmpl, n);
}

static void
raw_bw(const struct perf_params *pr, uint32_t size, struct perf_bw *res)
{
	const unsigned int n = npkts(size);
	const uint64_t end = perf_now_ns() + (uint64_t)pr->secs * 1000000000ull;
	struct rte_mbuf *out[RAW_BURST], *in[RAW_BURST];
	struct perf_meter m;
	uint64_t sent = 0, base;
	unsigned int k = 0, have = 0, done;
	struct raw_ctl c;

	base = ctl_call(RAW_MARK, RAW_MARK_ACK).count;
	perf_meter_start(&m);
	while (pr->secs != 0 ? m.now < end : sent < pr->iters || have != 0) {
		/* whole messages, and with -n no more than asked */
		while (have < RAW_BURST &&
		       (pr->secs != 0 || sent < pr->iters)) {
			out[have++] = data_frame(size, k, n);
			if (++k == n) {
				k = 0;
				sent++;
			}
		}
		done = tx_burst(out, (uint16_t)have);
		if (done != 0 && done < have)
			memmove(out, out + done, (have - done) * sizeof(out[0]));
		have -= done;
		/* ARP and strays: the receive queue must not fill */
		rte_pktmbuf_free_bulk(in, rx_burst(in, RAW_BURST));
		perf_meter_tick(&m, sent, size);
	}
	rte_pktmbuf_free_bulk(out, have);
	perf_meter_end(&m, sent, size, res);
	c = ctl_call(RAW_MARK, RAW_MARK_ACK);
	res->iters = c.count - base;
	res->lost = sent > res->iters ? sent - res->iters : 0;
}

/* Server: answer frames until the client says goodbye. */
static void
raw_serve(const struct perf_params *pr)
{
	const bool echo = perf_is_lat(pr->test);
	struct rte_mbuf *in[RAW_BURST], *back[RAW_BURST];
	uint8_t *buf = perf_raw_buf();
	uint64_t messages = 0, off = 0, idle_since = perf_now_ns();
	struct raw_ctl c;

	for (;;) {
		uint16_t n = rx_burst(in, RAW_BURST), nb = 0;

		if (n != 0)
			idle_since = perf_now_ns();
		else if (perf_now_ns() - idle_since > PERF_WAIT_CLIENT_MS *
			 1000000ull)
			perf_die("raw: the client went quiet");
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *m = in[i];
			uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
			struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
			struct rte_ether_addr a = eth->src_addr;
			uint32_t ia = ip->src_addr, len, ext;
			bool ctl;
			uint8_t op = p[RAW_HDR];

			/* bare: no port layer sorts out ARP and strays */
			if (bare && (rte_pktmbuf_data_len(m) < RAW_HDR + RAW_BTH ||
				     eth->ether_type != rte_cpu_to_be_16(
					     RTE_ETHER_TYPE_IPV4))) {
				rte_pktmbuf_free(m);
				continue;
			}
			ctl = ctl_of(m, &c);

			/* the answer goes back where the frame came from */
			eth->src_addr = eth->dst_addr;
			eth->dst_addr = a;
			ip->src_addr = ip->dst_addr;
			ip->dst_addr = ia;
			if (ctl) {
				c.kind = c.kind == RAW_BYE ? RAW_BYE_ACK :
					 RAW_MARK_ACK;
				c.count = messages;
				memcpy(p + RAW_HDR + RAW_BTH, &c, sizeof(c));
				back[nb++] = m;
				if (c.kind == RAW_BYE_ACK) {
					send_all(back, nb);
					rte_pktmbuf_free_bulk(in + i + 1,
							      n - i - 1);
					return;
				}
				continue;
			}
			if (echo) {
				back[nb++] = m;
				continue;
			}
			ext = op == OP_W_FIRST || op == OP_W_ONLY ? RAW_RETH : 0;
			len = rte_pktmbuf_pkt_len(m);
			if (len >= RAW_HDR + RAW_BTH + ext + RAW_ICRC) {
				len -= RAW_HDR + RAW_BTH + ext + RAW_ICRC;
				if (off + len > PERF_MAX_SIZE)
					off = 0;
				rte_memcpy(buf + off, p + RAW_HDR + RAW_BTH +
					   ext, len);
				off += len;
			}
			messages += op == OP_W_LAST || op == OP_W_ONLY;
			rte_pktmbuf_free(m);
		}
		if (nb != 0)
			send_all(back, nb);
	}
}

static void
raw_finish(void)
{
	if (!perf_opt.server)
		(void)ctl_call(RAW_BYE, RAW_BYE_ACK);
	perf_dpdat.finish();
	rte_mempool_free(pool);
}

const struct perf_transport perf_raw = {
	.name = "raw", .max_qps = 1,
	.setup = raw_setup, .connect = raw_connect, .bw = raw_bw,
	.lat = raw_lat, .serve = raw_serve, .finish = raw_finish,
};

const struct perf_transport perf_bare = {
	.name = "bare", .max_qps = 1,
	.setup = bare_setup, .connect = raw_connect, .bw = raw_bw,
	.lat = bare_lat, .serve = raw_serve, .finish = raw_finish,
};
