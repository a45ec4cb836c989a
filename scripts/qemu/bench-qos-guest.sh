#!/bin/sh
# How nvq honours its CPU latency limit (--cpu-lat-method) on QEMU's NVMe
# device through vfio-pci, in one QEMU guest against one emulated NVMe
# controller: QD1 4 KiB random reads, nvq-perf --compare with alternating
# rounds, in one boot:
#
#   A  --mode poll
#   B  --mode wait
#   C  --mode wait --cpu-lat-limit-us 0 --cpu-lat-method cpuidle
#   D  --mode wait --cpu-lat-limit-us 0 --cpu-lat-method poll
#   E  --mode wait --cpu-lat-limit-us 0 --cpu-lat-method hybrid
#
# then bursty load: A, B, D and E with --think-time 200us, 1ms and 10ms
# (one --compare each; past the inactivity timeout, 3 ms by default, the
# polling methods should sleep again and their CPU per I/O fall back).
#
# Prints the guest's cpuidle driver and governor, the QEMU accelerator,
# the host's load average before and after, nvq-perf's full --compare
# tables, two single runs of D (text report: the waiters line with the
# 'masked' counter, and the guest's vfio interrupt counts around it),
# what vfio-pci answers to VFIO_IRQ_SET_ACTION_MASK on the MSI-X index
# (scripts/qemu/vfio-mask-probe.c, the ioctl nvq's vfio_irq_mask()
# makes), and a table of the medians.
#
# usage: bench-qos-guest.sh [-h|--help] [BUILD_ROOT]
#   BUILD_ROOT  a build directory (default: build); the guest programs
#               are built without sanitizers in BUILD_ROOT/vfio-guest
# environment:
#   ROUNDS      alternating rounds per --compare (default 3)
#   TIME        measured time per run (default 3s; a plain number is s)
#   RAMP        warm-up per run, not counted (default 0.5s)
# Exits 77 (skip) when QEMU, a static busybox or a kernel image with the
# vfio modules is missing, 1 on a build or guest failure.
set -eu

usage() {
	sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
-*) echo "bench-qos-guest: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "bench-qos-guest: too many arguments (see --help)" >&2; exit 2; }

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${ROUNDS:-3}
secs=${TIME:-3s}
ramp=${RAMP:-0.5s}
case $secs in *[0-9]) secs=${secs}s ;; esac
case $ramp in *[0-9]) ramp=${ramp}s ;; esac
case $rounds in '' | *[!0-9]* | 0)
	echo "bench-qos-guest: ROUNDS must be a positive integer" >&2; exit 2 ;;
esac
. "$src/scripts/qemu/common.sh"

rc=0
nvq_qemu_deps >&2 || rc=$?
if [ $rc != 0 ]; then
	echo "bench-qos-guest: cannot boot the guest (QEMU or kernel image missing)" >&2
	exit 77
fi
command -v python3 >/dev/null 2>&1 ||
	{ echo "bench-qos-guest: python3 is needed for the summary" >&2; exit 1; }
mkdir -p "$build"
build=$(cd "$build" && pwd)
nvq_guest_build "$src" "$build" >&2 || { echo "bench-qos-guest: building the guest failed" >&2; exit 1; }
if [ ! -x "$GUEST_BIN/tools/perf/nvq-perf" ]; then
	echo "bench-qos-guest: nvq-perf did not build (see $build/vfio-guest-build.log)" >&2
	exit 1
fi
if ! "$GUEST_BIN/tools/perf/nvq-perf" --help 2>&1 | grep -q -- --cpu-lat-method ||
	! "$GUEST_BIN/tools/perf/nvq-perf" --help 2>&1 | grep -q -- --think-time; then
	echo "bench-qos-guest: this nvq-perf has no --cpu-lat-method/--think-time" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvq-qos-guest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$build/bench-qos-guest.log

# The mask probe, in a second archive appended to the guest's initramfs
# (the kernel unpacks concatenated archives in turn).
cc=${CC:-cc}
mkdir -p "$tmp/extra/nvq/bin"
"$cc" -O2 -Wall -o "$tmp/extra/nvq/bin/vfio-mask-probe" \
	"$src/scripts/qemu/vfio-mask-probe.c" >&2 ||
	{ echo "bench-qos-guest: vfio-mask-probe did not build" >&2; exit 1; }
