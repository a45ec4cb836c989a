#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf and fio with the nvq engine side by side on the same job:
# 4 KiB random reads on an emulated controller, QD1 and QD32, mode wait
# and poll, runs alternating between the two tools (A B A B), ROUNDS
# rounds. Prints every run (IOPS, clat p50/p99, the tool's usr/sys, the
# load average before it) and a table of medians with the ratio
# nvq-perf / fio.
#
# CPU columns do not compare: nvq-perf reports its whole process (the
# emulator's device thread included), fio with thread=1 its job thread.
#
# usage: scripts/compare-fio.sh [BUILD_DIR] [ROUNDS] [SECONDS]
#   BUILD_DIR  a release tree with tools and the fio engine (default:
#              build-bench, made if absent)
#   DEV=URI    the device (default emu:size=64M)
set -eu

case ${1:-} in
-h | --help)
	sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
-*)
	echo "compare-fio: unknown option $1 (see --help)" >&2
	exit 2
	;;
esac
B=${1:-build-bench}
ROUNDS=${2:-3}
SECS=${3:-3}
DEV=${DEV:-emu:size=64M}
cd "$(dirname "$0")/.."
command -v fio >/dev/null ||
	{ echo "compare-fio: fio is not installed (apt-get install fio)" >&2
	  exit 1; }
if [ ! -f "$B/build.ninja" ]; then
	meson setup "$B" --buildtype=release -Dtests=false >/dev/null
fi
ninja -C "$B" >/dev/null
PERF=$B/tools/perf/nvq-perf
ENGINE=$B/fio/libnvq_fio.so
[ -f "$ENGINE" ] ||
	{ echo "compare-fio: no fio engine in $B (fio source missing?" \
		"run sh scripts/fio-source.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== nvq-perf vs fio + nvq engine, $(date -u '+%Y-%m-%d %H:%M') UTC," \
	"$(nproc) CPUs, $(uname -r), $(fio --version)"
echo "== $DEV, randread 4k, ${SECS} s per run, $ROUNDS rounds, nvq" \
	"$(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# One run: TOOL MODE QD ROUND -> a line in $tmp/runs
run() {
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	if [ "$1" = nvq-perf ]; then
		"$PERF" -d "$DEV" --rw randread --bs 4k --qd "$3" --mode "$2" \
			--time "${SECS}s" --json >"$tmp/out.json"
	else
		# fio's filename is the URI with ':' escaped.
		fio --name=j --ioengine="external:$ENGINE" \
			--filename="$(echo "$DEV" | sed 's/:/\\:/g')" \
			--rw=randread --bs=4k --iodepth="$3" --mode="$2" \
			--time_based --runtime="$SECS" --thread \
			--output-format=json >"$tmp/out.json" 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; return 1; }
	fi
	python3 - "$tmp/out.json" "$1" "$2" "$3" "$4" "$load" \
		>>"$tmp/runs" <<'PY'
import json, sys
path, tool, mode, qd, rnd, load = sys.argv[1:7]
text = open(path).read()
j = json.loads(text[text.find("{"):])["jobs"][0]
r, p = j["read"], j["read"]["clat_ns"]["percentile"]
print(tool, mode, qd, rnd, "%.0f" % r["iops"], "%.0f" % p["50.000000"],
      "%.0f" % p["99.000000"], "%.1f" % j["usr_cpu"], "%.1f" % j["sys_cpu"],
      load)
PY
}

: >"$tmp/runs"
for mode in wait poll; do
	for qd in 1 32; do
		r=1
		while [ "$r" -le "$ROUNDS" ]; do
			run nvq-perf $mode $qd $r
			run fio $mode $qd $r
			r=$((r + 1))
		done
	done
done

python3 - "$tmp/runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("%-8s %-4s %3s %5s %10s %9s %9s %6s %6s  %s" % ("tool", "mode", "qd",
      "round", "IOPS", "p50 ns", "p99 ns", "usr%", "sys%", "load before"))
for t in rows:
    print("%-8s %-4s %3s %5s %10s %9s %9s %6s %6s  %s" % tuple(t[:9] +
          [" ".join(t[9:])]))
print()
print("medians       nvq-perf IOPS    fio IOPS  nvq-perf/fio  "
      "p50 nvq-perf/fio ns")
for mode in ("wait", "poll"):
    for qd in ("1", "32"):
        def med(tool, col):
            return statistics.median(float(t[col]) for t in rows
                                     if t[:3] == [tool, mode, qd])
        a, b = med("nvq-perf", 4), med("fio", 4)
        print("%-4s QD%-3s  %14.0f %11.0f  %12.2f  %9.0f / %.0f" %
              (mode, qd, a, b, a / b if b else 0, med("nvq-perf", 5),
               med("fio", 5)))
PY
