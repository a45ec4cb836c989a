#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf in every completion mode, time- and count-based, with ramp,
# several threads, large I/Os split by the driver and a sequential
# workload: runs succeed and count exactly what they should.
PERF=${1:?usage: test_modes.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

check_ios() {
	want=$1
	shift
	if ! "$PERF" --json "$@" >"$dir/out.json" 2>"$dir/err"; then
		echo "FAIL: nvq-perf $*:" >&2
		cat "$dir/err" >&2
		fail=1
		return
	fi
	python3 - "$dir/out.json" "$want" <<'PY' || {
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
n = j["read"]["total_ios"] + j["write"]["total_ios"]
want = int(sys.argv[2])
if want >= 0:
    assert n == want, "total_ios %d, expected %d" % (n, want)
else:
    assert n > 0, "no I/O measured"
for d in ("read", "write"):
    if j[d]["total_ios"]:
        c = j[d]["clat_ns"]
        assert c["min"] <= c["mean"] <= c["max"], c
        assert j[d]["runtime"] >= 0
PY
		echo "FAIL: nvq-perf $*" >&2
		fail=1
	}
}

for mode in poll wait thread; do
	check_ios 400 -d emu:size=8M --mode $mode --ios 200 --threads 2 --qd 8
	# 500 ms: some I/O is measured even when a loaded machine stalls a while.
	check_ios -1 -d emu:size=8M --mode $mode --time 500ms --ramp 100ms \
		--qd 4
	# 256 KiB with mdts=2 (16 KiB): the driver splits each I/O in 16.
	check_ios 40 -d emu:size=8M,mdts=2 --mode $mode --ios 40 --bs 256k \
		--qd 4 --rw randwrite
done
check_ios 100 -d emu:size=8M --exclusive --ios 100 --rw write --qd 4
check_ios 64 -d emu:size=8M --rw read --ios 64 --offset 1M --size 1M --qd 2
check_ios 50 -d emu:size=8M,lbads=9 --bs 512 --ios 50 --qd 1 --mode wait
exit $fail
