#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Quick start: install what is needed, build, run the demos: the
# memory-registration walk-through (dpdat-demo mr), then two dpdat-testpmd
# processes over a memif pair doing verified RDMA and a 5-second stream
# (devtools/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
devtools/setup.sh
devtools/build.sh build
echo
build/app/dpdat-demo/dpdat-demo mr
echo
exec devtools/demo.sh build
