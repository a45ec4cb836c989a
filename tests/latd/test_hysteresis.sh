#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq-latd's hysteresis (docs/nvq-latd.md) on a fixture tree, counting
# every write to the fake PM QoS files (inotify IN_CLOSE_WRITE) for a
# QD1-like pattern: single I/Os with gaps longer than the timeout but
# shorter than two timeouts.
#
# With hysteresis on, a disk that comes back soon after a release (a
# bounce, forced here twice first) keeps its next limit through more quiet
# periods (1, then 2 more), so gaps under three timeouts release nothing:
# the files are written only for the two bounces' pairs and the final
# one; back later than three timeouts after that release, the linger
# halves. With it off, each gap may release and re-apply (how many
# depends on where the daemon's checks fall: printed, not asserted).
# Either way every write is one of the daemon's applies or releases, one
# per CPU.
#
# The timeout is 1 s and the gaps 1.2 s: only a stall of 1.8 s (of this
# script or of the daemon's polling) would make a gap look like three
# timeouts (a generous bound, as the other daemon tests use, not a
# measurement).
. "$(dirname "$0")/daemon_lib.sh"

need_python

TMO=1000
GAP=1.2
GAPS=8

# count_writes: count close-after-write events on cpu0..3's files into
# $TMP/writes (one line, the total), until killed. Sets $CPID.
count_writes() {
	rm -f "$TMP/writes" "$TMP/counting"
	python3 - "$TMP/writes" "$TMP/counting" "$(qos_file 0)" "$(qos_file 1)" \
		"$(qos_file 2)" "$(qos_file 3)" <<'PY' &
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
if fd < 0:
    sys.exit("inotify_init1: " + os.strerror(ctypes.get_errno()))
IN_CLOSE_WRITE = 0x8
for p in sys.argv[3:]:
    if libc.inotify_add_watch(fd, p.encode(), IN_CLOSE_WRITE) < 0:
        sys.exit("inotify_add_watch %s: %s" % (p, os.strerror(ctypes.get_errno())))
n = 0
def save():
    with open(sys.argv[1] + ".new", "w") as f:
        f.write("%d\n" % n)
    os.replace(sys.argv[1] + ".new", sys.argv[1])
save()
open(sys.argv[2], "w").close()
while True:
    buf = os.read(fd, 4096)
    off = 0
    while off < len(buf):
        wd, mask, cookie, ln = struct.unpack_from("iIII", buf, off)
        off += 16 + ln
        if mask & IN_CLOSE_WRITE:
            n += 1
    save()
PY
	CPID=$!
	pids="$pids $CPID"
	wait_for "the write counter" test -e "$TMP/counting"
}

# JSON status of nvme0n1's queue -> "applies releases linger active"
queue_state() {
	"$LATD" status --json >"$TMP/status.json" 2>"$TMP/status.err" || {
		fail "status --json: $(cat "$TMP/status.err")"
		echo "0 0 0 0"
		return
	}
	python3 - "$TMP/status.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
d = [x for x in s["disks"] if x["name"] == "nvme0n1"][0]
q = d["queues"][0]
print(q["applies"], q["releases"], q["linger"], int(q["active"]))
PY
}

limited() {
	is 1 n/a && is 3 n/a
}

bump_limited() {
	bump nvme0n1
	sleep 0.05
	limited
}

released() {
	is 1 0 && is 3 0
}

# run MODE: the pattern with --hysteresis MODE; leaves "writes applies
# releases" in $RESULT and the queue's linger after the pattern in $LINGER.
run() {
	local mode=$1 i a r l act
	build_tree
	start --activity poll --cpu-lat-limit-us 0 --cpu-lat-timeout-ms $TMO \
		--hysteresis "$mode" nvme0n1
	grep -q "timeout $TMO ms, activity poll (as asked); hysteresis $mode" "$TMP/log" ||
		fail "$mode: the log does not give the hysteresis: $(cat "$TMP/log")"
	count_writes

	# One I/O, its release, and at once the next: a bounce; twice. (The
	# first I/O is repeated until seen: one that came before the
	# daemon's first look at the stat file is its baseline, not
	# activity.)
	wait_for "$mode: the first limit" bump_limited
	wait_for "$mode: the first release" released
	bump nvme0n1
	wait_for "$mode: the limit after the first bounce" limited
	wait_for "$mode: the second release" released
	bump nvme0n1
	wait_for "$mode: the limit after the second bounce" limited

	# QD1-like: one I/O per gap of 1.2 timeouts.
	for i in $(seq 1 $GAPS); do
		sleep $GAP
		bump nvme0n1
	done
	wait_for "$mode: the release after the last I/O" released
	# The release is counted under the QoS lock after the files: wait
	# for the books to balance.
	wait_for "$mode: applies = releases" sh -c \
		"'$LATD' status --json | python3 -c 'import json, sys; q = json.load(sys.stdin)[\"disks\"][0][\"queues\"][0]; sys.exit(q[\"applies\"] != q[\"releases\"])'"
	# (a queue's linger changes only when it is activated: this is still
	# what the second bounce gave, unless the gaps released it again)
	read -r a r LINGER act <<<"$(queue_state)"

	if [ "$mode" = on ]; then
		# Back later than 1 + linger (2) timeouts after the release:
		# the linger halves, to 1.
		sleep 3.5
		bump nvme0n1
		wait_for "on: the limit after a pause" limited
		read -r _ _ l act <<<"$(queue_state)"
		[ "$l" = 1 ] ||
			fail "on: linger $l after a return 3.5 timeouts after the release, expected 1"
	fi
	stop
	[ "$RC" = 0 ] || fail "$mode: exit status $RC"
	kill "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null
	RESULT="$(cat "$TMP/writes") $a $r"
	released || fail "$mode: a file stayed limited after SIGTERM"
}

run on
read -r won aon ron <<<"$RESULT"
echo "hysteresis on: $won writes, $aon applies, $ron releases, linger $LINGER"
[ "$LINGER" = 2 ] ||
	fail "on: linger $LINGER after two bounces, expected 2"
# the bounces' pairs and the final one; the gaps wrote nothing
[ "$aon" = 3 ] && [ "$ron" = 3 ] ||
	fail "on: $aon applies and $ron releases over $GAPS gaps, expected 3 and 3"
# + one apply after the pause and its release at SIGTERM, 2 CPUs each
[ "$won" = $(((aon + ron + 2) * 2)) ] ||
	fail "on: $won writes to the PM QoS files for $aon applies and $ron releases (+1 each) on 2 CPUs"

run off
read -r woff aoff roff <<<"$RESULT"
echo "hysteresis off: $woff writes, $aoff applies, $roff releases, linger $LINGER"
[ "$LINGER" = 0 ] || fail "off: linger $LINGER, expected 0"
[ "$aoff" -ge 3 ] && [ "$aoff" = "$roff" ] ||
	fail "off: $aoff applies and $roff releases"
[ "$woff" = $(((aoff + roff) * 2)) ] ||
	fail "off: $woff writes to the PM QoS files for $aoff applies and $roff releases on 2 CPUs"

finish
