#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq refuses to use the image of the emulated controller it operates on
# as its own -d output (read) or input (write): the same file however it
# is named (path, ./path, symlink, hard link, a name that does not exist
# yet). Usage error, exit 2, and the image is untouched.
. "$(dirname "$0")/lib.sh"

# the tests below run in $TMP, so that relative names are short
NVQ=$(cd "$(dirname "$NVQ")" && pwd)/$(basename "$NVQ")
cd "$TMP" || exit 1
IMG=disk.img
DEV="emu:file=$IMG,size=16M"
head -c 65536 /dev/urandom >data.bin
ok write "$DEV" -n 1 -d data.bin || finish
sum=$(cksum <"$IMG")
size=$(stat -c %s "$IMG")

# refused ARGS...: exit 2 with the message, and the image unchanged
refused() {
	expect 2 "is the image of the emulated controller" "$@" || return
	if [ "$(stat -c %s "$IMG")" != "$size" ] ||
		[ "$(cksum <"$IMG")" != "$sum" ]; then
		fail "nvq $*: the image changed"
	fi
}

ln -s "$IMG" link.img
ln "$IMG" hard.img
mkdir sub
refused read "$DEV" -n 1 -c 1 -d "$IMG"
refused read "$DEV" -n 1 -c 1 -d "./$IMG"
refused read "$DEV" -n 1 -c 1 -d "$TMP/$IMG"
refused read "$DEV" -n 1 -c 1 -d "sub/../$IMG"
refused read "$DEV" -n 1 -c 1 -d link.img
refused read "$DEV" -n 1 -c 1 -d hard.img
refused read "emu:file=link.img,size=16M" -n 1 -c 1 -d "$IMG"
refused read "emu:size=16M,file=$TMP/$IMG,lbads=12" -n 1 -c 1 -d hard.img
refused write "$DEV" -n 1 -d "$IMG"
refused write "$DEV" -n 1 -d link.img
# An image that does not exist yet: the emulator would create it.
expect 2 "is the image of the emulated controller" \
	read "emu:file=new.img,size=16M" -n 1 -c 1 -d "$TMP/sub/../new.img"
[ -e new.img ] && fail "a refused read created the image new.img"

# Other files, and the image of another controller, are fine.
ok read "$DEV" -n 1 -c 16 -d back.bin
ok read emu:size=16M -n 1 -c 1 -d "$IMG.copy"

finish
