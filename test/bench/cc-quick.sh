#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# devtools/bench.sh --cc --quick end to end, one round of two flows into
# one through the shaped bottleneck, without and with the delay-based
# control: it must finish, cc.json must hold the two rows with positive
# goodput, Jain's index, the probe's percentiles and the bottleneck's
# counts, and the case's plot must be a PNG. The figures themselves are not judged (--quick judges none).
# Skipped (77) without root. Usage: cc-quick.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
out=$build/test/bench/cc-quick
rm -rf "$out"
BUILD=$build BENCH_CC_CASES="incast2" \
	"$src/devtools/bench.sh" --cc --quick --out "$out"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
d = json.load(open(out + "/cc.json"))
rows = {(r["case"], r["cc"]): r for r in d["rows"]}
assert set(rows) == {("incast2", k) for k in ("none", "swift")}, rows.keys()
for (c, k), r in rows.items():
    assert r["rounds"] == 1 and r["failed"] == 0, r
    assert 0 < r["dpdat_share"] < 1.5, r
    assert r["idle_p50_ms"] > 0 and r["ping_p99_ms"] >= r["ping_p50_ms"] > 0, r
    assert r["drop_pct"] is not None and r["drop_pct"] >= 0, r
    assert (r["jain"] is not None) == (c == "incast2"), r
    assert r["verdict"] in ("", "not judged"), r
runs = d["runs"]
assert len(runs) == 2 and all(r["pkts"] > 0 for r in runs), runs
assert all(len(r["dpdat_mib"]) == (2 if r["case"] == "incast2" else 1)
           for r in runs), runs
for c in ("incast2",):
    with open(f"{out}/cc-{c}.png", "rb") as f:
        h = f.read()
    assert h[:8] == b"\x89PNG\r\n\x1a\n" and len(h) > 2000, c
print("cc-quick: table, JSON and plots sane")
PY
