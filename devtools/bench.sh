#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# dpdat against the raw link and the kernel, side by side in one run:
#   - raw link: dpdk-testpmd txonly -> rxonly over a memif pair, with frames
#     the size dpdat puts on the wire for each bandwidth message size;
#   - dpdat: dpdat-perf write_bw/read_bw/send_bw (64 B .. 1 MiB) and
#     write_lat/read_lat/send_lat (2 B .. 64 KiB) over a memif pair;
#   - kernel: the same dpdat-perf tests with --transport=udp on 127.0.0.1,
#     and sockperf ping-pong on 127.0.0.1 for the latency sizes.
# Then the latency goals: ratios of dpdat to a baseline on the same link
# (8 B WRITE round trip / the bare link's, and / kernel UDP's between two
# hosts; 8 B READ / WRITE round trip; 8 B WRITE message rate / the raw
# port's; 64 KiB write_bw / the raw port's; on memif 64 KiB write_bw
# -q 1024 / -q 1; the 8 B WRITE round trip's p99 / median), from runs of
# their own taken in turn with their baselines', each figure the median of
# its rounds; a row whose rounds spread by more than 20 % is "noisy".
# Prints progress, then one table with the ratios and one with the goals
# (met, missed, noisy, or not judged: --quick judges none); writes
# DIR/bench.json (the goals under "goals"), DIR/bw.png and DIR/lat.png
# (gnuplot) and their data files DIR/*.dat.
# Logs of every run stay in DIR/logs.
#
# Usage: devtools/bench.sh [--quick] [--link KIND] [--out DIR] [--json FILE]
#   --loss       goodput under loss instead (devtools/bench-loss.sh: both
#                recovery modes, a table and loss.png)
#   --verbs      what the verbs shim costs instead (devtools/bench-verbs.sh:
#                perftest and dpdat-perf through dpdat-run against
#                dpdat-perf on the native API, a table and verbs.json)
#   --apps       1, 2 and 4 applications on shares of one NIC instead
#                (devtools/bench-apps.sh: two namespaces, a table and
#                apps.json)
#   --cc         congestion control through a shaped bottleneck instead
#                (devtools/bench-cc.sh: four namespaces on a bridge, one
#                flow, two and three into one, beside TCP; a goals table,
#                cc.json and a plot a case)
#   --quick      3 sizes each, shorter runs, 2 short rounds of the goals,
#                not judged: a smoke run (2 to 3 minutes; BENCH_QUICK=1)
#   --link KIND  memif (default: one host), or af_xdp or af_packet between
#                two hosts: network namespaces joined by a veth pair (made
#                here, as root, and removed on exit), dpdat beside each
#                kernel; the raw link is dpdk-testpmd over the same kind of
#                port on the same veth, the kernel path crosses the same
#                veth (dpdat-perf udp, sockperf, and iperf3 TCP);
#                BENCH_LINK_MTU sets the veth MTU (1500)
#   --out DIR    where results go (default $BUILD/bench, BUILD=build)
#   --json FILE  the JSON (default DIR/bench.json)
# Overrides: BENCH_BW_SIZES, BENCH_LAT_SIZES (lists of bytes),
# BENCH_BW_SECS, BENCH_LAT_ITERS, BENCH_TP_SECS, BENCH_SP_SECS,
# BENCH_PMTU (memif 4096; namespaces: what BENCH_LINK_MTU carries),
# BENCH_SOCKPERF_OPTS (default --nonblocked: both ends spin, as dpdat does),
# BENCH_GOAL_ROUNDS (rounds a goal's figure is the median of: 3, --quick 2;
# 0 runs none), BENCH_GOAL_LAT_ITERS (the goals' latency runs: 100000,
# --quick 20000), BENCH_GOAL_BW_SECS (their bandwidth runs: 3, --quick 1).
set -euo pipefail
here=$PWD
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."
. devtools/lib-bench.sh

usage() { sed -n '/^# Usage:/,/^# --quick 20000), BENCH_GOAL_BW_SECS/s/^# \{0,1\}//p' "$self"; }
for a in "$@"; do	# the loss and verbs tables are scripts of their own
	[ "$a" != --loss ] || exec devtools/bench-loss.sh "$@"
	[ "$a" != --verbs ] || exec devtools/bench-verbs.sh "$@"
	[ "$a" != --apps ] || exec devtools/bench-apps.sh "$@"
	[ "$a" != --cc ] || exec devtools/bench-cc.sh "$@"
