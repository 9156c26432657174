#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Debian's fi_info (libfabric-bin) on the dpdat provider:
#   fi_info_check.sh PROVIDER_DIR
# fi_info -p dpdat lists the provider (FI_EP_MSG) and ofi_rxm over it
# (FI_EP_RDM), with the attributes the guide promises; fi_info -e lists
# its FI_DPDAT_* settings; a bad setting is refused with its reason. The
# device is a net_ring loopback of the process's own (no link needed).
set -u
dir=$1
. "$(dirname "$0")/../sanitizer.sh"
tmp=$(mktemp -d /tmp/dpdat-fiinfo-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
san_init "$tmp"
command -v fi_info >/dev/null || { echo "SKIP: no fi_info (libfabric-bin)"; exit 77; }
export FI_PROVIDER_PATH=$dir FI_DPDAT_DEVICE=net_ring0 FI_DPDAT_IPV4=198.18.0.1
fail=0
out=$(timeout 60 "${SAN_DAT[@]}" fi_info -p dpdat -v 2>&1)
echo "$out" | grep -a -E '^ *(type|protocol|mr_mode|addr_format|prov_name|name|max_msg_size|cq_data_size|threading|data_progress):' |
	sort | uniq -c
want() {	# want LABEL REGEX: the output has a line matching REGEX
	if echo "$out" | grep -a -q -E "$2"; then
		echo "ok: $1"
	else
		echo "MISSING: $1 ($2)"
		fail=1
	fi
}
want "the provider" '^ *prov_name: dpdat$'
want "MSG endpoints" '^ *type: FI_EP_MSG$'
want "RoCEv2 RC with rdma_cm's CM" '^ *protocol: FI_PROTO_RDMA_CM_IB_RC$'
want "ofi_rxm over it" '^ *prov_name: dpdat;ofi_rxm$'
want "RDM endpoints (rxm)" '^ *type: FI_EP_RDM$'
want "verbs' MR modes" 'mr_mode: \[ FI_MR_LOCAL, FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY \]'
want "IPv4 addresses" '^ *addr_format: FI_SOCKADDR_IN$'
want "the port's address" 'src_addr: fi_sockaddr_in://198\.18\.0\.1:0'
want "the device as the domain" '^ *name: net_ring0$'
want "remote CQ data" '^ *mode: \[ FI_RX_CQ_DATA \]$'
want "4-byte CQ data" '^ *cq_data_size: 4$'
env=$(timeout 60 "${SAN_DAT[@]}" fi_info -e 2>&1 | tr -d '\0')
for v in DEVICE IPV4 MTU EAL CPU MEM_MB PROGRESS TICK_US; do
	if echo "$env" | grep -a -q "FI_DPDAT_$v:"; then
		echo "ok: fi_info -e lists FI_DPDAT_$v"
	else
		echo "MISSING: FI_DPDAT_$v in fi_info -e"
		fail=1
	fi
done
# a bad setting: no provider, and the reason in the log
bad=$(FI_DPDAT_PROGRESS=sometimes FI_LOG_LEVEL=warn timeout 60 \
	"${SAN_DAT[@]}" fi_info -p dpdat 2>&1)
if echo "$bad" | grep -a -q 'FI_DPDAT_PROGRESS "sometimes"' &&
   ! echo "$bad" | grep -a -q 'type: FI_EP_MSG'; then
	echo "ok: FI_DPDAT_PROGRESS=sometimes refused with its reason"
else
	echo "MISSING: the refusal of FI_DPDAT_PROGRESS=sometimes:"
	echo "$bad" | tail -5
	fail=1
fi
san_check "$tmp" || fail=1
exit $fail
