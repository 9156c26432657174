#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# dpdat's RDMA atomics as another implementation reads them: capture a
# short soak (cm_test soak: each connection ends with a fetch-and-add of 1
# on the server's counter), then tshark's InfiniBand dissector must decode
# every FetchAdd request (opcode 20) with its AtomicETH (add 1) and every
# ATOMIC ACKNOWLEDGE (opcode 18) with its AtomicAckETH, the values fetched
# counting up from 0, nothing malformed, and every ICRC must verify
# (icrc_check.py).
# Usage: atomic_capture_check.sh <run2.sh> <cm_test> <icrc_check.py>
set -u
run2=$1; cm_test=$2; check=$3
dir=$(mktemp -d /tmp/dpdat-atomcap-XXXXXX)
trap 'rm -rf "$dir"' EXIT
command -v tshark >/dev/null || { echo "tshark missing: run devtools/setup.sh"; exit 1; }
DPDAT_PCAP="$dir/cap-%p.pcapng" "$run2" 60 "$cm_test" soak 3 >"$dir/run.log" 2>&1 ||
	{ tail -20 "$dir/run.log"; exit 1; }
status=0 reqs=0 acks=0
for f in "$dir"/cap-*.pcapng; do
	bad=$(tshark -r "$f" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
	# requests seen by this side, and what they add
	r=$(tshark -r "$f" -Y 'infiniband.bth.opcode == 20' -T fields \
		-e infiniband.atomiceth.swapdt 2>/dev/null)
	n_r=$(printf '%s\n' "$r" | grep -c .)
	if [ "$n_r" -gt 0 ] && printf '%s\n' "$r" | grep -qv '^1$'; then
		echo "$(basename "$f"): a FetchAdd does not add 1"; status=1
	fi
	# answers seen by this side: the values fetched, in order (a
	# duplicate answer repeats a value, never skips one)
	a=$(tshark -r "$f" -Y 'infiniband.bth.opcode == 18' -T fields \
		-e infiniband.atomicacketh.origremdt 2>/dev/null)
	n_a=$(printf '%s\n' "$a" | grep -c .)
	if [ "$n_a" -gt 0 ] && ! printf '%s\n' "$a" | awk '
		$1 < want - 1 || $1 > want { exit 1 } $1 == want { want++ }
		END { exit want == 0 }'; then
		echo "$(basename "$f"): the values fetched do not count up from 0"
		status=1
	fi
	echo "$(basename "$f"): $n_r FetchAdd, $n_a ATOMIC ACKNOWLEDGE, $bad malformed"
	[ "$bad" -eq 0 ] || status=1
	reqs=$((reqs + n_r)) acks=$((acks + n_a))
done
if [ "$reqs" -eq 0 ] || [ "$acks" -eq 0 ]; then
	echo "no atomics captured"; status=1
fi
/usr/bin/python3 "$check" "$dir"/cap-*.pcapng || status=1
exit $status
