#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpora of the fuzz targets: tests/fuzz/corpus/<target>/.

Each seed is a short, meaningful session in the target's input language
(the op codes and field order of fuzz_emu.c and fuzz_driver.c), so that
the fuzzer starts from inputs that reach deep instead of finding the
bring-up sequence byte by byte. Run it again after changing either
language: python3 tests/fuzz/make_seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- fuzz_emu.c ----
(OP_REG32, OP_REG64, OP_REG_READ, OP_ENABLE, OP_DISABLE, OP_SQE_RAW,
 OP_ADMIN, OP_IO, OP_POKE, OP_DB_RAW, OP_DB_Q, OP_REAP, OP_RUN, OP_UNMAP,
 OP_REMAP) = range(15)
# Index into op_admin()'s opc[] table.
A_CREATE_CQ, A_CREATE_SQ, A_DELETE_SQ, A_DELETE_CQ, A_IDENTIFY, A_LOG, \
    A_SET_FEAT, A_GET_FEAT, A_AER, A_ABORT, A_DBBUF = range(11)
# Index into op_io()'s opc[] table.
IO_READ, IO_WRITE, IO_FLUSH, IO_WZ, IO_DSM = range(5)


def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v)


def params(qpairs=1, mdts=5, nr_ns=1, no_dbbuf=False, lba512=False):
    a = (qpairs - 1) | (0x10 if no_dbbuf else 0) | (0x80 if lba512 else 0)
    b = mdts | (nr_ns - 1) << 3
    return bytes([a, b, 3, 0])


def enable(entries=32):
    # a < 0x20: sqs = cqs = 1 + a (0's based)
    return bytes([OP_ENABLE, entries - 1])


def admin_generic(k, cid, nsid, cdw10, cdw12=0, page=0):
    # how = 0: nsid from one byte, cdw11 = cdw14 = 0, data page PRPs
    return (bytes([OP_ADMIN, k, 0, 0]) + u16(cid) + bytes([0, nsid]) +
            u32(cdw10) + u32(cdw12) + u32(0) + bytes([page]))


def create(k, qid, cid, entries):
    # how = 0: qid 1 + (byte % 4), size 2 + byte, ring in the host's
    # queue memory; create CQ reads an interrupt vector byte.
    b = bytes([OP_ADMIN, k, 0, qid - 1]) + u16(cid) + bytes([entries - 2])
    if k == A_CREATE_CQ:
        b += bytes([0])
    return b


def delete(k, qid, cid):
    return bytes([OP_ADMIN, k, 0, qid - 1]) + u16(cid) + bytes([0])


def io(k, qid, cid, slba, nlb, page=0, how=0, extra=b""):
    return (bytes([OP_IO, k, how, qid - 1]) + u16(cid) + bytes([0]) +
            bytes([slba, nlb - 1]) + extra + bytes([page]))


def reap(qid):
    return bytes([OP_REAP, qid])


