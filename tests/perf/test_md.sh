#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf on metadata namespaces: 8 bytes of separate PI run with the
# controller inserting and stripping it (PRACT), --verify passes, and the
# PI left on the medium checks out when read back with nvq (guard and
# reference tag, no PRACT). Formats nvq-perf cannot drive (other separate
# metadata, extended LBAs) are refused before any I/O, exit 2.
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
# the PI PRACT put there: guard and reference tag of each LBA
if ! "$NVQ" read "$DEV" -n 1 -s 0 -c 2048 -p 5 -d "$dir/data" \
	-M "$dir/md" 2>"$dir/err"; then
	echo "FAIL: the PI nvq-perf's writes left does not check out" >&2
	cat "$dir/err" >&2
	fail=1
fi

for u in "emu:size=4M,ms=16" "emu:size=4M,ms=8,mset=1" \
	"emu:size=4M,ms=16,pi=1"; do
	"$PERF" -d "$u" --rw randread --ios 10 >"$dir/out" 2>"$dir/err"
	rc=$?
	if [ "$rc" -ne 2 ] ||
		! grep -q "nvq-perf drives only 8 bytes of separate PI" \
			"$dir/err"; then
		echo "FAIL: nvq-perf -d $u: exit $rc, not refused" >&2
		cat "$dir/err" >&2
		fail=1
	fi
done
exit $fail
