#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq-latd's command line: --help, --version, usage errors (exit 2 with the
# problem and the usage line), config errors (exit 1 with FILE:LINE),
# `status` without a daemon (exit 1), a second daemon on one socket, and
# --activity bpf in a build without BPF.
. "$(dirname "$0")/daemon_lib.sh"

# expect RC PATTERN ARGS...: nvq-latd ARGS exits RC, stderr matches.
expect() {
	local want=$1 pat=$2 rc
	shift 2
	"$LATD" "$@" >"$TMP/o" 2>"$TMP/e" </dev/null
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "nvq-latd $*: exit status $rc, expected $want"
		sed 's/^/    stderr: /' "$TMP/e" | head -5 >&2
		return 1
	fi
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$TMP/e"; then
		fail "nvq-latd $*: stderr does not match /$pat/: $(cat "$TMP/e")"
		return 1
	fi
	return 0
}

usage() {
	expect 2 "$@" || return
	grep -q "^usage: nvq-latd " "$TMP/e" ||
		fail "nvq-latd ${*:2}: no usage line on stderr"
}

for h in --help -h; do
	if expect 0 "" $h; then
		head -1 "$TMP/o" | grep -q "^usage: nvq-latd \[--config FILE\]" ||
			fail "nvq-latd $h: no usage line: $(head -1 "$TMP/o")"
		for word in --cpu-lat-limit-us --cpu-lat-timeout-ms --activity \
			--hysteresis --sysfs-root --procfs-root --dev-root --socket status; do
			grep -q -- "$word" "$TMP/o" || fail "nvq-latd $h lacks $word"
		done
	fi
done
expect 0 "" status --help && grep -q "^usage: nvq-latd status" "$TMP/o" ||
	fail "nvq-latd status --help: $(cat "$TMP/o")"
expect 0 "" --version && grep -Eq '^nvq-latd [0-9]+\.[0-9]+' "$TMP/o" ||
	fail "nvq-latd --version: $(cat "$TMP/o")"

usage "bad cpu_lat_limit_us \"5x\"" --cpu-lat-limit-us 5x nvme0n1
usage "bad cpu_lat_limit_us" --cpu-lat-limit-us 1000001 nvme0n1
usage "bad cpu_lat_timeout_ms \"0\"" --cpu-lat-timeout-ms 0 nvme0n1
usage "bad activity \"ebpf\"" --activity ebpf nvme0n1
usage "bad hysteresis \"maybe\": use on or off" --hysteresis maybe nvme0n1
usage "option '--hysteresis' needs a value" nvme0n1 --hysteresis
usage "unknown option '--frobnicate'" --frobnicate nvme0n1
usage "option '--config' needs a value" nvme0n1 --config
usage "bad --rescan-ms" --rescan-ms 1 nvme0n1
usage "status: unexpected argument 'x'" status x
usage "unknown option '--xml'" status --xml

build_tree
ROOTS="--sysfs-root $S --procfs-root $P --dev-root $D --socket $SOCK"
expect 2 "no disks to watch" $ROOTS
printf '[defaults]\nactivity = poll\n\n[nvme0n1]\ncpu_lat_limit_us = 0\ncpu_lat_timeout = 3\n' \
	>"$TMP/bad.conf"
expect 1 "bad.conf:6: unknown key \"cpu_lat_timeout\"" $ROOTS --config "$TMP/bad.conf"
expect 1 "nosuch.conf: No such file" $ROOTS --config "$TMP/nosuch.conf" nvme0n1
printf '[/etc/passwd]\n' >"$TMP/path.conf"
expect 1 "path.conf:1: \[/etc/passwd\]: /etc/passwd: not a disk name or a path under /dev" \
	$ROOTS --config "$TMP/path.conf"

expect 1 "no nvq-latd answers at $SOCK" status
expect 1 "no nvq-latd answers at $SOCK" status --json

# a second daemon on the same socket
start --activity poll nvme0n1
expect 1 "another nvq-latd answers at $SOCK" $ROOTS --activity poll nvme1n1
expect 0 "" status
stop

# a disk that is not there: said, and waited for
start --activity poll nvme7n1
grep -q "nvme7n1: no such disk" "$TMP/log" ||
	fail "a missing disk is not reported: $(cat "$TMP/log")"
stop
[ "$RC" = 0 ] || fail "exit status $RC with a missing disk"

if [ "${NVQ_LATD_HAVE_BPF:-}" = 0 ]; then
	expect 1 "nvme0n1: activity bpf, but BPF cannot be used: built without BPF" \
		$ROOTS --activity bpf nvme0n1
	# auto falls back to polling and says why
	start nvme0n1
	grep -q "activity: poll, BPF is unavailable (built without BPF" "$TMP/log" ||
		fail "auto does not say why it polls: $(cat "$TMP/log")"
	stop
fi
finish
