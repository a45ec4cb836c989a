#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf --json against fio's own JSON for the same job (emu:size=64M,
# randread 4k, QD4, 1 s): every key fio writes in a job object, at any
# depth, is in nvq-perf's too, with a value of the same JSON type, so a
# tool that reads fio's JSON reads nvq-perf's without special cases.
# nvq-perf's own extras are fine. Only the keys of ALLOW below may be
# missing, each for a reason. No timing is asserted.
#
# usage: test_fio_keys.sh PATH/TO/nvq-perf
# Environment (tests/perf/meson.build): FIO, NVQ_FIO_ENGINE (empty when
# the engine was not built: fio then runs the same job on its null
# engine, whose JSON has the same job keys), NVQ_FIO_PRELOAD (the
# sanitizer runtime an instrumented engine needs loaded first).
# Exit 0 pass, 1 fail, 77 skip (only when fio is not installed).
PERF=${1:?usage: test_fio_keys.sh PATH/TO/nvq-perf}

if [ -z "${FIO:-}" ] || [ ! -x "$FIO" ]; then
	echo "SKIP: fio is not installed (apt-get install fio)"
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

# The same job for both. fio's time_based keeps it running for the whole
# runtime, as nvq-perf's --time does.
job="--rw=randread --bs=4k --iodepth=4 --runtime=1s --time_based=1"
if [ -n "${NVQ_FIO_ENGINE:-}" ]; then
	engine="--ioengine=external:$NVQ_FIO_ENGINE --filename=emu.size=64M"
	preload=${NVQ_FIO_PRELOAD:-}
else
	echo "note: the nvq fio engine was not built" \
		"(${NVQ_FIO_SKIP:-no fio source}); fio runs the job on its" \
		"null engine"
	engine="--ioengine=null --size=64M"
	preload=
fi

# fio's own leaks are not ours: suppress the frames in fio's binary only.
printf 'leak:%s\n' "$FIO" >"$dir/lsan.supp"
# shellcheck disable=SC2086
if ! (
	if [ -n "$preload" ]; then
		LD_PRELOAD=$preload
		export LD_PRELOAD
	fi
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2"
	LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$dir/lsan.supp"
	export ASAN_OPTIONS LSAN_OPTIONS
	exec "$FIO" --name=keys --thread=1 $engine $job --output-format=json
) >"$dir/fio.json" 2>"$dir/fio.err"; then
	echo "FAIL: fio failed:" >&2
	cat "$dir/fio.err" >&2
	exit 1
fi
if ! "$PERF" -d emu:size=64M --rw randread --bs 4k --qd 4 --time 1s \
	--json >"$dir/perf.json" 2>"$dir/perf.err"; then
	echo "FAIL: nvq-perf failed:" >&2
	cat "$dir/perf.err" >&2
	exit 1
fi

python3 - "$dir/fio.json" "$dir/perf.json" <<'PY'
import json, sys

# Keys of fio's job object (paths from it; the top-level object is
# checked the same way) that nvq-perf may lack, each with the reason. A
# "prefix.*" entry covers everything below prefix.
ALLOW = {
    # fio echoes the options of the job as they were given (name=,
    # thread=, ioengine=external:PATH, time_based=, ...); nvq-perf writes
    # its own configuration under fio's names (rw, bs, iodepth, runtime,
    # ...) and its own knobs. The object itself must be there.
    "job options.*":
        "the options the job was given, not a fixed key set",
}


def allowed(path):
    for a in ALLOW:
        if a.endswith(".*") and path.startswith(a[:-1]):
            return True
        if path == a:
            return True
    return False


def kind(v):
    # JSON types; int and float apart, as fio writes them
    return type(v).__name__


problems = []


def walk(f, n, path):
    for k, v in f.items():
        p = path + k
        if k not in n:
            if not allowed(p):
                problems.append("missing: %s (fio: %r)" % (p, v))
            continue
        if kind(v) != kind(n[k]):
            problems.append("type of %s: fio %s, nvq-perf %s (%r)" % (
                p, kind(v), kind(n[k]), n[k]))
            continue
        if isinstance(v, dict):
            walk(v, n[k], p + ".")


fio = json.load(open(sys.argv[1]))
perf = json.load(open(sys.argv[2]))
top_f = {k: v for k, v in fio.items() if k != "jobs"}
top_n = {k: v for k, v in perf.items() if k != "jobs"}
walk(top_f, top_n, "")
assert len(fio["jobs"]) == 1 and len(perf["jobs"]) == 1
walk(fio["jobs"][0], perf["jobs"][0], "")

# The percentiles are fio's 17, keyed as fio keys them.
want = ["%f" % p for p in (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95,
                           99, 99.5, 99.9, 99.95, 99.99)]
got = list(perf["jobs"][0]["read"]["clat_ns"]["percentile"])
if got != want:
    problems.append("clat_ns.percentile keys %r, expected %r" % (got, want))
assert list(fio["jobs"][0]["read"]["clat_ns"]["percentile"]) == want

j = perf["jobs"][0]
# Distributions that are measured add up to 100 % (each bucket with an
# I/O shows at least 0.01 %, so a little more is fine).
for key in ("iodepth_level", "iodepth_submit", "iodepth_complete"):
    s = sum(j[key].values())
    if not 99.5 <= s <= 101:
        problems.append("%s sums to %.3f %%: %r" % (key, s, j[key]))
s = sum(sum(j[k].values()) for k in ("latency_ns", "latency_us",
                                     "latency_ms"))
if not 99.5 <= s <= 101:
    problems.append("latency_ns/us/ms sum to %.3f %%" % s)
# QD4: every I/O left its queue at depth 4 at most
if j["iodepth_level"]["8"] or j["iodepth_level"][">=64"]:
    problems.append("iodepth_level beyond --qd 4: %r" % j["iodepth_level"])
if j["read"]["total_ios"] <= 0 or j["error"] != 0:
    problems.append("no I/O or an error: %r" % j["read"]["total_ios"])

if problems:
    print("FAIL: nvq-perf's JSON is not fio's:", file=sys.stderr)
    for p in problems:
        print("  " + p, file=sys.stderr)
    sys.exit(1)
print("ok: fio's keys all present (%d allowed to differ: %s)" % (
    len(ALLOW), ", ".join(sorted(ALLOW))))
PY
