#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The three PRP list pool variants side by side (docs/numa.md).

NVQ_PRP_POOLS=device|node|cache selects where a queue's PRP list blocks
come from (one pool set for the device; one per NUMA node; per node with a
per-queue cache in front). bench-pools runs a thread and a queue per CPU
doing 32 KiB random reads at QD32 (a list block per command) on the
emulated controller.

1. IOPS: ROUNDS rounds of the three variants in turn (A B C A B C ...),
   SECONDS each, end to end and with --prp (the PRP lists alone, no
   device); medians, and the pool lock's contended acquisitions.
2. Instructions (valgrind --tool=callgrind, collecting io_loop() only):
   per I/O, the driver's instructions (nvq_read + nvq_poll +
   nvq_queue_kick inclusive, less the emulated device's work done in the
   reaping thread), those in pool alloc/free (inclusive: nvq_dmapool_*
   or nvq_pool_cache_*), and those on the lines of the pool lock
   (pool_lock(), pool_unlock() in lib/mem/dmapool.c, self cost).

usage: pools.py BUILD_DIR [--rounds N] [--seconds S] [--ios N]
                [--exclusive] [--no-callgrind] [--markdown]
BUILD_DIR should be built with debug info (debugoptimized) for the lock
lines; without it those read 0.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

VARIANTS = ["device", "node", "cache"]
# What prp.c calls to take and give back list blocks (the cache's refill
# and drain, and the pool's batch calls, are inside them).
POOL_FUNCS = ["nvq_dmapool_alloc", "nvq_dmapool_free", "nvq_pool_cache_get",
              "nvq_pool_cache_put"]
DRIVER_FUNCS = ["nvq_read", "nvq_poll", "nvq_queue_kick"]
DEVICE_FUNCS = ["nvq_transport_idle_slow"]  # the emulator, run by reapers


def run(exe, variant, args, wrap=None):
    env = dict(os.environ, NVQ_PRP_POOLS=variant)
    cmd = (wrap or []) + [exe] + args
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout,
                                        p.stderr[-2000:]))
    m = re.search(r"^variant .*$", p.stdout, re.M)
    if not m:
        sys.exit("no result line: %r" % p.stdout)
    toks = m.group(0).split()
    return {toks[i]: toks[i + 1] for i in range(0, len(toks) - 1, 2)}


def lock_lines(src):
    """Line numbers of pool_lock() and pool_unlock() in dmapool.c."""
    lines = set()
    text = open(src).read().splitlines()
    inside = False
    for no, line in enumerate(text, 1):
        if re.match(r"static inline void pool_(un)?lock\(", line):
            inside = True
        if inside:
            lines.add(no)
            if line == "}":
                inside = False
    return lines


def parse_callgrind(path, dmapool_lines):
    """Inclusive cost per function name, and the self cost of the lines
    of dmapool.c in @dmapool_lines."""
    names = {"fl": {}, "fn": {}, "cfn": {}}
    incl = {}
    lock = 0
    fn = None
    file_ = None
    cur_file = None
    line = 0
    pending_call = False
    call_target = None
    selfcost = {}

    def name_of(kind, val):
        m = re.match(r"\((\d+)\)(?: (.*))?", val)
        if not m:
            return val
        key = m.group(1)
        table = names["fn"] if kind in ("fn", "cfn") else names["fl"]
        if m.group(2) is not None:
            table[key] = m.group(2)
        return table.get(key, key)

    with open(path) as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if not raw or raw[0] == "#":
                continue
            m = re.match(r"(fl|fi|fe|fn|cfn|cfi|cfl|cob|ob|calls)=(.*)", raw)
            if m:
                k, v = m.group(1), m.group(2)
                if k == "fl":
                    file_ = cur_file = name_of("fl", v)
                elif k in ("fi", "fe"):
                    cur_file = name_of("fl", v)
                elif k == "fn":
                    fn = name_of("fn", v)
                    cur_file = file_
                elif k == "cfn":
                    call_target = name_of("cfn", v)
                elif k in ("cfi", "cfl"):
                    name_of("fl", v)
                elif k == "calls":
                    pending_call = True
                continue
            m = re.match(r"([+-]?\d+|\*)\s+(\d+)", raw)
            if not m:
                continue
            pos, cost = m.group(1), int(m.group(2))
            if pos == "*":
                pass
            elif pos[0] in "+-":
                line += int(pos)
            else:
                line = int(pos)
            if pending_call:
                # Inclusive cost of a call from fn to call_target.
                pending_call = False
                if call_target != fn:
                    incl[call_target] = incl.get(call_target, 0) + cost
                continue
            selfcost[fn] = selfcost.get(fn, 0) + cost
            if cur_file and cur_file.endswith("mem/dmapool.c") and \
                    line in dmapool_lines:
                lock += cost
    return incl, lock


