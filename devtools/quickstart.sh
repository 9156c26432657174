#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
#
# Quick start: install what is needed, build, run the demos: the
# memory-registration walk-through (dpdat-demo mr), then two dpdat-testpmd
# processes over a memif pair doing verified RDMA and a 5-second stream
# (devtools/demo.sh), then the RSMAPI example pair.
set -euo pipefail
cd "$(dirname "$0")/.."
devtools/setup.sh
devtools/build.sh build
echo
build/app/dpdat-demo/dpdat-demo mr
echo
devtools/demo.sh build
echo
# RSMAPI: an exporter publishes a segment, an importer reads and writes it
# over RDMA and signals (app/rsm-demo, doc/guides/rsm.md)
exec test/integration/rsm_suite/demo.sh build/app/rsm-demo/rsm-exporter \
	build/app/rsm-demo/rsm-importer
