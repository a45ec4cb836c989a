#!/bin/bash
# nvq read/write on namespaces with metadata: separate metadata through
# -M/--metadata, extended LBAs through -d, protection information through
# -p/--prinfo (nvme-cli's bits: 8 PRACT, 4 guard, 2 app tag, 1 ref tag)
# and -r/-a/-m. The bytes are checked (the PI the controller generated
# with PRACT is recomputed here) and so are the statuses of failed checks.
. "$(dirname "$0")/lib.sh"
need_python

# pi_check FILE MS FIRST_LBA APPTAG: every block's PI (last 8 bytes of its
# MS bytes of metadata in FILE, data in $TMP/data) is the CRC16 T10-DIF of
# the data, APPTAG and the block's LBA (type 1).
pi_check() {
	python3 - "$TMP/data" "$1" "$2" "$3" "$4" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
md = open(sys.argv[2], 'rb').read()
ms, lba, app = (int(v, 0) for v in sys.argv[3:6])
def crc16(b):
    c = 0
    for x in b:
        c ^= x << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x8BB7) if c & 0x8000 else c << 1
            c &= 0xFFFF
    return c
n = len(data) // 512
assert len(md) == n * ms, (len(md), n * ms)
for i in range(n):
    blk = data[i * 512:(i + 1) * 512]
    m = md[i * ms:(i + 1) * ms]
    # with PI last, the guard covers the metadata bytes before it too
    g = crc16(blk + m[:ms - 8])
    want = struct.pack('>HHI', g, app, (lba + i) & 0xFFFFFFFF)
    if m[ms - 8:] != want:
        sys.exit('block %d: PI %s, expected %s' %
                 (i, m[ms - 8:].hex(), want.hex()))
PY
}

# separate metadata, no PI: data and metadata round-trip, per block
head -c 4096 /dev/urandom >"$TMP/data"
head -c 128 /dev/urandom >"$TMP/md"
DEV="emu:file=$TMP/sep.img,size=1M,lbads=9,ms=16"
ok write "$DEV" -n 1 -s 10 -d "$TMP/data" -M "$TMP/md"
ok read "$DEV" -n 1 -s 10 -c 8 -d "$TMP/back" --metadata="$TMP/mdback" &&
	same "$TMP/data" "$TMP/back" "separate metadata: data" &&
	same "$TMP/md" "$TMP/mdback" "separate metadata: the metadata"
# block 11's metadata is bytes 16..31 of what was written
ok read "$DEV" -n 1 -s 11 -c 1 -d "$TMP/back" -M "$TMP/mdback" -y 16
head -c 32 "$TMP/md" | tail -c 16 >"$TMP/want"
same "$TMP/want" "$TMP/mdback" "metadata of block 11"
expect 2 "16 bytes of separate metadata per block: -M/--metadata FILE is needed" read "$DEV" -n 1 -c 1 -d "$TMP/back"
expect 2 "-y/--metadata-size 8 does not match 1 blocks of 16 bytes" \
	read "$DEV" -n 1 -c 1 -d "$TMP/back" -M "$TMP/mdback" -y 8
expect 2 "-p/--prinfo 8 needs protection information" \
	read "$DEV" -n 1 -c 1 -d "$TMP/back" -M "$TMP/mdback" -p 8
head -c 8192 /dev/urandom >"$TMP/data16"
expect 1 "'$TMP/md' ended after 128 bytes, short of the metadata of 16" \
	write "$DEV" -n 1 -s 0 -c 16 -z 8192 -d "$TMP/data16" -M "$TMP/md"
expect 2 "-M/--metadata needs separate metadata; namespace 1 has no" \
	read emu:size=1M -n 1 -c 1 -d "$TMP/back" -M "$TMP/mdback"

# extended LBAs: -d carries 512 + 8 bytes per block
EXT="emu:file=$TMP/ext.img,size=1M,lbads=9,ms=8,mset=1"
head -c $((4 * 520)) /dev/urandom >"$TMP/xdata"
ok write "$EXT" -n 1 -s 3 -d "$TMP/xdata"
ok read "$EXT" -n 1 -s 3 -z $((4 * 520)) -d "$TMP/back" &&
	same "$TMP/xdata" "$TMP/back" "extended LBAs: data and metadata"
expect 2 "not a multiple of the 520-byte blocks.*extended" \
	read "$EXT" -n 1 -z 512 -d "$TMP/back"
