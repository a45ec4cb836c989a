#!/bin/bash
# id-ctrl / id-ns JSON in nvme-cli 2.3's names and types: the 128-bit
# fields as exact decimal strings (the same number as the raw bytes),
# power states with active_power_work and active_scale, id-ns with nulbaf.
. "$(dirname "$0")/lib.sh"
need_python

DEV="emu:file=$TMP/disk.img,size=16M"

if ok id-ctrl "$DEV" -o binary; then
	cp "$TMP/out" "$TMP/ctrl.bin"
	ok id-ctrl "$DEV" -o json && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], 'rb').read()
u128 = lambda off: int.from_bytes(raw[off:off + 16], 'little')
for name, off in (('tnvmcap', 280), ('unvmcap', 296), ('megcap', 368),
                  ('maxdna', 544)):
    assert isinstance(d[name], str), (name, d[name])
    assert d[name] == str(u128(off)), (name, d[name], u128(off))
assert int(d['tnvmcap']) > 0, d['tnvmcap']
ps = d['psds'][0]
keys = '''max_power flags entry_lat exit_lat read_tput read_lat write_tput
write_lat idle_power idle_scale active_power active_power_work
active_scale'''.split()
assert list(ps) == keys, list(ps)
p = raw[2048:2080]
assert ps['active_scale'] == p[22] >> 6, ps
assert ps['active_power_work'] == p[22] & 7, ps
assert ps['idle_scale'] == p[18] >> 6, ps
" "$TMP/out" "$TMP/ctrl.bin" || fail "id-ctrl JSON names/values"
fi

if ok id-ns "$DEV" -n 1 -o binary; then
	cp "$TMP/out" "$TMP/ns.bin"
	ok id-ns "$DEV" -n 1 -o json && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], 'rb').read()
assert d['nulbaf'] == raw[81], (d.get('nulbaf'), raw[81])
keys = list(d)
assert keys.index('nulbaf') == keys.index('msrc') + 1, keys
assert isinstance(d['nvmcap'], str), d['nvmcap']
assert d['nvmcap'] == str(int.from_bytes(raw[48:64], 'little')), d['nvmcap']
" "$TMP/out" "$TMP/ns.bin" || fail "id-ns JSON names/values"
fi

finish
