#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Test data for the vfio-metadata entry (scripts/qemu/vfio-test.sh).

usage: md-data.py OUTDIR

Writes, for 8 blocks of 512 bytes at SLBA 16, the data and the metadata
the guest writes with nvq and compares what it reads back against: plain
metadata, extended LBAs, and protection information computed here, on
the host, independently of nvq (CRC-16 T10-DIF, NVM Command Set 1.0
5.2.1: guard over the block's data, and over the metadata bytes before
the PI when it is the last 8 bytes; application tag; reference tag,
+1 a block for types 1 and 2, the same in every block for type 3; all
big endian).
"""
import os
import random
import struct
import sys

NLB = 8
LBA = 512
SLBA = 16


def crc_t10dif(data, crc=0):
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8BB7) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def pi_md(data, ms, pi_type, ref, app, pi_first, other):
    """Metadata of NLB blocks: PI in the first or the last 8 bytes, the
    rest from @other (ms - 8 bytes a block)."""
    out = b""
    for i in range(NLB):
        blk = data[i * LBA:(i + 1) * LBA]
        rest = other[i * (ms - 8):(i + 1) * (ms - 8)]
        guard = crc_t10dif(blk) if pi_first else crc_t10dif(rest,
                                                           crc_t10dif(blk))
        tag = ref + (i if pi_type in (1, 2) else 0)
        t = struct.pack(">HHI", guard, app, tag & 0xFFFFFFFF)
        out += t + rest if pi_first else rest + t
    return out


def extended(data, md, ms):
    return b"".join(data[i * LBA:(i + 1) * LBA] + md[i * ms:(i + 1) * ms]
                    for i in range(NLB))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(0x6E7671)
    data = bytes(rnd.getrandbits(8) for _ in range(NLB * LBA))
    other = bytes(rnd.getrandbits(8) for _ in range(NLB * LBA))
    md8 = bytes(rnd.getrandbits(8) for _ in range(NLB * 8))
    md16 = bytes(rnd.getrandbits(8) for _ in range(NLB * 16))
    app = 0x1234
    files = {
        "data.bin": data,
        "other.bin": other,
        "md8.bin": md8,
        "ext8.bin": extended(data, md8, 8),
        "md16.bin": md16,
        # type 1, 2, 3 with 8 bytes of PI: reference tags SLBA, 1000h,
        # ABCD0000h
        "pi1.bin": pi_md(data, 8, 1, SLBA, app, True, b""),
        "pi2.bin": pi_md(data, 8, 2, 0x1000, app, True, b""),
        "pi3.bin": pi_md(data, 8, 3, 0xABCD0000, app, True, b""),
        # guard of other.bin: written with data.bin, a guard error
        "pi1-other.bin": pi_md(other, 8, 1, SLBA, app, True, b""),
        # 16 bytes: PI first (pil=1) / last (pil=0), 8 other bytes each
        "pi16f.bin": pi_md(data, 16, 1, SLBA, app, True, md8),
        "pi16l.bin": pi_md(data, 16, 1, SLBA, app, False, md8),
        # the same with zeroes where the PI goes: for PRACT, which keeps
        # the other bytes and generates the PI
        "pi16f-nopi.bin": b"".join(b"\0" * 8 + md8[i * 8:i * 8 + 8]
                                   for i in range(NLB)),
        "pi16l-nopi.bin": b"".join(md8[i * 8:i * 8 + 8] + b"\0" * 8
                                   for i in range(NLB)),
        # extended LBAs with 8 bytes of type 1 PI
        "ext-pi1.bin": extended(data, pi_md(data, 8, 1, SLBA, app, True,
                                            b""), 8),
    }
    for name, blob in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(blob)


if __name__ == "__main__":
    main()
