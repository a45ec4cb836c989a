#!/bin/bash
# The log page commands against the emulator: smart-log, error-log,
# fw-log and sanitize-log in nvme-cli 2.3's JSON key names and types (the
# key lists below are nvme-print.c's json_smart_log, json_error_log,
# json_fw_log, json_sanitize_log), their values the same as the raw bytes
# that get-log -b reads, get-log's hex dump, pieces at increasing offsets
# past the maximum transfer, NVMe errors and usage errors.
. "$(dirname "$0")/lib.sh"
need_python

IMG="$TMP/disk.img"
DEV="emu:file=$IMG,size=16M"

# ---- smart-log ----
SMART_KEYS='critical_warning temperature avail_spare spare_thresh percent_used
endurance_grp_critical_warning_summary data_units_read data_units_written
host_read_commands host_write_commands controller_busy_time power_cycles
power_on_hours unsafe_shutdowns media_errors num_err_log_entries
warning_temp_time critical_comp_time temperature_sensor_1
thm_temp1_trans_count thm_temp2_trans_count thm_temp1_total_time
thm_temp2_total_time'

# check_smart JSON RAW: names, order and values against the raw log
check_smart() {
	python3 - "$1" "$2" "$SMART_KEYS" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], 'rb').read()
assert len(raw) == 512, len(raw)
keys = sys.argv[3].split()
assert list(d) == keys, list(d)
u128 = {'data_units_read': 32, 'data_units_written': 48,
        'host_read_commands': 64, 'host_write_commands': 80,
        'controller_busy_time': 96, 'power_cycles': 112,
        'power_on_hours': 128, 'unsafe_shutdowns': 144,
        'media_errors': 160, 'num_err_log_entries': 176}
for k, off in u128.items():
    # nvme-cli 2.3 writes these as exact decimal strings
    assert isinstance(d[k], str), (k, d[k])
    assert d[k] == str(int.from_bytes(raw[off:off + 16], 'little')), k
le = lambda off, n: int.from_bytes(raw[off:off + n], 'little')
assert d['critical_warning'] == raw[0]
assert d['temperature'] == le(1, 2) and d['temperature'] > 273
assert d['temperature_sensor_1'] == le(200, 2)
assert d['avail_spare'] == raw[3] and d['spare_thresh'] == raw[4]
assert d['percent_used'] == raw[5]
assert d['warning_temp_time'] == le(192, 4)
assert d['thm_temp2_total_time'] == le(228, 4)
for k in d:
    if k not in u128:
        assert isinstance(d[k], int), (k, d[k])
EOF
}

power_cycles() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["power_cycles"])' "$1"
}

# the emulator without file=: every open reads the same log
if ok smart-log emu: -o json && cp "$TMP/out" "$TMP/smart.json" &&
	ok get-log emu: -i 2 -l 512 -b; then
	check_smart "$TMP/smart.json" "$TMP/out" ||
		fail "smart-log JSON against get-log -i 2 -b"
	cp "$TMP/out" "$TMP/smart.raw"
	ok smart-log emu: -b && same "$TMP/out" "$TMP/smart.raw" \
		"smart-log -b against get-log -i 2 -b"
fi
# each open is a power cycle: file= keeps the count
if ok smart-log "$DEV" -o json; then
	p1=$(power_cycles "$TMP/out")
	ok smart-log "$DEV" -o json && p2=$(power_cycles "$TMP/out")
	[ "$p2" = $((p1 + 1)) ] ||
		fail "power_cycles $p1 then $p2 (two opens of $IMG)"
fi

# Counters at the edge of 64 bits come out exact (no double on the way):
# the emulator keeps power cycles in an xattr of the image.
set_counters() {
	python3 - "$IMG" <<'EOF' 2>/dev/null
import os, struct, sys
# struct smart_persist (emu/log.c): magic, dirty, power_cycles, unsafe
os.setxattr(sys.argv[1], 'user.nvq.smart',
            struct.pack('<IIQQ', 0x3153514e, 1, 2**64 - 2, 2**64 - 10))
EOF
}
# the open adds one power cycle and (dirty) one unsafe shutdown
if set_counters; then
	if ok smart-log "$DEV" -o json; then
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["power_cycles"] == str(2**64 - 1), d["power_cycles"]
assert d["unsafe_shutdowns"] == str(2**64 - 9), d["unsafe_shutdowns"]
' "$TMP/out" || fail "smart-log: 64-bit counters not exact"
	fi
	set_counters && ok smart-log "$DEV" &&
		grep -q "^power_cycles.*: 18446744073709551615$" "$TMP/out" ||
		fail "smart-log text: power_cycles not exact"
