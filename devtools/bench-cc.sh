#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Congestion control through a shaped bottleneck, side by side in one run.
# Hosts A (198.18.0.1), B (.2), C (.3) and D (.4) are network namespaces
# on a bridge (made here, as root, and removed on exit); the bridge's port
# towards A is shaped with tbf (BENCH_CC_RATE Mbit/s, 5 ms of queue): the
# switch port in front of a receiver. Cases, each run without congestion
# control (none) and with dpdat's delay-based control (swift,
# DPDAT_SWIFT=on), alternated in an order that turns every round:
#   - one:     B streams 64 KiB WRITEs to A (dpdat-perf write_bw);
#   - incast2: B and C stream to A at once (--clients 2);
#   - incast3: B, C and D (.4) stream to A at once (--clients 3);
#   - tcp:     B's dpdat stream and an iperf3 TCP stream from C at once.
# Beside every run the kernel's ping from C to A every 10 ms is the probe
# of the queue's delay (a dpdat probe would need a second dpdat process
# on C's interface); before it, 50 pings of the idle path. Measured: each
# flow's goodput (the dpdat-perf server's per-client report, or the
# client's own with one client; iperf3's receiver), Jain's index, the bottleneck's drops (tc), the probe's median
# and 99th percentile; every 100 ms each host's sending rate (its bridge
# port's byte counter: a second, independent view of the streams) and
# the probe's round trips, plotted per case (DIR/cc-CASE.png, gnuplot).
# The goals (issue 26) are judged on the medians of the rounds with
# swift:
#   one      goodput >= 0.9 of the bottleneck, p99 - idle median <= 200 us
#   incast2, incast3  sum >= 0.9, Jain >= 0.95, drops <= 0.1 % of
#            packets, the probe's p99 <= 2 x its idle p99 + 200 us
#   tcp      neither dpdat nor TCP under a third of the bottleneck
#   ECN      needs a marking queue (fq_codel or red with ecn): reported
#            as not measured when the kernel has none
# Prints progress and one table; writes DIR/cc.json; logs in DIR/logs-cc.
#
# Usage: devtools/bench.sh --cc [--quick] [--link KIND] [--out DIR]
#   (or devtools/bench-cc.sh with the same options)
#   --quick      1 round of 1 s streams, not judged (about 30 s)
#   --link KIND  af_xdp (default) or af_packet
#   --out DIR    where results go (default $BUILD/bench, BUILD=build)
# Overrides: BENCH_CC_ROUNDS (3), BENCH_CC_SECS (3), BENCH_CC_RATE (400),
# BENCH_CC_CASES ("one incast2 incast3 tcp"), BENCH_CC_PIN (1: the receiver's
# processes on CPU 0, the senders' on the others; 0: unpinned).
set -euo pipefail
here=$PWD
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."

