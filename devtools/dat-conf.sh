#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Add dpdat's two IA entries to a DAT registry file (by default the
# system's /etc/dat.conf), take them out again, or show them. The build
# never touches /etc/dat.conf: this script is the explicit request.
#
# Usage: devtools/dat-conf.sh install|remove|show [options]
#   --conf FILE     the registry file (default /etc/dat.conf)
#   --lib PATH      the plug-in (default: the installed libdapl-dpdat.so,
#                   else build/drivers/dat/libdapl-dpdat.so)
#   --socket PATH   the memif socket of the pair (default /tmp/dpdat-dat.sock)
#   --mtu N         the port MTU in ia_params (default 4200; with --device:
#                   the interface's)
#   --device ARGS   one entry, dpdat0, on a real NIC instead of the memif
#                   pair: net_af_xdp0,iface=eth1, net_af_packet0,iface=eth1
#                   or a PCI address (its EAL allow-list entry is added)
#   --ipv4 ADDR     with --device: our address (default: the interface's)
#   --cpu N         with --device: pin dpdat's engine thread to CPU N
#
# install replaces any line whose IA name is dpdat0 or dpdat1 and keeps
# every other line as it was; the previous file is kept as FILE.bak. The
# new file is written beside the old one, synced, given its mode and owner,
# and renamed over it (over the file a symbolic link names, not the link),
# so a registry reading it concurrently sees the old or the new file, never
# half of one. Exit status: 0 done, 1 the file could not be written, 2 bad
# usage or arguments.
set -euo pipefail

usage() {
	sed -n '9,21p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

die() {	# status message
	echo "dat-conf: $2" >&2
	exit "$1"
}

tmp=
trap 'rm -f "$tmp"' EXIT
[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in install|remove|show) ;; -h|--help) usage ;;
	*) die 2 "unknown command '$cmd' (install, remove or show)" ;; esac

conf=/etc/dat.conf
lib=
sock=/tmp/dpdat-dat.sock
mtu=
device=
ipv4=
cpu=
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die 2 "$1 needs a value"
	case $1 in
	--conf) conf=$2 ;;
	--lib) lib=$2 ;;
	--socket) sock=$2 ;;
	--mtu) mtu=$2 ;;
	--device) device=$2 ;;
	--ipv4) ipv4=$2 ;;
	--cpu) cpu=$2 ;;
	*) die 2 "unknown option '$1'" ;;
	esac
	shift 2
done
# a symbolic link stays one: the file it names is the one replaced
[ -L "$conf" ] && conf=$(readlink -f "$conf")

# the lines of the file without dpdat's entries (comments and blank lines
# kept verbatim)
others() {
	[ -f "$conf" ] || return 0
	awk '$1 != "dpdat0" && $1 != "dpdat1"' "$conf"
}

ours() {
	[ -f "$conf" ] || return 0
	awk '$1 == "dpdat0" || $1 == "dpdat1"' "$conf"
}

# A scratch file beside the registry file, in $tmp.
scratch() {
	local dir
	dir=$(dirname "$conf")
	[ -d "$dir" ] || die 1 "$dir: no such directory"
	tmp=$(mktemp "$conf.XXXXXX" 2>/dev/null) ||
		die 1 "cannot write in $dir (permission?)"
}

# Put $tmp in the registry file's place, with its mode and owner (0644 for
# a new file) and the previous content kept as .bak.
replace() {
	if [ -f "$conf" ]; then
		chmod --reference="$conf" "$tmp" &&
			chown --reference="$conf" "$tmp" ||
			die 1 "cannot give $tmp the mode and owner of $conf"
		cp -p "$conf" "$conf.bak" || die 1 "cannot keep $conf.bak"
	else
		chmod 0644 "$tmp"
	fi
	sync "$tmp" 2>/dev/null || true
	mv -f "$tmp" "$conf" || die 1 "cannot replace $conf"
	tmp=
}

case $cmd in
show)
	[ -f "$conf" ] || die 1 "$conf: no such file"
	n=$(ours | wc -l)
	ours
	echo "dat-conf: $n dpdat entr$([ "$n" = 1 ] && echo y || echo ies) in $conf" >&2
	;;
