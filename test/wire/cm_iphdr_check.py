#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""Check, independently of dpdat's C code, that every CM REQ in pcapng
captures to a service ID of the IP CM's TCP port space (0x00000000_0106_xxxx)
begins its private data with the header rdma_cm writes and expects (the
kernel's struct cma_hdr, librdmacm's cma_hdr): u8 version 0, u8 IP version
in the high nibble (4), be16 source port, then source and destination
address as 16 bytes each, IPv4 in the last 4 after 12 zero bytes; and that
the consumer's private data follows it. scapy reads the frames; the layout
below is written from that struct, not from dpdat. Exit 1 on any mismatch
or when no such REQ was seen."""

import struct
import sys

from scapy.all import rdpcap, IP, UDP

BTH, DETH, MAD_HDR = 12, 8, 24
REQ_ATTR = 0x0010
REQ_SERVICE_ID, REQ_PDATA, REQ_PDATA_LEN = 8, 140, 92
PS_TCP = 0x0106
CMA_HDR = struct.Struct("!BBH16s16s")        # 36 bytes


def check(pkt, want_pdata):
    """None when pkt is not a REQ to a TCP-port-space service, else a list
    of problems (empty: fine)."""
    roce = bytes(pkt[UDP].payload)
    if len(roce) < BTH + DETH + MAD_HDR + REQ_PDATA + REQ_PDATA_LEN:
        return None
    opcode = roce[0]
    dqp = int.from_bytes(roce[5:8], "big")
    if opcode != 0x64 or dqp != 1:           # UD SEND only, to QP1
        return None
    mad = roce[BTH + DETH:]
    if int.from_bytes(mad[16:18], "big") != REQ_ATTR:
        return None
    req = mad[MAD_HDR:]
    sid = int.from_bytes(req[REQ_SERVICE_ID:REQ_SERVICE_ID + 8], "big")
    if sid >> 16 != PS_TCP:
        return None
    pdata = req[REQ_PDATA:REQ_PDATA + REQ_PDATA_LEN]
    ver, ipver, port, src, dst = CMA_HDR.unpack(pdata[:CMA_HDR.size])
    bad = []
    if ver != 0:
        bad.append(f"cma_version {ver}")
    if ipver >> 4 != 4:
        bad.append(f"ip_version 0x{ipver:02x}")
    if port == 0:
        bad.append("source port 0")
    for name, field, addr in (("source", src, pkt[IP].src),
                              ("destination", dst, pkt[IP].dst)):
        if field[:12] != bytes(12):
            bad.append(f"{name} address padding {field[:12].hex()}")
        if field[12:] != bytes(int(x) for x in addr.split(".")):
            bad.append(f"{name} address {field[12:].hex()}, frame {addr}")
    if want_pdata and not pdata[CMA_HDR.size:].startswith(want_pdata):
        bad.append("consumer private data not right after the header: "
                   f"{pdata[CMA_HDR.size:CMA_HDR.size + 24]!r}")
    return bad


def main(args):
    want = args[1].encode() if len(args) > 1 and args[0] == "--pdata" else b""
    paths = args[2:] if want else args
    seen = failed = 0
    for path in paths:
        for pkt in rdpcap(path):
            if not (pkt.haslayer(UDP) and pkt[UDP].dport == 4791):
                continue
            bad = check(pkt, want)
            if bad is None:
                continue
            seen += 1
            if bad:
                failed += 1
                print(f"{path}: REQ {seen}: " + "; ".join(bad))
    print(f"cm_iphdr_check: {seen} REQs to IP CM services, {failed} with a "
          "wrong header")
    return 1 if failed or seen == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
