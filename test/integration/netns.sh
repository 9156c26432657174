#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Two hosts on one machine: network namespaces joined by a veth pair, made
# and removed by the caller. Source it, then:
#   netns_up [mtu]   host A (server, 198.18.0.1/24) and host B (client,
#                    198.18.0.2/24), each with "veth0"; NS_A, NS_B name them;
#                    NETNS_MTU_B gives B's end another MTU (veth pair
#                    only: through a bridge every end has the same)
#   netns_bridge     later hosts join a bridge instead (call before netns_up;
#                    netns_add_host C 198.18.0.3 adds one)
#   netns_down       removes everything (netns_up arms it on every exit path:
#                    EXIT, INT, TERM, HUP)
#   netns_dev KIND   the DPDK device for KIND (af_xdp, af_packet) on veth0
#   netns_share NS N BASE [FIRST]
#                    N macvlan sub-interfaces of NS's veth0, mvFIRST.. (FIRST
#                    1 by default), mvi with 198.18.0.(BASE+i)/24: one share
#                    of the "NIC" for each application
#                    (doc/guides/many-apps.md); exits 77 where the kernel
#                    has no macvlan, 1 when anything else fails
#   netns_tcp_check NS_SRV IP NS_CLI
#                    8 MiB over TCP from NS_CLI to IP in NS_SRV, its digest
#                    echoed back and compared
# Addresses come from 198.18.0.0/15 only. Without root, or where namespaces
# cannot be made, netns_up exits 77 (meson: skipped) with the reason.

NS_TAG="dpdat$$"
NS_A="${NS_TAG}a"
NS_B="${NS_TAG}b"
NS_BR=
NS_HOSTS=()

netns_down() {	# never fails: it runs in traps, under set -e too
	local ns
	local ino
	for ns in "${NS_HOSTS[@]}"; do
		# processes left in the namespace go first: a namespace with
		# a live process outlives its deletion
		{ ip netns pids "$ns" 2>/dev/null | xargs -r kill -9; } \
			2>/dev/null || true
		# dpdat's af_xdp lock files name the namespace (lib/port/kern.c)
		ino=$(ip netns exec "$ns" stat -L -c %i /proc/self/ns/net \
			2>/dev/null) || ino=
		[ -z "$ino" ] || rm -f /tmp/dpdat-xdp-"$ino"-*.lock
		ip netns del "$ns" 2>/dev/null || true
	done
	if [ -n "$NS_BR" ]; then
		ip link del "$NS_BR" 2>/dev/null || true
	fi
	NS_HOSTS=()
	NS_BR=
	return 0
}

netns_skip() {
	echo "SKIP: $*"
	exit 77
}

netns_bridge() {
	NS_BR="${NS_TAG}br"
}

# netns_add_host NAME IP [MTU]
netns_add_host() {
	local ns=$1 ip=$2 mtu=${3:-1500} out="${1}o"
	ip netns add "$ns" || return 1
	NS_HOSTS+=("$ns")
	if [ -n "$NS_BR" ]; then
		ip link add "$out" mtu "$mtu" type veth peer name veth0 \
			netns "$ns" || return 1
		ip link set "$out" master "$NS_BR" up || return 1
	fi
	ip -n "$ns" link set lo up &&
	ip -n "$ns" link set veth0 mtu "$mtu" &&
	ip -n "$ns" addr add "$ip/24" dev veth0 &&
	ip -n "$ns" link set veth0 up
}

