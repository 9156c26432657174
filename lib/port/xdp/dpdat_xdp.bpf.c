/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* dpdat's XDP program for af_xdp ports on an interface the kernel owns.
 * It redirects exactly what dpdat serves, IPv4 UDP to port 4791 (RoCEv2)
 * addressed to dpdat's IPv4 address, into the AF_XDP socket of the receive
 * queue, and passes every other frame to the kernel: ARP, ICMP, TCP, other
 * UDP ports, other addresses, fragments and IP options. Until dpdat writes
 * its address into dpdat_addr (after the port starts), it passes everything.
 *
 * Built with clang for the bpf target by meson and loaded through the
 * af_xdp PMD's xdp_prog= argument, which finds xsks_map by name and puts
 * the queue's socket in it. */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ROCE_UDP_PORT	4791

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* key 0: dpdat's IPv4 address, network order; 0 = not yet known */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dpdat_addr SEC(".maps");

SEC("xdp")
int
dpdat_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u32 key = 0, *addr;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (struct iphdr *)(eth + 1);
	/* dpdat takes no IP options and no fragments (the kernel can
	 * reassemble; dpdat would drop them) */
	if ((void *)(ip + 1) > end || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP ||
	    (ip->frag_off & bpf_htons(0x3fff)) != 0)
		return XDP_PASS;
	udp = (struct udphdr *)(ip + 1);
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(ROCE_UDP_PORT))
		return XDP_PASS;
	addr = bpf_map_lookup_elem(&dpdat_addr, &key);
	if (addr == NULL || *addr == 0 || ip->daddr != *addr)
		return XDP_PASS;
	/* no socket on this queue: the kernel keeps the frame */
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
