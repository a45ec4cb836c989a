#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq-latd's re-discovery (--rescan-ms): an interrupt moved to another CPU
# moves the held limit with it, a disk that goes away is released and
# dropped, and one that appears and matches a glob is watched.
. "$(dirname "$0")/daemon_lib.sh"

need_python
build_tree
start --activity poll --cpu-lat-limit-us 0 --cpu-lat-timeout-ms 60000 \
	--rescan-ms 100 'nvme*'
grep -q "watching nvme1n1" "$TMP/log" || fail "the glob did not match nvme1n1"

disks() {
	"$LATD" status --json | python3 -c '
import json, sys
print(",".join(sorted(d["name"] for d in json.load(sys.stdin)["disks"])))'
}

bump nvme0n1
wait_for "the limit on cpu1" is 1 n/a
is 3 n/a || fail "cpu3 holds '$(cat "$(qos_file 3)")', not n/a"
is 0 0 || fail "cpu0 holds '$(cat "$(qos_file 0)")' before the move"

# nvme0q1's interrupt moves from cpu1 to cpu0
put "$P/irq/40/effective_affinity_list" 0
wait_for "the limit to follow the interrupt to cpu0" is 0 n/a
wait_for "cpu1's release" is 1 0
is 3 n/a || fail "cpu3 holds '$(cat "$(qos_file 3)")' after the move"
grep -q "nvme0n1: interrupt CPUs 1,3 -> 0,3" "$TMP/log" ||
	fail "the log does not show the move"

# nvme1n1 goes away (hot unplug); nvme2n1 appears
rm -f "$S/block/nvme1n1" "$S/class/block/nvme1n1"
disks_are() {
	[ "$(disks 2>/dev/null)" = "$1" ]
}
wait_for "nvme1n1 to be dropped" disks_are nvme0n1
nvme_disk 0000:00:06.0 2 nvme2n1 259:2 60 2 2
wait_for "nvme2n1 to be watched" disks_are nvme0n1,nvme2n1
bump nvme2n1
wait_for "nvme2n1's limit on cpu2" is 2 n/a

stop
[ "$RC" = 0 ] || fail "exit status $RC after SIGTERM"
for c in 0 1 2 3; do
	is $c 0 || fail "cpu$c holds '$(cat "$(qos_file $c)")' after SIGTERM"
done
finish
