#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Two programs of different APIs on one host at once, each over its own
# memif link: Debian's fi_pingpong on the dpdat provider (fi_pingpong.sh,
# every size to 1 MiB) and Debian's ibv_rc_pingpong through dpdat-run
# (test/verbs/pair.sh), both checking the data they receive (-c). Both
# must pass, and they must have run at the same time: the verbs pair
# starts once fi_pingpong runs and must end before it.
#   coexist_verbs.sh DPDAT_RUN PROVIDER_DIR
set -u
here=$(dirname "$0")
run=$1 provdir=$2
for p in fi_pingpong ibv_rc_pingpong; do
	command -v $p >/dev/null ||
		{ echo "SKIP: no $p (setup.sh installs it)"; exit 77; }
done
out=$(mktemp -d /tmp/dpdat-coexist-XXXXXX)
fpid=
trap '[ -z "$fpid" ] || kill "$fpid" 2>/dev/null; wait; rm -rf "$out"' EXIT
"$here/fi_pingpong.sh" memif msg "$provdir" -c -I 1000 >"$out/fabric" 2>&1 &
fpid=$!
# fi_pingpong's pair up and moving data: its namespaces made, its two EALs
# up (about a second), then its sizes for 10 s or more (the verbs pair
# takes one or two)
for _ in $(seq 1 100); do
	grep -q "^fabric: fi_pingpong" "$out/fabric" 2>/dev/null && break
	sleep 0.1
done
sleep 2
"$here/../verbs/pair.sh" "$run" 'iters in' ibv_rc_pingpong -d dpdat0 -g 0 \
	-n 1000 -c >"$out/verbs" 2>&1
vrc=$?
running=0
kill -0 "$fpid" 2>/dev/null && running=1
wait "$fpid"
frc=$?
fpid=
status=0
if [ $vrc -ne 0 ]; then
	echo "FAIL: the verbs pair (exit $vrc)"; cat "$out/verbs"; status=1
fi
if [ $frc -ne 0 ]; then
	echo "FAIL: the libfabric pair (exit $frc)"; cat "$out/fabric"; status=1
fi
if [ $status -eq 0 ] && [ $running -eq 0 ]; then
	echo "FAIL: fi_pingpong ended before the verbs pair: they did not overlap"
	status=1
fi
[ $status -ne 0 ] || {
	grep "iters in" "$out/verbs"
	grep "all acknowledged" "$out/fabric"
	echo "PASS: a verbs pair and a libfabric pair at once"
}
exit $status
