#!/bin/bash
# Runtime errors exit 1 with "nvq: <what failed>: <why>" on stderr: bad
# URIs, out-of-range LBAs, odd-sized and missing files, inactive
# namespaces. None of them may write to the device or clobber files.
. "$(dirname "$0")/lib.sh"

DEV="emu:file=$TMP/disk.img,size=16M" # 4096 blocks of 4 KiB
head -c 8192 /dev/urandom >"$TMP/two"

# bad URIs: the message shows what was given and what is accepted
expect 1 "^nvq: cannot open 'bogus:x'" id-ctrl bogus:x &&
	{ grep -q "emu:" "$TMP/err" && grep -q "vfio:" "$TMP/err"; } ||
	fail "bad scheme: accepted URI forms not shown"
expect 1 "^nvq: cannot open 'nonsense'" id-ns nonsense -n 1
expect 1 "^nvq: cannot open 'emu:size=banana'.*size" id-ctrl emu:size=banana
expect 1 "^nvq: cannot open 'emu:lbads=7'.*lbads" list emu:lbads=7
expect 1 "^nvq: cannot open 'emu:nokey=1'.*nokey" \
	read emu:nokey=1 -n 1 -c 1 -d "$TMP/out.bin"
[ -e "$TMP/out.bin" ] && fail "read created its output file for a bad URI"
expect 1 "^nvq: cannot open 'vfio:0000:ff:1f.7'" id-ctrl vfio:0000:ff:1f.7

# namespace not active
expect 1 "^nvq: namespace 2 is not active.*active: 1" \
	read "$DEV" -n 2 -c 1 -d "$TMP/x"
expect 1 "^nvq: namespace 2 is not active" write "$DEV" -n 2 -d "$TMP/two"
expect 1 "^nvq: namespace 7 is not active" flush "$DEV" -n 7
expect 1 "^nvq: namespace 3 is not active" trim "$DEV" -n 3 -c 1
expect 1 "^nvq: namespace 3 is not active" write-zeroes "$DEV" -n 3 -c 1
expect 1 "^nvq: namespace 2 (is not active|does not exist)" \
	id-ns "$DEV" -n 2
expect 1 "^nvq: namespace 3 is not active" \
	read "emu:size=1M,ns=2" -n 3 -c 1 -d "$TMP/x"

# LBA ranges beyond the namespace: say how big the namespace is
range="beyond the end of namespace 1, which has 4096 blocks of 4096 bytes"
expect 1 "$range" read "$DEV" -n 1 -s 4096 -c 1 -d "$TMP/x"
expect 1 "$range" read "$DEV" -n 1 -s 4095 -c 2 -d "$TMP/x"
expect 1 "$range" read "$DEV" -n 1 -s 0 -c 4097 -d "$TMP/x"
expect 1 "$range" read "$DEV" -n 1 -s 0xffffffffffffffff \
	-c 0xffffffffffffffff -d "$TMP/x"
expect 1 "$range" read "$DEV" -n 1 -s 1 -c 0xffffffffffffffff -d "$TMP/x"
expect 1 "$range" write "$DEV" -n 1 -s 4095 -d "$TMP/two"
expect 1 "$range" write "$DEV" -n 1 -s 4095 -c 2 -d "$TMP/two"
expect 1 "$range" write-zeroes "$DEV" -n 1 -s 4000 -c 97
expect 1 "$range" trim "$DEV" -n 1 -s 4097 -c 1
ok read "$DEV" -n 1 -s 4094 -c 2 -d "$TMP/x" # the last two blocks are fine

# a refused read leaves an existing output file alone
echo precious >"$TMP/keep"
expect 1 "beyond the end" read "$DEV" -n 1 -s 5000 -c 1 -d "$TMP/keep"
grep -q precious "$TMP/keep" || fail "a refused read truncated its file"

# file sizes
head -c 1000 /dev/urandom >"$TMP/odd"
mult="is not a multiple of the LBA size"
expect 1 "size of '$TMP/odd' \(1000 bytes\) $mult of namespace 1 \(4096 bytes\)" \
	write "$DEV" -n 1 -d "$TMP/odd"
expect 1 "not a multiple of the LBA size" write "$DEV" -n 1 -d - <"$TMP/odd"
# (pipes through process substitution: a pipeline would run expect in a
# subshell and lose its failure count)
expect 1 "length of 'standard input' \(1000 bytes\) $mult.*nothing was written" \
	write "$DEV" -n 1 -d - < <(head -c 1000 /dev/urandom)
expect 1 "'$TMP/two' has 8192 bytes, fewer than the 3 blocks" \
	write "$DEV" -n 1 -c 3 -d "$TMP/two"
expect 1 "ended after 8192 bytes.*3 blocks.*nothing was written" \
	write "$DEV" -n 1 -c 3 -d - < <(cat "$TMP/two")
: >"$TMP/empty"
expect 1 "is empty" write "$DEV" -n 1 -d "$TMP/empty"
expect 1 "is empty" write "$DEV" -n 1 -d - </dev/null

# missing, unreadable and unwritable files
expect 1 "^nvq: cannot open '$TMP/nope' for reading: No such file" \
	write "$DEV" -n 1 -d "$TMP/nope"
expect 1 "^nvq: cannot open '$TMP/nodir/x' for writing: No such file" \
	read "$DEV" -n 1 -c 1 -d "$TMP/nodir/x"
expect 1 "^nvq: cannot (open|read) '$TMP'" write "$DEV" -n 1 -d "$TMP"
expect 1 "^nvq: cannot write to '/dev/full'" \
	read "$DEV" -n 1 -c 1 -d /dev/full

# none of the refused writes reached the device: it still reads zeroes
ok read "$DEV" -n 1 -s 0 -c 4096 -d "$TMP/all"
head -c 16777216 /dev/zero >"$TMP/zero16m"
same "$TMP/all" "$TMP/zero16m" "refused writes changed the device"

# Pipes longer than one chunk (1 MiB) can only be refused as they arrive:
# the message says how much was written.
DEV="emu:file=$TMP/small.img,size=1M,lbads=9" # 2048 blocks
expect 1 "\(1049700 bytes\) $mult .*\(512 bytes\); 2048 blocks were written" \
	write "$DEV" -n 1 -d - < <(head -c 1049700 /dev/urandom)
DEV="emu:file=$TMP/small3.img,size=3M,lbads=9" # 6144 blocks
beyond="'standard input' continues beyond the end of namespace 1"
expect 1 "$beyond \(6144 blocks of 512 bytes\); 4096 blocks were written" \
	write "$DEV" -n 1 -s 1 -d - < <(head -c 3145728 /dev/urandom)
expect 1 "$beyond .*; nothing was written" \
	write "$DEV" -n 1 -s 6000 -d - < <(head -c 1048576 /dev/urandom)

finish
