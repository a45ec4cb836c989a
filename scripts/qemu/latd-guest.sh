#!/bin/sh
# nvq-latd in a QEMU guest on the kernel's nvme driver (QEMU's NVMe
# device, Debian's kernel - the harness of the vfio tests): fio O_DIRECT
# 4 KiB random reads at QD1 on nvme0n1 (ioengine psync, fio pinned to
# FIO_CPU), ROUNDS rounds alternating
#   off   no daemon
#   latd  nvq-latd --cpu-lat-limit-us LIMIT --cpu-lat-timeout-ms
#         TIMEOUT_MS --activity ACTIVITY nvme0n1 (hysteresis on)
#   latd-nohyst  the same with --hysteresis off (NOHYST=0: left out)
#   spin  no daemon, a SCHED_IDLE busy loop on the completion CPU
#         (latd-wake --spin; SPIN=0 leaves these rounds out)
# then the eventfd wake-up bench (scripts/latd-wake.c) in the guest.
# Prints fio's clat p50/p99/max per mode and, for each daemon round, the
# CPUs whose pm_qos_resume_latency_us changed (sampled every 1 ms by
# scripts/latd-watch.c) against the expected ones (FIO_CPU and its
# hardware queue's interrupt CPUs: nvme0qN's effective affinity; every
# queue's with ACTIVITY=poll), when the limit went on after the first I/O
# and came off after the last, the daemon's CPU time and what
# `nvq-latd status --json` said, idle residency where the guest has
# cpuidle states, and whether it has any. The rounds themselves are
# scripts/qemu/latd-lib.sh, shared with scripts/latd-host.sh.
#
# usage: latd-guest.sh [-h|--help] [BUILD_ROOT]
#   BUILD_ROOT  a build directory (default: build); the guest programs
#               are built without sanitizers in BUILD_ROOT/vfio-guest
# environment (defaults):
#   ROUNDS=3 TIME=5 (s per fio run) LIMIT=10 TIMEOUT_MS=3 ACTIVITY=bpf
#   FIO_CPU=1 CPUS=2 (guest vCPUs) SPIN=1 NOHYST=1 WAKE_BENCH=1
#   NVQ_LATD    a daemon binary to use instead of building
#               tools/latd/nvq-latd in BUILD_ROOT/vfio-guest
# Guests run under TCG: slow, and one at a time. Exits 77 (skip) when
# QEMU, a static busybox or a kernel image is missing; 1 when the guest
# failed or a daemon round did not pass (or nvq-latd did not build);
# 2 on wrong usage.
set -eu

usage() {
	sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
-*) echo "latd-guest: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "latd-guest: too many arguments (see --help)" >&2; exit 2; }

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${ROUNDS:-3}
secs=${TIME:-5}
limit=${LIMIT:-10}
tmo=${TIMEOUT_MS:-3}
act=${ACTIVITY:-bpf}
fio_cpu=${FIO_CPU:-1}
cpus=${CPUS:-2}
x=
for v in rounds secs tmo fio_cpu cpus; do
	eval "x=\$$v"
	case $x in '' | *[!0-9]*)
		echo "latd-guest: ROUNDS, TIME, TIMEOUT_MS, FIO_CPU and CPUS" \
			"must be numbers, not '$x'" >&2; exit 2 ;;
	esac
done
[ "$fio_cpu" -lt "$cpus" ] ||
	{ echo "latd-guest: FIO_CPU $fio_cpu but only $cpus vCPUs" >&2; exit 2; }
. "$src/scripts/qemu/common.sh"

rc=0
nvq_qemu_deps >&2 || rc=$?
if [ $rc != 0 ]; then
	echo "latd-guest: cannot boot the guest (QEMU or kernel image missing)" >&2
	exit 77
