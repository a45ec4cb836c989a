#!/bin/bash
# SIGINT/SIGTERM during a long read end it between chunks: exit status
# 128 + the signal (130, 143) and a message saying how far it got (rather
# than dying mid-command with the controller left running). No timing involved: the signal is sent while
# nvq is provably inside its copy loop, blocked writing to a FIFO that
# nobody reads.
. "$(dirname "$0")/lib.sh"

DEV="emu:file=$TMP/disk.img,size=16M"
mkfifo "$TMP/fifo" || { echo "SKIP: mkfifo failed" >&2; exit 77; }

# interrupt SIG ARGS...: run nvq ARGS with its data going to the FIFO,
# take one block from the FIFO, then send SIG
interrupt() {
	local sig=$1 pid rc want
	shift
	want=$((128 + $(kill -l "$sig")))
	"$NVQ" "$@" -d "$TMP/fifo" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	# read-write: the open cannot block, even if nvq died before its own
	exec 3<>"$TMP/fifo"
	if ! timeout 30 head -c 4096 <&3 >/dev/null; then
		fail "nvq $*: no data arrived in the FIFO"
		kill -KILL "$pid"
		wait "$pid"
		exec 3<&-
		show_output
		return
	fi
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	exec 3<&-
	if [ "$rc" -ne "$want" ]; then
		fail "nvq $* interrupted by SIG$sig: exit status $rc, expected $want"
		show_output
	elif ! grep -Eq "^nvq: interrupted by signal [0-9]+ after [0-9]+ of 4096 blocks$" \
		"$TMP/err"; then
		fail "nvq $* interrupted by SIG$sig: no message"
		show_output
	fi
}

interrupt INT read "$DEV" -n 1 -c 4096
interrupt TERM read "$DEV" -n 1 -c 4096

finish
