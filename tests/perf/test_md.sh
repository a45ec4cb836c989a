#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf on metadata namespaces (docs/perf.md, "Metadata"):
# - 8 bytes of separate PI with the controller inserting it (PRACT): the
#   PI left on the medium checks out when read back with nvq;
# - every format class runs: ms 8/16/64, separate and extended, no PI
#   and PI types 1, 2, 3 (type 3 with the PI first), with --pi-act 1 and
#   0 (the host generating the PI and checking what reads return), a
#   bounded number of I/Os, no errors, --verify where it applies;
# - the JSON and text say the format and the PI mode;
# - an application tag other than the one written, with the app-tag
#   check on, fails the reads (counted errors, exit 1), as does data the
#   link corrupts when the host checks the guard (--pi-verify);
# - extended LBAs with 8 bytes of PI and PRACT, I/O split above MDTS;
# - what cannot work exits 2 before any I/O, with the reason.
PERF=${1:?usage: test_md.sh PATH/TO/nvq-perf PATH/TO/nvq}
NVQ=${2:?usage: test_md.sh PATH/TO/nvq-perf PATH/TO/nvq}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

DEV="emu:file=$dir/pi.img,size=4M,lbads=9,ms=8,pi=1"
if ! "$PERF" -d "$DEV" --rw write --bs 4k --qd 4 --size 1M --ios 256 \
	--verify >"$dir/out" 2>"$dir/err"; then
	echo "FAIL: nvq-perf --verify on a PI namespace failed" >&2
	cat "$dir/err" >&2
	fail=1
fi
grep -Eq "verify +: [1-9][0-9]* blocks checked, 0 bad" "$dir/out" || {
	echo "FAIL: --verify checked nothing or found bad blocks" >&2
	cat "$dir/out" >&2
	fail=1
}
grep -q "pi           : controller (PRACT" "$dir/out" || {
	echo "FAIL: the text does not say the controller made the PI" >&2
	fail=1
}
# the PI PRACT put there: guard and reference tag of each LBA
if ! "$NVQ" read "$DEV" -n 1 -s 0 -c 2048 -p 5 -d "$dir/data" \
	-M "$dir/md" 2>"$dir/err"; then
	echo "FAIL: the PI nvq-perf's writes left does not check out" >&2
	cat "$dir/err" >&2
	fail=1
fi

# Every format class. Extended LBAs count --bs in blocks of data and
# metadata (fio's rule) unless PRACT strips 8 bytes of PI; --verify
# would overwrite PI that travels in the data buffer (refused below).
runs=0
for ms in 8 16 64; do
	for mset in 0 1; do
		for pi in 0 1 2 3; do
			for act in 1 0; do
				[ $pi = 0 ] && [ $act = 0 ] && continue
				u="emu:size=2M,lbads=9,ms=$ms,mset=$mset"
				[ $pi != 0 ] && u="$u,pi=$pi"
				[ $pi = 3 ] && u="$u,pil=1"
				bs=4096
				strip=0
				[ $pi != 0 ] && [ $act = 1 ] && [ $ms = 8 ] &&
					strip=1
				[ $mset = 1 ] && [ $strip = 0 ] &&
					bs=$((8 * (512 + ms)))
				set -- --rw write --verify
				[ $mset = 1 ] && [ $pi != 0 ] &&
					[ $strip = 0 ] && set -- --rw randrw
				[ $act = 0 ] && set -- "$@" --pi-verify
				runs=$((runs + 1))
				if ! "$PERF" -d "$u" --bs $bs \
					--size $((bs * 64)) --ios 32 --qd 4 \
					--pi-act $act "$@" >"$dir/out" \
					2>"$dir/err"; then
					echo "FAIL: nvq-perf -d $u --bs $bs" \
						"--pi-act $act $*" >&2
					cat "$dir/err" >&2
					fail=1
				fi
				case "$*" in
				*--verify*)
					grep -Eq "verify +: [1-9][0-9]* blocks checked, 0 bad" \
						"$dir/out" || {
						echo "FAIL: -d $u: verify" >&2
						cat "$dir/out" >&2
						fail=1
					}
					;;
				esac
			done
		done
	done
done
[ $runs = 42 ] || {
	echo "FAIL: $runs format runs, expected 42" >&2
	fail=1
}

# The JSON names the format and the PI mode (fio's option names).
if ! "$PERF" -d "emu:size=2M,lbads=9,ms=16,pi=2" --rw randwrite --ios 16 \
	--qd 2 --pi-act 0 --pi-chk GUARD,APPTAG --apptag 0x4242 --json \
	>"$dir/json" 2>"$dir/err"; then
	echo "FAIL: the JSON run failed" >&2
	cat "$dir/err" >&2
	fail=1
fi
python3 - "$dir/json" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
m, o = j["nvq"]["metadata"], j["job options"]
want = {"ms": 16, "extended": False, "block_bytes": 512, "md_per_io": 128,
        "pi_type": 2, "pi_first": False, "pi_mode": "host",
        "pi_chk": "GUARD,APPTAG", "apptag": 0x4242, "apptag_mask": 0xffff,
        "host_verify": False}
for k, v in want.items():
    if m.get(k) != v:
        sys.exit("FAIL: metadata.%s = %r, expected %r" % (k, m.get(k), v))
