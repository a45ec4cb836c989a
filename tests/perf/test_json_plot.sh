#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf --json is accepted by `python3 -m json.tool` and has fio's
# field names and exact I/O counts; --plot writes an SVG that python3's
# xml.etree parses, with one labelled curve per compared configuration.
PERF=${1:?usage: test_json_plot.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

# A count-based run: the totals are exact.
if ! "$PERF" -d emu:size=16M --ios 500 --threads 2 --qd 4 --rw randrw \
	--rwmix 70 --json >"$dir/run.json" 2>"$dir/err"; then
	echo "FAIL: json run failed:" >&2
	cat "$dir/err" >&2
	exit 1
fi
python3 -m json.tool "$dir/run.json" >/dev/null || {
	echo "FAIL: json.tool rejects the --json output" >&2
	fail=1
}
python3 - "$dir/run.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
r, w = j["read"], j["write"]
for dd in (r, w):
    for k in ("io_bytes", "bw_bytes", "iops", "runtime", "total_ios"):
        assert k in dd, k
    for l in ("slat_ns", "clat_ns", "lat_ns"):
        for k in ("min", "max", "mean", "stddev", "N"):
            assert k in dd[l], (l, k)
        # exact, recorded for every I/O
        assert dd[l]["N"] == dd["total_ios"], (l, dd[l]["N"])
        assert dd[l]["min"] <= dd[l]["mean"] <= dd[l]["max"], (l, dd[l])
    # fio's default: percentiles of clat only
    c = dd["clat_ns"]
    assert "99.000000" in c["percentile"]
    assert c["min"] <= c["percentile"]["50.000000"] <= c["max"]
    assert "percentile" not in dd["slat_ns"] and "percentile" not in dd["lat_ns"]
    # lat = slat + clat for every I/O: so are the means
    tol = 1e-6 * dd["lat_ns"]["mean"] + 1
    assert abs(dd["lat_ns"]["mean"] - dd["slat_ns"]["mean"] -
               c["mean"]) <= tol, (dd["lat_ns"], dd["slat_ns"], c)
n = r["total_ios"] + w["total_ios"]
assert n == 1000, "expected 2 threads x 500 I/Os, got %d" % n
assert r["io_bytes"] == r["total_ios"] * 4096
assert r["total_ios"] > w["total_ios"] > 0, (r["total_ios"], w["total_ios"])
assert j["job options"]["rw"] == "randrw"
PY

# Compare mode with a plot: one curve and one label per configuration.
if ! "$PERF" -d emu:size=16M --time 200ms --qd 2 --json \
	--compare '--mode poll;--mode wait;--mode thread' --rounds 2 \
	--plot "$dir/cdf.svg" >"$dir/cmp.json" 2>"$dir/err"; then
	echo "FAIL: compare run failed:" >&2
	cat "$dir/err" >&2
	exit 1
fi
python3 -m json.tool "$dir/cmp.json" >/dev/null || fail=1
python3 - "$dir/cmp.json" "$dir/cdf.svg" <<'PY' || fail=1
import json, sys, xml.etree.ElementTree as E
d = json.load(open(sys.argv[1]))
assert len(d["jobs"]) == 6, len(d["jobs"])
names = [j["jobname"] for j in d["jobs"]]
assert names[0].startswith("A1") and names[1].startswith("B1"), names
assert names[3].startswith("A2"), names
cfgs = d["compare"]["configs"]
assert [c["name"] for c in cfgs] == ["A", "B", "C"]
assert all(c["runs"] == 2 and c["median"]["iops"] > 0 for c in cfgs)
# --time ends the I/O of a healthy device: nothing given up on (each
# mode's hot path stops at the deadline, not the monitor's grace)
for j in d["jobs"]:
    assert j["nvq"]["stuck"]["ios"] == 0, (j["jobname"], j["nvq"]["stuck"])
    assert j["read"]["drop_ios"] == 0, j["read"]
ns = "{http://www.w3.org/2000/svg}"
svg = E.parse(sys.argv[2]).getroot()
assert svg.tag == ns + "svg"
assert len(svg.findall(".//" + ns + "polyline")) == 3
text = " ".join(t.text or "" for t in svg.iter(ns + "text"))
for label in ("A: --mode poll", "B: --mode wait", "C: --mode thread"):
    assert label in text, (label, text)
PY

# The text form of a compare run has a median row per configuration.
"$PERF" -d emu:size=16M --ios 200 --qd 2 --compare '--qd 1;--qd 2' \
	--rounds 1 >"$dir/cmp.txt" 2>"$dir/err" || fail=1
for want in "A      median" "B      median" "clat max"; do
	grep -q -e "$want" "$dir/cmp.txt" || {
		echo "FAIL: compare table lacks '$want'" >&2
		cat "$dir/cmp.txt" >&2
		fail=1
	}
done
exit $fail
