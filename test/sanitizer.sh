# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Test scripts in a sanitizer build (-Db_sanitize=address,undefined), to be
# sourced; harmless in other builds.
#   san_init DIR   every program the script starts from now on writes its
#                  ASan and LeakSanitizer reports to DIR/san.<pid>
#                  (log_path) instead of stderr, so that a report fails the
#                  test also where a program's exit status is not the
#                  verdict (a pipe, a server told to quit, dtestsrq, which
#                  exits 0 whatever happens); UBSan stops the program at its
#                  first report (halt_on_error=1: exit status 1); and
#                  SAN_DAT is set
#   san_check DIR  prints the reports there, and UBSan's: with ASan in the
#                  process (GCC 12) UBSan ignores log_path and writes to
#                  stderr, so every file in DIR is searched for its
#                  "runtime error:" (the scripts keep the programs' stderr
#                  there); returns 1 if there is a report
#   SAN_DAT        the prefix (an array) that runs an uninstrumented program,
#                  Debian's DAT tests, with the sanitized plug-in loadable;
#                  empty unless SAN_PRELOAD (meson: test/conformance) names
#                  the sanitizer runtimes the compiler linked the plug-in with
#
# The recipe for an uninstrumented program (SAN_DAT), after the caller's
# ASAN_OPTIONS, LSAN_OPTIONS and UBSAN_OPTIONS:
#   LD_PRELOAD="libasan.so libubsan.so" (the compiler's, in that order)
#        ASan intercepts malloc and friends for the whole process and
#        refuses to start unless its runtime comes first in the initial
#        library list ("ASan runtime does not come first"): loaded by the
#        registry's dlopen(), the plug-in cannot run. libubsan would load
#        late without harm; it is preloaded too, so that the dlopen() loads
#        no runtime. Only the DAT programs get it: bash, timeout, ip and
#        grep run as they are (LeakSanitizer would speak of their leaks).
#   ASAN_OPTIONS=detect_leaks=1
#        LeakSanitizer at exit, as for the instrumented tests (the default
#        on x86-64 Linux; said, not assumed)
#   ASAN_OPTIONS=malloc_context_size=2
#        allocation stacks of the allocator and its caller only. Debian's
#        programs are stripped: a suppression can name their frames only by
#        module (/usr/bin/dapltest), and every stack of the process ends in
#        the program's main, the plug-in's allocations too, so with whole
#        stacks "leak:/usr/bin/dapltest" would hide every leak. Cut to the
#        caller, it hides what the program itself allocated and nothing
#        that the plug-in, libdpdat or DPDK allocated (their leaks are
#        reported with the function that allocated; run the case again
#        with malloc_context_size=30 for the whole stack; lsan-dat.supp
#        says what its asprintf() rule costs). The caller's frame is
#        the return address the interceptor sees, right without frame
#        pointers in Debian's code, so the fast unwinder is kept.
#   LSAN_OPTIONS=suppressions=test/lsan.supp + test/conformance/lsan-dat.supp
#        third-party leaks, each with its reason; the second file names the
#        programs' own and holds only for them
#   UBSAN_OPTIONS=print_stacktrace=1
# and from san_init ASAN_OPTIONS=log_path=DIR/san, UBSAN_OPTIONS=
# halt_on_error=1. The known crash of libdat2 in dapltest -T F -f queryinfo adds
# handle_segv=0 (dat_conformance.sh).

san_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # for the scripts that source this
SAN_DAT=()

san_init() {	# dir
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$1/san
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1
	[ -n "${SAN_PRELOAD:-}" ] || return 0
	cat "$san_dir/lsan.supp" "$san_dir/conformance/lsan-dat.supp" \
		>"$1/lsan-dat.supp"
	# shellcheck disable=SC2034
	SAN_DAT=(env "LD_PRELOAD=$SAN_PRELOAD"
		"ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=1:malloc_context_size=2"
		"LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$1/lsan-dat.supp:print_suppressions=0"
		"UBSAN_OPTIONS=$UBSAN_OPTIONS:print_stacktrace=1")
}

san_check() {	# dir
	local f found=0
	for f in "$1"/san.*; do
		[ -f "$f" ] || continue
		echo "---- sanitizer report $(basename "$f")"
		cat "$f"
		found=1
	done
	while read -r f; do
		echo "---- UBSan report in $(basename "$f")"
		grep -A 12 ': runtime error: ' "$f"
		found=1
	done < <(grep -l ': runtime error: ' "$1"/* 2>/dev/null)
	[ $found -eq 0 ]
}
