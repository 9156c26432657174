#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Run a two-process test over a fresh memif socket: the server role in the
# background, the client in the foreground, both bounded in time; the test
# passes when both exit 0. Usage: run2.sh <timeout-s> <program> [args...]
# The program is called as: program server|client <socket> args...
#
# SERVER_DIES=1: the server kills itself on purpose (SIGKILL, 137 counts as
# 0). The client must survive that: a memif peer that goes away mid-burst
# is the port's guard's business (lib/port/guard.c), a crash fails the test.
set -u
limit=$1; prog=$2; shift 2
sock=
cleanup() {
	[ -n "${spid:-}" ] && kill -9 "$spid" 2>/dev/null
	[ -n "$sock" ] && rm -f "$sock" "$sock".*
}
trap cleanup EXIT

run_pair() {
	sock=$(mktemp -u /tmp/dpdat-memif-XXXXXX.sock)
	timeout -k 2 "$limit" "$prog" server "$sock" "$@" \
		> >(sed 's/^/[server] /') 2>&1 &
	spid=$!
	sleep 0.5
	timeout -k 2 "$limit" "$prog" client "$sock" "$@" 2>&1 |
		sed 's/^/[client] /'
	crc=${PIPESTATUS[0]}
	wait "$spid"; src=$?
	spid=
	rm -f "$sock" "$sock".*
	echo "server exit $src, client exit $crc"
	[ "${SERVER_DIES:-0}" = 1 ] && [ "$src" -eq 137 ] && src=0
}

run_pair "$@"
# both sides skipped (77): the test is skipped
[ "$src" -eq 77 ] && [ "$crc" -eq 77 ] && exit 77
[ "$src" -eq 0 ] && [ "$crc" -eq 0 ]
