#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""devtools/bench.sh's report: the table, DIR/bench.json, the plots' data
(DIR/bw.dat, DIR/lat.dat) and their gnuplot script (DIR/bench.gp).

    bench_report.py RESULTS JSON DIR QUICK ELAPSED BW_SECS LAT_ITERS TP_SECS
                    SP_SECS SP_OPTS PMTU HAVE_UDP TERM BUSY OTHERS TRIES
                    MAX_OTHERS LINK GOAL_ROUNDS GOAL_LAT_ITERS GOAL_BW_SECS

RESULTS is bench.sh's results.tsv, one measurement a line, tab-separated:
  perf      TRANSPORT TEST BYTES JSON OTHERS_PCT   (a dpdat-perf client's
                                                    --out_json file)
  raw       BYTES FRAME PAYLOAD PPS_BEST PPS_MEDIAN OTHERS_PCT  (testpmd)
  sockperf  BYTES MSG P50_US AVG_US P99_US OTHERS_PCT
  iperf3    MIB_S OTHERS_PCT
  goal      TRANSPORT TEST BYTES QPS JSON OTHERS_PCT  (a run for the goals
                                                    only, one a round)
The other arguments describe the run, as bench.sh has them (QUICK and
HAVE_UDP are 0 or 1, TERM gnuplot's terminal, BUSY and OTHERS the CPU
shares others took before and during the run, GOAL_* the goal runs'
rounds, latency iterations and bandwidth seconds). A --quick run's goals
are not judged. Its own script so that it
can be tested on canned runs (test/tools/bench_report_check.py); it only
reads and writes files, gnuplot runs in bench.sh.
"""
import json, os, platform, statistics, subprocess, sys, time

if len(sys.argv) != 22:
    print("usage: " + __doc__.split("\n\n")[1].strip(), file=sys.stderr)
    sys.exit(2)

(res, jpath, out, quick, elapsed, bw_secs, lat_iters, tp_secs, sp_secs,
 sp_opts, pmtu, have_udp, term, busy, others, tries, max_others,
 link, goal_rounds, goal_lat_iters, goal_bw_secs) = sys.argv[1:]
max_others = int(max_others)
perf = {}		# (transport, test, bytes) -> the dpdat-perf result
raw = {}		# bytes -> {frame, payload, pps, mib_s}
sp = {}			# bytes -> sockperf figures
iperf = None		# the kernel's TCP between two hosts
samples = {}		# (transport, test, bytes, qps) -> the goal runs' results
for line in open(res):
    f = line.rstrip("\n").split("\t")
    if f[0] == "perf":
        d = json.load(open(f[4]))
        r = d["results"][0]
        r["transport"] = d.get("transport", f[1])
        r["others_pct"] = int(f[5])
        perf[(f[1], f[2], int(f[3]))] = r
    elif f[0] == "goal":
        d = json.load(open(f[5]))
        r = d["results"][0]
        r["others_pct"] = int(f[6])
        samples.setdefault((f[1], f[2], int(f[3]), int(f[4])), []).append(r)
    elif f[0] == "raw":
        pps = float(f[4])
        raw[int(f[1])] = {"frame_bytes": int(f[2]), "payload_bytes": int(f[3]),
                          "pps": pps, "pps_median": float(f[5]),
                          "mib_s": pps * int(f[3]) / 2**20,
                          "others_pct": int(f[6])}
    elif f[0] == "iperf3":
        iperf = {"mib_s": float(f[1]), "others_pct": int(f[2])}
    elif f[0] == "sockperf":
        sp[int(f[1])] = {"msg_bytes": int(f[2]), "p50_us": float(f[3]),
                         "avg_us": float(f[4]), "p99_us": float(f[5]),
                         "others_pct": int(f[6])}

def figure(r):
    return r["bw_avg_mib"] if "bw_avg_mib" in r else r["t_typical_us"]

bw_tests = ["write_bw", "read_bw", "send_bw"]
lat_tests = ["write_lat", "read_lat", "send_lat"]
rows = []
for t in bw_tests + lat_tests:
    sizes = sorted({b for (tr, tt, b) in perf if tt == t})
    for b in sizes:
        d = figure(perf[("dpdat", t, b)])
        kr = perf.get(("udp", t, b))
        k = figure(kr) if kr else None
        rp = perf.get(("raw", t, b))
        row = {"test": t, "bytes": b, "unit": "MiB/s" if t in bw_tests else "us",
               "dpdat": d, "raw_port": figure(rp) if rp else None,
               "raw_link": None, "kernel_udp": k, "sockperf": None,
               "ratio_dpdat_raw_port": None,
               "ratio_dpdat_raw": None, "ratio_dpdat_kernel": None,
               "others_pct": {"dpdat": perf[("dpdat", t, b)]["others_pct"]}}
        if rp:
            row["ratio_dpdat_raw_port"] = d / row["raw_port"]
            row["others_pct"]["raw_port"] = rp["others_pct"]
        if kr:
            row["others_pct"]["kernel_udp"] = kr["others_pct"]
        if t in bw_tests:
            row["raw_link"] = raw[b]["mib_s"]
            row["ratio_dpdat_raw"] = d / row["raw_link"]
            row["others_pct"]["raw_link"] = raw[b]["others_pct"]
        elif b in sp:	# read_lat is a whole round trip, sockperf half one
            row["sockperf"] = sp[b]["p50_us"] * (2 if t == "read_lat" else 1)
            row["others_pct"]["sockperf"] = sp[b]["others_pct"]
        if k:
            row["ratio_dpdat_kernel"] = d / k
        rows.append(row)

where = "memif pair" if link == "memif" else f"{link}, two namespaces"
kwhere = "loopback" if link == "memif" else "same veth"

def num(v):
    if v is None:
        return "-"
    return (f"{v:.0f}" if v >= 1000 else f"{v:.1f}" if v >= 10 else
            f"{v:.2f}" if v >= 0.1 else f"{v:.2g}")

def size(b):
    return (f"{b >> 20} MiB" if b >= 2**20 and b % 2**20 == 0 else
            f"{b >> 10} KiB" if b >= 1024 and b % 1024 == 0 else f"{b} B")

hdr = ["test", "size", "unit", "dpdat", "raw port", "raw link", "kernel udp",
       "sockperf", "dpdat/port", "dpdat/raw", "dpdat/kernel"]
lines = [hdr]
busy_cells = 0
def cell(r, col):	# "~": others took the CPUs while it was measured
    global busy_cells
    c = num(r[col])
    if col == "sockperf" and r[col] is not None and \
       sp[r["bytes"]]["msg_bytes"] != r["bytes"]:
        c += "*"
    if r["others_pct"].get(col, 0) > max_others:
        c += "~"
        busy_cells += 1
    return c
for r in rows:
    lines.append([r["test"], size(r["bytes"]), r["unit"], cell(r, "dpdat"),
                  cell(r, "raw_port"), cell(r, "raw_link"),
                  cell(r, "kernel_udp"), cell(r, "sockperf"),
                  num(r["ratio_dpdat_raw_port"]), num(r["ratio_dpdat_raw"]),
                  num(r["ratio_dpdat_kernel"])])
w = [max(len(l[i]) for l in lines) for i in range(len(hdr))]
print()
for i, l in enumerate(lines):
    print("  ".join(c.ljust(w[j]) if j < 3 else c.rjust(w[j])
                    for j, c in enumerate(l)).rstrip())
    if i == 0 or (i < len(lines) - 1 and lines[i + 1][0] != l[0]):
        print("  ".join("-" * x for x in w))
print(f"link: {link}" + ("" if link == "memif" else
      " between two namespaces (veth); raw link: dpdk-testpmd over "
      f"{link} on the same veth; kernel: across the same veth"))
if iperf:
    print(f"kernel TCP (iperf3) across the same veth: {iperf['mib_s']:.0f} MiB/s")
print("bw: MiB/s (average); lat: us, median (write_lat, send_lat: half the "
      "round trip; read_lat: the whole one)")
print("raw port: the frames of the WRITE, bare, over dpdat's own port and EAL "
      "setup (dpdat-perf --transport=raw: write_lat echoes each frame, "
      "write_bw copies payloads in and out); raw link: dpdk-testpmd "
      "txonly -> rxonly, template frames")
print("dpdat/port, dpdat/raw, dpdat/kernel: bw above 1 = dpdat faster; lat below 1 = "
      "dpdat faster")
if any(v["msg_bytes"] != b for b, v in sp.items()):
    print("* sockperf takes 14 .. 65507 B: it ran the nearest size")
if have_udp != "1":
    print("no kernel udp column: dpdat-perf has no --transport=udp")
if busy_cells:
    print(f"~ other processes took more than {max_others}% of the CPUs while "
          f"it was measured ({tries} tries at most): low, or noisy")

# The goals: dpdat / a baseline on the same link, from runs of their own
# (bench.sh takes a row's runs in turn, A, B, A, B ...), each figure the
# median of its rounds. what: "rtt" a round trip in us (write_lat reports
# half of one, read_lat all of it), "p99" write_lat's p99 as a round trip,
# "bw" MiB/s, "rate" messages/s in millions.
NOISY_PCT = 20		# a figure whose rounds spread more: the row is noisy


def extract(what, t, r):
    if what == "rtt":
        return r["t_typical_us"] * (1 if t == "read_lat" else 2)
    if what == "p99":
        return r["p99_us"] * (1 if t == "read_lat" else 2)
    return r["bw_avg_mib"] if what == "bw" else r["msg_rate_mpps"]


W8 = ("dpdat", "write_lat", 8, 1)
GOALS = [
    {"metric": "8 B WRITE round trip / bare link", "unit": "us",
     "what": "rtt", "op": "<=", "goal": 1.3, "dpdat": W8,
     "base": ("bare", "write_lat", 8, 1), "info": ("raw", "write_lat", 8, 1),
     "baseline_is": "dpdat-perf --transport=bare write_lat -s 8 "
                    "(the 8-byte WRITE's frame ping-ponged on the device's "
                    "own bursts, no dpdat port layer); raw port "
                    "(--transport=raw, dpdat's port layer) beside it, "
                    "informational"},
    {"metric": "8 B WRITE round trip / kernel UDP", "unit": "us",
     "what": "rtt", "op": "<", "goal": 1.0, "links": ("af_xdp", "af_packet"),
     "dpdat": W8, "base": ("udp", "write_lat", 8, 1),
     "baseline_is": "dpdat-perf --transport=udp write_lat -s 8 "
                    "over the same veth"},
    {"metric": "8 B READ round trip / 8 B WRITE round trip", "unit": "us",
     "what": "rtt", "op": "<=", "goal": 1.3,
     "dpdat": ("dpdat", "read_lat", 8, 1), "base": W8,
     "baseline_is": "write_lat -s 8's round trip (twice its figure, which "
                    "is half a round trip)"},
    {"metric": "8 B WRITE message rate, one QP / raw port's", "unit": "M/s",
     "what": "rate", "op": ">=", "goal": 0.5, "goal_abs": {"memif": 8.0},
     "dpdat": ("dpdat", "write_bw", 8, 1), "base": ("raw", "write_bw", 8, 1),
     "baseline_is": "dpdat-perf --transport=raw write_bw -s 8's "
                    "message rate (one frame a message, one QP)"},
    {"metric": "64 KiB WRITE bw / raw port's", "unit": "MiB/s",
     "what": "bw", "op": ">=", "goal": 0.95,
     "dpdat": ("dpdat", "write_bw", 65536, 1),
     "base": ("raw", "write_bw", 65536, 1),
     "baseline_is": "dpdat-perf --transport=raw write_bw -s 65536"},
    {"metric": "64 KiB WRITE bw, 1024 QPs / 1 QP", "unit": "MiB/s",
     "what": "bw", "op": ">=", "goal": 0.9, "links": ("memif",),
     "dpdat": ("dpdat", "write_bw", 65536, 1024),
     "base": ("dpdat", "write_bw", 65536, 1),
     "baseline_is": "write_bw -s 65536 -q 1"},
    {"metric": "p99 / median of the 8 B WRITE round trip", "unit": "us",
     "what": "p99", "base_what": "rtt", "op": "<=", "goal": 2.0,
     "dpdat": W8, "base": W8,
     "baseline_is": "the median (t_typical) of the same write_lat -s 8 "
                    "runs, dpdat's figure their p99"},
]


def median(v):
    return statistics.median(v) if v else None


def spread(v):	# (max - min) / median of its rounds, in %; None below 2
    m = median(v)
    return 100 * (max(v) - min(v)) / m if len(v) >= 2 and m else None


def runs_of(what, key):
    rs = samples.get(key, [])
    return [extract(what, key[1], r) for r in rs], \
        max([0] + [r["others_pct"] for r in rs])


judged = quick != "1"
goals = []
for g in GOALS:
    if link not in g.get("links", (link,)):
        continue
    dr, do = runs_of(g["what"], g["dpdat"])
    br, bo = runs_of(g.get("base_what", g["what"]), g["base"])
    d, bl = median(dr), median(br)
    ratio = d / bl if d is not None and bl else None
    ds, bs = spread(dr), spread(br)
    goal_abs = g.get("goal_abs", {}).get(link)
    met = None
    if not judged or ratio is None or ds is None or bs is None:
        verdict = "not judged"
    elif ds > NOISY_PCT or bs > NOISY_PCT:
        verdict = "noisy"
    else:
        met = {"<=": ratio <= g["goal"], "<": ratio < g["goal"],
               ">=": ratio >= g["goal"]}[g["op"]]
        if goal_abs is not None:	# both must hold
            met = met and d >= goal_abs
        verdict = "met" if met else "missed"
    e = {"metric": g["metric"], "unit": g["unit"], "dpdat": d,
         "baseline": bl, "ratio": ratio, "goal_op": g["op"],
         "goal": g["goal"], "verdict": verdict, "met": met,
         "baseline_is": g["baseline_is"],
         "dpdat_run": "%s %s -s %d -q %d" % g["dpdat"],
         "baseline_run": "%s %s -s %d -q %d" % g["base"],
         "dpdat_runs": dr, "baseline_runs": br,
         "dpdat_spread_pct": ds, "baseline_spread_pct": bs,
         "others_pct_max": max(do, bo)}
    if goal_abs is not None:
        e["goal_abs"] = goal_abs
    if "info" in g:	# the raw port beside the bare link: not judged
        ir, io = runs_of(g["what"], g["info"])
        e["raw_port"] = median(ir)
        e["raw_port_runs"] = ir
        e["raw_port_spread_pct"] = spread(ir)
        e["ratio_raw_port"] = d / e["raw_port"] if d is not None and ir \
            else None
    goals.append(e)


def goal_text(e):
    t = f"{e['goal_op']} {e['goal']:g}"
    if "goal_abs" in e:
        t += f" and >= {e['goal_abs']:g} {e['unit']}"
    return t


def pct(v):
    return "-" if v is None else f"{v:.0f}%"


glines = [["goal (dpdat / baseline)", "dpdat", "spread", "baseline", "spread",
           "ratio", "goal", "verdict", "rounds"]]
for e in goals:
    glines.append([e["metric"],
                   f"{num(e['dpdat'])} {e['unit']}", pct(e["dpdat_spread_pct"]),
                   f"{num(e['baseline'])} {e['unit']}",
                   pct(e["baseline_spread_pct"]),
                   "-" if e["ratio"] is None else f"{e['ratio']:.3f}",
                   goal_text(e), e["verdict"],
                   f"{len(e['dpdat_runs'])}+{len(e['baseline_runs'])}" +
                   ("~" if e["others_pct_max"] > max_others else "")])
gw = [max(len(l[i]) for l in glines) for i in range(len(glines[0]))]
print()
if judged:
    print(f"the goals ({goal_rounds} rounds; a row's dpdat and baseline runs "
          "taken in turn; figures: medians of the rounds):")
else:
    print(f"the goals: a --quick run cannot judge them (smoke only: "
          f"{goal_rounds} rounds of short runs): every row not judged")
for i, l in enumerate(glines):
    print("  ".join(c.ljust(gw[j]) if j in (0, 6, 7) else c.rjust(gw[j])
                    for j, c in enumerate(l)).rstrip())
    if i == 0:
        print("  ".join("-" * x for x in gw))
    elif "raw_port" in goals[i - 1]:
        e = goals[i - 1]
        print(f"    raw port (dpdat's port layer): {num(e['raw_port'])} us, "
              f"spread {pct(e['raw_port_spread_pct'])}; dpdat / raw port "
              f"{'-' if e['ratio_raw_port'] is None else '%.3f' % e['ratio_raw_port']}"
              " (informational)")
print(f"runs: {goal_lat_iters} iterations (latency), {goal_bw_secs} s "
      "(bandwidth); round trips: write_lat's figure doubled, read_lat's as "
      "it is; spread: (max - min) / median of a figure's rounds; noisy: "
      f"dpdat's or the baseline's spread above {NOISY_PCT}%, neither met "
      "nor missed; not judged: --quick, or fewer than 2 rounds; rounds: "
      "dpdat's + the baseline's; baselines:")
for e in goals:
    print(f"  {e['metric']}: {e['baseline_is']}")
if any(e["others_pct_max"] > max_others for e in goals):
    print(f"~ other processes took more than {max_others}% of the CPUs while "
          "one of its runs was measured: low, or noisy")

def cmd(*a):
    try:
        return subprocess.run(a, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception:
        return ""

doc = {
    "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    "machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                "dpdk": cmd("pkg-config", "--modversion", "libdpdk"),
                "git": cmd("git", "describe", "--always", "--dirty"),
                "cpu_busy_before_pct": int(busy),
                "cpu_others_during_pct": int(others)},
    "config": {"link": link, "quick": quick == "1", "pmtu": int(pmtu),
               "tries": int(tries),
               "max_others_pct": max_others,
               "bw_seconds": int(bw_secs), "lat_iterations": int(lat_iters),
               "testpmd_seconds": int(tp_secs),
               "sockperf_seconds": int(sp_secs), "sockperf_options": sp_opts,
               "goal_rounds": int(goal_rounds),
               "goal_lat_iterations": int(goal_lat_iters),
               "goal_bw_seconds": int(goal_bw_secs),
               "goals_judged": judged, "goal_noisy_pct": NOISY_PCT,
               "elapsed_seconds": int(elapsed)},
    "units": {"bw": "MiB/s, average", "lat": "us, median",
              "raw_link": "MiB/s: payload bytes x testpmd frames/s (best second)",
              "raw_port": "dpdat-perf --transport=raw: the frames of the "
                          "WRITE, bare, over dpdat's port (same unit as dpdat)"},
    "rows": rows,
    "raw_link": [dict(bytes=b, **v) for b, v in sorted(raw.items())],
    "sockperf": [dict(bytes=b, **v) for b, v in sorted(sp.items())],
    "iperf3_tcp": iperf,
    "goals": goals,
    "runs": [{**r, "transport": tr, "test": t} for (tr, t, b), r in
             sorted(perf.items(), key=lambda x: (x[0][0], x[0][1], x[0][2]))],
}
os.makedirs(os.path.dirname(os.path.abspath(jpath)), exist_ok=True)
with open(jpath, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")

# gnuplot data: one row per size, "?" where there is no figure
def dat(name, cols, sizes, get):
    with open(os.path.join(out, name), "w") as f:
        f.write("# bytes " + " ".join(cols) + "\n")
        for b in sizes:
            f.write(str(b) + " " + " ".join(
                "?" if get(c, b) is None else f"{get(c, b):.4f}"
                for c in cols) + "\n")

def perf_fig(tr, t, b):
    r = perf.get((tr, t, b))
    return figure(r) if r else None

bws = sorted({r["bytes"] for r in rows if r["unit"] == "MiB/s"})
lats = sorted({r["bytes"] for r in rows if r["unit"] == "us"})
bw_cols = ["dpdat_" + t for t in bw_tests] + ["raw_link"] + \
          ["udp_" + t for t in bw_tests]
lat_cols = ["dpdat_" + t for t in lat_tests] + ["udp_" + t for t in lat_tests] + \
           ["sockperf"]

def get(c, b):
    if c == "raw_link":
        return raw[b]["mib_s"] if b in raw else None
    if c == "sockperf":
        return sp[b]["p50_us"] if b in sp else None
    tr, t = c.split("_", 1)
    return perf_fig(tr, t, b)

dat("bw.dat", bw_cols, bws, get)
dat("lat.dat", lat_cols, lats, get)

def tics(sizes):
    return ", ".join(f'"{size(b).replace(" ", "")}" {b}' for b in sizes)

names = {"write": "WRITE", "read": "READ", "send": "SEND"}
colors = {"write": "#1f77b4", "read": "#d62728", "send": "#2ca02c"}
gp = [
    f'set terminal {term} size 960,600 font ",10"',
    'set datafile missing "?"', "set logscale xy", "set grid",
    "set key outside right top", "set xlabel \"message size\"",
]
when = doc["when"][:10]


def test_series(path, tests, col, kernel):
    """One plotted line a test: dpdat's (solid) or the kernel's (dotted)."""
    style, who = ("lw 1 pt 6 dt 3", "kernel UDP") if kernel else ("lw 2 pt 7", "dpdat")
    lines = []
    for i, t in enumerate(tests):
        k = t.split("_")[0]
        lines.append(f'"{path}" using 1:{col + i} with linespoints {style} '
                     f'lc rgb "{colors[k]}" title "{who} {names[k]}"')
    return lines


p = [f'set output "{out}/bw.png"',
     f'set title "Bandwidth vs size: dpdat ({where}), raw link (testpmd), '
     f'kernel UDP ({kwhere}); {os.cpu_count()} vCPUs, {when}"',
     f"set xtics ({tics(bws)})", 'set ylabel "MiB/s"', "plot \\"]
series = test_series(f"{out}/bw.dat", bw_tests, 2, False)
series.append(f'"{out}/bw.dat" using 1:5 with linespoints lw 2 pt 5 dt 2 '
              f'lc rgb "black" title "raw link (testpmd)"')
if have_udp == "1":
    series += test_series(f"{out}/bw.dat", bw_tests, 6, True)
p.append(", \\\n".join(series))
p += [f'set output "{out}/lat.png"',
      f'set title "Latency vs size (median): dpdat ({where}), kernel UDP '
      f'and sockperf ({kwhere}); {os.cpu_count()} vCPUs, {when}"',
      f"set xtics ({tics(lats)})",
      'set ylabel "us (WRITE, SEND, sockperf: half round trip; READ: round trip)"',
      "plot \\"]
series = test_series(f"{out}/lat.dat", lat_tests, 2, False)
if have_udp == "1":
    series += test_series(f"{out}/lat.dat", lat_tests, 5, True)
series.append(f'"{out}/lat.dat" using 1:8 with linespoints lw 2 pt 5 dt 2 '
              f'lc rgb "black" title "sockperf ping-pong"')
p.append(", \\\n".join(series))
with open(os.path.join(out, "bench.gp"), "w") as f:
    f.write("\n".join(gp + p) + "\n")