cpio=cpio
command -v cpio >/dev/null 2>&1 || cpio="busybox cpio"
# shellcheck disable=SC2086
(cd "$tmp/extra" && find . | $cpio -o -H newc 2>/dev/null) | gzip -1 >"$tmp/extra.cpio.gz"
cat "$INITRD" "$tmp/extra.cpio.gz" >"$tmp/initrd.cpio.gz"

truncate -s 1G "$tmp/d0.img"

# Seconds (s, ms, us, ns, min, m) and the two interrupt samples of the
# single runs, counted from the start of nvq-perf: after the ramp (and
# the opening of the device), before the end of the measured time.
tosec() {
	echo "$1" | awk '{ v = $1; m = 1
		if (v ~ /ms$/) m = 0.001; else if (v ~ /us$/) m = 1e-6
		else if (v ~ /ns$/) m = 1e-9
		else if (v ~ /min$/ || v ~ /[0-9]m$/) m = 60
		sub(/[a-z]+$/, "", v); printf "%.3f", v * m }'
}
secs_f=$(tosec "$secs")
ramp_f=$(tosec "$ramp")
irq_t=$(awk -v t="$secs_f" -v r="$ramp_f" 'BEGIN {
	a = r + 0.5; b = r + t - 0.1; if (b <= a) b = a + t / 2
	printf "%.3f %.3f %.3f", a, b, b - a }')