expect 2 "-M/--metadata needs separate metadata.*extended LBAs" \
	read "$EXT" -n 1 -c 1 -d "$TMP/back" -M "$TMP/mdback"

# PI type 1, 8 bytes of separate metadata: PRACT inserts and strips it
PI="emu:file=$TMP/pi.img,size=1M,lbads=9,ms=8,pi=1"
ok write "$PI" -n 1 -s 20 -p 8 -a 0x1234 -d "$TMP/data"
ok read "$PI" -n 1 -s 20 -c 8 -p 15 -r 20 -a 0x1234 -m 0xffff \
	-d "$TMP/back" && same "$TMP/data" "$TMP/back" "PRACT read back"
# the PI the controller made: guard over the data, app tag, LBA
ok read "$PI" -n 1 -s 20 -c 8 -d "$TMP/back" -M "$TMP/pimd" &&
	{ pi_check "$TMP/pimd" 8 20 0x1234 ||
		fail "the PI PRACT generated is not guard/app tag/LBA"; }
# checks that fail: status name, exit 1. Type 1's ILBRT must be the LBA.
expect 1 "Invalid Protection Information" \
	read "$PI" -n 1 -s 20 -c 8 -p 9 -r 21 -d "$TMP/back"
expect 1 "End-to-end Application Tag Check Error" \
	read "$PI" -n 1 -s 20 -c 8 -p 10 -a 0x4321 -m 0xffff -d "$TMP/back"
# the app tag mask: only the bits it names are compared
ok read "$PI" -n 1 -s 20 -c 8 -p 10 -a 0x12ab -m 0xff00 -d "$TMP/back"
# a stored reference tag that is not the LBA (block 2: LBA 22)
cp "$TMP/pimd" "$TMP/refmd"
printf '\0\0\0\x63' | dd of="$TMP/refmd" bs=1 seek=20 conv=notrunc status=none
ok write "$PI" -n 1 -s 20 -d "$TMP/data" -M "$TMP/refmd"
expect 1 "read of 8 blocks at LBA 20 failed: End-to-end Reference Tag Check" \
	read "$PI" -n 1 -s 20 -c 8 -p 1 -d "$TMP/back" -M "$TMP/mdback"
ok read "$PI" -n 1 -s 20 -c 8 -p 4 -d "$TMP/back" -M "$TMP/mdback" &&
	same "$TMP/refmd" "$TMP/mdback" "PI stored without checks (-p 0)"
# host-generated PI with a bad guard (block 1), checked on write
cp "$TMP/pimd" "$TMP/badmd"
printf '\xde\xad' | dd of="$TMP/badmd" bs=1 seek=8 conv=notrunc status=none
expect 1 "write of 8 blocks at LBA 20 failed: End-to-end Guard Check Error" \
	write "$PI" -n 1 -s 20 -p 7 -r 20 -a 0x1234 -m 0xffff \
	-d "$TMP/data" -M "$TMP/badmd"
# the PI read back, written again with every check, passes
ok write "$PI" -n 1 -s 20 -p 7 -r 20 -a 0x1234 -m 0xffff \
	-d "$TMP/data" -M "$TMP/pimd"
expect 2 "-M/--metadata with PRACT" \
	read "$PI" -n 1 -c 1 -p 8 -d "$TMP/back" -M "$TMP/pimd"

# A PI format nvq cannot compute (a 64-bit guard, Identify CNS 05h) is
# refused with the reason, said once.
if expect 1 "^nvq: namespace 1: its protection information has a 64-bit guard" \
	read emu:size=1M,ms=16,pi=1,elbaf=0x100 -n 1 -c 1 -d "$TMP/g"; then
	grep -q "namespace 1: namespace 1" "$TMP/err" &&
		fail "the refusal names the namespace twice: $(cat "$TMP/err")"
fi
# id-ns of that namespace shows the controller's data (as nvme-cli does:
# how else to see what to format it to), with the reason as a note
if expect 0 "^nvq: note: namespace 1 is not usable for I/O through nvq: its protection information has a 64-bit guard" \
	id-ns emu:size=1M,ms=16,pi=1,elbaf=0x100 -n 1; then
	grep -q "^lbaf .*ms:16 .*(in use)" "$TMP/out" ||
		fail "id-ns of a refused namespace: no LBA format in use"
	[ "$(wc -l <"$TMP/err")" = 1 ] ||
		fail "id-ns of a refused namespace: $(cat "$TMP/err")"
fi

finish