netns_up() {
	local mtu=${1:-1500}
	[ "$(id -u)" -eq 0 ] || netns_skip "network namespaces need root"
	command -v ip >/dev/null || netns_skip "no ip command (iproute2)"
	trap netns_down EXIT
	trap 'netns_down; exit 130' INT
	trap 'netns_down; exit 143' TERM HUP
	if [ -n "$NS_BR" ]; then
		ip link add "$NS_BR" type bridge ||
			netns_skip "cannot create a bridge here"
		ip link set "$NS_BR" mtu "$mtu" up
		netns_add_host "$NS_A" 198.18.0.1 "$mtu" &&
		netns_add_host "$NS_B" 198.18.0.2 "$mtu" ||
			{ echo "netns: set-up failed"; exit 1; }
	else
		ip netns add "$NS_A" 2>/dev/null ||
			netns_skip "cannot create network namespaces here"
		NS_HOSTS+=("$NS_A")
		ip netns add "$NS_B" || { echo "netns: set-up failed"; exit 1; }
		NS_HOSTS+=("$NS_B")
		ip link add veth0 mtu "$mtu" netns "$NS_A" type veth \
			peer name veth0 mtu "${NETNS_MTU_B:-$mtu}" netns "$NS_B" ||
			{ echo "netns: cannot create a veth pair"; exit 1; }
		ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up &&
		ip -n "$NS_A" addr add 198.18.0.1/24 dev veth0 &&
		ip -n "$NS_B" addr add 198.18.0.2/24 dev veth0 &&
		ip -n "$NS_A" link set veth0 up &&
		ip -n "$NS_B" link set veth0 up ||
			{ echo "netns: set-up failed"; exit 1; }
	fi
	# the link is up when the kernels can talk
	local i
	for i in $(seq 50); do
		ip netns exec "$NS_A" ping -c1 -W1 198.18.0.2 >/dev/null 2>&1 &&
			return 0
		sleep 0.1
	done
	echo "netns: 198.18.0.1 cannot reach 198.18.0.2"
	exit 1
}

netns_share() {	# exits: 77 (skipped) without macvlan, 1 on other failures
	local ns=$1 n=$2 base=$3 first=${4:-1} i
	# each share answers ARP for its own address only, and from its own
	# MAC (without this, veth0 answers for the shares' addresses too)
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.arp_ignore=1 \
		net.ipv4.conf.all.arp_announce=2 ||
		{ echo "netns: cannot set arp_ignore/arp_announce in $ns"; exit 1; }
	# no IPv6 (where the kernel has it), whose multicast would reach
	# every share
	if [ -d /proc/sys/net/ipv6 ]; then
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 ||
			{ echo "netns: cannot turn IPv6 off in $ns"; exit 1; }
	fi
	# interface indexes 4096 apart: DPDK's af_packet fanout group ids
	# (pid ^ ifindex) of processes started together then differ
	for i in $(seq "$first" $((first + n - 1))); do
		if ! ip -n "$ns" link add "mv$i" index $((16 + 4096 * i)) \
				link veth0 type macvlan mode bridge; then
			[ "$i" = "$first" ] && netns_skip "no macvlan here"
			echo "netns: cannot add share mv$i in $ns"
			exit 1
		fi
		ip -n "$ns" addr add "198.18.0.$((base + i))/24" dev "mv$i" &&
		ip -n "$ns" link set "mv$i" up ||
			{ echo "netns: cannot set share mv$i up in $ns"; exit 1; }
	done
}

netns_tcp_check() {
	local srv=$1 ip=$2 cli=$3 tpid rc
	ip netns exec "$srv" timeout 20 python3 -c '
import hashlib, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5201)); s.listen(1); c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(65536)
    if not b: break
    h.update(b); n += len(b)
c.sendall(("%d %s" % (n, h.hexdigest())).encode()); c.close()
' "$ip" &
	tpid=$!
	sleep 0.5
	ip netns exec "$cli" timeout 20 python3 -c '
import hashlib, os, socket, sys
d = os.urandom(8 << 20); s = socket.create_connection((sys.argv[1], 5201), timeout=10)
s.sendall(d); s.shutdown(socket.SHUT_WR); r = s.recv(200).decode()
want = "%d %s" % (len(d), hashlib.sha256(d).hexdigest())
print("tcp: 8 MiB sent, digest", "matches" if r == want else "DIFFERS: " + r)
sys.exit(0 if r == want else 1)
' "$ip"
	rc=$?
	wait "$tpid" || rc=1
	return $rc
}

netns_dev() {	# NETNS_DEVARGS=",key=value..." is appended
	case $1 in
	af_xdp) echo "net_af_xdp0,iface=veth0${NETNS_DEVARGS:-}" ;;
	af_packet) echo "net_af_packet0,iface=veth0${NETNS_DEVARGS:-}" ;;
	*) echo "netns: unknown link kind '$1'" >&2; return 1 ;;
	esac
}
