/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Fault injection: drop, duplicate, reorder and corrupt frames at configured
 * rates, reproducibly from a seed, with counters. Runs on the port's thread,
 * only while on: the faults of a direction replace the port's receive or
 * transmit path, put back by dpdat_port_set_faults() when they go off (on
 * that thread, or with its engine held). Not a DPDK receive callback: that
 * gets only the room the device left in the burst, none when the device
 * fills it, as it does under load; the receive path asks it for fewer. */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ip.h>

#include "port_priv.h"
#include "roce.h"

/* a transmit chunk of PORT_BURST frames, each duplicated, and a held one */
#define FAULT_MAX (2 * PORT_BURST + 1)

static inline uint32_t
rnd(struct dpdat_port *p)
{
	/* xorshift64*: cheap, and the same seed gives the same faults */
	p->rng ^= p->rng >> 12;
	p->rng ^= p->rng << 25;
	p->rng ^= p->rng >> 27;
	return (uint32_t)((p->rng * 0x2545f4914f6cdd1dull) >> 32);
}

static uint32_t
threshold(double rate)
{
	return rate >= 1.0 ? UINT32_MAX : (uint32_t)(rate * 4294967296.0);
}

static bool
rates_ok(const struct dpdat_fault_rates *r)
{
	return r->drop >= 0 && r->drop <= 1 && r->dup >= 0 && r->dup <= 1 &&
	       r->reorder >= 0 && r->reorder <= 1 && r->corrupt >= 0 &&
	       r->corrupt <= 1 && r->ce >= 0 && r->ce <= 1;
}

static void
set_dir(struct port_fault *f, const struct dpdat_fault_rates *r,
	uint64_t frames)
{
	f->frames = frames;
	f->drop = threshold(r->drop);
	f->dup = threshold(r->dup);
	f->reorder = threshold(r->reorder);
	f->corrupt = threshold(r->corrupt);
	f->ce = threshold(r->ce);
}

/* Mark an ECN-capable IPv4 frame CE, as a marking queue would (one drops
 * a frame that is not ECN-capable instead: left alone here), its header
 * checksum kept right (on transmit with checksum offload the device
 * computes it). */
static void
fault_mark_ce(struct dpdat_port *p, struct rte_mbuf *m, bool rx)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip) ||
	    eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    rte_pktmbuf_data_len(m) < sizeof(*eth) + rte_ipv4_hdr_len(ip) ||
	    (ip->type_of_service & ROCE_ECN_MASK) == 0)
		return;
	ip->type_of_service |= ROCE_ECN_CE;
	if (rx || !(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM)) {
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	p->st.fault_ce++;
}

/* Whether the next frame is within the direction's faulted frames. */
static inline bool
fault_live(struct port_fault *f)
{
	if (f->frames == 0)
		return true;
	if (f->seen >= f->frames)
		return false;
	f->seen++;
	return true;
}

/* Pass the n frames in pkts through the faults f; the result (duplicates,
 * and one held back from an earlier call) is written back to pkts, at most
 * max frames: a duplicate that does not fit is not made (fault_dup_lost),
 * a held frame that does not fit waits for a later frame. n <= max <=
 * FAULT_MAX. Returns the count. */
static uint16_t
fault_apply(struct dpdat_port *p, struct port_fault *f,
	    struct rte_mbuf **pkts, uint16_t n, uint16_t max)
{
	struct rte_mbuf *in[FAULT_MAX], *m, *c;
	uint16_t i, out = 0;
	uint8_t *b;

	memcpy(in, pkts, n * sizeof(*pkts));
	for (i = 0; i < n; i++) {
		/* slots beyond one for each frame still to place, m's too */
		int room = max - out - (n - i);

		m = in[i];
		if (!fault_live(f))
			goto pass;
		if (f->drop && rnd(p) < f->drop) {
			p->st.fault_drop++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (f->corrupt && rnd(p) < f->corrupt &&
		    rte_pktmbuf_data_len(m) > RTE_ETHER_HDR_LEN) {
			b = rte_pktmbuf_mtod(m, uint8_t *);
			b[RTE_ETHER_HDR_LEN + rnd(p) %
			  (rte_pktmbuf_data_len(m) - RTE_ETHER_HDR_LEN)] ^=
				(uint8_t)(1u << (rnd(p) & 7));
			p->st.fault_corrupt++;
		}
		if (f->ce && rnd(p) < f->ce)
			fault_mark_ce(p, m, f == &p->frx);
		if (f->dup && rnd(p) < f->dup) {
			if (room <= 0) {
				p->fault_dup_lost++;
			} else if ((c = rte_pktmbuf_copy(m, p->pool, 0,
						UINT32_MAX)) != NULL) {
				p->st.fault_dup++;
				pkts[out++] = c;
				room--;
			}
		}
		if (f->held == NULL && f->reorder && rnd(p) < f->reorder) {
			p->st.fault_reorder++;
			f->held = m;	/* goes out after the next frame */
			continue;
		}
pass:
		pkts[out++] = m;
		if (f->held != NULL && room > 0) {
			pkts[out++] = f->held;
			f->held = NULL;
		}
	}
	return out;
}

/* Ask the device for fewer frames, so that each may be duplicated within
 * the caller's n (the engine's 32: 15 frames, as many duplicates and a held
 * frame); only a caller with less room loses duplicates. */
uint16_t
port_fault_rx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t nb;

	n = RTE_MIN(n, PORT_BURST);
	nb = p->dev_rx(p, pkts, n > 2 ? (n - 1) / 2 : n);
	return fault_apply(p, &p->frx, pkts, nb, n);
}

