#!/bin/bash
# read/write take nvme-cli's option names (-s -c -z -d -f -n and their
# long forms). nvq's -c is the number of blocks, nvme-cli's is 0-based:
# -z alone gives the count, and a -c that disagrees with -z is a usage
# error naming both conventions.
. "$(dirname "$0")/lib.sh"

DEV="emu:file=$TMP/disk.img,size=4M,lbads=9"

head -c 8192 /dev/urandom >"$TMP/data"
# write with -z only: 16 blocks of 512 bytes from the file's first 8192
ok write "$DEV" -n 1 -s 4 -z 8192 -d "$TMP/data"
dd if="$TMP/disk.img" bs=512 skip=4 count=16 status=none |
	cmp -s - "$TMP/data" || fail "write -z 8192 did not place 16 blocks"
# read with -z only
ok read "$DEV" -n 1 -s 4 -z 8192 -d "$TMP/back" &&
	same "$TMP/data" "$TMP/back" "read -z 8192"
# -z shorter than the file: only -z bytes are written
head -c 4096 /dev/urandom >"$TMP/more"
cat "$TMP/more" "$TMP/more" >"$TMP/twice"
ok write-zeroes "$DEV" -n 1 -s 100 -c 16
ok write "$DEV" -n 1 -s 100 -z 4096 -d "$TMP/twice"
ok read "$DEV" -n 1 -s 100 -c 16 -d "$TMP/back"
{ cat "$TMP/more"; head -c 4096 /dev/zero; } >"$TMP/want"
same "$TMP/want" "$TMP/back" "write -z 4096 of an 8192-byte file"

# nvme-cli's long spellings, -c and -z agreeing (nvq: -c is blocks)
ok read "$DEV" --namespace-id=1 --start-block=4 --block-count=16 \
	--data-size=8192 --data="$TMP/back" &&
	same "$TMP/data" "$TMP/back" "read with nvme-cli's long options"

# nvme-cli's 0-based -c with its -z: refused, saying what nvq wants
expect 2 "nvme-cli's -c is 0-based.*nvq wants -c 16" \
	read "$DEV" -n 1 -s 4 -c 15 -z 8192 -d "$TMP/keep"
grep -q "nvq's -c is the number of blocks" "$TMP/err" ||
	fail "the -c/-z mismatch does not state nvq's convention"
[ ! -e "$TMP/keep" ] || fail "a refused read created its output file"
expect 2 "-c/--block-count 3 and -z/--data-size 8192 disagree" \
	write "$DEV" -n 1 -c 3 -z 8192 -d "$TMP/data"
# nothing was written by the refused write
ok read "$DEV" -n 1 -s 0 -c 3 -d "$TMP/back"
head -c 1536 /dev/zero >"$TMP/want"
same "$TMP/want" "$TMP/back" "a refused -c/-z write left the blocks alone"

# -z must be whole blocks, and at least 1
expect 2 "-z/--data-size 1000 is not a multiple of the 512-byte blocks" \
	read "$DEV" -n 1 -z 1000 -d "$TMP/keep"
expect 2 "-z/--data-size must be at least 1" read "$DEV" -n 1 -z 0 \
	-d "$TMP/keep"
expect 2 "invalid value 'x' for -z/--data-size" read "$DEV" -n 1 -z x \
	-d "$TMP/keep"
# read needs one of -c and -z
expect 2 "missing -c/--block-count or -z/--data-size" read "$DEV" -n 1 \
	-d "$TMP/keep"
# nvme-cli's -c 0 (one block) is nvq's -c 1
expect 2 "nvme-cli's -c 0 is nvq's -c 1" read "$DEV" -n 1 -c 0 \
	-d "$TMP/keep"

# -f / --force-unit-access takes no value (the next word is an option)
ok write "$DEV" -n 1 -s 50 -f -d "$TMP/data"
ok read "$DEV" -n 1 -s 50 --force-unit-access -c 16 -d "$TMP/back" &&
	same "$TMP/data" "$TMP/back" "write -f / read -f"
expect 2 "unexpected argument 'yes'" read "$DEV" -n 1 -c 1 -f yes \
	-d "$TMP/keep"

# FUA reaches the device: the file-backed emulator syncs its image for a
# FUA write (the write cache is on), so -f adds an fdatasync.
syncs() {
	# LeakSanitizer cannot run under ptrace
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -qq -e trace=fdatasync -o "$TMP/trace" "$NVQ" "$@" \
		>/dev/null 2>&1 || return 1
	grep -c fdatasync "$TMP/trace"
}
if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null
then
	plain=$(syncs write "$DEV" -n 1 -s 60 -d "$TMP/data") ||
		fail "write under strace failed"
	fua=$(syncs write "$DEV" -n 1 -s 60 -f -d "$TMP/data") ||
		fail "write -f under strace failed"
	[ "${fua:-0}" -gt "${plain:-0}" ] ||
		fail "write -f did not sync the image ($fua vs $plain syncs)"
else
	echo "note: strace unusable, the FUA bit itself is not observed" >&2
fi

finish
