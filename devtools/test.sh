#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Install, build, run every test suite; then a tree with AddressSanitizer
# and UndefinedBehaviorSanitizer, whose engine also checks its invariants
# after every step (DPDAT_DEBUG), runs the unit, integration (cm, rsm and
# the injected-loss suite faults among them), tools, conformance, fabric
# and verbs suites: Debian's DAT programs, which are not
# instrumented, load the sanitized plug-in with the compiler's libasan.so
# and libubsan.so preloaded (test/sanitizer.sh). Exits non-zero on any
# failure. CI runs this (about 24 minutes on a 2-vCPU machine).
#
# devtools/test.sh --quick: for day-to-day work, the plain tree only and
# every suite but its slow cases (meson suites long and slow: the soaks,
# the 8 GiB dtest runs between namespaces, the options one by one, MPI
# between namespaces, the bench and tools walk-throughs): about 8 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0
case ${1:-} in
--quick) quick=1 ;;
"") ;;
*) echo "usage: devtools/test.sh [--quick]" >&2; exit 2 ;;
esac
devtools/setup.sh || exit 1

status=0
failed=()	# "dir: test (result, duration)" of every test that did not pass
# the tests of a meson run that did not pass, a line each: the end of a
# long log shows them without scrolling back through the error logs
failed_tests() {	# testlog.json
	if [ ! -f "$1" ]; then
		echo "(meson test failed before running a test)"
		return
	fi
	python3 - "$1" <<-'PY'
	import json, sys
	for line in open(sys.argv[1]):
	    t = json.loads(line)
	    if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL"):
	        print("%s (%s, %.1f s)" % (t["name"], t["result"], t.get("duration", 0)))
	PY
}
run_suites() {	# dir, meson test arguments...
	local dir=$1 t0=$SECONDS; shift
	echo "== meson test -C $dir $*"
	rm -f "$dir/meson-logs/testlog.json"	# no earlier run's failures
	if ! meson test -C "$dir" --print-errorlogs --num-processes 1 "$@"; then
		status=1
		local t
		while IFS= read -r t; do
			failed+=("$dir: $t")
		done < <(failed_tests "$dir/meson-logs/testlog.json")
	fi
	# the CUnit summaries of every test that ran
	grep -hE "^ *(Run Summary:|suites |tests |asserts )" "$dir/meson-logs/testlog.txt" || true
	echo "== $dir $*: $((SECONDS - t0)) s"
}

devtools/build.sh build || exit 1
if [ "$quick" = 1 ]; then
	run_suites build --no-suite long --no-suite slow
	echo "test.sh --quick: $SECONDS s in all (devtools/test.sh without" \
		"--quick runs the slow cases and the sanitized trees too)"
	[ $status -eq 0 ] && echo "test.sh --quick: all suites passed" ||
		printf 'test.sh --quick: FAILURES:\n%s\n' "$(printf '    %s\n' "${failed[@]}")"
	exit $status
fi
run_suites build

devtools/build.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false || exit 1
# the unit suites, and the integration suites (two processes over memif,
# the CM, RSM, dpdat-perf) but those that need a full-speed build
# ("timing"), those whose length a clock sets ("long": the soak, the
# coexistence checks, the hostile hosts; they ran above, and the fuzzers
# below put the receive path under the sanitizers) and those between
# namespaces ("netns": the same engine over af_xdp and af_packet, whose
# port code the DAT cases between namespaces below run sanitized) and the
# slow ones ("slow": perf-tools, 45 s of dpdat-perf command lines, which
# the plain tree runs; the library under them runs sanitized in every
# other integration test); leaks
# of third-party code only are suppressed, each with its reason
# (test/lsan.supp)
export LSAN_OPTIONS=suppressions=$PWD/test/lsan.supp:print_suppressions=0
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suites build-asan --suite unit
ASAN_OPTIONS=detect_leaks=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suites build-asan --suite integration --no-suite timing \
		--no-suite long --no-suite netns --no-suite slow
# the tools as a user drives them (those in integration ran above)
ASAN_OPTIONS=detect_leaks=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suites build-asan --suite tools --no-suite integration
# Debian's DAT programs against the sanitized plug-in, the runtimes
# preloaded into them (LD_PRELOAD, LeakSanitizer on, their own leaks
# suppressed in test/conformance/lsan-dat.supp; test/sanitizer.sh): every
# case over memif (about 3 min) but the loss variants and the programs'
# options one by one (suites loss, options: the plain tree runs them), and
# between namespaces the cases but
# dtest, whose 8 GiB through the veth pair take 1.5 to 2 min each, with or
# without ASan: build/ runs them above, and
# meson test -C build-asan --suite netns under the sanitizers
ASAN_OPTIONS=detect_leaks=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suites build-asan --suite conformance --no-suite netns \
		--no-suite loss --no-suite options
# the libfabric provider under Debian's fi_info and fi_pingpong (preloaded
# as the DAT programs) and fabric_test, over memif (the namespace variants
# and MPI run in build/ above; meson test -C build-asan --suite fabric
# --no-suite mpi runs them all sanitized)
ASAN_OPTIONS=detect_leaks=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suites build-asan --suite fabric --no-suite mpi --no-suite netns
# Debian's verbs and rdma_cm programs through dpdat-run, the sanitized
# libdpdat-verbs and libdpdat-rdmacm preloaded after the runtimes (as the
# DAT programs), over memif (the namespace variants and the every-size
# run, suite long, run in build/ above; meson test -C build-asan --suite
# verbs runs them all sanitized)
ASAN_OPTIONS=detect_leaks=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suites build-asan --suite verbs --no-suite netns --no-suite long
ASAN_OPTIONS=detect_leaks=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suites build-asan netns-afxdp-dat-trans-mix \
		netns-afxdp-dat-dtestcm netns-afpacket-dat-trans-mix \
		netns-afpacket-dat-dtestcm

# libFuzzer, every harness 5 s, when clang is there (setup.sh installs it);
# devtools/fuzz.sh runs them at length
if command -v clang >/dev/null; then
	CC=clang devtools/build.sh build-fuzz -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false || exit 1
	run_suites build-fuzz --suite fuzz
else
	echo "test.sh: clang missing, fuzz suite not run"
	status=1
fi

echo "test.sh: $SECONDS s in all"
if [ $status -eq 0 ]; then
	echo "test.sh: all suites passed"
else
	echo "test.sh: FAILURES (see above):"
	if [ ${#failed[@]} -gt 0 ]; then
		printf '    %s\n' "${failed[@]}"
	fi
fi
exit $status
