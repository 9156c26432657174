#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""Read a dpdat-perf (or perftest) table back and check it.

    perf_table.py [--sizes all|N] [--iters N] [--json FILE] [--gbits] LOG

LOG is the client's stdout. The table must have perftest's header and
units, one row a size (every power of two from 2 to 2^23 with --sizes
all), figures that agree with each other (average <= peak, message rate x
size = average, t_min <= t_typical <= t_max, p99 <= p99.9) and, with
--json, the same figures as the JSON file. Prints one line a row; exits 1
with the reason when something is off. parse() serves other scripts.
"""

import argparse
import json
import re
import sys

BW_HDR = re.compile(r"^ #bytes +#iterations +BW peak\[(MiB|Gb)/sec\] +"
                    r"BW average\[(MiB|Gb)/sec\] +MsgRate\[Mpps\]$")
LAT_HDR = re.compile(r"^ #bytes #iterations +t_min\[usec\] +t_max\[usec\] +"
                     r"t_typical\[usec\] +t_avg\[usec\] +t_stdev\[usec\] +"
                     r"99% percentile\[usec\] +99\.9% percentile\[usec\]$")
BW_COLS = ["bytes", "iterations", "bw_peak", "bw_avg", "msg_rate_mpps"]
LAT_COLS = ["bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us",
            "t_avg_us", "t_stdev_us", "p99_us", "p999_us"]


class TableError(Exception):
    pass


def parse(text):
    """{'kind': 'bw'|'lat', 'unit': 'MiB'|'Gb'|None, 'rows': [dict]}"""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        bw, lat = BW_HDR.match(line), LAT_HDR.match(line)
        if bw or lat:
            break
    else:
        raise TableError("no perftest table header")
    if bw and bw.group(1) != bw.group(2):
        raise TableError("peak and average in different units")
    cols = BW_COLS if bw else LAT_COLS
    rows = []
    for line in lines[i + 1:]:
        if line.startswith("-----"):
            break
        f = line.split()
        if not f or not f[0].isdigit():
            continue    # a warning on the shared terminal
        if len(f) != len(cols):
            raise TableError(f"{len(f)} columns, not {len(cols)}: {line!r}")
        try:
            row = {c: (int(v) if k < 2 else float(v))
                   for k, (c, v) in enumerate(zip(cols, f))}
        except ValueError:
            raise TableError(f"not a number in {line!r}") from None
        rows.append(row)
    else:
        raise TableError("the table does not end with a line of dashes")
    if not rows:
        raise TableError("no rows")
    return {"kind": "bw" if bw else "lat",
            "unit": bw.group(1) if bw else None, "rows": rows}


def close(a, b, rel=0.02, absolute=0.02):
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), absolute)


def check_bw(r, unit):
    if r["bw_avg"] > r["bw_peak"] * 1.001 + 0.01:
        raise TableError(f"average above peak: {r}")
    scale = 8 / 1e9 if unit == "Gb" else 1 / 2**20
    want = r["msg_rate_mpps"] * 1e6 * r["bytes"] * scale
    rounding = 0.5 * r["bytes"] * scale + 0.01     # of the 6 decimals
    if not close(want, r["bw_avg"], absolute=rounding):
        raise TableError(f"rate x size {want:.2f} is not the average: {r}")
    if r["iterations"] > 0 and not r["bw_avg"] > 0:
        raise TableError(f"no bandwidth: {r}")


def check_lat(r):
    order = ["t_min_us", "t_typical_us", "t_max_us"]
    if not all(r[a] <= r[b] for a, b in zip(order, order[1:])):
        raise TableError(f"not t_min <= t_typical <= t_max: {r}")
    if not r["t_min_us"] <= r["t_avg_us"] <= r["t_max_us"]:
        raise TableError(f"t_avg outside t_min..t_max: {r}")
    if not r["t_min_us"] <= r["p99_us"] <= r["p999_us"] <= r["t_max_us"]:
        raise TableError(f"not t_min <= 99% <= 99.9% <= t_max: {r}")
    if not r["t_min_us"] > 0 or r["t_stdev_us"] < 0:
        raise TableError(f"not a time: {r}")


def check_json(table, path):
    with open(path) as f:
        d = json.load(f)
    res = d["results"]
    if len(res) != len(table["rows"]):
        raise TableError(f"{len(res)} JSON results, {len(table['rows'])} rows")
    for r, j in zip(table["rows"], res):
        keys = (["bw_avg_mib", "bw_peak_mib", "msg_rate_mpps"]
                if table["kind"] == "bw" else LAT_COLS[2:])
        if j["bytes"] != r["bytes"] or j["iterations"] != r["iterations"]:
            raise TableError(f"JSON {j} is not the row {r}")
        if table["kind"] == "lat" and not all(close(j[k], r[k]) for k in keys):
            raise TableError(f"JSON {j} is not the row {r}")
        if table["kind"] == "bw" and table["unit"] == "MiB" and not (
                close(j["bw_avg_mib"], r["bw_avg"])
                and close(j["msg_rate_mpps"], r["msg_rate_mpps"], absolute=2e-6)):
            raise TableError(f"JSON {j} is not the row {r}")
        if not all(k in j for k in keys):
            raise TableError(f"JSON {j} lacks one of {keys}")
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=None,
                    help="'all' (2..2^23) or one size")
    ap.add_argument("--iters", type=int, default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--gbits", action="store_true")
    ap.add_argument("log")
    a = ap.parse_args()
    with open(a.log, errors="replace") as f:
        text = f.read()
    try:
        t = parse(text)
        if t["kind"] == "bw" and t["unit"] != ("Gb" if a.gbits else "MiB"):
            raise TableError(f"unit {t['unit']}/sec")
        sizes = [r["bytes"] for r in t["rows"]]
        if a.sizes == "all":
            want = [2 << k for k in range(23)]
        else:
            want = [int(a.sizes)] if a.sizes else sizes
        if sizes != want:
            raise TableError(f"sizes {sizes}, not {want}")
        for r in t["rows"]:
            if a.iters is not None and r["iterations"] != a.iters:
                raise TableError(f"{r['iterations']} iterations, not {a.iters}")
            check_bw(r, t["unit"]) if t["kind"] == "bw" else check_lat(r)
        if a.json:
            check_json(t, a.json)
    except (TableError, OSError, KeyError, ValueError) as e:
        print(f"perf_table: {a.log}: {e}", file=sys.stderr)
        return 1
    key = "bw_avg" if t["kind"] == "bw" else "t_typical_us"
    print(f"{t['kind']} table, {len(t['rows'])} rows, {key} " +
          " ".join(f"{r['bytes']}:{r[key]:g}" for r in t["rows"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
