#!/bin/bash
# nvq format: refuses without a terminal unless --force (exit 2, the image
# untouched), asks for y on a terminal, switches a file= image to another
# LBA format (recorded in FILE.md: the image then opens only with the new
# lbads/ms), erases the data, and prints the device's status when the
# format is invalid. Also: nvq sanitize, which shares the confirmation.
. "$(dirname "$0")/lib.sh"

IMG=$TMP/disk.img
DEV="emu:file=$IMG,size=1M,lbads=9"
head -c 1048576 /dev/urandom >"$IMG"
cp "$IMG" "$TMP/orig.img"
head -c 4096 /dev/zero >"$TMP/zero4k"

# unchanged WHAT: the image still holds its original bytes, no sidecar
unchanged() {
	same "$TMP/orig.img" "$IMG" "$1: the image changed"
	[ -e "$IMG.md" ] && fail "$1: $IMG.md was created"
}

# no terminal, no --force: refused before anything is sent
expect 2 "standard input is not a terminal.*--force" \
	format "$DEV" -n 1 -l 6 </dev/null &&
	grep -q "^usage: nvq format" "$TMP/err" ||
	fail "format without a terminal: no usage line"
grep -q "You are about to format $DEV, namespace 0x1" "$TMP/err" ||
	fail "format: the warning does not name the namespace"
grep -q "namespace 1: 2048 blocks of 512 bytes (1048576 bytes)" \
	"$TMP/err" || fail "format: the warning does not give the size"
grep -q "now LBA format 0 (512-byte blocks, 0 bytes of metadata)" \
	"$TMP/err" || fail "format: the warning lacks the current format"
grep -q "New format: LBA format 6 (4096-byte blocks" "$TMP/err" ||
	fail "format: the warning lacks the new format"
grep -q "ALL namespaces: FNA bit 0" "$TMP/err" ||
	fail "format: the warning does not say FNA formats all namespaces"
unchanged "format without --force"

# usage errors, nothing sent
expect 2 "out of range \(max 63\)" format "$DEV" -n 1 -l 64 -f
expect 2 "-l/--lbaf or -b/--block-size, not both" \
	format "$DEV" -n 1 -l 6 -b 4096 -f
expect 2 "missing -n/--namespace-id" format "$DEV" -l 6 -f
expect 2 "-b/--block-size 1000 is not a power of two" \
	format "$DEV" -n 1 -b 1000 -f
expect 2 "out of range \(max 1\)" format "$DEV" -n 1 -p 2 -f
unchanged "format usage errors"

# the device's answer to formats it does not have
INVALID_FORMAT="Invalid Format \(NVMe status: SCT 0x1 SC 0xa"
expect 1 "format of namespace 1 failed: $INVALID_FORMAT" \
	format "$DEV" -n 1 -l 12 -f
expect 1 "Invalid Format" format "$DEV" -n 1 -l 0 -i 1 -f
expect 1 "no LBA format of 8192-byte blocks" format "$DEV" -n 1 -b 8192 -f
unchanged "invalid formats"

# --force -l 6: 4096-byte blocks; no warning, the new format printed
if ok format "$DEV" -n 1 -l 6 --force; then
	grep -q "^Success formatting namespace:1$" "$TMP/out" ||
		fail "format: no success line"
	grep -q "^namespace 1: LBA format 6, 4096-byte blocks, 0 bytes of" \
		"$TMP/out" && grep -q ", 256 blocks$" "$TMP/out" ||
		fail "format: the new format is not shown"
	grep -q "open it with those parameters" "$TMP/out" &&
		grep -q "lbads=12,ms=0" "$TMP/out" ||
		fail "format: no hint at the image's new parameters"
fi
NEW="emu:file=$IMG,size=1M,lbads=12"
if ok id-ns "$NEW" -n 1; then
	grep -q "^lbaf  6 : ms:0   lbads:12 rp:0 (in use)" "$TMP/out" ||
		fail "id-ns after format: LBA format 6 not in use"
	grep -q "^nsze    : 0x100$" "$TMP/out" ||
		fail "id-ns after format: NSZE is not 256 blocks"
