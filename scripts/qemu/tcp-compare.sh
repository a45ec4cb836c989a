#!/bin/sh
# nvq's NVMe/TCP host side by side with the Linux kernel's (nvme-tcp), in
# one QEMU guest against one Linux nvmet target (scripts/qemu/
# nvmet-target.sh) on 127.0.0.1:4420 inside it, subsystem
# nqn.2026-12.io.nvq:nvme (QEMU's NVMe namespace behind nvmet's bdev
# backend):
#
#   nvq-poll, nvq-wait   nvq-perf (built without sanitizers) over
#                        tcp:127.0.0.1:4420, --mode poll / --mode wait
#   kernel-io_uring,     fio (Debian's) on the block device of
#   kernel-libaio        'nvme connect -t tcp', direct=1
#
# Workloads: 4 KiB random read QD1, 4 KiB random read QD32, 128 KiB
# sequential read QD8; ROUNDS alternating rounds (every workload, every
# engine in turn, A B C D A B C D ...) of SECONDS each after a 1 s ramp.
# Prints every run (with the host's load average before it) and a
# markdown table of medians: IOPS, completion latency p50/p99, CPU time
# per I/O of the benchmark process ((usr + sys) / I/Os) and of the whole
# guest (non-idle time of all its CPUs / I/Os: the target's share is the
# same for every engine, and the kernel host does much of its work in
# kworkers and softirqs that no process is charged for).
#
# usage: tcp-compare.sh [BUILD_ROOT] [ROUNDS] [SECONDS]
#   BUILD_ROOT  a configured build directory (default: build); nvq-perf
#               is built without sanitizers in BUILD_ROOT/vfio-guest
#   TCP_COMPARE_OUT=FILE  also write the report to FILE
# Under TCG the absolute numbers mean little: compare the rows.
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${2:-3}
secs=${3:-5}
mkdir -p "$build"
build=$(cd "$build" && pwd)
. "$src/scripts/qemu/common.sh"

nvq_qemu_deps || exit 1
for p in fio nvme python3; do
	command -v $p >/dev/null ||
		{ echo "tcp-compare: $p is not installed" >&2; exit 1; }
done
nvq_guest_build "$src" "$build" || exit 1
perf=$GUEST_BIN/tools/perf/nvq-perf
[ -x "$perf" ] || { echo "tcp-compare: nvq-perf did not build" >&2; exit 1; }

target=$src/scripts/qemu/nvmet-target.sh
dir=$build/tcp-compare.d
raw=$build/tcp-compare.raw
report=$build/tcp-compare.txt
trap '"$target" stop "$dir" >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# 1 GiB namespaces: the sequential reads cover 256 MiB.
NVQ_TARGET_OWNER=$$ NVQ_TARGET_DISK_MB=1024 \
	NVQ_TARGET_PROGRAMS="$perf $GUEST_BIN/tools/nvq" \
	"$target" start "$dir" >/dev/null
ctl() {
	"$target" ctl "$dir" sh "$1"
}

