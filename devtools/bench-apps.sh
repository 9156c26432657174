#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Many applications on one host, side by side in one run: hosts A and B
# are network namespaces joined by a veth pair (made here, as root, and
# removed on exit), each with four macvlan shares of its veth0
# (doc/guides/many-apps.md). Cases, each a dpdat-perf pair per
# application, all of a case's pairs at once:
#   - raw:   the link's baseline on veth0 (write_bw --transport raw: the
#            frames of the WRITEs, bare; write_lat --transport bare: the
#            DPDK device's own ping-pong);
#   - veth0: one application on veth0 itself (no share);
#   - 1, 2, 4 apps: one application on each of 1, 2, 4 shares at once.
# 64 KiB write_bw (MiB/s; per application and the sum) and 8 B write_lat
# (half round trips, us, per application: t_typical, the median, and
# t_avg, the mean, which shows what sharing the cores costs). The cases take
# turns in an order that turns every round (the machine is shared); each
# figure is the median of its rounds. Prints progress and one table;
# writes DIR/apps.json. Logs stay in DIR/logs-apps.
#
# Usage: devtools/bench.sh --apps [--quick] [--link KIND] [--out DIR]
#   (or devtools/bench-apps.sh with the same options)
#   --quick      2 rounds, 1 s and 2000 iterations (about a minute)
#   --link KIND  af_xdp (default) or af_packet
#   --out DIR    where results go (default $BUILD/bench, BUILD=build)
# Overrides: BENCH_APPS_ROUNDS (5), BENCH_APPS_SECS (3),
# BENCH_APPS_ITERS (20000), BENCH_APPS_CASES ("raw veth0 1 2 4").
set -euo pipefail
here=$PWD
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."

. devtools/lib-bench.sh
build=${BUILD:-build}
bench_netns_opts apps "$@"
rounds=${BENCH_APPS_ROUNDS:-5} secs=${BENCH_APPS_SECS:-3}
iters=${BENCH_APPS_ITERS:-20000}
[ "$quick" = 0 ] || { rounds=${BENCH_APPS_ROUNDS:-2}; secs=${BENCH_APPS_SECS:-1}; iters=${BENCH_APPS_ITERS:-2000}; }
cases=${BENCH_APPS_CASES:-"raw veth0 1 2 4"}
perf=$build/app/dpdat-perf/dpdat-perf
[ -x "$perf" ] || { echo "bench-apps: $perf not built (meson compile -C $build)" >&2; exit 1; }

. test/integration/netns.sh
netns_up 1500
netns_share "$NS_A" 4 10
netns_share "$NS_B" 4 20

# end <case> <test> <i> <server|client>: application i's end of the case,
# in the background (its pid appended to pids)
end() {
	local c=$1 t=$2 i=$3 ifc=mv$3 srv=198.18.0.$((10 + $3)) ns=$NS_A
	local log=$logs/$1-$2-$3 args=(-s 65536 -D "$secs") more=()
	case $c in raw | veth0) ifc=veth0 srv=198.18.0.1 ;; esac
	[ "$t" = write_lat ] && args=(-s 8 -n "$iters")
	if [ "$c" = raw ]; then
		args+=(--transport raw)
		[ "$t" = write_lat ] && args[-1]=bare
	fi
	if [ "$4" = client ]; then
		ns=$NS_B more=(--out_json "$log.json" "$srv")
		rm -f "$log.json"
	fi
	ip netns exec "$ns" timeout 120 "$perf" "$t" "${args[@]}" \
		-p $((18515 + i)) --dev "net_${kind}$i,iface=$ifc" "${more[@]}" \
		>"$log.${4:0:1}" 2>&1 &
	pids+=($!)
}

# run <case> <test>: the case's pairs at once; prints one figure per
# application (nan when one failed)
run() {
	local c=$1 t=$2 n i pids=() st=0
	case $c in
	raw | veth0) n=1 ;;
	*) n=$c ;;
	esac
	for i in $(seq "$n"); do
		end "$c" "$t" "$i" server
	done
	sleep 1.5
	for i in $(seq "$n"); do
		end "$c" "$t" "$i" client
	done
	for p in "${pids[@]}"; do
		wait "$p" || st=1
	done
	for i in $(seq "$n"); do
		python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))['results'][0]
