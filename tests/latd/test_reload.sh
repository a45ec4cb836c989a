#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq-latd --config: the file's settings per disk, SIGHUP re-reads it (an
# active disk switches to the new limit at once, a disk added to the file
# is watched, one removed is released), and a bad file on reload keeps
# the old settings and says why.
. "$(dirname "$0")/daemon_lib.sh"

need_python
build_tree
CONF=$TMP/nvq-latd.conf

cat >"$CONF" <<'CONF'
# the test's config
[defaults]
cpu_lat_timeout_ms = 60000
activity = poll

[nvme0n1]
cpu_lat_limit_us = 20
CONF

start --config "$CONF"
grep -q "watching nvme0n1 (259:0, nvme; from \[nvme0n1\]): limit 20 us, timeout 60000 ms, activity poll" "$TMP/log" ||
	fail "the log does not show the config's settings: $(cat "$TMP/log")"
bump nvme0n1
wait_for "the config's 20 us on cpu1" is 1 20
is 3 20 || fail "cpu3 holds '$(cat "$(qos_file 3)")', not 20"

# field FIELD: print disk nvme0n1's FIELD (or the top level's) from status
field() {
	"$LATD" status --json >"$TMP/status.json" || return 1
	python3 - "$TMP/status.json" "$@" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
if sys.argv[2] == "disks":
    print(",".join(sorted(d["name"] for d in s["disks"])))
elif sys.argv[2] in s:
    print(s[sys.argv[2]])
else:
    print([d for d in s["disks"] if d["name"] == "nvme0n1"][0][sys.argv[2]])
PY
}

# A new limit for the active disk, and a second disk.
cat >"$CONF" <<'CONF'
[defaults]
cpu_lat_timeout_ms = 60000
activity = poll
[nvme0n1]
cpu_lat_limit_us = 30
[nvme1n1]
cpu_lat_limit_us = 0
CONF
kill -HUP "$LPID"
wait_for "the reloaded 30 us on cpu1" is 1 30
is 3 30 || fail "cpu3 holds '$(cat "$(qos_file 3)")' after the reload, not 30"
disks_are() {
	[ "$(field disks 2>/dev/null)" = "$1" ]
}
failures_are() {
	[ "$(field reload_failures 2>/dev/null)" = "$1" ]
}
wait_for "nvme1n1 in the status" disks_are nvme0n1,nvme1n1
[ "$(field cpu_lat_limit_us)" = 30 ] || fail "status: limit $(field cpu_lat_limit_us), not 30"
grep -q "reloaded $CONF: watching 2 disks" "$TMP/log" ||
	fail "the log does not say it reloaded"

# Bad files: each keeps the old settings, the limit stays as it is.
n=0
for bad in "cpu_lat_limit_us = 5\n" \
	"[nvme0n1]\ncpu_lat_limit_us = 5\ncpu_lat_timout_ms = 5\n" \
	"[nvme0n1]\ncpu_lat_limit_us = fast\n" \
	"[nvme0n1]\n[nvme1n1]\n[/dev/../etc/passwd]\n"; do
	printf "$bad" >"$CONF"
	n=$((n + 1))
	kill -HUP "$LPID"
	wait_for "reload failure $n" failures_are $n
done
for pat in "nvq-latd.conf:1: cpu_lat_limit_us outside a section" \
	"nvq-latd.conf:3: unknown key \"cpu_lat_timout_ms\"" \
	"nvq-latd.conf:2: bad cpu_lat_limit_us \"fast\"" \
	"nvq-latd.conf:3: \[/dev/../etc/passwd\]: /dev/../etc/passwd: "; do
	grep -Eq "reload: .*($pat).*; keeping the previous settings" "$TMP/log" ||
		fail "the log lacks /$pat/"
done
grep -q "keeping the previous settings" "$TMP/log" || fail "no failed reload logged"
[ "$(grep -c 'keeping the previous settings' "$TMP/log")" = 4 ] ||
	fail "not 4 failed reloads in the log: $(grep reload "$TMP/log")"
is 1 30 || fail "cpu1 holds '$(cat "$(qos_file 1)")' after bad reloads, not 30"
[ "$(field cpu_lat_limit_us)" = 30 ] || fail "bad reload changed the limit"
[ "$(field disks)" = nvme0n1,nvme1n1 ] || fail "bad reload changed the disks"
field last_reload | grep -q "previous settings kept" ||
	fail "status last_reload: $(field last_reload)"

# A good file without nvme0n1: it is released and no longer watched.
printf '[nvme1n1]\nactivity = poll\n' >"$CONF"
kill -HUP "$LPID"
wait_for "cpu1's release" is 1 0
is 3 0 || fail "cpu3 holds '$(cat "$(qos_file 3)")' after nvme0n1 left the config"
[ "$(field disks)" = nvme1n1 ] || fail "status lists $(field disks), not nvme1n1"

stop
[ "$RC" = 0 ] || fail "exit status $RC after SIGTERM"
finish
