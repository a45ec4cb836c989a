#!/bin/sh
# Boot the vfio test guest under QEMU (TCG, q35, emulated VT-d with
# interrupt remapping), run SCRIPT inside it and report its result.
#
# usage: run-guest.sh -k KERNEL -i INITRD -s SCRIPT [-t TIMEOUT_S]
#                     [-l LOG] [-m MEM] [-c CPUS] [-a APPEND]
#                     [-- QEMU_ARGS...]
# QEMU_ARGS add the devices (-drive/-device nvme/-device nvme-ns ...);
# -c sets -smp (default 2), -a adds to the kernel command line.
#
# Exit 0 when the guest printed "NVQ-GUEST-RESULT rc=0" and QEMU ended by
# itself; 1 otherwise (test failure, boot failure, panic or timeout),
# with the tail of the guest console on stderr. Never waits longer than
# TIMEOUT_S (default 300) plus a few seconds per boot.
#
# A guest that never reached its script (a panic or a hang during boot,
# which a heavily loaded host can cause under TCG) is booted once more,
# with the reason printed: that is the infrastructure failing, not nvq.
# A guest that ran its script is never retried.
#
# The kernel command line has no_timer_check: on a loaded host the IO-APIC
# timer check of a TCG guest can miss its ticks and panic ("timer doesn't
# work through Interrupt-remapped IO-APIC"). clocksource=tsc with
# tsc=reliable keeps clock_gettime() in the vDSO; HPET would make every
# clock read an emulated MMIO access.
set -eu

kernel='' initrd='' script='' timeout=300 log='' mem=1G cpus=2 append=''
while [ $# -gt 0 ]; do
	case $1 in
	-k) kernel=$2; shift 2 ;;
	-i) initrd=$2; shift 2 ;;
	-s) script=$2; shift 2 ;;
	-t) timeout=$2; shift 2 ;;
	-l) log=$2; shift 2 ;;
	-m) mem=$2; shift 2 ;;
	-c) cpus=$2; shift 2 ;;
	-a) append=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "run-guest: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$script" ] ||
	{ echo "usage: run-guest.sh -k KERNEL -i INITRD -s SCRIPT" \
		"[-t S] [-l LOG] [-m MEM] [-c CPUS] [-a APPEND] [-- QEMU_ARGS]" >&2; exit 2; }
own_log=
if [ -z "$log" ]; then
	log=$(mktemp "${TMPDIR:-/tmp}/nvq-guest.XXXXXX")
	own_log=1
fi

cmdline="console=ttyS0 quiet intel_iommu=on panic=-1 oops=panic"
cmdline="$cmdline no_timer_check clocksource=tsc tsc=reliable $append"

boot() {
	start=$(date +%s)
	set +e
	# -no-reboot with panic=-1: a guest panic ends QEMU at once. stdin is
	# closed so that QEMU never waits on a terminal.
	timeout -k 10 "$timeout" qemu-system-x86_64 \
		-accel tcg -M q35,kernel-irqchip=split -cpu max \
		-smp "$cpus" -m "$mem" \
		-device intel-iommu,intremap=on \
		-display none -monitor none -serial "file:$log" -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "$cmdline" \
		-fw_cfg "name=opt/nvq/script,file=$script" \
		"$@" </dev/null >"$log.qemu" 2>&1
	qrc=$?
	set -e
	took=$(($(date +%s) - start))

	result=$(sed -n 's/.*NVQ-GUEST-RESULT rc=\([0-9]*\).*/\1/p' "$log" |
		tail -n 1)
	why=
	if [ $qrc = 124 ] || [ $qrc = 137 ]; then
		why="timed out after ${timeout} s"
	elif [ $qrc != 0 ]; then
		why="QEMU failed (exit $qrc): $(tail -n 3 "$log.qemu" | tr '\n' ' ')"
	elif [ -z "$result" ]; then
		if grep -q "Kernel panic" "$log"; then
			why="guest kernel panic"
		else
			why="the guest printed no result (boot failure?)"
		fi
	elif [ "$result" != 0 ]; then
		why="guest tests failed (rc=$result)"
	fi
}

boot "$@"
if [ -n "$why" ] && ! grep -q "^guest: " "$log"; then
	echo "run-guest: the guest never reached its script ($why," \
		"${took} s, load $(cut -d' ' -f1-3 /proc/loadavg));" \
		"booting it once more" >&2
	grep -m 3 -E "Kernel panic|timer doesn't work" "$log" |
		sed 's/^/  | /' >&2 || true
	boot "$@"
fi

grep -E "^(NVQ-STEP|guest:)" "$log" | sed 's/^/  /' || true
if [ -n "$why" ]; then
	echo "run-guest: FAIL: $why (${took} s); last lines of the guest console:" >&2
	tail -n 60 "$log" | sed 's/^/  | /' >&2
	[ -s "$log.qemu" ] && sed 's/^/  qemu: /' "$log.qemu" >&2
	rm -f "$log.qemu"
	[ -n "$own_log" ] && rm -f "$log"
	exit 1
fi
echo "run-guest: PASS (${took} s)"
rm -f "$log.qemu"
[ -n "$own_log" ] && rm -f "$log"
exit 0
