#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# dpdat beside the kernel, tested rather than assumed: while dpdat-perf
# streams RDMA WRITEs between two namespaces over a kernel-backed port
# (af_xdp or af_packet on veth0), the kernels of the same interfaces must
# still resolve each other (ARP tables flushed first), answer ping, and
# carry a TCP connection whose bytes are checked; the kernel that dpdat
# shares must send no ICMP port unreachable for the RoCEv2 it sees.
# Usage: coexist_check.sh <dpdat-perf> <af_xdp|af_packet>
set -u
here=$(dirname "$0")
. "$here/netns.sh"
perf=$1 kind=$2
dev=$(netns_dev "$kind") || exit 1
command -v ping >/dev/null || netns_skip "no ping (iputils-ping)"
netns_up 1500
dir=$(mktemp -d /tmp/dpdat-coexist-XXXXXX)
trap 'netns_down; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unreach() {	# ICMP destination unreachable sent by a namespace's kernel
	ip netns exec "$1" awk '/^Icmp:/ { if (!c) { for (i = 1; i <= NF; i++)
		if ($i == "OutDestUnreachs") c = i } else print $c }' /proc/net/snmp
}

u0=$(unreach "$NS_A")
# each side polls on a CPU of its own (--cpu pins the polling thread)
ip netns exec "$NS_A" timeout 40 "$perf" write_bw -D 8 -s 4096 --dev "$dev" \
	--cpu 0 > "$dir/server.log" 2>&1 &
spid=$!
sleep 1
ccpu=$(( $(nproc) > 1 ? 1 : 0 ))
ip netns exec "$NS_B" timeout 40 "$perf" write_bw -D 8 -s 4096 --dev "$dev" \
	--cpu $ccpu 198.18.0.1 > "$dir/client.log" 2>&1 &
cpid=$!
# dpdat is streaming once its table header is out
for i in $(seq 100); do
	grep -q "#bytes" "$dir/client.log" && break
	sleep 0.1
done
grep -q "#bytes" "$dir/client.log" || { cat "$dir"/*.log; fail "dpdat-perf did not start"; }
echo "dpdat-perf streaming over $kind; now the kernels talk on the same veth0"
pinned=$(for p in $(pgrep -x -P "$spid,$cpid" dpdat-perf); do
	awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$p/status"; done | sort | xargs)
want=$(printf '%s\n' 0 $ccpu | sort | xargs)
[ "$pinned" = "$want" ] || fail "--cpu: the pollers run on CPUs '$pinned', not '$want'"
echo "pollers pinned to CPUs $pinned"

# one dpdat af_xdp port an interface: a second one is refused, and the
# first goes on
if [ "$kind" = af_xdp ]; then
	ip netns exec "$NS_A" timeout 20 "$perf" write_bw --dev "$dev" -p 18600 \
		>"$dir/second.log" 2>&1
	grep -q "another dpdat process has an af_xdp port" "$dir/second.log" ||
		{ cat "$dir/second.log"; fail "a second af_xdp port on veth0 was not refused"; }
	echo "a second af_xdp port on the same interface: refused"
fi

# ARP: both kernels forget each other and must resolve again
ip -n "$NS_A" neigh flush dev veth0
ip -n "$NS_B" neigh flush dev veth0
out=$(ip netns exec "$NS_B" ping -c 5 -i 0.2 -W 2 198.18.0.1 2>&1)
echo "$out" | tail -2
echo "$out" | grep -q " 0% packet loss" || fail "ping lost packets beside dpdat"
ip -n "$NS_B" neigh show 198.18.0.1 | grep -q lladdr ||
	fail "host B's kernel did not resolve 198.18.0.1"

# TCP: 8 MiB of random bytes, their digest echoed back
netns_tcp_check "$NS_A" 198.18.0.1 "$NS_B" || fail "TCP beside dpdat"

wait "$cpid"; crc=$?
wait "$spid"; src=$?
grep -E "^ *[0-9]+ +[0-9]+" "$dir/client.log"
[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
	{ cat "$dir"/*.log; fail "dpdat-perf exit $src/$crc"; }
u1=$(unreach "$NS_A")
echo "host A's kernel sent $((u1 - u0)) ICMP destination unreachable"
[ "$u1" -eq "$u0" ] || fail "the kernel answered RoCEv2 with ICMP unreachable"
echo "coexistence over $kind: passed"
