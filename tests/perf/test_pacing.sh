#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf --think-time and --rate-iops in every completion mode: a paced
# run can never exceed the rate its pauses allow. Only that upper bound is
# checked, which holds on any machine however loaded: a lane's k-th
# submission comes at least (k - 1) think times after the run began, and
# a thread's k-th at least (k - 1) / rate after it. Latencies count from
# the submission, so no pause is in them (not checked: that is timing).
PERF=${1:?usage: test_pacing.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

# paced SPACING_NS PER ARGS...: at most one submission per SPACING_NS for
# each of PER independent pacers (lanes for --think-time, threads for
# --rate-iops); the spacing includes no latency, so the bound is loose.
paced() {
	spacing=$1
	per=$2
	shift 2
	if ! "$PERF" --json "$@" >"$dir/out.json" 2>"$dir/err"; then
		echo "FAIL: nvq-perf $*:" >&2
		cat "$dir/err" >&2
		fail=1
		return
	fi
	python3 - "$dir/out.json" "$spacing" "$per" <<'PY' || {
import json, sys
d = json.load(open(sys.argv[1]))
spacing, per = int(sys.argv[2]), int(sys.argv[3])
for j in d["jobs"]:
    n = j["read"]["total_ios"] + j["write"]["total_ios"]
    assert n > 0, "no I/O measured"
    iops = j["read"]["iops"] + j["write"]["iops"]
    # The busiest pacer made at least ceil(n / per) submissions.
    k = -(-n // per)
    if k >= 2:
        most = n / ((k - 1) * spacing / 1e9)
        assert iops <= most * 1.000001, \
            "%s: %.1f IOPS from %d I/Os, at most %.1f possible" % (
                j["jobname"], iops, n, most)
    for d_ in ("read", "write"):
        c = j[d_]["clat_ns"]
        if j[d_]["total_ios"]:
            assert c["min"] <= c["mean"] <= c["max"], c
PY
		echo "FAIL: nvq-perf $*" >&2
		fail=1
	}
}

for mode in poll wait thread; do
	# QD 1, 2 ms of think time: at most 500 IOPS, however fast the device
	paced 2000000 1 -d emu:size=16M --mode $mode --qd 1 --time 300ms \
		--think-time 2ms
	# four lanes each thinking 1 ms: at most 4000 IOPS
	paced 1000000 4 -d emu:size=16M --mode $mode --qd 4 --time 300ms \
		--think-time 1ms
	# 500 IOPS per thread, two threads, QD 8: the rate decides
	paced 2000000 2 -d emu:size=16M --mode $mode --qd 8 --threads 2 \
		--time 300ms --rate-iops 500
done
# Both at once, a count-based run with a ramp, and a shared queue.
paced 2000000 1 -d emu:size=16M --mode wait --qd 2 --ios 40 \
	--think-time 1ms --rate-iops 500 --ramp 20ms
paced 1000000 6 -d emu:size=16M --mode wait --qd 2 --threads 3 \
	--shared-queue --time 300ms --think-time 1ms

# The job options say what was asked; --compare varies it per configuration.
if "$PERF" -d emu:size=16M --qd 1 --time 100ms --mode wait --rounds 1 \
	--json --compare '--think-time 2ms;--rate-iops 200;--qd 2' \
	>"$dir/cmp.json" 2>"$dir/err"; then
	python3 - "$dir/cmp.json" <<'PY' || fail=1
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
assert len(jobs) == 3, len(jobs)
o = [j["job options"] for j in jobs]
assert o[0]["thinktime"] == "2000us" and "rate_iops" not in o[0], o[0]
assert o[1]["rate_iops"] == "200" and "thinktime" not in o[1], o[1]
assert "thinktime" not in o[2] and "rate_iops" not in o[2], o[2]
for j, most in ((jobs[0], 500), (jobs[1], 200)):
    n = j["read"]["total_ios"]
    if n >= 2:
        assert j["read"]["iops"] <= n / (n - 1) * most * 1.000001, j["read"]
PY
else
	echo "FAIL: paced compare run:" >&2
	cat "$dir/err" >&2
	fail=1
fi

# The text report names the pacing.
"$PERF" -d emu:size=16M --qd 1 --time 50ms --think-time 1ms --rate-iops 100 \
	>"$dir/out.txt" 2>"$dir/err" || fail=1
grep -q "think=1ms, rate=100 IOPS/thread" "$dir/out.txt" || {
	echo "FAIL: the text report lacks the pacing:" >&2
	cat "$dir/out.txt" "$dir/err" >&2
	fail=1
}
exit $fail