for k, v in {"md_per_io_size": "128", "pi_act": "0",
             "pi_chk": "GUARD,APPTAG", "apptag": "0x4242",
             "apptag_mask": "0xffff"}.items():
    if o.get(k) != v:
        sys.exit("FAIL: job options %s = %r, expected %r" % (k, o.get(k), v))
if j["error"] != 0:
    sys.exit("FAIL: error %r" % j["error"])
PY

# A mismatch: written with application tag 0x1234, read expecting 0x5678.
DEV="emu:file=$dir/tag.img,size=2M,lbads=9,ms=16,pi=1"
"$PERF" -d "$DEV" --rw write --bs 4k --size 256k --ios 64 --qd 2 \
	--apptag 0x1234 >/dev/null 2>"$dir/err" || {
	echo "FAIL: writing the tagged blocks failed" >&2
	cat "$dir/err" >&2
	fail=1
}
for act in 1 0; do
	"$PERF" -d "$DEV" --rw randread --bs 4k --size 256k --ios 16 --qd 2 \
		--pi-act $act --apptag 0x5678 --pi-chk APPTAG \
		>"$dir/out" 2>"$dir/err"
	rc=$?
	if [ $rc -ne 1 ] ||
		! grep -Eq "errors +: [1-9][0-9]* \(first: .*Application Tag Check Error" \
			"$dir/out"; then
		echo "FAIL: --apptag mismatch (--pi-act $act): exit $rc" >&2
		cat "$dir/out" "$dir/err" >&2
		fail=1
	fi
done
# the right tag reads back clean
"$PERF" -d "$DEV" --rw randread --bs 4k --size 256k --ios 16 --qd 2 \
	--apptag 0x1234 --pi-chk GUARD,REFTAG,APPTAG >/dev/null 2>"$dir/err" || {
	echo "FAIL: reading with the written tag failed" >&2
	cat "$dir/err" >&2
	fail=1
}
# A byte flipped between the controller's check and host memory: only
# the host's own guard check (--pi-verify) can see it.
"$PERF" -d "$DEV,fault=corrupt@nth=3" --rw randread --bs 4k --size 256k \
	--ios 16 --qd 2 --pi-act 0 --pi-verify >"$dir/out" 2>"$dir/err"
rc=$?
if [ $rc -ne 1 ] ||
	! grep -q "host PI check of a read .*Guard Check Error" "$dir/err"; then
	echo "FAIL: --pi-verify missed a corrupted read: exit $rc" >&2
	cat "$dir/err" >&2
	fail=1
fi

# Refused before any I/O, exit 2, with the reason.
refused() {
	msg=$1
	shift
	"$PERF" "$@" >"$dir/out" 2>"$dir/err"
	rc=$?
	if [ $rc -ne 2 ] || ! grep -q -- "$msg" "$dir/err"; then
		echo "FAIL: nvq-perf $*: exit $rc, not refused with '$msg'" >&2
		cat "$dir/err" >&2
		fail=1
	fi
}
refused "not a multiple of the 528-byte LBA size with metadata" \
	-d "emu:size=2M,lbads=9,ms=16,mset=1" --bs 4k --ios 4
refused "has its PI in the data buffer" \
	-d "emu:size=2M,lbads=9,ms=16,mset=1,pi=1" --bs 4224 --verify
refused "namespace 1 has no protection information" \
	-d "emu:size=2M,ms=16" --pi-chk GUARD --ios 4
refused "needs --pi-act 0" --pi-verify --ios 4

# Extended LBAs with 8 bytes of PI and PRACT, I/O above one command
# (mdts=1: 8 KiB, 15 blocks of 520 bytes): the library splits the data
# buffer at 512 bytes a block, which is all the controller moves. Written
# in 1 MiB I/Os (137 commands each), read back in 4 KiB ones (one command
# each, the controller checking guard and reference tag), then written
# in 4 KiB I/Os and read back in 24 KiB and 1 MiB ones; nvq's read of the
# whole region with the PI inline checks what the split writes left.
XDEV="emu:file=$dir/xpi.img,size=4M,lbads=9,ms=8,mset=1,pi=1,mdts=1"
xrun() {
	if ! "$PERF" -d "$XDEV" --size 2M "$@" >"$dir/out" 2>"$dir/err"; then
		echo "FAIL: extended PI above MDTS: nvq-perf $*" >&2
		cat "$dir/err" >&2
		fail=1
	elif ! grep -Eq "verify +: $xblocks blocks checked, 0 bad" \
		"$dir/out"; then
		echo "FAIL: extended PI above MDTS: nvq-perf $*: verify" >&2
		cat "$dir/out" "$dir/err" >&2
		fail=1
	fi
}
xblocks=4096
xrun --rw write --verify --bs 1m --qd 2
xrun --rw read --verify --bs 4k --qd 4
if ! "$NVQ" read "$XDEV" -n 1 -s 0 -c 4096 -p 5 -d "$dir/xdata" \
	2>"$dir/err"; then
	echo "FAIL: the PI of split extended writes does not check out" >&2
	cat "$dir/err" >&2
	fail=1
fi
xrun --rw write --verify --bs 4k --qd 4 --mode thread
xblocks=4080
xrun --rw read --verify --bs 24k --qd 4
xblocks=4096
xrun --rw read --verify --bs 1m --qd 2 --mode wait
exit $fail
