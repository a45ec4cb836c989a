#!/bin/sh
# One entry of the vfio system-test matrix: boot a QEMU guest with the
# entry's emulated NVMe controllers, bind them to vfio-pci inside it and
# run the guest programs (tests/vfio/) on each. Registered as meson tests
# in suite 'vfio'; exits 77 (skip) with a reason when QEMU or a kernel
# image is missing.
#
# usage: vfio-test.sh ENTRY SRC_ROOT BUILD_ROOT
#   controllers  default controller; 4096-byte LBAs; three namespaces
#                (512/4096/512) on one controller
#   limits       mdts=1; mdts=2 (PRP lists); max_ioqpairs=1 (queues
#                shared); msix_qsize=2 (vectors shared)
#   errors       nvq setup/list/reset; not bound to vfio-pci, no driver,
#                group not viable,
#                group busy, permissions and RLIMIT_MEMLOCK, non-root use
#   fio          fio's verify jobs through the fio engine (fio/): two
#                threads at 4 KiB (poll) and at 256 KiB over mdts=5 (wait)
# Every controller offers shadow doorbells (QEMU's default) and the
# guest program checks that nvq uses them.
set -eu

entry=$1
src=$(cd "$2" && pwd)
build=$(cd "$3" && pwd)
. "$src/scripts/qemu/common.sh"

nvq_qemu_deps || exit $?
nvq_guest_build "$src" "$build" || { echo "FAIL: building the guest"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvq-vfio-$entry.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
script=$tmp/script.sh
set --

# disk ID [SIZE]: a sparse raw image for -drive ID.
disk() {
	truncate -s "${2:-64M}" "$tmp/$1.img"
	set -- "-drive" "file=$tmp/$1.img,if=none,id=$1,format=raw,cache=unsafe"
	qemu_args="$qemu_args $*"
}
qemu_args=

case $entry in
controllers)
	disk d0
	disk d1
	disk d2a
	disk d2b
	disk d2c
	qemu_args="$qemu_args
		-device nvme,serial=nvq-default,drive=d0,addr=04.0
		-device nvme,serial=nvq-lba4k,id=n1,addr=05.0
		-device nvme-ns,drive=d1,bus=n1,nsid=1,logical_block_size=4096,physical_block_size=4096
		-device nvme,serial=nvq-multins,id=n2,addr=06.0
		-device nvme-ns,drive=d2a,bus=n2,nsid=1
		-device nvme-ns,drive=d2b,bus=n2,nsid=2,logical_block_size=4096,physical_block_size=4096
		-device nvme-ns,drive=d2c,bus=n2,nsid=3"
	cat >"$script" <<'EOF'
nvq_load vfio-pci vfio_iommu_type1 || return 1
nvq_bind vfio-pci 0000:00:04.0 0000:00:05.0 0000:00:06.0 || return 1
nvq_run default nvq-vfio-guest vfio:0000:00:04.0 --ns 1 --lba 512 --dbbuf 1 --vectors 3
nvq_run lba4096 nvq-vfio-guest vfio:0000:00:05.0 --ns 1 --lba 4096 --dbbuf 1
nvq_run multi-ns nvq-vfio-guest vfio:0000:00:06.0/2 --ns 3 --lba 512,4096,512 --ios 96
EOF
	;;
limits)
	disk d0
	disk d1
	disk d2
	disk d3
	qemu_args="$qemu_args
		-device nvme,serial=nvq-mdts1,drive=d0,mdts=1,addr=04.0
		-device nvme,serial=nvq-mdts2,drive=d1,mdts=2,addr=05.0
		-device nvme,serial=nvq-1qp,drive=d2,max_ioqpairs=1,addr=06.0
		-device nvme,serial=nvq-2vec,drive=d3,msix_qsize=2,addr=07.0"
	cat >"$script" <<'EOF'
nvq_load vfio-pci vfio_iommu_type1 || return 1
nvq_bind vfio-pci 0000:00:04.0 0000:00:05.0 0000:00:06.0 0000:00:07.0 || return 1
nvq_run mdts1 nvq-vfio-guest vfio:0000:00:04.0 --mdts 8192 --ios 96
nvq_run mdts2 nvq-vfio-guest vfio:0000:00:05.0 --mdts 16384 --ios 96
nvq_run max-ioqpairs-1 nvq-vfio-guest vfio:0000:00:06.0 --queues 1 --ios 96
nvq_run msix-qsize-2 nvq-vfio-guest vfio:0000:00:07.0 --vectors 2 --ios 96
EOF
	;;
errors)
	disk d0
	disk d1
	disk d2
	disk d3
	disk d4
	# Two controllers behind a PCIe-to-PCI bridge share an IOMMU group.
	qemu_args="$qemu_args
		-device nvme,serial=nvq-vfio,drive=d0,addr=04.0
		-device nvme,serial=nvq-kernel,drive=d1,addr=05.0
		-device nvme,serial=nvq-nodrv,drive=d2,addr=06.0
		-device pcie-pci-bridge,id=br0,addr=08.0
		-device nvme,serial=nvq-grp-a,drive=d3,bus=br0,addr=01.0
		-device nvme,serial=nvq-grp-b,drive=d4,bus=br0,addr=02.0"
	cat >"$script" <<'EOF'
