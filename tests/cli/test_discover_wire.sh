#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq discover over the wire against a scripted discovery controller
# (fake_disc_target.py): the commands the host sends (Connect with CNTLID
# FFFFh and no keep-alive, CAP, CC.EN with IOSQES 6 and IOCQES 4, CSTS,
# the log page's header, whole page and header again, CC.SHN), GENCTR
# that moves before it settles or never does, a page that changes between
# reads, hostile headers, a controller that never gets ready or fails, a
# refused Connect, a failed Get Log Page. Skips (77) where the library
# has no NVMe/TCP connections.
. "$(dirname "$0")/lib.sh"
need_python
FAKE=$(dirname "$0")/fake_disc_target.py

"$NVQ" discover tcp:127.0.0.1:1,connect_timeout=1000 >/dev/null \
	2>"$TMP/err"
if grep -q "no NVMe/TCP connections" "$TMP/err"; then
	echo "SKIP: this build has no NVMe/TCP connections"
	exit 77
fi

fake_pid=
stop_fake() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null &&
		wait "$fake_pid" 2>/dev/null
	fake_pid=
}
trap 'stop_fake; rm -rf "$TMP"' EXIT

# start SCENARIO: the fake controller, its port in $PORT, its log in
# $TMP/log.
start() {
	stop_fake
	rm -f "$TMP/log" "$TMP/port"
	python3 "$FAKE" "$1" "$TMP/log" >"$TMP/port" &
	fake_pid=$!
	for _ in $(seq 300); do
		[ -s "$TMP/port" ] && break
		sleep 0.1
	done
	PORT=$(head -1 "$TMP/port")
	[ -n "$PORT" ] || { fail "$1: the fake controller did not start"; finish; }
	URI="tcp:127.0.0.1:$PORT,connect_timeout=5000"
}

HOSTID=00112233-4455-6677-8899-aabbccddeeff
start ok
ok discover "$URI,hostnqn=nqn.2014-08.org.example:host,hostid=$HOSTID" ||
	finish
grep -q "^Discovery Log Number of Records 2, Generation counter 7$" \
	"$TMP/out" || fail "ok: no 2 records of generation 7"
grep -q "^subnqn:  nqn.2014-08.org.example:sub1$" "$TMP/out" ||
	fail "ok: no second record"
cat >"$TMP/want" <<TXT
connect qid=0 sqsize=31 kato=0 cntlid=0xffff subnqn=nqn.2014-08.org.nvmexpress.discovery hostnqn=nqn.2014-08.org.example:host hostid=${HOSTID//-/}
get cap
set cc 0x460001
get csts
log lid=0x70 off=0 len=1024
log lid=0x70 off=0 len=3072
log lid=0x70 off=0 len=1024
set cc 0x464001
get csts
TXT
same "$TMP/log" "$TMP/want" "ok: the commands the host sent"

# The well-known NQN named explicitly, JSON out.
ok discover "$URI,nqn=nqn.2014-08.org.nvmexpress.discovery" -o json &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["genctr"] == 7 and len(d["records"]) == 2, d' "$TMP/out" ||
	fail "ok: -o json"

# GENCTR moves on the first reads, then holds: the stable page.
start settle
ok discover "$URI" &&
	grep -q "Records 2, Generation counter 10$" "$TMP/out" ||
	fail "settle: not the page of the settled counter"
# A record more in the first whole page than its header said: read again.
start grow
ok discover "$URI" && grep -q "Records 2, Generation counter 7$" "$TMP/out" ||
	fail "grow: not the consistent page"
[ "$(grep -c '^log ' "$TMP/log")" -ge 5 ] ||
	fail "grow: the page was not read again"

# Failures: exit 1 with what went wrong.
start churn
expect 1 "the log page changed on each of 10 reads" discover "$URI"
start huge
expect 1 "5000 records, more than the 1024 taken" discover "$URI"
start recfmt
expect 1 "record format 1" discover "$URI"
start notready
expect 1 "no CSTS.RDY after CC.EN within 500 ms" discover "$URI"
start cfs
expect 1 "fatal status \\(CSTS 0x2\\)" discover "$URI"
start refuse
expect 1 "Connect of queue 0 refused" discover "$URI"
start logfail
expect 1 "Get Log Page \\(discovery, 1024 bytes\\) failed: Invalid Field" \
	discover "$URI"
expect 1 "is nqn.2014-08.org.example:x a discovery subsystem\\?" \
	discover "$URI,nqn=nqn.2014-08.org.example:x"
# A controller that never finishes shutting down: the log all the same.
start noshutdown
ok discover "$URI" || fail "noshutdown: no log"

finish
