#!/bin/sh
# nvq over vfio side by side with the kernel's nvme driver, in one QEMU
# guest against one emulated NVMe controller: 4 KiB random reads at QD1
# and QD32, runs alternating between the two stacks (the controller is
# moved between nvme and vfio-pci before each run), ROUNDS rounds.
#
#   kernel: fio (Debian's), direct=1, ioengine io_uring and pvsync2
#   nvq:    nvq-perf over vfio, --mode wait (the job thread sleeps on the
#           interrupt), --mode thread (a completion thread pinned to the
#           interrupt's CPU, the kernel's model) and --mode poll
#
# Prints a table of medians: IOPS, clat p50/p99 and CPU time per I/O
# ((usr + sys) / I/Os, of the benchmark process), with the host's load
# average before and after. Under TCG the absolute numbers mean little;
# compare the columns with each other. The guest runs on the TSC
# clocksource (run-guest.sh): with HPET every clock_gettime() is an
# emulated MMIO read, which handicaps fio (several clock reads per I/O)
# far more than nvq-perf.
#
# usage: compare-kernel.sh [BUILD_ROOT] [ROUNDS] [SECONDS]
#   BUILD_ROOT  a configured build directory (default: build); the guest
#               programs are built without sanitizers in BUILD_ROOT/vfio-guest
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${2:-3}
secs=${3:-5}
mkdir -p "$build"
build=$(cd "$build" && pwd)
. "$src/scripts/qemu/common.sh"

nvq_qemu_deps || exit 1
if ! command -v fio >/dev/null; then
	echo "compare-kernel: fio is not installed (apt-get install fio)" >&2
	exit 1
fi
nvq_guest_build "$src" "$build" || exit 1
if [ ! -x "$GUEST_BIN/tools/perf/nvq-perf" ]; then
	echo "compare-kernel: nvq-perf did not build" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvq-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
truncate -s 1G "$tmp/d0.img"
log=$build/compare-kernel.log

cat >"$tmp/script.sh" <<EOF
ROUNDS=$rounds
SECS=$secs
EOF
cat >>"$tmp/script.sh" <<'EOF'
BDF=0000:00:04.0
nvq_load vfio-pci vfio_iommu_type1 nvme || return 1
blockdev_of() {
	i=0
	while [ $i -lt 100 ]; do
		b=$(ls /sys/bus/pci/devices/$BDF/nvme/*/ 2>/dev/null |
			grep '^nvme.*n1$' | head -n 1)
		[ -n "$b" ] && [ -b "/dev/$b" ] && { echo "$b"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
kernel_run() { # NAME ENGINE QD
	nvq release $BDF >/dev/null || return 1
	dev=$(blockdev_of) || { echo "guest: no block device"; return 1; }
	echo "NVQ-JSON $1"
	fio --name=$1 --filename=/dev/$dev --direct=1 --rw=randread --bs=4k \
		--ioengine=$2 --iodepth=$3 --size=256M --time_based \
		--runtime=$SECS --ramp_time=1 --thread --output-format=json
	echo "NVQ-JSON-END"
}
nvq_run_perf() { # NAME MODE QD
	nvq setup $BDF >/dev/null || return 1
	echo "NVQ-JSON $1"
	nvq-perf -d vfio:$BDF --rw randread --bs 4k --qd $3 --mode $2 \
		--size 256M --time ${SECS}s --ramp 1s --json
	echo "NVQ-JSON-END"
}
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
echo "guest: clocksource $(cat $cs) (run-guest.sh asks for tsc)"
echo "guest: loadavg $(cat /proc/loadavg)"
r=1
while [ $r -le $ROUNDS ]; do
	for qd in 1 32; do
		nvq_run kernel-io_uring-qd$qd kernel_run kernel-io_uring-qd$qd io_uring $qd
		nvq_run nvq-wait-qd$qd nvq_run_perf nvq-wait-qd$qd wait $qd
		nvq_run nvq-thread-qd$qd nvq_run_perf nvq-thread-qd$qd thread $qd
		if [ $qd = 1 ]; then
			nvq_run kernel-pvsync2-qd1 kernel_run kernel-pvsync2-qd1 pvsync2 1
			nvq_run nvq-poll-qd1 nvq_run_perf nvq-poll-qd1 poll 1
		else
			nvq_run nvq-poll-qd32 nvq_run_perf nvq-poll-qd32 poll 32
		fi
	done
	r=$((r + 1))
done
echo "guest: loadavg $(cat /proc/loadavg)"
EOF

load0=$(cut -d' ' -f1-3 /proc/loadavg)
sh "$src/scripts/qemu/run-guest.sh" -k "$KERNEL" -i "$INITRD" \
	-s "$tmp/script.sh" -t $((rounds * 11 * (secs + 8) + 120)) -l "$log" \
	-- -drive "file=$tmp/d0.img,if=none,id=d0,format=raw,cache=unsafe" \
	-device nvme,serial=nvq-cmp,drive=d0,addr=04.0 >/dev/null
load1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$log" "$load0" "$load1" "$rounds" "$secs" <<'PY'
import json, re, statistics, sys

log, load0, load1, rounds, secs = sys.argv[1:6]
text = open(log, errors="replace").read()
runs = {}
for m in re.finditer(r"NVQ-JSON (\S+)\n(.*?)NVQ-JSON-END", text, re.S):
    name, body = m.group(1), m.group(2)
    body = body[body.find("{"):body.rfind("}") + 1]
    try:
        j = json.loads(body)
    except ValueError:
        continue
    job = j["jobs"][0]
    rd = job["read"]
    ios = rd.get("total_ios") or rd.get("io_kbytes", 0) // 4
    runtime_s = rd["runtime"] / 1000.0
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime_s
    pct = rd["clat_ns"].get("percentile", {})
    runs.setdefault(name, []).append({
        "iops": rd["iops"],
        "p50": pct.get("50.000000", 0) / 1000.0,
        "p99": pct.get("99.000000", 0) / 1000.0,
        "cpu": cpu_s / ios * 1e6 if ios else float("nan"),
    })

order = ["kernel-io_uring-qd1", "kernel-pvsync2-qd1", "nvq-wait-qd1",
         "nvq-thread-qd1", "nvq-poll-qd1", "kernel-io_uring-qd32",
         "nvq-wait-qd32", "nvq-thread-qd32", "nvq-poll-qd32"]
gl = re.findall(r"guest: loadavg (\S+ \S+ \S+)", text)
print("4 KiB random reads, QEMU 7.2 TCG guest (2 vCPUs), one emulated NVMe "
      "controller,")
print(f"{rounds} alternating rounds of {secs} s each, medians. Host load "
      f"average before {load0}, after {load1}; guest "
      f"{' -> '.join(gl) if gl else '?'}.")
print()
print("| stack | QD | runs | IOPS | clat p50 (us) | clat p99 (us) "
      "| CPU us per I/O |")
print("|---|---|---|---|---|---|---|")
for name in order:
    r = runs.get(name)
    if not r:
        print(f"| {name} | - | 0 | - | - | - | - |")
        continue
    med = lambda k: statistics.median(x[k] for x in r)
    stack, qd = name.rsplit("-qd", 1)
    print(f"| {stack} | {qd} | {len(r)} | {med('iops'):.0f} | "
          f"{med('p50'):.1f} | {med('p99'):.1f} | {med('cpu'):.1f} |")
missing = [n for n in order if n not in runs]
sys.exit(1 if missing else 0)
PY
