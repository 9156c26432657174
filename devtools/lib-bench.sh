# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Shared by the devtools/bench*.sh scripts (sourced, not run):
# the raw link as dpdk-testpmd txonly -> rxonly over a memif pair, the
# median, cleanup of the processes a script started (by pid only), and
# the options of the benches between network namespaces.

BENCH_PIDS=()		# background processes to end on exit
# shellcheck disable=SC2034 # results for the scripts that source this
BENCH_PPS=0 BENCH_PPS_MAX=0	# bench_testpmd_pps's: median, best second

# Kill what we started and is still running; for an EXIT trap.
bench_cleanup() {
	local p
	for p in "${BENCH_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${BENCH_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	BENCH_PIDS=()
}

# bench_forget PID: a background process that has been waited for.
bench_forget() {
	local p keep=()
	for p in "${BENCH_PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	BENCH_PIDS=("${keep[@]}")
}

# The median of the numbers on stdin (0 for none).
bench_median() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'
}

# bench_wait_unix PATH SECONDS: wait until a process listens on the unix
# socket PATH (memif's are abstract: "@PATH" in /proc/net/unix).
bench_wait_unix() {
	local i
	for ((i = 0; i < $2 * 50; i++)); do
		awk -v p="$1" '$NF == p || $NF == "@" p { f = 1 } END { exit !f }' \
			/proc/net/unix && return 0
		sleep 0.02
	done
	return 1
}

# bench_testpmd_pps DIR FRAME SECONDS [testpmd options]: dpdk-testpmd
# txonly (frames of FRAME bytes) -> rxonly over a fresh memif pair for
# about SECONDS; sets BENCH_PPS to the median of the receiver's non-zero
# per-second Rx-pps samples (the busy seconds), BENCH_PPS_MAX to the
# largest. Logs: DIR/tp-rx.log and DIR/tp-tx.log. Returns 1 if nothing
# was received.
# Another link: BENCH_RX_VDEV and BENCH_TX_VDEV name the two devices,
# BENCH_RX_NS and BENCH_TX_NS the network namespaces they run in.
bench_testpmd_pps() {
	local dir=$1 frame=$2 secs=$3 rx
	shift 3
	local sock=$dir/tp.sock lc='0@(0,1),1@(0,1)' pre=dpdatbench-$$
	local rxdev=${BENCH_RX_VDEV:-net_memif0,role=server,socket=$sock}
	local txdev=${BENCH_TX_VDEV:-net_memif0,role=client,socket=$sock}
	local rxns=() txns=()
	[ -z "${BENCH_RX_NS:-}" ] || rxns=(ip netns exec "$BENCH_RX_NS")
	[ -z "${BENCH_TX_NS:-}" ] || txns=(ip netns exec "$BENCH_TX_NS")
	# the shell's notice of the receiver's end (DPDK 22.11's memif may
	# crash when its peer goes) goes to its log, not to the terminal
	{
		"${rxns[@]}" timeout $((secs + 12)) dpdk-testpmd --lcores="$lc" --no-pci --in-memory \
			--file-prefix="$pre-rx" --vdev="$rxdev" \
			-- --forward-mode=rxonly --auto-start --stats-period=1 \
			--total-num-mbufs=16384 "$@" </dev/null >"$dir/tp-rx.log" 2>&1 &
		rx=$!
		BENCH_PIDS+=("$rx")
		if [ -z "${BENCH_RX_VDEV:-}" ]; then
			bench_wait_unix "$sock" 10 || sleep 1
			sleep 0.2	# the port started after its socket
		else	# until the receiver forwards
			for _ in $(seq 100); do
				grep -q 'Press enter\|Port statistics' "$dir/tp-rx.log" && break
				sleep 0.1
			done
		fi
		"${txns[@]}" timeout $((secs + 1)) dpdk-testpmd --lcores="$lc" --no-pci --in-memory \
			--file-prefix="$pre-tx" --vdev="$txdev" \
			-- --forward-mode=txonly --auto-start --txpkts="$frame" \
			--stats-period=1 --total-num-mbufs=16384 "$@" \
			</dev/null >"$dir/tp-tx.log" 2>&1 || true
		kill "$rx" 2>/dev/null || true
		wait "$rx" 2>/dev/null || true
	} 2>>"$dir/tp-rx.log"
	bench_forget "$rx"
	BENCH_PPS=$(grep -o 'Rx-pps: *[0-9]*' "$dir/tp-rx.log" |
		awk '$2 > 0 { print $2 }' | bench_median)
	# shellcheck disable=SC2034 # for bench.sh
	BENCH_PPS_MAX=$(grep -o 'Rx-pps: *[0-9]*' "$dir/tp-rx.log" |
		awk '$2 > m { m = $2 } END { print m + 0 }')
	[ "$BENCH_PPS" -gt 0 ]
}

# bench_netns_opts NAME ARGS...: the options of a bench between network
# namespaces (bench-NAME.sh, bench.sh --NAME): --quick, --link KIND
# (af_xdp or af_packet), --out DIR, -h. Sets quick (BENCH_QUICK), kind,
# out (absolute, made) and logs (out/logs-NAME); needs root. Wants self
# (the script's path: -h prints its "# Usage:" block, bench_usage), here
# (the caller's directory) and build.
bench_netns_opts() {
	local name=$1
	shift
	quick=${BENCH_QUICK:-0} out="" kind=af_xdp
	while [ $# -gt 0 ]; do
		case $1 in
		--"$name") ;;
		--quick) quick=1 ;;
		--link) kind=${2:?--link af_xdp|af_packet}; shift ;;
		--out) out=${2:?--out DIR}; shift ;;
		-h | --help) bench_usage; exit 0 ;;
		*) bench_usage >&2; exit 2 ;;
		esac
		shift
	done
	case $kind in af_xdp | af_packet) ;;
	*) echo "bench-$name: --link $kind: af_xdp or af_packet" >&2; exit 2 ;;
	esac
	[ "$(id -u)" -eq 0 ] ||
		{ echo "bench-$name: network namespaces need root" >&2; exit 1; }
	[ -z "$out" ] || case $out in /*) ;; *) out=$here/$out ;; esac
	out=${out:-$build/bench}
	mkdir -p "$out/logs-$name"
	out=$(cd "$out" && pwd)
	logs=$out/logs-$name
}

# The script's "# Usage:" block, up to its "# Overrides:" paragraph's end
# (the first line after it that is not a comment).
bench_usage() {
	sed -n '/^# Usage:/,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$self"
}
