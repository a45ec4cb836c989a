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

Then the harness: bench-cost-harness (bench/cost.c built with COST_HARNESS,
tools/perf/meson.build) runs nvq-perf's own job engine, tools/perf/job.c,
on the default job (4 KiB random reads, QD32, poll mode, emulator stamps
on) in thread 1. Its instructions split along the call graph: the
driver's are the inclusive cost of the calls from job.c into the public
API (nvq_read, nvq_poll, ...) less the callbacks the driver makes back
into job.c; the harness's are all the rest of the thread (its own code,
clock_gettime, sched_getcpu, histograms, ...). Empty polls are taken out
as above, weighed by two runs against a device that answers nothing
(--stall-ms): E = nvq_poll calls - polls that reaped.

usage: cost.py BUILD_DIR [--n1 N] [--n2 N] [--empty K] [--keep DIR]
               [--harness-only]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

TARGET = 400
# nvq-perf's own instructions per I/O on top of the driver's
HARNESS_TARGET = 150


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


# The public API calls nvq-perf's job loop makes per I/O.
ENTRY = ("nvq_read", "nvq_write", "nvq_poll", "nvq_wait", "nvq_queue_kick",
         "nvq_queue_inflight")
HARNESS_FILES = ("tools/perf/job.c", "bench/cost.c")


def parse_callgrind(path):
    """Totals, self cost, call edges and function files of one profile."""
    names = {"fl": {}, "fn": {}}
    fn_file = {}
    self_ir = {}
    edges = {}  # (caller, callee) -> [calls, inclusive Ir]
    total = None
    cur_fl = cur_fn = callee = callee_fl = None
    pending = None

    def name(kind, v):
        v = v.strip()
        m = re.match(r"\((\d+)\)\s*(.*)$", v)
        if not m:
            return v
        if m.group(2):
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), m.group(1))

    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                cost = int(line.split()[-1])
                if pending:
                    e = edges.setdefault(pending, [0, 0])
                    e[1] += cost
                    pending = None
                elif cur_fn is not None:
                    self_ir[cur_fn] = self_ir.get(cur_fn, 0) + cost
                continue
            key, _, val = line.partition("=")
            if key == "fl":
                cur_fl = name("fl", val)
            elif key in ("fi", "fe"):
                name("fl", val)
            elif key in ("cfl", "cfi"):
                callee_fl = name("fl", val)
            elif key == "fn":
                cur_fn = name("fn", val)
                fn_file.setdefault(cur_fn, cur_fl)
                callee_fl = None
            elif key == "cfn":
                callee = name("fn", val)
                if callee_fl:
                    fn_file.setdefault(callee, callee_fl)
                callee_fl = None
            elif key == "calls":
                pending = (cur_fn, callee)
                e = edges.setdefault(pending, [0, 0])
                e[0] += int(val.split()[0])
    return total, self_ir, edges, fn_file


def split_harness(path):
    """(total, driver, harness, nvq_poll calls, per-item harness Ir)."""
    total, self_ir, edges, fn_file = parse_callgrind(path)

    def is_harness(fn):
        fl = fn_file.get(fn) or ""
        return any(fl.endswith(h) for h in HARNESS_FILES)

    # The driver's functions: what the API calls reach, up to job.c.
    calls_from = {}
    for (caller, callee) in edges:
        calls_from.setdefault(caller, []).append(callee)
    inside, todo = set(), [f for f in ENTRY]
    while todo:
        f = todo.pop()
        if f in inside or is_harness(f):
            continue
        inside.add(f)
        todo.extend(calls_from.get(f, []))
    driver = polls = 0
    items = {}
    for fn, v in self_ir.items():
        if is_harness(fn):
            items[fn] = items.get(fn, 0) + v
    for (caller, callee), (calls, ir) in edges.items():
        if is_harness(caller) and callee in ENTRY:
            driver += ir
            if callee == "nvq_poll":
                polls += calls
        elif is_harness(callee) and caller in inside:
            driver -= ir  # a callback into job.c: the harness's
        elif is_harness(caller) and not is_harness(callee):
            # what job.c calls that is not the driver: libc, histograms
            items[callee] = items.get(callee, 0) + ir
    return total, driver, total - driver, polls, items


def run_harness(exe, outdir, tag, args):
    out = os.path.join(outdir, "cgh." + tag)
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
           "--callgrind-out-file=" + out, exe] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        sys.exit("bench-cost-harness failed: %s\n%s%s" % (
            " ".join(cmd), p.stdout, p.stderr[-2000:]))
    m = re.search(r"ios (\d+) reaps (\d+) submits (\d+)", p.stdout)
    if not m:
        sys.exit("bench-cost-harness printed no summary: %r" % p.stdout)
    total, driver, harness, polls, items = split_harness(out + "-01")
    ios, reaps = int(m.group(1)), int(m.group(2))
    return {"ios": ios, "reaps": reaps, "submits": int(m.group(3)),
            "total": total, "driver": driver, "harness": harness,
            "polls": polls, "empty": polls - reaps, "items": items}


