# shellcheck shell=bash
# Shared by the tcp suite's tests (sourced by bash with SRC_ROOT and
# BUILD_ROOT as $1 and $2): boots the nvmet target of
# scripts/qemu/nvmet-target.sh for this test alone, evals its NVQ_TCP_*
# assignments, stops it on exit, and offers the step helpers. The nvq
# programs under test are the build's own (sanitizers and all): every
# byte they parse comes from the Linux target through QEMU's forwarded
# port.
#
# Output: one "ok - NAME" or "not ok - NAME" line per step (a failed
# step's output follows, indented); finish exits 1 when any step failed.
set -u

SRC=$(cd "${1:?usage: $0 SRC_ROOT BUILD_ROOT}" && pwd)
BUILD=$(cd "${2:?usage: $0 SRC_ROOT BUILD_ROOT}" && pwd)
NVQ=$BUILD/tools/nvq
PERF=$BUILD/tools/perf/nvq-perf
TARGET=$SRC/scripts/qemu/nvmet-target.sh
# shellcheck disable=SC2034 # used by the tests that source this
NQN=nqn.2026-12.io.nvq
TEST=$(basename "$0" .sh)
TDIR=$BUILD/tcp-target/${TEST#test_}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nvq-tcp.XXXXXX") || exit 1
fails=0
steps=0

cleanup() {
	"$TARGET" stop "$TDIR" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for p in "$NVQ" "$PERF"; do
	[ -x "$p" ] || { echo "Bail out! $p is not built"; exit 1; }
done

# ctl ARGS...: nvmet-target.sh ctl (output and status of the guest's).
ctl() {
	"$TARGET" ctl "$TDIR" "$@"
}

# step NAME CMD...: run CMD (a function, usually) in a subshell, its
# output in a file; print the TAP-like line, and the output on failure.
# Lines the step prints starting with "info:" show on success too.
step() {
	local name=$1 rc
	shift
	steps=$((steps + 1))
	("$@") >"$TMP/step.log" 2>&1
	rc=$?
	# The guest's QEMU itself died (seen once under host load: libslirp's
	# "soread: Assertion `buf_len != 0' failed", a QEMU bug no TCP peer
	# may cause): boot it again and run the step once more, saying so.
	local old=$NVQ_TCP_PORT a args=()
	if [ $rc != 0 ] && [ "$revived" -lt 2 ] && target_revive; then
		for a in "$@"; do
			args+=("${a//127.0.0.1:$old,/127.0.0.1:$NVQ_TCP_PORT,}")
		done
		echo "# $name: the target's QEMU had died ($why);" \
			"booted it again and ran the step once more"
		("${args[@]}") >"$TMP/step.log" 2>&1
		rc=$?
	fi
	if [ $rc = 0 ]; then
		echo "ok - $name"
		sed -n 's/^info: /#   /p' "$TMP/step.log"
	else
		echo "not ok - $name (status $rc)"
		tail -n 60 "$TMP/step.log" | sed 's/^/#   /'
		fails=$((fails + 1))
	fi
}

# target_revive: when the guest's QEMU is no longer running, say why
# (in $why) and boot the target again with new ports (the NVQ_TCP_*
# variables change). 1 while it runs or when it does not come up.
revived=0
target_revive() {
	local out
	pgrep -f "^qemu-system-x86_64 .*$TDIR/console.log" >/dev/null &&
		return 1
	why=$(grep -h -m1 -iE "assert|abort|panic|oops" "$TDIR/run.log" \
		"$TDIR/console.log" 2>/dev/null | head -n 1)
	"$TARGET" stop "$TDIR" >/dev/null 2>&1
	out=$(NVQ_TARGET_OWNER=$$ "$TARGET" start "$TDIR") || return 1
	eval "$out"
	revived=$((revived + 1))
}

# die MSG: the step (a subshell) fails with MSG.
die() {
	echo "$*"
	exit 1
}

finish() {
	echo "# $TEST: $((steps - fails)) of $steps steps passed" \
		"(host load $(cut -d' ' -f1-3 /proc/loadavg))"
	[ $fails = 0 ]
	exit $?
}

# Boot the target; 77 (skip) with its reason when QEMU or the kernel
# lacks something.
start_out=$(NVQ_TARGET_OWNER=$$ "$TARGET" start "$TDIR")
rc=$?
if [ $rc = 77 ]; then
	echo "$start_out"
	exit 77
fi
if [ $rc != 0 ]; then
	echo "Bail out! the nvmet target did not start (status $rc)"
	exit 1
fi
eval "$start_out"
echo "# target: $NVQ_TCP_DISC (nvmet in a QEMU guest, console in" \
	"$TDIR/console.log)"
