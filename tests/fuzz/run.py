#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run one libFuzzer target for a bounded time (docs/fuzzing.md).

usage: run.py [--fresh] TARGET SEEDS WORKDIR SECONDS

New inputs go to WORKDIR/corpus, never to SEEDS (the repository's seed
corpus, only read); crash, leak and timeout reproducers go to
WORKDIR/crashes. --fresh starts from the seeds alone, so that a bounded
run does not first spend its time replaying what earlier runs found.
FUZZ_SECONDS in the environment overrides SECONDS.

Exit status 0 when the target ran out its time with no finding, 1 for
anything else (libFuzzer's own exit code for a finding is 77 by default,
which meson would count as a skip). The last line names the number of
executions; a finding is printed with the reproducer's path and the
command that replays it.
"""
import os
import re
import shutil
import subprocess
import sys


def main():
    args = sys.argv[1:]
    fresh = args and args[0] == "--fresh"
    if fresh:
        args = args[1:]
    if len(args) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    target, seeds, work, seconds = args
    seconds = os.environ.get("FUZZ_SECONDS", seconds)
    name = os.path.basename(target)
    corpus = os.path.join(work, "corpus")
    crashes = os.path.join(work, "crashes")
    if fresh:
        shutil.rmtree(corpus, ignore_errors=True)
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(crashes, exist_ok=True)
    before = set(os.listdir(crashes))

    cmd = [target, f"-max_total_time={seconds}", "-timeout=10",
           "-max_len=4096", "-rss_limit_mb=2048", "-print_final_stats=1",
           f"-artifact_prefix={crashes}/", corpus, seeds]
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    out = proc.stdout
    # The whole log is long (a line per new coverage); keep its tail and
    # every error report.
    lines = out.splitlines()
    sys.stdout.write("\n".join(lines[-200:]) + "\n")

    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
    execs = m.group(1) if m else "?"
    m = re.search(r"stat::average_exec_per_sec:\s*(\d+)", out)
    rate = m.group(1) if m else "?"
    found = sorted(set(os.listdir(crashes)) - before)
    for f in found:
        path = os.path.join(crashes, f)
        print(f"{name}: reproducer {path}")
        print(f"{name}: replay with: {target} {path}")
    ncorpus = len(os.listdir(corpus))
    if proc.returncode == 0 and not found:
        print(f"{name}: {execs} executions in {seconds} s ({rate}/s), "
              f"corpus {ncorpus} new inputs, no findings")
        return 0
    print(f"{name}: FAILED (exit status {proc.returncode}) after {execs} "
          "executions")
    return 1


if __name__ == "__main__":
    sys.exit(main())
