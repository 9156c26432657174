#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Many applications on one host (doc/guides/many-apps.md): N independent
# dpdat applications in namespace A, each on its own macvlan share of A's
# veth0 (mv1..mvN, 198.18.0.11..), each talking to its own peer on a share
# of B's veth0 (198.18.0.21..), all at once, over af_xdp or af_packet:
#   - every pair runs rc_test (WRITE, READ and SEND, every byte checked),
#     each end's device named once for all as net_<kind>%l,iface=mv%l with
#     DPDAT_LOCAL_RANK=i (doc/guides/many-apps.md);
#   - each port's counters show its own frames only: nothing "not ours"
#     (af_packet: see check()), and no more RoCEv2 frames than its peer
#     sent;
#   - meanwhile the kernels keep veth0 itself: ping and a checked TCP
#     transfer between 198.18.0.1 and .2;
#   - an application killed with SIGKILL leaves its share free: at once a
#     new pair runs on the same share and passes;
#   - two applications on shares of the same host reach each other;
#   - an address on an interface of A that is no share is not.
# Usage: multiapp_netns.sh <af_xdp|af_packet> <N> <rc_test>
set -u
here=$(dirname "$0")
. "$here/netns.sh"
kind=$1 napps=$2 prog=$3
command -v python3 >/dev/null || netns_skip "no python3"
netns_up 1500
netns_share "$NS_A" "$napps" 10
netns_share "$NS_B" "$napps" 20
dir=$(mktemp -d /tmp/dpdat-multiapp-XXXXXX)
trap 'netns_down; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
args=(--sizes 1,4095,65536,1048576 --depth 8)

# app <i> <server|client> <tag> [share]: application i's end on share
# mv<i> (or mv<share>; the client in B unless APP_NS says); on af_packet,
# started again (as dpdat says) when another process's port holds the
# fanout group id DPDK's driver gives this one
app() {
	local ns=$NS_A log=$dir/$2$1$3.log try rc
	[ "$2" = client ] && ns=${APP_NS:-$NS_B}
	for try in 1 2; do
		ip netns exec "$ns" env DPDAT_LOCAL_RANK="${4:-$1}" \
			DPDAT_TEST_DEV="net_${kind}%l,iface=mv%l" \
			DPDAT_TEST_SERVER="198.18.0.$((10 + $1))" \
			timeout -k 2 100 "$prog" "$2" "$dir/rdv$1$3" "${args[@]}" \
			> "$log" 2>&1
		rc=$?
		grep -q "has the fanout group id" "$log" || break
		echo "multiapp: app $1 $2: fanout group id taken; started again"
	done
	return $rc
}
# check <i> <tag>: application i's pair passed and saw only its frames
check() {
	local s=$dir/server$1$2.log c=$dir/client$1$2.log rx tx
	grep -h "^server port\|^client port" "$s" "$c" | sed "s/^/[app $1] /"
	grep -q "^client: .*verified" "$c" || { tail -n 20 "$s" "$c"; fail "app $1: no verified transfer"; }
	# af_xdp: nothing but its own; af_packet: DPDK 22.11's driver opens
	# its socket for every interface and binds it to the share only
	# after setting up its ring, so a port that starts while others
	# stream may hold up to a ring (512) of their frames, taken before
	# the bind and dropped by dpdat as not its own (not its MAC)
	for f in "$s" "$c"; do
		n=$(sed -n 's/^[a-z]* port: .* drops \([0-9]*\)\/.*/\1/p' "$f")
		[ "${n:-x}" = 0 ] && continue
		[ "$kind" = af_packet ] && [ "${n:-513}" -le 512 ] && continue
		fail "app $1: a port received ${n:-?} frames that were not its own"
	done
	rx=$(sed -n 's/^server port: .* roce \([0-9]*\) .*/\1/p' "$s")
	tx=$(sed -n 's/^client port: rx [0-9]* tx \([0-9]*\) .*/\1/p' "$c")
	[ -n "$rx" ] && [ -n "$tx" ] && [ "$rx" -gt 0 ] && [ "$rx" -le "$tx" ] ||
		fail "app $1: the server took ${rx:-?} RoCEv2 frames, its peer sent ${tx:-?}"
}

# af_packet: a fanout group id taken by another process's port on another
# share is named as such (DPDK's driver would only say EINVAL)
if [ "$kind" = af_packet ]; then
	mkfifo "$dir/go"
	ip netns exec "$NS_A" env DPDAT_TEST_DEV="net_af_packet9,iface=mv2" \
		timeout 30 bash -c 'echo $$ > "$1/pid"; read -r _ < "$1/go"
		exec "$2" server "$1/rdv-fanout"' _ "$dir" "$prog" \
		> "$dir/fanout.log" 2>&1 &
	fpid=$!
	for _ in $(seq 50); do [ -s "$dir/pid" ] && break; sleep 0.1; done
	ip netns exec "$NS_A" python3 -c '
import socket, struct, sys, time
pid, target = int(sys.argv[1]), socket.if_nametoindex("mv2")
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("mv1", 3))
# SOL_PACKET, PACKET_FANOUT: the id DPDK gives pid on mv2, on mv1
s.setsockopt(263, 18, struct.pack("I", ((pid ^ target) & 0xffff) |
	     ((0x8000 | 0x1000) << 16)))
