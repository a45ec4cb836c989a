#!/bin/bash
# SPDX-License-Identifier: MIT
# A SIGKILLed nvq-latd cannot restore anything; the QoS state file (in the
# fixture tree's .nvq-state, never /run) lets the next nvq-latd, or
# `nvq qos-restore`, put the files back.
. "$(dirname "$0")/daemon_lib.sh"

NVQ=${2:-}
build_tree
put "$(qos_file 3)" 77

crash() {
	start --activity poll --cpu-lat-limit-us 0 --cpu-lat-timeout-ms 60000 \
		nvme0n1
	bump nvme0n1
	wait_for "the limit on cpu1 and cpu3" sh -c \
		"[ \"\$(cat '$(qos_file 1)')\" = n/a ] && [ \"\$(cat '$(qos_file 3)')\" = n/a ]"
	kill -KILL "$LPID"
	wait "$LPID" 2>/dev/null
	is 1 n/a || fail "cpu1 holds '$(cat "$(qos_file 1)")' right after SIGKILL"
}

# 1. the next nvq-latd restores at start
crash
DEAD=$LPID
start --activity poll nvme0n1
is 1 0 || fail "cpu1 holds '$(cat "$(qos_file 1)")' after the restart"
is 3 77 || fail "cpu3 holds '$(cat "$(qos_file 3)")' after the restart, not 77"
grep -q "cpu1: restored to 0 (pid $DEAD died holding 0 us)" "$TMP/log" ||
	fail "the new daemon does not say what it restored: $(cat "$TMP/log")"
stop
[ "$RC" = 0 ] || fail "exit status $RC after SIGTERM"

# 2. nvq qos-restore does it while no daemon runs
if [ -n "$NVQ" ] && [ -x "$NVQ" ]; then
	crash
	NVQ_SYSFS_ROOT=$S "$NVQ" qos-restore >"$TMP/restore" 2>&1 ||
		fail "nvq qos-restore: $(cat "$TMP/restore")"
	is 1 0 || fail "cpu1 holds '$(cat "$(qos_file 1)")' after nvq qos-restore"
	is 3 77 || fail "cpu3 holds '$(cat "$(qos_file 3)")' after nvq qos-restore"
	grep -q "^cpu3: restored to 77" "$TMP/restore" ||
		fail "nvq qos-restore: $(cat "$TMP/restore")"
fi
finish
