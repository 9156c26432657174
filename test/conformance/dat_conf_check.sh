#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# devtools/dat-conf.sh on a scratch registry file (never /etc/dat.conf):
# install adds exactly the two dpdat entries and keeps every other line,
# again replaces them instead of adding more, the registry (libdat2) loads
# the plug-in from the file it wrote (the DAT memory test runs through it),
# bad arguments change nothing, remove gives the original file back.
# Usage: dat_conf_check.sh <dat-conf.sh> <libdapl-dpdat.so> <test_mem>
# In a sanitizer build dapltest runs with the runtimes preloaded, and any
# sanitizer report fails the test (test/sanitizer.sh).
set -u
. "$(dirname "$0")/../sanitizer.sh"
tool=$1
lib=$2
test_mem=$3
dir=$(mktemp -d /tmp/dpdat-datconf-XXXXXX)
trap 'rm -rf "$dir"' EXIT
san_init "$dir"
conf=$dir/dat.conf
status=0

fail() {
	echo "FAILED: $*"
	status=1
}

# expect <status> <command...>: run it, its output in $dir/out
expect() {
	local want=$1 got
	shift
	"$@" >"$dir/out" 2>&1
	got=$?
	[ "$got" -eq "$want" ] ||
		fail "$* -> exit $got, want $want: $(tail -2 "$dir/out")"
}

cat >"$conf" <<'EOF'
# a site's registry
ofa-v2-mlx4_0-1 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "mlx4_0 1" ""

OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
EOF
chmod 0640 "$conf"
cp "$conf" "$dir/orig"

expect 0 "$tool" install --conf "$conf" --lib "$lib" --socket "$dir/s.sock"
[ "$(grep -c '^dpdat[01] ' "$conf")" -eq 2 ] || fail "install: not two entries"
grep -v '^dpdat[01] ' "$conf" | cmp -s - "$dir/orig" ||
	fail "install changed other lines"
cmp -s "$conf.bak" "$dir/orig" || fail "install: no .bak of the original"
[ "$(stat -c %a "$conf")" = 640 ] || fail "install: mode not kept"
grep -q "^dpdat0 u2.0 nonthreadsafe default $lib dpdat.0.1 \"device=net_memif0,role=server,socket=$dir/s.sock ipv4=198.18.0.1 mtu=4200\" \"\"$" "$conf" ||
	fail "install: dpdat0 line wrong: $(grep '^dpdat0' "$conf")"
grep -q '^dpdat1 .*role=client.*ipv4=198.18.0.2' "$conf" ||
	fail "install: dpdat1 line wrong"

# through a symbolic link: the file it names changes, the link stays
ln -s "$conf" "$dir/link.conf"
expect 0 "$tool" install --conf "$dir/link.conf" --lib "$lib" --mtu 4000
[ -L "$dir/link.conf" ] || fail "install through a link replaced the link"
[ "$(grep -c 'mtu=4000' "$conf")" -eq 2 ] || fail "install through a link: file not changed"

# again, with another MTU: replaced, not added
expect 0 "$tool" install --conf "$conf" --lib "$lib" --mtu 9000
[ "$(grep -c '^dpdat[01] ' "$conf")" -eq 2 ] || fail "reinstall: not two entries"
[ "$(grep -c 'mtu=9000' "$conf")" -eq 2 ] || fail "reinstall: old entries kept"
grep -q '2 old entries replaced' "$dir/out" || fail "reinstall: not said"
expect 0 "$tool" show --conf "$conf"
[ "$(grep -c '^dpdat[01] ' "$dir/out")" -eq 2 ] || fail "show: not two entries"

# the registry loads the plug-in from it (the test picks its own socket)
expect 0 "$tool" install --conf "$conf" --lib "$lib" --socket "$dir/s.sock"
if ! "$test_mem" "$conf" >"$dir/mem.log" 2>&1; then
	fail "the DAT memory test through the installed file failed"
	grep -E 'FAILED|failed' "$dir/mem.log" | head -5
