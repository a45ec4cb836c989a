#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Driver instructions per I/O, from callgrind (make bench-cost).

bench-cost does N 4 KiB polled reads at QD32 with batched submission on the
zero-latency emulated controller. Under valgrind --tool=callgrind
--separate-threads=yes the submitting thread (thread 1) has its own profile;
the device thread's instructions are not in it. Per configuration:

  run A: N1 I/Os            Ir_A = S + c*N1 + e*E_A
  run B: N2 I/Os            Ir_B = S + c*N2 + e*E_B
  run C: N1 I/Os + K extra empty polls after the run
                            Ir_C = S + c*N1 + e*(E_C + K)

S is start-up and shutdown (nvq_open, nvq_close: the same in every run), c
the cost of one I/O, e the cost of one empty poll (nvq_poll finding nothing,
then sched_yield) and E the number of empty polls a run happened to make.
Under valgrind only one thread runs at a time, so how often the submitter
polls before the device thread has run is scheduling luck; it must not
count as I/O cost. C gives e = (Ir_C - Ir_A) / (E_C + K - E_A), and
c = (Ir_B - Ir_A - e*(E_B - E_A)) / (N2 - N1).

The per-function table is the same marginal difference (run B minus run A,
per I/O) of callgrind_annotate's exclusive counts, empty polls included
(their share is listed as the last row).

usage: cost.py BUILD_DIR [--n1 N] [--n2 N] [--empty K] [--keep DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

TARGET = 400


def run(exe, outdir, tag, args):
    out = os.path.join(outdir, "cg." + tag)
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
           "--callgrind-out-file=" + out, exe] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        sys.exit("bench-cost failed: %s\n%s%s" % (" ".join(cmd), p.stdout,
                                                 p.stderr[-2000:]))
    m = re.search(r"ios (\d+) empty_polls (\d+) extra_empty (\d+)",
                  p.stdout)
    if not m:
        sys.exit("bench-cost printed no summary: %r" % p.stdout)
    thread1 = out + "-01"
    with open(thread1) as f:
        ir = None
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                ir = int(line.split()[1])
    if ir is None:
        sys.exit("no totals in " + thread1)
    return {"ir": ir, "ios": int(m.group(1)), "empty": int(m.group(2)),
            "extra": int(m.group(3)), "file": thread1}


def functions(path):
    """Exclusive Ir per function of one thread's profile."""
    p = subprocess.run(["callgrind_annotate", "--threshold=100",
                        "--show-percs=no", path],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    res = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(\S.*)$", line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        name = m.group(2)
        # "file:function [object]" -> "function [object basename]"
        obj = ""
        om = re.search(r"\[(.*)\]\s*$", name)
        if om:
            obj = os.path.basename(om.group(1))
            name = name[:om.start()].strip()
        func = name.split(":", 1)[1] if ":" in name else name
        key = "%s [%s]" % (func, obj) if obj else func
        res[key] = res.get(key, 0) + int(m.group(1).replace(",", ""))
    return res


def measure(exe, outdir, tag, label, extra_args, n1, n2, k):
    a = run(exe, outdir, tag + ".a", extra_args + ["--ios", str(n1)])
    b = run(exe, outdir, tag + ".b", extra_args + ["--ios", str(n2)])
    c = run(exe, outdir, tag + ".c",
            extra_args + ["--ios", str(n1), "--empty", str(k)])
    e = (c["ir"] - a["ir"]) / float(c["empty"] + k - a["empty"])
    raw = (b["ir"] - a["ir"]) / float(n2 - n1)
    cost = (b["ir"] - a["ir"] - e * (b["empty"] - a["empty"])) / float(
        n2 - n1)
    fa, fb = functions(a["file"]), functions(b["file"])
    per_fn = sorted(((fb.get(f, 0) - fa.get(f, 0)) / float(n2 - n1), f)
                    for f in set(fa) | set(fb))
    per_fn.reverse()
    # The harness's own rows: its loop and callback (bench-cost object).
    # They include the loop's share of the empty polls, which e already
    # took out of cost: take it out of the harness rows too, measured the
    # same way (run c's extra empty polls), or it is subtracted twice.
    fc = functions(c["file"])

    def harness_ir(f):
        return sum(v for k2, v in f.items() if k2.endswith("[bench-cost]"))

    empties_c = float(c["empty"] + k - a["empty"])
    harness_e = (harness_ir(fc) - harness_ir(fa)) / empties_c
    harness = (harness_ir(fb) - harness_ir(fa) -
               harness_e * (b["empty"] - a["empty"])) / float(n2 - n1)
    return {"label": label, "a": a, "b": b, "c": c, "e": e, "raw": raw,
            "cost": cost, "per_fn": per_fn, "driver": cost - harness,
            "empty_share": e * (b["empty"] - a["empty"]) / float(n2 - n1)}


def report(r, n1, n2, k):
    a, b, c = r["a"], r["b"], r["c"]
    print("== %s" % r["label"])
    print("  thread 1 Ir: %d I/Os %d (empty polls %d), %d I/Os %d (empty "
          "polls %d)" % (n1, a["ir"], a["empty"], n2, b["ir"], b["empty"]))
    print("  one empty poll + sched_yield: %.1f instructions (from %d extra "
          "empty polls: Ir %d, empty polls %d)" % (r["e"], k, c["ir"],
                                                   c["empty"]))
    print("  marginal, raw:            %.1f instructions / I/O" % r["raw"])
    print("  marginal, without empty polls: %.1f instructions / I/O"
          % r["cost"])
    print("  of which the driver (all but bench-cost's loop and callback):"
          " %.1f (target <= %d)" % (r["driver"], TARGET))
    print("  where they go (marginal Ir per I/O by function, exclusive):")
    shown = 0.0
    for v, f in r["per_fn"]:
        if v < 0.5:
            continue
        print("    %7.1f  %s" % (v, f))
        shown += v
    print("    %7.1f  (of which empty polls, spread over the rows above)"
          % r["empty_share"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--n1", type=int, default=50000)
    ap.add_argument("--n2", type=int, default=250000)
    ap.add_argument("--empty", type=int, default=100000)
    ap.add_argument("--keep", help="keep the callgrind files here")
    o = ap.parse_args()
    exe = os.path.join(o.build, "bench", "bench-cost")
    if not os.access(exe, os.X_OK):
        sys.exit("%s not built" % exe)
    outdir = o.keep or tempfile.mkdtemp(prefix="nvq-cost.")
    os.makedirs(outdir, exist_ok=True)
    print("nvq driver cost: 4 KiB polled reads, QD32, NVQ_IO_MORE + one "
          "kick per batch, emu (zero latency);\nsubmitting thread only "
          "(callgrind --separate-threads=yes), marginal over %d -> %d I/Os"
          % (o.n1, o.n2))
    results = [measure(exe, outdir, "shared",
                       "shared queue (split locks, the default)", [],
                       o.n1, o.n2, o.empty),
               measure(exe, outdir, "exclusive",
                       "exclusive queue (one owner thread, no locks)",
                       ["--exclusive"], o.n1, o.n2, o.empty)]
    for r in results:
        report(r, o.n1, o.n2, o.empty)
    print("SUMMARY driver instructions/I/O: shared queue %.0f, exclusive "
          "queue %.0f (target <= %d; with the harness: %.0f, %.0f)" % (
              results[0]["driver"], results[1]["driver"], TARGET,
              results[0]["cost"], results[1]["cost"]))
    if not o.keep:
        for f in os.listdir(outdir):
            os.unlink(os.path.join(outdir, f))
        os.rmdir(outdir)


if __name__ == "__main__":
    main()
