#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# devtools/bench.sh --apps --quick end to end, one round of the raw link
# and two applications at once: it must finish, and apps.json must hold
# positive bandwidths and latencies for both cases (two figures each for
# the two applications). The figures themselves are not judged. Skipped
# (77) without root. Usage: apps-quick.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
out=$build/test/bench/apps-quick
rm -rf "$out"
BUILD=$build BENCH_APPS_ROUNDS=1 BENCH_APPS_CASES="raw 2" \
	"$src/devtools/bench.sh" --apps --quick --out "$out"
python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/apps.json"))
assert d["link"] == "af_xdp", d
c = d["cases"]
assert set(c) == {"raw", "2"}, c
for name, n in (("raw", 1), ("2", 2)):
    r = c[name]
    assert len(r["bw_rounds"]) == 1 and len(r["bw_rounds"][0]) == n, r
    assert r["bw_sum_mib"] > 0 and r["lat_typical_per_app_us"] > 0, r
    assert r["lat_avg_per_app_us"] >= r["lat_typical_per_app_us"] * 0.5, r
print("apps-quick: table and JSON sane")
PY