fi
# the sidecar holds the format: the old parameters are refused
expect 1 "formatted with lbads=12,ms=0, not lbads=9,ms=0" id-ns "$DEV" -n 1
ok read "$NEW" -n 1 -s 0 -c 1 -d "$TMP/blk" &&
	same "$TMP/zero4k" "$TMP/blk" "format: block 0 not erased"
ok read "$NEW" -n 1 -s 255 -c 1 -d "$TMP/blk" &&
	same "$TMP/zero4k" "$TMP/blk" "format: block 255 not erased"

# -b 512 is LBA format 0; metadata, PI first, extended: as id-ns shows
ok format "$NEW" -n 1 -b 512 -f
ok format "emu:file=$IMG,size=1M,lbads=9" -n 1 -l 1 -i 1 -p 1 -m 1 -f &&
	grep -q "8 bytes of metadata (extended), protection information \
type 1 (first 8 bytes)" "$TMP/out" ||
	fail "format -l 1 -i 1 -p 1 -m 1: $(cat "$TMP/out")"
if ok id-ns "emu:file=$IMG,size=1M,lbads=9,ms=8,mset=1,pi=1,pil=1" -n 1; then
	grep -q "^flbas   : 0x11$" "$TMP/out" || fail "flbas not 0x11"
	grep -q "^dps     : 0x9$" "$TMP/out" || fail "dps not 0x9"
fi
rm -f "$IMG.md"

# on a terminal: y formats, anything else changes nothing
if command -v script >/dev/null 2>&1; then
	cp "$TMP/orig.img" "$IMG"
	printf 'n\n' | script -qec "'$NVQ' format '$DEV' -n 1 -l 6" \
		/dev/null >"$TMP/out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "format answered n: exit status $rc"
	grep -q "Press y to confirm the format" "$TMP/out" ||
		fail "format on a terminal: no question"
	grep -q "format not confirmed" "$TMP/out" ||
		fail "format answered n: $(cat "$TMP/out")"
	unchanged "format answered n"
	printf 'y\n' | script -qec "'$NVQ' format '$DEV' -n 1 -l 6" \
		/dev/null >"$TMP/out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "format answered y: exit status $rc"
	grep -q "Success formatting namespace:1" "$TMP/out" ||
		fail "format answered y: $(cat "$TMP/out")"
	ok id-ns "$NEW" -n 1 && grep -q "lbads:12 rp:0 (in use)" "$TMP/out" ||
		fail "format answered y: not formatted"
else
	echo "note: no script(1): the terminal question is not tested" >&2
fi

# -n 0xffffffff: the broadcast NSID Format NVM allows (every namespace);
# the new format must be given, the warning lists each namespace, and
# afterwards each shows its new format (the image's hint once)
IMG2=$TMP/two.img
DEV2="emu:file=$IMG2,size=1M,lbads=9,ns=2"
head -c 2097152 /dev/urandom >"$IMG2"
expect 2 "formats every namespace: give the new format with -l" \
	format "$DEV2" -n 0xffffffff -f
expect 2 "standard input is not a terminal" \
	format "$DEV2" -n 0xffffffff -l 6 </dev/null
grep -q "namespace 0xffffffff (ALL namespaces: the broadcast" "$TMP/err" &&
	grep -q "^  namespace 1: 2048 blocks of 512 bytes" "$TMP/err" &&
	grep -q "^  namespace 2: 2048 blocks of 512 bytes" "$TMP/err" ||
	{ fail "format -n 0xffffffff: the warning" && show_output; }
if ok format "$DEV2" -n 0xffffffff -l 6 -f; then
	grep -q "^Success formatting namespace:ffffffff$" "$TMP/out" &&
		grep -q "^namespace 1: LBA format 6, 4096-byte blocks" \
			"$TMP/out" &&
		grep -q "^namespace 2: LBA format 6, 4096-byte blocks" \
			"$TMP/out" ||
		{ fail "format -n 0xffffffff: the new formats" && show_output; }
	[ "$(grep -c "open it with those parameters" "$TMP/out")" = 1 ] ||
		fail "format -n 0xffffffff: not one hint for the image"
