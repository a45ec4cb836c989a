#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf's QoS options end to end, on a fake sysfs tree (NVQ_SYSFS_ROOT,
# so no real file is touched): bad values exit 2 naming the option; a
# thread-mode run with --cpu-lat-limit-us 0 reports one queue that applied
# the limit, on the CPU that ran the completions, and leaves every file as
# it found it; "auto" on a haltpoll table picks 0 and says why; the
# options work inside --compare sets; poll mode needs no limit.
PERF=${1:?usage: test_perf_qos.sh PATH/TO/nvq-perf}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
err=$tmp/err

ncpus=$(getconf _NPROCESSORS_CONF)
root=$tmp/sys
cpu=0
while [ "$cpu" -lt "$ncpus" ]; do
	d=$root/devices/system/cpu/cpu$cpu
	mkdir -p "$d/power" "$d/cpuidle/state0" "$d/cpuidle/state1"
	echo 0 >"$d/power/pm_qos_resume_latency_us"
	echo POLL >"$d/cpuidle/state0/name"
	echo 0 >"$d/cpuidle/state0/latency"
	echo "haltpoll idle" >"$d/cpuidle/state1/name"
	echo 1 >"$d/cpuidle/state1/latency"
	cpu=$((cpu + 1))
done
mkdir -p "$root/devices/system/cpu/cpuidle"
echo haltpoll >"$root/devices/system/cpu/cpuidle/current_governor"
NVQ_SYSFS_ROOT=$root
export NVQ_SYSFS_ROOT

bad() {
	echo "FAIL: $*" >&2
	fail=1
}

# expect_usage NEEDLE ARGS...: exit status 2 and NEEDLE on stderr
expect_usage() {
	needle=$1
	shift
	"$PERF" "$@" >/dev/null 2>"$err"
	rc=$?
	if [ $rc -ne 2 ]; then
		bad "nvq-perf $* exited $rc, expected 2"
		cat "$err" >&2
	elif ! grep -q -e "$needle" "$err"; then
		bad "nvq-perf $*: message lacks '$needle'"
		cat "$err" >&2
	fi
}

expect_usage --cpu-lat-limit-us --cpu-lat-limit-us fast
expect_usage --cpu-lat-limit-us --cpu-lat-limit-us -5
expect_usage --cpu-lat-limit-us --cpu-lat-limit-us 1000001
expect_usage --cpu-lat-limit-us --cpu-lat-limit-us
expect_usage --cpu-lat-timeout-ms --cpu-lat-timeout-ms 0
expect_usage --cpu-lat-timeout-ms --cpu-lat-timeout-ms 60001
expect_usage --cpu-lat-timeout-ms --cpu-lat-timeout-ms 3s
expect_usage --cpu-lat-limit-us --compare "--cpu-lat-limit-us soon;--qd 2"
"$PERF" --help | grep -q -e --cpu-lat-limit-us ||
	bad "--help does not list --cpu-lat-limit-us"

files_untouched() {
	cpu=0
	while [ "$cpu" -lt "$ncpus" ]; do
		v=$(cat "$root/devices/system/cpu/cpu$cpu/power/pm_qos_resume_latency_us")
		[ "$v" = 0 ] || bad "$1: cpu$cpu left at '$v'"
		cpu=$((cpu + 1))
	done
}

# check_json FILE PYTHON-EXPRESSIONS...: each must hold for jobs[0]
check_json() {
	file=$1
	shift
	python3 - "$file" "$@" <<'EOF' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
j = doc["jobs"][0]
q = j["cpu_lat"]
c = j["completion_cpu"]
for expr in sys.argv[2:]:
    if not eval(expr):
        print("FAIL: %s does not hold: cpu_lat=%s completion_cpu=%s"
              % (expr, q, c), file=sys.stderr)
        sys.exit(1)
EOF
}

# Limit 0 on a thread-mode queue: applied, released at the end.
if "$PERF" -d emu:size=1M,lat=100us --mode thread --qd 1 --ios 300 \
	--cpu-lat-limit-us 0 --cpu-lat-timeout-ms 1000 --json >"$out" 2>"$err"; then
	check_json "$out" \
		'q["limit_us"] == 0 and q["effective_us"] == 0' \
		'q["timeout_ms"] == 1000 and q["status"] == ""' \
		'len(q["queues"]) == 1 and q["queues"][0]["qid"] == 1' \
		'q["queues"][0]["applies"] >= 1 and q["queues"][0]["held_ns"] > 0' \
		'c["cpu"] >= 0 and c["share"] > 0.9' \
		'j["job options"]["cpu_lat_limit_us"] == "0"'
else
	bad "thread-mode run with --cpu-lat-limit-us 0 failed"
	cat "$err" >&2
fi
files_untouched "after a thread-mode run"

# auto on a haltpoll table: 0, and the reason names the governor.
if "$PERF" -d emu:size=1M,lat=100us --mode wait --qd 1 --ios 200 \
	--cpu-lat-limit-us auto --json >"$out" 2>"$err"; then
	check_json "$out" \
		'q["limit_us"] == -2 and q["effective_us"] == 0' \
		'"haltpoll" in q["reason"]' \
		'q["queues"][0]["applies"] >= 1'
else
	bad "wait-mode run with --cpu-lat-limit-us auto failed"
	cat "$err" >&2
fi
files_untouched "after a wait-mode run"

# Poll mode: no queue needs a limit; the default is off.
if "$PERF" -d emu:size=1M --mode poll --qd 1 --ios 200 \
	--cpu-lat-limit-us 0 --json >"$out" 2>"$err"; then
	check_json "$out" 'len(q["queues"]) == 0'
else
	bad "poll-mode run failed"
	cat "$err" >&2
fi

# Inside --compare: the text report has the QoS table, one row per run.
if "$PERF" -d emu:size=1M,lat=100us --mode thread --qd 1 --ios 100 \
	--rounds 1 --compare "--cpu-lat-limit-us off;--cpu-lat-limit-us 0" \
	>"$out" 2>"$err"; then
	grep -q "cpu-lat" "$out" || bad "--compare: no cpu-lat column"
	grep -Eq '^A +1 +off ' "$out" || bad "--compare: no row for A (off)"
	grep -Eq '^B +1 +0(/cpuidle)? ' "$out" || bad "--compare: no row for B (0)"
else
	bad "--compare with QoS sets failed"
	cat "$err" >&2
fi
files_untouched "after --compare"

exit $fail