else
	echo "note: no user xattrs on $TMP: 64-bit counter check skipped" >&2
fi

# text: nvme-cli's labels, Kelvin to Celsius
if ok smart-log emu: -H; then
	grep -q "^Smart Log for NVME device:emu: namespace-id:ffffffff$" \
		"$TMP/out" || fail "smart-log: no header line"
	k=$(sed -n 's/^temperature.*: \(-\?[0-9]*\)°C (\([0-9]*\) Kelvin)$/\2/p' \
		"$TMP/out")
	c=$(sed -n 's/^temperature.*: \(-\?[0-9]*\)°C (\([0-9]*\) Kelvin)$/\1/p' \
		"$TMP/out")
	[ -n "$k" ] && [ "$c" = $((k - 273)) ] ||
		fail "smart-log: temperature line: $(grep ^temperature "$TMP/out")"
	grep -q "Available Spare\[0\]" "$TMP/out" ||
		fail "smart-log -H: no critical warning bits"
	grep -Eq "^Data Units Read.*: [0-9]+ \([0-9.]+ [kMGT]?B\)$" "$TMP/out" ||
		fail "smart-log: no Data Units Read line"
fi
if ok smart-log emu: -H -o json; then
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
cw = d["critical_warning"]
assert list(cw) == ["value", "available_spare", "temp_threshold",
    "reliability_degraded", "ro", "vmbu_failed", "pmr_ro"], list(cw)
' "$TMP/out" || fail "smart-log -H -o json: critical_warning object"
fi
# no SMART log per namespace here (LPA bit 0 clear): the device refuses
expect 1 "^nvq: smart log: Invalid Field in Command.*leave out -n" \
	smart-log emu: -n 1

# ---- error-log ----
ERR_KEYS='error_count sqid cmdid status_field phase_tag parm_error_location
lba nsid vs trtype cs trtype_spec_info'
# A tolerated failure at bring-up (the second Identify) leaves one entry.
FDEV="emu:fault=status:0/0x2@on=admin:0x06@nth=2"
if ok error-log "$FDEV" -o json; then
	cp "$TMP/out" "$TMP/err.json"
	# more than ELPE + 1 entries asked for: ELPE + 1, as nvme-cli
	ok error-log "$FDEV" -e 256 -b && cp "$TMP/out" "$TMP/err-b.raw"
	ok get-log "$FDEV" -i 1 -l 4096 -b && cp "$TMP/out" "$TMP/err.raw"
	same "$TMP/err-b.raw" "$TMP/err.raw" "error-log -b against get-log -b"
	python3 - "$TMP/err.json" "$TMP/err.raw" "$ERR_KEYS" <<'EOF' ||
import json, sys
d = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], 'rb').read()
assert list(d) == ['errors'], list(d)
e = d['errors']
assert len(e) == 64, len(e)  # ELPE + 1
for x in e:
    assert list(x) == sys.argv[3].split(), list(x)
le = lambda off, n: int.from_bytes(raw[off:off + n], 'little')
assert e[0]['error_count'] == 1 == le(0, 8), e[0]
assert e[0]['status_field'] == 0x2 and e[0]['phase_tag'] == 0, e[0]
assert e[0]['cmdid'] == le(10, 2) and e[0]['sqid'] == 0, e[0]
assert e[0]['parm_error_location'] == le(14, 2), e[0]
assert e[1]['error_count'] == 0, e[1]
EOF
		fail "error-log JSON"
	ok smart-log "$FDEV" -o json && python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["num_err_log_entries"] == "1"