remove)
	if [ ! -f "$conf" ] || [ "$(ours | wc -l)" -eq 0 ]; then
		echo "dat-conf: no dpdat entry in $conf: nothing to do"
		exit 0
	fi
	n=$(ours | wc -l)
	scratch
	others >"$tmp" || die 1 "cannot read $conf"
	replace
	echo "dat-conf: removed $n dpdat entr$([ "$n" = 1 ] && echo y || echo ies) from $conf (previous file: $conf.bak)"
	;;
install)
	if [ -z "$lib" ]; then
		here=$(cd "$(dirname "$0")/.." && pwd)
		for c in /usr/local/lib/x86_64-linux-gnu/libdapl-dpdat.so \
			 /usr/lib/x86_64-linux-gnu/libdapl-dpdat.so \
			 "$here/build/drivers/dat/libdapl-dpdat.so"; do
			[ -f "$c" ] && { lib=$c; break; }
		done
		[ -n "$lib" ] || die 2 "no libdapl-dpdat.so installed or built: build first, or give --lib"
	fi
	[ -f "$lib" ] && [ -r "$lib" ] || die 2 "--lib $lib: no such readable file"
	case $lib in /*) ;; *) lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib") ;; esac
	[ -n "$mtu" ] || [ -n "$device" ] || mtu=4200
	if [ -n "$mtu" ]; then
		case $mtu in *[!0-9]*) die 2 "--mtu $mtu: not a number" ;; esac
		[ "$mtu" -ge 576 ] && [ "$mtu" -le 9600 ] || die 2 "--mtu $mtu: out of 576..9600"
	fi
	[ -z "$device" ] && { [ -n "$ipv4" ] || [ -n "$cpu" ]; } &&
		die 2 "--ipv4 and --cpu go with --device (the memif pair has its own addresses)"
	if [ -n "$ipv4" ] && [ "$ipv4" != auto ]; then
		echo "$ipv4" | grep -Eq '^([0-9]{1,3}\.){3}[0-9]{1,3}$' ||
			die 2 "--ipv4 $ipv4: not a dotted IPv4 address (or auto)"
	fi
	case $cpu in *[!0-9]*) die 2 "--cpu $cpu: not a CPU number" ;; esac
	case "$device" in *[[:space:]\"\;]*) die 2 "--device: no spaces, quotes or semicolons in device arguments" ;; esac
	case "$lib" in *[[:space:]\"]*) die 2 "--lib: a path with spaces or quotes cannot go into dat.conf" ;; esac
	case "$sock" in *[[:space:]\",]*) die 2 "--socket: a path with spaces, quotes or commas cannot go into the device arguments" ;; esac
	old=$(ours | wc -l)
	scratch
	if [ -n "$device" ]; then
		params="device=$device"
		[ -n "$ipv4" ] && params="$params ipv4=$ipv4"
		[ -n "$mtu" ] && params="$params mtu=$mtu"
		[ -n "$cpu" ] && params="$params cpu=$cpu"
		# a PCI address (not a net_ virtual device) joins the EAL's
		# allow-list
		case $device in net_*) ;; *) params="$params eal=-a${device%%,*}" ;; esac
		{
			others || exit 1
			printf 'dpdat0 u2.0 nonthreadsafe default %s dpdat.0.1 "%s" ""\n' \
				"$lib" "$params"
		} >"$tmp" || die 1 "cannot read $conf"
		replace
		echo "dat-conf: $conf: dpdat0 on $device (address ${ipv4:-auto}) -> $lib$([ "$old" -gt 0 ] && echo " ($old old entries replaced)")"
		exit 0
	fi
	{
		others || exit 1
		for e in "0 server 198.18.0.1" "1 client 198.18.0.2"; do
			set -- $e
			printf 'dpdat%s u2.0 nonthreadsafe default %s dpdat.0.1 "device=net_memif0,role=%s,socket=%s ipv4=%s mtu=%s" ""\n' \
				"$1" "$lib" "$2" "$sock" "$3" "$mtu"
		done
	} >"$tmp" || die 1 "cannot read $conf"
	replace
	echo "dat-conf: $conf: dpdat0 (memif server, 198.18.0.1) and dpdat1 (client, 198.18.0.2) -> $lib$([ "$old" -gt 0 ] && echo " ($old old entries replaced)")"
	;;
esac
