#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# The libfabric provider's overhead: Debian's fi_pingpong on the provider
# (-p dpdat -e msg) next to dpdat-perf send_lat on the native API, over
# the same memif pair, alternating A and B in one run:
#   devtools/fabric-bench.sh [ROUNDS]     (default 5; build/ must exist)
# Both measure a SEND ping-pong and report half the round trip, averaged
# over the iterations (fi_pingpong's usec/xfer, dpdat-perf's t_avg), at 8 B
# and at 64 KiB; at 64 KiB a ping-pong's bandwidth is the size over that
# time (fi_pingpong's MB/sec), so its ratio is the same. Prints every
# round, then the medians and B/A. fi_pingpong's control socket (its
# address exchange) uses the loopback; every frame of the test goes
# through the memif pair.
set -u
cd "$(dirname "$0")/.."
rounds=${1:-5}
case $rounds in ''|*[!0-9]*|0) echo "usage: $0 [rounds]" >&2; exit 2 ;; esac
perf=build/app/dpdat-perf/dpdat-perf
prov=$PWD/build/drivers/fabric
[ -x "$perf" ] && [ -e "$prov/libdpdat-fi.so" ] ||
	{ echo "fabric-bench: build/ first (devtools/build.sh build)" >&2; exit 1; }
command -v fi_pingpong >/dev/null ||
	{ echo "fabric-bench: no fi_pingpong (devtools/setup.sh)" >&2; exit 1; }
dir=$(mktemp -d /tmp/dpdat-fabench-XXXXXX)
trap 'pkill -P $$ 2>/dev/null; rm -rf "$dir"' EXIT

iters() { [ "$1" -le 4096 ] && echo 20000 || echo 2000; }

# A: dpdat-perf send_lat; its t_avg
run_a() {
	local size=$1 n
	n=$(iters "$size")
	timeout 60 "$perf" send_lat -s "$size" -n "$n" >"$dir/a.srv" 2>&1 &
	sleep 0.5
	timeout 60 "$perf" send_lat -s "$size" -n "$n" 198.18.0.1 \
		>"$dir/a.cli" 2>&1
	wait
	awk -v s="$size" '$1 == s && NF >= 6 { print $6 }' "$dir/a.cli"
}

# B: fi_pingpong -e msg on the provider; its usec/xfer
run_b() {
	local size=$1 n sock=$dir/memif.sock
	n=$(iters "$size")
	rm -f "$sock"
	FI_PROVIDER_PATH=$prov FI_DPDAT_IPV4=198.18.0.1 \
	FI_DPDAT_DEVICE="net_memif0,role=server,socket=$sock" \
		timeout 60 fi_pingpong -p dpdat -e msg -S "$size" -I "$n" \
		>"$dir/b.srv" 2>&1 &
	for _ in $(seq 100); do
		ss -ltn 2>/dev/null | grep -q ':47592 ' && break
		sleep 0.1
	done
	FI_PROVIDER_PATH=$prov FI_DPDAT_IPV4=198.18.0.2 \
	FI_DPDAT_DEVICE="net_memif0,role=client,socket=$sock" \
		timeout 60 fi_pingpong -p dpdat -e msg -S "$size" -I "$n" \
		127.0.0.1 >"$dir/b.cli" 2>&1
	wait
	awk 'NF >= 8 && $2 ~ /^[0-9]+[kmg]?$/ && $3 ~ /^=/ { print $7 }' \
		"$dir/b.cli"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "?";
	else if (NR % 2) print v[(NR + 1) / 2];
	else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "fabric-bench: $rounds rounds, A = dpdat-perf send_lat (native API)," \
	"B = fi_pingpong -p dpdat -e msg (libfabric), memif, one-way us"
for size in 8 65536; do
	: >"$dir/A.$size"; : >"$dir/B.$size"
	for r in $(seq "$rounds"); do
		a=$(run_a "$size"); b=$(run_b "$size")
		[ -n "$a" ] && echo "$a" >>"$dir/A.$size"
		[ -n "$b" ] && echo "$b" >>"$dir/B.$size"
		printf 'size %-6s round %d: A %8s us   B %8s us\n' "$size" "$r" \
			"${a:-failed}" "${b:-failed}"
	done
done
echo
printf '%-8s %12s %12s %8s %14s %14s\n' size 'A median us' 'B median us' 'B/A' \
	'A MB/s' 'B MB/s'
for size in 8 65536; do
	ma=$(median <"$dir/A.$size"); mb=$(median <"$dir/B.$size")
	awk -v s="$size" -v a="$ma" -v b="$mb" 'BEGIN {
		if (a == "?" || b == "?") { printf "%-8s %12s %12s\n", s, a, b; exit }
		printf "%-8s %12.2f %12.2f %8.3f %14.1f %14.1f\n", s, a, b, b / a,
			s / a, s / b }'
done
