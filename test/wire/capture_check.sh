#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Capture the traffic of a two-process RC run (one pcapng file per process)
# and check it from the outside: tshark decodes every frame as RoCEv2
# (InfiniBand over UDP 4791) with no malformed packet, and every ICRC
# verifies with an independent implementation (icrc_check.py).
# Usage: capture_check.sh <run2.sh> <rc_test> <icrc_check.py>
set -u
run2=$1; rc_test=$2; check=$3
dir=$(mktemp -d /tmp/dpdat-cap-XXXXXX)
trap 'rm -rf "$dir"' EXIT
command -v tshark >/dev/null || { echo "tshark missing: run devtools/setup.sh"; exit 1; }
DPDAT_PCAP="$dir/cap-%p.pcapng" "$run2" 60 "$rc_test" --sizes 1,4095,65536 \
	--fault 'rx:drop=0.02;seed=9' || exit 1
status=0
for f in "$dir"/cap-*.pcapng; do
	frames=$(tshark -r "$f" 2>/dev/null | wc -l)
	roce=$(tshark -r "$f" -Y 'infiniband' 2>/dev/null | wc -l)
	arp=$(tshark -r "$f" -Y 'arp' 2>/dev/null | wc -l)
	bad=$(tshark -r "$f" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
	echo "$(basename "$f"): $frames frames, $roce RoCEv2, $arp ARP, $bad malformed"
	tshark -r "$f" -T fields -e infiniband.bth.opcode 2>/dev/null | sort -n | uniq -c |
		awk '{ printf "  opcode %s: %s\n", $2, $1 }'
	if [ "$frames" -eq 0 ] || [ "$bad" -ne 0 ] || [ $((roce + arp)) -ne "$frames" ]; then
		status=1
	fi
done
/usr/bin/python3 "$check" "$dir"/cap-*.pcapng || status=1
exit $status
