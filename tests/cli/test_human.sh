#!/bin/bash
# nvq id-ctrl -H / id-ns -H: each field's bits decoded under its line in
# nvme-cli 2.3's format ("  [3:3] : 0x1<TAB>..."), for the values the
# emulator sets; -H changes nothing in JSON or binary output (nvme-cli
# ignores it there too).
. "$(dirname "$0")/lib.sh"

T=$'\t'

# under FILE FIELD LINE...: the lines right after FIELD's own line are
# LINE... in that order, then an empty line
under() {
	local file=$1 field=$2 got want
	shift 2
	# $(...) drops trailing empty lines: an x keeps the one expected
	got=$(grep -A$(($# + 1)) -E "^$field +: " "$file" | tail -n +2; echo x)
	want=$(printf '%s\n' "$@" "" x)
	[ "$got" = "$want" ] && return 0
	fail "-H: under '$field' expected:"$'\n'"$want"$'\n'"got:"$'\n'"$got"
}

if ok id-ctrl emu:vwc=1,dbbuf=1 -H; then
	cp "$TMP/out" "$TMP/ctrl"
	grep -q "^oncs      : 0xc$" "$TMP/ctrl" || fail "id-ctrl -H: oncs"
	under "$TMP/ctrl" oncs \
		"  [8:8] : 0${T}Copy Not Supported" \
		"  [7:7] : 0${T}Verify Not Supported" \
		"  [6:6] : 0${T}Timestamp Not Supported" \
		"  [5:5] : 0${T}Reservations Not Supported" \
		"  [4:4] : 0${T}Save and Select Not Supported" \
		"  [3:3] : 0x1${T}Write Zeroes Supported" \
		"  [2:2] : 0x1${T}Data Set Management Supported" \
		"  [1:1] : 0${T}Write Uncorrectable Not Supported" \
		"  [0:0] : 0${T}Compare Not Supported"
	under "$TMP/ctrl" cmic \
		"  [3:3] : 0${T}ANA not supported" \
		"  [2:2] : 0${T}PCI" \
		"  [1:1] : 0${T}Single Controller" \
		"  [0:0] : 0${T}Single Port"
	grep -qF "  [8:8] : 0x1${T}Namespace Attribute Changed Event Supported" \
		"$TMP/ctrl" || fail "id-ctrl -H: oaes bit 8"
	grep -qF "  [8:8] : 0x1${T}Doorbell Buffer Config Supported" \
		"$TMP/ctrl" || fail "id-ctrl -H: oacs bit 8 with dbbuf=1"
	grep -qF "  [1:1] : 0x1${T}Format NVM Supported" "$TMP/ctrl" ||
		fail "id-ctrl -H: oacs bit 1"
	under "$TMP/ctrl" frmw \
		"  [5:5] : 0${T}Multiple FW or Boot Update Detection Not Supported" \
		"  [4:4] : 0${T}Firmware Activate Without Reset Not Supported" \
		"  [3:1] : 0x1${T}Number of Firmware Slots" \
		"  [0:0] : 0x1${T}Firmware Slot 1 Read-Only"
	grep -qF "  [2:2] : 0x1${T}Extended data for Get Log Page Supported" \
		"$TMP/ctrl" || fail "id-ctrl -H: lpa bit 2"
	under "$TMP/ctrl" elpe \
		"  [7:0] : 63 (0's based)${T}Error Log Page Entries (ELPE)"
	under "$TMP/ctrl" wctemp \
		" [15:0] : 70°C (343 Kelvin)${T}Warning Composite Temperature Threshold (WCTEMP)"
	under "$TMP/ctrl" tnvmcap "[127:0] : 1073741824" \
		"${T}Total NVM Capacity (TNVMCAP)"
	under "$TMP/ctrl" sanicap \
		"  [31:30] : 0${T}Additional media modification after sanitize operation completes successfully is not defined" \
		"  [29:29] : 0${T}No-Deallocate After Sanitize bit in Sanitize command Supported" \
		"    [2:2] : 0x1${T}Overwrite Sanitize Operation Supported" \
		"    [1:1] : 0x1${T}Block Erase Sanitize Operation Supported" \
		"    [0:0] : 0${T}Crypto Erase Sanitize Operation Not Supported"
	under "$TMP/ctrl" sqes "  [7:4] : 0x6${T}Max SQ Entry Size (64)" \
		"  [3:0] : 0x6${T}Min SQ Entry Size (64)"
	under "$TMP/ctrl" cqes "  [7:4] : 0x4${T}Max CQ Entry Size (16)" \
		"  [3:0] : 0x4${T}Min CQ Entry Size (16)"
	under "$TMP/ctrl" fna \
		"  [3:3] : 0${T}Format NVM Broadcast NSID (FFFFFFFFh) Supported" \
		"  [2:2] : 0${T}Crypto Erase Not Supported as part of Secure Erase" \
		"  [1:1] : 0${T}Crypto Erase Applies to Single Namespace(s)" \
		"  [0:0] : 0x1${T}Format Applies to All Namespace(s)"
	under "$TMP/ctrl" vwc \
		"  [2:1] : 0x3${T}The Flush command supports NSID set to FFFFFFFFh" \
		"  [0:0] : 0x1${T}Volatile Write Cache Present"
	under "$TMP/ctrl" fuses "  [0:0] : 0${T}Fused Compare and Write Not Supported"
	under "$TMP/ctrl" sgls " [15:8] : 0${T}SGL Descriptor Threshold" \
		" [1:0]  : 0${T}Scatter-Gather Lists Not Supported"
	under "$TMP/ctrl" avscc \
		"  [0:0] : 0${T}Admin Vendor Specific Commands uses Vendor Specific Format"
	under "$TMP/ctrl" apsta \
		"  [0:0] : 0${T}Autonomous Power State Transitions Not Supported"
	under "$TMP/ctrl" icsvscc \
		"  [0:0] : 0${T}NVM Vendor Specific Commands uses Vendor Specific Format"
	# cntrltype: nvme-cli prints no empty line after it
	grep -A3 "^cntrltype : 1$" "$TMP/ctrl" | tail -n +2 >"$TMP/ct"
	printf '%s\n' "  [7:2] : 0${T}Reserved" "  [1:0] : 0x1${T}I/O Controller" \
		"fguid     : 00000000-0000-0000-0000-000000000000" >"$TMP/want"
	same "$TMP/want" "$TMP/ct" "id-ctrl -H: cntrltype"
	# the power state, nvme-cli 2.3's three lines
	tail -3 "$TMP/ctrl" >"$TMP/ps"
	printf '%s\n' \
		"ps      0 : mp:25.00W operational enlat:10 exlat:10 rrt:0 rrl:0" \
		"            rwt:0 rwl:0 idle_power:- active_power:-" \
		"            active_power_workload:-" >"$TMP/want"
	same "$TMP/want" "$TMP/ps" "id-ctrl -H: power state 0"
fi
# the bits follow the device: no cache, no doorbell buffer
if ok id-ctrl emu:vwc=0,dbbuf=0 -H; then
	grep -qF "  [0:0] : 0${T}Volatile Write Cache Not Present" \
		"$TMP/out" || fail "id-ctrl -H vwc=0: cache still present"
	grep -qF "  [8:8] : 0${T}Doorbell Buffer Config Not Supported" \
		"$TMP/out" || fail "id-ctrl -H dbbuf=0: still supported"
fi
# without -H: not one decoded line
ok id-ctrl emu: && grep -q '^ *\[' "$TMP/out" &&
	fail "id-ctrl without -H decodes bits"

NS="emu:sn=X1,size=1M,lbads=9,ms=8,mset=1,pi=1,pil=1"
if ok id-ns "$NS" -n 1 --human-readable; then
	cp "$TMP/out" "$TMP/ns"
	under "$TMP/ns" flbas \
		"  [6:5] : 0${T}Most significant 2 bits of Current LBA Format Selected" \
		"  [4:4] : 0x1${T}Metadata Transferred at End of Data LBA" \
		"  [3:0] : 0x1${T}Least significant 4 bits of Current LBA Format Selected"
	under "$TMP/ns" dps \
		"  [3:3] : 0x1${T}Protection Information is Transferred as First 8 Bytes of Metadata" \
		"  [2:0] : 0x1${T}Protection Information Type 1 Enabled"
	under "$TMP/ns" mc "  [1:1] : 0x1${T}Metadata Pointer Supported" \
		"  [0:0] : 0x1${T}Metadata as Part of Extended Data LBA Supported"
	under "$TMP/ns" dpc \
		"  [4:4] : 0x1${T}Protection Information Transferred as Last 8 Bytes of Metadata Supported" \
		"  [3:3] : 0x1${T}Protection Information Transferred as First 8 Bytes of Metadata Supported" \
		"  [2:2] : 0x1${T}Protection Information Type 3 Supported" \
		"  [1:1] : 0x1${T}Protection Information Type 2 Supported" \
		"  [0:0] : 0x1${T}Protection Information Type 1 Supported"
	under "$TMP/ns" dlfeat \
		"  [4:4] : 0${T}Guard Field of Deallocated Logical Blocks is set to 0xFFFF" \
		"  [3:3] : 0x1${T}Deallocate Bit in the Write Zeroes Command is Supported" \
		"  [2:0] : 0x1${T}Bytes Read From a Deallocated Logical Block and its Metadata are 0x00"
	under "$TMP/ns" nmic "  [0:0] : 0${T}Namespace Multipath Not Capable"
	under "$TMP/ns" fpi "  [7:7] : 0${T}Format Progress Indicator Not Supported"
	under "$TMP/ns" nsfeat \
		"  [4:4] : 0${T}NPWG, NPWA, NPDG, NPDA, and NOWS are Not Supported" \
		"  [3:3] : 0${T}NGUID and EUI64 fields if non-zero, Reused" \
		"  [2:2] : 0${T}Deallocated or Unwritten Logical Block error Not Supported" \
		"  [1:1] : 0${T}Namespace uses AWUN, AWUPF, and ACWU" \
		"  [0:0] : 0${T}Thin Provisioning Not Supported"
	grep -qF "  [7:7] : 0${T}Ignore Existing Key - Used as defined in revision 1.2.1 or earlier" \
		"$TMP/ns" || fail "id-ns -H: rescap bit 7"
	grep -qxF "LBA Format  1 : Metadata Size: 8   bytes - Data Size: 512 bytes - Relative Performance: 0 Best (in use)" \
		"$TMP/ns" || fail "id-ns -H: LBA format 1 not in use"
	grep -qxF "LBA Format  6 : Metadata Size: 0   bytes - Data Size: 4096 bytes - Relative Performance: 0 Best " \
		"$TMP/ns" || fail "id-ns -H: LBA format 6"
	grep -q "^lbaf " "$TMP/ns" && fail "id-ns -H: the short lbaf lines too"
fi

# -H is ignored for JSON and binary, as nvme-cli does
for o in json binary; do
	ok id-ctrl emu:sn=X1 -o $o && cp "$TMP/out" "$TMP/plain"
	ok id-ctrl emu:sn=X1 -o $o -H &&
		same "$TMP/plain" "$TMP/out" "id-ctrl -H -o $o differs"
	ok id-ns "$NS" -n 1 -o $o && cp "$TMP/out" "$TMP/plain"
	ok id-ns "$NS" -n 1 -H -o $o &&
		same "$TMP/plain" "$TMP/out" "id-ns -H -o $o differs"
done

finish
