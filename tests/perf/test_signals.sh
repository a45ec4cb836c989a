#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf and a device that stops answering (emu:lat=...: every command
# takes that long): SIGINT and SIGTERM end a run promptly in every mode
# with exit status 128 + the signal (130, 143), --time is honoured, and
# the I/O still in flight is reported (text and JSON) instead of waited
# for. The watchdogs only catch a hang; times are printed, not asserted
# (the machine may be loaded).
PERF=${1:?usage: test_signals.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
WATCHDOG=20

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# wait_exit PID SECONDS: wait for PID, killing it after SECONDS; sets rc
# (999 when the watchdog had to kill it)
wait_exit() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt $(($2 * 20)) ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1"
		wait "$1"
		rc=999
		return
	fi
	wait "$1"
	rc=$?
}

# check_stuck FILE.json: the run reports I/O still in flight
check_stuck() {
	python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
s = j["nvq"]["stuck"]
assert s["ios"] > 0, s
assert s["oldest_age_ns"] > 0, s
r = j["recovery"]
for k in ("timeouts", "lost_interrupts", "aborts", "resets", "retries",
          "failed", "bad_cqes", "gone", "io_timeout_ms", "admin_timeout_ms"):
    assert k in r, k
PY
}

for mode in poll wait thread; do
	for sig in INT TERM; do
		case $sig in
		INT) want=130 ;;
		TERM) want=143 ;;
		esac
		"$PERF" -d emu:lat=600s,size=16M --mode $mode --qd 4 --time 1h \
			--json >"$dir/out.json" 2>"$dir/err" &
		pid=$!
		sleep 1
		t0=$(now_ms)
		kill -$sig $pid
		wait_exit $pid $WATCHDOG
		t1=$(now_ms)
		echo "nvq-perf --mode $mode SIG$sig: exit $rc after $((t1 - t0)) ms"
		if [ $rc -ne $want ]; then
			echo "FAIL: --mode $mode SIG$sig: exit $rc, expected $want" >&2
			cat "$dir/err" >&2
			fail=1
		elif ! check_stuck "$dir/out.json"; then
			echo "FAIL: --mode $mode SIG$sig: stuck I/O not reported" >&2
			fail=1
		fi
	done
done

# --time on a device that answers every 20 s: the run ends after about
# --time (the watchdog is below the 20 s a wait for the device would take).
t0=$(now_ms)
"$PERF" -d emu:lat=20s,size=16M --qd 8 --time 2s >"$dir/out.txt" \
	2>"$dir/err" &
wait_exit $! 15
t1=$(now_ms)
echo "nvq-perf --time 2s on lat=20s: exit $rc after $((t1 - t0)) ms"
if [ $rc -ne 0 ]; then
	echo "FAIL: --time 2s on lat=20s: exit $rc" >&2
	cat "$dir/err" >&2
	fail=1
elif ! grep -Eq "stuck +: 8 I/Os still in flight" "$dir/out.txt"; then
	echo "FAIL: --time 2s on lat=20s: the report lacks the stuck I/O" >&2
	cat "$dir/out.txt" >&2
	fail=1
elif ! grep -q "recovery     : timeouts=" "$dir/out.txt"; then
	echo "FAIL: the report lacks the recovery line" >&2
	fail=1
fi
"$PERF" -d emu:lat=20s,size=16M --qd 8 --time 2s --json \
	--io-timeout-ms 600000 >"$dir/out.json" 2>"$dir/err" &
wait_exit $! 15
if [ $rc -ne 0 ] || ! check_stuck "$dir/out.json"; then
	echo "FAIL: --time 2s --json on lat=20s: exit $rc or no stuck I/O" >&2
	cat "$dir/err" >&2
	fail=1
elif ! python3 - "$dir/out.json" <<'PY'; then
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["recovery"]["io_timeout_ms"] == 600000, j["recovery"]
assert j["job options"]["io_timeout_ms"] == "600000"
PY
	echo "FAIL: --io-timeout-ms is not in the JSON" >&2
	fail=1
fi
exit $fail