cat >"$tmp/script.sh" <<EOF
ROUNDS=$rounds
SECS=$secs
RAMP=$ramp
IRQ_T1=${irq_t%% *}
IRQ_T2=$(echo "$irq_t" | cut -d' ' -f2)
IRQ_DT=${irq_t##* }
EOF
cat >>"$tmp/script.sh" <<'EOF'
BDF=0000:00:04.0
# For nvq's QoS state file (/run/nvq), as on a real system.
mkdir -p /run
nvq_load vfio-pci vfio_iommu_type1 || return 1
nvq_bind vfio-pci $BDF || return 1
show() { # FILE: its contents, or why not
	if [ -r "$1" ]; then cat "$1"; else echo "(no $1)"; fi
}
guest_info() {
	echo "NVQ-OUT guest"
	echo "kernel $(uname -r), $(nproc) CPUs, loadavg $(cat /proc/loadavg)"
	c=/sys/devices/system/cpu/cpuidle
	echo "cpuidle current_driver: $(show $c/current_driver)"
	if [ -r $c/current_governor ]; then
		echo "cpuidle current_governor: $(show $c/current_governor)"
	else
		echo "cpuidle current_governor_ro: $(show $c/current_governor_ro)"
	fi
	echo "cpuidle available_governors: $(show $c/available_governors)"
	echo "cpu0 idle states: $(ls /sys/devices/system/cpu/cpu0/cpuidle 2>/dev/null | tr '\n' ' ')"
	echo "cpuidle.off / idle= on the command line: $(cat /proc/cmdline)"
	echo "hypervisor (dmesg): $(dmesg | grep -i -m 2 'hypervisor\|Booting paravirtualized' | tr '\n' ' ')"
	echo "cpu flags: hypervisor=$(grep -c -m 1 ' hypervisor' /proc/cpuinfo) constant_tsc=$(grep -c -m 1 ' constant_tsc' /proc/cpuinfo)"
	echo "clocksource: $(show /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "$BDF: $(show /sys/bus/pci/devices/$BDF/vendor):$(show /sys/bus/pci/devices/$BDF/device), driver $(basename "$(readlink /sys/bus/pci/devices/$BDF/driver)")"
	echo "NVQ-OUT-END"
}
probe() {
	echo "NVQ-OUT mask-probe"
	vfio-mask-probe $BDF
	rc=$?
	echo "NVQ-OUT-END"
	return $rc
}
compare() { # NAME "A;B;..."
	echo "NVQ-OUT $1"
	# Into a file: not a terminal, so no progress lines.
	nvq-perf -d vfio:$BDF --rw randread --bs 4k --qd 1 \
		--time $SECS --ramp $RAMP --rounds $ROUNDS --compare "$2" \
		>/tmp/perf.out 2>&1
	rc=$?
	cat /tmp/perf.out
	echo "NVQ-OUT-END"
	return $rc
}
irqs() { # T: the device's interrupt counts T s into the run
	echo "vfio interrupts at $1 s:"
	grep -i 'vfio' /proc/interrupts | tr -s ' '
}
single() { # NAME ARGS...: one text-mode run, interrupt counts during it
	n=$1
	shift
	echo "NVQ-OUT $n"
	# The vectors exist only while nvq-perf has the device open: count
	# them twice inside the measured time.
	(sleep $IRQ_T1; irqs $IRQ_T1; sleep $IRQ_DT; irqs $IRQ_T2) &
	nvq-perf -d vfio:$BDF --rw randread --bs 4k --qd 1 \
		--time $SECS --ramp $RAMP "$@" >/tmp/perf.out 2>&1
	rc=$?
	wait
	cat /tmp/perf.out
	echo "NVQ-OUT-END"
	return $rc
}
nvq_run info guest_info
nvq_run mask-probe probe
A="--mode poll"
B="--mode wait"
C="--mode wait --cpu-lat-limit-us 0 --cpu-lat-method cpuidle"
D="--mode wait --cpu-lat-limit-us 0 --cpu-lat-method poll"
E="--mode wait --cpu-lat-limit-us 0 --cpu-lat-method hybrid"
nvq_run steady compare steady "$A;$B;$C;$D;$E"
for t in 200us 1ms 10ms; do
	x="--think-time $t"
	nvq_run think-$t compare think-$t "$A $x;$B $x;$D $x;$E $x"
done
nvq_run single-D single single-D $D
nvq_run single-D-think-10ms single single-D-think-10ms $D --think-time 10ms
echo "guest: loadavg $(cat /proc/loadavg)"
EOF

accel=$(sed -n 's/.*-accel \([a-z]*\).*/\1/p' "$src/scripts/qemu/run-guest.sh" | head -n 1)
kvm="no /dev/kvm"
[ -e /dev/kvm ] && kvm="/dev/kvm present"
head=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=
if ! git -C "$src" diff --quiet HEAD -- lib include tools emu 2>/dev/null; then
	dirty=" + uncommitted changes in lib include tools emu (diff sha1 $(git -C "$src" diff HEAD -- lib include tools emu | sha1sum | cut -c1-12))"
fi
echo "== nvq --cpu-lat-method on QEMU's NVMe device over vfio-pci, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "\$ ROUNDS=$rounds TIME=$secs RAMP=$ramp scripts/qemu/bench-qos-guest.sh $(basename "$build")"
echo "host: $(nproc) CPUs, $(uname -r), $(qemu-system-x86_64 --version | head -n 1)"
echo "QEMU accel: ${accel:-?} (run-guest.sh; $kvm), q35 + intel-iommu, -smp 2, guest kernel $KVER"
echo "nvq: $head$dirty"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "host load average before: $load0"
start=$(date +%s)
nruns=$((rounds * 17 + 2))
# Whole seconds per run, rounded up, for the guest's time limit.
secs_n=$(awk -v t="$secs_f" -v r="$ramp_f" 'BEGIN { printf "%d", t + r + 1 }')
grc=0
sh "$src/scripts/qemu/run-guest.sh" -k "$KERNEL" -i "$tmp/initrd.cpio.gz" \
	-s "$tmp/script.sh" -t $((nruns * (secs_n + 15) + 240)) -l "$log" \
	-- -drive "file=$tmp/d0.img,if=none,id=d0,format=raw,cache=unsafe" \
	-device nvme,serial=nvq-qos,drive=d0,addr=04.0 >"$tmp/run.out" 2>&1 || grc=$?
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo "host load average after: $load1 ($(($(date +%s) - start)) s for the boot)"
echo "guest console: $log"
echo

if python3 - "$log" "$tmp/run.out" <<'PY'
import re, sys

log, runout = sys.argv[1:3]
text = open(log, errors="replace").read().replace("\r", "")
sections = {}
for m in re.finditer(r"^NVQ-OUT (\S+)\n(.*?)^NVQ-OUT-END$", text, re.S | re.M):
    sections[m.group(1)] = m.group(2)
for name, body in sections.items():
    print(f"---- {name}")
    print("\n".join(l.rstrip() for l in body.rstrip().splitlines()))
    print()
print("---- guest steps")
for line in open(runout, errors="replace"):
    print(line.rstrip())
print()


def tables(body):
    """labels, first-table medians, second-table medians of one --compare."""
    labels = dict(re.findall(r"^  ([A-P]): (.*)$", body, re.M))
    t1, t2 = {}, {}
    for line in body.splitlines():
        f = line.split()
        if len(f) < 3 or f[1] != "median" or f[0] not in labels:
            continue
        if len(f) >= 14 and re.match(r"^[\d.]+-", f[3]):
            t1[f[0]] = f
        elif len(f) >= 7:
            t2[f[0]] = f
    return labels, t1, t2


sets = [("steady", "steady", "ABCDE"),
        ("think-200us", "200us", "ABDE"),
        ("think-1ms", "1ms", "ABDE"),
        ("think-10ms", "10ms", "ABDE")]
print("---- medians (clat from submission; CPU us per I/O of the process "
      "and of the whole guest)")
print("| set | cfg | options | IOPS | clat p50 | clat p99 | pcpu/io us "
      "| mcpu/io us | cpu-lat/method | held% | polls |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
note = ("cfg: the letters of the header (A-E); nvq-perf's --think-time "
        "tables call A, B, D, E A, B, C, D. clat p50/p99: median over the "
        "rounds.")
missing = 0
for sec, tag, letters in sets:
    body = sections.get(sec)
    if body is None:
        print(f"| {tag} | - | (no output) | | | | | | | | |")
        missing += 1
        continue
    labels, t1, t2 = tables(body)
    for i, (k, opts) in enumerate(sorted(labels.items())):
        name = letters[i] if i < len(letters) else k
        opts = opts.replace(" --think-time " + tag, "").strip()
        r, q = t1.get(k), t2.get(k)
        if not r:
            print(f"| {tag} | {name} | {opts} | (no median) | | | | | | | |")
            missing += 1
            continue
        meth = q[2] if q else "?"
        held = q[-2] if q else "?"
        polls = q[-1] if q else "?"
        print(f"| {tag} | {name} | {opts} | {r[2]} | {r[7]} | {r[8]} | "
              f"{r[12]} | {r[13]} | {meth} | {held} | {polls} |")
print()
print(note)
print("host overhead (device time vs host): not shown over vfio (only "
      "nvq's emulator stamps its completions)")
print()
masked = re.findall(r"masked=(\d+)", "".join(
    sections.get(s, "") for s in ("single-D", "single-D-think-10ms")))
probe = sections.get("mask-probe", "")
m = re.search(r"^msix-mask[^:]*: (.*)$", probe, re.M)
for sec in ("single-D", "single-D-think-10ms"):
    body = sections.get(sec, "")
    snaps = re.findall(r"^vfio interrupts at ([\d.]+) s:\n((?: *\d+:.*\n)*)",
                       body, re.M)
    iops = re.search(r"read: IOPS=([\d.]+k?)", body)
    if len(snaps) == 2:
        def total(block):
            n = 0
            for line in block.splitlines():
                f = line.split()
                for x in f[1:]:
                    if not x.isdigit():
                        break
                    n += int(x)
            return n
        (t1, a), (t2, b) = snaps
        rate = (total(b) - total(a)) / (float(t2) - float(t1))
        print(f"{sec}: the device's vfio interrupts {rate:.0f}/s during "
              f"the run ({t1} s to {t2} s), IOPS "
              f"{iops.group(1) if iops else '?'}")
    else:
        print(f"{sec}: no interrupt counts")
print(f"MSI-X masking: VFIO_IRQ_SET_ACTION_MASK on the MSI-X index -> "
      f"{m.group(1) if m else '?'}; nvq-perf masked= "
      f"{', '.join(masked) if masked else '?'} (single runs of D)")
sys.exit(1 if missing else 0)
PY
then prc=0; else prc=$?; fi
[ $grc = 0 ] || { echo "bench-qos-guest: the guest run failed (see $log)"; exit 1; }
exit $prc
