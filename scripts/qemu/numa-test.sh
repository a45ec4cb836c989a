#!/bin/sh
# The two-node check of the PRP list pools (meson test vfio-numa): boot
# the QEMU guest with 4 CPUs on two NUMA nodes (CPUs 0-1 and 512 MiB on
# node 0, CPUs 2-3 and 512 MiB on node 1), one NVMe controller on the
# root bus (no node) and one behind a PCIe expander bridge on node 1,
# and run tests/vfio/guest_numa.c in it: on the emulated controller and
# on both devices through vfio-pci, each queue's pools, pool structures
# and cache must be on the node of its CPUs (or of its interrupt CPU
# where they span nodes), as the kernel reports it (get_mempolicy).
# Exits 77 (skip) with a reason when QEMU or a kernel image is missing.
#
# usage: numa-test.sh SRC_ROOT BUILD_ROOT
set -eu

src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
. "$src/scripts/qemu/common.sh"

nvq_qemu_deps || exit $?
nvq_guest_build "$src" "$build" || { echo "FAIL: building the guest"; exit 1; }

# The standard guest plus nvq-numa-guest, in an initramfs of its own.
initrd=$GUEST_BIN/initramfs-numa.cpio.gz
(
	flock 9
	ninja -C "$GUEST_BIN" tests/vfio/nvq-numa-guest \
		>>"$build/vfio-guest-build.log" 2>&1 ||
		{ tail -n 40 "$build/vfio-guest-build.log"; exit 1; }
	bins="$GUEST_BIN/tests/vfio/nvq-numa-guest $GUEST_BIN/tools/nvq"
	stale=
	[ -f "$initrd" ] || stale=1
	for f in $bins "$src"/scripts/qemu/guest-init.sh \
		"$src"/scripts/qemu/build-initramfs.sh; do
		[ -n "$(find "$f" -newer "$initrd" 2>/dev/null)" ] && stale=1
	done
	if [ -n "$stale" ]; then
		# shellcheck disable=SC2086
		sh "$src/scripts/qemu/build-initramfs.sh" "$initrd" "$KVER" \
			$bins || exit 1
	fi
) 9>"$build/vfio-guest.lock" || { echo "FAIL: building the guest"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvq-numa.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
truncate -s 64M "$tmp/d0.img" "$tmp/d1.img"
script=$tmp/script.sh
cat >"$script" <<'EOF'
# nvme_on_node NODE: the BDF of the NVMe controller whose numa_node is
# NODE (-1: none), from sysfs.
nvme_on_node() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/class")" = 0x010802 ] || continue
		[ "$(cat "$d/numa_node")" = "$1" ] && { basename "$d"; return 0; }
	done
	echo "guest: no NVMe controller on node $1" >&2
	return 1
}
echo "guest: nodes: $(ls -d /sys/devices/system/node/node* | tr '\n' ' ')"
for n in /sys/devices/system/node/node*; do
	echo "guest: $(basename "$n"): cpus $(cat "$n/cpulist")"
done
nvq_load vfio-pci vfio_iommu_type1 || return 1
n1=$(nvme_on_node 1) || return 1
n0=$(nvme_on_node -1) || return 1
echo "guest: NVMe $n1 on node 1, $n0 on no node"
nvq_bind vfio-pci "$n1" "$n0" || return 1
nvq_run emu nvq-numa-guest emu:size=32M --nodes 2 --device-node 0
nvq_run vfio-node1 nvq-numa-guest "vfio:$n1" --nodes 2 --device-node 1
nvq_run vfio-nonode nvq-numa-guest "vfio:$n0" --nodes 2 --device-node 0
EOF

echo "numa-test: kernel $KVER"
rc=0
sh "$src/scripts/qemu/run-guest.sh" -k "$KERNEL" -i "$initrd" \
	-s "$script" -t "${NVQ_QEMU_TIMEOUT:-300}" -l "$build/vfio-numa.log" \
	-c 4 -m 1G -- \
	-object memory-backend-ram,size=512M,id=m0 \
	-object memory-backend-ram,size=512M,id=m1 \
	-numa node,nodeid=0,cpus=0-1,memdev=m0 \
	-numa node,nodeid=1,cpus=2-3,memdev=m1 \
	-drive "file=$tmp/d0.img,if=none,id=d0,format=raw,cache=unsafe" \
	-drive "file=$tmp/d1.img,if=none,id=d1,format=raw,cache=unsafe" \
	-device pxb-pcie,id=pxb1,bus_nr=32,numa_node=1,bus=pcie.0,addr=08.0 \
	-device pcie-root-port,id=rp1,bus=pxb1,chassis=1,slot=1 \
	-device nvme,serial=nvq-node1,drive=d0,bus=rp1 \
	-device nvme,serial=nvq-nonode,drive=d1,bus=pcie.0,addr=04.0 || rc=$?
exit $rc
