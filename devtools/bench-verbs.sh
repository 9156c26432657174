#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# What the verbs shim costs, side by side in one run over a memif pair:
#   - perftest (Debian's ib_write_lat, ib_read_lat, ib_write_bw, ib_send_bw)
#     through dpdat-run, QP details over TCP;
#   - dpdat-perf --transport verbs through dpdat-run: the same measuring
#     code as the next row, on the verbs and rdma_cm shims (the second,
#     independent measure of the shim);
#   - dpdat-perf on dpdat's native API (the baseline).
# 8-byte latency (t_typical, half round trips) and 64 KiB bandwidth
# (average MiB/s). The three alternate within each round, in an order
# that turns every round (the machine is shared: one run can differ 2x
# from the next); each figure is the median of its rounds. The goal: the
# shim within 5 % of native on latency, 3 % on bandwidth, judged on the
# pairs (a shim run and the native run of its round) that landed on the
# same speed: on the development VM every program, native too, gets one
# of two speeds a run at random (2 or 9 GB/s at 64 KiB, 0.55 or 1.25 us
# for write_lat), and a pair of one of each is a ratio of the two. Pairs
# within 1.5x of each other count as the same speed; with fewer than 3
# such pairs the goal is judged on every round. Prints progress and one
# table; writes DIR/verbs.json. Logs stay in DIR/logs-verbs.
#
# Usage: devtools/bench.sh --verbs [--quick] [--out DIR]
#   (or devtools/bench-verbs.sh with the same options)
#   --quick      2 rounds of 1000 iterations (about a minute)
#   --out DIR    where results go (default $BUILD/bench, BUILD=build)
# Overrides: BENCH_VERBS_ROUNDS (7), BENCH_VERBS_TESTS ("write_lat
# read_lat write_bw send_bw"), BENCH_VERBS_ITERS (the programs' -n, the
# same for all three; unset: 1000 for latency, 5000 for bandwidth, 1000
# with --quick), BENCH_VERBS_PROGRESS (the shim's
# DPDAT_VERBS_PROGRESS, or SERVER/CLIENT for each side: hybrid).
set -euo pipefail
here=$PWD
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."
. devtools/lib-bench.sh

usage() { sed -n '/^# Usage:/,/SERVER\/CLIENT for each side: hybrid)/s/^# \{0,1\}//p' "$self"; }

build=${BUILD:-build}
quick=${BENCH_QUICK:-0} out=""
while [ $# -gt 0 ]; do
	case $1 in
	--verbs) ;;
	--quick) quick=1 ;;
	--out) out=${2:?--out DIR}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
[ -z "$out" ] || case $out in /*) ;; *) out=$here/$out ;; esac
out=${out:-$build/bench}
mkdir -p "$out/logs-verbs"
out=$(cd "$out" && pwd)
logs=$out/logs-verbs
rounds=${BENCH_VERBS_ROUNDS:-7}
[ "$quick" = 0 ] || rounds=${BENCH_VERBS_ROUNDS:-2}
tests=${BENCH_VERBS_TESTS:-"write_lat read_lat write_bw send_bw"}
progress=${BENCH_VERBS_PROGRESS:-hybrid}
prog_s=${progress%/*} prog_c=${progress#*/}
for p in "$prog_s" "$prog_c"; do
	case $p in hybrid | thread | inline) ;;
	*) echo "bench-verbs: BENCH_VERBS_PROGRESS: '$progress' (hybrid, thread, inline, or SERVER/CLIENT)" >&2; exit 2 ;;
	esac
done
# The same count for all three: perftest's defaults differ by program
# (ib_send_bw 1000, ib_write_bw 5000; dpdat-perf's bandwidth tests 5000),
# and at 64 KiB 1000 are 10 ms of transfer, where the start weighs more
iters_of() {
	if [ -n "${BENCH_VERBS_ITERS:-}" ]; then echo "$BENCH_VERBS_ITERS"
	elif [ "$quick" = 1 ]; then echo 1000
	else case $1 in *_lat) echo 1000 ;; *) echo 5000 ;; esac
	fi
}
run=$build/app/dpdat-run/dpdat-run
perf=$build/app/dpdat-perf/dpdat-perf
for p in "$run" "$perf"; do
	[ -x "$p" ] || { echo "bench-verbs: $p not built (meson compile -C $build)" >&2; exit 1; }
