#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# An unmodified verbs program's two sides through dpdat-run, over a memif
# pair: the server (memif server, 198.18.0.1) is started, the client
# (198.18.0.2) connects to it on 127.0.0.1 once its TCP port listens (the
# exchange of QP details is the program's own). Both must exit 0 and the
# client's output hold PATTERN. With --link af_xdp or af_packet, the two
# run instead in two network namespaces joined by a veth pair (made here,
# as root, removed on exit: test/integration/netns.sh), dpdat0 on each
# veth0 beside the kernel, which carries the programs' TCP (the client
# then connects to 198.18.0.1).
#   pair.sh <dpdat-run> [--link KIND] [--env VAR=VALUE]... PATTERN PROGRAM
#           [ARGS...]
#   pair.sh <dpdat-run> [--link KIND] [--env VAR=VALUE]... PATTERN PROGRAM
#           SERVER_ARGS... -- CLIENT_ARGS...
# In the first form the TCP port is -p PORT, added by this script to both
# sides, and the client is given 127.0.0.1 (programs that exchange QP
# details over TCP: ibv_rc_pingpong, perftest); in the second, each side
# gets its own arguments, @PORT@ in them replaced by the port, and the
# client starts once the server's dpdat0 is up (its memif socket listens)
# and half a second more for its rdma_cm to listen. --env sets a variable for both
# sides (DPDAT_FAULT=... for loss).
set -u
. "$(dirname "$0")/../sanitizer.sh"
run=$1
shift
link=
while [ "${1:-}" = --env ] || [ "${1:-}" = --link ]; do
	if [ "$1" = --link ]; then
		link=${2:?--link af_xdp or af_packet}
	else
		export "${2:?--env needs VAR=VALUE}"
	fi
	shift 2
done
pattern=$1 prog=$2
shift 2
sargs=() cargs=() split=
for a in "$@"; do
	if [ "$a" = -- ] && [ -z "$split" ]; then
		split=1
	elif [ -z "$split" ]; then
		sargs+=("$a")
	else
		cargs+=("$a")
	fi
done
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
if [ -n "$link" ]; then
	. "$(dirname "$0")/../integration/netns.sh"
	dev=$(netns_dev "$link") || exit 1
	netns_up
	trap 'cleanup; netns_down' EXIT
	# each dpdat0 takes its veth0's address
	sdev=(--dev "$dev") cdev=(--dev "$dev")
	sx=(ip netns exec "$NS_A") cx=(ip netns exec "$NS_B")
	peer=198.18.0.1
else
	sdev=(--dev "net_memif0,role=server,socket=$sock" --ip 198.18.0.1)
	cdev=(--dev "net_memif0,role=client,socket=$sock" --ip 198.18.0.2)
	sx=() cx=()
	peer=127.0.0.1
fi
if [ -n "$split" ]; then
	sargs=("${sargs[@]//@PORT@/$port}")
	cargs=("${cargs[@]//@PORT@/$port}")
else
	cargs=("${sargs[@]}" -p "$port" "$peer")
	sargs+=(-p "$port")
fi
fail() {
	echo "FAIL: $*"
	echo "--- server"; cat "$tmp/server" 2>/dev/null
	echo "--- client"; cat "$tmp/client" 2>/dev/null
	san_check "$tmp"
	exit 1
}

san=("${SAN_DAT[@]}")
case "$prog $*" in
ib_*" -R "*)
	# perftest's rdma_cm mode leaves its own getaddrinfo() result
	# unfreed (libc frames only: no suppression can name it): no leak
	# check for it
	[ ${#san[@]} -eq 0 ] ||
		san+=("ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0") ;;
ib_atomic_lat* | ib_send_bw*)
	# ib_atomic_lat exits without destroying its QP, CQ, MR, PD and
	# context, ib_send_bw's client without destroying its receive CQ
	# (legal: the process ends): no leak check for them
	[ ${#san[@]} -eq 0 ] ||
		san+=("ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0") ;;
esac

"${sx[@]}" "${san[@]}" timeout 60 "$run" "${sdev[@]}" \
	"$prog" "${sargs[@]}" >"$tmp/server" 2>&1 &
spid=$!
# the server opens dpdat0 (EAL, port) before it listens
if [ -n "$split" ]; then
	# dpdat0 is up once its memif socket (abstract) listens, or, beside
	# a kernel, once the EAL came up and the port was made; its rdma_cm
	# listens right after
	for _ in $(seq 200); do
		if [ -n "$link" ]; then
			grep -q "EAL up" "$tmp/server" && sleep 1 && break
		else
			ss -Hxl 2>/dev/null | grep -q "@$sock" && break
		fi
		kill -0 "$spid" 2>/dev/null ||
			fail "the server exited before listening"
		sleep 0.1
	done
	sleep 0.5
else
	for _ in $(seq 200); do
		"${sx[@]}" ss -Hltn "sport = :$port" 2>/dev/null |
			grep -q . && break
		kill -0 "$spid" 2>/dev/null ||
			fail "the server exited before listening"
		sleep 0.1
	done
fi
kill -0 "$spid" 2>/dev/null || fail "the server exited before the client started"
"${cx[@]}" "${san[@]}" timeout 60 "$run" "${cdev[@]}" \
	"$prog" "${cargs[@]}" >"$tmp/client" 2>&1
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
