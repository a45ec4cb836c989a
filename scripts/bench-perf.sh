#!/bin/sh
# SPDX-License-Identifier: MIT
# Every performance figure of docs/perf.md in one run: emulator throughput,
# queue pair memory, driver instructions per I/O (callgrind), the
# split-lock comparison (sq_lock/cq_lock, docs/design.md) and the media profiles with device time
# vs host overhead. Timing figures depend on the machine being quiet: each
# is printed with the load average at its start. Instruction counts do not.
#
# usage: scripts/bench-perf.sh [BUILD_DIR]   (default: build-bench, a
#        release tree; made if absent)
#   ROUNDS=N   rounds of the split-lock comparison (default 5)
#   TIME=DUR   time per run (default 2s)
set -eu

B=${1:-build-bench}
ROUNDS=${ROUNDS:-5}
TIME=${TIME:-2s}
cd "$(dirname "$0")/.."

if [ ! -f "$B/build.ninja" ]; then
	meson setup "$B" --buildtype=release >/dev/null
fi
ninja -C "$B" >/dev/null
PERF=$B/tools/perf/nvq-perf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load() {
	echo "[load average: $(cut -d' ' -f1-3 /proc/loadavg)]"
}

echo "== nvq performance, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs," \
	"$(uname -r)"
load

echo
echo "== 1. Emulated controller alone: 4 KiB reads, QD32, zero latency" \
	"(bench/emu.c, 3 runs of 3 s)"
for i in 1 2 3; do
	load
	"$B/bench/bench-emu" 3 32 "size=64M,idle_spin=1ms"
done

echo
echo "== 2. Memory of one I/O queue pair at the default depth"
"$B/bench/bench-qpmem" 256

echo
echo "== 3. Driver instructions per I/O (callgrind; not timing: load" \
	"does not matter)"
python3 bench/cost.py "$B"

# $1 title, rest: nvq-perf options (--json is added). Prints per-round
# IOPS and clat, the medians and the IOPS ratio of A to B.
compare() {
	title=$1
	shift
	echo
	echo "== $title"
	echo "   nvq-perf $*"
	load
	"$PERF" --json "$@" >"$tmp/cmp.json"
	python3 - "$tmp/cmp.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
jobs = j["jobs"]
cfgs = j["compare"]["configs"]
print("   %-4s %-20s %10s %10s %10s %10s" %
      ("cfg", "options", "IOPS", "clat p50", "clat p99", "clat p99.9"))
for job in jobs:
    r = job["read"]
    pct = r["clat_ns"].get("percentile", {})
    print("   %-4s %-20s %10.0f %8.1fus %8.1fus %8.1fus" % (
        job["jobname"].split(":")[0], job["nvq"]["config"], r["iops"],
        pct.get("50.000000", 0) / 1e3, pct.get("99.000000", 0) / 1e3,
        pct.get("99.900000", 0) / 1e3))
for c in cfgs:
    m = c["median"]
    print("   %-4s %-20s %10.0f %8.1fus %8.1fus %8.1fus  (median of %d)" % (
        c["name"], c["options"], m["iops"], m["clat_p50_ns"] / 1e3,
        m["clat_p99_ns"] / 1e3, m["clat_p99.9_ns"] / 1e3, c["runs"]))
a, b = cfgs[0]["median"]["iops"], cfgs[1]["median"]["iops"]
print("   IOPS ratio %s / %s = %.2f" % (cfgs[0]["options"],
                                       cfgs[1]["options"], a / b if b else 0))
PY
}

compare "4. Split locks vs one lock: 4 threads on one shared queue, completion thread (THREAD mode)" \
	-d emu:size=64M --shared-queue --threads 4 --qd 16 --mode thread \
	--time "$TIME" --rounds "$ROUNDS" \
	--compare "--lock split;--lock single"
compare "4b. The same, polled: 2 threads submit and poll one shared queue" \
	-d emu:size=64M --shared-queue --threads 2 --qd 16 --mode poll \
	--time "$TIME" --rounds "$ROUNDS" \
	--compare "--lock split;--lock single"

echo
echo "== 5. Media profiles: QD1 4 KiB random reads; clat split into device" \
	"time and host overhead (emulator stamps)"
printf '   %-8s %-6s %9s %10s %10s %10s %10s %10s %10s\n' media mode IOPS \
	"clat p50" "clat p99" "dev p50" "dev p99" "host p50" "host p99"
for lat in optane nand; do
	for mode in poll wait thread; do
		"$PERF" --json -d "emu:size=64M,lat=$lat" --mode "$mode" \
			--qd 1 --time "$TIME" >"$tmp/m.json"
		python3 - "$tmp/m.json" "$lat" "$mode" "$(load)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
p = lambda h, k: h.get("percentile", {}).get(k, 0) / 1e3
c, d, h = r["clat_ns"], r["device_ns"], r["host_ns"]
print("   %-8s %-6s %9.0f %8.1fus %8.1fus %8.1fus %8.1fus %8.1fus %8.1fus %s"
      % (sys.argv[2], sys.argv[3], r["iops"], p(c, "50.000000"),
         p(c, "99.000000"), p(d, "50.000000"), p(d, "99.000000"),
         p(h, "50.000000"), p(h, "99.000000"), sys.argv[4]))
PY
	done
done
echo
load
