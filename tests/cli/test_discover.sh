#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq discover without a target: usage errors, URIs it refuses, a
# connection refused, and the output of saved log pages (--raw-log),
# byte for byte as nvme-cli 2.3's `nvme discover` prints them, and as JSON
# with nvme-cli's keys.
. "$(dirname "$0")/lib.sh"
need_python

# A page: records of every kind the output names, and one of values no
# name exists for (with non-printable bytes in its NQN).
python3 - "$TMP/page.bin" <<'PY' || { fail "cannot write the page"; finish; }
import struct, sys
def rec(trtype, adrfam, subtype, treq, portid, eflags, svc, addr, nqn,
        tsas=b''):
    r = struct.pack('<BBBBHHHH', trtype, adrfam, subtype, treq, portid,
                    0xffff, 32, eflags)
    r += b'\0' * 20 + svc.ljust(32, b' ') + b'\0' * 192
    r += nqn.ljust(256, b'\0') + addr.ljust(256, b' ')
    r += tsas.ljust(256, b'\0')
    assert len(r) == 1024
    return r
recs = [
    rec(3, 1, 3, 2, 1, 3, b'8009', b'127.0.0.1',
        b'nqn.2014-08.org.nvmexpress.discovery'),
    rec(3, 1, 2, 2, 1, 0, b'4420', b'127.0.0.1',
        b'nqn.2014-08.org.example:sub1'),
    rec(3, 2, 1, 4, 2, 4, b'4421', b'::1', b'nqn.2014-08.org.example:ref',
        b'\x02'),
    rec(1, 1, 2, 1, 7, 7, b'4420', b'10.0.0.9',
        b'nqn.2014-08.org.example:rdma',
        bytes([1, 4, 1, 0, 0, 0, 0, 0, 0xff, 0xff])),
    rec(9, 9, 9, 9, 65535, 8, b'', b'', b'nqn.x:\x01odd\xff', b'\x09'),
]
hdr = struct.pack('<QQH', 42, len(recs), 0).ljust(1024, b'\0')
open(sys.argv[1], 'wb').write(hdr + b''.join(recs))
PY

cat >"$TMP/want" <<'TXT'

Discovery Log Number of Records 5, Generation counter 42
=====Discovery Log Entry 0======
trtype:  tcp
adrfam:  ipv4
subtype: current discovery subsystem
treq:    not required
portid:  1
trsvcid: 8009
subnqn:  nqn.2014-08.org.nvmexpress.discovery
traddr:  127.0.0.1
eflags:  explicit discovery connections, duplicate discovery information
sectype: none
=====Discovery Log Entry 1======
trtype:  tcp
adrfam:  ipv4
subtype: nvme subsystem
treq:    not required
portid:  1
trsvcid: 4420
subnqn:  nqn.2014-08.org.example:sub1
traddr:  127.0.0.1
eflags:  none
sectype: none
=====Discovery Log Entry 2======
trtype:  tcp
adrfam:  ipv6
subtype: discovery subsystem referral
treq:    not specified, sq flow control disable supported
portid:  2
trsvcid: 4421
subnqn:  nqn.2014-08.org.example:ref
traddr:  ::1
eflags:  no cdc connectivity
sectype: tls13
=====Discovery Log Entry 3======
trtype:  rdma
adrfam:  ipv4
subtype: nvme subsystem
treq:    required
portid:  7
trsvcid: 4420
subnqn:  nqn.2014-08.org.example:rdma
traddr:  10.0.0.9
eflags:  explicit discovery connections, duplicate discovery information, no cdc connectivity
rdma_prtype: roce-v2
rdma_qptype: connected
rdma_cms:    rdma-cm
rdma_pkey: 0xffff
=====Discovery Log Entry 4======
trtype:  unrecognized
adrfam:  
subtype: unrecognized
treq:    unrecognized
portid:  65535
trsvcid: 
subnqn:  nqn.x:.odd.
traddr:  
eflags:  unrecognized
TXT

ok discover --raw-log "$TMP/page.bin" && same "$TMP/out" "$TMP/want" \
	"discover --raw-log: normal output"
ok discover --raw-log="$TMP/page.bin" -o normal &&
	same "$TMP/out" "$TMP/want" "discover -o normal"
# standard input, and bytes after the records ignored
{ cat "$TMP/page.bin"; printf 'trailing'; } >"$TMP/long.bin"
"$NVQ" discover --raw-log - <"$TMP/long.bin" >"$TMP/out" 2>"$TMP/err" ||
	fail "discover --raw-log -: exit status $?"
same "$TMP/out" "$TMP/want" "discover --raw-log - (standard input)"

ok discover --raw-log "$TMP/page.bin" --output-format json &&
	python3 - "$TMP/out" <<'PY' || fail "discover -o json: bad document"
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["genctr", "records"], list(d)
assert d["genctr"] == 42
r = d["records"]
assert len(r) == 5
common = ["trtype", "adrfam", "subtype", "treq", "portid", "trsvcid",
          "subnqn", "traddr", "eflags"]