done

build=${BUILD:-build}
quick=${BENCH_QUICK:-0}
link=memif
out="" json=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--link) link=${2:?--link memif|af_xdp|af_packet}; shift ;;
	--out) out=${2:?--out DIR}; shift ;;
	--json) json=${2:?--json FILE}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
case $link in memif | af_xdp | af_packet) ;;
	*) echo "bench: --link $link: memif, af_xdp or af_packet" >&2; exit 2 ;; esac
[ -z "$out" ] || case $out in /*) ;; *) out=$here/$out ;; esac
[ -z "$json" ] || case $json in /*) ;; *) json=$here/$json ;; esac
out=${out:-$build/bench}
mkdir -p "$out"
out=$(cd "$out" && pwd)
json=${json:-$out/bench.json}

if [ "$quick" = 1 ]; then
	bw_sizes=${BENCH_BW_SIZES:-"64 4096 1048576"}
	lat_sizes=${BENCH_LAT_SIZES:-"2 256 65536"}
	bw_secs=${BENCH_BW_SECS:-1} lat_iters=${BENCH_LAT_ITERS:-500}
	tp_secs=${BENCH_TP_SECS:-2} sp_secs=${BENCH_SP_SECS:-1}
else
	bw_sizes=${BENCH_BW_SIZES:-"64 256 1024 4096 16384 65536 262144 1048576"}
	lat_sizes=${BENCH_LAT_SIZES:-$(for ((s = 2; s <= 65536; s *= 2)); do
		echo -n "$s "; done)}
	bw_secs=${BENCH_BW_SECS:-2} lat_iters=${BENCH_LAT_ITERS:-20000}
	tp_secs=${BENCH_TP_SECS:-3} sp_secs=${BENCH_SP_SECS:-1}
fi
sp_opts=${BENCH_SOCKPERF_OPTS---nonblocked}
# a run during which other processes took more than max_others% of the
# CPUs is run again, up to tries runs, while re-runs took under again_secs
if [ "$quick" = 1 ]; then tries=${BENCH_TRIES:-1}; else tries=${BENCH_TRIES:-3}; fi
max_others=${BENCH_MAX_OTHERS:-20} again_secs=${BENCH_AGAIN_SECS:-120}
bw_tests="write_bw read_bw send_bw"
lat_tests="write_lat read_lat send_lat"
# The PMTU: dpdat-perf's default, the port's: 4096 over memif (MTU 4200),
# the largest that the veth MTU carries between namespaces (1024 at 1500).
# On the wire, a WRITE of s <= PMTU bytes is one packet: Ethernet 14 +
# IPv4 20 + UDP 8 + BTH 12 + RETH 16 + s + ICRC 4; a longer one is mostly
# middle packets: 14 + 20 + 8 + 12 + PMTU + 4. The raw link runs these
# frames.
if [ -n "${BENCH_PMTU:-}" ]; then
	pmtu=$BENCH_PMTU
elif [ "$link" = memif ]; then
	pmtu=4096
else
	pmtu=4096
	while [ $((pmtu + 64)) -gt "${BENCH_LINK_MTU:-1500}" ] && [ "$pmtu" -gt 256 ]; do
		pmtu=$((pmtu / 2))
	done
fi
case $pmtu in 256 | 512 | 1024 | 2048 | 4096) ;; *) echo "bench: BENCH_PMTU: 256 .. 4096" >&2; exit 2 ;; esac
frame_for() { if [ "$1" -le "$pmtu" ]; then echo $(($1 + 74)); else echo $((pmtu + 58)); fi; }
payload_for() { if [ "$1" -le "$pmtu" ]; then echo "$1"; else echo "$pmtu"; fi; }

perf=$build/app/dpdat-perf/dpdat-perf
[ -x "$perf" ] || devtools/build.sh "$build" >/dev/null
py=${PYTHON:-/usr/bin/python3}	# the system's: the standard library is enough
[ -x "$py" ] || py=python3
for p in dpdk-testpmd sockperf gnuplot "$py"; do
	command -v "$p" >/dev/null || { echo "bench: $p missing (devtools/setup.sh)" >&2; exit 1; }
done
udp=1
if ! "$perf" write_bw --transport=udp --help >/dev/null 2>&1; then
	udp=0
	echo "bench: warning: $perf has no --transport=udp: no kernel udp column"
fi

logs=$out/logs
rm -rf "$logs"
mkdir -p "$logs"
res=$logs/results.tsv
: >"$res"
trap bench_cleanup EXIT
# two hosts: namespace A serves (198.18.0.1), namespace B is the client
A=() B=() devopt=() peer_ip=198.18.0.1 kpeer=127.0.0.1
if [ "$link" != memif ]; then
	[ "$(id -u)" -eq 0 ] ||
		{ echo "bench: --link $link: network namespaces need root" >&2; exit 1; }
	. test/integration/netns.sh
	netns_up "${BENCH_LINK_MTU:-1500}"
	trap 'bench_cleanup; netns_down' EXIT
	A=(ip netns exec "$NS_A") B=(ip netns exec "$NS_B")
	devopt=(--dev "$(netns_dev "$link")")
	kpeer=198.18.0.1
	export BENCH_RX_NS=$NS_A BENCH_TX_NS=$NS_B
	export BENCH_RX_VDEV BENCH_TX_VDEV
	BENCH_RX_VDEV=$(netns_dev "$link") BENCH_TX_VDEV=$BENCH_RX_VDEV
fi
# services (memif sockets, UDP ports) of our own: other runs may be going on
svc_base=$((20000 + ($$ % 100) * 400)) nsvc=0
t_start=$SECONDS

# steps, for the progress lines
nfr=$(for s in $bw_sizes; do frame_for "$s"; done | sort -u | wc -l)
nb=$(wc -w <<<"$bw_sizes") nl=$(wc -w <<<"$lat_sizes")
# (write_bw and write_lat also run over the raw port: the 1 + below)
total=$((nfr + nb * (3 * (1 + udp) + 1) + nl * (3 * (1 + udp) + 2)))
# The latency goals: dpdat against a baseline on the same link, from runs
# of their own (longer than the sweep's). Each set's runs go in turn (A, B,
# C, A, B, C ...) for goal_rounds rounds, so a row's dpdat and baseline
# runs alternate, and each figure is the median of its rounds.
# TRANSPORT:TEST:BYTES:QPS; bare and raw: dpdat-perf --transport=bare|raw.
if [ "$quick" = 1 ]; then
	goal_rounds=${BENCH_GOAL_ROUNDS:-2}
	goal_lat_iters=${BENCH_GOAL_LAT_ITERS:-20000}
	goal_bw_secs=${BENCH_GOAL_BW_SECS:-1}
else
	goal_rounds=${BENCH_GOAL_ROUNDS:-3}
	goal_lat_iters=${BENCH_GOAL_LAT_ITERS:-100000}
	goal_bw_secs=${BENCH_GOAL_BW_SECS:-3}
fi
goal_lat="dpdat:write_lat:8:1 bare:write_lat:8:1 raw:write_lat:8:1"
# between two hosts, also the kernel's UDP over the same veth
[ "$link" = memif ] || [ $udp = 0 ] || goal_lat+=" udp:write_lat:8:1"
goal_64k="dpdat:write_bw:65536:1 raw:write_bw:65536:1"
[ "$link" != memif ] || goal_64k+=" dpdat:write_bw:65536:1024"
goal_sets=("$goal_lat dpdat:read_lat:8:1"
	"dpdat:write_bw:8:1 raw:write_bw:8:1"
	"$goal_64k")
for set in "${goal_sets[@]}"; do
	total=$((total + goal_rounds * $(wc -w <<<"$set")))
done
step=0

die() { echo "bench: FAILED: $*" >&2; exit 1; }
tail_log() {	# FILE: its last lines, indented
	echo "  --- $1:" >&2
	tail -n 15 "$1" 2>/dev/null | sed 's/^/    /' >&2 || true
}
progress() { step=$((step + 1)); printf 'bench: [%d/%d] %s\n' $step $total "$*"; }

wait_udp() {	# PORT SECONDS: until something is bound to UDP port PORT
	local i hex
	hex=$(printf ':%04X' "$1")
	for ((i = 0; i < $2 * 50; i++)); do
		"${A[@]}" awk -v p="$hex" 'substr($2, length($2) - 4) == p { f = 1 }
			END { exit !f }' /proc/net/udp && return 0
		sleep 0.02
	done
	return 1
}

wait_pid() {	# PID SECONDS: wait for it, kill it after SECONDS
	local i
	for ((i = 0; i < $2 * 50; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.02
	done
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	bench_forget "$1"
}

val=0
# perf_once TRANSPORT TEST SIZE LOGNAME: one server + client pair; sets val
# (MiB/s average for bw, the median in us for lat) from the client's JSON.
# A fifth argument, QPS, runs that many QPs (-q; default 1).
perf_once() {
	local tr=$1 t=$2 s=$3 name=$4 q=${5:-1} svc srv rc=0 tmo peer=$peer_ip i
	local opts args
	svc=$((svc_base + nsvc))
	nsvc=$((nsvc + 1))
	opts=(-p "$svc")
	[ "$q" = 1 ] || opts+=(-q "$q")
	if [ "$tr" = udp ]; then
		opts+=(--transport=udp)
		peer=$kpeer
	else
		opts+=("${devopt[@]}")
		opts+=(-m "$pmtu")	# both ends: the server sizes its port
		case $tr in raw | bare) opts+=(--transport="$tr") ;; esac
	fi
	case $t in
	*_bw) args=(-s "$s" -D "$bw_secs"); tmo=$((bw_secs + 20)) ;;
	*) args=(-s "$s" -n "$lat_iters"); tmo=$((30 + lat_iters / 5000)) ;;
	esac
	rm -f "$name.json"
	"${A[@]}" timeout $((tmo + 5)) "$perf" "$t" "${opts[@]}" </dev/null \
		>"$name.server.log" 2>&1 &
	srv=$!
	BENCH_PIDS+=("$srv")
	if [ "$tr" = udp ]; then
		wait_udp "$svc" 10 || sleep 0.5
	elif [ "$link" = memif ]; then	# the client fails if the server's
		# memif socket is not there yet
		bench_wait_unix "/tmp/dpdat-perf-$svc.sock" 10 || sleep 0.5
	else	# its port is up when it waits for the client
		for ((i = 0; i < 100; i++)); do
			grep -q 'Waiting for client' "$name.server.log" && break
			sleep 0.1
		done
	fi
	"${B[@]}" timeout "$tmo" "$perf" "$t" "${opts[@]}" "${args[@]}" \
		--out_json "$name.json" "$peer" </dev/null >"$name.log" 2>&1 || rc=$?
	wait_pid "$srv" 5	# it ends after the client's disconnect
	[ "$rc" = 0 ] || { echo "bench:   exit status $rc" >&2; return 1; }
	val=$("$py" - "$name.json" <<-'PY'
		import json, sys
		r = json.load(open(sys.argv[1]))["results"][0]
		v = r["bw_avg_mib"] if "bw_avg_mib" in r else r["t_typical_us"]
		print(v if v > 0 else "")
		PY
	) || return 1
	[ -n "$val" ] || { echo "bench:   no positive figure in $name.json" >&2; return 1; }
}

# CPU time others take: all busy time (user, nice, system) less what our
# children used, over the CPUs' time; cpu_mark, then cpu_others sets others
jiffies() { awk '/^cpu / { print $2 + $3 + $4 }' /proc/stat; }
cpu_mark() {
	times >"$logs/times0"	# not in a subshell: it would count no children
	mark_j=$(jiffies) mark_ns=$(date +%s%N)
}
cpu_others() {
	times >"$logs/times1"
	others=$(awk -v j0="$mark_j" -v j1="$(jiffies)" -v hz="$hz" -v n="$ncpu" \
		-v ns="$(($(date +%s%N) - mark_ns))" '
		FNR == 2 { for (i = 1; i <= 2; i++) {
			split($i, a, /[ms]/); k += (FILENAME ~ /1$/ ? 1 : -1) * (a[1] * 60 + a[2]) } }
		END { o = 100 * ((j1 - j0) / hz - k) / (ns / 1e9 * n)
			printf "%.0f", (o < 0 ? 0 : (o > 100 ? 100 : o)) }' \
		"$logs/times0" "$logs/times1")
}
hz=$(getconf CLK_TCK) ncpu=$(nproc) again_used=0 others=0

# measure WHAT "LOGS" FUNCTION ARGS...: FUNCTION until it succeeds, with the
# CPUs to ourselves if it can: a failure is tried once more, then the logs'
# tails and exit 1; a success during which others took more than
# max_others% of the CPUs is run again (see tries); sets others
measure() {
	local what=$1 lg=$2 fails=0 n=0 t0 l
	shift 2
	while :; do
		n=$((n + 1)) t0=$SECONDS
		cpu_mark
		if ! "$@"; then
			fails=$((fails + 1))
			[ $fails -lt 2 ] || {
				for l in $lg; do tail_log "$l"; done
				die "$what (twice; logs in $logs)"; }
			echo "bench: $what failed, once more; logs:" >&2
			for l in $lg; do tail_log "$l"; done
			continue
		fi
		cpu_others
		if [ "$others" -le "$max_others" ] || [ $n -ge "$tries" ] ||
		   [ $again_used -ge "$again_secs" ]; then
			break
		fi
		echo "bench:   $what: others took ${others}% of the CPUs meanwhile: again"
		again_used=$((again_used + SECONDS - t0))
	done
}

# perf_run TRANSPORT TEST SIZE: measured, its figure in the progress line
# and results.tsv
perf_run() {
	local tr=$1 t=$2 s=$3 name=$logs/$1-$2-$3 what unit
	what=$(printf '%-9s %7s B %-10s' "$t" "$s" "$(case $tr in
		udp) echo "kernel udp" ;; raw) echo "raw port" ;; *) echo dpdat ;; esac)")
	case $t in *_bw) unit="MiB/s" ;; *) unit="us" ;; esac
	measure "$(tr -s ' ' <<<"$what")" "$name.log $name.server.log" \
		perf_once "$@" "$name"
	progress "$what ... $val $unit$(busy_note)"
	printf 'perf\t%s\t%s\t%s\t%s\t%s\n' "$tr" "$t" "$s" "$name.json" "$others" >>"$res"
}
busy_note() { [ "$others" -le "$max_others" ] || echo " (others took ${others}% of the CPUs)"; }

# the machine is shared: say so if something else was using the CPUs
busy=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; sleep 1
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat)
busy=$(awk 'NR == 1 { b = $1; i = $2 } NR == 2 { b = $1 - b; i = $2 - i
	printf "%.0f", (b + i) ? 100 * b / (b + i) : 0 }' <<<"$busy")
[ "$busy" -lt 25 ] ||
	echo "bench: warning: the CPUs were ${busy}% busy before the start: figures will be low"
jiffies0=$(awk '/^cpu / { print $2 + $3 + $4 }' /proc/stat)
echo "bench: raw link (testpmd), dpdat and kernel; bw ${bw_secs} s, lat $lat_iters iterations, PMTU $pmtu; out $out"

# bandwidth: per size, the raw link for its frame (once per frame size),
# then the three dpdat tests, then the same over kernel UDP
declare -A pps_of pps_med oth_of	# frame bytes -> packets/s (best second,
				# median), others' CPU share meanwhile
link_pps() {	# FRAME: testpmd's rate for frames of FRAME bytes, once a size
	local f=$1 mb=()
	[ -z "${pps_of[$f]:-}" ] || return 0
	# mbufs must hold a frame above 2 KiB
	[ "$f" -le 1900 ] || mb=(--mbuf-size=$((f + 256)))
	measure "dpdk-testpmd txonly -> rxonly, frames of $f B" \
		"$logs/tp-rx.log $logs/tp-tx.log" \
		bench_testpmd_pps "$logs" "$f" "$tp_secs" "${mb[@]}"
	mv "$logs/tp-rx.log" "$logs/testpmd-$f-rx.log"
	mv "$logs/tp-tx.log" "$logs/testpmd-$f-tx.log"
	# the link's limit: other load on the machine only lowers it,
	# so the best second (the median is in the log line)
	pps_of[$f]=$BENCH_PPS_MAX pps_med[$f]=$BENCH_PPS oth_of[$f]=$others
	progress "$(printf '%-9s %7s B %-10s' raw_link "$f" "frames") ... $BENCH_PPS_MAX pps (best second; median $BENCH_PPS)$(busy_note)"
}
for s in $bw_sizes; do
	f=$(frame_for "$s") pl=$(payload_for "$s")
	link_pps "$f"
	printf 'raw\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$f" "$pl" "${pps_of[$f]}" \
		"${pps_med[$f]}" "${oth_of[$f]}" >>"$res"
	# write_bw beside the same frames bare over dpdat's own port
	# (dpdat-perf --transport=raw), one after the other
	for t in $bw_tests; do
		perf_run dpdat "$t" "$s"
		[ "$t" != write_bw ] || perf_run raw "$t" "$s"
	done
	if [ $udp = 1 ]; then
		for t in $bw_tests; do perf_run udp "$t" "$s"; done
	fi
done

# latency: per size, dpdat, kernel UDP, sockperf (14 B .. 65507 B: a size
# out of that range runs the nearest it takes)
# sockperf_once MSG LOG: a server (it spins with --nonblocked: only while
# it is needed) and a client; sets sp to "p50 avg p99" in us
sockperf_once() {
	local port=$((svc_base + nsvc)) srv rc=0
	nsvc=$((nsvc + 1))
	# shellcheck disable=SC2086 # $sp_opts: options, split
	"${A[@]}" timeout $((sp_secs + 20)) sockperf server -i "$kpeer" -p $port $sp_opts \
		</dev/null >"$2.server" 2>&1 &
	srv=$!
	BENCH_PIDS+=("$srv")
	wait_udp $port 10 || sleep 0.5
	# shellcheck disable=SC2086
	"${B[@]}" timeout $((sp_secs + 15)) sockperf ping-pong -i "$kpeer" -p $port \
		-m "$1" -t "$sp_secs" $sp_opts </dev/null >"$2" 2>&1 || rc=$?
	wait_pid "$srv" 0
	[ $rc = 0 ] || { echo "bench:   exit status $rc" >&2; return 1; }
	sp=$(sed 's/\x1b\[[0-9;]*m//g' "$2" | awk '
		/avg-latency=/ { sub(/.*avg-latency=/, ""); sub(/ .*/, ""); avg = $0 }
		/percentile 50.000 =/ { p50 = $NF }
		/percentile 99.000 =/ { p99 = $NF }
		END { if (p50 > 0 && avg > 0 && p99 > 0) print p50, avg, p99 }')
	[ -n "$sp" ]
}

