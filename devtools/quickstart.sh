#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Quick start: install what is needed, build, run the main demo.
# Today the demo is the memory-registration walk-through (app/dpdat-demo);
# it grows into the two-process RDMA demo as the transport lands.
set -euo pipefail
cd "$(dirname "$0")/.."
devtools/setup.sh
devtools/build.sh build
echo
exec build/app/dpdat-demo/dpdat-demo
