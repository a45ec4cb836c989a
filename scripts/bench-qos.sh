#!/bin/sh
# SPDX-License-Identifier: MIT
# CPU latency QoS measurements (issue 4; results in docs/qos.md). Runs the
# five measurements with nvq-perf --compare on the emulated controller and
# prints their tables, each with its exact command and the load average
# before and after it (timing numbers only mean something on a quiet
# machine).
#
#   1  QD1 4 KiB random reads, limit off / auto / 0 (wait and thread mode)
#   2  throughput: QD32 128 KiB sequential reads, limit off / auto
#   3  cost: zero-latency media, QD32 4 KiB, QoS off / on: IOPS, and
#      instructions per I/O of the submitting thread under callgrind
#   4  timeout: release delay after the I/O stops, idle residency before,
#      during and after
#   5  interrupt mode with QoS versus poll mode: latency and CPU
#   6  QD1 on lat=80us, nand, optane: poll; wait; wait + a limit of 0
#      honoured by cpuidle, by waiter polling, by hybrid (issue 11)
#   7  the same with think time (0.2, 1, 10 ms) between I/Os: CPU per I/O
#      falls back to idle after the timeout
#
# usage: scripts/bench-qos.sh [1 2 3 4 5 6 7 cg] (default: 1-5; cg = the
#        callgrind part of 3 alone)
# environment: BUILD (default build-qos-bench, a release tree with the
#   bench programs), MEDIA (emu media; default lat=nand if the emulator
#   has it, else lat=80us), TIME (per run, default 2s), ROUNDS (default
#   5), CG_IOS1/CG_IOS2 (I/Os of the two callgrind runs, default 20000
#   and 60000).
# Needs root to change the PM QoS files (the limits are the point); the
# callgrind part uses a fake sysfs tree and runs anywhere.
set -eu

case "${1:-}" in
-h | --help)
	sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'
	exit 0
	;;
esac

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-qos-bench}
TIME=${TIME:-2s}
ROUNDS=${ROUNDS:-5}
CG_IOS1=${CG_IOS1:-20000}
CG_IOS2=${CG_IOS2:-60000}
WHAT=${*:-1 2 3 4 5}

if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD" --buildtype=release -Dtests=true >/dev/null
fi
ninja -C "$BUILD" tools/perf/nvq-perf bench/qos-timeout-bench >/dev/null
PERF=$BUILD/tools/perf/nvq-perf
TBENCH=$BUILD/bench/qos-timeout-bench

if [ -z "${MEDIA:-}" ]; then
	if "$PERF" -d emu:lat=nand --qd 1 --ios 1 >/dev/null 2>&1; then
		MEDIA=lat=nand
	else
		MEDIA=lat=80us
	fi
fi
DEV=emu:$MEDIA

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load() {
	cut -d' ' -f1-3 /proc/loadavg
}

# run CMD...: print the command and the load average around it
run() {
	echo "\$ $*"
	echo "(load average before: $(load))"
	"$@"
	echo "(load average after: $(load))"
	echo
}

# run_to FILE CMD...: the same with the command's output going to FILE
run_to() {
	file=$1
	shift
	echo "\$ $* > $(basename "$file")"
	echo "(load average before: $(load))"
	"$@" >"$file"
	echo "(load average after: $(load))"
}