done
command -v ib_write_lat >/dev/null ||
	{ echo "bench-verbs: perftest not installed (devtools/setup.sh)" >&2; exit 1; }
trap bench_cleanup EXIT

size() { case $1 in *_lat) echo 8 ;; *) echo 65536 ;; esac; }

# One pair; prints the client's figure (nan when it failed).
# kind: perftest | dpverbs | native
one() {
	local kind=$1 t=$2 s sock port log srv spid st fig iters
	s=$(size "$t")
	iters=(-n "$(iters_of "$t")")
	port=$((30000 + RANDOM % 20000))
	sock=/tmp/dpdat-bench-verbs-$$.sock
	log=$logs/$kind-$t-$port
	case $kind in
	perftest)
		DPDAT_VERBS_PROGRESS=$prog_s timeout -k 5 150 "$run" \
			--dev "net_memif0,role=server,socket=$sock" --ip 198.18.0.1 \
			"ib_$t" -d dpdat0 -x 0 -s "$s" "${iters[@]}" -p "$port" \
			>"$log.s" 2>&1 &
		spid=$!
		BENCH_PIDS+=("$spid")
		for _ in $(seq 200); do
			ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
			sleep 0.05
		done
		DPDAT_VERBS_PROGRESS=$prog_c timeout 120 "$run" \
			--dev "net_memif0,role=client,socket=$sock" \
			--ip 198.18.0.2 "ib_$t" -d dpdat0 -x 0 -s "$s" "${iters[@]}" \
			-p "$port" 127.0.0.1 >"$log.c" 2>&1 && st=0 || st=$?
		# latency: t_typical, column 5; bandwidth: BW average, column 4
		fig=$(awk -v c="$([ "${t#*_}" = lat ] && echo 5 || echo 4)" \
			'/#bytes/ { getline; print $c; exit }' "$log.c") ;;
	dpverbs | native)
		local tr=dpdat dev=()
		[ "$kind" = native ] || tr=verbs
		if [ "$kind" = native ]; then
			timeout -k 5 150 "$perf" "$t" -s "$s" "${iters[@]}" -p "$port" \
				>"$log.s" 2>&1 &
		else
			DPDAT_VERBS_PROGRESS=$prog_s timeout -k 5 150 "$run" \
				--dev "net_memif0,role=server,socket=$sock" \
				--ip 198.18.0.1 "$perf" "$t" --transport verbs \
				-s "$s" "${iters[@]}" -p "$port" >"$log.s" 2>&1 &
		fi
		spid=$!
		BENCH_PIDS+=("$spid")
		if [ "$kind" = native ]; then
			bench_wait_unix "/tmp/dpdat-perf-$port.sock" 10 || true
			timeout 120 "$perf" "$t" -s "$s" "${iters[@]}" \
				-p "$port" --out_json "$log.json" 198.18.0.1 \
				>"$log.c" 2>&1 &&
				st=0 || st=$?
		else
			bench_wait_unix "$sock" 10 || true
			sleep 0.5	# its rdma_cm listens right after
			DPDAT_VERBS_PROGRESS=$prog_c timeout 120 "$run" \
				--dev "net_memif0,role=client,socket=$sock" \
				--ip 198.18.0.2 "$perf" "$t" --transport verbs \
				-s "$s" "${iters[@]}" -p "$port" \
				--out_json "$log.json" 198.18.0.1 \
				>"$log.c" 2>&1 && st=0 || st=$?
		fi
		fig=$(python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))['results'][0]
print(r.get('t_typical_us', r.get('bw_avg_mib')))" "$log.json" 2>/dev/null || true) ;;
	esac
	# a client that failed leaves a server that may wait for ever (a QP
	# in error while it spins on memory): end it now
	[ "$st" = 0 ] || kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	bench_forget "$spid"
	[ "$st" = 0 ] && [ -n "$fig" ] && echo "$fig" || echo nan
}

declare -A vals
kinds=(perftest dpverbs native)
echo "bench-verbs: $rounds rounds of ${tests// /, }; memif; shim progress $progress (server/client)"
for ((r = 0; r < rounds; r++)); do
	for t in $tests; do
		line="round $((r + 1))/$rounds $t:"
		for ((k = 0; k < 3; k++)); do
			kind=${kinds[$(((k + r) % 3))]}
			v=$(one "$kind" "$t")
			vals[$t,$kind]+="$v "
			line+=" $kind $v"
		done
		echo "$line"
	done
