#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# A short dpdat-perf run of every test type, over dpdat (a memif pair) and
# over kernel UDP (loopback), the raw baselines (write_bw, write_lat over
# dpdat's port without its engine), and write_bw and send_bw over dpdat with
# several QPs: server and client must finish, the client's table must read
# back (perf_table.py: header, units, one row of the size asked for, 300
# iterations, figures that agree with each other and with the JSON), the
# JSON must name the transport and QPs, and both banners must show as many
# QPs as asked for. Units and completion, not speed. One run starts the
# client 1.5 s before the server: the memif client waits for the socket and
# connects as soon as it is there (the pair must be done within 10 s).
# perftest's command lines: -b (both ways; the sum, and the JSON holds
# both sides), -q 64 (a banner that summarises its QPs), perftest's flags
# that mean nothing here (a note each, and the run goes on), -d with a
# DPDK device (used as --dev), --out_json_file and a bare --out_json
# (perftest_out.json in the working directory) with perftest's keys beside
# dpdat's.
# Post lists and selective signalling (-l, --cq-mod): the bandwidth tests
# run with them and say so in the banner and the JSON; what perftest
# refuses is refused; the transports without work requests say they ignore
# them. Usage: perf_check.sh <dpdat-perf> <perf_table.py>
set -u
perf=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")	# one run is elsewhere
table=$2
dir=$(mktemp -d /tmp/dpdat-perfcheck-XXXXXX)
srv=
cli=
trap 'kill $srv $cli 2>/dev/null; rm -rf "$dir"' EXIT
status=0
port=19100
xs=() xc=()	# more arguments for the server, the client

# run <transport> <test> <qps> <size> [client-first] [client flags]
run() {
	local tr=$1 t=$2 q=$3 s=$4 peer=198.18.0.1 name="$1 $2 -q $3${xc[*]:+ ${xc[*]}}${6:+ $6}"
	local crc src t0 more=${6:-}
	[ "$tr" = udp ] && peer=127.0.0.1
	[ -n "${5:-}" ] && name="$name (client first)"
	port=$((port + 1))
	t0=$SECONDS
	if [ -n "${5:-}" ]; then
		timeout 60 "$perf" "$t" --transport="$tr" -p $port -q "$q" \
			-s "$s" -n 300 $more --out_json "$dir/out.json" "${xc[@]}" \
			$peer >"$dir/cli.log" 2>&1 &
		cli=$!
		sleep 1.5
		timeout 60 "$perf" "$t" --transport="$tr" -p $port \
			>"$dir/srv.log" 2>&1
		src=$?
		wait $cli; crc=$?
		cli=
		if [ $((SECONDS - t0)) -gt 10 ]; then
			echo "$name: took $((SECONDS - t0)) s: the client did not connect when the server came"
			status=1
		fi
	else
		timeout 60 "$perf" "$t" --transport="$tr" -p $port "${xs[@]}" \
			>"$dir/srv.log" 2>&1 &
		srv=$!
		sleep 0.5
		timeout 60 "$perf" "$t" --transport="$tr" -p $port -q "$q" \
			-s "$s" -n 300 $more --out_json "$dir/out.json" "${xc[@]}" \
			$peer >"$dir/cli.log" 2>&1
		crc=$?
		wait $srv; src=$?
	fi
	srv=
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		echo "$name: FAILED (client $crc, server $src)"
		grep -hv '^EAL' "$dir/cli.log" "$dir/srv.log" | tail -8
		status=1
		return
	fi
	# up to 8 QPs a line each; more: the first 4, a summary, the last 4
	local lines=$q
	[ "$q" -le 8 ] || lines=9
	for log in cli srv; do
		if ! grep -Eq "Number of qps +: $q[[:space:]]" "$dir/$log.log" ||
		   [ "$(grep -c 'local address:' "$dir/$log.log")" -ne $lines ] ||
		   { [ "$q" -gt 8 ] && ! grep -q "local address: \.\.\. $((q - 8)) QPs more" "$dir/$log.log"; }; then
			echo "$name: the $log banner does not show $q QPs"
			status=1
		fi
	done
	if ! /usr/bin/python3 - "$dir/out.json" "$tr" "$q" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["transport"] == sys.argv[2] and d["qps"] == int(sys.argv[3]), d
PY
	then
		echo "$name: JSON without the right transport and qps"
		status=1
	fi
	echo -n "$name: "
	/usr/bin/python3 "$table" --sizes "$s" --iters 300 \
		--json "$dir/out.json" "$dir/cli.log" || status=1
}