nvq_load vfio-pci vfio_iommu_type1 || return 1
nvq_run setup nvq setup 0000:00:04.0
nvq_bind vfio-pci 0000:01:01.0 || return 1
nvq_bind none 0000:00:06.0 || return 1
nvq_load nvme || return 1
nvq_bind nvme 0000:01:02.0 0000:00:05.0 || return 1
nvq_run errors nvq-vfio-guest-errors --vfio 0000:00:04.0 \
	--nvme 0000:00:05.0 --nodriver 0000:00:06.0 \
	--not-viable 0000:01:01.0 --blocker 0000:01:02.0
# 'nvq list' shows the vfio device; 'nvq release' gives it back: the
# kernel driver takes it over and reads what nvq wrote at LBA 0 (i * 7).
give_back() {
	nvq list | grep '^0000:00:04.0 .* vfio-pci  *vfio:0000:00:04.0' ||
		{ nvq list; echo "guest: nvq list lacks the vfio device"; return 1; }
	nvq release 0000:00:04.0 || return 1
	i=0
	while [ $i -lt 100 ]; do
		b=$(ls /sys/bus/pci/devices/0000:00:04.0/nvme/*/ 2>/dev/null |
			grep '^nvme.*n1$' | head -n 1)
		[ -n "$b" ] && [ -b "/dev/$b" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$b" ] || { echo "guest: no block device for 0000:00:04.0"; return 1; }
	got=$(dd if=/dev/$b bs=512 count=1 2>/dev/null | od -An -tu1 -N8 | tr -s ' ')
	echo "guest: /dev/$b LBA 0 starts with:$got"
	[ "$got" = " 0 7 14 21 28 35 42 49" ]
}
nvq_run give-back give_back
EOF
	;;
fio)
	# fio's own verification through the engine, over vfio: two jobs
	# (threads), a queue each, at 4 KiB and above the controller's MDTS.
	if ! command -v fio >/dev/null 2>&1; then
		echo "FAIL: fio is not installed (apt-get install fio)"
		exit 1
	fi
	if [ ! -f "$GUEST_BIN/fio/libnvq_fio.so" ]; then
		echo "FAIL: the fio engine was not built in $GUEST_BIN" \
			"(no fio source tree? run scripts/fio-source.sh;" \
			"see $build/vfio-guest-build.log)"
		exit 1
	fi
	disk d0
	# mdts=5: at most 128 KiB per command.
	qemu_args="$qemu_args
		-device nvme,serial=nvq-fio,drive=d0,mdts=5,addr=04.0"
	cat >"$script" <<'EOF'
nvq_load vfio-pci vfio_iommu_type1 || return 1
nvq_bind vfio-pci 0000:00:04.0 || return 1
# fio_verify BS IOS ARGS...: randwrite then read back with crc32c, two
# jobs of 8 MiB each. Passes when fio exits 0, reports no verify error,
# each job (terse v3: field 5 error, 6 read KiB, 47 write KiB) read back
# all it wrote, and each ran on a queue of its own with IOS commands
# (requests above MDTS take two).
fio_verify() {
	bs=$1
	ios=$2
	shift 2
	out=/tmp/fio-$bs.out
	fio --name=v --ioengine=external:/nvq/bin/libnvq_fio.so \
		--filename=vfio.0000.00.04.0 --thread=1 --numjobs=2 \
		--rw=randwrite --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--bs="$bs" --iodepth=32 --size=8M --offset_increment=16M \
		--queue_stats=1 --output-format=terse --terse-version=3 \
		"$@" >"$out" 2>&1
	rc=$?
	grep -v '^3;' "$out"
	[ $rc = 0 ] || { echo "guest: fio exit status $rc"; return 1; }
	! grep -q 'verify:' "$out" || { echo "guest: verify errors"; return 1; }
	n=$(awk -F';' '/^3;/ && $5 == 0 && $6 == 8192 && $47 == 8192' "$out" |
		wc -l)
	[ "$n" = 2 ] || { echo "guest: $n of 2 jobs wrote and read back 8 MiB"; return 1; }
	n=$(grep -c "^nvq: v: vfio:0000:00:04.0 queue [0-9]*: commands=$ios " "$out")
	[ "$n" = 2 ] || { echo "guest: expected 2 jobs on queues of" \
		"their own with $ios commands each, got $n"; return 1; }
	echo "guest: fio bs=$bs $*: 2 jobs, 8 MiB each written and verified"
}
nvq_run fio-4k fio_verify 4k 4096 --mode=poll
nvq_run fio-256k fio_verify 256k 128 --mode=wait
EOF
	;;
*)
	echo "vfio-test: unknown entry '$entry'" >&2
	exit 2
	;;
esac

echo "vfio-test: $entry: kernel $KVER"
rc=0
# shellcheck disable=SC2086
sh "$src/scripts/qemu/run-guest.sh" -k "$KERNEL" -i "$INITRD" \
	-s "$script" -t "${NVQ_QEMU_TIMEOUT:-300}" -l "$build/vfio-$entry.log" \
	-- $qemu_args || rc=$?
exit $rc
