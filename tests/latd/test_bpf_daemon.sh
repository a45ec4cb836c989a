#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq-latd --activity bpf on this host's kernel: a fixture tree that
# describes the real root disk (its real device number, so the BPF program
# sees its requests) with fake PM QoS files; read-only O_DIRECT reads from
# CPU 0 (of a file on it, or the disk itself) must put the limit on CPU 0 and on the interrupt CPU of the
# hardware queue CPU 0 submits through (the fixture says: cpu1), and
# SIGTERM must put the files back. Skips where BPF cannot be used.
. "$(dirname "$0")/daemon_lib.sh"

need_python
if [ "${NVQ_LATD_HAVE_BPF:-0}" != 1 ]; then
	echo "SKIP: nvq-latd built without BPF" >&2
	exit 77
fi
if ! command -v taskset >/dev/null || ! command -v dd >/dev/null; then
	echo "SKIP: taskset or dd not found" >&2
	exit 77
fi
bpf_real_disk

build_tree
# the fake twin: nvme0n1's layout, the real device number
put "$S/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/dev" "$devno"

"$LATD" --sysfs-root "$S" --procfs-root "$P" --dev-root "$D" \
	--socket "$SOCK" --activity bpf --cpu-lat-limit-us 0 \
	--cpu-lat-timeout-ms 60000 nvme0n1 >"$TMP/out" 2>"$TMP/log" &
LPID=$!
pids="$pids $LPID"
for i in $(seq 1 300); do
	answers && break
	if ! kill -0 "$LPID" 2>/dev/null; then
		wait "$LPID"
		echo "SKIP: nvq-latd --activity bpf: $(grep -m1 'BPF' "$TMP/log" || cat "$TMP/log")" >&2
		exit 77
	fi
	sleep 0.1
done
answers || fail "nvq-latd --activity bpf does not answer"
grep -q "activity: bpf (block:block_rq_issue)" "$TMP/log" ||
	fail "the log does not say the bpf source runs: $(cat "$TMP/log")"

# Before any I/O of ours: one queue per (disk, online CPU) exists already,
# idle and never applied (made when the disk was watched, not at its first
# event), so the first event costs what every later one does. The fixture
# says CPUs 0-3 are online; the BPF counters cover this host's possible
# CPUs: the queues are those of both.
ncpu=$(getconf _NPROCESSORS_CONF 2>/dev/null || echo 1)
"$LATD" status --json >"$TMP/before.json" || fail "status --json failed"
python3 - "$TMP/before.json" "$ncpu" <<'PY' || fail "queues before I/O: $(cat "$TMP/before.json")"
import json, sys
s = json.load(open(sys.argv[1]))
ncpu = int(sys.argv[2])
d = s["disks"][0]
want = list(range(min(4, ncpu)))
got = sorted(q["cpu"] for q in d["queues"])
# every CPU of both, once (other I/O on the disk may have activated some)
assert got == want, (got, want)
q0 = [q for q in d["queues"] if q["cpu"] == 0][0]
assert q0["cpus"] == "0-1", q0
PY

# Read-only reads from CPU 0 until its queue holds the limit.
reads() {
	taskset -c 0 dd if="$rfile" of=/dev/null bs=4k count=64 \
		iflag=direct 2>/dev/null
	is 0 n/a && is 1 n/a
}
wait_for "the limit on cpu0 and cpu1" reads

"$LATD" status --json >"$TMP/status.json" || fail "status --json failed"
python3 - "$TMP/status.json" "$TMP/before.json" <<'PY' || fail "status: $(cat "$TMP/status.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["bpf"] is True, s
d = s["disks"][0]
assert d["activity"] == "bpf", d
q = [x for x in d["queues"] if x["cpu"] == 0]
assert len(q) == 1, d["queues"]
# the first activation used the queue made in advance: no new ones
before = json.load(open(sys.argv[2]))["disks"][0]["queues"]
assert len(d["queues"]) == len(before), (d["queues"], before)
assert q[0]["cpus"] == "0-1" and q[0]["active"] is True, q
assert q[0]["held_us"] == 0 and q[0]["applies"] >= 1, q
PY

kill -TERM "$LPID"
wait "$LPID"
RC=$?
[ "$RC" = 0 ] || fail "SIGTERM: exit status $RC"
for c in 0 1 2 3; do
	is $c 0 || fail "cpu$c holds '$(cat "$(qos_file $c)")' after SIGTERM"
done
finish
