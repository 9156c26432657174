#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# A short dpdat-perf run of every test type, server and client: each must
# finish, print perftest's table header, and write JSON whose figures are
# present and positive (units and completion, not speed).
# Usage: perf_check.sh <dpdat-perf>
set -u
perf=$1
dir=$(mktemp -d /tmp/dpdat-perfcheck-XXXXXX)
trap 'rm -rf "$dir"; pkill -P $$ 2>/dev/null' EXIT
status=0
port=19100
for t in write_bw read_bw send_bw write_lat read_lat send_lat; do
	port=$((port + 1))
	timeout 60 "$perf" $t -p $port -n 300 >"$dir/srv.log" 2>&1 &
	srv=$!
	sleep 0.5
	timeout 60 "$perf" $t -p $port -n 300 --out_json "$dir/$t.json" \
		198.18.0.1 >"$dir/cli.log" 2>&1
	crc=$?
	wait $srv; src=$?
	case $t in
	*_bw) hdr='#bytes +#iterations +BW peak\[MiB/sec\] +BW average\[MiB/sec\] +MsgRate\[Mpps\]' ;;
	*) hdr='#bytes #iterations +t_min\[usec\] +t_max\[usec\] +t_typical\[usec\] +t_avg\[usec\] +t_stdev\[usec\] +99% percentile\[usec\] +99.9% percentile\[usec\]' ;;
	esac
	if [ $crc -ne 0 ] || [ $src -ne 0 ] || ! grep -Eq "$hdr" "$dir/cli.log"; then
		echo "$t: FAILED (client $crc, server $src)"
		grep -v '^EAL' "$dir/cli.log" | tail -5
		status=1
		continue
	fi
	if ! /usr/bin/python3 - "$dir/$t.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
keys = ["bw_avg_mib", "msg_rate_mpps"] if d["test"].endswith("_bw") else \
       ["t_min_us", "t_typical_us", "p99_us"]
assert r["iterations"] == 300 and all(r[k] > 0 for k in keys), r
print(d["test"] + ": " + ", ".join(f"{k} {r[k]:.3f}" for k in keys))
PY
	then
		echo "$t: bad JSON"
		status=1
	fi
done
exit $status
