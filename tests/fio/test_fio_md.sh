#!/bin/sh
# SPDX-License-Identifier: MIT
# fio with the nvq engine on metadata namespaces (fio's io_uring_cmd
# options md_per_io_size, pi_act, pi_chk, apptag, apptag_mask):
# - 8 bytes of separate PI, type 1: fio's verify passes, and the PI the
#   controller inserted (PRACT) checks out when nvq reads it back;
# - verify=crc32c passes on separate ms=16 without PI, on 8-byte PI with
#   pi_act=0 (the engine generates the PI, the device checks it), on
#   ms=16 type 2 with all checks, on extended LBAs (bs in data+metadata),
#   and on extended LBAs with 8-byte PI and pi_act=1 above MDTS, where
#   each block lands where fio put it;
# - a reference tag the data does not carry fails the job when pi_chk
#   names REFTAG, and the host's own guard check (pi_act=0) catches a
#   read the link corrupted;
# - md_per_io_size too small, or a bs that is no multiple of an extended
#   LBA, are refused with the reason.
#   test_fio_md.sh PATH/TO/nvq [verify|checks]
# verify (default): the first two; checks: the last two.
# Environment as for test_fio.sh (FIO, NVQ_FIO_ENGINE, NVQ_FIO_SKIP,
# NVQ_FIO_PRELOAD). Exit 0 pass, 1 fail, 77 skip.
NVQ=${1:?usage: test_fio_md.sh PATH/TO/nvq [verify|checks]}
PART=${2:-verify}
NVQ=$(cd "$(dirname "$NVQ")" && pwd)/$(basename "$NVQ") # before the cd
if [ -z "${FIO:-}" ] || [ ! -x "$FIO" ]; then
	echo "SKIP: fio is not installed (apt-get install fio)"
	exit 77
fi
if [ -z "${NVQ_FIO_ENGINE:-}" ]; then
	echo "SKIP: the nvq fio engine was not built: ${NVQ_FIO_SKIP:-}"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1
printf 'leak:/usr/bin/fio\n' >"$tmp/lsan.supp"

run_fio() {
	(
		if [ -n "${NVQ_FIO_PRELOAD:-}" ]; then
			LD_PRELOAD=$NVQ_FIO_PRELOAD
			export LD_PRELOAD
		fi
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2"
		LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$tmp/lsan.supp"
		export ASAN_OPTIONS LSAN_OPTIONS
		exec "$FIO" "$@"
	) >"$tmp/out" 2>"$tmp/err"
}

fail=0
job() { # NAME EXPECTED-RC ARGS...: a job, its exit status checked
	name=$1 want=$2
	shift 2
	run_fio --name="$name" --ioengine="$NVQ_FIO_ENGINE" --thread "$@"
	rc=$?
	if [ "$want" = 0 ] && { [ $rc -ne 0 ] || ! grep -q "err= 0" "$tmp/out"; }; then
		echo "FAIL: $name: exit $rc" >&2
		tail -20 "$tmp/out" "$tmp/err" >&2
		fail=1
		return 1
	fi
	if [ "$want" != 0 ] && [ $rc -eq 0 ]; then
		echo "FAIL: $name: exit 0, expected a failure" >&2
		tail -20 "$tmp/out" "$tmp/err" >&2
		fail=1
		return 1
	fi
	return 0
}

if [ "$PART" = verify ]; then
# fio's filename= takes no '/', so the image is a name in the cwd
if ! run_fio --name=pi --ioengine="$NVQ_FIO_ENGINE" --thread \
	--filename=emu.file=pi.img,size=8M,lbads=9,ms=8,pi=1 --rw=randwrite \
	--bs=4k --iodepth=8 --size=4M --verify=crc32c --do_verify=1; then
	echo "FAIL: fio verify on a PI namespace failed" >&2
	tail -20 "$tmp/out" "$tmp/err" >&2
	fail=1
fi
grep -q "err= 0" "$tmp/out" || {
	echo "FAIL: fio reported an error" >&2
	tail -20 "$tmp/out" >&2
	fail=1
}
if ! "$NVQ" read "emu:file=$tmp/pi.img,size=8M,lbads=9,ms=8,pi=1" -n 1 \
	-s 0 -c 8192 -p 5 -d "$tmp/data" -M "$tmp/md" 2>"$tmp/err"; then
	echo "FAIL: the PI of fio's writes does not check out" >&2
	cat "$tmp/err" >&2
	fail=1
fi

V="--rw=randwrite --iodepth=8 --size=1M --verify=crc32c --do_verify=1"
job sep16 0 --filename=emu.size=4M,lbads=9,ms=16 $V --bs=4k \
	--md_per_io_size=128
job hostpi 0 --filename=emu.size=4M,lbads=9,ms=8,pi=1 $V --bs=4k \
	--pi_act=0 --md_per_io_size=64
