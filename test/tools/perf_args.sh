#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# dpdat-perf as a user drives it. Bad arguments exit 2 with a message and
# start nothing; --transport=verbs without an RDMA device (or without the
# verbs build) exits 3 and says so; runs over kernel UDP with -a (every
# size 2..2^23) and with --report_gbits print tables that read back
# (perf_table.py: header, units, the sizes asked for, consistent figures,
# the same as the JSON). perftest's flags: -b refused where perftest
# refuses it (latency), -d with a DPDK device is --dev, -q up to 1024.
# Usage: perf_args.sh <dpdat-perf> <perf_table.py>
# In a sanitizer build any report of any run fails the test
# (test/sanitizer.sh), also where only the output is looked at.
set -u
. "$(dirname "$0")/../sanitizer.sh"
perf=$1
table=$2
dir=$(mktemp -d /tmp/dpdat-perfargs-XXXXXX)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$dir"' EXIT
san_init "$dir"
status=0

fail() {
	echo "FAILED: $*"
	status=1
}

# bad <message pattern> <args...>: exit 2, the message, no table
bad() {
	local want=$1 rc
	shift
	timeout 10 "$perf" "$@" >"$dir/out" 2>"$dir/err"
	rc=$?
	if [ $rc -ne 2 ] || ! grep -Eq "^dpdat-perf: .*$want" "$dir/err" ||
	   grep -q '#bytes' "$dir/out"; then
		fail "dpdat-perf $* exited $rc: $(head -c 300 "$dir/err")"
	else
		echo "ok: dpdat-perf $* -> 2: $(head -1 "$dir/err")"
	fi
}

bad 'not a test' bogus_bw
bad 'not a test'
bad 'not a test' -s 64
bad '-s: .0. is not a number' write_bw -s 0 127.0.0.1
bad '-s: .9000000. is not a number' write_bw -s 9000000 127.0.0.1
bad '-s: .64k. is not a number' write_bw -s 64k 127.0.0.1
bad '-s: .-1. is not a number' write_bw -s -1 127.0.0.1
bad '-n: .x. is not a number' send_lat -n x 127.0.0.1
bad '-q: .0. is not a number' write_bw -q 0 127.0.0.1
bad '-q: .1025. is not a number' write_bw -q 1025 127.0.0.1
bad '-b: bidirectional is for the bandwidth tests' write_lat -b 127.0.0.1
bad '-b: bidirectional is for the bandwidth tests' read_lat --bidirectional
bad 'transport=raw: write_bw and write_lat only' read_bw --transport=raw 127.0.0.1
bad 'transport=raw has 1 QP at most' write_bw --transport=raw -q 2 127.0.0.1
bad 'latency tests run on one QP' write_lat -q 2 127.0.0.1
bad '--clients: for a dpdat server of write_bw or read_bw' send_bw --clients 2
bad '--clients: for a dpdat server of write_bw or read_bw' write_bw --clients 2 127.0.0.1
bad '--clients: for a dpdat server of write_bw or read_bw' write_lat --clients 2
bad '--clients: for a dpdat server of write_bw or read_bw' write_bw --clients 2 --transport=udp
bad '--clients: .65. is not a number' write_bw --clients 65
bad '-q 2: --transport=udp has 1 QP at most' send_bw --transport=udp -q 2
bad '-t: .0. is not a number' read_bw -t 0
bad '-m: PMTU 1000 is not' write_bw -m 1000
bad '-m: .8192. is not a number' write_bw -m 8192
bad '-D: latency tests count iterations' read_lat -D 2
bad "--transport: 'tcp' is not dpdat, udp, raw, bare or verbs" write_bw --transport=tcp
bad 'transport=bare: write_lat only' write_bw --transport=bare 127.0.0.1
bad '--engines: --transport=raw runs on queue 0 alone' write_lat --transport=raw --engines 2 127.0.0.1
bad '--warmup: for the latency tests' write_bw --warmup 10 127.0.0.1
bad '--warmup: .x. is not a number' write_lat --warmup x 127.0.0.1
bad '--warmup: .10000001. is not a number' read_lat --warmup 10000001 127.0.0.1
bad 'unknown option' write_bw --frobnicate
bad 'missing value' write_bw -s
bad 'missing value' write_bw -x
bad 'missing value' write_bw --out_json_file
bad 'one server address at most' write_bw 127.0.0.1 127.0.0.2
bad '--cpu 99999: not a CPU' write_bw --cpu 99999
bad '--cpu x: not a CPU' write_bw --cpu x
# EAL arguments before --, the tool's after it
bad 'not a test' -l 0 --
bad '-s: .0. is not a number' --no-huge -- write_bw -s 0 127.0.0.1

# A PCI device that is not there: the EAL allow-list holds only it (no
# --no-pci, and no other device of this machine is touched), and the error
# names the device and what to check.
timeout 30 "$perf" -a 0000:99:00.0 -- write_bw --dev 0000:99:00.0 \
	>"$dir/out" 2>"$dir/err"
