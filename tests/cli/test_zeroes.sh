#!/bin/bash
# write-zeroes and trim (deallocate) followed by read show zeroes where
# they were applied and the old data everywhere else.
. "$(dirname "$0")/lib.sh"

# check DEV LBS: 16 blocks of random data, zeroes on 2..5, trim on 9..12
check() {
	local dev=$1 lbs=$2

	head -c $((16 * lbs)) /dev/urandom >"$TMP/data"
	ok write "$dev" -n 1 -d "$TMP/data" || return
	ok write-zeroes "$dev" -n 1 -s 2 -c 4 || return
	ok trim "$dev" -n 1 -s 9 --block-count 4 || return
	ok read "$dev" -n 1 -c 16 -d "$TMP/back" || return
	cp "$TMP/data" "$TMP/want"
	dd if=/dev/zero of="$TMP/want" bs="$lbs" seek=2 count=4 conv=notrunc \
		status=none
	dd if=/dev/zero of="$TMP/want" bs="$lbs" seek=9 count=4 conv=notrunc \
		status=none
	same "$TMP/want" "$TMP/back" "zeroes/trim on $dev"
}

check "emu:file=$TMP/a.img,size=1M" 4096
check "emu:file=$TMP/b.img,size=1M,lbads=9" 512

# ranges of more blocks than one Write Zeroes command carries (65536)
DEV="emu:file=$TMP/big.img,size=48M,lbads=9" # 98304 blocks
head -c 4096 /dev/urandom >"$TMP/data"
ok write "$DEV" -n 1 -s 0 -d "$TMP/data"
ok write "$DEV" -n 1 -s 70000 -d "$TMP/data"
ok write "$DEV" -n 1 -s 98296 -d "$TMP/data"
ok write-zeroes "$DEV" -n 1 -c 98304
head -c 4096 /dev/zero >"$TMP/zero"
for lba in 0 70000 98296; do
	ok read "$DEV" -n 1 -s $lba -c 8 -d "$TMP/back"
	same "$TMP/zero" "$TMP/back" "write-zeroes over 98304 blocks, LBA $lba"
done
ok write "$DEV" -n 1 -s 0 -d "$TMP/data"
ok write "$DEV" -n 1 -s 70000 -d "$TMP/data"
ok trim "$DEV" -n 1 -c 98304
for lba in 0 70000; do
	ok read "$DEV" -n 1 -s $lba -c 8 -d "$TMP/back"
	same "$TMP/zero" "$TMP/back" "trim over 98304 blocks, LBA $lba"
done

finish