done

python3 - "$out/verbs.json" "$tests" "$(for t in $tests; do for k in "${kinds[@]}"; do echo "$t $k ${vals[$t,$k]}"; done; done)" <<'PY'
import json, math, statistics, sys
path, tests, rows = sys.argv[1], sys.argv[2].split(), sys.argv[3].splitlines()
v = {}
for row in rows:
    f = row.split()
    v[(f[0], f[1])] = [float(x) for x in f[2:]]	# nan kept: rounds line up
fin = lambda xs: [x for x in xs if not math.isnan(x)]
med = lambda xs: statistics.median(fin(xs)) if fin(xs) else math.nan
# each round's ratio to the native run of the same round: the machine
# drifts between slow and fast phases, which a ratio of medians mixes
rmed = lambda a, b: med([x / y for x, y in zip(a, b) if y])
# the rounds whose pair landed on the same speed (within SAME of each other)
SAME = 1.5
def same(a, b):
    r = [x / y for x, y in zip(a, b) if y and not math.isnan(x / y)
         and 1 / SAME <= x / y <= SAME]
    return (statistics.median(r) if r else math.nan), len(r)
res = {}
print()
print("%-10s %10s %12s %10s %9s %9s %11s %9s %9s %11s %-6s" % ("test",
      "perftest", "dpdat-perf", "native", "perftest", "(rounds)", "(same)",
      "dp-verbs", "(rounds)", "(same)", "goal"))
print("%-10s %10s %12s %10s %9s %9s %11s %9s %9s %11s %-6s" % ("",
      "(shim)", "verbs (shim)", "dpdat-perf", "/native", "", "", "/native",
      "", "", ""))
for t in tests:
    lat = t.endswith("_lat")
    p, d, n = (med(v[(t, k)]) for k in ("perftest", "dpverbs", "native"))
    # the shim's cost: latency above native, bandwidth below it
    rp = p / n if n else math.nan
    rd = d / n if n else math.nan
    rr = rmed(v[(t, "perftest")], v[(t, "native")])
    rdr = rmed(v[(t, "dpverbs")], v[(t, "native")])
    rs, ns = same(v[(t, "perftest")], v[(t, "native")])
    rds, nds = same(v[(t, "dpverbs")], v[(t, "native")])
    lim = 1.05 if lat else 0.97
    ok = lambda r: (r <= lim) if lat else (r >= lim)
    judged = rs if ns >= 3 else rr
    goal = "-" if math.isnan(judged) else ("met" if ok(judged) else "missed")
    unit = "us" if lat else "MiB/s"
    print("%-10s %10.3f %12.3f %10.3f %9.3f %9.3f %6.3f (%2d) %9.3f %9.3f "
          "%6.3f (%2d) %-6s" % (t, p, d, n, rp, rr, rs, ns, rd, rdr, rds,
                                nds, goal))
    res[t] = {"unit": unit, "perftest": p, "dpdat_perf_verbs": d, "native": n,
              "perftest_ratio": rp, "perftest_ratio_rounds": rr,
              "perftest_ratio_same": rs, "perftest_pairs_same": ns,
              "dpdat_perf_verbs_ratio": rd,
              "dpdat_perf_verbs_ratio_rounds": rdr,
              "dpdat_perf_verbs_ratio_same": rds,
              "dpdat_perf_verbs_pairs_same": nds, "goal": goal,
              "runs": {k: [None if math.isnan(x) else x for x in v[(t, k)]]
                       for k in ("perftest", "dpverbs", "native")}}
print("\nlatency: t_typical us (lower is better, goal /native <= 1.05);"
      " bandwidth: MiB/s (goal /native >= 0.97). /native: ratio of the"
      " medians; (rounds): median of each round's ratio; (same): median"
      " of the rounds whose pair landed on the same speed (within %gx),"
      " and how many; the goal is judged on those (on every round with"
      " fewer than 3)" % SAME)
json.dump(res, open(path, "w"), indent=1)
PY
echo "bench-verbs: $out/verbs.json, logs in $logs"