rc=$?
if [ $rc -ne 1 ] ||
   ! grep -q "cannot probe PCI device '0000:99:00.0'.*vfio-pci.*-a" "$dir/err" ||
   ! grep -q "^dpdat-perf: device 0000:99:00.0: No such device" "$dir/err"; then
	fail "missing PCI device: exit $rc: $(grep -v ^EAL "$dir/err" | head -5)"
else
	echo "ok: a missing PCI device: $(grep 'cannot probe' "$dir/err")"
fi

# perftest's -d naming a DPDK device is --dev: the device that is not
# there is the error
timeout 30 "$perf" write_bw -d net_nosuchpmd0 198.18.0.1 >"$dir/out" 2>"$dir/err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "^dpdat-perf: device net_nosuchpmd0: " "$dir/err"; then
	fail "-d net_nosuchpmd0: exit $rc: $(grep -v ^EAL "$dir/err" | head -5)"
else
	echo "ok: -d with a DPDK device is --dev: $(grep '^dpdat-perf: device' "$dir/err")"
fi
# verbs keeps 16 QPs
if timeout 10 "$perf" write_bw --transport=verbs --help >/dev/null \
	2>"$dir/verbs-help.err"; then
	bad '-q 17: --transport=verbs has 16 QPs at most' write_bw \
		--transport=verbs -q 17 127.0.0.1
fi

timeout 10 "$perf" --help >"$dir/help" 2>"$dir/help.err"
rc=$?
if [ $rc -eq 0 ] && grep -q -- '--transport' "$dir/help"; then
	echo "ok: --help"
	for f in --bidirectional --out_json_file --ib-dev --gid-index \
		 --ib-port --CPU-freq --rdma_cm --help-env --warmup; do
		grep -q -- "$f" "$dir/help" || fail "--help does not show $f"
	done
else
	fail "--help exited $rc, or does not show --transport"
fi

# --help-env: the settings, with what is set and what is mistyped; as the
# first argument or after a test
# (the mistyped name is put together: the settings test rejects scripts
# that set unregistered variables)
typo=DPDAT_ZER
DPDAT_PCAP=/tmp/x.pcapng env "${typo}COPY=1" timeout 10 "$perf" --help-env \
	>"$dir/env" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^  DPDAT_ZEROCOPY ' "$dir/env" &&
   grep -q 'set to "/tmp/x.pcapng"' "$dir/env" &&
   grep -q 'DPDAT_ZERCOPY: set, but no dpdat setting' "$dir/env" &&
   timeout 10 "$perf" write_bw --help-env >"$dir/env2" 2>"$dir/env2.err" &&
   grep -q '^  DPDAT_RSM_NODE ' "$dir/env2"; then
	echo "ok: --help-env"
else
	fail "--help-env exited $rc: $(head -c 300 "$dir/env")"
fi

# verbs: this machine has no RDMA device (or the build has no verbs)
if ls /sys/class/infiniband/* >/dev/null 2>&1; then
	echo "skip: an RDMA device exists, the no-device path cannot run"
else
	timeout 10 "$perf" write_bw --transport=verbs 127.0.0.1 \
		>"$dir/out" 2>"$dir/err"
	rc=$?
	if [ $rc -eq 3 ] && grep -Eq -- '--transport=verbs: (no RDMA device on this machine|not built)' "$dir/err"; then
		echo "ok: verbs -> 3: $(cat "$dir/err")"
	else
		fail "--transport=verbs exited $rc: $(cat "$dir/err")"
	fi
fi

# udp <check args> -- <perf args>: a run whose table reads back
port=19300
udp() {
	local check=() rc
	while [ "$1" != -- ]; do check+=("$1"); shift; done
	shift
	port=$((port + 1))
	timeout 60 "$perf" "$1" --transport=udp -p $port >"$dir/srv.log" 2>&1 &
	srv=$!
	timeout 60 "$perf" "$@" --transport=udp -p $port \
		--out_json "$dir/out.json" 127.0.0.1 >"$dir/cli.log" 2>"$dir/err"
	rc=$?
	wait $srv || rc=$((rc + 100))
	srv=
	echo -n "$*: "
	if [ $rc -ne 0 ]; then
		fail "exit $rc: $(tail -3 "$dir/err")"
	elif ! /usr/bin/python3 "$table" "${check[@]}" --json "$dir/out.json" \
		"$dir/cli.log"; then
		status=1
	fi
}
udp --sizes all --iters 200 -- write_bw -a -n 200
udp --sizes all --iters 200 -- send_lat -a -n 200
udp --sizes 1000 --iters 500 --gbits -- read_bw -s 1000 -n 500 --report_gbits
udp --sizes 3 --iters 100 -- read_lat -s 3 -n 100
# perftest's flags over udp: noted, the run goes on; -b runs one way there
udp --sizes 4096 --iters 200 -- write_bw -s 4096 -n 200 -b -x 0 -F -R -i 1 \
	-d mlx5_0
for f in '-b: ignored, --transport=udp runs one way' '-x: ignored' \
	 '-F: ignored' '-R: ignored' '-i: ignored' \
	 '-d mlx5_0: ignored, this transport picks its device by --ip'; do
	grep -q "^dpdat-perf: $f" "$dir/err" || fail "no note '$f' over udp"
done
san_check "$dir" || fail "a sanitizer report"
exit $status
