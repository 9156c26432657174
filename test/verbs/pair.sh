#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# An unmodified verbs program's two sides through dpdat-run, over a memif
# pair: the server (memif server, 198.18.0.1) is started, the client
# (198.18.0.2) connects to it on 127.0.0.1 once its TCP port listens (the
# exchange of QP details is the program's own). Both must exit 0 and the
# client's output hold PATTERN.
#   pair.sh <dpdat-run> [--env VAR=VALUE]... PATTERN PROGRAM [ARGS...]
# The TCP port is -p PORT, added by this script; --env sets a variable for
# both sides (DPDAT_FAULT=... for loss).
set -u
. "$(dirname "$0")/../sanitizer.sh"
run=$1
shift
while [ "${1:-}" = --env ]; do
	export "${2:?--env needs VAR=VALUE}"
	shift 2
done
pattern=$1 prog=$2
shift 2
command -v "$prog" >/dev/null ||
	{ echo "SKIP: no $prog (setup.sh installs ibverbs-utils, perftest)"; exit 77; }
tmp=$(mktemp -d /tmp/dpdat-verbs-XXXXXX)
spid=
cleanup() {
	[ -z "$spid" ] || kill "$spid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
san_init "$tmp"
sock=$tmp/v.sock
port=$((20000 + RANDOM % 20000))
fail() {
	echo "FAIL: $*"
	echo "--- server"; cat "$tmp/server" 2>/dev/null
	echo "--- client"; cat "$tmp/client" 2>/dev/null
	san_check "$tmp"
	exit 1
}

san=("${SAN_DAT[@]}")
case $prog in
ib_atomic_lat | ib_send_bw)
	# ib_atomic_lat exits without destroying its QP, CQ, MR, PD and
	# context, ib_send_bw's client without destroying its receive CQ
	# (legal: the process ends): no leak check for them
	[ ${#san[@]} -eq 0 ] ||
		san+=("ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0") ;;
esac

"${san[@]}" timeout 60 "$run" --dev "net_memif0,role=server,socket=$sock" \
	--ip 198.18.0.1 "$prog" "$@" -p "$port" >"$tmp/server" 2>&1 &
spid=$!
# the server opens dpdat0 (EAL, port) before it listens
for _ in $(seq 200); do
	ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
	kill -0 "$spid" 2>/dev/null || fail "the server exited before listening"
	sleep 0.1
done
"${san[@]}" timeout 60 "$run" --dev "net_memif0,role=client,socket=$sock" \
	--ip 198.18.0.2 "$prog" "$@" -p "$port" 127.0.0.1 >"$tmp/client" 2>&1
cst=$?
wait "$spid"
sst=$?
spid=
[ "$cst" -eq 0 ] || fail "$prog client: exit status $cst"
[ "$sst" -eq 0 ] || fail "$prog server: exit status $sst"
grep -Eq "$pattern" "$tmp/client" || fail "$prog client: no '$pattern'"
san_check "$tmp" >/dev/null || fail "a sanitizer report"
grep -E "$pattern" "$tmp/client"
echo "PASS"