for tr in dpdat udp; do
	for t in write_bw read_bw send_bw write_lat read_lat send_lat; do
		case $t in *_bw) s=65536 ;; *) s=2 ;; esac
		run $tr $t 1 $s
	done
done
run dpdat write_bw 2 65536
run dpdat send_bw 3 4096
run dpdat write_lat 1 2 client-first
# the raw baselines: the frames of a WRITE, bare, over the same port
run raw write_bw 1 65536
run raw write_lat 1 2

# perftest's command lines
run dpdat write_bw 64 65536
run dpdat read_bw 64 65536

# two engines a side (--engines: QP i on engine i mod 2 on both sides):
# every QP's CM request met the peer's engine of the same queue, so no
# frame changes engine
for t in write_bw read_bw send_bw; do
	xs=(--engines 2) xc=(--engines 2)
	run dpdat $t 5 65536
	xs=() xc=()
	for log in cli srv; do
		if ! grep -q "2 engines on queues 0..1" "$dir/$log.log" ||
		   ! grep -q "handed between engines 0$" "$dir/$log.log"; then
			echo "dpdat $t --engines 2: the $log did not run two engines, or frames changed engine"
			grep -h "engines" "$dir/$log.log"
			status=1
		fi
	done
done

# json_keys FILE bw|lat [bidir]: dpdat's keys and perftest's, agreeing
json_keys() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
kind, bidir = sys.argv[2], len(sys.argv) > 3
ti = d["test_info"]
assert ti["test"].endswith(("_Bidirectional_BW_Test" if bidir else
                            "_BW_Test") if kind == "bw" else "_Latency_Test"), ti
assert ti["Number_of_qps"] == d["qps"] and ti["Link_type"] == "Ethernet", ti
assert d["bidirectional"] is bidir, d["bidirectional"]
r = d["results"][0]
assert r["MsgSize"] == r["bytes"] and r["n_iterations"] == r["iterations"], r
if kind == "bw":
    assert abs(r["BW_average"] - r["bw_avg_mib"]) < 0.01, r
    assert abs(r["BW_peak"] - r["bw_peak_mib"]) < 0.01, r
    assert abs(r["MsgRate"] - r["msg_rate_mpps"]) < 1e-6 and r["MsgRate"] > 0, r
    if bidir:	# the sum of what each side sent
        both = r["bw_avg_mib_client"] + r["bw_avg_mib_server"]
        assert r["bw_avg_mib_client"] > 0 and r["bw_avg_mib_server"] > 0, r
        assert abs(both - r["bw_avg_mib"]) < 0.01, r
else:
    for k in ("t_min", "t_max", "t_typical", "t_avg", "t_stdev"):
        assert abs(r[k] - r[k + "_us"]) < 0.01, (k, r)
    assert abs(r["percentile_99"] - r["p99_us"]) < 0.01, r
    assert abs(r["percentile_99.9"] - r["p999_us"]) < 0.01, r
PY
}

# -b: both sides stream, the client reports the sum
for t in write_bw read_bw send_bw; do
	xs=(-b) xc=(-b)
	run dpdat $t 1 65536
	xs=() xc=()
	if ! grep -q "Bidirectional BW Test" "$dir/cli.log" ||
	   ! grep -q "Bidirectional BW Test" "$dir/srv.log" ||
	   ! json_keys "$dir/out.json" bw bidir; then
		echo "dpdat $t -b: not bidirectional, or its JSON is not"
		status=1
	fi
done

# perftest's flags without a meaning here: a note each, and the run goes on;
# -d with a DPDK device is --dev (a memif socket of its own); perftest's
# --out_json_file; its --out_json alone writes perftest_out.json here
port=$((port + 1))
sock=$dir/pt.sock
pt=(-x 3 -F -R -i 1)
timeout 60 "$perf" write_bw -p $port "${pt[@]}" \
	-d "net_memif0,role=server,socket=$sock" >"$dir/srv.log" 2>&1 &
srv=$!
for ((i = 0; i < 100; i++)); do [ -S "$sock" ] && break; sleep 0.1; done
timeout 60 "$perf" write_bw -p $port "${pt[@]}" -n 300 \
	-d "net_memif0,role=client,socket=$sock" \
	--out_json_file="$dir/pt.json" 198.18.0.1 >"$dir/cli.log" 2>"$dir/cli.err"
