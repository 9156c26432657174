#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# devtools/bench.sh --quick end to end: it must finish, its JSON must hold
# every test and size with positive figures (a kernel udp one too when
# dpdat-perf has --transport=udp), and its two plots must be PNGs; the
# goals table must be printed with its six rows, each ratio the
# quotient of the row's two figures (as bench.json's "goals" has them) and
# the median of its runs. The figures themselves are not judged.
# Usage: bench-quick.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$build/test/bench/bench-quick
rm -rf "$out"
mkdir -p "$out"
# two sizes each and short goal runs: a smoke test of the whole tool
BUILD=$build BENCH_BW_SIZES="64 1048576" BENCH_LAT_SIZES="2 65536" \
	BENCH_GOAL_LAT_ITERS=5000 \
	"$src/devtools/bench.sh" --quick --out "$out" | tee "$out.txt"
udp=0
"$build/app/dpdat-perf/dpdat-perf" write_bw --transport=udp --help \
	>/dev/null 2>&1 && udp=1
py=/usr/bin/python3
[ -x $py ] || py=python3
$py - "$out" "$udp" "$out.txt" <<'PY'
import json, re, statistics, sys
out, udp = sys.argv[1], sys.argv[2] == "1"
stdout = open(sys.argv[3]).read()
d = json.load(open(out + "/bench.json"))
bad = []
rows = {(r["test"], r["bytes"]): r for r in d["rows"]}
want = [(t, b) for t in ("write_bw", "read_bw", "send_bw")
        for b in (64, 1 << 20)] + \
       [(t, b) for t in ("write_lat", "read_lat", "send_lat")
        for b in (2, 65536)]
for k in want:
    r = rows.get(k)
    if r is None:
        bad.append(f"no row {k}")
        continue
    need = ["dpdat"] + (["raw_link", "ratio_dpdat_raw"] if k[0].endswith("_bw")
                        else ["sockperf"])
    if k[0] in ("write_bw", "write_lat"):	# beside the raw port
        need += ["raw_port", "ratio_dpdat_raw_port"]
    if udp:
        need += ["kernel_udp", "ratio_dpdat_kernel"]
    for f in need:
        v = r.get(f)
        if not isinstance(v, (int, float)) or not v > 0:
            bad.append(f"{k} {f} = {v!r}")
for x in d["raw_link"]:
    if not x["pps"] > 0 or not x["frame_bytes"] > x["payload_bytes"] > 0:
        bad.append(f"raw link {x}")
for p in ("bw.png", "lat.png"):
    with open(f"{out}/{p}", "rb") as f:
        h = f.read()
    if h[:8] != b"\x89PNG\r\n\x1a\n" or len(h) < 2000:
        bad.append(f"{p} is not a PNG plot")
for p in ("bw.dat", "lat.dat", "bench.gp"):
    if len(open(f"{out}/{p}").read().splitlines()) < 2:
        bad.append(f"{p} is empty")
# the goals: six rows printed, none judged, ratios computed from this
# run's figures
goals = d.get("goals")
if not isinstance(goals, list) or len(goals) != 6:
    bad.append(f"bench.json goals: {goals!r:.200}")
    goals = []
if not re.search(r"^the goals: a --quick run cannot judge them", stdout,
                 re.M):
    bad.append("goals heading: no 'a --quick run cannot judge them'")
if d["config"].get("goals_judged") is not False:
    bad.append(f"config goals_judged {d['config'].get('goals_judged')!r}")
printed = {}
for l in stdout.splitlines():
    f = re.split(r"\s{2,}", l.strip())
    if len(f) == 9 and f[8].rstrip("~").count("+") == 1:
        printed[f[0]] = f
def pct(v):
    return "-" if v is None else f"{v:.0f}%"
for g in goals:
    m = g["metric"]
    dv, b, r = g["dpdat"], g["baseline"], g["ratio"]
    if g.get("verdict") != "not judged" or g.get("met") is not None:
        bad.append(f"goal {m}: verdict {g.get('verdict')!r}, met "
                   f"{g.get('met')!r} in a --quick run")
    if not (isinstance(dv, float) and isinstance(b, float) and dv > 0 and b > 0):
        bad.append(f"goal {m}: figures {dv!r}, {b!r}")
        continue
    dr, br = g["dpdat_runs"], g["baseline_runs"]
    if len(dr) != 2 or len(br) != 2 or dv != statistics.median(dr) or \
       b != statistics.median(br):
        bad.append(f"goal {m}: not the medians of 2 rounds: {g}")
        continue
    for side, runs in (("dpdat", dr), ("baseline", br)):
        sp = g[side + "_spread_pct"]
        exp = 100 * (max(runs) - min(runs)) / statistics.median(runs)
        if sp is None or abs(sp - exp) > 1e-6:
            bad.append(f"goal {m}: {side} spread {sp!r}, not {exp}")
    if r is None or abs(r - dv / b) > 1e-9 * r:
        bad.append(f"goal {m}: ratio {r!r}, not {dv} / {b}")
    f = printed.get(m)
    if f is None:
        bad.append(f"goal {m}: not in the printed table")
    elif f[5] != f"{dv / b:.3f}" or f[7] != "not judged" or \
            f[2] != pct(g["dpdat_spread_pct"]) or \
            f[4] != pct(g["baseline_spread_pct"]) or \
            f[8].rstrip("~") != f"{len(dr)}+{len(br)}":
        bad.append(f"goal {m}: printed {f}")
if len(printed) != 6:
    bad.append(f"{len(printed)} goal rows printed, not 6")
print("\n".join(bad) or f"bench-quick: {len(want)} rows, udp={udp}, PNGs, "
      f"{len(goals)} goals: ok")
sys.exit(1 if bad else 0)
PY
