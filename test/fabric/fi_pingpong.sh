#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Debian's unmodified fi_pingpong (libfabric-bin) between two processes on
# the dpdat provider:
#   fi_pingpong.sh LINK EP PROVIDER_DIR [fi_pingpong options...]
# LINK: memif (the two processes over a memif pair), af_xdp or af_packet
# (each on its namespace's veth0, beside the kernel). EP: msg (provider
# dpdat) or rdm (dpdat;ofi_rxm). The two processes run in two network
# namespaces this script makes (198.18.0.1 and .2, test/integration/
# netns.sh) and removes on every exit: fi_pingpong exchanges its addresses
# over a TCP socket of the kernel's, which the veth carries; over memif
# dpdat's frames go through the memif pair, the kernel's through the veth.
# Checked: both exit 0, and every size the client ran was acknowledged
# (#sent = #ack; -c makes the receivers check the data).
# In a sanitizer build the uninstrumented fi_pingpong gets the sanitized
# provider with the runtimes preloaded (SAN_PRELOAD, test/sanitizer.sh);
# a report fails the test.
set -u
here=$(dirname "$0")
. "$here/../integration/netns.sh"
. "$here/../sanitizer.sh"
link=$1 ep=$2 provdir=$3; shift 3
case $ep in
msg) prov=dpdat ;;
rdm) prov="dpdat;ofi_rxm" ;;
*) echo "fi_pingpong.sh: EP is msg or rdm" >&2; exit 2 ;;
esac
command -v fi_pingpong >/dev/null ||
	{ echo "SKIP: no fi_pingpong (libfabric-bin)"; exit 77; }
netns_up 1500
dir=$(mktemp -d /tmp/dpdat-fabric-XXXXXX)
trap 'netns_down; rm -rf "$dir"' EXIT
san_init "$dir"
case $link in
memif)
	sock=$dir/memif.sock
	# a socket in the file system: an abstract one (DPDK's default) is
	# the namespace's own
	dev_s="net_memif0,role=server,socket=$sock,socket-abstract=no"
	dev_c="net_memif0,role=client,socket=$sock,socket-abstract=no"
	ip_s=198.18.0.1 ip_c=198.18.0.2
	;;
af_xdp|af_packet)
	dev_s=$(netns_dev "$link") dev_c=$dev_s
	ip_s=auto ip_c=auto
	;;
*) echo "fi_pingpong.sh: LINK is memif, af_xdp or af_packet" >&2; exit 2 ;;
esac
limit=${FABRIC_TIMEOUT:-150}
echo "fabric: fi_pingpong -p \"$prov\" -e $ep $*, $link," \
	"$NS_A (198.18.0.1) <-> $NS_B (198.18.0.2)"
ip netns exec "$NS_A" env FI_PROVIDER_PATH="$provdir" \
	FI_DPDAT_DEVICE="$dev_s" FI_DPDAT_IPV4="$ip_s" \
	timeout -k 2 "$limit" "${SAN_DAT[@]}" fi_pingpong -p "$prov" -e "$ep" \
	"$@" > "$dir/server.log" 2>&1 &
spid=$!
# the server listens for the client's control connection
for _ in $(seq 100); do
	ip netns exec "$NS_A" ss -ltn 2>/dev/null | grep -q ':47592 ' && break
	sleep 0.1
done
ip netns exec "$NS_B" env FI_PROVIDER_PATH="$provdir" \
	FI_DPDAT_DEVICE="$dev_c" FI_DPDAT_IPV4="$ip_c" \
	timeout -k 2 "$limit" "${SAN_DAT[@]}" fi_pingpong -p "$prov" -e "$ep" \
	"$@" 198.18.0.1 > "$dir/client.log" 2>&1
crc=$?
wait "$spid"; src=$?
sed 's/^/[server] /' "$dir/server.log"
sed 's/^/[client] /' "$dir/client.log"
echo "server exit $src, client exit $crc"
san_check "$dir" || exit 1
[ "$src" -eq 0 ] && [ "$crc" -eq 0 ] || exit 1
# the table: bytes #sent #ack ...; every row acknowledged in full
rows=$(awk '$1 ~ /^[0-9]+[kmg]?$/ && NF >= 8' "$dir/client.log")
[ -n "$rows" ] || { echo "fabric: no results from the client"; exit 1; }
bad=$(awk '$1 ~ /^[0-9]+[kmg]?$/ && NF >= 8 && $3 != "=" $2' \
	"$dir/client.log")
[ -z "$bad" ] || { echo "fabric: not all acknowledged: $bad"; exit 1; }
echo "fabric: $(echo "$rows" | wc -l) sizes, all acknowledged"