for s in $lat_sizes; do
	for t in $lat_tests; do
		perf_run dpdat "$t" "$s"
		[ "$t" != write_lat ] || perf_run raw "$t" "$s"
	done
	if [ $udp = 1 ]; then
		for t in $lat_tests; do perf_run udp "$t" "$s"; done
	fi
	m=$s
	[ "$m" -ge 14 ] || m=14
	[ "$m" -le 65507 ] || m=65507
	lg=$logs/sockperf-$s.log
	measure "sockperf ping-pong $m B" "$lg $lg.server" sockperf_once "$m" "$lg"
	read -r p50 avg p99 <<<"$sp"
	progress "$(printf '%-9s %7s B %-10s' sockperf "$s" "kernel") ... $p50 us (half round trip, median; $m B messages)$(busy_note)"
	printf 'sockperf\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$m" "$p50" "$avg" "$p99" "$others" >>"$res"
done

# the latency goals (see goal_sets): their own runs, longer than the sweep's
goal_n=0
goal_run() {	# TRANSPORT TEST BYTES QPS: measured; a "goal" line in results.tsv
	local gtr=$1 t=$2 s=$3 q=$4 name what unit
	# perf_once's run lengths, for these runs
	local bw_secs=$goal_bw_secs lat_iters=$goal_lat_iters
	goal_n=$((goal_n + 1))
	name=$logs/goal-$goal_n-$gtr-$t-$s-q$q
	what=$(printf '%-9s %7s B %-10s' "$t" "$s" "$(case $gtr in
		udp) echo "kernel udp" ;; raw) echo "raw port" ;;
		bare) echo "bare link" ;; *) echo dpdat ;; esac)$([ "$q" = 1 ] || echo " -q $q")")
	case $t in *_bw) unit="MiB/s" ;; *) unit="us" ;; esac
	measure "goals: $(tr -s ' ' <<<"$what")" "$name.log $name.server.log" \
		perf_once "$gtr" "$t" "$s" "$name" "$q"
	progress "$what ... $val $unit (goals)$(busy_note)"
	printf 'goal\t%s\t%s\t%s\t%s\t%s\t%s\n' "$gtr" "$t" "$s" "$q" "$name.json" \
		"$others" >>"$res"
}
if [ "$goal_rounds" -gt 0 ]; then
	for set in "${goal_sets[@]}"; do
		for ((r = 1; r <= goal_rounds; r++)); do
			for e in $set; do
				IFS=: read -r gtr t s q <<<"$e"
				goal_run "$gtr" "$t" "$s" "$q"
			done
		done
	done
