#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run a libFuzzer harness for a bounded time on a copy of its seed corpus
# (new inputs stay out of the tree). Usage: run_fuzz.sh <harness> <corpus> <seconds>
set -u
work=$(mktemp -d /tmp/dpdat-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$2"/* "$work"/
# Leak checks stay on: libFuzzer runs LeakSanitizer after an input that
# allocated more than it freed (the harnesses keep their devices and
# objects reachable for the whole run, so a report is an input's leak).
# A crash must fail the test: libFuzzer's own error code, 77, is meson's
# "skipped" (a crash in CI went unnoticed so).
# UBSan's reports stop the run too (by default it prints and goes on:
# fuzz_dat's first finding went by so).
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
"$1" -max_total_time="$3" -max_len=4300 -rss_limit_mb=4096 -print_final_stats=1 \
	-error_exitcode=1 -timeout_exitcode=1 \
	-artifact_prefix="${FUZZ_ARTIFACTS:-/tmp/}dpdat-$(basename "$1")-" "$work"
