#!/bin/sh
# 'nvq setup' and 'nvq release' against a fake sysfs tree (NVQ_SYSFS_PCI):
# bad addresses are usage errors (2); a missing device, a device that is
# not NVMe, one without an IOMMU group or one that the driver does not
# take fail (1) with a message; a device already where it should be is
# fine (0). The real binding runs in the QEMU guest (vfio-errors).
# usage: test_cli_setup.sh NVQ
set -u
nvq=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sys=$tmp/sys/bus/pci
mkdir -p "$sys/devices" "$sys/drivers/nvme" "$sys/drivers/vfio-pci"
: >"$sys/drivers_probe"
export NVQ_SYSFS_PCI="$sys/devices"

fail() { echo "cli_setup: $*" >&2; exit 1; }

# mkdev BDF CLASS DRIVER GROUP ("" = none)
mkdev() {
	d=$sys/devices/$1
	mkdir -p "$d"
	echo "$2" >"$d/class"
	: >"$d/driver_override"
	if [ -n "$3" ]; then
		mkdir -p "$sys/drivers/$3"
		: >"$sys/drivers/$3/unbind"
		ln -s "../../drivers/$3" "$d/driver"
	fi
	[ -n "$4" ] && ln -s "../../../kernel/iommu_groups/$4" "$d/iommu_group"
	return 0
}
mkdev 0000:01:00.0 0x010802 nvme 3
mkdev 0000:02:00.0 0x010802 vfio-pci 4
mkdev 0000:03:00.0 0x020000 e1000e 5
mkdev 0000:04:00.0 0x010802 nvme ""

# expect STATUS PATTERN ARGS...: exit status and a line of the output.
expect() {
	want=$1 pat=$2
	shift 2
	"$nvq" "$@" >"$tmp/out" 2>&1
	rc=$?
	[ $rc = "$want" ] || { cat "$tmp/out"; fail "nvq $*: exit $rc, want $want"; }
	grep -q -- "$pat" "$tmp/out" || { cat "$tmp/out"; fail "nvq $*: no '$pat'"; }
}

expect 2 "missing PCI address" setup
expect 2 "missing PCI address" release
expect 2 "'zz' is not a PCI address" setup zz
expect 2 "is not a PCI address" setup 0000:01:00.0.1
expect 2 "unexpected argument" setup 0000:01:00.0 extra
expect 1 "no PCI device 0000:09:00.0" setup 0000:09:00.0
expect 1 "is not an NVMe controller" setup 0000:03:00.0
expect 1 "is not an NVMe controller" release 03:00.0
expect 0 "already bound to vfio-pci (IOMMU group 4); open it as vfio:0000:02:00.0" setup 02:00.0
expect 0 "already bound to nvme" release 0000:01:00.0
expect 1 "has no IOMMU group" setup 0000:04:00.0
# The fake kernel does not move the device: the tool notices.
expect 1 "vfio-pci did not take it (driver: nvme)" setup 0000:01:00.0
[ "$(cat "$sys/devices/0000:01:00.0/driver_override")" = vfio-pci ] ||
	fail "setup did not write driver_override"
[ "$(cat "$sys/drivers/nvme/unbind")" = 0000:01:00.0 ] ||
	fail "setup did not unbind from nvme"
[ "$(cat "$sys/drivers_probe")" = 0000:01:00.0 ] ||
	fail "setup did not ask drivers_probe"
expect 1 "nvme driver did not take it (driver: vfio-pci)" release 0000:02:00.0
[ "$(cat "$sys/devices/0000:02:00.0/driver_override")" = "" ] ||
	fail "release did not clear driver_override"
# reset is a controller reset (nvme-cli's): a PCI address points to release.
expect 2 "use 'nvq release 0000:01:00.0'" reset 0000:01:00.0
expect 2 "use 'nvq release 01:00.0'" reset 01:00.0
expect 0 "emu:: controller reset: disabled (CC.EN=0), enabled again" reset emu:
"$nvq" help | grep -q "setup" || fail "help lists no setup"
"$nvq" help | grep -q "release" || fail "help lists no release"
echo "cli_setup: ok"
