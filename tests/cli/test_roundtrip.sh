#!/bin/bash
# Data written by one nvq process is read back by another, through a
# file-backed emulated controller: 4096- and 512-byte LBAs, transfers
# larger than the tool's 1 MiB chunk, stdin/stdout, hex numbers, COUNT
# shorter than the file, and two namespaces.
. "$(dirname "$0")/lib.sh"

# roundtrip DEV LBS SLBA BYTES: write BYTES of random data at SLBA, read
# them back in a new process, compare, and check the backing file itself.
roundtrip() {
	local dev=$1 lbs=$2 slba=$3 bytes=$4 img=$5
	local blocks=$((bytes / lbs))

	head -c "$bytes" /dev/urandom >"$TMP/data"
	ok write "$dev" -n 1 -s "$slba" -d "$TMP/data" || return
	ok read "$dev" -n 1 -s "$slba" -c "$blocks" -d "$TMP/back" || return
	same "$TMP/data" "$TMP/back" "read back ($dev, $blocks at $slba)"
	# the data went to the device's medium, at SLBA * LBA size
	dd if="$img" bs="$lbs" skip="$slba" count="$blocks" status=none |
		cmp -s - "$TMP/data" ||
		fail "backing file of $dev does not hold the data at LBA $slba"
}

DEV="emu:file=$TMP/disk.img,size=16M"
roundtrip "$DEV" 4096 10 $((3 * 1048576 + 5 * 4096)) "$TMP/disk.img"
roundtrip "$DEV" 4096 0 4096 "$TMP/disk.img"
roundtrip "$DEV" 4096 4095 4096 "$TMP/disk.img" # the last block

DEV9="emu:file=$TMP/disk9.img,size=16M,lbads=9"
roundtrip "$DEV9" 512 7 $((2 * 1048576 + 3 * 512)) "$TMP/disk9.img"
roundtrip "$DEV9" 512 32767 512 "$TMP/disk9.img"

# hex numbers and long options; read to standard output
head -c 65536 /dev/urandom >"$TMP/data"
ok write "$DEV" --namespace-id=0x1 --start-block=0x100 --data="$TMP/data"
ok read "$DEV" --namespace-id 1 --start-block 256 --block-count 0x10 \
	--data - && same "$TMP/out" "$TMP/data" "read to stdout"

# write from standard input, with and without COUNT
head -c $((1048576 + 8192)) /dev/urandom >"$TMP/data"
ok write "$DEV" -n 1 -s 1000 -d - < <(cat "$TMP/data") # a pipe
ok read "$DEV" -n 1 -s 1000 -c 258 -d "$TMP/back"
same "$TMP/data" "$TMP/back" "write from a pipe"
head -c 16384 /dev/urandom >"$TMP/data"
ok write "$DEV9" -n 1 -s 100 -c 32 -d - <"$TMP/data"
ok read "$DEV9" -n 1 -s 100 -c 32 -d "$TMP/back"
same "$TMP/data" "$TMP/back" "write from stdin with COUNT"

# COUNT shorter than the file: only COUNT blocks are written
ok write-zeroes "$DEV" -n 1 -s 3000 -c 8
head -c $((8 * 4096)) /dev/urandom >"$TMP/data"
ok write "$DEV" -n 1 -s 3000 -c 3 -d "$TMP/data"
ok read "$DEV" -n 1 -s 3000 -c 8 -d "$TMP/back"
head -c $((3 * 4096)) "$TMP/data" >"$TMP/want"
head -c $((5 * 4096)) /dev/zero >>"$TMP/want"
same "$TMP/want" "$TMP/back" "write -c 3 of an 8-block file"

# flush, also of all namespaces
ok flush "$DEV" -n 1
ok flush "$DEV" -n 0xffffffff

# two namespaces: what goes to one does not show up in the other
DEV2="emu:file=$TMP/two.img,size=4M,ns=2"
head -c 8192 /dev/urandom >"$TMP/data"
ok write "$DEV2" -n 2 -s 5 -d "$TMP/data"
ok read "$DEV2" -n 2 -s 5 -c 2 -d "$TMP/back"
same "$TMP/data" "$TMP/back" "namespace 2 read back"
ok read "$DEV2" -n 1 -s 5 -c 2 -d "$TMP/back"
head -c 8192 /dev/zero >"$TMP/want"
same "$TMP/want" "$TMP/back" "namespace 1 untouched by a write to 2"

finish
