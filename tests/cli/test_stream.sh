#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq read and nvq write stream through a bounded buffer: moving 256 MiB
# costs about the memory that moving one block does, not 256 MiB. Memory,
# not time, is asserted: the peak RSS of the large transfer may exceed
# that of a one-block read by at most LIMIT_KB. The data must still
# arrive intact and in order.
. "$(dirname "$0")/lib.sh"

MIB=256
LIMIT_KB=$((64 * 1024))
# file-backed, so that the emulator's media is not process memory
DEV="emu:file=$TMP/disk.img,size=$((MIB + 1))M"
BLOCKS=$((MIB * 256))

# peak_kb ARGS...: run nvq ARGS, print its peak RSS in KiB (getrusage's
# ru_maxrss through GNU time, else VmHWM sampled from /proc)
peak_kb() {
	local pid hwm=0 v rc
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$TMP/rss" "$NVQ" "$@" >"$TMP/out" \
			2>"$TMP/err"
		rc=$?
		[ "$rc" -eq 0 ] || { echo "nvq $*: exit $rc" >&2; return 1; }
		tail -n 1 "$TMP/rss"
		return 0
	fi
	"$NVQ" "$@" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" \
			2>/dev/null)
		[ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
		sleep 0.02
	done
	wait "$pid"
	rc=$?
	[ "$rc" -eq 0 ] || { echo "nvq $*: exit $rc" >&2; return 1; }
	echo "$hwm"
}

head -c $((MIB * 1048576)) /dev/urandom >"$TMP/data.bin"

base=$(peak_kb read "$DEV" -n 1 -c 1 -d "$TMP/one.bin") ||
	{ fail "one-block read failed"; show_output; finish; }
wr=$(peak_kb write "$DEV" -n 1 -d "$TMP/data.bin") ||
	{ fail "write of $MIB MiB failed"; show_output; finish; }
rd=$(peak_kb read "$DEV" -n 1 -c "$BLOCKS" -d "$TMP/back.bin") ||
	{ fail "read of $MIB MiB failed"; show_output; finish; }
echo "peak RSS: one block ${base} KiB, write of $MIB MiB ${wr} KiB," \
	"read of $MIB MiB ${rd} KiB"
[ $((wr - base)) -le "$LIMIT_KB" ] ||
	fail "write of $MIB MiB used $((wr - base)) KiB more than one block"
[ $((rd - base)) -le "$LIMIT_KB" ] ||
	fail "read of $MIB MiB used $((rd - base)) KiB more than one block"
same "$TMP/data.bin" "$TMP/back.bin" "$MIB MiB written and read back"

# Through pipes as well, 1 MiB further on: standard input and output
# stream the same way.
cat "$TMP/data.bin" | "$NVQ" write "$DEV" -n 1 -s 256 -d - 2>"$TMP/err" ||
	fail "write from a pipe failed: $(cat "$TMP/err")"
"$NVQ" read "$DEV" -n 1 -s 256 -c "$BLOCKS" -d - 2>"$TMP/err" | cmp -s - \
	"$TMP/data.bin" || fail "pipe round trip differs: $(cat "$TMP/err")"

finish