print(('%s/%s' % (r['t_typical_us'], r['t_avg_us'])) if 't_typical_us' in r
      else r['bw_avg_mib'])" "$logs/$c-$t-$i.json" 2>/dev/null ||
			echo nan
	done | { [ $st -eq 0 ] && cat || sed 's/.*/nan/'; } | xargs
	return 0
}

declare -A vals
read -ra cl <<<"$cases"
nc=${#cl[@]}
echo "bench-apps: $rounds rounds; $kind; cases: $cases; 64 KiB write_bw ${secs} s, 8 B write_lat x $iters"
for ((r = 0; r < rounds; r++)); do
	for t in write_bw write_lat; do
		line="round $((r + 1))/$rounds $t:"
		for ((k = 0; k < nc; k++)); do
			c=${cl[$(((k + r) % nc))]}
			v=$(run "$c" "$t")
			vals[$t,$c]+="$v;"
			line+=" [$c] $v"
		done
		echo "$line"
	done
done

python3 - "$out/apps.json" "$kind" "$cases" "$(for t in write_bw write_lat; do for c in $cases; do echo "$t $c ${vals[$t,$c]}"; done; done)" <<'PY'
import json, math, statistics, sys
path, kind, cases, rows = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].splitlines()
v = {}
for row in rows:
    t, c, rest = row.split(" ", 2)
    # latency: t_typical/t_avg per application
    rounds = [[tuple(float(y) for y in x.split("/")) if "/" in x else (float(x),)
               for x in r.split()] for r in rest.split(";") if r.strip()]
    v[(t, c)] = rounds
med = lambda xs: statistics.median(xs) if xs else math.nan
def ok(r):  # a round counts when every application reported
    return r and not any(math.isnan(x[0]) for x in r)
res = {"link": kind, "cases": {}}
col = lambda rs, k: [x[k] for r in rs if ok(r) for x in r]
raw_bw = med(col(v.get(("write_bw", "raw"), []), 0))
raw_lat = med(col(v.get(("write_lat", "raw"), []), 0))
raw_avg = med(col(v.get(("write_lat", "raw"), []), 1))
print()
print("%-6s %9s %9s %8s %7s %9s %8s %9s %8s" % ("case", "bw/app", "bw sum",
      "sum/raw", "rounds", "lat typ", "/raw", "lat avg", "/raw"))
for c in cases:
    bw = [r for r in v[("write_bw", c)] if ok(r)]
    lat = [r for r in v[("write_lat", c)] if ok(r)]
    per = med([x[0] for r in bw for x in r])
    tot = med([sum(x[0] for x in r) for r in bw])
    typ = med([x[0] for r in lat for x in r])
    avg = med([x[1] for r in lat for x in r])
    div = lambda a, b: a / b if b else math.nan
    print("%-6s %9.1f %9.1f %8.3f %3d/%-3d %9.3f %8.3f %9.3f %8.3f" % (c, per, tot,
          div(tot, raw_bw), min(len(bw), len(lat)), len(v[("write_bw", c)]),
          typ, div(typ, raw_lat), avg, div(avg, raw_avg)))
    res["cases"][c] = {"bw_per_app_mib": per, "bw_sum_mib": tot,
                       "lat_typical_per_app_us": typ, "lat_avg_per_app_us": avg,
                       "bw_rounds": v[("write_bw", c)], "lat_rounds": v[("write_lat", c)]}
print("\nbw: 64 KiB write_bw MiB/s (median over rounds; per app: over every "
      "application of every round); lat: 8 B write_lat, us: t_typical (the "
      "median half round trip) and t_avg (the mean: it shows "
      "the time slices between busy pollers); raw: the link's baseline "
      "on veth0 (bw --transport raw, lat --transport bare)")
json.dump(res, open(path, "w"), indent=1)
PY
echo "bench-apps: $out/apps.json, logs in $logs"