def callgrind(exe, variant, ios, extra, src_root, keep):
    out = os.path.join(keep, "cg.%s" % variant)
    wrap = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
            "--toggle-collect=io_loop", "--callgrind-out-file=" + out]
    res = run(exe, variant, ["--ios", str(ios)] + extra, wrap)
    incl, lock = parse_callgrind(
        out, lock_lines(os.path.join(src_root, "lib/mem/dmapool.c")))
    n = int(res["ios"])
    driver = sum(incl.get(f, 0) for f in DRIVER_FUNCS) - \
        sum(incl.get(f, 0) for f in DEVICE_FUNCS)
    pool = sum(incl.get(f, 0) for f in POOL_FUNCS)
    return {"ios": n, "driver": driver / n, "pool": pool / n,
            "lock": lock / n, "empty": int(res["empty_polls"])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--ios", type=int, default=20000)
    ap.add_argument("--exclusive", action="store_true")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--keep")
    a = ap.parse_args()
    exe = os.path.join(a.build, "bench", "bench-pools")
    src_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    extra = ["--exclusive"] if a.exclusive else []

    iops = {(v, p): [] for v in VARIANTS for p in (False, True)}
    cont = {(v, p): [] for v in VARIANTS for p in (False, True)}
    threads = None
    for _ in range(a.rounds):
        for prp in (False, True):
            for v in VARIANTS:
                r = run(exe, v, ["--seconds", str(a.seconds)] + extra +
                        (["--prp"] if prp else []))
                threads = r["threads"]
                iops[(v, prp)].append(float(r["iops"]))
                locks = int(r["locks"])
                cont[(v, prp)].append(int(r["contended"]) /
                                      max(locks, 1) * 100)
    print("bench-pools: %s threads (a queue each), 32 KiB random reads, "
          "QD32, %s queues, %d rounds of %.0f s, medians" %
          (threads, "exclusive" if a.exclusive else "shared", a.rounds,
           a.seconds))
    print()
    print("(x: median over the device variant's median; then the range "
          "of the rounds)")
    print()
    print("| variant | IOPS (emu, end to end) | PRP lists/s alone "
          "| contended pool lock acquisitions (e2e / alone) |")
    print("| --- | --- | --- | --- |")
    base = statistics.median(iops[("device", False)])
    pbase = statistics.median(iops[("device", True)])
    for v in VARIANTS:
        i = statistics.median(iops[(v, False)])
        p = statistics.median(iops[(v, True)])
        print("| %s | %.0f (%.2fx; %.2f-%.2f) | %.0f (%.2fx; %.2f-%.2f) "
              "| %.2f%% / %.2f%% |" %
              (v, i, i / base, min(iops[(v, False)]) / base,
               max(iops[(v, False)]) / base, p, p / pbase,
               min(iops[(v, True)]) / pbase, max(iops[(v, True)]) / pbase,
               statistics.median(cont[(v, False)]),
               statistics.median(cont[(v, True)])))
    if a.no_callgrind:
        return
    keep = a.keep or tempfile.mkdtemp(prefix="nvq-pools-")
    os.makedirs(keep, exist_ok=True)
    print()
    print("callgrind, %d I/Os per thread, instructions per I/O:" % a.ios)
    print()
    print("| variant | driver | pool alloc/free | share | pool lock "
          "| share | empty polls |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for v in VARIANTS:
        c = callgrind(exe, v, a.ios, extra, src_root, keep)
        print("| %s | %.0f | %.1f | %.1f%% | %.1f | %.1f%% | %d |" %
              (v, c["driver"], c["pool"], c["pool"] / c["driver"] * 100,
               c["lock"], c["lock"] / c["driver"] * 100, c["empty"]))


if __name__ == "__main__":
    main()
