#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Prepare a Debian 12 machine for dpdat: install the packages it needs (by
# name, from Debian) and, as root, reserve hugepages and mount hugetlbfs.
# Idempotent: a second run changes nothing and says so. Without root it only
# checks, and dpdat runs in --no-huge mode.
#
# Environment: DPDAT_HUGEPAGES  2 MiB pages to reserve (default 1024 = 2 GiB,
#                               0 to leave the reservation alone)
set -euo pipefail

PACKAGES=(
	build-essential pkg-config meson ninja-build
	dpdk dpdk-dev libdpdk-dev
	libcunit1-dev libisal-dev zlib1g-dev
	libdapl-dev dapl2-utils
	libc6-dbg
	clang llvm libclang-rt-14-dev
	libmnl-dev libbpf-dev linux-libc-dev
	iproute2 procps iputils-ping iperf3
	tshark python3-scapy
	libibverbs-dev librdmacm-dev ibverbs-utils perftest rdmacm-utils
	libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev
	sockperf gnuplot-nox
)

log() { printf 'setup: %s\n' "$*"; }

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	log "all ${#PACKAGES[@]} packages present"
elif [ "$(id -u)" -eq 0 ]; then
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	log "installed ${#missing[@]} packages"
else
	log "missing packages: ${missing[*]}"
	log "run as root (or: sudo apt-get install ${missing[*]})"
	exit 1
fi

want=${DPDAT_HUGEPAGES:-1024}
hp=/sys/kernel/mm/hugepages/hugepages-2048kB
if [ "$(id -u)" -ne 0 ]; then
	log "not root: hugepages left as they are; dpdat falls back to --no-huge"
elif [ ! -d "$hp" ]; then
	log "no 2 MiB hugepage support in this kernel: dpdat will use --no-huge"
elif [ "$want" -eq 0 ]; then
	log "DPDAT_HUGEPAGES=0: hugepage reservation left alone"
else
	have=$(cat "$hp/nr_hugepages")
	if [ "$have" -ge "$want" ]; then
		log "hugepages: $have x 2 MiB reserved already (wanted $want)"
	elif echo "$want" > "$hp/nr_hugepages" 2>/dev/null; then
		got=$(cat "$hp/nr_hugepages")
		log "hugepages: reserved $got x 2 MiB (was $have, wanted $want)"
	else
		log "hugepages: cannot write $hp/nr_hugepages; dpdat will use --no-huge"
	fi
	if grep -qs ' hugetlbfs ' /proc/mounts; then
		log "hugetlbfs: mounted at $(awk '$3 == "hugetlbfs" {print $2; exit}' /proc/mounts)"
	elif mkdir -p /dev/hugepages && mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages 2>/dev/null; then
		log "hugetlbfs: mounted at /dev/hugepages"
	else
		log "hugetlbfs: cannot mount; dpdat will use --no-huge"
	fi
	log "free hugepages: $(cat "$hp/free_hugepages") x 2 MiB"
fi
