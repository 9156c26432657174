#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""Query a running dpdat process over DPDK telemetry and check that dpdat's
commands answer with its counters. Usage: telemetry_check.py"""

import glob
import json
import socket
import sys
import time


def query(sock, cmd):
    sock.send(cmd.encode())
    return json.loads(sock.recv(1 << 16).decode())


def check(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.recv(1024)  # the greeting
    ports = query(s, "/dpdat/ports")["/dpdat/ports"]
    stats = query(s, f"/dpdat/port_stats,{ports[0]}")["/dpdat/port_stats"]
    qps = query(s, "/dpdat/qps")["/dpdat/qps"]
    qstats = query(s, f"/dpdat/qp_stats,{qps[0]}")["/dpdat/qp_stats"]
    print("telemetry_check: ports", ports, "qps", qps)
    print("telemetry_check: port", {k: stats[k] for k in ("name", "rx_pkts", "tx_pkts", "rx_roce")})
    print("telemetry_check: qp", {k: qstats[k] for k in ("tx_pkts", "rx_pkts", "retransmits")})
    return stats["rx_roce"] > 0 and qstats["rx_pkts"] > 0


def main():
    """Poll every dpdat process's socket for up to 20 s until one of them
    reports traffic on a port and a QP."""
    for _ in range(200):
        for path in glob.glob("/var/run/dpdk/dpdat-*/dpdk_telemetry.v2"):
            try:
                if check(path):
                    return 0
            except (OSError, KeyError, IndexError, ValueError):
                pass  # a process still starting, or one that is gone
        time.sleep(0.1)
    print("telemetry_check: no dpdat process answered with traffic")
    return 1


if __name__ == "__main__":
    sys.exit(main())