. devtools/lib-bench.sh
build=${BUILD:-build}
bench_netns_opts cc "$@"
rm -f "$logs"/*
rounds=${BENCH_CC_ROUNDS:-3} secs=${BENCH_CC_SECS:-3}
[ "$quick" = 0 ] || { rounds=${BENCH_CC_ROUNDS:-1}; secs=${BENCH_CC_SECS:-1}; }
rate=${BENCH_CC_RATE:-400}
cases=${BENCH_CC_CASES:-"one incast2 incast3 tcp"}
for c in $cases; do
	case $c in one | incast2 | incast3 | tcp) ;;
	*) echo "bench-cc: BENCH_CC_CASES: '$c' (one, incast2, incast3, tcp)" >&2; exit 2 ;;
	esac
done
perf=$build/app/dpdat-perf/dpdat-perf
[ -x "$perf" ] || { echo "bench-cc: $perf not built (meson compile -C $build)" >&2; exit 1; }
# Where the processes run: three hosts on one machine share its CPUs, and
# a receiver that loses its core to a busy-polling sender acknowledges
# nothing meanwhile (measured: two into one with swift, unpinned, 0.73 of
# the bottleneck; pinned, 0.94). The receiver gets CPU 0 to itself, the
# senders the others, as on hosts of their own. BENCH_CC_PIN=0: unpinned.
# the CPUs this process may use (a cpuset may leave out CPU 0)
cpus=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
read -r -a cpus <<<"$cpus"
pin_a=() pin_s=() placement="unpinned"
if [ "${BENCH_CC_PIN:-1}" != 0 ] && [ ${#cpus[@]} -ge 2 ]; then
	rest=$(IFS=,; echo "${cpus[*]:1}")
	pin_a=(taskset -c "${cpus[0]}") pin_s=(taskset -c "$rest")
	placement="receiver on CPU ${cpus[0]}, senders on CPUs $rest"
fi
case " $cases " in *" tcp "*)
	command -v iperf3 >/dev/null ||
		{ echo "bench-cc: iperf3 missing (devtools/setup.sh)" >&2; exit 1; } ;;
esac

. test/integration/netns.sh
dev=$(netns_dev "$kind")
NS_C="${NS_TAG}c"
netns_bridge
netns_up 1500
netns_add_host "$NS_C" 198.18.0.3 1500 ||
	{ echo "bench-cc: no host C" >&2; exit 1; }
NS_D="${NS_TAG}d"
netns_add_host "$NS_D" 198.18.0.4 1500 ||
	{ echo "bench-cc: no host D" >&2; exit 1; }
shape() {	# a fresh queue (and fresh counters) for every run
	tc qdisc del dev "${NS_A}o" root 2>/dev/null || true
	tc qdisc add dev "${NS_A}o" root tbf rate "${rate}mbit" \
		burst 64kb latency 5ms
}
shape || { echo "bench-cc: no tbf in this kernel" >&2; exit 1; }
# a marking queue for the ECN row? (this kernel may have none)
ecn_note="not measured: no marking qdisc (fq_codel, red) in this kernel"
if tc qdisc replace dev "${NS_A}o" root fq_codel ce_threshold 1ms ecn \
	2>/dev/null; then
	ecn_note="not measured yet: fq_codel marks here, the case is to come"
fi
shape

# sample LOG SECS: every 100 ms, seconds since start and the MiB/s B, C
# and D sent into the bridge (their ports' rx counters, root namespace)
sample() {
	local f=$1 t0 t b c d i n=$(($2 * 10 + 15))
	t0=$(date +%s.%N)
	for ((i = 0; i < n; i++)); do
		t=$(date +%s.%N)
		read -r b </sys/class/net/"${NS_B}o"/statistics/rx_bytes
		read -r c </sys/class/net/"${NS_C}o"/statistics/rx_bytes
		read -r d </sys/class/net/"${NS_D}o"/statistics/rx_bytes
		echo "$t $b $c $d"
		sleep 0.1
	done | awk -v t0="$t0" 'NR > 1 { dt = $1 - pt;
		printf "%.2f %.3f %.3f %.3f\n", $1 - t0,
		       ($2 - pb) / dt / 1048576, ($3 - pc) / dt / 1048576,
		       ($4 - pd) / dt / 1048576 }
		{ pt = $1; pb = $2; pc = $3; pd = $4 }' >"$f"
}

# run CASE CC ROUND: one run; appends its record (JSON) to $logs/runs.json
run() {
	local c=$1 cc=$2 r=$3 l=$logs/$1-$2-$3 n=1 port sp pp ip= h ns
	local envs=() senders=(B) pids=()
	[ "$cc" = swift ] && envs=(env DPDAT_SWIFT=on)
	[ "$c" = incast2 ] && senders=(B C)
	[ "$c" = incast3 ] && senders=(B C D)
	n=${#senders[@]}
	port=$((5201 + r))
	shape
	ip netns exec "$NS_C" ping -n -i 0.01 -c 50 -W 1 198.18.0.1 >"$l.idle" 2>&1 || true
	ip netns exec "$NS_A" "${envs[@]}" "${pin_a[@]}" timeout -k 5 \
		$((secs + 60)) "$perf" write_bw --clients "$n" -D "$secs" -s 65536 --dev "$dev" \
		>"$l.server" 2>&1 &
	sp=$!
	if [ "$c" = tcp ]; then
		ip netns exec "$NS_A" "${pin_a[@]}" timeout $((secs + 60)) \
			iperf3 -s -1 \
			-p "$port" >"$l.iperf-s" 2>&1 &
		ip=$!
	fi
	sleep 1
	for h in "${senders[@]}"; do
		ns=NS_$h
		ip netns exec "${!ns}" "${envs[@]}" "${pin_s[@]}" timeout -k 5 \
			$((secs + 60)) "$perf" write_bw -D "$secs" -s 65536 \
			--dev "$dev" 198.18.0.1 >"$l.client-$h" 2>&1 &
		pids+=($!)
	done
	if [ "$c" = tcp ]; then
		# counted from its second second (-O 1: slow start, and
		# dpdat's stream connecting) to about when dpdat's ends
		ip netns exec "$NS_C" "${pin_s[@]}" timeout $((secs + 30)) \
			iperf3 -c 198.18.0.1 \
			-p "$port" -O 1 -t $((secs > 1 ? secs - 1 : 1)) -J \
			>"$l.iperf-c" 2>&1 &
		pids+=($!)
	fi
	sample "$l.rates" "$secs" &
	local smp=$!
	sleep 0.5
	ip netns exec "$NS_C" ping -n -D -i 0.01 -c $((secs * 100 - 50)) -W 1 \
		198.18.0.1 >"$l.ping" 2>&1 &
	pp=$!
	local st=0 p
	for p in "${pids[@]}"; do
		wait "$p" || st=1
	done
	wait "$sp" || st=1
	[ -z "$ip" ] || wait "$ip" || true
	wait "$pp" || true
	wait "$smp" || true
	[ $st -eq 0 ] || echo "bench-cc: $c $cc round $r: a stream failed (logs $l.*)" >&2
	tc -s qdisc show dev "${NS_A}o" >"$l.tc"
	python3 - "$l" "$c" "$cc" "$r" "$st" "$rate" >>"$logs/runs.json" <<'PY'
import json, re, sys
l, case, cc, rnd, st, rate = sys.argv[1:7]
def times(f):
    try:
        t = [float(x) for x in re.findall(r"time=([0-9.]+) ms", open(f).read())]
    except OSError:
        t = []
    return sorted(t)
def q(v, p):
    if not v:
        return None
    i = min(len(v), max(1, int(len(v) * p + 0.5)))
    return v[i - 1]
srv = open(l + ".server").read()
flows = {ip: float(g) for ip, g in
         re.findall(r"client (198\.18\.0\.[0-9]+): ([0-9.]+) MiB/s goodput", srv)}
if not flows:	# one client: the server reports none, the client does
    try:
        m = re.search(r"^ *65536 +[0-9]+ +[0-9.]+ +([0-9.]+)",
                      open(l + ".client-B").read(), re.M)
    except OSError:
        m = None
    if m:
        flows = {"198.18.0.2": float(m.group(1))}
jain = re.search(r"Jain's fairness index ([0-9.]+)", srv)
rec = {"case": case, "cc": cc, "round": int(rnd), "ok": st == "0",
       "dpdat_mib": flows, "jain": float(jain.group(1)) if jain else None}
if case == "tcp":
    try:
        j = json.load(open(l + ".iperf-c"))
        rec["tcp_mib"] = j["end"]["sum_received"]["bits_per_second"] / 8 / 1048576
    except (OSError, ValueError, KeyError):
        rec["tcp_mib"] = None
tc = open(l + ".tc").read()
m = re.search(r"Sent ([0-9]+) bytes ([0-9]+) pkt \(dropped ([0-9]+)", tc)
rec["pkts"], rec["drops"] = (int(m.group(2)), int(m.group(3))) if m else (None, None)
idle, busy = times(l + ".idle"), times(l + ".ping")
rec["idle_p50_ms"], rec["idle_p99_ms"] = q(idle, 0.5), q(idle, 0.99)
rec["ping_p50_ms"], rec["ping_p99_ms"] = q(busy, 0.5), q(busy, 0.99)
rec["bottleneck_mib"] = float(rate) * 1e6 / 8 / 1048576
print(json.dumps(rec))
PY
	# the probe over time (seconds since its first, ms) for the plots
	sed -n 's/^\[\([0-9.]*\)\].*time=\([0-9.]*\) ms/\1 \2/p' "$l.ping" |
		awk 'NR == 1 { t0 = $1 } { printf "%.3f %s\n", $1 - t0 + 0.5, $2 }' \
		>"$l.pingt"
}

total=0
for c in $cases; do total=$((total + 2 * rounds)); done
echo "bench-cc: $rounds round(s) of ${cases// /, }; $kind; ${secs} s streams through ${rate} Mbit/s (tbf, 5 ms), none and swift alternated; $placement"
k=0
for ((r = 1; r <= rounds; r++)); do
	for c in $cases; do
		order="none swift"
		[ $(((r + k) % 2)) -eq 0 ] || order="swift none"
		for cc in $order; do
			k=$((k + 1))
			printf 'bench-cc: [%d/%d] %-8s %-5s round %d ... ' "$k" "$total" "$c" "$cc" "$r"
			run "$c" "$cc" "$r"
			tail -n 1 "$logs/runs.json" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
s = sum(d["dpdat_mib"].values())
print("dpdat %.1f MiB/s%s, drops %s, ping p50 %s ms p99 %s ms" % (s,
      "" if d.get("tcp_mib") is None else ", tcp %.1f" % d["tcp_mib"],
      d["drops"], d["ping_p50_ms"], d["ping_p99_ms"]))'
		done
	done
done

python3 - "$logs/runs.json" "$out/cc.json" "$quick" "$kind" "$secs" \
	"$ecn_note" "$placement" <<'PY'
import json, statistics, sys
runs = [json.loads(x) for x in open(sys.argv[1])]
quick, kind, secs, ecn_note = sys.argv[3] == "1", sys.argv[4], sys.argv[5], sys.argv[6]
placement = sys.argv[7]
def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None
rows = []
for case in dict.fromkeys(r["case"] for r in runs):
    for cc in ("none", "swift"):
        rs = [r for r in runs if r["case"] == case and r["cc"] == cc]
        if not rs:
            continue
        bn = rs[0]["bottleneck_mib"]
        row = {"case": case, "cc": cc, "rounds": len(rs),
               "failed": sum(not r["ok"] for r in rs),
               "dpdat_share": med([sum(r["dpdat_mib"].values()) / bn for r in rs]),
               "jain": med([r["jain"] for r in rs]) if case.startswith("incast") else None,
               "drop_pct": med([100 * r["drops"] / max(1, r["pkts"] + r["drops"])
                                for r in rs if r["pkts"] is not None]),
               "idle_p50_ms": med([r["idle_p50_ms"] for r in rs]),
               "idle_p99_ms": med([r["idle_p99_ms"] for r in rs]),
               "ping_p50_ms": med([r["ping_p50_ms"] for r in rs]),
               "ping_p99_ms": med([r["ping_p99_ms"] for r in rs]),
               "qdelay_p99_us": med([(r["ping_p99_ms"] - r["idle_p50_ms"]) * 1000
                                     for r in rs if r["ping_p99_ms"] is not None
                                     and r["idle_p50_ms"] is not None])}
        if case == "tcp":
            row["tcp_share"] = med([r["tcp_mib"] / bn for r in rs
                                    if r.get("tcp_mib") is not None])
        goal, need = "", []
        if cc == "swift" and case == "one":
            goal = "share >= 0.9, p99 - idle <= 200 us"
            need = ["dpdat_share", "qdelay_p99_us"]
            judge = lambda r: r["dpdat_share"] >= 0.9 and r["qdelay_p99_us"] <= 200
        elif cc == "swift" and case.startswith("incast"):
            goal = "sum >= 0.9, Jain >= 0.95, drops <= 0.1 %, p99 <= 2 idle p99 + 200 us"
            need = ["dpdat_share", "jain", "drop_pct", "ping_p99_ms", "idle_p99_ms"]
            judge = lambda r: (r["dpdat_share"] >= 0.9 and r["jain"] >= 0.95 and
                               r["drop_pct"] <= 0.1 and
                               r["ping_p99_ms"] <= 2 * r["idle_p99_ms"] + 0.2)
        elif case == "tcp":
            goal = "dpdat and TCP each >= 1/3"
            need = ["dpdat_share", "tcp_share"]
            judge = lambda r: r["dpdat_share"] >= 1 / 3 and r["tcp_share"] >= 1 / 3
        row["goal"] = goal
        # a figure that did not parse (ping, tc, iperf3): not judged
        if not goal:
            row["verdict"] = ""
        elif quick or row["failed"] or any(row.get(k) is None for k in need):
            row["verdict"] = "not judged"
        else:
            row["verdict"] = "met" if judge(row) else "missed"
        rows.append(row)
json.dump({"link": kind, "secs": int(secs), "placement": placement,
           "rows": rows, "runs": runs, "ecn": ecn_note},
          open(sys.argv[2], "w"), indent=1)
f = lambda v, fmt: "-" if v is None else fmt % v
print()
print("%-8s %-5s %6s %6s %5s %7s %8s %8s %9s %6s  %s" % ("case", "cc", "dpdat", "tcp",
      "Jain", "drops", "idle p50", "ping p50", "p99-idle", "rounds", "goal"))
print("%-8s %-5s %6s %6s %5s %7s %8s %8s %9s %6s" % ("", "", "/link", "/link", "", "%",
      "ms", "ms", "us", ""))
for r in rows:
    print("%-8s %-5s %6s %6s %5s %7s %8s %8s %9s %6s  %s" % (r["case"], r["cc"],
          f(r["dpdat_share"], "%.3f"), f(r.get("tcp_share"), "%.3f"),
          f(r["jain"], "%.3f"), f(r["drop_pct"], "%.3f"), f(r["idle_p50_ms"], "%.3f"),
          f(r["ping_p50_ms"], "%.3f"), f(r["qdelay_p99_us"], "%.0f"),
          "%d%s" % (r["rounds"], "!" if r["failed"] else ""),
          (r["verdict"] + ": " + r["goal"]) if r["goal"] else ""))
print("%-8s %-5s %s" % ("ecn", "dcqcn", ecn_note))
print()
print("dpdat, tcp: goodput over the bottleneck (medians of the rounds; tcp: iperf3's "
      "receiver); drops: the bottleneck's, of its packets; idle p50, ping p50, p99-idle: "
      "the kernel's ping C -> A every 10 ms before and beside the streams (p99 less "
      "the idle median: the queue's delay); rounds with ! had a failed stream")
PY

# one plot a case: each host's sending rate (top) and the probe (bottom),
# none against swift, the last round
if command -v gnuplot >/dev/null; then
	for c in $cases; do
		a=$logs/$c-none-$rounds b=$logs/$c-swift-$rounds
		# the senders of the case: columns 2 (B), 3 (C), 4 (D)
		case $c in one) hs="B" ;; incast3) hs="B C D" ;; *) hs="B C" ;; esac
		lines=()
		for f in "$a:none" "$b:swift"; do
			col=2
			for h in B C D; do
				case " $hs " in *" $h "*)
					who=$h; [ "$c" = tcp ] && [ $h = C ] && who="C (TCP)"
					lines+=("\"${f%:*}.rates\" u 1:$col w l t \"$who, ${f#*:}\"") ;;
				esac
				col=$((col + 1))
			done
		done
		plot=$(IFS=,; echo "${lines[*]}")
		gnuplot <<EOF 2>"$logs/gnuplot-$c.err" || echo "bench-cc: gnuplot failed for $c (see $logs/gnuplot-$c.err)" >&2
set terminal pngcairo size 900,700 noenhanced
set output "$out/cc-$c.png"
set multiplot layout 2,1 title "$c through ${rate} Mbit/s ($kind, round $rounds)"
set ylabel "MiB/s sent"
set key top right
set grid
plot $plot
set ylabel "ping C -> A, ms"
set xlabel "s"
set logscale y
plot "$a.pingt" u 1:2 w l t "none", "$b.pingt" u 1:2 w l t "swift"
unset multiplot
EOF
	done
	echo "bench-cc: plots $out/cc-{${cases// /,}}.png"
else
	echo "bench-cc: gnuplot missing: no plots (devtools/setup.sh installs gnuplot-nox)"
fi
echo "bench-cc: $out/cc.json, logs in $logs"