crc=$?
wait $srv; src=$?
srv=
notes=$(grep -cE '^dpdat-perf: -(x|F|R|i): ignored, ' "$dir/cli.err")
if [ $crc -ne 0 ] || [ $src -ne 0 ] || [ "$notes" -ne 4 ] ||
   ! json_keys "$dir/pt.json" bw; then
	echo "perftest flags: FAILED (client $crc, server $src, $notes notes of 4)"
	grep -hv '^EAL' "$dir/cli.err" "$dir/srv.log" | tail -8
	status=1
else
	echo -n "perftest flags -x -F -R -i -d DPDK-device --out_json_file: "
	/usr/bin/python3 "$table" --sizes 65536 --iters 300 \
		--json "$dir/pt.json" "$dir/cli.log" || status=1
fi
port=$((port + 1))
timeout 60 "$perf" write_lat -p $port >"$dir/srv.log" 2>&1 &
srv=$!
sleep 0.5
(cd "$dir" && timeout 60 "$perf" write_lat -p $port -n 300 -d mlx5_0 \
	--out_json 198.18.0.1) >"$dir/cli.log" 2>"$dir/cli.err"
crc=$?
wait $srv; src=$?
srv=
if [ $crc -ne 0 ] || [ $src -ne 0 ] ||
   ! grep -q '^dpdat-perf: -d mlx5_0: ignored, not a DPDK device' "$dir/cli.err" ||
   ! json_keys "$dir/perftest_out.json" lat; then
	echo "--out_json alone, -d mlx5_0: FAILED (client $crc, server $src)"
	grep -hv '^EAL' "$dir/cli.err" "$dir/srv.log" | tail -8
	status=1
else
	echo -n "--out_json alone (perftest_out.json), -d mlx5_0 noted: "
	/usr/bin/python3 "$table" --sizes 2 --iters 300 \
		--json "$dir/perftest_out.json" "$dir/cli.log" || status=1
fi

# post_check <test> <list> <cq-mod>: the banner and JSON of the last run
post_check() {
	local name="$1 -l $2 --cq-mod $3"

	if [ "$2" -gt 1 ] && ! grep -Eq "Post List +: $2\$" "$dir/cli.log" ||
	   ! grep -Eq "CQ Moderation +: $3\$" "$dir/cli.log"; then
		echo "$name: the banner does not show the list and moderation"
		status=1
	fi
	if ! /usr/bin/python3 - "$dir/out.json" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["post_list"] == int(sys.argv[2]), d
assert d["cq_mod"] == int(sys.argv[3]), d
PY
	then
		echo "$name: JSON without the list and moderation"
		status=1
	fi
}
run dpdat write_bw 1 8 "" "-l 20 --cq-mod 10"
post_check write_bw 20 10
run dpdat read_bw 1 8 "" "-l 12"		# moderation: the list's
post_check read_bw 12 12
run dpdat send_bw 2 64 "" "--cq-mod 7"	# 300 is no multiple of 7
post_check send_bw 1 7
run dpdat write_bw 3 4096 "" "-l 4 --cq-mod 4"
post_check write_bw 4 4
run dpdat write_bw 1 8			# perftest's default: one in 100
post_check write_bw 1 100
run dpdat write_bw 1 65536		# above 8 KiB: every one
post_check write_bw 1 1
# refused as perftest refuses them (usage error 2, nothing started)
refuse() {
	local why=$1; shift
	"$perf" "$@" >"$dir/bad.log" 2>&1
	if [ $? -ne 2 ] || ! grep -q "$why" "$dir/bad.log"; then
		echo "dpdat-perf $*: not refused ($why)"
		cat "$dir/bad.log"
		status=1
	fi
}
refuse "not a multiple of --cq-mod" write_bw -l 16 --cq-mod 64 -n 320 198.18.0.1
refuse "not a multiple of -l" write_bw -l 16 -n 300 198.18.0.1
refuse "bandwidth tests" write_lat -l 4 198.18.0.1
refuse "more than -t" write_bw -l 64 -t 32 -n 640 198.18.0.1
refuse "not a number" write_bw --cq-mod 0 198.18.0.1
# no work requests to list: said, and the run goes on
run udp write_bw 1 4096 "" "-l 4 --cq-mod 2"
if ! grep -q "do nothing" "$dir/cli.log"; then
	echo "udp write_bw -l 4: no word that -l does nothing"
	status=1
fi
exit $status