fi
ok id-ns "emu:file=$IMG2,size=1M,lbads=12,ns=2" -n 2 &&
	grep -q "^lbaf  6 : ms:0   lbads:12 rp:0 (in use)" "$TMP/out" ||
	fail "format -n 0xffffffff: namespace 2 not in LBA format 6"

# ---- sanitize ----
cp "$TMP/orig.img" "$IMG"
rm -f "$IMG.md"
head -c 1048576 /dev/zero >"$TMP/zero1m"

expect 2 "standard input is not a terminal.*--force" \
	sanitize "$DEV" -a 2 </dev/null
grep -q "You are about to sanitize $DEV: block erase" "$TMP/err" &&
	grep -q "namespace 1: 2048 blocks of 512 bytes" "$TMP/err" ||
	fail "sanitize: the warning does not say what is lost"
expect 2 "missing -a/--sanact" sanitize "$DEV" -f
expect 2 "invalid sanitize action '5'" sanitize "$DEV" -a 5 -f
expect 2 "apply to -a 3 \(overwrite\) only" sanitize "$DEV" -a 2 -n 1 -f
expect 2 "do not apply to -a 1" sanitize "$DEV" -a 1 -u
expect 2 "out of range \(max 16\)" sanitize "$DEV" -a 3 -n 17 -f
# SANICAP 0x6: no crypto erase; refused before anything is sent
expect 1 "does not support the crypto erase sanitize operation \
\(SANICAP 0x6\)" sanitize "$DEV" -a 4 -f
unchanged "sanitize refused"

# block erase: the blocks are deallocated, DLFEAT says they read zeroes
if ok sanitize "$DEV" -a 2 -f -w; then
	grep -q "^Sanitize (block erase) completed successfully$" \
		"$TMP/out" || fail "sanitize -w: $(cat "$TMP/out")"
fi
ok read "$DEV" -n 1 -c 2048 -d "$TMP/back" &&
	same "$TMP/zero1m" "$TMP/back" "sanitize block erase: data left"

# overwrite: the pattern; inverted between 2 passes, the second stays
ok sanitize "$DEV" -a start-overwrite -p 0xdeadbeef -n 1 -f -w
ok read "$DEV" -n 1 -s 100 -c 1 -d "$TMP/blk"
[ "$(od -An -tx1 -N8 "$TMP/blk" | tr -d ' \n')" = efbeaddeefbeadde ] ||
	fail "sanitize overwrite: block 100 is not the pattern"
ok sanitize "$DEV" -a 3 -p 0xdeadbeef -n 2 -i -f -w
ok read "$DEV" -n 1 -s 2047 -c 1 -d "$TMP/blk"
[ "$(od -An -tx1 -N8 "$TMP/blk" | tr -d ' \n')" = 1041522110415221 ] ||
	fail "sanitize overwrite -i -n 2: block 2047 is not the inverse"

# the failure the device reports (test aid sanitize_fail=1)
expect 1 "sanitize \(block erase\) failed \(Sanitize Status log: SSTAT 0x3\)" \
	sanitize "$DEV,sanitize_fail=1" -a 2 -f -w
# without -w it returns once the controller accepted the command
ok sanitize "emu:" -a 2 -f &&
	grep -q "Sanitize (block erase) started" "$TMP/out" ||
	fail "sanitize without -w: $(cat "$TMP/out")"

# on a terminal: the question, and the progress line while waiting
if command -v script >/dev/null 2>&1; then
	printf 'y\n' | script -qec \
		"'$NVQ' sanitize 'emu:sanitize_ms=400' -a 2 -w" \
		/dev/null >"$TMP/out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "sanitize answered y: exit status $rc"
	grep -q "Press y to confirm the sanitize" "$TMP/out" ||
		fail "sanitize on a terminal: no question"
	grep -Eq "sanitize \(block erase\): +[0-9.]+%" "$TMP/out" ||
		fail "sanitize -w on a terminal: no progress line"
	grep -q "completed successfully" "$TMP/out" ||
		fail "sanitize answered y: $(cat "$TMP/out")"
fi

finish
