#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A scripted NVMe/TCP discovery controller, for nvq discover's tests.

usage: fake_disc_target.py SCENARIO LOGFILE

Listens on 127.0.0.1 (a free port, printed on the first line of standard
output), serves one connection after another until killed: ICReq/ICResp
(no digests), Fabrics Connect, Property Get/Set (CAP, CC, CSTS), Get Log
Page 70h through C2HData. Each command received is appended to LOGFILE as
one line ("connect qid=0 sqsize=31 kato=0 cntlid=0xffff subnqn=...",
"get cap", "set cc 0x460001", "log off=0 len=1024", ...), so that a test
can check what the host sent. SCENARIO makes the controller misbehave in
one way (see SCENARIOS); "ok" behaves.
"""
import socket
import struct
import sys

DISC_NQN = b"nqn.2014-08.org.nvmexpress.discovery"

SCENARIOS = {
    "ok": "two records, GENCTR 7 throughout",
    "settle": "GENCTR moves on each of the first three header reads",
    "churn": "GENCTR moves on every read: never stable",
    "grow": "the first full read has a record more than its header said",
    "huge": "NUMREC 5000",
    "recfmt": "record format 1",
    "notready": "CSTS.RDY never set (CAP.TO 1: 500 ms)",
    "cfs": "CSTS.CFS set after CC.EN",
    "refuse": "Connect fails: Invalid Host",
    "logfail": "Get Log Page fails: Invalid Field in Command",
    "short": "C2HData of fewer bytes than asked for, then success",
    "noshutdown": "CSTS.SHST never completes (the log still counts)",
}


def rec(i, addr=b"127.0.0.1", svc=b"4420"):
    nqn = b"nqn.2014-08.org.example:sub%d" % i
    r = struct.pack("<BBBBHHHH", 3, 1, 2, 2, 1, 0xFFFF, 32, 0)
    r += b"\0" * 20 + svc.ljust(32, b" ") + b"\0" * 192
    r += nqn.ljust(256, b"\0") + addr.ljust(256, b" ") + b"\0" * 256
    assert len(r) == 1024
    return r


def page(genctr, nrec, numrec=None, recfmt=0):
    if numrec is None:
        numrec = nrec
    hdr = struct.pack("<QQH", genctr, numrec, recfmt).ljust(1024, b"\0")
    return hdr + b"".join(rec(i) for i in range(nrec))


class Ctrl:
    def __init__(self, scenario, log):
        self.sc = scenario
        self.log = log
        self.cc = 0
        self.csts = 0
        self.hdr_reads = 0
        self.full_reads = 0

    def note(self, line):
        with open(self.log, "a") as f:
            f.write(line + "\n")

    def cap(self):
        to = 1 if self.sc == "notready" else 10
        # MQES 31, CQR, TO, CSS NVM
        return 31 | 1 << 16 | to << 24 | 1 << 37

    def set_cc(self, v):
        self.cc = v
        if v & 1 and self.sc == "cfs":
            self.csts = 2
        elif v & 1 and self.sc != "notready":
            self.csts |= 1
        if (v >> 14) & 3 and self.sc != "noshutdown":
            self.csts = (self.csts & ~0xC) | 2 << 2

    def log_page(self, off, length):
        """The bytes of the page a read of @length at @off sees."""
        if length == 1024:
            self.hdr_reads += 1
        else:
            self.full_reads += 1
        sc = self.sc
        gen = 7
        if sc == "settle":
            gen = 7 + min(self.hdr_reads, 3)
        elif sc == "churn":
            gen = 7 + self.hdr_reads + self.full_reads
        nrec = 2
        numrec = None
        if sc == "grow" and self.full_reads == 1 and length > 1024:
            nrec = 3
            numrec = 3
        if sc == "huge":
            numrec = 5000
        p = page(gen, nrec, numrec, 1 if sc == "recfmt" else 0)
        p = p[off:off + length]
        return p.ljust(length, b"\0")


def recv_all(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b


def cqe(cid, status=0, dw0=0, dw1=0):
    return struct.pack("<IIHHHH", dw0, dw1, 0, 0, cid, status << 1)


def resp(s, cid, status=0, dw0=0, dw1=0):
    body = cqe(cid, status, dw0, dw1)
    s.sendall(struct.pack("<BBBBI", 5, 0, 24, 0, 24 + len(body) - 16) + body)


def c2h(s, cid, datao, data, last):
    h = struct.pack("<BBBBI", 7, 0x04 if last else 0, 24, 24, 24 + len(data))
    h += struct.pack("<HHIII", cid, 0, datao, len(data), 0)
    s.sendall(h + data)


def serve(conn, ctrl):
    # ICReq -> ICResp
    h = recv_all(conn, 8)
    typ, flags, hlen, pdo, plen = struct.unpack("<BBBBI", h)
    if typ != 0 or plen != 128:
        return
    recv_all(conn, plen - 8)
    icresp = struct.pack("<BBBBI", 1, 0, 128, 0, 128)
    icresp += struct.pack("<HBBI", 0, 0, 0, 131072).ljust(120, b"\0")
    conn.sendall(icresp)
    while True:
        h = recv_all(conn, 8)
        typ, flags, hlen, pdo, plen = struct.unpack("<BBBBI", h)
        rest = recv_all(conn, plen - 8)
        if typ != 4:
            ctrl.note("pdu type %d" % typ)
            return
        sqe = rest[:64]
        data = rest[pdo - 8:] if pdo else b""
        opc = sqe[0]
        cid = struct.unpack_from("<H", sqe, 2)[0]
        if opc == 0x7F:
            fct = sqe[4]
            if fct == 1:
                recfmt, qid, sqsize, cattr, _, kato = struct.unpack_from(
                    "<HHHBBI", sqe, 40)
                cntlid = struct.unpack_from("<H", data, 16)[0]
                subnqn = data[256:512].split(b"\0")[0].decode()
                hostnqn = data[512:768].split(b"\0")[0].decode()
                ctrl.note("connect qid=%d sqsize=%d kato=%d cntlid=%#x "
                          "subnqn=%s hostnqn=%s hostid=%s" % (
                              qid, sqsize, kato, cntlid, subnqn, hostnqn,
                              data[:16].hex()))
                if ctrl.sc == "refuse":
                    resp(conn, cid, 1 << 8 | 0x84)
                else:
                    resp(conn, cid, 0, 1)
            elif fct == 4:
                attrib, off = struct.unpack_from("<B3xI", sqe, 40)
                name = {0: "cap", 0x14: "cc", 0x1C: "csts"}.get(off, off)
                ctrl.note("get %s" % name)
                v = {0: ctrl.cap(), 0x14: ctrl.cc,
                     0x1C: ctrl.csts}.get(off, 0)
                resp(conn, cid, 0, v & 0xFFFFFFFF, v >> 32)
            elif fct == 0:
                attrib, off, val = struct.unpack_from("<B3xIQ", sqe, 40)
                ctrl.note("set %s %#x" % (
                    {0x14: "cc"}.get(off, off), val))
                if off == 0x14:
                    ctrl.set_cc(val)
                resp(conn, cid)
            else:
                resp(conn, cid, 1)  # Invalid Command Opcode
        elif opc == 0x02:
            cdw10, cdw11, cdw12, cdw13 = struct.unpack_from("<IIII", sqe, 40)
            lid = cdw10 & 0xFF
            numd = (cdw10 >> 16 | (cdw11 & 0xFFFF) << 16) + 1
            off = cdw12 | cdw13 << 32
            ctrl.note("log lid=%#x off=%d len=%d" % (lid, off, numd * 4))
            if lid != 0x70 or ctrl.sc == "logfail":
                resp(conn, cid, 2)
                continue
            p = ctrl.log_page(off, numd * 4)
            if ctrl.sc == "short":
                p = p[:-512]
            # the first 512 bytes in a PDU of their own
            c2h(conn, cid, 0, p[:512], last=len(p) <= 512)
            if len(p) > 512:
                c2h(conn, cid, 512, p[512:], last=True)
            resp(conn, cid)
        else:
            resp(conn, cid, 1)


def main():
    scenario, log = sys.argv[1], sys.argv[2]
    if scenario not in SCENARIOS:
        sys.exit("unknown scenario %s" % scenario)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    print(ls.getsockname()[1], flush=True)
    while True:
        conn, _ = ls.accept()
        try:
            serve(conn, Ctrl(scenario, log))
        except (EOFError, ConnectionError):
            pass
        finally:
            conn.close()


if __name__ == "__main__":
    main()
