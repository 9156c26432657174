#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Run every libFuzzer harness of test/fuzz (build-fuzz: clang, ASan+UBSan),
# one after the other, each from a copy of its seed corpus:
#   devtools/fuzz.sh             until 10^7 executions each (at most two
#                                hours each; FUZZ_MAX_SECONDS=N: N seconds)
#   devtools/fuzz.sh SECONDS     SECONDS each
#   FUZZ_HARNESSES="cm parse"    only these (rx, cm, parse, rsm, dat)
#   FUZZ_JOBS=N                  N processes per harness (libFuzzer's fork
#                                mode: one run, its executions summed; a
#                                crash, timeout or out-of-memory still
#                                ends it); default 1
# Prints executions, coverage (edges) and new inputs per harness, and the
# table at the end; a crash leaves its input in fuzz-artifacts/ and the
# script exits 1 (reproduce: build-fuzz/test/fuzz/fuzz_NAME FILE).
set -u
cd "$(dirname "$0")/.."
secs=${1:-}
case $secs in ''|*[!0-9]*) [ -z "$secs" ] || { echo "usage: $0 [seconds]" >&2; exit 2; } ;; esac
harnesses=${FUZZ_HARNESSES:-"rx cm parse rsm dat"}
jobs=${FUZZ_JOBS:-1}
case $jobs in ''|*[!0-9]*|0*)
	echo "fuzz: FUZZ_JOBS must be a positive number" >&2
	exit 2 ;;
esac
fork=()
[ "$jobs" -gt 1 ] && fork=(-fork="$jobs" -ignore_crashes=0
	-ignore_timeouts=0 -ignore_ooms=0)
if ! command -v clang >/dev/null; then
	echo "fuzz: clang missing: devtools/setup.sh installs it" >&2
	exit 1
fi
CC=clang devtools/build.sh build-fuzz -Dfuzz=true \
	-Db_sanitize=address,undefined -Db_lundef=false || exit 1
art=$PWD/fuzz-artifacts
mkdir -p "$art"
work=$(mktemp -d /tmp/dpdat-fuzzsh-XXXXXX)
trap 'rm -rf "$work"' EXIT
status=0
table=()
for h in $harnesses; do
	bin=build-fuzz/test/fuzz/fuzz_$h
	corpus=test/fuzz/corpus-$h
	if [ ! -x "$bin" ] || [ ! -d "$corpus" ]; then
		echo "fuzz: no harness '$h' (rx, cm, parse, rsm, dat)" >&2
		exit 2
	fi
	mkdir -p "$work/$h"
	cp "$corpus"/* "$work/$h"/
	if [ -n "$secs" ]; then
		limit=(-max_total_time="$secs")
		what="$secs s"
	else
		cap=${FUZZ_MAX_SECONDS:-7200}
		case $cap in ''|*[!0-9]*)
			echo "fuzz: FUZZ_MAX_SECONDS must be a positive number" >&2
			exit 2 ;;
		esac
		if [ "$((10#$cap))" -eq 0 ]; then	# 0: no limit to libFuzzer
			echo "fuzz: FUZZ_MAX_SECONDS must be a positive number" >&2
			exit 2
		fi
		limit=(-runs=10000000 -max_total_time="$cap")
		what="10^7 executions (at most $cap s)"
	fi
	seeds=$(ls "$corpus" | wc -l)
	echo "fuzz: $h: $what, from $seeds seeds, $jobs process(es)"
	# leak checks on, as in CI (test/fuzz/run_fuzz.sh); libFuzzer's
	# progress lines (one every few seconds) show it moving
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
	"$bin" "${limit[@]}" "${fork[@]}" -max_len=4300 -rss_limit_mb=4096 \
		-print_final_stats=1 -error_exitcode=1 -timeout_exitcode=1 \
		-artifact_prefix="$art/$h-" "$work/$h" >"$work/$h.log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		sleep 30
		l=$(grep -aE '^#[0-9]+' "$work/$h.log" | tail -n 1 | cut -c1-100)
		[ -n "$l" ] && echo "fuzz: $h: $l"
	done
	wait $pid
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$h.log")
	# fork mode prints no final stats: its last '#N:' line sums the jobs
	[ -n "$runs" ] || runs=$(grep -aoE '^#[0-9]+:' "$work/$h.log" |
		tail -n 1 | tr -d '#:')
	cov=$(grep -aoE 'cov: [0-9]+' "$work/$h.log" | tail -n 1 | cut -d' ' -f2)
	new=$(sed -n 's/^stat::new_units_added: *//p' "$work/$h.log")
	[ -n "$new" ] || new=$(($(ls "$work/$h" | wc -l) - seeds))
	[ "$jobs" -gt 1 ] && grep -aE '^#[0-9]+:' "$work/$h.log" |
		tail -n 1 | grep -aoE 'oom/timeout/crash: [0-9/]+' |
		sed "s/^/fuzz: $h: /"
	if [ $rc -eq 72 ]; then
		# libFuzzer's exit on SIGINT: stopped, nothing found
		status=1
		echo "fuzz: $h: interrupted (SIGINT) before its goal"
		result="interrupted, no crash"
	elif [ $rc -ne 0 ]; then
		status=1
		echo "fuzz: $h: FAILED (exit $rc):"
		grep -aE 'ERROR|SUMMARY|#[0-9]+ 0x|artifact' "$work/$h.log" |
			head -n 20 | sed 's/^/    /'
		result="CRASH (see $art)"
	else
		result=ok
	fi
	table+=("$(printf '%-6s %12s %8s %8s  %s' "$h" "${runs:-?}" \
		"${cov:-?}" "${new:-?}" "$result")")
done
echo
printf '%-6s %12s %8s %8s  %s\n' harness executions edges 'new in' result
printf '%s\n' "${table[@]}"
exit $status
