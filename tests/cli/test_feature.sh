#!/bin/bash
# get-feature / set-feature against the emulator: the values emu/features.c
# gives each feature 01h..0Bh in nvme-cli 2.3's output line, -H in its
# words (Number of Queues 0-based in DW0, 1-based decoded), SEL 1/3/8,
# the walk over every feature, and Set Features' completions and errors
# (each run is a new controller: a set is checked by its own completion).
. "$(dirname "$0")/lib.sh"

DEV="emu:size=1M"

# get-feature of each known feature: "get-feature:FID (NAME), Current
# value:V" with nvme-cli's widths ("00000000" for zero). nvq opens one
# I/O queue pair, so Number of Queues is 0 (one SQ, one CQ, 0-based).
while read -r fid val name; do
	name=${name//_/ }
	if ok get-feature "$DEV" -f "$fid"; then
		want="get-feature:$fid ($name), Current value:$val"
		[ "$(cat "$TMP/out")" = "$want" ] ||
			fail "get-feature -f $fid: '$(cat "$TMP/out")', expected '$want'"
	fi
done <<'T'
0x01 00000000 Arbitration
0x02 00000000 Power_Management
0x04 0x00000157 Temperature_Threshold
0x05 00000000 Error_Recovery
0x06 0x00000001 Volatile_Write_Cache
0x07 00000000 Number_of_Queues
0x08 00000000 Interrupt_Coalescing
0x09 00000000 Interrupt_Vector_Configuration
0x0a 00000000 Write_Atomicity_Normal
0x0b 0x0000001f Async_Event_Configuration
T

# -H: the fields in nvme-cli's words
hword() {
	local fid=$1 pat=$2
	shift 2
	ok get-feature "$DEV" -f "$fid" -H "$@" &&
		grep -qF -- "$pat" "$TMP/out" ||
		fail "get-feature -f $fid -H $*: no '$pat' in: $(cat "$TMP/out")"
}
hword 1 "Arbitration Burst       (AB): 1"
hword 1 "High Priority Weight   (HPW): 1"
hword 2 "Workload Hint (WH): 0 - No Workload"
hword 4 "Temperature Threshold         (TMPTH): 70°C (343 Kelvin)"
hword 4 "Threshold Type Select         (THSEL): 0 - Over Temperature Threshold"
hword 4 "Threshold Type Select         (THSEL): 1 - Under Temperature Threshold" -c 0x100000
hword 5 "Time Limited Error Recovery                          (TLER): 0 ms"
hword 6 "Volatile Write Cache Enable (WCE): Enabled"
hword 7 "Number of IO Completion Queues Allocated (NCQA): 1"
hword 7 "Number of IO Submission Queues Allocated (NSQA): 1"
hword 8 "Aggregation Threshold (THR): 1"
hword 9 "Interrupt Vector   (IV): 0"
hword 10 "Disable Normal (DN): False"
hword 11 "SMART / Health Critical Warnings                          : Send async event"
hword 11 "Namespace Attribute Notices                               : Do not send async event"

# SEL 1: the default, the emulator's qpairs (0-based), not what nvq got
ok get-feature emu:qpairs=4 -f 7 -s 1 -H &&
	grep -q "^get-feature:0x07 (Number of Queues), Default value:0x00030003$" "$TMP/out" &&
	grep -q "(NSQA): 4$" "$TMP/out" ||
	fail "get-feature -f 7 -s 1 on qpairs=4: $(cat "$TMP/out")"
# SEL 3: the capability bits (every emulated feature is changeable only)
ok get-feature "$DEV" -f 6 -s 3 &&
	[ "$(cat "$TMP/out")" = "get-feature:0x06 (Volatile Write Cache), Supported capabilities value:0x00000004
  Feature is changeable" ] ||
	fail "get-feature -f 6 -s 3: $(cat "$TMP/out")"
# SEL 8 (nvme-cli's changed): only Number of Queues, which nvq set
ok get-feature emu:qpairs=4 -s 8 &&
	[ "$(cat "$TMP/out")" = "get-feature:0x07 (Number of Queues), Changed value:00000000" ] ||
	fail "get-feature -s 8: $(cat "$TMP/out")"
expect 2 "reserved" get-feature "$DEV" -f 6 -s 4

# No -f: every feature the controller supports, the others skipped
if ok get-feature "$DEV"; then
	got=$(sed 's/ (.*//' "$TMP/out" | tr '\n' ' ')
	want="get-feature:0x01 get-feature:0x02 get-feature:0x04 get-feature:0x05 get-feature:0x06 get-feature:0x07 get-feature:0x08 get-feature:0x09 get-feature:0x0a get-feature:0x0b "
	[ "$got" = "$want" ] || fail "get-feature walk: '$got'"
fi
# without a volatile write cache, 06h is skipped, and alone it fails
ok get-feature emu:vwc=0 && ! grep -q "0x06" "$TMP/out" ||
	fail "get-feature walk on vwc=0 lists 06h"
expect 1 "^nvq: get-feature 0x06 .*Invalid Field" get-feature emu:vwc=0 -f 6 &&
	grep -q "^NVMe status: .*(0x4002)$" "$TMP/err" ||
	fail "get-feature -f 6 on vwc=0: no nvme-cli status line"
expect 1 "Invalid Field" get-feature "$DEV" -f 3

# -l: a buffer travels; -b prints it raw (the emulator's features carry
# no data, so it stays as nvq cleared it); without data -b is the line
ok get-feature "$DEV" -f 1 -l 16 -b &&
	[ "$(od -An -tx1 "$TMP/out" | tr -d ' \n')" = "00000000000000000000000000000000" ] ||
	fail "get-feature -l 16 -b: $(od -An -tx1 "$TMP/out")"
ok get-feature "$DEV" -f 1 -b && grep -q "^get-feature:0x01" "$TMP/out" ||
	fail "get-feature -b without data: $(cat "$TMP/out")"

# set-feature: nvme-cli's line
ok set-feature "$DEV" -f 6 -v 0 &&
	[ "$(cat "$TMP/out")" = "set-feature:0x06 (Volatile Write Cache), value:00000000, cdw12:00000000, save:0" ] ||
	fail "set-feature -f 6 -v 0: $(cat "$TMP/out")"
ok set-feature "$DEV" --feature-id=4 --value=0x160 &&
	[ "$(cat "$TMP/out")" = "set-feature:0x04 (Temperature Threshold), value:0x00000160, cdw12:00000000, save:0" ] ||
	fail "set-feature -f 4: $(cat "$TMP/out")"
# the under-temperature threshold (THSEL 1) is accepted, a reserved one not
ok set-feature "$DEV" -f 4 -v 0x100110
expect 1 "Invalid Field" set-feature "$DEV" -f 4 -v 0x300000
# no volatile write cache: nothing to set
expect 1 "Invalid Field" set-feature emu:vwc=0 -f 6 -v 1
# Number of Queues after the I/O queues exist: Command Sequence Error
expect 1 "^nvq: set-feature 0x07 \(Number of Queues\): Command Sequence Error" \
	set-feature "$DEV" -f 7 -v 0x10001 &&
	grep -q "^NVMe status: Command Sequence Error(0x400c)$" "$TMP/err" ||
	fail "set-feature -f 7: no nvme-cli status line"
# an unknown feature: Invalid Field in Command
expect 1 "set-feature 0x40 \(Unknown\): Invalid Field" set-feature "$DEV" -f 0x40 -v 1
# save of a feature that is not saveable: Feature Identifier Not Saveable
expect 1 "Feature Identifier Not Saveable.*SCT 0x1 SC 0xd" \
	set-feature "$DEV" -f 6 -v 1 -s &&
	grep -q "(0x410d)$" "$TMP/err" || fail "set-feature -s: status $(cat "$TMP/err")"

# usage errors
expect 2 "missing -f/--feature-id" set-feature "$DEV" -v 1
expect 2 "missing -v/--value" set-feature "$DEV" -f 6
expect 2 "reserved" set-feature "$DEV" -f 0 -v 1
expect 2 "32 bits" set-feature "$DEV" -f 6 -v 0x100000000
expect 2 "has no data" set-feature "$DEV" -f 6 -d /dev/null
expect 2 "out of range" get-feature "$DEV" -f 256
expect 2 "out of range" get-feature "$DEV" -U 128

finish
