#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Capture a connect to a service nobody listens on (REJ) and a connect,
# accept, disconnect; tshark must decode the CM MADs as InfiniBand CM
# (REQ, REJ, REP, RTU, DREQ, DREP) with no malformed packet, and the ICRC of
# every frame must verify independently; every REQ to an IP CM service must
# carry rdma_cm's IP header, checked independently (cm_iphdr_check.py).
# Usage: cm_capture_check.sh <run2.sh> <cm_test> <icrc_check.py>
#        <cm_iphdr_check.py>
set -u
run2=$1; cm_test=$2; check=$3; iphdr=$4
dir=$(mktemp -d /tmp/dpdat-cmcap-XXXXXX)
trap 'rm -rf "$dir"' EXIT
DPDAT_PCAP="$dir/cap-%p.pcapng" "$run2" 60 "$cm_test" nolistener || exit 1
status=0
for f in "$dir"/cap-*.pcapng; do
	out=$(tshark -r "$f" 2>/dev/null)
	bad=$(tshark -r "$f" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
	echo "$(basename "$f"): $(echo "$out" | wc -l) frames, $bad malformed"
	for m in ConnectRequest ConnectReject ConnectReply ReadyToUse DisconnectRequest DisconnectReply; do
		n=$(echo "$out" | grep -c "CM: $m")
		echo "  CM $m: $n"
		[ "$n" -gt 0 ] || status=1
	done
	[ "$bad" -eq 0 ] || status=1
done
/usr/bin/python3 "$check" "$dir"/cap-*.pcapng || status=1
/usr/bin/python3 "$iphdr" --pdata "request private data" "$dir"/cap-*.pcapng ||
	status=1
exit $status
