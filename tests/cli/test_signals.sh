#!/bin/bash
# SPDX-License-Identifier: MIT
# SIGINT and SIGTERM end nvq's I/O commands even when the device never
# answers (emu:lat=600s: every command takes ten minutes): exit status
# 128 + the signal (130, 143) and a message, instead of waiting for the
# device. The watchdog only catches a hang; the time it took is printed,
# never asserted (the machine may be loaded).
. "$(dirname "$0")/lib.sh"

WATCHDOG=20
STUCK="emu:lat=600s,size=16M"
head -c 65536 /dev/zero >"$TMP/in.bin"

# now_ms: monotonic enough for a printout
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# stop_stuck SIG READY ARGS...: start nvq ARGS, wait until the file READY
# exists (nvq got past bring-up; "-": a second passed), send SIG and
# expect the exit status 128 + SIG within the watchdog.
stop_stuck() {
	local sig=$1 ready=$2 pid rc want t0 t1 i
	shift 2
	want=$((128 + $(kill -l "$sig")))
	[ "$ready" = - ] || rm -f "$ready"
	"$NVQ" "$@" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		[ "$ready" = - ] && [ $i -ge 10 ] && break
		[ "$ready" != - ] && [ -e "$ready" ] && break
		sleep 0.1
	done
	# let the first commands reach the device
	sleep 0.5
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		fail "nvq $*: exited ($?) before SIG$sig was sent"
		show_output
		return
	fi
	t0=$(now_ms)
	kill -"$sig" "$pid"
	for ((i = 0; i < WATCHDOG * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid"
		fail "nvq $*: still running ${WATCHDOG}s after SIG$sig"
		show_output
		return
	fi
	wait "$pid"
	rc=$?
	t1=$(now_ms)
	echo "nvq $1 SIG$sig: exit $rc after $((t1 - t0)) ms"
	if [ "$rc" -ne "$want" ]; then
		fail "nvq $* stopped by SIG$sig: exit status $rc, expected $want"
		show_output
	elif ! grep -Eq "^nvq: interrupted by signal $((want - 128))( |$)" \
		"$TMP/err"; then
		fail "nvq $* stopped by SIG$sig: no 'interrupted' message"
		show_output
	fi
}

for sig in INT TERM; do
	stop_stuck "$sig" "$TMP/out.bin" read "$STUCK" -n 1 -c 16 \
		-d "$TMP/out.bin"
	stop_stuck "$sig" - write "$STUCK" -n 1 \
		-d "$TMP/in.bin"
	stop_stuck "$sig" - flush "$STUCK" -n 1
	stop_stuck "$sig" - write-zeroes "$STUCK" -n 1 -c 64
	stop_stuck "$sig" - trim "$STUCK" -n 1 -c 64
done
# The read's output holds nothing the device did not deliver.
if [ -s "$TMP/out.bin" ]; then
	fail "an interrupted read wrote $(stat -c %s "$TMP/out.bin") bytes"
fi

finish