fi
command -v fio >/dev/null 2>&1 ||
	{ echo "latd-guest: fio is not installed (apt-get install fio)" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 ||
	{ echo "latd-guest: python3 is needed for the tables" >&2; exit 1; }
mkdir -p "$build"
build=$(cd "$build" && pwd)
nvq_guest_build "$src" "$build" >&2 ||
	{ echo "latd-guest: building the guest failed" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvq-latd-guest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$build/latd-guest.log

# The daemon (when it builds) and the two measuring programs, in a
# second archive appended to the guest's initramfs.
latd=${NVQ_LATD:-}
if [ -n "$latd" ]; then
	[ -x "$latd" ] || { echo "latd-guest: NVQ_LATD=$latd is not a program" >&2; exit 2; }
elif ninja -C "$GUEST_BIN" -t targets all 2>/dev/null |
	grep -q '^tools/latd/nvq-latd:'; then
	if ninja -C "$GUEST_BIN" tools/latd/nvq-latd \
		>"$tmp/latd-build.log" 2>&1; then
		latd=$GUEST_BIN/tools/latd/nvq-latd
	else
		tail -n 30 "$tmp/latd-build.log" >&2
	fi
fi
[ -n "$latd" ] || echo "latd-guest: nvq-latd did not build: rounds" \
	"without the daemon only" >&2
cc=${CC:-cc}
$cc -O2 -Wall -o "$tmp/latd-watch" "$src/scripts/latd-watch.c"
$cc -O2 -Wall -pthread -o "$tmp/latd-wake" "$src/scripts/latd-wake.c"
# shellcheck disable=SC2086
sh "$src/scripts/qemu/build-initramfs.sh" --add "$tmp/extra.cpio.gz" \
	"$tmp/latd-watch" "$tmp/latd-wake" $latd
cat "$INITRD" "$tmp/extra.cpio.gz" >"$tmp/initrd.cpio.gz"
truncate -s 1G "$tmp/d0.img"

cat >"$tmp/script.sh" <<EOF
ROUNDS=$rounds
SECS=$secs
LIMIT=$limit
TMO=$tmo
ACT=$act
FIO_CPU=$fio_cpu
SPIN=${SPIN:-1}
NOHYST=${NOHYST:-1}
WAKE_BENCH=${WAKE_BENCH:-1}
LATD=${latd:+/nvq/bin/nvq-latd}
EOF
cat "$src/scripts/qemu/latd-lib.sh" >>"$tmp/script.sh"
cat >>"$tmp/script.sh" <<'EOF'
WATCH=/nvq/bin/latd-watch
WAKE=/nvq/bin/latd-wake
WORK=/tmp/latd
mkdir -p "$WORK" /run
# For the BPF program's tracepoint (libbpf finds it in tracefs).
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
nvq_load nvme || return 1
nvq_wait_blk nvme0n1 || return 1
DISK=nvme0n1
TARGET=/dev/nvme0n1
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
echo "guest: clocksource $(cat $cs), loadavg $(cat /proc/loadavg)"
echo "guest: BTF $(ls /sys/kernel/btf/vmlinux 2>/dev/null || echo none)"
latd_platform
r=1
while [ $r -le $ROUNDS ]; do
	nvq_run "off-$r" latd_round $r off
	[ -n "$LATD" ] && nvq_run "latd-$r" latd_round $r latd
	[ -n "$LATD" ] && [ "$NOHYST" != 0 ] &&
		nvq_run "latd-nohyst-$r" latd_round $r latd-nohyst
	[ "$SPIN" = 0 ] || nvq_run "spin-$r" latd_round $r spin
	r=$((r + 1))
done
if [ "$WAKE_BENCH" != 0 ]; then
	w=0
	[ "$SPIN_CPU" != 0 ] || w=1
	echo "guest: wake bench, sleeper CPU $SPIN_CPU, waker CPU $w"
	$WAKE -s "$SPIN_CPU" -w $w -n 1000 -r 4 | sed 's/^/LATD-WAKE /'
fi
echo "guest: loadavg $(cat /proc/loadavg)"
EOF

load0=$(cut -d' ' -f1-3 /proc/loadavg)
per=$((secs + tmo * 4 / 1000 + 8))
grc=0
sh "$src/scripts/qemu/run-guest.sh" -k "$KERNEL" -i "$tmp/initrd.cpio.gz" \
	-s "$tmp/script.sh" -c "$cpus" \
	-t $((rounds * 3 * per + 240)) -l "$log" \
	-- -drive "file=$tmp/d0.img,if=none,id=d0,format=raw,cache=unsafe" \
	-device nvme,serial=nvq-latd,drive=d0,addr=04.0 >&2 || grc=1
load1=$(cut -d' ' -f1-3 /proc/loadavg)

echo "QEMU TCG guest ($cpus vCPUs), kernel nvme driver on QEMU's NVMe" \
	"device; $rounds rounds x $secs s; limit $limit us, timeout $tmo ms," \
	"activity $act."
sed -n 's/^guest: \(clocksource\|BTF\)/guest: \1/p' "$log"
grep '  latd: ' "$log" | sort -u | head -n 20 || true
trc=0
python3 "$src/scripts/qemu/latd-table.py" "$log" "$tmo" "$load0" "$load1" ||
	trc=1
if grep -q '^LATD-WAKE ' "$log"; then
	echo
	echo "eventfd wake-up latency in the guest (latd-wake):"
	sed -n 's/^LATD-WAKE /  /p' "$log"
fi
echo "log: $log"
[ -n "$latd" ] || { echo "(no daemon rounds: nvq-latd did not build)"; exit 1; }
[ $grc = 0 ] && [ $trc = 0 ]
