#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# The order in which two processes of a memif pair start does not matter:
# 1. a dpdat client started 2 s before its server waits for it ("waiting
#    up to"), then connects;
# 2. a server whose socket is open but whose port starts 4 s later (DPDK's
#    dpdk-testpmd --disable-device-start, then "port start all") refuses the
#    first handshake, as DPDK 22.11 does; the client connects again and its
#    link comes up.
# The client is dpdat-testpmd (memif client, 20 s link wait) showing its
# link. Usage: memif_wait_check.sh <dpdat-testpmd>
set -u
tp=$1
dir=$(mktemp -d /tmp/dpdat-memifwait-XXXXXX)
srv=
trap 'kill $srv 2>/dev/null; rm -rf "$dir"' EXIT
status=0
printf 'show link\nquit\n' >"$dir/client.cmd"

fail() {
	echo "FAILED: $*"
	for f in client server testpmd; do
		[ -f "$dir/$f.log" ] || continue
		echo "--- $f"
		grep -v '^EAL' "$dir/$f.log" | tail -8
	done
	status=1
}

# client <socket>: run the client, its status in $crc, its time in $secs
client() {
	local t0=$SECONDS
	timeout 60 "$tp" --role client --socket "$1" \
		--cmdline-file "$dir/client.cmd" >"$dir/client.log" 2>&1
	crc=$?
	secs=$((SECONDS - t0))
}

# 1. client first
sock=$dir/a.sock
printf 'sleep 15000\nquit\n' >"$dir/server.cmd"
( sleep 2; exec timeout 60 "$tp" --role server --socket "$sock" \
	--cmdline-file "$dir/server.cmd" </dev/null >"$dir/server.log" 2>&1 ) &
srv=$!
client "$sock"
kill $srv 2>/dev/null; wait $srv 2>/dev/null; srv=
if [ $crc -ne 0 ] || ! grep -q 'link up' "$dir/client.log"; then
	fail "client first: exit $crc, no link up"
elif ! grep -q 'waiting up to 20 s for a memif server' "$dir/client.log"; then
	fail "client first: it did not say it waits"
else
	echo "client first: connected after ${secs} s"
fi

# 2. a server that opens its socket 4 s before it starts its port
if command -v dpdk-testpmd >/dev/null; then
	sock=$dir/b.sock
	mkfifo "$dir/testpmd.in"
	timeout 60 dpdk-testpmd --no-pci --no-huge -m 512 \
		--file-prefix "dpdat-mw-$$" \
		--vdev="net_memif0,role=server,socket=$sock" -- -i \
		--disable-device-start --total-num-mbufs 2048 \
		<"$dir/testpmd.in" >"$dir/testpmd.log" 2>&1 &
	srv=$!
	exec 3>"$dir/testpmd.in"
	( sleep 4; echo "port start all" >&3 ) &
	feeder=$!
	sleep 1.5
	client "$sock"
	echo quit >&3
	exec 3>&-
	kill $feeder 2>/dev/null
	wait $srv 2>/dev/null; srv=
	if [ $crc -ne 0 ] || ! grep -q 'link up' "$dir/client.log"; then
		fail "slow server: exit $crc, no link up"
	elif ! grep -q 'connecting again' "$dir/client.log"; then
		fail "slow server: the client did not connect again"
	else
		echo "server that starts late: connected again, link up after ${secs} s"
	fi
else
	echo "note: no dpdk-testpmd: the late server case is not run"
fi
exit $status