uint16_t
port_fault_tx(struct dpdat_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *f[FAULT_MAX];
	uint16_t sent, m, done = 0;

	while (done < n) {
		m = RTE_MIN(n - done, PORT_BURST);
		memcpy(f, pkts + done, m * sizeof(*f));
		done += m;
		/* room for every duplicate: nothing lost on transmit */
		m = fault_apply(p, &p->ftx, f, m, RTE_DIM(f));
		sent = m ? port_capture_tx(p, f, m) : 0;
		if (sent < m) {
			p->st.drop_tx_full += m - sent;
			rte_pktmbuf_free_bulk(f + sent, m - sent);
		}
	}
	return n;
}

/* The frame a direction held back goes when its faults go off. */
static void
fault_drop_held(struct port_fault *f)
{
	if (!port_fault_on(f)) {
		rte_pktmbuf_free(f->held);
		f->held = NULL;
	}
}

void
port_fault_release(struct dpdat_port *p)
{
	static const struct port_fault off;

	rte_pktmbuf_free(p->frx.held);
	rte_pktmbuf_free(p->ftx.held);
	p->frx = p->ftx = off;
	port_path_update(p);
}

int
dpdat_port_set_faults(struct dpdat_port *p, const struct dpdat_fault_conf *c)
{
	static const struct dpdat_fault_conf off;
	struct port_fault rx = { 0 }, tx = { 0 };

	if (p == NULL || p->magic != PORT_MAGIC)
		return -EBADF;
	if (c == NULL)
		c = &off;
	if (!rates_ok(&c->rx) || !rates_ok(&c->tx))
		return -EINVAL;
	set_dir(&rx, &c->rx, c->frames);
	set_dir(&tx, &c->tx, c->frames);
	rx.held = p->frx.held;
	tx.held = p->ftx.held;
	p->frx = rx;
	p->ftx = tx;
	fault_drop_held(&p->frx);
	fault_drop_held(&p->ftx);
	/* each queue of a device its own sequence from the same seed */
	p->rng = (c->seed ? c->seed : 1) ^ ((uint64_t)p->queue << 48);
	port_path_update(p);
	if (port_fault_on(&rx) || port_fault_on(&tx))
		PORT_LOG(NOTICE, "%s: faults rx drop %.3f dup %.3f reorder %.3f "
			 "corrupt %.3f ce %.3f, tx drop %.3f dup %.3f reorder "
			 "%.3f corrupt %.3f ce %.3f, seed %lu%s%.0lu", p->name,
			 c->rx.drop, c->rx.dup, c->rx.reorder, c->rx.corrupt,
			 c->rx.ce, c->tx.drop, c->tx.dup, c->tx.reorder,
			 c->tx.corrupt, c->tx.ce,
			 (unsigned long)p->rng,
			 /* ", first frames N" when limited; %.0lu prints
			  * nothing for 0 */
			 c->frames ? ", first frames " : "",
			 (unsigned long)c->frames);
	else if (p->fault_dup_lost != 0)
		PORT_LOG(NOTICE, "%s: faults off; %lu receive duplicates not "
			 "made (no room in the receiver's array)", p->name,
			 (unsigned long)p->fault_dup_lost);
	return 0;
}

static int
parse_rates(char *s, struct dpdat_fault_rates *r)
{
	char *tok, *save = NULL, *eq, *end;
	double v;

	for (tok = strtok_r(s, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (eq == NULL)
			return -EINVAL;
		*eq = '\0';
		v = strtod(eq + 1, &end);
		if (*end != '\0' || v < 0 || v > 1)
			return -EINVAL;
		if (strcmp(tok, "drop") == 0)
			r->drop = v;
		else if (strcmp(tok, "dup") == 0)
			r->dup = v;
		else if (strcmp(tok, "reorder") == 0)
			r->reorder = v;
		else if (strcmp(tok, "corrupt") == 0)
			r->corrupt = v;
		else if (strcmp(tok, "ce") == 0)
			r->ce = v;
		else
			return -EINVAL;
	}
	return 0;
}

int
dpdat_fault_parse(const char *spec, struct dpdat_fault_conf *c)
{
	char *copy, *part, *save = NULL, *end;
	int ret = 0;

	if (spec == NULL || c == NULL)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	copy = strdup(spec);
	if (copy == NULL)
		return -ENOMEM;
	for (part = strtok_r(copy, ";", &save); part != NULL && ret == 0;
	     part = strtok_r(NULL, ";", &save)) {
		if (strncmp(part, "rx:", 3) == 0)
			ret = parse_rates(part + 3, &c->rx);
		else if (strncmp(part, "tx:", 3) == 0)
			ret = parse_rates(part + 3, &c->tx);
		else if (strncmp(part, "seed=", 5) == 0) {
			c->seed = strtoull(part + 5, &end, 0);
			if (*end != '\0')
				ret = -EINVAL;
		} else if (strncmp(part, "frames=", 7) == 0) {
			c->frames = strtoull(part + 7, &end, 0);
			if (*end != '\0' || !isdigit((unsigned char)part[7]))
				ret = -EINVAL;
		} else {
			ret = -EINVAL;
		}
	}
	if (ret != 0)
		PORT_LOG(ERR, "bad fault specification '%s' (expected e.g. "
			 "\"rx:drop=0.01,dup=0.01;tx:reorder=0.01;seed=1;frames=500\")",
			 spec);
	free(copy);
	return ret;
}