qos_files() {
	for f in /sys/devices/system/cpu/cpu[0-9]*/power/pm_qos_resume_latency_us; do
		[ -r "$f" ] || continue
		c=${f#/sys/devices/system/cpu/}
		printf '%s=%s ' "${c%%/*}" "$(cat "$f")"
	done
	echo
}

echo "== nvq CPU latency QoS benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "kernel $(uname -r), $(nproc) CPUs, cpuidle governor" \
	"$(cat /sys/devices/system/cpu/cpuidle/current_governor 2>/dev/null ||
		cat /sys/devices/system/cpu/cpuidle/current_governor_ro 2>/dev/null ||
		echo '?')"
for s in /sys/devices/system/cpu/cpu0/cpuidle/state*; do
	[ -d "$s" ] || continue
	echo "  cpu0 $(basename "$s"): $(cat "$s/name"), exit latency" \
		"$(cat "$s/latency") us"
done
echo "pm_qos_resume_latency_us before: $(qos_files)"
echo "device $DEV, $TIME per run, $ROUNDS rounds; load average $(load)"
if [ "$(id -u)" != 0 ] && [ -z "${NVQ_SYSFS_ROOT:-}" ]; then
	echo "WARNING: not root: the limits cannot be applied; measurements" \
		"1, 2, 4 and 5 then compare nothing"
fi
echo

m1() {
	echo "== 1. QD1 4 KiB random reads: limit off / auto / 0"
	for mode in wait thread; do
		run "$PERF" -d "$DEV" --rw randread --bs 4k --qd 1 \
			--mode "$mode" --time "$TIME" --rounds "$ROUNDS" \
			--compare "--cpu-lat-limit-us off;--cpu-lat-limit-us auto;--cpu-lat-limit-us 0"
	done
}

m2() {
	echo "== 2. Throughput: QD32 128 KiB sequential reads, limit off / auto"
	run "$PERF" -d "$DEV" --rw read --bs 128k --qd 32 --mode wait \
		--time "$TIME" --rounds "$ROUNDS" \
		--compare "--cpu-lat-limit-us off;--cpu-lat-limit-us auto"
}

# IOPS medians of a --json --compare document, and B/A.
iops_ratio() {
	python3 - "$1" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
cfgs = doc["compare"]["configs"]
for c in cfgs:
    m = c["median"]
    print("  %s (%s): median IOPS %.0f, usr %.1f%%, sys %.1f%%"
          % (c["name"], c["options"], m["iops"], m["usr_cpu"], m["sys_cpu"]))
a, b = cfgs[0]["median"]["iops"], cfgs[1]["median"]["iops"]
print("  IOPS ratio B/A = %.3f" % (b / a if a else 0))
EOF
}

m3() {
	echo "== 3. Cost: zero-latency media, QD32 4 KiB random reads, QoS off / on"
	run_to "$tmp/m3.json" "$PERF" -d emu: --rw randread --bs 4k --qd 32 \
		--mode wait --time "$TIME" --rounds "$ROUNDS" --json \
		--compare "--cpu-lat-limit-us off;--cpu-lat-limit-us 0"
	iops_ratio "$tmp/m3.json"
	echo
	cg
}

# A fake sysfs tree: callgrind counts instructions, not file writes, and
# needs no root that way.
fake_tree() {
	n=$(getconf _NPROCESSORS_CONF)
	i=0
	while [ "$i" -lt "$n" ]; do
		mkdir -p "$tmp/sys/devices/system/cpu/cpu$i/power"
		echo 0 >"$tmp/sys/devices/system/cpu/cpu$i/power/pm_qos_resume_latency_us"
		i=$((i + 1))
	done
}

# cg_run LIMIT IOS: "Ir-of-the-job-thread Ir-in-nvq_queue_post Ir-in-QoS"
cg_run() {
	d=$tmp/cg-$1-$2
	mkdir -p "$d"
	NVQ_SYSFS_ROOT=$tmp/sys valgrind --tool=callgrind \
		--separate-threads=yes --callgrind-out-file="$d/cg.out" \
		"$PERF" -d emu: --rw randread --bs 4k --qd 32 --mode wait \
		--ios "$2" --cpu-lat-limit-us "$1" >"$d/perf.txt" 2>"$d/vg.log"
	# The job thread is the one that ran perf_job_main (the device
	# thread, the QoS timer and main are not counted).
	f=$(grep -l 'perf_job_main$' "$d"/cg.out-* | head -n 1)
	ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$f")
	callgrind_annotate --inclusive=no --threshold=100 "$f" \
		>"$d/fn.txt" 2>/dev/null
	post=$(awk '/[ :]nvq_queue_post[ []/ { gsub(",", "", $1); print $1; exit }' \
		"$d/fn.txt")
	qos=$(awk '/[ :]nvq_qos_/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' \
		"$d/fn.txt")
	echo "$ir ${post:-0} $qos"
}

cg() {
	echo "== 3b. Instructions per I/O (callgrind, submitting thread only)"
	if ! command -v valgrind >/dev/null; then
		echo "valgrind not installed: skipped"
		return
	fi
	fake_tree
	echo "\$ NVQ_SYSFS_ROOT=FAKE valgrind --tool=callgrind" \
		"--separate-threads=yes $PERF -d emu: --rw randread --bs 4k" \
		"--qd 32 --mode wait --ios N --cpu-lat-limit-us {off,0}" \
		"(N = $CG_IOS1, $CG_IOS2)"
	for lim in off 0; do
		set -- $(cg_run "$lim" "$CG_IOS1") $(cg_run "$lim" "$CG_IOS2")
		python3 - "$lim" "$CG_IOS1" "$CG_IOS2" "$@" <<'EOF'
import sys
lim, n1, n2, ir1, post1, qos1, ir2, post2, qos2 = sys.argv[1:]
n = int(n2) - int(n1)
print("  limit %-3s: %.1f instructions per I/O in the job thread "
      "(marginal), %.2f in nvq_queue_post; nvq_qos_* functions: %s "
      "instructions in the whole run of %s I/Os"
      % (lim, (int(ir2) - int(ir1)) / n, (int(post2) - int(post1)) / n,
         qos2, n2))
EOF
	done
	echo "(the job thread submits, sleeps in nvq_wait() and runs the" \
		"callbacks; marginal cost = (Ir(N2) - Ir(N1)) / (N2 - N1))"
	echo
}

m4() {
	echo "== 4. Timeout: release after the I/O stops (timeout 3 ms)"
	for mode in thread wait; do
		run "$TBENCH" dev="$DEV" mode=$mode limit=auto timeout=3 \
			rounds="$ROUNDS"
	done
}

m5() {
	echo "== 5. Interrupt mode with QoS versus poll mode (QD1 4 KiB)"
	run "$PERF" -d "$DEV" --rw randread --bs 4k --qd 1 --time "$TIME" \
		--rounds "$ROUNDS" \
		--compare "--mode wait;--mode wait --cpu-lat-limit-us auto;--mode thread --cpu-lat-limit-us auto;--mode poll"
	echo "(usr/sys include the emulated device's thread; with a limit" \
		"of 0 the completion CPU polls in the kernel's idle loop: its" \
		"POLL residency is CPU burnt outside the process)"
	echo
}

# The five ways to wait, side by side (issue 11): poll mode; wait mode
# without a limit; and a limit of 0 honoured by each method.
METHODS="--mode poll;--mode wait;--mode wait --cpu-lat-limit-us 0 --cpu-lat-method cpuidle;--mode wait --cpu-lat-limit-us 0 --cpu-lat-method poll;--mode wait --cpu-lat-limit-us 0 --cpu-lat-method hybrid"

m6() {
	echo "== 6. QD1 4 KiB random reads: poll / wait / wait + cpuidle," \
		"waiter polling, hybrid (limit 0)"
	for media in ${MEDIA6:-lat=80us lat=nand lat=optane}; do
		run "$PERF" -d "emu:$media,size=64M" --rw randread --bs 4k \
			--qd 1 --time "$TIME" --rounds "$ROUNDS" --compare "$METHODS"
	done
}

m7() {
	echo "== 7. Bursty: the same with think time between I/Os"
	for gap in ${GAPS7:-200us 1ms 10ms}; do
		run "$PERF" -d "emu:${MEDIA7:-lat=80us},size=64M" --rw randread \
			--bs 4k --qd 1 --time "$TIME" --rounds "$ROUNDS" \
			--think-time "$gap" \
			--compare "--mode poll;--mode wait;--mode wait --cpu-lat-limit-us 0 --cpu-lat-method poll;--mode wait --cpu-lat-limit-us 0 --cpu-lat-method hybrid"
	done
}

for w in $WHAT; do
	case $w in
	1) m1 ;;
	2) m2 ;;
	3) m3 ;;
	4) m4 ;;
	5) m5 ;;
	6) m6 ;;
	7) m7 ;;
	cg) cg ;;
	*)
		echo "unknown measurement '$w' (1 2 3 4 5 6 7 cg)" >&2
		exit 2
		;;
	esac
done
echo "pm_qos_resume_latency_us after: $(qos_files)"
