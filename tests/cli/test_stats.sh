#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq stats: the controller's failure-path counters and command timeouts,
# as text and JSON; --io-timeout-ms / --admin-timeout-ms on the I/O
# commands and stats, with the strict number rules and usage errors.
. "$(dirname "$0")/lib.sh"
need_python

COUNTERS="timeouts lost_interrupts aborts resets retries failed bad_cqes gone"

ok stats emu: || finish
for k in $COUNTERS io_timeout_ms admin_timeout_ms; do
	grep -Eq "^$k +: [0-9]+$" "$TMP/out" ||
		fail "nvq stats: no '$k' line"
done

ok stats emu: -o json --io-timeout-ms 1500 --admin-timeout-ms 0x1000 &&
	python3 - "$TMP/out" "$COUNTERS" <<'PY' || fail "nvq stats -o json: bad document"
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split():
    assert k in d, k
    assert isinstance(d[k], bool if k == "gone" else int), k
assert d["uri"] == "emu:"
assert d["io_timeout_ms"] == 1500, d["io_timeout_ms"]
assert d["admin_timeout_ms"] == 4096, d["admin_timeout_ms"]
PY

# The I/O commands take the timeouts too.
head -c 8192 /dev/urandom >"$TMP/in.bin"
DEV="emu:file=$TMP/disk.img,size=16M"
ok write "$DEV" -n 1 -d "$TMP/in.bin" --io-timeout-ms 5000 || finish
ok read "$DEV" -n 1 -c 2 -d "$TMP/back.bin" --io-timeout-ms=5000 \
	--admin-timeout-ms 60000
same "$TMP/in.bin" "$TMP/back.bin" "read with --io-timeout-ms"
ok flush "$DEV" -n 1 --admin-timeout-ms 1000
ok trim "$DEV" -n 1 -c 2 --io-timeout-ms 1
ok write-zeroes "$DEV" -n 1 -c 2 --io-timeout-ms 3600000

for opt in --io-timeout-ms --admin-timeout-ms; do
	expect 2 "invalid value 'abc' for $opt" stats emu: $opt abc
	expect 2 "invalid value '-1' for $opt" stats emu: $opt -1
	expect 2 "invalid value '10ms' for $opt" stats emu: $opt 10ms
	expect 2 "$opt must be at least 1" stats emu: $opt 0
	expect 2 "value '3600001' for $opt is out of range" \
		stats emu: $opt 3600001
	expect 2 "$opt needs a value" stats emu: $opt
	expect 2 "invalid value '' for $opt" read emu: -n 1 -c 1 \
		-d "$TMP/x" "$opt="
done
# Commands without I/O do not take them.
expect 2 "unknown option" id-ctrl emu: --io-timeout-ms 100
expect 2 "missing URI" stats
expect 2 "unexpected argument" stats emu: emu:
expect 2 "unknown output format" stats emu: -o binary

finish
