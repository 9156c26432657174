#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# The RC engine against the raw link, side by side in one run: dpdk-testpmd
# txonly -> rxonly over a memif pair with frames the size of dpdat's PMTU
# 1024 packets, then dpdat-rc-bench (64 KiB RDMA WRITEs and 8-byte WRITE
# ping-pong) over the same kind of pair. Runs are interleaved (A B A B) and
# the medians compared, because this machine's two vCPUs move around.
# Usage: devtools/bench-rc.sh [rounds] [seconds]   (default 2 rounds, 3 s)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}; secs=${2:-3}
build=${BUILD:-build}
bench=$build/app/dpdat-rc-bench/dpdat-rc-bench
frame=1082	# Ethernet + IPv4 + UDP + BTH + 1024 B + ICRC: a middle packet
[ -x "$bench" ] || devtools/build.sh "$build" >/dev/null
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd missing (package dpdk)"; exit 1; }
out=$(mktemp -d /tmp/dpdat-bench-XXXXXX)
. devtools/lib-bench.sh
trap 'bench_cleanup; rm -rf "$out"' EXIT

testpmd_run() {	# prints the median rx pps of the run
	bench_testpmd_pps "$out" $frame "$secs" || true
	echo "$BENCH_PPS"
}

echo "bench-rc: $rounds interleaved rounds, ${secs} s each, frames of $frame B"
: >"$out/tp"; : >"$out/bw"; : >"$out/pps"; : >"$out/lat"
for r in $(seq "$rounds"); do
	echo "  round $r: dpdk-testpmd txonly -> rxonly ..."
	testpmd_run >>"$out/tp"
	echo "  round $r: dpdat-rc-bench ..."
	"$bench" --seconds "$secs" --json "$out/r.json" 2>/dev/null | grep '^dpdat' || true
	python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/r.json"))
open(sys.argv[1] + "/bw", "a").write(f'{d["write_bw"]["gbit_s"]}\n')
open(sys.argv[1] + "/pps", "a").write(f'{d["write_bw"]["mpps"] * 1e6}\n')
open(sys.argv[1] + "/lat", "a").write(f'{d["write_lat_8B"]["rtt_p50_us"]}\n')
PY
done
tp=$(bench_median <"$out/tp"); pps=$(bench_median <"$out/pps")
bw=$(bench_median <"$out/bw"); lat=$(bench_median <"$out/lat")
awk -v tp="$tp" -v pps="$pps" -v bw="$bw" -v lat="$lat" -v f="$frame" 'BEGIN {
	printf "\n%-40s %14s %14s\n", "path (memif pair, medians)", "Mpps", "Gb/s"
	printf "%-40s %14.3f %14.2f\n", "raw link: testpmd txonly -> rxonly", tp / 1e6, tp * f * 8 / 1e9
	printf "%-40s %14.3f %14.2f\n", "dpdat RDMA WRITE 64 KiB (goodput)", pps / 1e6, bw
	printf "%-40s %14.3f\n", "ratio dpdat / raw link (packets)", (tp ? pps / tp : 0)
	printf "\ndpdat 8-byte RDMA WRITE round trip, median: %.2f us\n", lat
}'
