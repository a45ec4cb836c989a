#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq-latd --activity bpf watching two disks at once, on this host's
# kernel: a fixture tree with nvme0n1 as the real root disk's twin (its
# device number, so the BPF program sees its requests) and nvme1n1 on a
# device number nothing uses, with different interrupt CPUs (nvme0n1's
# queues: cpu1 and cpu3; nvme1n1's: cpu0 and cpu2). Both get a BPF slot
# and their queues before any I/O; read-only O_DIRECT reads from CPU 0
# activate nvme0n1 only - the limit on CPU 0 and its queue's interrupt
# CPU 1 - while nvme1n1 never applies anything; then nvme0n1 leaves the
# config (SIGHUP) and nvme1n1 stays watched, untouched. Skips where BPF
# cannot be used.
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
put "$S/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/dev" "$devno"
# a device number no disk has (major 259, the last minor)
put "$S/devices/pci0000:00/0000:00:05.0/nvme/nvme1/nvme1n1/dev" "259:1048575"

cat >"$TMP/latd.conf" <<EOF
[defaults]
cpu_lat_limit_us = 0
cpu_lat_timeout_ms = 60000
activity = bpf
[nvme0n1]
[nvme1n1]
EOF

"$LATD" --sysfs-root "$S" --procfs-root "$P" --dev-root "$D" \
	--socket "$SOCK" --config "$TMP/latd.conf" >"$TMP/out" 2>"$TMP/log" &
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

# status_py NAME: run the Python checks on stdin against a fresh status
# --json (as s, and d: disk name -> its entry); NAME for the message.
status_py() {
	"$LATD" status --json >"$TMP/status.json" || {
		fail "$1: status --json failed"
		return
	}
	python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
d = {x['name']: x for x in s['disks']}
$(cat)
" "$TMP/status.json" || fail "$1: $(cat "$TMP/status.json")"
}

# Before any I/O: both watched by BPF, every online CPU's queue made
# (the fixture's CPUs 0-3 that this host's BPF counters cover), none
# applied.
ncpu=$(getconf _NPROCESSORS_CONF 2>/dev/null || echo 1)
status_py "before I/O" <<PY
assert s["bpf"] is True, s
assert sorted(d) == ["nvme0n1", "nvme1n1"], d
for name, x in d.items():
    assert x["activity"] == "bpf", x
    cpus = sorted(q["cpu"] for q in x["queues"])
    assert cpus == list(range(min(4, $ncpu))), (name, cpus)
assert all(q["applies"] == 0 for q in d["nvme1n1"]["queues"]), d["nvme1n1"]
PY

# Reads from CPU 0 until nvme0n1's limit is on CPU 0 and CPU 1.
reads() {
	taskset -c 0 dd if="$rfile" of=/dev/null bs=4k count=64 \
		iflag=direct 2>/dev/null
	is 0 n/a && is 1 n/a
}
wait_for "nvme0n1's limit on cpu0 and cpu1" reads
# (cpu2 and cpu3 are not checked: where this host has them, other
# processes' I/O on the real disk may put nvme0n1's limit there)

status_py "after the reads" <<'PY'
a, b = d["nvme0n1"], d["nvme1n1"]
q0 = [q for q in a["queues"] if q["cpu"] == 0][0]
assert q0["active"] is True and q0["held_us"] == 0, q0
assert q0["cpus"] == "0-1" and q0["applies"] >= 1, q0
# the other disk's slot saw none of nvme0n1's requests
assert b["active"] is False and b["applied"] is None, b
assert b["applies"] == 0, b
assert all(q["applies"] == 0 and not q["active"] for q in b["queues"]), b
PY

# nvme0n1 leaves the config: its limit goes, its slot is freed; nvme1n1
# stays watched with its queues.
cat >"$TMP/latd.conf" <<EOF
[defaults]
cpu_lat_limit_us = 0
cpu_lat_timeout_ms = 60000
activity = bpf
[nvme1n1]
EOF
kill -HUP "$LPID"
wait_for "the release on cpu0 and cpu1" sh -c \
	"[ \"\$(cat '$(qos_file 0)')\" = 0 ] && [ \"\$(cat '$(qos_file 1)')\" = 0 ]"
taskset -c 0 dd if="$rfile" of=/dev/null bs=4k count=64 iflag=direct \
	2>/dev/null
status_py "after the reload" <<'PY'
assert sorted(d) == ["nvme1n1"], d
b = d["nvme1n1"]
assert b["activity"] == "bpf" and b["applies"] == 0, b
assert len(b["queues"]) >= 1, b
PY
for c in 0 1 2 3; do
	is $c 0 || fail "cpu$c holds '$(cat "$(qos_file $c)")' after nvme0n1 left"
done

kill -TERM "$LPID"
wait "$LPID"
RC=$?
[ "$RC" = 0 ] || fail "SIGTERM: exit status $RC"
for c in 0 1 2 3; do
	is $c 0 || fail "cpu$c holds '$(cat "$(qos_file $c)")' after SIGTERM"
done
finish
