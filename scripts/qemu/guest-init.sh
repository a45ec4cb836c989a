#!/bin/sh
# /init of the vfio test guest (scripts/qemu/build-initramfs.sh puts it
# there). Mounts the basics, offers the test script a few helpers, runs
# the script the host passed through fw_cfg (opt/nvq/script), prints
#   NVQ-GUEST-RESULT rc=N
# on the console, and powers off. The host runner parses that line.

export PATH=/nvq/bin:/bin:/sbin
export LD_LIBRARY_PATH=/nvq/lib
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
chmod 1777 /tmp
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts

# Helpers for the test script.

# nvq_load MODULE...: modprobe, failing loudly.
nvq_load() {
	for m in "$@"; do
		modprobe "$m" || { echo "guest: modprobe $m failed"; return 1; }
	done
}

# nvq_bind DRIVER BDF...: hand each device to DRIVER (driver_override,
# unbind, drivers_probe), as 'nvq setup' does. DRIVER "none" leaves the
# device without a driver.
nvq_bind() {
	drv=$1
	shift
	for bdf in "$@"; do
		d=/sys/bus/pci/devices/$bdf
		[ -d "$d" ] || { echo "guest: no device $bdf"; return 1; }
		if [ "$drv" = none ]; then
			echo nvq-none >"$d/driver_override"
		else
			echo "$drv" >"$d/driver_override"
		fi
		[ -e "$d/driver" ] && echo "$bdf" >"$d/driver/unbind"
		echo "$bdf" >/sys/bus/pci/drivers_probe
		if [ "$drv" != none ]; then
			cur=$(basename "$(readlink "$d/driver" 2>/dev/null)")
			[ "$cur" = "$drv" ] ||
				{ echo "guest: $bdf is bound to '$cur', not $drv"; return 1; }
		fi
	done
}

# nvq_wait_blk NAME: wait (10 s at most) for /dev/NAME to appear.
nvq_wait_blk() {
	i=0
	while [ ! -b "/dev/$1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -b "/dev/$1" ] || { echo "guest: /dev/$1 did not appear"; return 1; }
}

# nvq_run NAME CMD...: run one test step, print its result line.
nvq_run() {
	name=$1
	shift
	echo "guest: == $name: $*"
	"$@"
	rc=$?
	echo "NVQ-STEP $name rc=$rc"
	[ $rc = 0 ] || NVQ_FAILED="$NVQ_FAILED $name"
	return 0
}
NVQ_FAILED=

rc=3
modprobe qemu_fw_cfg 2>/dev/null
script=/sys/firmware/qemu_fw_cfg/by_name/opt/nvq/script/raw
if [ -r "$script" ]; then
	cp "$script" /tmp/nvq-script.sh
	echo "guest: $(uname -r), $(nproc) CPUs, running the test script"
	. /tmp/nvq-script.sh
	rc=$?
	if [ $rc = 0 ] && [ -n "$NVQ_FAILED" ]; then
		echo "guest: failed steps:$NVQ_FAILED"
		rc=1
	fi
else
	echo "guest: no test script in fw_cfg (opt/nvq/script)"
fi
echo "NVQ-GUEST-RESULT rc=$rc"
sync
poweroff -f