def emu_seeds():
    s = {}
    s["identify"] = (params() + enable() +
                     admin_generic(A_IDENTIFY, 1, 0, 1) + reap(0) +
                     admin_generic(A_IDENTIFY, 2, 1, 0) +
                     admin_generic(A_IDENTIFY, 3, 0, 2) + reap(0))
    s["io-queue-rw"] = (params(qpairs=2) + enable() +
                        create(A_CREATE_CQ, 1, 1, 64) +
                        create(A_CREATE_SQ, 1, 2, 64) +
                        io(IO_WRITE, 1, 1, 0, 2, page=1) +
                        io(IO_READ, 1, 2, 0, 2, page=2) +
                        io(IO_FLUSH, 1, 3, 0, 1) + reap(1) + reap(0) +
                        delete(A_DELETE_SQ, 1, 3) +
                        delete(A_DELETE_CQ, 1, 4) + reap(0) +
                        bytes([OP_DISABLE, 3]))
    # Doorbell Buffer Config, then I/O through the shadow doorbells.
    s["shadow"] = (params(qpairs=1) + enable() +
                   create(A_CREATE_CQ, 1, 1, 16) +
                   create(A_CREATE_SQ, 1, 2, 16) +
                   bytes([OP_ADMIN, A_DBBUF, 0, 0]) + u16(3) +
                   bytes([0]) +
                   io(IO_WRITE, 1, 1, 8, 2) + reap(1) +
                   bytes([OP_POKE, 1]) + u16(12 * 4096 + 8) +
                   bytes([0]) + u32(5) + reap(1))
    # A 64 KiB read through a PRP list (prps() case 2: how = 2 << 5).
    s["prp-list"] = (params(lba512=True) + enable() +
                     create(A_CREATE_CQ, 1, 1, 8) +
                     create(A_CREATE_SQ, 1, 2, 8) +
                     bytes([OP_IO, IO_READ, 0x40, 0]) + u16(7) +
                     bytes([0, 0, 127]) + bytes([0x10, 0]) +
                     bytes([0, 15]) + bytes([0] * 15) + reap(1) + reap(0))
    # Odd register and doorbell writes around a working admin queue.
    s["registers"] = (params(qpairs=3) + bytes([OP_REG32, 0x0a]) +
                      bytes([1]) + u32(0x1f001f) + enable(2) +
                      bytes([OP_DB_RAW]) + u16(0x2002) + bytes([0]) +
                      u32(7) + bytes([OP_DB_Q, 1]) + u16(0xffff) +
                      admin_generic(A_LOG, 4, 0xff, 0x00ff0002) +
                      admin_generic(A_AER, 5, 0, 0) +
                      bytes([OP_UNMAP, 0, OP_RUN, 4]))
    return s


# ---- fuzz_driver.c ----
# Answer bytes of the fake device (exec()): low 3 bits the CQE's fate,
# higher bits what else comes from the script.
A_NORMAL, A_DROP, A_BAD_CID, A_BAD_SQID, A_DUP, A_DELAY, A_PHASE, \
    A_STRAY = range(8)
A_STATUS, A_RESULT, A_PATCH, A_SQHD, A_EVENT = 0x08, 0x10, 0x20, 0x40, 0x80
# Bring-up of the plain device: Identify controller, active list,
# namespaces 1 and 2, Set Features, Doorbell Buffer Config, Create CQ/SQ.
BRINGUP = 8


def header(mode=0, queues=1, capvs=0, csts=0, ops=4):
    return bytes([mode | (queues - 1) << 2, capvs, csts, ops - 2])


def host_op(k, sel=0, slba=0, nlb=1, nsid=0):
    return bytes([k, sel, slba, nlb - 1]) + u32(nsid)


def driver_seeds():
    s = {}
    ok = bytes(BRINGUP)
    # A plain device: bring-up, a few reads, shutdown.
    s["sane"] = header()
    s["wait-mode"] = header(mode=1, ops=8) + ok + host_op(1) + bytes(1) + \
        host_op(0, nlb=8)
    s["thread-mode"] = header(mode=2, queues=2) + ok + bytes(2) + \
        host_op(3, nlb=4) + bytes(1) + host_op(4)
    # A completion with a CID nobody sent, then the Abort and recovery.
    s["bad-cid"] = header(ops=2) + ok + host_op(0) + \
        bytes([A_BAD_CID]) + u16(0x1234)
    s["drop-io"] = header(ops=2) + ok + host_op(1) + bytes([A_DROP])
    s["late-admin"] = header() + bytes([A_DELAY]) + bytes([A_NORMAL])
    # Identify Controller with MDTS, NN, SQES patched.
    s["identify-patch"] = header() + bytes([A_PATCH, 3]) + u16(77) + \
        bytes([0xff]) + u16(516) + bytes([0xff]) + u16(512) + bytes([0x77])
    # An NVMe 1.0 controller (no active namespace list), slow to get ready.
    s["nvme10"] = header(capvs=0x02, csts=0x1b)
    # The device disappears under an I/O.
    s["gone"] = header(ops=3) + ok + host_op(0) + \
        bytes([A_EVENT | A_DROP, 2])
    # Error statuses with DNR, a log page and an Identify passthrough.
    s["status"] = header(ops=4) + ok + host_op(6, sel=2, nlb=2) + \
        bytes([A_STATUS | A_PATCH, 1]) + u16(3) + bytes([9]) + \
        u16(0x4002) + host_op(7, sel=1) + bytes(1)
    return s


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("emu", emu_seeds())
    write("driver", driver_seeds())