fi
# and an IA opened with the ia_params written there (device, role, socket,
# address, MTU): dapltest's limit test on dpdat0, a memif server
if command -v dapltest >/dev/null; then
	if ! env -u DPDAT_DAT_PARAMS DAT_OVERRIDE="$conf" DPDAT_LOG=info \
		timeout 120 "${SAN_DAT[@]}" dapltest -T L -D dpdat0 -w 2 -m 10 \
		>"$dir/limit.log" 2>&1 ||
	   grep -v 'mp action callback' "$dir/limit.log" |
		grep -qi -e error -e fail; then
		fail "dapltest -T L through the installed entry"
		tail -5 "$dir/limit.log"
	fi
	# the port came up as the entry says
	grep -q 'up, .* 198\.18\.0\.1 mtu 4200' "$dir/limit.log" ||
		fail "dapltest -T L: no port 198.18.0.1 mtu 4200 in its log"
else
	echo "note: no dapltest: the entry's ia_params are not opened"
fi

# a real NIC: one entry, dpdat0, with the device, address and CPU given;
# a PCI address joins the EAL allow-list
expect 0 "$tool" install --conf "$dir/nic.conf" --lib "$lib" \
	--device net_af_xdp0,iface=eth1 --cpu 1
grep -q "^dpdat0 u2.0 nonthreadsafe default $lib dpdat.0.1 \"device=net_af_xdp0,iface=eth1 cpu=1\" \"\"$" \
	"$dir/nic.conf" || fail "install --device: $(cat "$dir/nic.conf")"
[ "$(grep -c '^dpdat' "$dir/nic.conf")" -eq 1 ] || fail "install --device: not one entry"
expect 0 "$tool" install --conf "$dir/nic.conf" --lib "$lib" \
	--device 0000:3b:00.0 --ipv4 198.18.7.1 --mtu 4200
grep -q '"device=0000:3b:00.0 ipv4=198.18.7.1 mtu=4200 eal=-a0000:3b:00.0"' \
	"$dir/nic.conf" || fail "install --device PCI: $(cat "$dir/nic.conf")"

# bad arguments: exit 2, the file as it was
cp "$conf" "$dir/before"
expect 2 "$tool" install --conf "$conf" --lib "$lib" --ipv4 198.18.0.9
expect 2 "$tool" install --conf "$conf" --lib "$lib" --device net_af_xdp0,iface=eth1 --ipv4 1.2.3
expect 2 "$tool" install --conf "$conf" --lib "$lib" --device net_af_xdp0,iface=eth1 --cpu x
expect 2 "$tool" install --conf "$conf" --lib "$lib" --device "a b"
expect 2 "$tool" install --conf "$conf" --lib "$dir/none.so"
expect 2 "$tool" install --conf "$conf" --lib "$lib" --mtu abc
expect 2 "$tool" install --conf "$conf" --lib "$lib" --mtu 100
expect 2 "$tool" install --conf "$conf" --lib "$lib" --socket "/tmp/a b"
expect 2 "$tool" install --conf "$conf" --lib "$lib" --socket "/tmp/a,role=x"
expect 2 "$tool" install --conf "$conf" --bogus 1
expect 2 "$tool" install --conf
expect 2 "$tool" frobnicate
expect 2 "$tool"
cmp -s "$conf" "$dir/before" || fail "a refused call changed the file"
expect 1 "$tool" install --conf "$dir/no/such/dir/dat.conf" --lib "$lib"
expect 1 "$tool" show --conf "$dir/missing.conf"

# remove: the original back; again: nothing to do
expect 0 "$tool" remove --conf "$conf"
cmp -s "$conf" "$dir/orig" || fail "remove: not the original file"
expect 0 "$tool" remove --conf "$conf"
grep -q 'nothing to do' "$dir/out" || fail "second remove: not said"
cmp -s "$conf" "$dir/orig" || fail "second remove changed the file"

# a file that does not exist yet is created, readable by all
expect 0 "$tool" install --conf "$dir/new.conf" --lib "$lib"
[ "$(stat -c %a "$dir/new.conf")" = 644 ] || fail "new file: mode not 644"
[ "$(wc -l <"$dir/new.conf")" -eq 2 ] || fail "new file: not two lines"

san_check "$dir" || fail "a sanitizer report"
[ $status -eq 0 ] && echo "dat-conf: install, reinstall, show, link, registry load, ia_params, a real NIC's entry, 15 refusals, remove: passed"
exit $status
