#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""Verify the ICRC of every RoCEv2 frame in pcapng captures, independently
of dpdat's C code: scapy reads the file, zlib computes the CRC-32 over the
masked pseudo-header as IBTA Annex A17 defines it. Exit 1 on any mismatch."""

import struct
import sys
import zlib

from scapy.all import rdpcap, Ether, IP, UDP


def icrc(ip_bytes):
    """ICRC over an IPv4 packet without its 4 trailing ICRC bytes."""
    b = bytearray(ip_bytes)
    b[1] = 0xff                       # TOS
    b[8] = 0xff                       # TTL
    b[10:12] = b"\xff\xff"            # IP checksum
    ihl = (b[0] & 0x0f) * 4
    b[ihl + 6:ihl + 8] = b"\xff\xff"  # UDP checksum
    b[ihl + 8 + 4] = 0xff             # BTH FECN/BECN/reserved
    return zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xffffffff


def main(paths):
    total = bad = 0
    for path in paths:
        for pkt in rdpcap(path):
            if not (pkt.haslayer(UDP) and pkt[UDP].dport == 4791):
                continue
            ip = bytes(pkt[IP])[:pkt[IP].len]
            want = struct.unpack("<I", ip[-4:])[0]
            got = icrc(ip[:-4])
            total += 1
            if got != want:
                bad += 1
                if bad <= 5:
                    print(f"{path}: frame {total}: ICRC {want:08x}, "
                          f"computed {got:08x}")
    print(f"icrc_check: {total} RoCEv2 frames, {bad} with a wrong ICRC")
    return 1 if bad or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
