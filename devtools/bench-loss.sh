#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Goodput under loss, side by side in one run: dpdat-perf write_bw (1 MiB),
# read_bw (1 MiB) and send_bw (64 KiB) with random loss injected on both
# ports (DPDAT_FAULT rx:drop, each way), selective repeat (dpdat peers) and
# go-back-N (--go-back-n: what a RoCE peer that is not dpdat gets), against
# the lossless run of the same test. Configurations alternate within each
# round (the machine is shared: one run can differ 2x from the next); the
# figure is the median over the rounds. Then the 99th percentile of 64 KiB
# write_lat (half round trips, perftest style) at 0, 0.1 and 1 % loss.
# Prints progress and one table; writes DIR/loss.json, DIR/loss.dat and
# DIR/loss.png (gnuplot). Logs stay in DIR/logs-loss.
#
# Usage: devtools/bench.sh --loss [--quick] [--link KIND] [--out DIR]
#   (or devtools/bench-loss.sh with the same options)
#   --quick      write_bw only, at 0 and 1 %, one round (about 30 s)
#   --link KIND  memif (default), af_xdp or af_packet between two network
#                namespaces (made here, as root, removed on exit)
#   --out DIR    where results go (default $BUILD/bench, BUILD=build)
# Overrides: BENCH_LOSS_ROUNDS (3), BENCH_LOSS_RATES ("0.001 0.01 0.05"),
# BENCH_LOSS_SECS (2), BENCH_LOSS_TESTS ("write_bw read_bw send_bw"),
# BENCH_PMTU (1024).
set -euo pipefail
here=$PWD
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."
. devtools/lib-bench.sh

usage() { sed -n '/^# Usage:/,/^# BENCH_PMTU/s/^# \{0,1\}//p' "$self"; }

build=${BUILD:-build}
quick=${BENCH_QUICK:-0} link=memif out=""
while [ $# -gt 0 ]; do
	case $1 in
	--loss) ;;
	--quick) quick=1 ;;
	--link) link=${2:?--link memif|af_xdp|af_packet}; shift ;;
	--out) out=${2:?--out DIR}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
case $link in memif | af_xdp | af_packet) ;;
	*) echo "bench-loss: --link $link: memif, af_xdp or af_packet" >&2; exit 2 ;; esac
