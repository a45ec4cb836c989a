#!/bin/bash
# admin-passthru / io-passthru: nvme-cli 2.3's options and output. An
# Identify through admin-passthru is byte for byte id-ctrl's; a Write and
# a Read through io-passthru move the block of the image; separate
# metadata travels with -m/-M; a dry run sends nothing; a direction that
# contradicts the opcode and the driver's own opcodes are refused.
. "$(dirname "$0")/lib.sh"
need_python

IMG="$TMP/disk.img"
DEV="emu:file=$IMG,size=1M,lbads=12"

# Identify Controller (opcode 6, CNS 1): the same 4096 bytes as id-ctrl
if expect 0 "^Admin Command Identify is Success and result: 0x00000000$" \
	admin-passthru "$DEV" -o 6 --cdw10=1 -l 4096 -r -b; then
	cp "$TMP/out" "$TMP/pt.bin"
	[ "$(stat -c %s "$TMP/pt.bin")" = 4096 ] ||
		fail "admin-passthru -b: $(stat -c %s "$TMP/pt.bin") bytes"
	ok id-ctrl "$DEV" -o binary && same "$TMP/pt.bin" "$TMP/out" \
		"admin-passthru Identify vs id-ctrl -o binary"
fi
# without -b: nvme-cli's hex dump (header, offsets, the ASCII column)
if expect 0 "Success" admin-passthru "$DEV" -o 6 -4 1 -l 40 -r; then
	python3 - "$TMP/pt.bin" "$TMP/out" <<'PY' || fail "hex dump differs"
import sys
raw = open(sys.argv[1], 'rb').read()[:40]
lines = open(sys.argv[2]).read().split('\n')
hdr = '     ' + ''.join('%3x' % i for i in range(16))
assert lines[0] == hdr, lines[0]
for n in range(3):
    b = raw[16 * n:16 * n + 16]
    asc = ''.join(chr(c) if 0x21 <= c <= 0x7e else '.' for c in b)
    want = '%04x:' % (16 * n) + ''.join(' %02x' % c for c in b)
    want += ' ' * (3 * (16 - len(b))) + (' ' if len(b) < 16 else '')
    want += ' "%s"' % asc
    assert lines[1 + n] == want, (lines[1 + n], want)
assert lines[4:] == [''], lines[4:]
PY
fi
# -i with a read: the data goes to the file
expect 0 "Success" admin-passthru "$DEV" -o 6 -4 1 -l 4096 -i "$TMP/id.bin" &&
	same "$TMP/pt.bin" "$TMP/id.bin" "admin-passthru -i FILE of a read"
# no data: the result (CDW0): Get Features Temperature Threshold
expect 0 "^Admin Command Get Features is Success and result: 0x00000157$" \
	admin-passthru "$DEV" -o 0xa -4 4
[ -s "$TMP/out" ] && fail "admin-passthru without data printed: $(cat "$TMP/out")"
# -s: the command, then it is sent; -d: the command and nothing sent
expect 0 "Success" admin-passthru "$DEV" -o 0xa -4 4 -n 0xffffffff -s &&
	grep -q "^opcode       : 0a$" "$TMP/out" &&
	grep -q "^nsid         : ffffffff$" "$TMP/out" &&
	grep -q "^cdw10        : 00000004$" "$TMP/out" ||
	fail "admin-passthru -s: $(cat "$TMP/out")"
ok admin-passthru "$DEV" -o 6 -4 1 -l 4096 -r -d &&
	grep -q "^data_len     : 00001000$" "$TMP/out" &&
	! grep -q "^0000:" "$TMP/out" || fail "admin-passthru -d: $(cat "$TMP/out")"
# the device's status: nvme-cli's line and nvq's, exit 1
expect 1 "^nvq: admin command 0xc0 \(Vendor Specific\): Invalid Command Opcode" \
	admin-passthru "$DEV" -o 0xc0 &&
	grep -q "^NVMe status: Invalid Command Opcode(0x4001)$" "$TMP/err" ||
	fail "admin-passthru 0xc0: $(cat "$TMP/err")"

# usage errors: the direction is the opcode's; the driver's opcodes
expect 2 "-w/--write, but opcode 0x06" admin-passthru "$DEV" -o 6 -l 4096 -w
expect 2 "-r/--read, but opcode 0x09" admin-passthru "$DEV" -o 9 -l 4 -r </dev/null
expect 2 "transfers no data" admin-passthru "$DEV" -o 0x18 -l 8
expect 2 "missing -o/--opcode" admin-passthru "$DEV"
for opc in 0 1 4 5 0xc 0x7c; do
	expect 2 "driver's own" admin-passthru "$DEV" -o $opc
