#!/bin/sh
# SPDX-License-Identifier: MIT
# The emulator's RAM media on transparent huge pages (thp=, default on):
# writing 64 MiB must take far fewer page faults than on 4 KiB pages
# (thp=0), counted by nvq-perf's JSON "minf" (getrusage of the process,
# so the device thread's faults count). A fault count, not a timing.
# Skips (77) where the kernel offers no THP for madvise().
PERF=${1:?usage: test_thp.sh PATH/TO/nvq-perf}
thp=/sys/kernel/mm/transparent_hugepage/enabled
if ! grep -qE '\[(always|madvise)\]' "$thp" 2>/dev/null; then
	echo "SKIP: no transparent huge pages for madvise ($thp)"
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

minf() {
	"$PERF" -d "emu:size=64M,thp=$1" --rw write --bs 128k --qd 4 \
		--size 64M --ios 512 --json >"$dir/out.json" 2>"$dir/err" || {
		echo "FAIL: nvq-perf with thp=$1 failed:"
		cat "$dir/err"
		exit 1
	}
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["jobs"][0]["minf"])' "$dir/out.json"
}

small=$(minf 0)
huge=$(minf 1)
echo "minor faults writing 64 MiB: thp=0 $small, thp=1 $huge"
# 16384 pages of 4 KiB against 32 of 2 MiB, plus the run's own.
if [ "$small" -lt 16384 ]; then
	echo "FAIL: thp=0 took $small faults for 16384 pages"
	exit 1
fi
if [ $((huge * 4)) -ge "$small" ]; then
	echo "FAIL: thp=1 took $huge faults, not far below thp=0's $small"
	exit 1
fi
echo "ok"
