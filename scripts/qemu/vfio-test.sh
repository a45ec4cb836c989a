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
#   metadata     one controller, ten namespaces: ms=8/16 separate and
#                extended, PI types 1-3, 16-byte PI first/last, extended
#                PI, zoned (refused); nvq read/write round trips with
#                PRACT and with PI computed on the host, the check errors
#                (guard, application and reference tag) QEMU reports,
#                nvq-perf (type 1, plain metadata, extended type 1 above
#                MDTS) and fio's verify (type 1)
#   nvmecli      one controller, two namespaces (512/4096): nvq's -o json
#                (id-ctrl, id-ns, list, the logs) and get-log's hex dumps
#                through vfio, then nvme-cli's on the kernel driver after
#                'nvq release'; every nvme-cli key in nvq's output with
#                its JSON type, identity values equal, get-log's layout
#                nvme-cli's; nvq's logs sane: SMART counters after 8
#                blocks of I/O, the raw pages equal to the decoded ones,
#                fw-log and error-log against id-ctrl
#                (scripts/qemu/json-parity.py)
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
initrd=
post=

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
metadata)
	# Metadata and end-to-end protection on QEMU's nvme-ns, whose checks
	# are the reference for nvq's (and the emulator's). The data and the
	# PI computed on the host (md-data.py, independently of nvq) come in
	# through fw_cfg as a tar file.
	if ! command -v python3 >/dev/null 2>&1; then
		echo "FAIL: python3 is needed to compute the test's PI"
		exit 1
	fi
	if [ ! -f "$GUEST_BIN/fio/libnvq_fio.so" ] ||
		! command -v fio >/dev/null 2>&1; then
		echo "FAIL: no fio or no fio engine in $GUEST_BIN (see the fio" \
			"entry and $build/vfio-guest-build.log)"
		exit 1
	fi
	mkdir "$tmp/md"
	python3 "$src/scripts/qemu/md-data.py" "$tmp/md" ||
		{ echo "FAIL: md-data.py"; exit 1; }
	(cd "$tmp/md" && tar -cf "$tmp/md.tar" ./*.bin)
	for n in 1 2 3 4 5 6 7 8 9 10; do
		disk "m$n" 8M
	done
	# nsid 1 ms=8 separate, 2 ms=8 extended, 3 ms=16 separate, 4-6 ms=8
	# PI types 1-3, 7 ms=16 type 1 PI first (pil=1), 8 ms=8 type 1
	# extended, 9 zoned, 10 ms=16 type 1 PI last (pil=0).
	ns() {
		qemu_args="$qemu_args -device nvme-ns,bus=n0,nsid=$1,drive=m$1,$2"
	}
	qemu_args="$qemu_args -fw_cfg name=opt/nvq/data,file=$tmp/md.tar
		-device nvme,serial=nvq-md,id=n0,addr=04.0"
	ns 1 ms=8,mset=0
	ns 2 ms=8,mset=1
	ns 3 ms=16,mset=0
	ns 4 ms=8,pi=1,pil=0
	ns 5 ms=8,pi=2
	ns 6 ms=8,pi=3
	ns 7 ms=16,pi=1,pil=1
	ns 8 ms=8,pi=1,mset=1
	ns 9 zoned=true,zoned.zone_size=1M,zoned.zone_capacity=1M
	ns 10 ms=16,pi=1,pil=0
	cat >"$script" <<'EOF'
nvq_load vfio-pci vfio_iommu_type1 || return 1
nvq_bind vfio-pci 0000:00:04.0 || return 1
D=/tmp/md
mkdir -p $D &&
	tar -xf /sys/firmware/qemu_fw_cfg/by_name/opt/nvq/data/raw -C $D ||
	{ echo "guest: no test data in fw_cfg (opt/nvq/data)"; return 1; }
U=vfio:0000:00:04.0
R=/tmp/r.bin
RM=/tmp/rm.bin
# Eight blocks at LBA 16; application tag 1234h unless said otherwise.
w() { nvq write $U -s 16 -c 8 "$@"; }
r() { rm -f $R $RM; nvq read $U -s 16 -c 8 "$@"; }
A="-a 0x1234 -m 0xffff"
same() { cmp "$1" "$2" || { echo "guest: $1 is not $2"; return 1; }; }
# fails WHAT CMD...: CMD exits 1 saying WHAT (an NVMe status).
fails() {
	want=$1
	shift
	out=$("$@" 2>&1)
	frc=$?
	echo "$out"
	[ $frc = 1 ] || { echo "guest: exit status $frc, not 1: $*"; return 1; }
	echo "$out" | grep -qF "$want" ||
		{ echo "guest: no '$want' from: $*"; return 1; }
}
G="End-to-end Guard Check Error (NVMe status: SCT 0x2 SC 0x82"
AT="End-to-end Application Tag Check Error (NVMe status: SCT 0x2 SC 0x83"
RT="End-to-end Reference Tag Check Error (NVMe status: SCT 0x2 SC 0x84"
IPI="Invalid Protection Information (NVMe status: SCT 0x1 SC 0x81"

# fmt NSID MS EXTENDED DPS: id-ns shows the format QEMU was given.
fmt() {
	out=$(nvq id-ns $U -n "$1") || return 1
	echo "$out" | grep -q "^lbaf .*: ms:$2 *lbads:9 .*(in use)" ||
		{ echo "$out" | grep lbaf; echo "guest: ns $1: not ms:$2 lbads:9"; return 1; }
	flbas=$(echo "$out" | sed -n 's/^flbas *: //p')
	[ $((flbas >> 4 & 1)) = "$3" ] ||
		{ echo "guest: ns $1: flbas $flbas, extended is not $3"; return 1; }
	echo "$out" | grep -q "^dps *: $4\$" ||
		{ echo "$out" | grep dps; echo "guest: ns $1: dps is not $4"; return 1; }
	echo "guest: ns $1: ms $2, extended $3, dps $4"
}
formats() {
	fmt 1 8 0 0 && fmt 2 8 1 0 && fmt 3 16 0 0 && fmt 4 8 0 0x1 &&
		fmt 5 8 0 0x2 && fmt 6 8 0 0x3 && fmt 7 16 0 0x9 &&
		fmt 8 8 1 0x1 && fmt 10 16 0 0x1
}
nvq_run id-ns formats

# Metadata without PI, separate (-M) and extended (in -d).
md_separate() {
	w -n "$1" -d $D/data.bin -M "$2" -y "$3" &&
		r -n "$1" -d $R -M $RM && same $R $D/data.bin && same $RM "$2"
}
md_extended() {
	w -n 2 -d $D/ext8.bin && r -n 2 -d $R && same $R $D/ext8.bin
}
nvq_run ms8-separate md_separate 1 $D/md8.bin 64
nvq_run ms8-extended md_extended
nvq_run ms16-separate md_separate 3 $D/md16.bin 128

# pi_pract NSID PI.bin CHECKS [OPTS]: a PRACT write (the device inserts
# the PI) read back with CHECKS (-p bits 2:0), and the PI it made is the
# one computed on the host; a PRACT read (the device checks and strips).
pi_pract() {
	n=$1
	pi=$2
	chk=$3
	shift 3
	w -n $n -d $D/data.bin -p 8 -a 0x1234 "$@" &&
		r -n $n -d $R -M $RM -p $chk $A "$@" &&
		same $R $D/data.bin && same $RM $pi &&
		r -n $n -d $R -p $((chk | 8)) $A "$@" && same $R $D/data.bin
}
# pi_host NSID PI.bin CHECKS [OPTS]: the host's PI (no PRACT), checked by
# the device on the write and on the read.
pi_host() {
	n=$1
	pi=$2
	chk=$3
	shift 3
	w -n $n -d $D/other.bin -p 8 "$@" &&
		w -n $n -d $D/data.bin -M $pi -p $chk $A "$@" &&
		r -n $n -d $R -M $RM -p $chk $A "$@" &&
		same $R $D/data.bin && same $RM $pi
}
# Type 3 has no reference tag to check: guard and application tag.
nvq_run pi1-pract pi_pract 4 $D/pi1.bin 7
nvq_run pi1-host pi_host 4 $D/pi1.bin 7
nvq_run pi2-pract pi_pract 5 $D/pi2.bin 7 -r 0x1000
nvq_run pi2-host pi_host 5 $D/pi2.bin 7 -r 0x1000
nvq_run pi3-pract pi_pract 6 $D/pi3.bin 6 -r 0xabcd0000
nvq_run pi3-host pi_host 6 $D/pi3.bin 6 -r 0xabcd0000

# Reference tags. Type 1: a checked ILBRT that is not the LBA is refused
# (Invalid Protection Information); a stored tag that is not the LBA's
# fails the check. Type 2: the tag the command expects. Type 3: none to
# check, a reference tag check is refused whatever the tag (NVM Command
# Set 1.0, 5.2.1.4), the other checks pass whatever the ILBRT.
ref_tags() {
	fails "$IPI" r -n 4 -d $R -p 9 -r 17 &&
		w -n 4 -d $D/data.bin -p 8 -r 100 &&
		fails "$RT" r -n 4 -d $R -p 9 &&
		fails "$RT" r -n 5 -d $R -p 9 -r 0x2000 &&
		r -n 5 -d $R -p 9 -r 0x1000 && same $R $D/data.bin &&
		fails "$IPI" r -n 6 -d $R -p 9 -r 0xabcd0000 &&
		r -n 6 -d $R -p 14 -r 7 $A && same $R $D/data.bin
}
nvq_run ref-tag ref_tags
# Application tag: the bits of the mask are compared.
app_tags() {
	w -n 4 -d $D/data.bin -p 8 -a 0x1234 &&
		fails "$AT" r -n 4 -d $R -p 10 -a 0x4321 -m 0xffff &&
		fails "$AT" r -n 6 -d $R -p 10 -a 0x1235 -m 0x0001 &&
		r -n 4 -d $R -p 10 -a 0x5634 -m 0x00ff && same $R $D/data.bin
}
nvq_run app-tag app_tags
# Guard: PI computed over other data. The checked write is refused and
# leaves the blocks as they were; an unchecked one stores it as given,
# and a checked read fails.
guards() {
	w -n 4 -d $D/data.bin -p 8 -a 0x1234 &&
		fails "$G" w -n 4 -d $D/data.bin -M $D/pi1-other.bin -p 4 &&
		r -n 4 -d $R -p 15 $A && same $R $D/data.bin &&
		w -n 4 -d $D/data.bin -M $D/pi1-other.bin -p 0 &&
		fails "$G" r -n 4 -d $R -p 12 &&
		r -n 4 -d $R -M $RM -p 0 && same $RM $D/pi1-other.bin
}
nvq_run guard guards

# 16 bytes of metadata, PI first (pil=1) or last (pil=0: the guard
# covers the 8 bytes before it too); PRACT keeps the other 8 bytes.
pi16() {
	n=$1
	pi=$2
	nopi=$3
	w -n $n -d $D/data.bin -M $nopi -p 8 -a 0x1234 &&
		r -n $n -d $R -M $RM -p 7 $A &&
		same $R $D/data.bin && same $RM $pi &&
		r -n $n -d $R -M $RM -p 15 $A && same $R $D/data.bin &&
		w -n $n -d $D/other.bin -M $nopi -p 8 &&
		w -n $n -d $D/data.bin -M $pi -p 7 $A &&
		r -n $n -d $R -M $RM -p 7 $A && same $RM $pi
}
nvq_run ms16-pi-first pi16 7 $D/pi16f.bin $D/pi16f-nopi.bin
nvq_run ms16-pi-last pi16 10 $D/pi16l.bin $D/pi16l-nopi.bin
# Extended LBAs with PI: PRACT moves 512 bytes a block, else 520.
pi_extended() {
	w -n 8 -d $D/data.bin -p 8 -a 0x1234 &&
		r -n 8 -d $R -p 7 $A && same $R $D/ext-pi1.bin &&
		r -n 8 -d $R -p 15 $A && same $R $D/data.bin &&
		w -n 8 -d $D/other.bin -p 8 &&
		w -n 8 -d $D/ext-pi1.bin -p 7 $A &&
		r -n 8 -d $R -p 7 $A && same $R $D/ext-pi1.bin
}
nvq_run pi1-extended pi_extended
# The zoned namespace: refused with the library's reason.
nvq_run zoned fails "namespace 9: it uses the Zoned command set (CSI 2)" \
	r -n 9 -d $R

# nvq-perf on the type 1 namespace (PRACT), verified; on the one with
# plain separate metadata it moves a metadata buffer with each I/O.
perf_pi() {
	out=$(nvq-perf -d $U/4 --rw randwrite --verify --bs 4k --qd 8 \
		--size 1M 2>&1)
	prc=$?
	echo "$out" | grep -E "verify|nvq-perf:"
	[ $prc = 0 ] || { echo "guest: nvq-perf exit status $prc"; return 1; }
	echo "$out" | grep -q "verify *: 2048 blocks checked, 0 bad" ||
		{ echo "guest: nvq-perf did not check 2048 blocks"; return 1; }
	out=$(nvq-perf -d $U/1 --rw randwrite --verify --size 64k 2>&1)
	prc=$?
	echo "$out" | grep -E "metadata|verify|nvq-perf:"
	[ $prc = 0 ] || { echo "guest: nvq-perf on ns 1: exit status $prc"; return 1; }
	echo "$out" | grep -q "metadata *: 8 bytes per block, separate" &&
		echo "$out" | grep -q "verify *: 128 blocks checked, 0 bad" ||
		{ echo "guest: nvq-perf on ns 1: no metadata or verify line"; return 1; }
}
nvq_run perf-pi1 perf_pi
# Extended type 1 (ns 8) with PRACT above MDTS (512 KiB): 2 MiB writes
# split in 5 commands at 512 bytes a block, read back verified in 4 KiB
# I/Os, one command each, QEMU checking guard and reference tag.
perf_ext() {
	for a in "write --bs 2m --qd 2" "read --bs 4k --qd 8"; do
		out=$(nvq-perf -d $U/8 --verify --size 4M --rw $a 2>&1)
		prc=$?
		echo "$out" | grep -E "verify|nvq-perf:"
		[ $prc = 0 ] || { echo "guest: nvq-perf --rw $a: exit status $prc"; return 1; }
		echo "$out" | grep -q "verify *: 8192 blocks checked, 0 bad" ||
			{ echo "guest: nvq-perf --rw $a did not check 8192 blocks"; return 1; }
	done
}
nvq_run perf-pi1-ext-split perf_ext

# fio's verify on the type 1 namespace (the engine sets PRACT), then the
# PI it left there, which the device checks (guard, reference tag).
fio_pi() {
	out=/tmp/fio-pi.out
	fio --name=v --ioengine=external:/nvq/bin/libnvq_fio.so \
		--filename=vfio.0000.00.04.0/4 --thread=1 --rw=randwrite \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --bs=4k \
		--iodepth=16 --size=1M --output-format=terse \
		--terse-version=3 >$out 2>&1
	frc=$?
	grep -v '^3;' $out
	[ $frc = 0 ] || { echo "guest: fio exit status $frc"; return 1; }
	! grep -q 'verify:' $out || { echo "guest: verify errors"; return 1; }
	n=$(awk -F';' '/^3;/ && $5 == 0 && $6 == 1024 && $47 == 1024' $out |
		wc -l)
	[ "$n" = 1 ] || { echo "guest: fio did not write and read 1 MiB"; return 1; }
	nvq read $U -n 4 -s 0 -c 2048 -d $R -p 13 &&
		echo "guest: fio: 1 MiB verified, its PI checked by the device"
}
nvq_run fio-pi1 fio_pi
EOF
	;;
nvmecli)
	# nvme-cli's JSON against nvq's on one controller: nvq through vfio,
	# then nvme-cli on the kernel driver after 'nvq release'. The guest
	# prints both; json-parity.py compares them here, after it exited.
	# nvme-cli and its libraries travel in an archive appended to the
	# initramfs of this entry alone.
	nvme=$(command -v nvme || true)
	if [ -z "$nvme" ] || ! command -v python3 >/dev/null 2>&1; then
		echo "FAIL: nvme-cli and python3 are needed (apt-get install nvme-cli)"
		exit 1
	fi
	sh "$src/scripts/qemu/build-initramfs.sh" --add "$tmp/nvme.cpio.gz" \
		"$nvme" || { echo "FAIL: packing nvme-cli"; exit 1; }
	cat "$INITRD" "$tmp/nvme.cpio.gz" >"$tmp/initrd.cpio.gz"
	initrd=$tmp/initrd.cpio.gz
	post="python3 $src/scripts/qemu/json-parity.py $build/vfio-$entry.log"
	disk c1
	disk c2
	qemu_args="$qemu_args
		-device nvme,serial=nvq-cli,id=n0,addr=04.0
		-device nvme-ns,drive=c1,bus=n0,nsid=1
		-device nvme-ns,drive=c2,bus=n0,nsid=2,logical_block_size=4096,physical_block_size=4096"
	cat >"$script" <<'EOF'
# No kernel messages in the middle of the JSON on the console.
dmesg -n 1
nvq_load vfio-pci vfio_iommu_type1 nvme || return 1
nvq_bind vfio-pci 0000:00:04.0 || return 1
# dump TOOL NAME CMD...: CMD's output between markers, with its status.
dump() {
	dtool=$1
	dname=$2
	shift 2
	"$@" >/tmp/j.out 2>/tmp/j.err
	drc=$?
	echo "NVQ-JSON-BEGIN $dtool $dname rc=$drc"
	cat /tmp/j.out
	echo "NVQ-JSON-END $dtool $dname"
	sed 's/^/guest: stderr: /' /tmp/j.err
	echo "guest: $dtool $dname: exit $drc"
}
# The log commands as far as this nvq has them.
LOGS="smart-log error-log fw-log sanitize-log"
# get-log's hex dumps: SMART / Health (02h), Error Information (01h).
GETLOGS="2:512 1:256"
U=vfio:0000:00:04.0
nvq_side() {
	dump nvq id-ctrl nvq id-ctrl $U -o json
	dump nvq id-ns-1 nvq id-ns $U -n 1 -o json
	dump nvq id-ns-2 nvq id-ns $U -n 2 -o json
	dump nvq list nvq list $U -o json
	# I/O first, so that the SMART counters moved (json-parity.py
	# checks them): 8 blocks written and read back on namespace 1.
	dd if=/dev/urandom of=/tmp/io.bin bs=512 count=8 2>/dev/null
	nvq write $U -n 1 -s 0 -c 8 -d /tmp/io.bin &&
		nvq read $U -n 1 -s 0 -c 8 -d /tmp/io-r.bin &&
		cmp /tmp/io.bin /tmp/io-r.bin &&
		echo "guest: nvq I/O: 8 blocks written and read back" ||
		echo "guest: nvq I/O failed"
	for l in $LOGS; do
		if nvq help $l >/dev/null 2>&1; then
			dump nvq $l nvq $l $U -o json
		else
			echo "guest: nvq has no $l"
		fi
	done
	for g in $GETLOGS; do
		dump nvq get-log-${g%:*} nvq get-log $U -i ${g%:*} -l ${g#*:}
	done
}
nvq_run nvq-json nvq_side
# 'nvq release': the kernel's nvme driver takes the controller.
kernel_side() {
	nvq release 0000:00:04.0 || return 1
	nvq_wait_blk nvme0n2 || return 1
	dump nvme id-ctrl nvme id-ctrl /dev/nvme0 -o json
	dump nvme id-ns-1 nvme id-ns /dev/nvme0 -n 1 -o json
	dump nvme id-ns-2 nvme id-ns /dev/nvme0 -n 2 -o json
	dump nvme list nvme list -o json
	for l in $LOGS; do
		dump nvme $l nvme $l /dev/nvme0 -o json
	done
	for g in $GETLOGS; do
		dump nvme get-log-${g%:*} nvme get-log /dev/nvme0 \
			--log-id=${g%:*} --log-len=${g#*:}
	done
}
nvq_run nvme-cli-json kernel_side
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
sh "$src/scripts/qemu/run-guest.sh" -k "$KERNEL" -i "${initrd:-$INITRD}" \
	-s "$script" -t "${NVQ_QEMU_TIMEOUT:-300}" -l "$build/vfio-$entry.log" \
	-- $qemu_args || rc=$?
# What the guest printed, checked on the host.
if [ $rc = 0 ] && [ -n "$post" ]; then
	$post || rc=1
fi
exit $rc