def measure_harness(exe, outdir, ms1, ms2, stall1, stall2):
    # for a time, as nvq-perf's default job (--time): the I/O counts are
    # what the runs report
    a = run_harness(exe, outdir, "a", ["--ms", str(ms1)])
    b = run_harness(exe, outdir, "b", ["--ms", str(ms2)])
    s1 = run_harness(exe, outdir, "s1", ["--stall-ms", str(stall1)])
    s2 = run_harness(exe, outdir, "s2", ["--stall-ms", str(stall2)])
    de = float(s2["empty"] - s1["empty"])
    if de <= 0:
        sys.exit("the stalled runs made no more empty polls (%d, %d)"
                 % (s1["empty"], s2["empty"]))
    eh = (s2["harness"] - s1["harness"]) / de
    ed = (s2["driver"] - s1["driver"]) / de
    dn = float(b["ios"] - a["ios"])
    dempty = b["empty"] - a["empty"]
    harness = (b["harness"] - a["harness"] - eh * dempty) / dn
    driver = (b["driver"] - a["driver"] - ed * dempty) / dn
    per_item = sorted(((b["items"].get(k, 0) - a["items"].get(k, 0)) / dn,
                       k) for k in set(a["items"]) | set(b["items"]))
    per_item.reverse()
    return {"a": a, "b": b, "s1": s1, "s2": s2, "eh": eh, "ed": ed,
            "harness": harness, "driver": driver, "per_item": per_item,
            "empty_per_io": dempty / dn,
            "batch": dn / float(b["submits"] - a["submits"])}


def report_harness(r):
    a, b = r["a"], r["b"]
    print("== nvq-perf's harness (tools/perf/job.c), default job: 4 KiB "
          "random reads, QD32, poll, stamps on")
    print("  thread 1 Ir: %d I/Os %d (driver %d, polls %d, empty %d), "
          "%d I/Os %d (driver %d, polls %d, empty %d)" % (
              a["ios"], a["total"], a["driver"], a["polls"], a["empty"],
              b["ios"], b["total"], b["driver"], b["polls"], b["empty"]))
    print("  one empty poll: harness %.1f, driver %.1f instructions (two "
          "stalled runs: %d and %d empty polls)" % (
              r["eh"], r["ed"], r["s1"]["empty"], r["s2"]["empty"]))
    print("  %.2f empty polls and %.3f submission batches per I/O (%.1f "
          "I/Os a batch)" % (r["empty_per_io"], 1 / r["batch"], r["batch"]))
    print("  marginal, without empty polls: harness %.1f, driver %.1f "
          "instructions / I/O" % (r["harness"], r["driver"]))
    print("  where the harness's go (marginal Ir per I/O: job.c's "
          "functions, self, and what they call outside the driver):")
    for v, f in r["per_item"]:
        if v < 0.5:
            continue
        print("    %7.1f  %s" % (v, f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--n1", type=int, default=50000)
    ap.add_argument("--n2", type=int, default=250000)
    ap.add_argument("--empty", type=int, default=100000)
    ap.add_argument("--keep", help="keep the callgrind files here")
    ap.add_argument("--harness-ms1", type=int, default=400,
                    help="the harness's short run, ms (under valgrind)")
    ap.add_argument("--harness-ms2", type=int, default=2000)
    ap.add_argument("--harness-only", action="store_true",
                    help="measure nvq-perf's harness only")
    o = ap.parse_args()
    exe = os.path.join(o.build, "bench", "bench-cost")
    hexe = os.path.join(o.build, "tools", "perf", "bench-cost-harness")
    if not os.access(exe, os.X_OK):
        sys.exit("%s not built" % exe)
    outdir = o.keep or tempfile.mkdtemp(prefix="nvq-cost.")
    os.makedirs(outdir, exist_ok=True)
    if o.harness_only:
        h = measure_harness(hexe, outdir, o.harness_ms1, o.harness_ms2,
                            200, 1000)
        report_harness(h)
        print("SUMMARY nvq-perf harness instructions/I/O: %.0f (driver "
              "under its loop: %.0f)" % (h["harness"], h["driver"]))
        cleanup(o, outdir)
        return
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
    h = None
    if os.access(hexe, os.X_OK):
        h = measure_harness(hexe, outdir, o.harness_ms1, o.harness_ms2,
                            200, 1000)
        report_harness(h)
    print("SUMMARY driver instructions/I/O: shared queue %.0f, exclusive "
          "queue %.0f (target <= %d; with the harness: %.0f, %.0f)" % (
              results[0]["driver"], results[1]["driver"], TARGET,
              results[0]["cost"], results[1]["cost"]))
    if h:
        print("SUMMARY nvq-perf harness instructions/I/O: %.0f (target < "
              "%d; the driver under its loop: %.0f)" % (
                  h["harness"], HARNESS_TARGET, h["driver"]))
    else:
        print("SUMMARY nvq-perf harness: %s not built" % hexe)
    cleanup(o, outdir)


def cleanup(o, outdir):
    if not o.keep:
        for f in os.listdir(outdir):
            os.unlink(os.path.join(outdir, f))
        os.rmdir(outdir)


if __name__ == "__main__":
    main()