fi

# between two hosts, the kernel's TCP over the same veth (iperf3)
iperf_once() {	# LOG: sets val (MiB/s received)
	local srv rc=0
	"${A[@]}" timeout $((tp_secs + 20)) iperf3 -s -1 -B "$kpeer" -p $((svc_base + nsvc)) \
		</dev/null >"$1.server" 2>&1 &
	srv=$!
	BENCH_PIDS+=("$srv")
	sleep 0.5
	"${B[@]}" timeout $((tp_secs + 15)) iperf3 -c "$kpeer" -p $((svc_base + nsvc)) \
		-t "$tp_secs" -J </dev/null >"$1" 2>&1 || rc=$?
	nsvc=$((nsvc + 1))
	wait_pid "$srv" 2
	[ $rc = 0 ] || return 1
	val=$("$py" -c 'import json, sys
print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8 / 2**20))' "$1") &&
		[ -n "$val" ]
}
if [ "$link" != memif ] && command -v iperf3 >/dev/null; then
	measure "iperf3 TCP" "$logs/iperf3.log $logs/iperf3.log.server" \
		iperf_once "$logs/iperf3.log"
	echo "bench: iperf3 TCP between the namespaces ... $val MiB/s$(busy_note)"
	printf 'iperf3\t%s\t%s\n' "$val" "$others" >>"$res"
