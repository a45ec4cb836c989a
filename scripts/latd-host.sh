#!/bin/sh
# nvq-latd on this machine's own disk: read-only fio O_DIRECT 4 KiB
# random reads at QD1 (ioengine psync, fio pinned to FIO_CPU), ROUNDS
# rounds alternating
#   off   no daemon
#   latd  nvq-latd --cpu-lat-limit-us LIMIT --cpu-lat-timeout-ms
#         TIMEOUT_MS --activity ACTIVITY DISK (hysteresis on, the default)
#   latd-nohyst  the same with --hysteresis off (NOHYST=0 leaves these
#         rounds out)
#   spin  no daemon, a SCHED_IDLE busy loop on the completion CPU
#         (latd-wake --spin; SPIN=0 leaves these rounds out)
# and prints fio's clat p50/p99/max per mode; for each daemon round the
# CPUs whose pm_qos_resume_latency_us changed (sampled every 1 ms by
# scripts/latd-watch.c) against the expected ones (the submitting CPU and
# its hardware queue's interrupt CPUs, from sysfs and /proc/interrupts;
# every queue's with --activity poll), how long after the first I/O the
# limit went on and after the last I/O it came off, the daemon's CPU time
# and what `nvq-latd status --json` said; idle residency where cpuidle
# has states; then the eventfd wake-up bench (scripts/latd-wake.c), with
# and without a SCHED_IDLE spinner on the sleeper's CPU.
#
# usage: latd-host.sh [-h|--help] [BUILD_ROOT]
#   BUILD_ROOT  a configured build directory (default: build) with
#               tools/latd/nvq-latd (built here if it is not)
# environment (defaults):
#   ROUNDS=3 TIME=5 (s per fio run) LIMIT=10 TIMEOUT_MS=3 ACTIVITY=bpf
#   DISK=vda FIO_CPU=0 SPIN=1 NOHYST=1 WAKE_BENCH=1 (the wake-up bench)
#   TARGET      what fio reads: /dev/DISK where it can be opened, else
#               the largest file over 256 MiB on a filesystem of DISK
#   NVQ_LATD    the daemon binary (default BUILD_ROOT/tools/latd/nvq-latd)
#   OUT         where the log goes (default BUILD_ROOT/latd-host.log)
# Needs root (the daemon writes the PM QoS files; whatever it leaves
# changed is put back and reported). Never writes to the disk: fio runs
# with --readonly. Exit 0 when every daemon round passed, 1 otherwise,
# 2 on wrong usage.
set -eu

usage() {
	sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
-*) echo "latd-host: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "latd-host: too many arguments (see --help)" >&2; exit 2; }

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
ROUNDS=${ROUNDS:-3}
SECS=${TIME:-5}
LIMIT=${LIMIT:-10}
TMO=${TIMEOUT_MS:-3}
ACT=${ACTIVITY:-bpf}
DISK=${DISK:-vda}
FIO_CPU=${FIO_CPU:-0}
x=
for v in ROUNDS SECS TMO FIO_CPU; do
	eval "x=\$$v"
	case $x in '' | *[!0-9]*)
		echo "latd-host: ROUNDS, TIME, TIMEOUT_MS and FIO_CPU must be" \
			"numbers, not '$x'" >&2; exit 2 ;;
	esac
done
[ -d "/sys/block/$DISK" ] ||
	{ echo "latd-host: no disk $DISK in /sys/block" >&2; exit 2; }
