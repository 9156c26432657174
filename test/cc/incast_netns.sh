#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Many to one: two senders into one receiver through a shaped bottleneck.
# Hosts A (198.18.0.1), B (.2) and C (.3) are namespaces on a bridge (made
# here, removed on every exit: test/integration/netns.sh); the bridge's
# port towards A is shaped to 400 Mbit/s with tbf (5 ms of queue), the
# switch port in front of a receiver. dpdat-perf's server on A takes both
# clients (--clients 2); B and C stream 64 KiB WRITEs to it for 3 s at
# once, over af_xdp or af_packet. Both clients must finish with a report,
# and the server must print each client's goodput (both above zero) and
# Jain's fairness index of the two, which this test prints with the
# bottleneck's drops and the kernel's ping from C to A beside the streams
# (its median and 99th percentile: the queue's delay). DPDAT_SWIFT and
# DPDAT_DCQCN in the environment reach every dpdat-perf.
# With "swift", the senders run dpdat's delay-based control (DPDAT_SWIFT=on),
# which must keep the queue short: ping's median under 1 ms (without it the
# tbf queue fills: 2.5 to 3.5 ms here).
#   incast_netns.sh <dpdat-perf> <af_xdp|af_packet> [swift]
set -u
here=$(dirname "$0")
. "$here/../integration/netns.sh"
perf=$1 kind=$2 cc=${3:-}
[ "$cc" != swift ] || export DPDAT_SWIFT=on
dev=$(netns_dev "$kind") || exit 1
NS_C="${NS_TAG}c"
netns_bridge
netns_up 1500
netns_add_host "$NS_C" 198.18.0.3 1500 || { echo "netns: no host C"; exit 1; }
tc qdisc add dev "${NS_A}o" root tbf rate 400mbit burst 64kb latency 5ms ||
	{ echo "SKIP: no tbf here"; exit 77; }
dir=$(mktemp -d /tmp/dpdat-incast-XXXXXX)
trap 'netns_down; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; tail -n 20 "$dir"/*.log; exit 1; }

ip netns exec "$NS_A" timeout 60 "$perf" write_bw --clients 2 -D 3 \
	-s 65536 --dev "$dev" > "$dir/server.log" 2>&1 &
spid=$!
sleep 1
for h in B C; do
	ns=NS_$h
	ip netns exec "${!ns}" timeout 60 "$perf" write_bw -D 3 -s 65536 \
		--dev "$dev" 198.18.0.1 > "$dir/client-$h.log" 2>&1 &
	eval "pid_$h=\$!"
done
# the latency probe: the kernel's ping from C through the same queue
sleep 0.5
ip netns exec "$NS_C" ping -i 0.01 -c 200 -W 1 198.18.0.1 \
	> "$dir/ping.txt" 2>&1 &
ppid=$!
wait "$pid_B"; rb=$?
wait "$pid_C"; rc=$?
wait "$spid"; rs=$?
wait "$ppid"
# ping's times, sorted: the median and the 99th percentile
pct() { sed -n 's/.*time=\([0-9.]*\) ms/\1/p' "$dir/ping.txt" | sort -n |
	awk -v p="$1" '{ v[NR] = $1 } END { if (NR) { i = int(NR * p); if (i < 1) i = 1; print v[i] } }'; }
p50=$(pct 0.5) p99=$(pct 0.99)
ploss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' "$dir/ping.txt")
[ $rb -eq 0 ] && [ $rc -eq 0 ] && [ $rs -eq 0 ] ||
	fail "dpdat-perf: server $rs, clients $rb and $rc"
for h in B C; do
	grep -h "^ *65536 " "$dir/client-$h.log" ||
		fail "client $h: no report"
done
grep -h "^dpdat-perf: client\|^dpdat-perf: 2 clients" "$dir/server.log"
n=$(grep -c "^dpdat-perf: client 198.18.0.[23]: [0-9.]* MiB/s" \
	"$dir/server.log")
[ "$n" -eq 2 ] || fail "the server reported $n clients, not 2"
grep -q "^dpdat-perf: client .*: 0.00 MiB/s" "$dir/server.log" &&
	fail "a client got nothing through"
jain=$(sed -n "s/.*Jain's fairness index \([0-9.]*\)/\1/p" "$dir/server.log")
[ -n "$jain" ] || fail "no fairness index"
drops=$(tc -s qdisc show dev "${NS_A}o" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' |
	head -1)
echo "incast: $kind: 2 senders through 400 Mbit/s: Jain's index $jain, bottleneck drops ${drops:-?}; ping C -> A beside: p50 ${p50:-?} ms, p99 ${p99:-?} ms, loss ${ploss:-?} %${DPDAT_SWIFT:+ (DPDAT_SWIFT=$DPDAT_SWIFT)}"
if [ "$cc" = swift ]; then
	awk -v p="${p50:-99}" 'BEGIN { exit !(p < 1.0) }' ||
		fail "delay-based control: ping's median ${p50:-?} ms, not under 1 ms"
fi
echo "PASS: two clients into one server over $kind, each served"