fi

# the table, the JSON, the plots' data and script
elapsed=$((SECONDS - t_start))
# the CPU time others took meanwhile: all busy time less our children's
awk '/^cpu / { print $2 + $3 + $4 }' /proc/stat >"$logs/cpu"
times >>"$logs/cpu"	# here: in a subshell it would not count our children
others_run=$(awk -v j0="$jiffies0" -v hz="$(getconf CLK_TCK)" -v t="$elapsed" \
	    -v n="$(nproc)" '
	NR == 1 { busy = ($1 - j0) / hz }
	NR == 3 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); kids += a[1] * 60 + a[2] } }
	END { o = t ? 100 * (busy - kids) / (t * n) : 0; printf "%.0f", o < 0 ? 0 : o }' \
	"$logs/cpu")
[ "$others_run" -lt 10 ] ||
	echo "bench: warning: other processes took ${others_run}% of the CPUs during the run: figures are low and noisy"
term=png
gnuplot -e 'set terminal' 2>&1 | grep -w pngcairo >/dev/null && term=pngcairo
"$py" "${self%/*}/bench_report.py" "$res" "$json" "$out" "$quick" "$elapsed" \
	"$bw_secs" "$lat_iters" "$tp_secs" "$sp_secs" "$sp_opts" "$pmtu" "$udp" "$term" \
	"$busy" "$others_run" "$tries" "$max_others" "$link" "$goal_rounds" \
	"$goal_lat_iters" "$goal_bw_secs"
gnuplot "$out/bench.gp" 2>"$logs/gnuplot.log" || { tail_log "$logs/gnuplot.log"; die gnuplot; }
echo "bench: $json, $out/bw.png, $out/lat.png ($((SECONDS - t_start)) s)"