' "$TMP/out" || fail "smart-log num_err_log_entries after one error"
fi
if ok error-log "$FDEV" -e 2; then
	grep -q "^Error Log Entries for device:$FDEV entries:2$" "$TMP/out" ||
		fail "error-log -e 2: header"
	grep -q "^status_field	: 0x2(Invalid Field in Command)$" \
		"$TMP/out" || fail "error-log: status_field line"
	[ "$(grep -c '^ Entry\[' "$TMP/out")" -eq 2 ] ||
		fail "error-log -e 2: not 2 entries"
fi
expect 2 "at least 1" error-log emu: -e 0
expect 2 "out of range" error-log emu: -e 257

# ---- fw-log ----
if ok fw-log emu: -o json && cp "$TMP/out" "$TMP/fw.json" &&
	ok get-log emu: -i 3 -l 512 -b; then
	cp "$TMP/out" "$TMP/fw.raw"
	python3 - "$TMP/fw.json" "$TMP/fw.raw" <<'EOF' || fail "fw-log JSON"
import json, sys
d = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], 'rb').read()
assert list(d) == ['emu:'], list(d)
f = d['emu:']
assert f['Active Firmware Slot (afi)'] == raw[0], f
slots = [i for i in range(7) if raw[8 + 8 * i]]
assert list(f) == ['Active Firmware Slot (afi)'] + \
    ['Firmware Rev Slot %d' % (i + 1) for i in slots], list(f)
for i in slots:
    b = raw[8 + 8 * i:16 + 8 * i]
    s = ''.join(chr(c) if 0x21 <= c <= 0x7e else '.' for c in b)
    assert f['Firmware Rev Slot %d' % (i + 1)] == \
        '%d (%s)' % (int.from_bytes(b, 'little'), s), f
assert slots, 'no firmware slot'
EOF
	ok fw-log emu: -o binary && same "$TMP/out" "$TMP/fw.raw" \
		"fw-log -o binary"
fi
ok fw-log emu: && grep -Eq "^frs1 : 0x[0-9a-f]{16} \(.{8}\)$" "$TMP/out" ||
	fail "fw-log text: $(cat "$TMP/out")"

# ---- sanitize-log ----
if ok sanitize-log emu: -o json && cp "$TMP/out" "$TMP/san.json" &&
	ok get-log emu: -i 0x81 -l 512 -b; then
	cp "$TMP/out" "$TMP/san.raw"
	python3 - "$TMP/san.json" "$TMP/san.raw" <<'EOF' || fail "sanitize-log JSON"
import json, sys
d = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], 'rb').read()
le = lambda off, n: int.from_bytes(raw[off:off + n], 'little')
s = d['emu:']
assert list(s) == ['sprog', 'sstat', 'cdw10_info', 'time_over_write',
    'time_block_erase', 'time_crypto_erase', 'time_over_write_no_dealloc',
    'time_block_erase_no_dealloc', 'time_crypto_erase_no_dealloc'], list(s)
assert list(s['sstat']) == ['global_erased', 'no_cmplted_passes',
                            'status'], s['sstat']
assert s['sprog'] == le(0, 2) == 0xffff, s  # never sanitized
assert s['sstat']['status'] == \
    '(0) NVM Subsystem has never been sanitized.', s
assert s['cdw10_info'] == le(4, 4)
names = list(s)[3:]
for i, k in enumerate(names):
    assert s[k] == le(8 + 4 * i, 4), (k, s[k])
assert s['time_crypto_erase'] == 0xffffffff  # no crypto erase
assert s['time_crypto_erase_no_dealloc'] == 0xffffffff
assert s['time_over_write_no_dealloc'] == s['time_over_write'] > 0
EOF
fi
ok sanitize-log emu: -H && grep -q "^	\[2:0\]	NVM Subsystem has never" \
	"$TMP/out" || fail "sanitize-log -H: $(cat "$TMP/out")"

# ---- get-log ----
if ok get-log emu: -i 2 -l 20; then
	cat >"$TMP/want" <<'EOF'