assert list(r[0]) == common + ["sectype"], list(r[0])
assert r[0] == {"trtype": "tcp", "adrfam": "ipv4",
                "subtype": "current discovery subsystem",
                "treq": "not required", "portid": 1, "trsvcid": "8009",
                "subnqn": "nqn.2014-08.org.nvmexpress.discovery",
                "traddr": "127.0.0.1",
                "eflags": "explicit discovery connections, duplicate "
                          "discovery information",
                "sectype": "none"}, r[0]
assert r[1]["subnqn"] == "nqn.2014-08.org.example:sub1"
assert r[1]["subtype"] == "nvme subsystem"
assert r[2]["adrfam"] == "ipv6" and r[2]["traddr"] == "::1"
assert r[2]["sectype"] == "tls13" and r[2]["eflags"] == "no cdc connectivity"
assert list(r[3]) == common + ["rdma_prtype", "rdma_qptype", "rdma_cms",
                               "rdma_pkey"], list(r[3])
assert r[3]["rdma_pkey"] == 65535 and r[3]["rdma_prtype"] == "roce-v2"
# unknown values: "unrecognized"; adrfam too (only normal output blanks it)
assert list(r[4]) == common, list(r[4])
assert r[4]["trtype"] == r[4]["adrfam"] == r[4]["eflags"] == "unrecognized"
assert r[4]["traddr"] == "" and r[4]["subnqn"] == "nqn.x:.odd."
PY

# A page of Linux's nvmet (4 records, space padded) as nvme-cli 2.3 saved
# it (nvme discover --raw), and what nvme-cli 2.3 printed for it: the same
# bytes in normal output, the same document (keys in the same order) in
# JSON.
D=$(dirname "$0")
ok discover --raw-log "$D/discover-nvmet.raw" &&
	same "$TMP/out" "$D/discover-nvmet.txt" "discover: nvme-cli's output"
ok discover --raw-log "$D/discover-nvmet.raw" -o json &&
	python3 - "$TMP/out" "$D/discover-nvmet.json" <<'PY' ||
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a == b, (a, b)
assert [list(r) for r in a["records"]] == [list(r) for r in b["records"]]
PY
	fail "discover -o json: not nvme-cli's document"

# An empty log.
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<QQ", 5, 0).ljust(1024, b"\0"))' >"$TMP/empty.bin"
ok discover --raw-log "$TMP/empty.bin" &&
	printf '\nDiscovery Log Number of Records 0, Generation counter 5\n' |
	same "$TMP/out" - "discover: an empty log"
ok discover --raw-log "$TMP/empty.bin" -o json &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d == {"genctr": 5, "records": []}, d' "$TMP/out" ||
	fail "discover -o json: an empty log"

# Malformed pages: exit 1 with the decoder's reason.
head -c 3072 "$TMP/page.bin" >"$TMP/short.bin"
expect 1 "short.bin: discovery log: 3072 bytes hold 2 of its 5 records" \
	discover --raw-log "$TMP/short.bin"
head -c 100 "$TMP/page.bin" >"$TMP/tiny.bin"
expect 1 "less than its 1024-byte header" discover --raw-log "$TMP/tiny.bin"
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<QQ", 5, 1025).ljust(1024, b"\0"))' >"$TMP/many.bin"
expect 1 "1025 records, more than the 1024 taken" \
	discover --raw-log "$TMP/many.bin"
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<QQH", 5, 0, 1).ljust(1024, b"\0"))' >"$TMP/fmt.bin"
expect 1 "record format 1" discover --raw-log "$TMP/fmt.bin"
expect 1 "nothing.bin: No such file" discover --raw-log "$TMP/nothing.bin"

# Usage errors: exit 2, nothing tried.
expect 2 "no URI given" discover
expect 2 "a URI or --raw-log, not both" discover tcp:127.0.0.1 \
	--raw-log "$TMP/page.bin"
expect 2 "'emu:' is not a tcp: URI" discover emu:
expect 2 "unexpected argument" discover tcp:127.0.0.1 tcp:127.0.0.2
expect 2 "unknown output format" discover tcp:127.0.0.1 -o binary
expect 2 "unknown option" discover tcp:127.0.0.1 -n 1
expect 2 "empty value" discover --raw-log=
ok discover --help && grep -q -- '--raw-log=FILE' "$TMP/out" ||
	fail "discover --help: no --raw-log"

# URIs the library refuses, and no controller: exit 1 with its message.
expect 1 "unknown option 'bogus'" discover tcp:127.0.0.1,bogus=1
expect 1 "bad port '4420/1'" discover tcp:127.0.0.1:4420/1
expect 1 "is not an NQN" discover tcp:127.0.0.1,nqn=discovery
expect 1 "no host" discover tcp:
# Port 1 of this host: nothing listens there (or no TCP in this build).
expect 1 "." discover tcp:127.0.0.1:1,connect_timeout=2000

finish