NQN=nqn.2026-12.io.nvq:nvme
URI=tcp:127.0.0.1:4420,nqn=$NQN
# The kernel host: connected once, its block device for every fio run.
kdev=$(ctl "nvme connect -t tcp -a 127.0.0.1 -s 4420 -n $NQN >/dev/null || exit 1
i=0
while [ \$i -lt 50 ]; do
	for s in /sys/class/nvme-subsystem/*; do
		[ \"\$(cat \$s/subsysnqn)\" = $NQN ] || continue
		for n in \$s/nvme*n1; do
			[ -b /dev/\${n##*/} ] && { echo /dev/\${n##*/}; exit 0; }
		done
	done
	sleep 0.2
	i=\$((i + 1))
done
ls -l /sys/class/nvme-subsystem/*/
exit 1") || { echo "tcp-compare: nvme connect failed: $kdev" >&2; exit 1; }
kdev=$(echo "$kdev" | tail -n 1)
guest_info=$(ctl 'uname -r; nproc; cat /sys/devices/system/clocksource/clocksource0/current_clocksource')

# run ENGINE WORKLOAD: one run in the guest; its JSON and the guest's
# /proc/stat before and after it to $raw, between markers.
run() {
	eng=$1
	wl=$2
	case $wl in
	rand4k-qd1) rw=randread bs=4k qd=1 ;;
	rand4k-qd32) rw=randread bs=4k qd=32 ;;
	seq128k-qd8) rw=read bs=128k qd=8 ;;
	esac
	case $eng in
	nvq-*)
		cmd="nvq-perf -d $URI --rw $rw --bs $bs --qd $qd --mode ${eng#nvq-}
			--size 256M --time ${secs}s --ramp 1s --json"
		;;
	kernel-*)
		cmd="fio --name=$eng --filename=$kdev --direct=1 --rw=$rw
			--bs=$bs --ioengine=${eng#kernel-} --iodepth=$qd
			--size=256M --time_based --runtime=$secs --ramp_time=1
			--thread --output-format=json"
		;;
	esac
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	{
		echo "NVQ-RUN $eng $wl load=$load"
		ctl "s0=\$(head -n 1 /proc/stat)
$(echo "$cmd" | tr -s '\t\n' '  ') >/tmp/run.json 2>/tmp/run.err
rc=\$?
s1=\$(head -n 1 /proc/stat)
echo \"NVQ-STAT \$s0\"
echo \"NVQ-STAT \$s1\"
echo \"NVQ-RC \$rc\"
cat /tmp/run.json
sed 's/^/NVQ-ERR /' /tmp/run.err | head -n 5" || true
		echo "NVQ-RUN-END"
	} >>"$raw"
}

: >"$raw"
engines="nvq-poll nvq-wait kernel-io_uring kernel-libaio"
workloads="rand4k-qd1 rand4k-qd32 seq128k-qd8"
r=1
while [ $r -le "$rounds" ]; do
	for wl in $workloads; do
		for eng in $engines; do
			echo "tcp-compare: round $r/$rounds: $wl $eng" >&2
			run "$eng" "$wl"
		done
	done
	r=$((r + 1))
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
ctl 'nvme disconnect-all' >/dev/null || true

rc=0
python3 - "$raw" "$load0" "$load1" "$rounds" "$secs" "$guest_info" \
	<<'PY' >"$report" || rc=$?
import json, re, statistics, sys

raw, load0, load1, rounds, secs, ginfo = sys.argv[1:7]
text = open(raw, errors="replace").read()
HZ = 100  # USER_HZ: /proc/stat's unit

def busy(line):
    v = [int(x) for x in line.split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]) - idle

runs = {}
print("raw runs (host load average before each; IOPS; clat p50/p99 us;"
      " CPU us per I/O: process, whole guest)")
for m in re.finditer(r"NVQ-RUN (\S+) (\S+) load=(\S+ \S+ \S+)\n(.*?)"
                     r"NVQ-RUN-END", text, re.S):
    eng, wl, load, body = m.groups()
    st = re.findall(r"NVQ-STAT (cpu .*)", body)
    rc = re.search(r"NVQ-RC (\d+)", body)
    js = body.find("{")
    try:
        j = json.JSONDecoder().raw_decode(body[js:])[0]
        job = j["jobs"][0]
        rd = job["read"]
        ios = rd.get("total_ios") or 0
        runtime_s = rd["runtime"] / 1000.0
        cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime_s
        pct = rd["clat_ns"].get("percentile", {})
        # The whole guest over the run (ramp and start-up included, so
        # per I/O of the measured part it is an upper bound).
        mach = (busy(st[1]) - busy(st[0])) / HZ if len(st) == 2 else \
            float("nan")
        x = {
            "iops": rd["iops"],
            "p50": pct.get("50.000000", 0) / 1000.0,
            "p99": pct.get("99.000000", 0) / 1000.0,
            "cpu": cpu_s / ios * 1e6 if ios else float("nan"),
            "mach": mach / (rd["iops"] * (runtime_s + 1)) * 1e6
            if rd["iops"] else float("nan"),
        }
    except (ValueError, KeyError, IndexError) as e:
        err = " | ".join(re.findall(r"NVQ-ERR (.*)", body))
        print(f"  {wl:12} {eng:16} load {load}: FAILED (rc "
              f"{rc.group(1) if rc else '?'}): {err or e}")
        continue
    runs.setdefault((wl, eng), []).append(x)
    print(f"  {wl:12} {eng:16} load {load}: {x['iops']:9.0f} IOPS  "
          f"p50 {x['p50']:8.1f}  p99 {x['p99']:8.1f}  "
          f"cpu/io {x['cpu']:6.1f} us  guest cpu/io {x['mach']:6.1f} us")

g = ginfo.split("\n")
print()
print(f"NVMe/TCP, nvq vs the kernel host, against Linux nvmet in one QEMU "
      f"7.2 TCG guest")
print(f"(kernel {g[0] if g else '?'}, {g[1] if len(g) > 1 else '?'} vCPUs, "
      f"clocksource {g[2] if len(g) > 2 else '?'}) on 127.0.0.1:4420,")
print(f"subsystem :nvme (QEMU NVMe namespace, bdev backend); {rounds} "
      f"alternating rounds of {secs} s, medians.")
print(f"Host load average before {load0}, after {load1}.")
print()
print("| workload | engine | runs | IOPS | clat p50 (us) | clat p99 (us) "
      "| CPU us/I/O (process) | CPU us/I/O (guest) |")
print("|---|---|---|---|---|---|---|---|")
missing = 0
for wl in ["rand4k-qd1", "rand4k-qd32", "seq128k-qd8"]:
    for eng in ["nvq-poll", "nvq-wait", "kernel-io_uring", "kernel-libaio"]:
        r = runs.get((wl, eng))
        if not r:
            print(f"| {wl} | {eng} | 0 | - | - | - | - | - |")
            missing += 1
            continue
        med = lambda k: statistics.median(x[k] for x in r)
        print(f"| {wl} | {eng} | {len(r)} | {med('iops'):.0f} | "
              f"{med('p50'):.1f} | {med('p99'):.1f} | {med('cpu'):.1f} | "
              f"{med('mach'):.1f} |")
sys.exit(1 if missing else 0)
PY
cat "$report"
if [ -n "${TCP_COMPARE_OUT:-}" ]; then
	{
		echo "# scripts/qemu/tcp-compare.sh $* ($(date -u '+%F %H:%M UTC')," \
			"$(git -C "$src" describe --always --dirty 2>/dev/null))"
		echo
		cat "$report"
	} >"$TCP_COMPARE_OUT"
fi
exit $rc
