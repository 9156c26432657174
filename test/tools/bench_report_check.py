#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""devtools/bench_report.py on canned runs (test/tools/bench_report/: a
results.tsv and the dpdat-perf JSON files it names, figures chosen so that
every ratio is known): the table's columns and cells, the marks for a busy
CPU (~) and a sockperf size it could not run (*), the JSON's figures and
ratios, the plots' data. bench.sh's figures are only as good as this.

    bench_report_check.py BENCH_REPORT_PY FIXTURE_DIR
"""

import json
import math
import os
import re
import subprocess
import sys
import tempfile

COLS = ["test", "size", "unit", "dpdat", "raw port", "raw link",
        "kernel udp", "sockperf", "dpdat/port", "dpdat/raw", "dpdat/kernel"]

# (test, bytes) -> the figures the fixture's runs give
WANT = {
    ("write_bw", 4096): {"dpdat": 1500, "raw_port": 2000, "raw_link": 1024,
                         "kernel_udp": 500, "ratio_dpdat_raw_port": 0.75,
                         "ratio_dpdat_raw": 1500 / 1024,
                         "ratio_dpdat_kernel": 3.0},
    ("write_bw", 65536): {"dpdat": 3000, "raw_port": 2400, "raw_link": 2048,
                          "kernel_udp": 600, "ratio_dpdat_raw_port": 1.25,
                          "ratio_dpdat_raw": 3000 / 2048,
                          "ratio_dpdat_kernel": 5.0},
    ("read_bw", 4096): {"dpdat": 1200, "raw_port": None, "raw_link": 1024,
                        "ratio_dpdat_raw_port": None,
                        "ratio_dpdat_raw": 1200 / 1024,
                        "ratio_dpdat_kernel": 3.0},
    ("write_lat", 2): {"dpdat": 4.0, "raw_port": 2.5, "kernel_udp": 16.0,
                       "sockperf": 6.0, "ratio_dpdat_raw_port": 1.6,
                       "ratio_dpdat_kernel": 0.25, "raw_link": None},
    # read_lat is a whole round trip: sockperf's half one, doubled
    ("read_lat", 2): {"dpdat": 9.0, "sockperf": 12.0,
                      "ratio_dpdat_kernel": 0.3, "raw_port": None},
}

# (test, size) -> the table's cells after "unit"
CELLS = {
    ("write_bw", "4 KiB"): ["1500", "2000", "1024", "500.0", "-", "0.75",
                            "1.46", "3.00"],
    ("write_bw", "64 KiB"): ["3000", "2400", "2048~", "600.0", "-", "1.25",
                             "1.46", "5.00"],
    ("read_bw", "4 KiB"): ["1200", "-", "1024", "400.0", "-", "-", "1.17",
                           "3.00"],
    ("write_lat", "2 B"): ["4.00", "2.50", "-", "16.0", "6.00*", "1.60", "-",
                           "0.25"],
    ("read_lat", "2 B"): ["9.00", "-", "-", "30.0", "12.0*", "-", "-",
                          "0.30"],
}

# issue 14's goals: metric -> dpdat, baseline (medians of the sweep's run,
# if any, and the goal runs), ratio, met, runs (dpdat's + baseline's)
GOALS = {
    # round trips: write_lat's half ones doubled (1.7 1.9 5.0 / 1.5 1.4 1.6)
    "8 B WRITE round trip / raw port's": (3.8, 3.0, 3.8 / 3.0, True, "3+3"),
    # read_lat's is a whole one already (5.0 6.0 5.5)
    "8 B READ round trip / 8 B WRITE's": (5.5, 3.8, 5.5 / 3.8, True, "3+3"),
    # the sweep's 3000 and 2400 count as one run each
    "64 KiB WRITE bw / raw port's": (2900, 2400, 2900 / 2400, True, "3+3"),
    # two runs a side: the mean of the two
    "1 MiB READ bw / 1 MiB WRITE bw": (2050, 2550, 2050 / 2550, False, "2+2"),
    "8 B WRITE msg rate / raw port's": (2.2, 5.0, 0.44, False, "3+3"),
    # one of its runs while others took 35% of the CPUs: "~"
    "64 KiB WRITE bw, 1024 QPs / 1 QP": (2500, 2900, 2500 / 2900, True, "3+3~"),
}

bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


def same(a, b):
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9)


def run(script, fix, out, nargs=18):
    with open(os.path.join(fix, "results.tsv.in")) as f:
        tsv = f.read().replace("@DIR@", os.path.abspath(fix))
    res = os.path.join(out, "results.tsv")
    with open(res, "w") as f:
        f.write(tsv)
    args = [res, os.path.join(out, "bench.json"), out, "1", "42", "1",
            "500", "2", "1", "--nonblocked", "1024", "1", "png", "3", "4",
            "1", "20", "memif"][:nargs]
    return subprocess.run([sys.executable, script] + args,
                          capture_output=True, text=True, timeout=60)


def check_table(stdout):
    lines = [l for l in stdout.splitlines() if l.strip()]
    hdr = re.split(r"\s{2,}", lines[0].strip()) if lines else []
    check(hdr == COLS, f"table header {hdr}")
    rows = {}
    for l in lines[1:]:
        f = l.split()
        if len(f) == 12 and f[0].endswith(("_bw", "_lat")):
            rows[(f[0], f[1] + " " + f[2])] = f[4:]
    for k, cells in CELLS.items():
        check(rows.get(k) == cells, f"table row {k}: {rows.get(k)}, "
              f"not {cells}")
    check(len(rows) == len(CELLS), f"{len(rows)} table rows, not {len(CELLS)}")
    check("* sockperf takes 14 .. 65507 B" in stdout, "no '*' note")
    check("~ other processes took more than 20%" in stdout, "no '~' note")


def check_goals(stdout, out):
    got = {}
    for l in stdout.splitlines():
        f = re.split(r"\s{2,}", l.strip())
        if len(f) == 7 and f[0] in GOALS:
            got[f[0]] = f
    check(len(got) == len(GOALS), f"{len(got)} goal rows, not {len(GOALS)}")
    for m, (d, b, ratio, met, runs) in GOALS.items():
        f = got.get(m)
        if f is None:
            check(False, f"no goal row {m!r}")
            continue
        check(f[3] == f"{ratio:.3f}", f"goal {m!r}: ratio {f[3]}, not "
              f"{ratio:.3f}")
        check(f[5] == ("met" if met else "missed"), f"goal {m!r}: {f[5]}")
        check(f[6] == runs, f"goal {m!r}: runs {f[6]}, not {runs}")
        check(float(f[1].split()[0]) == d and float(f[2].split()[0]) == b,
              f"goal {m!r}: figures {f[1]}, {f[2]}, not {d}, {b}")
    check("read_lat's as it is" in stdout and
          "--transport=raw write_bw -s 8's message rate" in stdout,
          "goals: no note on round trips or on the message rate's baseline")
    check("~ other processes took more than 20% of the CPUs while one of its "
          "runs" in stdout, "goals: no '~' note")
    check("that 82 B frame: 8.00 M frames/s (best second), dpdat's 8 B WRITE "
          "rate 0.28 of it" in stdout, "goals: no testpmd line")
    d = json.load(open(os.path.join(out, "bench.json")))
    g = {e["metric"]: e for e in d.get("goals", [])}
    check(list(g) == list(GOALS), f"JSON goals {list(g)}")
    for m, (dv, b, ratio, met, runs) in GOALS.items():
        e = g.get(m, {})
        check(same(e.get("dpdat"), dv) and same(e.get("baseline"), b) and
              same(e.get("ratio"), ratio) and e.get("met") is met,
              f"JSON goal {m!r}: {e}")
    e = g.get("8 B WRITE msg rate / raw port's", {})
    check(e.get("goal_abs") == 10.0 and same(e.get("raw_link_mpps"), 8.0) and
          same(e.get("ratio_raw_link"), 0.275) and
          e.get("dpdat_runs") == [2.0, 2.5, 2.2] and
          e.get("baseline_run") == "raw write_bw -s 8 -q 1",
          f"JSON goal 8 B WRITE msg rate: {e}")
    e = g.get("64 KiB WRITE bw, 1024 QPs / 1 QP", {})
    check(e.get("others_pct_max") == 35 and
          g.get("1 MiB READ bw / 1 MiB WRITE bw", {}).get("others_pct_max")
          == 0, "JSON goals' others_pct_max")
    check(e.get("dpdat_runs") == [2500, 2600, 100] and
          e.get("baseline_runs") == [3000, 2000, 2900],
          f"JSON goal 1024 QPs: runs {e.get('dpdat_runs')}, "
          f"{e.get('baseline_runs')}")


def check_json(out):
    d = json.load(open(os.path.join(out, "bench.json")))
    rows = {(r["test"], r["bytes"]): r for r in d["rows"]}
    check(set(rows) == set(WANT), f"JSON rows {sorted(rows)}")
    for k, want in WANT.items():
        r = rows.get(k, {})
        for f, v in want.items():
            check(same(r.get(f), v), f"JSON {k} {f} = {r.get(f)!r}, not {v}")
        if r.get("raw_port"):	# the ratio is computed, not copied
            check(same(r["ratio_dpdat_raw_port"], r["dpdat"] / r["raw_port"]),
                  f"JSON {k}: ratio_dpdat_raw_port is not dpdat/raw_port")
    check(rows.get(("write_bw", 65536), {}).get("others_pct") ==
          {"dpdat": 0, "raw_port": 0, "kernel_udp": 0, "raw_link": 35},
          "JSON others_pct of write_bw 64 KiB")
    check(d["config"]["link"] == "memif" and d["config"]["quick"] is True and
          d["config"]["pmtu"] == 1024, f"JSON config {d['config']}")
    check([x["bytes"] for x in d["raw_link"]] == [4096, 65536] and
          d["raw_link"][0]["mib_s"] == 1024.0, "JSON raw_link")
    check(d["sockperf"] == [{"bytes": 2, "msg_bytes": 14, "p50_us": 6.0,
                             "avg_us": 6.5, "p99_us": 9.0, "others_pct": 0}],
          f"JSON sockperf {d['sockperf']}")
    check(len(d["runs"]) == 13, f"JSON {len(d['runs'])} runs, not 13")


def check_plots(out):
    bw = open(os.path.join(out, "bw.dat")).read().splitlines()
    check(bw[0] == "# bytes dpdat_write_bw dpdat_read_bw dpdat_send_bw "
          "raw_link udp_write_bw udp_read_bw udp_send_bw", f"bw.dat {bw[0]}")
    check(bw[1:] == ["4096 1500.0000 1200.0000 ? 1024.0000 500.0000 "
                     "400.0000 ?",
                     "65536 3000.0000 ? ? 2048.0000 600.0000 ? ?"],
          f"bw.dat rows {bw[1:]}")
    lat = open(os.path.join(out, "lat.dat")).read().splitlines()
    check(lat[1:] == ["2 4.0000 9.0000 ? 16.0000 30.0000 ? 6.0000"],
          f"lat.dat rows {lat[1:]}")
    gp = open(os.path.join(out, "bench.gp")).read()
    check(f'set output "{out}/bw.png"' in gp and
          f'set output "{out}/lat.png"' in gp, "bench.gp outputs")


def main():
    script, fix = sys.argv[1:3]
    with tempfile.TemporaryDirectory(prefix="dpdat-benchreport-") as out:
        r = run(script, fix, out)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr[-500:]}")
        if r.returncode == 0:
            check_table(r.stdout)
            check_json(out)
            check_plots(out)
            check_goals(r.stdout, out)
        r = run(script, fix, out, nargs=17)
        check(r.returncode == 2 and r.stderr.startswith("usage:"),
              f"17 arguments: exit {r.returncode}, {r.stderr[:80]!r}")
    print("\n".join(bad) or f"bench_report: {len(CELLS)} rows, ratios, "
          f"plots' data, {len(GOALS)} goals: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
