#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# devtools/bench.sh --loss --quick end to end: it must finish, loss.json
# must hold write_bw at 1 % loss in both modes with positive goodput and
# the four p99 latencies, loss.png must be a PNG. The figures themselves
# are not judged (bench.sh runs give them). Usage: loss-quick.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$build/test/bench/loss-quick
rm -rf "$out"
BUILD=$build BENCH_LOSS_SECS=1 "$src/devtools/bench.sh" --loss --quick --out "$out"
py=/usr/bin/python3
[ -x $py ] || py=python3
$py - "$out" <<'PY'
import json, sys
out = sys.argv[1]
d = json.load(open(out + "/loss.json"))
rows = d["goodput"]
assert len(rows) == 1 and rows[0]["test"] == "write_bw", rows
r = rows[0]
assert r["loss"] == 0.01 and r["lossless_mib"] > 0, r
assert r["sr_mib"] > 0 and r["gbn_mib"] > 0, r
assert len(d["p99_lat_us"]) == 4 and all(x["p99_us"] > 0
                                         for x in d["p99_lat_us"]), d
assert open(out + "/loss.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"
print("loss-quick: table, JSON and plot sane")
PY