Device:emu: log-id:2 namespace-id:0xffffffff
EOF
	head -2 "$TMP/out" | tail -1 |
		grep -q "^       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f$" ||
		fail "get-log: hex dump header: $(head -2 "$TMP/out")"
	head -1 "$TMP/out" | cmp -s - "$TMP/want" ||
		fail "get-log: first line $(head -1 "$TMP/out")"
	[ "$(wc -l <"$TMP/out")" -eq 4 ] || fail "get-log -l 20: not 2 rows"
	grep -Eq '^0010: ([0-9a-f]{2} ){3}[0-9a-f]{2} {38}"\.\.\.\."$' "$TMP/out" ||
		fail "get-log: last row: $(tail -1 "$TMP/out")"
fi
# an offset: the same bytes as from the start
if ok get-log emu: -i 0x81 -l 16 -o 8 -b; then
	cmp -s "$TMP/out" <(tail -c +9 "$TMP/san.raw" | head -c 16) ||
		fail "get-log -o 8: not bytes 8..23 of the sanitize log"
fi
# More than one command carries: read in pieces at increasing offsets.
# elpe=255 makes a 16 KiB Error Information log, filled by Identify
# failures that bring-up tolerates; mdts=1 carries 8 KiB a command. The
# pieces put together must be the log as one command reads it.
SDEV="emu:ns=200,elpe=255,fault=status:0/0x2@on=admin:0x06@nth=2@count=inf"
if ok get-log "$SDEV" -i 1 -l 16384 -b; then
	cp "$TMP/out" "$TMP/big.raw"
	python3 - "$TMP/big.raw" <<'EOF' || fail "elpe=255: error log not full"
import sys
b = open(sys.argv[1], 'rb').read()
n = [int.from_bytes(b[i:i + 8], 'little') for i in range(0, len(b), 64)]
assert len(n) == 256 and all(n), n
assert n == list(range(n[0], n[0] - 256, -1)), n  # newest first
EOF
	ok get-log "$SDEV,mdts=1" -i 1 -l 16384 -b &&
		same "$TMP/out" "$TMP/big.raw" "get-log in two pieces (mdts=1)"
	ok error-log "$SDEV,mdts=1" -b &&
		same "$TMP/out" "$TMP/big.raw" "error-log in two pieces (mdts=1)"
	# from an offset, in pieces: the same bytes
	ok get-log "$SDEV,mdts=1" -i 1 -l 12288 -o 4096 -b &&
		cmp -s "$TMP/out" <(tail -c +4097 "$TMP/big.raw") ||
		fail "get-log -o 4096 -l 12288 in pieces"
fi
expect 1 "^nvq: log page 0x10: Invalid Log Page \(NVMe status: SCT 0x1 SC 0x9" \
	get-log emu: -i 0x10 -l 512
expect 1 "Invalid Field" get-log emu: -i 2 -l 8 -o 1 -O

# LPA bit 2 clear (lpa=0): no offsets, no reading in pieces - refused
# before sending, and the controller itself fails an offset
expect 1 "LPA bit 2 clear\): read from offset 0" \
	get-log emu:lpa=0 -i 1 -l 512 -o 512
expect 1 "need 2 commands.*LPA bit 2 clear\): read at most 8192" \
	get-log emu:lpa=0,mdts=1 -i 1 -l 16384 -b
ok get-log emu:lpa=0,mdts=1 -i 1 -l 8192 -b
expect 0 "is Success" admin-passthru emu: -o 2 -4 0x007f0001 -6 512 -l 512 -r
expect 1 "Invalid Field in Command" \
	admin-passthru emu:lpa=0 -o 2 -4 0x007f0001 -6 512 -l 512 -r
ok id-ctrl emu:lpa=0 -o json && grep -q '"lpa" *: *0,' "$TMP/out" ||
	fail "id-ctrl: lpa=0 does not reach Identify's LPA"

# usage errors
expect 2 "missing -i/--log-id" get-log emu: -l 512
expect 2 "missing -l/--log-len" get-log emu: -i 2
expect 2 "multiple of 4" get-log emu: -i 2 -l 510
expect 2 "multiple of 4" get-log emu: -i 2 -l 0
expect 2 "out of range" get-log emu: -i 0x100 -l 512
expect 2 "out of range" get-log emu: -i 2 -l 512 -s 128
expect 2 "not with" get-log emu: -a 0x20001 -i 2
expect 2 "" get-log -i 2 -l 512
expect 2 "" smart-log emu: -o yaml
expect 2 "" fw-log emu: extra

finish
