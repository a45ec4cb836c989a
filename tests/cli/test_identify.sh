#!/bin/bash
# id-ctrl and id-ns: JSON that python parses, with nvme-cli's field names
# and the emulated controller's values; the normal "key : value" output;
# the raw binary data.
. "$(dirname "$0")/lib.sh"
need_python

DEV="emu:file=$TMP/disk.img,size=16M"
DEV9="emu:file=$TMP/disk9.img,size=16M,lbads=9"

# pycheck FILE SCRIPT: run SCRIPT with the parsed JSON of FILE as `d`
pycheck() {
	python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$2" "$1" || fail "JSON check failed: $2"
}

if ok id-ctrl "$DEV" -o json; then
	python3 -m json.tool "$TMP/out" >/dev/null ||
		fail "id-ctrl -o json does not parse"
	cp "$TMP/out" "$TMP/ctrl.json"
	pycheck "$TMP/ctrl.json" "
names = '''vid ssvid sn mn fr rab ieee cmic mdts cntlid ver rtd3r rtd3e oaes
ctratt oacs acl aerl frmw lpa elpe npss avscc apsta wctemp cctemp mtfa hmpre
hmmin tnvmcap unvmcap rpmbs sqes cqes maxcmd nn oncs fuses fna vwc awun awupf
acwu sgls subnqn psds'''.split()
missing = [n for n in names if n not in d]
assert not missing, missing
assert d['mn'].startswith('nvq emulated controller'), d['mn']
assert d['sqes'] == 0x66 and d['cqes'] == 0x44, (d['sqes'], d['cqes'])
assert d['nn'] >= 1 and d['mdts'] == 5, (d['nn'], d['mdts'])
assert d['ver'] >= 0x10400, hex(d['ver'])
assert isinstance(d['tnvmcap'], str), d['tnvmcap']
assert len(d['psds']) == d['npss'] + 1, d['psds']
for k in '''max_power flags entry_lat exit_lat read_tput read_lat write_tput
write_lat idle_power idle_scale active_power active_power_work active_scale'''.split():
    assert k in d['psds'][0], k
"
fi

if ok id-ns "$DEV" -n 1 -o json; then
	python3 -m json.tool "$TMP/out" >/dev/null ||
		fail "id-ns -o json does not parse"
	pycheck "$TMP/out" "
names = '''nsze ncap nuse nsfeat nlbaf flbas mc dpc dps nmic rescap fpi dlfeat
nawun nawupf nacwu nabsn nabo nabspf noiob nvmcap mssrl mcl msrc anagrpid
nsattr nvmsetid endgid nguid eui64 lbafs'''.split()
missing = [n for n in names if n not in d]
assert not missing, missing
assert d['nsze'] == 4096 and d['ncap'] == 4096, (d['nsze'], d['ncap'])
assert len(d['lbafs']) == d['nlbaf'] + 1, d['lbafs']
f = d['lbafs'][d['flbas'] & 0xf]
assert f['ds'] == 12 and f['ms'] == 0, f
assert len(d['nguid']) == 32 and len(d['eui64']) == 16
"
fi

ok id-ns "$DEV9" --namespace-id=1 --output-format=json &&
	pycheck "$TMP/out" "
assert d['nsze'] == 32768, d['nsze']
assert d['lbafs'][d['flbas'] & 0xf]['ds'] == 9, d['lbafs']
"

# normal output: nvme-cli's layout
if ok id-ctrl "$DEV"; then
	head -1 "$TMP/out" | grep -q "^NVME Identify Controller:" ||
		fail "id-ctrl: no header"
	for re in '^vid       : 0x[0-9a-f]+$' '^mn        : nvq emulated controller' \
		'^mdts      : 5$' '^sqes      : 0x66$' '^cqes      : 0x44$' \
		'^nn        : [1-9]' '^subnqn    : ' '^ps      0 : mp:'; do
		grep -Eq "$re" "$TMP/out" || fail "id-ctrl: no line /$re/"
	done
fi
if ok id-ns "$DEV" -n 1; then
	head -1 "$TMP/out" | grep -q "^NVME Identify Namespace 1:" ||
		fail "id-ns: no header"
	for re in '^nsze    : 0x1000$' '^nuse    : ' '^flbas   : ' \
		'^lbaf  [0-9] : ms:0   lbads:12 rp:(0x)?[0-3] \(in use\)$'; do
		grep -Eq "$re" "$TMP/out" || fail "id-ns: no line /$re/"
	done
	[ "$(grep -c "(in use)" "$TMP/out")" -eq 1 ] ||
		fail "id-ns: not exactly one LBA format in use"
fi
ok id-ns "$DEV9" -n 1 && grep -Eq 'lbads:9  rp:(0x)?[0-3] \(in use\)$' "$TMP/out" ||
	fail "id-ns of a 512-byte namespace: 512-byte format not in use"

# binary: the raw 4096-byte data structures
ok id-ctrl "$DEV" -o binary && [ "$(wc -c <"$TMP/out")" -eq 4096 ] &&
	dd if="$TMP/out" bs=1 skip=24 count=23 status=none |
	grep -q "^nvq emulated controller$" ||
	fail "id-ctrl -o binary is not the Identify Controller data"
ok id-ns "$DEV" -n 1 -o binary && [ "$(wc -c <"$TMP/out")" -eq 4096 ] ||
	fail "id-ns -o binary is not 4096 bytes"

finish