command -v fio >/dev/null 2>&1 ||
	{ echo "latd-host: fio is not installed (apt-get install fio)" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 ||
	{ echo "latd-host: python3 is needed for the tables" >&2; exit 1; }
[ "$(id -u)" = 0 ] ||
	{ echo "latd-host: needs root (the daemon writes PM QoS files)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvq-latd-host.XXXXXX")
. "$src/scripts/qemu/latd-lib.sh"
Q0=$(latd_qos)
cleanup() {
	# Nothing of ours left running, every PM QoS value as it was.
	for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
	fixed=$(latd_qos_restore "$Q0")
	[ -z "$fixed" ] || echo "latd-host: restored PM QoS on CPUs $fixed" >&2
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cc=${CC:-cc}
WATCH=$WORK/latd-watch
WAKE=$WORK/latd-wake
$cc -O2 -Wall -o "$WATCH" "$src/scripts/latd-watch.c"
$cc -O2 -Wall -pthread -o "$WAKE" "$src/scripts/latd-wake.c"

LATD=${NVQ_LATD:-}
if [ -z "$LATD" ]; then
	if [ -f "$build/build.ninja" ] &&
		ninja -C "$build" -t targets all 2>/dev/null |
		grep -q '^tools/latd/nvq-latd:'; then
		ninja -C "$build" tools/latd/nvq-latd >"$WORK/build.log" 2>&1 ||
			{ tail -n 30 "$WORK/build.log" >&2; exit 1; }
		LATD=$build/tools/latd/nvq-latd
	else
		echo "latd-host: no nvq-latd target in $build: measuring" \
			"without the daemon" >&2
	fi
fi

# Another nvq-latd (anyone's) would hold limits of its own during every
# round and keep ours from starting.
if [ -n "$LATD" ] && "$LATD" status >/dev/null 2>&1; then
	echo "latd-host: another nvq-latd is running (nvq-latd status" \
		"answers): stop it first" >&2
	exit 1
fi

if [ -z "${TARGET:-}" ]; then
	if dd if="/dev/$DISK" of=/dev/null bs=4k count=1 iflag=direct \
		2>/dev/null; then
		TARGET=/dev/$DISK
	else
		# /dev/DISK cannot be opened (a device cgroup, say): read a
		# big existing file of one of its filesystems instead - the
		# same I/O path below the filesystem, and nothing is written.
		want=$(cat "/sys/block/$DISK/dev")
		TARGET=
		for mnt in $(awk -v d="/dev/$DISK" 'index($1, d) == 1 { print $2 }' /proc/mounts); do
			f=$(find "$mnt" -xdev -type f -size +256M -printf '%s %p\n' \
				2>/dev/null | sort -rn | head -n 1 | cut -d' ' -f2-)
			[ -n "$f" ] || continue
			dev=$(stat -c '%Hd:%Ld' "$f")
			p=$(basename "$(readlink -f "/sys/dev/block/$dev")")
			case $p in "$DISK"*) TARGET=$f; break ;; esac
		done
		[ -n "$TARGET" ] || { echo "latd-host: cannot open /dev/$DISK" \
			"and found no file over 256 MiB on it; set TARGET" >&2; exit 1; }
		echo "latd-host: /dev/$DISK cannot be opened; reading $TARGET" \
			"(on $want) instead" >&2
	fi
fi

out=${OUT:-$build/latd-host.log}
mkdir -p "$(dirname "$out")"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
{
	echo "latd-host: target $TARGET, $ROUNDS rounds x ${SECS} s," \
		"limit $LIMIT us, timeout $TMO ms, activity $ACT"
	latd_platform
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		latd_round "$r" off
		if [ -n "$LATD" ]; then
			latd_round "$r" latd || true
			[ "${NOHYST:-1}" = 0 ] ||
				latd_round "$r" latd-nohyst || true
		fi
		[ "${SPIN:-1}" = 0 ] || latd_round "$r" spin
		r=$((r + 1))
	done
} >"$out" 2>&1
load1=$(cut -d' ' -f1-3 /proc/loadavg)

rc=0
python3 "$src/scripts/qemu/latd-table.py" "$out" "$TMO" "$load0" "$load1" ||
	rc=1
[ -n "$LATD" ] || { echo "(no daemon rounds: nvq-latd did not build)"; rc=1; }
if [ "${WAKE_BENCH:-1}" != 0 ]; then
	echo
	echo "eventfd wake-up latency, sleeper on CPU $SPIN_CPU, waker on" \
		"CPU $FIO_CPU (load $(cut -d' ' -f1-3 /proc/loadavg)):"
	w=$FIO_CPU
	[ "$w" != "$SPIN_CPU" ] || w=$(((SPIN_CPU + 1) % $(nproc)))
	"$WAKE" -s "$SPIN_CPU" -w "$w" -n 2000 -r 6 | sed 's/^/  /'
fi
echo "log: $out"
exit $rc
