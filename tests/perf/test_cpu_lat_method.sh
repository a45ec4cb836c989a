#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf --cpu-lat-method and the CPU accounting: the method the library
# chose and why, what the waiters did (polls), and CPU time per I/O of the
# process and of the machine, in the JSON, the text and the compare table.
# Waiter polling needs neither root nor cpuidle, so this runs anywhere.
# Nothing here is timing: only counts that must be non-zero.
PERF=${1:?usage: test_cpu_lat_method.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

run() {
	out=$1
	shift
	if ! "$PERF" "$@" >"$dir/$out" 2>"$dir/err"; then
		echo "FAIL: nvq-perf $*:" >&2
		cat "$dir/err" >&2
		fail=1
		return 1
	fi
}

# Wait mode with waiter polling: the job thread polls while the queue is
# active, and the run says so.
if run poll.json -d emu:size=64M --qd 1 --time 300ms --mode wait \
	--cpu-lat-limit-us 0 --cpu-lat-method poll --json; then
	python3 - "$dir/poll.json" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["read"]["total_ios"] > 0
c = j["cpu_per_io_ns"]
assert c["process"] > 0 and c["machine"] > 0, c
assert j["nvq"]["machine_cpu"]["cpus"] >= 1
assert j["job options"]["cpu_lat_method"] == "poll"
q = j["cpu_lat"]
assert q["method_requested"] == "poll", q
assert q["method"] == "poll", q
assert q["method_why"], q
p = q["poll"]
for k in ("polls", "poll_ns", "sleeps", "sleep_ns", "overslept", "est_ns",
          "idle_sleeps", "masked"):
    assert k in p, k
assert p["polls"] > 0 and p["poll_ns"] > 0, p
assert q["queues"][0]["poll"]["polls"] == p["polls"]
if "wake" in q:
    assert q["wake"]["samples"] > 0 and q["wake"]["source"], q["wake"]
PY
fi

# Poll mode: no queue has QoS state, so there are no waiter counters, but
# the CPU figures are there.
if run pollmode.json -d emu:size=16M --qd 2 --time 100ms --mode poll \
	--cpu-lat-limit-us 0 --cpu-lat-method poll --json; then
	python3 - "$dir/pollmode.json" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert "poll" not in j["cpu_lat"] and j["cpu_lat"]["queues"] == []
assert j["cpu_per_io_ns"]["process"] > 0
PY
fi

# Every method inside --compare, each configuration with what it asked.
sets='--cpu-lat-method auto;--cpu-lat-method cpuidle;'
sets="$sets--cpu-lat-method poll;--cpu-lat-method hybrid --mode thread"
if run cmp.json -d emu:size=16M --qd 1 --time 100ms --mode wait \
	--cpu-lat-limit-us 0 --rounds 1 --json --compare "$sets"; then
	python3 - "$dir/cmp.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
want = ["auto", "cpuidle", "poll", "hybrid"]
names = ("cpuidle", "poll", "hybrid", "none")
for j, w in zip(d["jobs"], want):
    q = j["cpu_lat"]
    assert j["job options"]["cpu_lat_method"] == w
    assert q["method_requested"] == w, (w, q)
    assert q["method"] in names, q
    assert j["cpu_per_io_ns"]["process"] > 0
cfgs = d["compare"]["configs"]
assert len(cfgs) == 4
for c in cfgs:
    assert c["cpu_lat_method"] in names, c
    assert c["median"]["cpu_per_io_ns"]["process"] > 0, c
assert cfgs[2]["cpu_lat_method"] == "poll"
PY
fi

# Text: the method line, the waiters and the CPU per I/O.
if run poll.txt -d emu:size=16M --qd 1 --time 100ms --mode wait \
	--cpu-lat-limit-us 0 --cpu-lat-method poll; then
	for want in "method poll (requested poll)" "waiters: polls=" \
		"cpu/io       : process " ", machine "; do
		grep -q -F -e "$want" "$dir/poll.txt" || {
			echo "FAIL: the text report lacks '$want':" >&2
			cat "$dir/poll.txt" >&2
			fail=1
		}
	done
fi

# The compare table: CPU per I/O columns and the method in the cpu-lat cell.
if run cmp.txt -d emu:size=16M --qd 1 --time 100ms --mode wait \
	--cpu-lat-limit-us 0 --rounds 1 \
	--compare '--cpu-lat-method poll;--cpu-lat-limit-us off'; then
	for want in "pcpu/io" "mcpu/io" "0/poll" "cpu-lat/method"; do
		grep -q -F -e "$want" "$dir/cmp.txt" || {
			echo "FAIL: the compare table lacks '$want':" >&2
			cat "$dir/cmp.txt" >&2
			fail=1
		}
	done
fi
exit $fail