open(sys.argv[2], "w").write("go\n")
time.sleep(8)' "$(cat "$dir/pid")" "$dir/go" &
	hpid=$!
	wait "$fpid"; frc=$?
	kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null
	grep -h "fanout group id" "$dir/fanout.log" ||
		{ cat "$dir/fanout.log"; fail "a taken fanout group id was not named (exit $frc)"; }
	[ $frc -ne 0 ] || fail "the port opened on a taken fanout group id"
fi

echo "multiapp: $napps applications on macvlan shares of $NS_A's veth0 <-> $NS_B's, over $kind"
pids=()
for i in $(seq "$napps"); do
	app "$i" server "" & pids+=($!)
done
sleep 1
for i in $(seq "$napps"); do
	app "$i" client "" & pids+=($!)
done
# the kernels keep the NIC itself meanwhile
ip netns exec "$NS_B" ping -c 10 -i 0.2 -W 2 198.18.0.1 > "$dir/ping.txt" 2>&1
tail -n 2 "$dir/ping.txt"
grep -q " 0% packet loss" "$dir/ping.txt" || fail "ping lost packets beside $napps applications"
netns_tcp_check "$NS_A" 198.18.0.1 "$NS_B" || fail "TCP beside $napps applications"
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
for i in $(seq "$napps"); do
	check "$i" ""
done
[ $rc -eq 0 ] || fail "an application exited with an error"

# a killed application's share is free at once (out of band, the server
# says it is up in its rendezvous file)
ip netns exec "$NS_A" env DPDAT_TEST_DEV="net_${kind}1,iface=mv1" \
	timeout -k 2 60 "$prog" server "$dir/rdv-killed" --oob \
	> "$dir/killed.log" 2>&1 &
kpid=$!
for _ in $(seq 100); do
	[ -e "$dir/rdv-killed.srv" ] && break
	sleep 0.1
done
[ -e "$dir/rdv-killed.srv" ] || { cat "$dir/killed.log"; fail "the application to kill never came up"; }
pkill -KILL -f "$dir/rdv-killed"
{ wait "$kpid"; } 2>/dev/null; krc=$?
[ $krc -eq 137 ] || { cat "$dir/killed.log"; fail "the application to kill ended by itself (exit $krc)"; }
echo "multiapp: application 1 killed (SIGKILL); a new one on its share"
app 1 server -again & spid=$!
sleep 1
app 1 client -again; crc=$?
wait "$spid"; src=$?
check 1 -again
[ $src -eq 0 ] && [ $crc -eq 0 ] || fail "after the kill: server $src, client $crc"
# af_xdp: the dead one's XDP program was still on mv1, the new one took
# the share over
if [ "$kind" = af_xdp ]; then
	grep -h "removed the XDP program" "$dir/server1-again.log" ||
		fail "the killed application's XDP program was not found on mv1"
fi
# two applications on the same host: the client on share 2 of A reaches
# the server on share 1 of A (the kernel resolves no neighbour for its
# own addresses: dpdat takes the sibling share's MAC)
app 1 server -local & spid=$!
sleep 1
APP_NS=$NS_A app 1 client -local 2; crc=$?
wait "$spid"; src=$?
check 1 -local
[ $src -eq 0 ] && [ $crc -eq 0 ] || fail "on one host: server $src, client $crc"
echo "multiapp: two applications on shares of the same host: passed"
# an address of A on an interface that is no share of veth0 (a veth pair
# of A's own): a frame for its MAC would leave by the NIC, so it is not
# taken for a sibling share's; the client asks ARP instead (nobody
# answers here: it is ended once it said which), DPDAT_LOG=info
ip -n "$NS_A" link add x0 type veth peer name x1 &&
ip -n "$NS_A" addr add 198.18.0.40/32 dev x0 &&
ip -n "$NS_A" link set x0 up && ip -n "$NS_A" link set x1 up ||
	fail "cannot add the veth pair x0/x1 in $NS_A"
ip netns exec "$NS_A" env DPDAT_LOG=info DPDAT_LOCAL_RANK=2 \
	DPDAT_TEST_DEV="net_${kind}%l,iface=mv%l" \
	DPDAT_TEST_SERVER=198.18.0.40 \
	timeout -k 2 20 "$prog" client "$dir/rdv-foreign" "${args[@]}" \
	> "$dir/foreign.log" 2>&1 &
fpid=$!
for _ in $(seq 100); do
	grep -q "x0 has the address\|is on this host" "$dir/foreign.log" && break
	sleep 0.1
done
kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
grep -h "198.18.0.40\|x0 has the address" "$dir/foreign.log"
grep -q "x0 has the address asked for, but is no macvlan share" \
	"$dir/foreign.log" && ! grep -q "is on this host" "$dir/foreign.log" ||
	{ grep -v "^EAL" "$dir/foreign.log" | tail -n 20; fail "an address on x0 (no share of veth0) was taken for a sibling's"; }
echo "multiapp: an address on another interface of the host is no share's: ARP"
echo "PASS: $napps applications on one host over $kind, each alone on its share"
