#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq-latd with the poll source on a fixture tree: a change of a disk's
# fake /sys/block/DEV/stat puts the limit on exactly that disk's interrupt
# CPUs, the limit goes after the timeout, `status --json` says so, and
# SIGTERM puts every file back and exits 0.
. "$(dirname "$0")/daemon_lib.sh"

need_python

build_tree
# cpu2 starts with a value of its own, which must survive untouched
put "$(qos_file 2)" 125

# keep_busy DISK: bump DISK's stat every 0.1 s in the background ($BUSY).
keep_busy() {
	(while :; do
		bump "$1"
		sleep 0.1
	done) &
	BUSY=$!
	pids="$pids $BUSY"
}

idle() {
	kill "$BUSY" 2>/dev/null
	wait "$BUSY" 2>/dev/null
}

# JSON status to $TMP/status.json
status_json() {
	"$LATD" status --json >"$TMP/status.json" 2>"$TMP/status.err" || {
		fail "status --json: $(cat "$TMP/status.err")"
		return 1
	}
}

start --activity poll --cpu-lat-limit-us 0 --cpu-lat-timeout-ms 400 \
	nvme0n1 nvme1n1

grep -q "activity: poll (as asked)" "$TMP/log" ||
	fail "the log does not say which activity source runs"
grep -q "limits are written but nothing here honours them" "$TMP/log" ||
	fail "the log does not say that nothing honours the limits"
grep -q "nvme0n1: 2 hardware queues; interrupt CPUs 1,3" "$TMP/log" ||
	fail "the log does not list nvme0n1's CPUs"

# Before any I/O: the QoS timer thread runs already (started when the
# disks were watched, not at the first activation), and each disk's queue
# exists, idle.
grep -qx nvq-qos /proc/"$LPID"/task/*/comm ||
	fail "no nvq-qos timer thread before any I/O: $(cat /proc/"$LPID"/task/*/comm)"
if status_json; then
	python3 - "$TMP/status.json" <<'PY' || fail "status before I/O: $(cat "$TMP/status.json")"
import json, sys
s = json.load(open(sys.argv[1]))
for d in s["disks"]:
    assert len(d["queues"]) == 1, d
    q = d["queues"][0]
    assert q["active"] is False and q["applies"] == 0, q
PY
fi

# Nothing changed before any I/O.
for c in 0 1 3; do
	is $c 0 || fail "cpu$c holds '$(cat "$(qos_file $c)")' before any I/O"
done
is 2 125 || fail "cpu2 changed before any I/O"

# I/O on nvme0n1: its interrupt CPUs 1 and 3 get "n/a" (0 = no idle),
# nvme1n1's CPUs 0 and 2 stay.
keep_busy nvme0n1
wait_for "the limit on cpu1 and cpu3" sh -c \
	"[ \"\$(cat '$(qos_file 1)')\" = n/a ] && [ \"\$(cat '$(qos_file 3)')\" = n/a ]"
is 0 0 || fail "cpu0 (not nvme0n1's) holds '$(cat "$(qos_file 0)")'"
is 2 125 || fail "cpu2 (not nvme0n1's) holds '$(cat "$(qos_file 2)")'"

if status_json; then
	python3 - "$TMP/status.json" <<'PY' || fail "status while busy: $(cat "$TMP/status.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["bpf"] is False, s
assert s["cpuidle_honours"] is False, s
assert "cpuidle driver none" in s["platform_note"], s
assert s["backend"] == "sysfs", s
d = {x["name"]: x for x in s["disks"]}
assert sorted(d) == ["nvme0n1", "nvme1n1"], d
a, b = d["nvme0n1"], d["nvme1n1"]
assert a["activity"] == "poll" and a["cpu_lat_limit_us"] == 0, a
assert a["cpu_lat_timeout_ms"] == 400 and a["effective_limit_us"] == 0, a
assert a["irq_cpus"] == "1,3" and a["submit_cpus"] == "0-3", a
assert [q["irq"] for q in a["hw_queues"]] == [40, 41], a
assert len(a["queues"]) == 1 and a["queues"][0]["cpus"] == "1,3", a
# the limit may be between a release and the next apply: only when the
# disk says it is active, the rest must agree
if a["active"]:
    ap = a["applied"]
    assert ap["value_us"] == 0 and ap["cpus"] == "1,3", ap
    assert ap["files"] == [{"cpu": 1, "value": "n/a"},
                           {"cpu": 3, "value": "n/a"}], ap
assert a["applies"] >= 1, a
assert b["active"] is False and b["applied"] is None, b
assert b["applies"] == 0 and b["irq_cpus"] == "0,2", b
PY
fi
"$LATD" status >"$TMP/status.txt" 2>&1 || fail "status: $(cat "$TMP/status.txt")"
grep -q "^nvme0n1 (259:0, nvme; from nvme0n1)" "$TMP/status.txt" ||
	fail "text status lacks nvme0n1: $(cat "$TMP/status.txt")"
grep -q "limits are written but nothing here honours them" "$TMP/status.txt" ||
	fail "text status lacks the platform note"

# No more I/O: released within timeout + a period, back to "0".
idle
wait_for "the release on cpu1 and cpu3" sh -c \
	"[ \"\$(cat '$(qos_file 1)')\" = 0 ] && [ \"\$(cat '$(qos_file 3)')\" = 0 ]"
is 2 125 || fail "cpu2 holds '$(cat "$(qos_file 2)")' after the release"
if status_json; then
	python3 - "$TMP/status.json" <<'PY' || fail "status when idle: $(cat "$TMP/status.json")"
import json, sys
s = json.load(open(sys.argv[1]))
a = [x for x in s["disks"] if x["name"] == "nvme0n1"][0]
assert a["active"] is False and a["applied"] is None, a
assert a["releases"] >= 1 and a["releases"] == a["applies"], a
assert a["held_ns"] > 0, a
assert a["queues"][0]["held_us"] is None, a
PY
fi

# Busy again, then SIGTERM while the limit is held: every file restored.
keep_busy nvme1n1
wait_for "the limit on cpu0 and cpu2" sh -c \
	"[ \"\$(cat '$(qos_file 0)')\" = n/a ] && [ \"\$(cat '$(qos_file 2)')\" = n/a ]"
idle
stop
[ "$RC" = 0 ] || fail "SIGTERM: exit status $RC, expected 0"
is 0 0 || fail "cpu0 holds '$(cat "$(qos_file 0)")' after SIGTERM"
is 2 125 || fail "cpu2 holds '$(cat "$(qos_file 2)")' after SIGTERM, not 125"
grep -q "SIGTERM: releasing the limits" "$TMP/log" ||
	fail "the log does not say why it exits"
[ -e "$SOCK" ] && fail "the socket stayed after exit"

# A limit in microseconds is written as such; SIGINT ends it as well.
start --activity poll --cpu-lat-limit-us 20 --cpu-lat-timeout-ms 60000 \
	/dev/disk/by-id/nvme-FAKE_SERIAL0
bump nvme0n1
wait_for "the 20 us limit on cpu1" is 1 20
is 3 20 || fail "cpu3 holds '$(cat "$(qos_file 3)")', not 20"
kill -INT "$LPID"
wait "$LPID"
RC=$?
[ "$RC" = 0 ] || fail "SIGINT: exit status $RC, expected 0"
is 1 0 || fail "cpu1 holds '$(cat "$(qos_file 1)")' after SIGINT"

finish
