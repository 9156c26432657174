#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# devtools/bench.sh --quick end to end: it must finish, its JSON must hold
# every test and size with positive figures (a kernel udp one too when
# dpdat-perf has --transport=udp), and its two plots must be PNGs. The
# figures themselves are not judged. Usage: bench-quick.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$build/test/bench/bench-quick
rm -rf "$out"
BUILD=$build "$src/devtools/bench.sh" --quick --out "$out"
udp=0
"$build/app/dpdat-perf/dpdat-perf" write_bw --transport=udp --help \
	>/dev/null 2>&1 && udp=1
py=/usr/bin/python3
[ -x $py ] || py=python3
$py - "$out" "$udp" <<'PY'
import json, sys
out, udp = sys.argv[1], sys.argv[2] == "1"
d = json.load(open(out + "/bench.json"))
bad = []
rows = {(r["test"], r["bytes"]): r for r in d["rows"]}
want = [(t, b) for t in ("write_bw", "read_bw", "send_bw")
        for b in (64, 4096, 1 << 20)] + \
       [(t, b) for t in ("write_lat", "read_lat", "send_lat")
        for b in (2, 256, 65536)]
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
print("\n".join(bad) or f"bench-quick: {len(want)} rows, udp={udp}, PNGs: ok")
sys.exit(1 if bad else 0)
PY
