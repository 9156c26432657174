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
        r = run(script, fix, out, nargs=17)
        check(r.returncode == 2 and r.stderr.startswith("usage:"),
              f"17 arguments: exit {r.returncode}, {r.stderr[:80]!r}")
    print("\n".join(bad) or f"bench_report: {len(CELLS)} rows, ratios, "
          "plots' data: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
