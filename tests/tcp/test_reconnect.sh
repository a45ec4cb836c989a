#!/bin/bash
# tcp-reconnect: the failure path of the TCP transport against Linux's
# nvmet in a QEMU guest (scripts/qemu/nvmet-target.sh). While nvq-perf
# writes and verifies:
#   - the target's port goes away (its subsystems unlinked: connections
#     break, new ones are refused) and comes back within ctrl_loss_tmo:
#     the controller reconnects, the I/O resumes and verifies
#   - the established connections are aborted (ss -K in the guest), the
#     port stays: the same
#   - the whole target freezes (QEMU stopped with SIGSTOP: connections
#     stay up, nothing answers) longer than KATO: the unanswered Keep
#     Alive resets the controller, which reconnects once it thaws; the I/O
#     resumes and verifies
#   - the port stays away longer than ctrl_loss_tmo: nvq-perf ends with
#     an error and a message, in bounded time (no hang)
# usage: test_reconnect.sh SRC_ROOT BUILD_ROOT (meson passes them)
. "$(dirname "$0")/lib.sh"

# perf_bg URI SECONDS: nvq-perf --verify randwrite in the background,
# bounded by timeout(1); its pid in $perf_pid, output in $TMP/perf.out.
perf_bg() {
	timeout -k 10 180 "$PERF" -d "$1" --rw randwrite --verify --bs 4k \
		--qd 8 --mode wait --size 16M --time "$2s" \
		>"$TMP/perf.out" 2>&1 &
	perf_pid=$!
}

# perf_wait: nvq-perf's exit status in $perf_rc.
perf_wait() {
	wait "$perf_pid"
	perf_rc=$?
	grep -E "iops|verify|recovery|reconnect|reset|error|nvq-perf:" \
		"$TMP/perf.out"
	return 0
}

# perf_recovered: exit 0, no bad block, and a reset (the reconnect) in
# the recovery counters.
perf_recovered() {
	local n resets
	[ "$perf_rc" = 0 ] || die "nvq-perf exit status $perf_rc"
	n=$(sed -n 's/.*verify *: \([0-9]*\) blocks checked, 0 bad.*/\1/p' \
		"$TMP/perf.out")
	[ -n "$n" ] && [ "$n" -gt 0 ] ||
		die "no 'N blocks checked, 0 bad' line"
	resets=$(sed -n 's/.*recovery *:.* resets=\([0-9]*\).*/\1/p' \
		"$TMP/perf.out")
	[ -n "$resets" ] && [ "$resets" -ge 1 ] ||
		die "the recovery line shows no reset (reconnect)"
	echo "info: $n blocks verified after $resets reset(s)"
}

# I/O runs for 3 s, the port is away for 4 s, ctrl_loss_tmo is 20 s.
port_flap() {
	perf_bg "$NVQ_TCP_URI_NVME,reconnect_delay=1,ctrl_loss_tmo=20" 15
	sleep 3
	ctl port-down || { kill "$perf_pid"; die "ctl port-down failed"; }
	sleep 4
	ctl port-up || { kill "$perf_pid"; die "ctl port-up failed"; }
	perf_wait
	perf_recovered
}
step "port down 4 s (< ctrl_loss_tmo 20 s) mid-I/O: reconnect, 0 bad blocks" \
	port_flap

kill_conns() {
	perf_bg "$NVQ_TCP_URI_FILE,reconnect_delay=1,ctrl_loss_tmo=20" 10
	sleep 3
	ctl kill-conns || { kill "$perf_pid"; die "ctl kill-conns failed"; }
	perf_wait
	perf_recovered
}
step "connections aborted mid-I/O (ss -K): reconnect, 0 bad blocks" \
	kill_conns

# Commands that never complete: the guest is frozen for 8 s with KATO
# 2 s; the keep-alive timeout must reset the controller (not the 30 s I/O
# timeout), and it reconnects after the target thaws.
freeze() {
	local qpid
	qpid=$(pgrep -f "^qemu-system-x86_64 .*$TDIR/console.log" | head -n 1)
	[ -n "$qpid" ] || die "no QEMU process for $TDIR"
	perf_bg "$NVQ_TCP_URI_FILE,kato=2,reconnect_delay=1,ctrl_loss_tmo=60" \
		20
	sleep 3
	kill -STOP "$qpid" || die "cannot stop QEMU"
	sleep 8
	kill -CONT "$qpid"
	perf_wait
	perf_recovered
}
step "target frozen 8 s (KATO 2 s): keep-alive resets, reconnect, 0 bad" \
	freeze

# The port stays away: past ctrl_loss_tmo (4 s) the controller is given
# up; nvq-perf must end (timeout(1) gives it 180 s) with a message.
port_lost() {
	local t0 took
	t0=$(date +%s)
	perf_bg "$NVQ_TCP_URI_NVME,reconnect_delay=1,ctrl_loss_tmo=4" 60
	sleep 3
	ctl port-down || { kill "$perf_pid"; die "ctl port-down failed"; }
	perf_wait
	took=$(($(date +%s) - t0))
	ctl port-up >/dev/null
	[ "$perf_rc" != 124 ] && [ "$perf_rc" != 137 ] ||
		die "nvq-perf hung: killed by timeout(1) after $took s"
	[ "$perf_rc" != 0 ] ||
		die "nvq-perf succeeded though the controller was lost"
	[ "$perf_rc" -lt 128 ] ||
		die "nvq-perf died of signal $((perf_rc - 128))"
	# The errors, and that the controller was given up (the recovery
	# line says "controller gone").
	grep -q "^nvq-perf: .*error" "$TMP/perf.out" ||
		die "no error message in nvq-perf's output"
	grep -Eqi "controller gone|controller failed|ctrl_loss_tmo" \
		"$TMP/perf.out" ||
		die "nvq-perf's output does not say the controller was lost"
	echo "info: nvq-perf exit status $perf_rc after $took s:" \
		"$(grep "^nvq-perf: .*error" "$TMP/perf.out" | head -n 1)"
}
step "port down past ctrl_loss_tmo (4 s): nvq-perf fails cleanly, no hang" \
	port_lost

# The target is usable again.
after() {
	"$NVQ" id-ctrl "$NVQ_TCP_URI_NVME" >/dev/null ||
		die "nvq id-ctrl failed after port-up"
}
step "the port back: a new connection works" after

finish