job type2 0 --filename=emu.size=4M,lbads=9,ms=16,pi=2 $V --bs=8k \
	--pi_act=0 --pi_chk=GUARD,REFTAG,APPTAG --apptag=0x4242 \
	--md_per_io_size=256
job ext16 0 --filename=emu.size=4M,lbads=9,ms=16,mset=1 $V --bs=4224
# Extended LBAs with 8 bytes of PI that pi_act=1 strips, bs above MDTS
# (mdts=1: 8 KiB, 15 blocks of 520 bytes a command): nvq splits each
# 64 KiB I/O at 512 bytes a block. A verify header every 512 bytes names
# its offset, so nvq's read of the region (PI inline, guard and
# reference tag checked by the controller) shows each block where fio
# put it: a split at another stride would move them.
XDEV=file=xpi.img,size=4M,lbads=9,ms=8,mset=1,pi=1,mdts=1
if job extpi 0 --filename=emu.$XDEV --rw=randwrite --iodepth=4 --size=1M \
	--bs=64k --verify=crc32c --verify_interval=512 --do_verify=1; then
	if ! "$NVQ" read "emu:file=$tmp/${XDEV#file=}" -n 1 -s 0 -c 2048 \
		-p 5 -d "$tmp/xdata" 2>"$tmp/err"; then
		echo "FAIL: extpi: the PI of the split writes does not check out" >&2
		cat "$tmp/err" >&2
		fail=1
	fi
	python3 - "$tmp/xdata" <<'PY' || fail=1
import sys
d = open(sys.argv[1], "rb").read()
# fio's verify_header: u16 magic 0xacca, u16 type, u32 len, u64 seed,
# u64 offset; one per 512-byte block, then the 8 bytes of PI
bad = [i for i in range(2048)
       if int.from_bytes(d[i * 520:i * 520 + 2], "little") != 0xacca or
       int.from_bytes(d[i * 520 + 16:i * 520 + 24], "little") != i * 512]
if len(d) != 2048 * 520 or bad:
    sys.exit("FAIL: extpi: %d of 2048 blocks not where fio wrote them: %s"
             % (len(bad), bad[:8]))
PY
fi
exit $fail
fi

# Blocks whose PI is all zeroes, written without checks (nvq -p 0): the
# reference tag of LBA 1 and on is not theirs, the application tag is 0.
head -c 32768 /dev/urandom >"$tmp/data"
head -c 512 /dev/zero >"$tmp/zmd"
RDEV="file=$tmp/ref.img,size=4M,lbads=9,ms=8,pi=1"
if ! "$NVQ" write "emu:$RDEV" -n 1 -s 0 -z 32768 -d "$tmp/data" \
	-M "$tmp/zmd" -y 512 -p 0 2>"$tmp/err"; then
	echo "FAIL: nvq write of zeroed PI failed" >&2
	cat "$tmp/err" >&2
	fail=1
fi
R="--filename=emu.file=ref.img,size=4M,lbads=9,ms=8,pi=1 --rw=read --bs=4k"
R="$R --size=32k"
job reftag 1 $R --pi_chk=REFTAG &&
	! grep -q "Reference Tag Check Error" "$tmp/err" && {
	echo "FAIL: reftag: not the reference tag check that failed" >&2
	tail -5 "$tmp/err" >&2
	fail=1
}
job reftag-host 1 $R --pi_act=0 --pi_chk=REFTAG --md_per_io_size=64
job apptag0 0 $R --pi_act=0 --pi_chk=APPTAG --apptag=0 --md_per_io_size=64
# a byte flipped after the controller's check of PI it inserted: only
# the engine's own guard check (pi_act=0) sees it
G=emu.file=good.img,size=4M,lbads=9,ms=8,pi=1
job good 0 --filename=$G --bs=4k --size=32k --rw=write
job corrupt 1 --filename=$G,fault=corrupt@nth=2 --bs=4k --size=32k \
	--rw=read --pi_act=0 \
	--pi_chk=GUARD --md_per_io_size=64 &&
	! grep -q "host PI check: .*Guard Check Error" "$tmp/err" && {
	echo "FAIL: corrupt: the engine's guard check did not say so" >&2
	tail -5 "$tmp/err" >&2
	fail=1
}

# Refused before any I/O, with the reason.
job small 1 --filename=emu.size=4M,lbads=9,ms=16 --rw=randread --bs=4k \
	--size=1M --md_per_io_size=64 &&
	! grep -q "md_per_io_size should be at least 128 bytes" "$tmp/err" && {
	echo "FAIL: small md_per_io_size: no reason given" >&2
	fail=1
}
job extbs 1 --filename=emu.size=4M,lbads=9,ms=16,mset=1 --rw=randread \
	--bs=4k --size=1M &&
	! grep -q "not multiples of the 528-byte LBA with metadata" \
		"$tmp/err" && {
	echo "FAIL: extended bs: no reason given" >&2
	fail=1
}
exit $fail
