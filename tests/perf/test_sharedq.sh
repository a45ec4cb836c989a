#!/bin/sh
# SPDX-License-Identifier: MIT
# The split-lock comparison setup: several threads on one shared queue,
# split and single lock, in poll, wait and thread mode. Every run counts
# exactly the I/Os asked for, reports the lock mode, and on the emulated
# controller splits clat into device time and host overhead.
PERF=${1:?usage: test_sharedq.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

run() {
	lock=$1
	want=$2
	shift 2
	if ! "$PERF" --json --lock "$lock" "$@" >"$dir/out.json" \
		2>"$dir/err"; then
		echo "FAIL: nvq-perf --lock $lock $*:" >&2
		cat "$dir/err" >&2
		fail=1
		return
	fi
	python3 - "$dir/out.json" "$want" "$lock" <<'PY' || {
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
want, lock = int(sys.argv[2]), sys.argv[3]
n = j["read"]["total_ios"] + j["write"]["total_ios"]
assert n == want, "total_ios %d, expected %d" % (n, want)
assert j["job options"]["lock"] == lock, j["job options"]
assert j["job options"].get("shared_queue") == "1", j["job options"]
assert j["nvq"]["io_queues"] == 1, j["nvq"]
# One I/O in devtime_sampled_every, counted per recording thread over
# both directions (the first one of each included), got its emulator
# stamps split, and every stamp was usable: each sample's host + device
# time is its clat, or host alone when the CQE was posted before the
# submit call returned (device time 0; frequent on a loaded machine),
# and host never exceeds the whole latency. So no sample exceeds the
# exact maxima of the I/Os it was taken from.
every = j["nvq"]["devtime_sampled_every"]
samples = 0
for d in ("read", "write"):
    if not j[d]["total_ios"]:
        continue
    dev, host, clat = j[d]["device_ns"], j[d]["host_ns"], j[d]["clat_ns"]
    lat = j[d]["lat_ns"]
    assert dev["N"] == host["N"], (dev, host)
    samples += dev["N"]
    assert dev["max"] <= clat["max"] and host["max"] <= lat["max"], \
        (dev, host, clat, lat)
    assert clat["N"] == lat["N"] == j[d]["total_ios"], (clat, lat)
# 3 job threads, and as many completion threads in --mode thread
assert n // every <= samples <= n // every + 6, (samples, n, every)
PY
		echo "FAIL: nvq-perf --lock $lock $*" >&2
		fail=1
	}
}

for mode in poll wait thread; do
	for lock in split single; do
		run $lock 600 -d emu:size=8M --mode $mode --shared-queue \
			--threads 3 --qd 8 --ios 200
	done
done
# Mixed reads and writes with a media model, and a wait mode run whose
# queue must hold every thread's requests (3 x 100 > 256 entries).
run single 300 -d emu:size=8M,lat=optane --shared-queue --threads 3 \
	--qd 4 --ios 100 --rw randrw
run split 600 -d emu:size=8M --mode wait --shared-queue --threads 3 \
	--qd 100 --ios 200
exit $fail
