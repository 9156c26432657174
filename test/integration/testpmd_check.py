#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""dpdat-testpmd as a user drives it.

1. Bad input: each bad command ends a script with status 1 and the message
   that says what was wrong; nothing after it runs.
2. The prompt (a pseudo-terminal, DPDK's cmdline): help, completion of a
   verb, a command, quit.
3. Two processes over memif, by script: reject then accept, a verified
   WRITE and READ, an RMR bound and shown in the table, a stream under 2 %
   injected loss (it completes, the QP retransmitted), a pcapng capture.
4. A server outlives its client: the first client is SIGKILLed in the
   middle of a WRITE stream (the server's poller meets the unmap), a second
   client on the same socket connects and gets a verified WRITE and READ;
   at quit the server waits for the CM to give up on the dead client.
Usage: testpmd_check.py <dpdat-testpmd>
"""
import os
import pty
import select
import subprocess
import sys
import tempfile
import time

TP = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="dpdat-tpcheck-")
failures = []


def sock(tag):
    return os.path.join(TMP, tag + ".sock")


def run_script(role, lines, tag, timeout=60):
    """Run a script on stdin; return (status, output)."""
    p = subprocess.run([TP, "--role", role, "--socket", sock(tag)],
                       input="\n".join(lines) + "\n", text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout


def start_script(role, lines, tag, out):
    """Start a script on stdin in the background, its output to out."""
    p = subprocess.Popen([TP, "--role", role, "--socket", sock(tag)],
                         stdin=subprocess.PIPE, stdout=out,
                         stderr=subprocess.STDOUT, text=True)
    p.stdin.write("\n".join(lines) + "\n")
    p.stdin.close()
    return p


def check(name, cond, out=""):
    print(("ok   " if cond else "FAIL ") + name)
    if not cond:
        failures.append(name)
        print("\n".join(l for l in out.splitlines()
                        if not l.startswith("EAL"))[-2000:])


def bad_input():
    cases = [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["show"], "usage: show"),
        (["show nothing"], "error: show port|"),
        (["pz free 0"], "no PZ 0"),
        (["pz create", "lmr create 0 12Q"], "'12Q' is not a number"),
        (["pz create", "lmr create 0 1M huge rx"], "none, r, w or rw"),
        (["pz create", "lmr create 7 1M"], "no PZ 7"),
        (["pz create", "lmr create 0 1M", "pz free 0"],
         "pz free: Device or resource busy"),
        (["pz create", "lmr create 0 1M", "rmr create 0",
          "rmr bind 0 0 0 2M r"], "rmr bind: Invalid argument"),
        (["connect 198.18.0.300 1 0"], "not an IPv4 address"),
        (["accept 0 0"], "no connection 0"),
        (["write 3 100 0x5a"], "no connection 3"),
        (["check 0 0 10 0x5a"], "no LMR 0"),
        (["pz create", "lmr create 0 4K", "check 0 0 10 0x1ff"],
         "a pattern (0x5a or inc)"),
        (["fault rx:drop=2"], "error: fault"),
        (["capture start /nonexistent/dir/x.pcapng"],
         "capture: No such file or directory"),
        (["wait request 0"], "wait request: nothing after"),
        (["stream 0 send 1K"], "no connection 0"),
    ]
    for i, (lines, want) in enumerate(cases):
        rc, out = run_script("server", lines + ["show port"], "bad%d" % i)
        check("bad input %r -> %r" % (lines[-1], want),
              rc == 1 and want in out and "stopped at the first failure"
              in out and "dpdat> show port" not in out, out)


def prompt():
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(TP, [TP, "--role", "server", "--socket", sock("pty"), "-i"])
    out = b""

    def read_until(token, secs=30):
        nonlocal out
        end = time.time() + secs
        while token not in out and time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break
        return token in out

    ok = read_until(b"dpdat> ")
    os.write(fd, b"help\n")
    ok = ok and read_until(b"stream <conn> write|read")
    os.write(fd, b"sh\t")	# completion of the verb
    ok = ok and read_until(b"show")
    os.write(fd, b" port\n")
    ok = ok and read_until(b"IPv4 198.18.0.1")
    os.write(fd, b"quit\n")
    ok = ok and read_until(b"bye")
    _, status = os.waitpid(pid, 0)
    check("prompt: help, completion, show port, quit",
          ok and os.WEXITSTATUS(status) == 0, out.decode(errors="replace"))


def two_processes():
    cap = os.path.join(TMP, "s.pcapng")
    server = [
        "pz create", "lmr create 0 1M huge rw", "rmr create 0",
        "rmr bind 0 0 4096 8192 r", "show rmr", "listen 7000",
        "capture start " + cap, "wait link 30",
        "wait request 30", "reject 0",
        "wait request 30", "accept 0 0", "wait established 10",
        "wait disconnected 60", "capture stop", "show stats", "quit"]
    client = [
        "pz create", "lmr create 0 1M plain rw", "wait link 30",
        "connect 198.18.0.1 7000 0", "wait rejected 10",
        "connect 198.18.0.1 7000 0", "wait established 10",
        "write 0 100000 inc 4096", "read 0 100000 inc 4096",
        "fault rx:drop=0.02;tx:drop=0.02;seed=9",
        "stream 0 write 16K 16 2", "fault off", "show qp 0",
        "disconnect 0", "wait disconnected 10", "quit"]
    tag = "pair"
    with open(os.path.join(TMP, "s.log"), "w") as slog:
        srv = start_script("server", server, tag, slog)
        time.sleep(0.5)
        crc, cout = run_script("client", client, tag, timeout=90)
        src = srv.wait(timeout=60)
    sout = open(os.path.join(TMP, "s.log")).read()
    check("pair: both scripts complete", crc == 0 and src == 0,
          cout + sout)
    check("pair: reject seen by the client", "rejected" in cout, cout)
    check("pair: WRITE verified by reading back",
          "write: 100000 bytes at remote offset 4096" in cout and
          "read: 100000 bytes from remote offset 4096" in cout, cout)
    check("pair: RMR bound and in the table",
          "rmr bound: lmr 0 [4096, +8192)" in sout and
          " 8192  priv 0x02" in sout, sout)
    # selective repeat (two dpdat peers) resends without going back
    resent = [l for l in cout.splitlines() if l.strip().startswith("resent ")]
    check("pair: stream completes under loss, with packets resent",
          "(FAILED)" not in cout and "stream: total" in cout and resent and
          not resent[0].strip().startswith("resent 0 "), cout)
    with open(cap, "rb") as f:
        magic = f.read(4)
    check("pair: capture is pcapng with frames",
          magic == b"\x0a\x0d\x0d\x0a" and os.path.getsize(cap) > 10000,
          sout)


def server_outlives_client():
    tag = "outlive"
    server = [
        "pz create", "lmr create 0 1M huge rw", "listen 7001",
        "wait link 30", "wait request 30", "accept 0 0",
        "wait established 10", "wait request 60", "accept 1 0",
        "wait established 10", "wait disconnected 60", "show stats",
        "quit"]
    first = [
        "pz create", "lmr create 0 1M plain rw", "wait link 30",
        "connect 198.18.0.1 7001 0", "wait established 10",
        "write 0 100000 inc 4096", "stream 0 write 16K 16 30", "quit"]
    second = [
        "pz create", "lmr create 0 1M plain rw", "wait link 30",
        "connect 198.18.0.1 7001 0", "wait established 10",
        "write 0 100000 inc 4096", "read 0 100000 inc 4096",
        "disconnect 0", "wait disconnected 10", "quit"]
    slog_path = os.path.join(TMP, "outlive.s.log")
    with open(slog_path, "w") as slog:
        srv = start_script("server", server, tag, slog)
        time.sleep(0.5)
        c1 = start_script("client", first, tag, subprocess.PIPE)
        # kill it once its stream runs (its first rate line)
        out1, t0 = "", time.time()
        while time.time() - t0 < 40:
            line = c1.stdout.readline()
            if not line:
                break
            out1 += line
            if line.startswith("stream:") and "MiB/s" in line:
                break
        c1.kill()
        c1.wait()
        crc, cout = run_script("client", second, tag, timeout=90)
        src = srv.wait(timeout=90)
    sout = open(slog_path).read()
    check("outlive: the first client was killed mid-stream",
          "MiB/s" in out1, out1)
    check("outlive: the second client's WRITE and READ verified",
          crc == 0 and "read back" in cout and "verified" in cout and
          "read: 100000 bytes from remote offset 4096" in cout, cout)
    check("outlive: the server saw the link go and come back, served "
          "both and quit cleanly",
          src == 0 and "link down" in sout and "link up" in sout and
          "conn 1: established" in sout, sout)
    # at quit the dead client's connection still looks established: its
    # DREQ goes unanswered until the CM gives up, then all is freed
    check("outlive: quit waits for the CM to give up on the dead peer "
          "and leaves nothing behind",
          "waiting up to 7 s for the CM to give up" in sout and
          "conn 0: disconnected" in sout and
          "CM objects left" not in sout and "still open" not in sout,
          sout)


bad_input()
prompt()
two_processes()
server_outlives_client()
subprocess.run(["rm", "-rf", TMP])
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
