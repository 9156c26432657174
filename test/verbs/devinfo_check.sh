#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Debian's unmodified ibv_devinfo through dpdat-run: dpdat0 is listed, opens
# and answers its device, port and GID queries (a RoCE v2 Ethernet port,
# GID 0 the IPv4-mapped address), and what it does not do fails with a
# clear error instead of a crash (ibv_ud_pingpong, which gets its PD, MR
# and CQ and stops at its UD QP).
#   devinfo_check.sh <dpdat-run>
set -u
. "$(dirname "$0")/../sanitizer.sh"
run=$1
command -v ibv_devinfo >/dev/null ||
	{ echo "SKIP: no ibv_devinfo (ibverbs-utils)"; exit 77; }
tmp=$(mktemp -d /tmp/dpdat-verbs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
san_init "$tmp"
sock=$tmp/v.sock
fail() { echo "FAIL: $*"; cat "$tmp/out" 2>/dev/null; san_check "$tmp"; exit 1; }
expect() {	# pattern what
	grep -Eq "$1" "$tmp/out" || fail "ibv_devinfo: no $2 ('$1')"
}

# the list: dpdat0 among the system's devices
"${SAN_DAT[@]}" timeout 60 "$run" --dev "net_memif0,role=server,socket=$sock" \
	--ip 198.18.0.7 ibv_devinfo -l >"$tmp/out" 2>&1 ||
	fail "ibv_devinfo -l: exit status $?"
expect '^[[:space:]]*dpdat0$' "dpdat0 in the list"
# the device and its port
"${SAN_DAT[@]}" timeout 60 "$run" --dev "net_memif0,role=server,socket=$sock" \
	--ip 198.18.0.7 ibv_devinfo -v -d dpdat0 >"$tmp/out" 2>&1 ||
	fail "ibv_devinfo -v -d dpdat0: exit status $?"
expect 'hca_id:[[:space:]]+dpdat0' "hca_id"
expect 'fw_ver:[[:space:]]+dpdat ' "firmware version"
expect 'phys_port_cnt:[[:space:]]+1' "one port"
expect 'link_layer:[[:space:]]+Ethernet' "Ethernet link layer"
expect 'active_mtu:[[:space:]]+4096' "active MTU 4096 (memif's 4200)"
expect 'max_qp_rd_atom:[[:space:]]+16' "16 READs a QP"
expect 'GID\[ *0\]:[[:space:]]+::ffff:198\.18\.0\.7, RoCE v2' \
	"GID 0 = ::ffff:198.18.0.7, RoCE v2"
cp "$tmp/out" "$tmp/devinfo"
# what dpdat0 does not do: a clear error naming it, the program's own exit
if command -v ibv_ud_pingpong >/dev/null; then
	# it leaves its device list unfreed when it gives up (its own error
	# path): no leak check for it
	san=("${SAN_DAT[@]}")
	[ ${#san[@]} -eq 0 ] ||
		san+=("ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0")
	"${san[@]}" timeout 60 "$run" \
		--dev "net_memif0,role=server,socket=$sock" \
		ibv_ud_pingpong -d dpdat0 -g 0 >"$tmp/out" 2>&1
	st=$?
	[ "$st" -eq 1 ] || fail "ibv_ud_pingpong: exit status $st, not 1"
	expect 'ibv_create_qp of a QP type other than RC on dpdat0: not supported' \
		"refusal naming ibv_create_qp"
fi
echo "ibv_devinfo:"
grep -E 'hca_id|fw_ver|node_guid|link_layer|active_mtu|state|GID' "$tmp/devinfo"
san_check "$tmp" >/dev/null || fail "a sanitizer report"
echo "PASS"
