#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq qos-restore: its help and usage errors, and on a fake sysfs tree
# (NVQ_SYSFS_ROOT; the state file then lives inside the tree, never in
# /run) what it does with a dead process's limit and a live one's.
. "$(dirname "$0")/lib.sh"

# usage PATTERN ARGS...: exit 2, the problem and the usage line on stderr.
usage() {
	local pat=$1
	shift
	expect 2 "$pat" "$@" || return
	grep -q "^usage: nvq qos-restore " "$TMP/err" ||
		fail "nvq $*: no usage line on stderr"
	[ -s "$TMP/out" ] && fail "nvq $*: wrote to stdout on a usage error"
}

for h in "qos-restore --help" "qos-restore -h" "help qos-restore"; do
	if ok $h; then
		head -1 "$TMP/out" | grep -q "^usage: nvq qos-restore " ||
			fail "nvq $h: no usage line: $(head -1 "$TMP/out")"
		grep -q "SIGKILL" "$TMP/out" ||
			fail "nvq $h: does not say what it is for"
	fi
done
ok --help && grep -q "^  qos-restore " "$TMP/out" ||
	fail "nvq --help does not list qos-restore"

usage "unexpected argument 'x'" qos-restore x
usage "unknown option '-n'" qos-restore -n 1
usage "unknown output format 'binary'" qos-restore -o binary

root=$TMP/sys
export NVQ_SYSFS_ROOT=$root
for cpu in 0 1; do
	mkdir -p "$root/devices/system/cpu/cpu$cpu/power"
done
f0=$root/devices/system/cpu/cpu0/power/pm_qos_resume_latency_us
f1=$root/devices/system/cpu/cpu1/power/pm_qos_resume_latency_us
echo 250 >"$f0"
echo 40 >"$f1"

# Nothing recorded yet: success, and where the state file is.
if ok qos-restore; then
	grep -q "nothing to restore" "$TMP/out" ||
		fail "qos-restore with no state: $(cat "$TMP/out")"
fi
state=$(sed -n 's/^state file: //p' "$TMP/out")
case $state in
"$root"/*) ;;
*) fail "state file '$state' is not inside the fake tree" ;;
esac

# A process that died holding cpu0 at "n/a" (its pid is gone or, if
# reused, started at another time), and this shell holding cpu1 at 40.
sh -c 'exit 0' &
dead=$!
wait $dead
start=$(sed 's/.*) //' /proc/$$/stat | awk '{ print $20 }')
echo n/a >"$f0"
printf 'nvq-qos-state 1\norig 0 250\norig 1 0\nhold 0 %s 1 0\nhold 1 %s %s 40\n' \
	"$dead" "$$" "$start" >"$state"

if ok qos-restore; then
	grep -q "^cpu0: restored to 250 (pid $dead died holding 0 us" \
		"$TMP/out" || fail "cpu0 not reported restored: $(cat "$TMP/out")"
	grep -q "^cpu1: left alone: pid $$ runs and holds 40 us" "$TMP/out" ||
		fail "cpu1 not reported held: $(cat "$TMP/out")"
fi
[ "$(cat "$f0")" = 250 ] || fail "cpu0 holds '$(cat "$f0")', not 250"
[ "$(cat "$f1")" = 40 ] || fail "cpu1 holds '$(cat "$f1")', not 40"
grep -q "^hold 0 " "$state" && fail "the dead process's entry stayed"
grep -q "^hold 1 $$ " "$state" || fail "the live process's entry went"

# JSON: the live one still listed, nothing left to restore.
if ok qos-restore -o json; then
	need_python
	python3 - "$TMP/out" "$$" <<'PY' || fail "qos-restore -o json: $(cat "$TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["restored"] == [], d
assert d["held"] == [{"cpu": 1, "pid": int(sys.argv[2]), "limit_us": 40,
		      "value": "40"}], d
assert d["state_file"].endswith(".state"), d
PY
fi

finish