done
expect 2 "flags" admin-passthru "$DEV" -o 6 -f 1 -l 4096
expect 2 "no metadata" admin-passthru "$DEV" -o 6 -l 4096 -m 8
expect 2 "bidirectional" io-passthru "$DEV" -o 3 -n 1
expect 2 "missing -n/--namespace-id" io-passthru "$DEV" -o 2 -l 4096

# io-passthru Write (opcode 1) of block 3 from a file, Read (2) back
head -c 4096 /dev/urandom >"$TMP/blk"
expect 0 "^IO Command Write is Success and result: 0x00000000$" \
	io-passthru "$DEV" -o 1 -n 1 --cdw10=3 -l 4096 -w -i "$TMP/blk"
dd if="$IMG" bs=4096 skip=3 count=1 2>/dev/null >"$TMP/img3"
same "$TMP/blk" "$TMP/img3" "io-passthru Write: block 3 of the image"
expect 0 "^IO Command Read is Success" \
	io-passthru "$DEV" -o 2 -n 1 -4 3 -l 4096 -r -b &&
	same "$TMP/blk" "$TMP/out" "io-passthru Read -b of block 3"
# the data from standard input; a dry run leaves the image as it was
cp "$IMG" "$TMP/before"
head -c 4096 /dev/zero | "$NVQ" io-passthru "$DEV" -o 1 -n 1 -4 3 -l 4096 -d \
	>"$TMP/out" 2>"$TMP/err" || fail "io-passthru -d: $(cat "$TMP/err")"
same "$TMP/before" "$IMG" "io-passthru -d changed the image"
head -c 4096 /dev/zero | "$NVQ" io-passthru "$DEV" -o 1 -n 1 -4 3 -l 4096 \
	>/dev/null 2>&1 || fail "io-passthru write from standard input"
[ "$(dd if="$IMG" bs=4096 skip=3 count=1 2>/dev/null | tr -d '\0' | wc -c)" = 0 ] ||
	fail "io-passthru write from standard input: block 3 not zero"
# a short input file is refused, nothing sent
head -c 100 /dev/urandom >"$TMP/short"
expect 1 "ends after 100 bytes" io-passthru "$DEV" -o 1 -n 1 -l 4096 -i "$TMP/short"
expect 1 "cannot open" io-passthru "$DEV" -o 1 -n 1 -l 4096 -i "$TMP/none"
# the controller checks the LBAs: LBA Out of Range, exit 1
expect 1 "LBA Out of Range" io-passthru "$DEV" -o 2 -n 1 -4 256 -l 4096 -r -b &&
	grep -q "^NVMe status: LBA Out of Range(0x4080)$" "$TMP/err" ||
	fail "io-passthru out of range: $(cat "$TMP/err")"

# separate metadata (ms=16): written with -M, read back with -M
MD="emu:file=$TMP/md.img,size=1M,lbads=9,ms=16"
head -c 1024 /dev/urandom >"$TMP/d2"
head -c 32 /dev/urandom >"$TMP/m2"
expect 0 "Write is Success" io-passthru "$MD" -o 1 -n 1 -4 5 -6 1 \
	-l 1024 -m 32 -i "$TMP/d2" -M "$TMP/m2"
expect 0 "Read is Success" io-passthru "$MD" -o 2 -n 1 -4 5 -6 1 \
	-l 1024 -m 32 -r -i "$TMP/d2back" -M "$TMP/m2back" &&
	same "$TMP/d2" "$TMP/d2back" "io-passthru metadata read: data" &&
	same "$TMP/m2" "$TMP/m2back" "io-passthru metadata read: metadata"
# nvq read agrees with what io-passthru wrote
ok read "$MD" -n 1 -s 5 -c 2 -d "$TMP/d3" -M "$TMP/m3" &&
	same "$TMP/d2" "$TMP/d3" "nvq read of io-passthru's data" &&
	same "$TMP/m2" "$TMP/m3" "nvq read of io-passthru's metadata"
# -b without -M: the metadata follows the data on standard output
expect 0 "Read is Success" io-passthru "$MD" -o 2 -n 1 -4 5 -6 1 \
	-l 1024 -m 32 -b && cat "$TMP/d2" "$TMP/m2" >"$TMP/both" &&
	same "$TMP/both" "$TMP/out" "io-passthru -b: data then metadata"
expect 2 "needs -m/--metadata-len" io-passthru "$MD" -o 2 -n 1 -l 512 -M "$TMP/x"

finish