[ -z "$out" ] || case $out in /*) ;; *) out=$here/$out ;; esac
out=${out:-$build/bench}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ "$quick" = 1 ]; then
	rounds=${BENCH_LOSS_ROUNDS:-1} rates=${BENCH_LOSS_RATES:-0.01}
	secs=${BENCH_LOSS_SECS:-1} tests=${BENCH_LOSS_TESTS:-write_bw}
	lat_iters=2000
else
	rounds=${BENCH_LOSS_ROUNDS:-3} rates=${BENCH_LOSS_RATES:-"0.001 0.01 0.05"}
	secs=${BENCH_LOSS_SECS:-2} tests=${BENCH_LOSS_TESTS:-"write_bw read_bw send_bw"}
	lat_iters=10000
fi
pmtu=${BENCH_PMTU:-1024}
perf=$build/app/dpdat-perf/dpdat-perf
[ -x "$perf" ] || devtools/build.sh "$build" >/dev/null
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=python3
command -v gnuplot >/dev/null || { echo "bench-loss: gnuplot missing (devtools/setup.sh)" >&2; exit 1; }

logs=$out/logs-loss
rm -rf "$logs"
mkdir -p "$logs"
trap bench_cleanup EXIT
A=() B=() devopt=() peer=198.18.0.1
if [ "$link" != memif ]; then
	[ "$(id -u)" -eq 0 ] ||
		{ echo "bench-loss: --link $link: network namespaces need root" >&2; exit 1; }
	. test/integration/netns.sh
	netns_up "${BENCH_LINK_MTU:-1500}"
	trap 'bench_cleanup; netns_down' EXIT
	A=(ip netns exec "$NS_A") B=(ip netns exec "$NS_B")
	devopt=(--dev "$(netns_dev "$link")")
fi
svc=$((21000 + ($$ % 100) * 300))

size_of() { case $1 in send_bw) echo 65536 ;; *) echo 1048576 ;; esac; }
# the configurations of a test: lossless, then each rate selective repeat
# (sr) and go-back-N (gbn)
configs=("0 sr")
for r in $rates; do configs+=("$r sr" "$r gbn"); done
nt=$(wc -w <<<"$tests")
total=$((rounds * nt * ${#configs[@]} + 4))
step=0
progress() { step=$((step + 1)); printf 'bench-loss: [%d/%d] %s\n' $step $total "$*"; }

val=""
# once TEST SIZE RATE MODE NAME [args]: one server + client pair with loss
# RATE each way; sets val (MiB/s for bw, the p99 in us for lat)
once() {
	local t=$1 s=$2 rate=$3 mode=$4 name=$5 fault="" srv rc=0 i
	shift 5
	local opts=(-p "$svc" "${devopt[@]}")
	svc=$((svc + 1))
	opts+=(-m "$pmtu")	# 1024 unless told, as the loss figures so far
	[ "$mode" = gbn ] && opts+=(--go-back-n)
	[ "$rate" = 0 ] || fault="rx:drop=$rate;seed=$RANDOM"
	rm -f "$name.json"
	"${A[@]}" env DPDAT_FAULT="$fault" timeout 60 "$perf" "$t" "${opts[@]}" \
		</dev/null >"$name.server.log" 2>&1 &
	srv=$!
	BENCH_PIDS+=("$srv")
	if [ "$link" = memif ]; then
		bench_wait_unix "/tmp/dpdat-perf-$((svc - 1)).sock" 10 || sleep 0.5
	else
		for ((i = 0; i < 100; i++)); do
			grep -q 'Waiting for client' "$name.server.log" && break
			sleep 0.1
		done
	fi
	"${B[@]}" env DPDAT_FAULT="$fault" timeout 60 "$perf" "$t" "${opts[@]}" \
		-s "$s" "$@" --out_json "$name.json" "$peer" </dev/null \
		>"$name.log" 2>&1 || rc=$?
	wait "$srv" 2>/dev/null || true
	bench_forget "$srv"
	[ "$rc" = 0 ] || { echo "bench-loss:   $name: exit status $rc" >&2; tail -5 "$name.log" >&2; return 1; }
	val=$("$py" - "$name.json" <<-'PY'
		import json, sys
		r = json.load(open(sys.argv[1]))["results"][0]
		print(r["bw_avg_mib"] if "bw_avg_mib" in r else r["p99_us"])
		PY
	)
}

res=$logs/results.tsv
: >"$res"
echo "bench-loss: $link, $rounds round(s), ${secs} s a run, PMTU $pmtu, loss on both ports; out $out"
for ((round = 1; round <= rounds; round++)); do
	for t in $tests; do
		s=$(size_of "$t")
		for c in "${configs[@]}"; do
			read -r rate mode <<<"$c"
			name=$logs/$t-$rate-$mode-$round
			once "$t" "$s" "$rate" "$mode" "$name" -D "$secs" ||
				once "$t" "$s" "$rate" "$mode" "$name" -D "$secs" ||
				{ echo "bench-loss: FAILED: $t at $rate ($mode)" >&2; exit 1; }
			progress "round $round: $t $s B, loss $rate each way, $mode ... $val MiB/s"
			printf '%s\t%s\t%s\t%s\n' "$t" "$rate" "$mode" "$val" >>"$res"
		done
	done
done
# p99 of 64 KiB write_lat: lossless, then the rates up to 1 %
for c in "0 sr" "0.001 sr" "0.01 sr" "0.01 gbn"; do
	read -r rate mode <<<"$c"
	name=$logs/lat-$rate-$mode
	once write_lat 65536 "$rate" "$mode" "$name" -n "$lat_iters" ||
		{ echo "bench-loss: FAILED: write_lat at $rate ($mode)" >&2; exit 1; }
	progress "write_lat 64 KiB, loss $rate each way, $mode ... p99 $val us"
	printf 'lat\t%s\t%s\t%s\n' "$rate" "$mode" "$val" >>"$res"
done

"$py" - "$res" "$out" "$link" "$pmtu" "$rounds" <<'PY'
import json, statistics, sys
res, out, link, pmtu, rounds = sys.argv[1:6]
runs = {}
for line in open(res):
    t, rate, mode, v = line.split("\t")
    runs.setdefault((t, float(rate), mode), []).append(float(v))
med = {k: statistics.median(v) for k, v in runs.items()}
tests = [t for t in dict.fromkeys(k[0] for k in runs) if t != "lat"]
rates = sorted({k[1] for k in runs if k[1] > 0 and k[0] != "lat"})
rows, dat = [], []
print(f"\nGoodput under random loss each way, {link}, PMTU {pmtu}: median of "
      f"{rounds} alternated round(s) / the lossless median of the same test")
print(f"{'test':10} {'loss':>6} {'sel. repeat':>20} {'go-back-N':>20}")
for t in tests:
    base = med[(t, 0.0, "sr")]
    print(f"{t:10} {'0':>6} {base:12.0f} MiB/s {'':>20}")
    for r in rates:
        sr, gbn = med.get((t, r, "sr")), med.get((t, r, "gbn"))
        print(f"{t:10} {r * 100:5.1f}% {sr:8.0f} = {sr / base:5.2f}x "
              f"{gbn:8.0f} = {gbn / base:5.2f}x")
        rows.append({"test": t, "loss": r, "lossless_mib": base,
                     "sr_mib": sr, "gbn_mib": gbn,
                     "sr_ratio": sr / base, "gbn_ratio": gbn / base,
                     "sr_runs": runs[(t, r, "sr")],
                     "gbn_runs": runs[(t, r, "gbn")]})
        dat.append(f"{t} {r * 100} {sr / base:.4f} {gbn / base:.4f}")
lat = {(k[1], k[2]): v[0] for k, v in runs.items() if k[0] == "lat"}
print("\nwrite_lat 64 KiB, 99th percentile (half round trip):")
b = lat.get((0.0, "sr"))
for (r, m), v in sorted(lat.items()):
    print(f"  loss {r * 100:4.1f}% {m:3}: {v:8.1f} us = {v / b:4.2f}x lossless")
json.dump({"link": link, "pmtu": int(pmtu), "rounds": int(rounds),
           "goodput": rows,
           "p99_lat_us": [{"loss": r, "mode": m, "p99_us": v}
                          for (r, m), v in sorted(lat.items())]},
          open(f"{out}/loss.json", "w"), indent=1)
open(f"{out}/loss.dat", "w").write("# test loss% sr_ratio gbn_ratio\n" +
                                   "\n".join(dat) + "\n")
PY
{
	echo "set terminal pngcairo size 800,500 noenhanced; set output '$out/loss.png'"
	echo "set title 'dpdat goodput under random loss each way ($link, PMTU $pmtu)'"
	echo "set xlabel 'loss each way (%)'; set ylabel 'goodput / lossless'"
	echo "set yrange [0:1.25]; set grid; set key bottom left; set logscale x"
	echo -n "plot "
	sep=""
	for t in $tests; do
		echo -n "$sep'< grep ^$t $out/loss.dat' using 2:3 with linespoints title '$t selective repeat', "
		echo -n "'< grep ^$t $out/loss.dat' using 2:4 with linespoints title '$t go-back-N'"
		sep=", "
	done
	echo
} >"$logs/loss.gp"
gnuplot "$logs/loss.gp" 2>"$logs/gnuplot.err" ||
	echo "bench-loss: warning: no plot ($(head -1 "$logs/gnuplot.err"))"
echo "bench-loss: $out/loss.json, $out/loss.png"
