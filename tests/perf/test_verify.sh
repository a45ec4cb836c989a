#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf --verify on a file-backed emulated controller: blocks written in
# one process read back clean in another; after dd corrupts one block in
# the backing file, a --verify read exits non-zero naming that LBA. Random
# --verify writes cover the region once per pass and never have two I/Os
# to one block in flight.
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

# Random --verify writes follow a random map, as fio's randommap: one pass
# writes every block of the region once (independent draws would leave a
# third of them unwritten and write others twice, so the read-back of a
# block written twice cannot tell which write should be there). Blocks of
# 4 KiB, 2 threads, each its half: all 64 carry a --verify header after.
img=$dir/map.img
dev=emu:file=$img,size=1M,lbads=12
for mode in poll thread; do
	rm -f "$img"
	run -d "$dev" --rw randwrite --verify --size 256k --qd 8 --threads 2 \
		--mode $mode || {
		echo "FAIL: randwrite --verify one pass --mode $mode:" >&2
		cat "$dir/out" "$dir/err" >&2
		fail=1
	}
	grep -q "64 blocks checked, 0 bad" "$dir/out" || {
		echo "FAIL: one pass --mode $mode did not check 64 blocks" >&2
		cat "$dir/out" >&2
		fail=1
	}
	python3 - "$img" 64 4096 <<'PY' || fail=1
import sys
img, n, bs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(img, "rb").read()
bad = [b for b in range(n) if data[b * bs:b * bs + 4] != b"nvqv"]
if bad:
    print("FAIL: %d of %d blocks never written by one random pass: %s"
          % (len(bad), n, bad[:10]), file=sys.stderr)
    sys.exit(1)
PY
done
# More I/Os than blocks: passes of the map; each block is checked once.
run -d "$dev" --rw randwrite --verify --size 256k --ios 200 --qd 8 || fail=1
grep -q "64 blocks checked, 0 bad" "$dir/out" || {
	echo "FAIL: 200 random writes over 64 blocks: not 64 checked" >&2
	cat "$dir/out" "$dir/err" >&2
	fail=1
}

# No two I/Os to one block in flight while --verify writes: over 4 blocks
# --qd 8 keeps at most 4 in flight (fio's IO depths show none at 8), and
# says so. Every mode: the lanes choose in the callbacks in thread mode.
for mode in poll wait thread; do
	run -d emu:size=1M --rw randwrite --verify --size 16k --ios 400 --qd 8 \
		--mode $mode --json || {
		echo "FAIL: --verify over 4 blocks --mode $mode:" >&2
		cat "$dir/err" >&2
		fail=1
		continue
	}
	grep -q "at most 4 I/Os in flight per thread, not --qd 8" "$dir/err" || {
		echo "FAIL: no note about the depth --verify allows:" >&2
		cat "$dir/err" >&2
		fail=1
	}
	python3 - "$dir/out" <<'PY' || fail=1
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
lvl = job["iodepth_level"]
if any(lvl[k] for k in ("8", "16", "32", ">=64")):
    print("FAIL: --verify over 4 blocks had more than 4 I/Os in flight:",
          lvl, file=sys.stderr)
    sys.exit(1)
if job["write"]["total_ios"] != 400:
    print("FAIL: not 400 writes:", job["write"]["total_ios"],
          file=sys.stderr)
    sys.exit(1)
PY
done
exit $fail
