#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf --verify on a file-backed emulated controller: blocks written in
# one process read back clean in another; after dd corrupts one block in
# the backing file, a --verify read exits non-zero naming that LBA.
PERF=${1:?usage: test_verify.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

run() {
	"$PERF" "$@" >"$dir/out" 2>"$dir/err"
}

for lbads in 12 9; do
	img=$dir/disk$lbads.img
	dev=emu:file=$img,size=2M,lbads=$lbads
	lba=$((1 << lbads))
	if ! run -d "$dev" --rw write --verify --qd 8 --threads 2; then
		echo "FAIL: verify write (lbads=$lbads):" >&2
		cat "$dir/out" "$dir/err" >&2
		fail=1
		continue
	fi
	grep -q "0 bad" "$dir/out" || {
		echo "FAIL: write read-back not clean" >&2
		fail=1
	}
	if ! run -d "$dev" --rw read --verify --qd 8 --bs 8k; then
		echo "FAIL: clean read --verify failed (lbads=$lbads):" >&2
		cat "$dir/err" >&2
		fail=1
	fi
	# Corrupt LBA 77: garbage over its first bytes.
	dd if=/dev/urandom of="$img" bs=$lba seek=77 count=1 conv=notrunc \
		2>/dev/null
	if run -d "$dev" --rw read --verify --qd 4; then
		echo "FAIL: corrupted block went unnoticed (lbads=$lbads)" >&2
		fail=1
	elif ! grep -q "LBA 77" "$dir/err"; then
		echo "FAIL: message does not name LBA 77:" >&2
		cat "$dir/err" >&2
		fail=1
	fi
	# One flipped payload byte in LBA 200: a CRC mismatch.
	printf 'Z' | dd of="$img" bs=1 seek=$((200 * lba + lba - 3)) \
		conv=notrunc 2>/dev/null
	if run -d "$dev" --rw read --verify --qd 4 --mode thread; then
		echo "FAIL: flipped byte went unnoticed (lbads=$lbads)" >&2
		fail=1
	elif ! grep -q "LBA 200: crc32c" "$dir/err"; then
		echo "FAIL: message does not name LBA 200's crc:" >&2
		cat "$dir/err" >&2
		fail=1
	fi
done

# Random writes with --verify read back the same offsets, in every mode.
for mode in poll wait thread; do
	run -d "emu:size=4M" --rw randwrite --verify --ios 300 --qd 8 \
		--threads 2 --mode $mode || {
		echo "FAIL: randwrite --verify --mode $mode:" >&2
		cat "$dir/out" "$dir/err" >&2
		fail=1
	}
	grep -q "600 blocks checked, 0 bad" "$dir/out" || {
		echo "FAIL: randwrite --verify --mode $mode checked wrong count" >&2
		cat "$dir/out" >&2
		fail=1
	}
done
exit $fail
