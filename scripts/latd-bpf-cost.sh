#!/bin/sh
# SPDX-License-Identifier: MIT
# What nvq-latd's BPF activity source (tools/latd/bpf/latd.bpf.c on
# block:block_rq_issue) costs each I/O: read-only fio, O_DIRECT 4 KiB
# random reads, in alternating rounds without and with the program
# attached and the disk watched (test-latd-bpf --hold), per engine; then
# one round with kernel.bpf_stats_enabled=1 for the program's own
# nanoseconds per invocation (run_time_ns / run_cnt; the setting is
# restored on exit; the figure includes the two clock reads bpf_stats
# adds per invocation, which in a VM can be most of it). Prints each
# round, the medians, the ratio with / without, and the load average
# before and after. On a loaded machine single rounds vary far more than
# the program costs: only the medians of many rounds mean anything.
#
# fio runs with --readonly: it never writes. It reads /dev/$DISK when that
# opens read-only, else (sandboxes that deny opening the root disk) a large
# existing file on a filesystem on $DISK, which O_DIRECT reads from the
# disk just the same (plus the filesystem's direct I/O path).
#
# usage: scripts/latd-bpf-cost.sh [--help]
# environment:
#   BUILD    build tree with tests/latd/test-latd-bpf (default
#            build-latd-bench, a release tree, made if absent)
#   DISK     the disk (default vda)
#   TARGET   what fio reads (default: see above)
#   ROUNDS   rounds per mode and engine (default 5)
#   SECS     seconds per round (default 10)
#   ENGINES  engine:iodepth list (default "psync:1 io_uring:32")
# Needs root (BPF, bpf_stats_enabled), fio, bpftool, jq.
set -eu

case "${1:-}" in
-h | --help)
	sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'
	exit 0
	;;
"") ;;
*)
	echo "latd-bpf-cost.sh: unknown argument $1 (see --help)" >&2
	exit 2
	;;
esac

cd "$(dirname "$0")/.."
B=${BUILD:-build-latd-bench}
DISK=${DISK:-vda}
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-10}
ENGINES=${ENGINES:-psync:1 io_uring:32}
STATS=/proc/sys/kernel/bpf_stats_enabled

for p in fio bpftool jq; do
	command -v $p >/dev/null || {
		echo "latd-bpf-cost.sh: needs $p" >&2
		exit 1
	}
done
[ -e "/sys/block/$DISK/dev" ] || {
	echo "latd-bpf-cost.sh: no disk $DISK (/sys/block/$DISK)" >&2
	exit 1
}
if [ ! -f "$B/build.ninja" ]; then
	meson setup "$B" --buildtype=release >/dev/null
fi
ninja -C "$B" tests/latd/test-latd-bpf >/dev/null
HOLD=$B/tests/latd/test-latd-bpf

# Is $1 on a filesystem on $DISK (the disk or one of its partitions)?
on_disk() {
	d=$(stat -c '%Hd:%Ld' "$1" 2>/dev/null) || return 1
	readlink -f "/sys/dev/block/$d" | grep -q "/block/$DISK\(/\|$\)"
}

if [ -z "${TARGET:-}" ]; then
	if dd if="/dev/$DISK" of=/dev/null bs=4096 count=1 iflag=direct \
		2>/dev/null; then
		TARGET=/dev/$DISK
	else
		# the largest library file on the disk: old, never written
		TARGET=$(find /usr/lib /usr/lib64 -xdev -type f -size +50M \
			-name '*.so*' -printf '%s %p\n' 2>/dev/null |
			sort -rn | while read -r _ f; do
				if on_disk "$f"; then
					echo "$f"
					break
				fi
			done)
		[ -n "$TARGET" ] || {
			echo "latd-bpf-cost.sh: cannot open /dev/$DISK" \
				"read-only and found no large file on it;" \
				"set TARGET" >&2
			exit 1
		}
	fi
fi

tmp=$(mktemp -d)
old_stats=$(cat $STATS)
hold_pid=
cleanup() {
	if [ -n "$hold_pid" ]; then
		kill -TERM "$hold_pid" 2>/dev/null || true
		wait "$hold_pid" 2>/dev/null || true
	fi
	echo "$old_stats" >$STATS
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load() {
	cut -d' ' -f1-3 /proc/loadavg
}

hold_start() {
	"$HOLD" --hold "$DISK" $((SECS + 60)) >"$tmp/hold.log" 2>&1 &
	hold_pid=$!
	i=0
	until grep -q '^holding' "$tmp/hold.log"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$hold_pid" 2>/dev/null; then
			cat "$tmp/hold.log" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# sets $counted: the requests the program counted
hold_stop() {
	kill -TERM "$hold_pid"
	wait "$hold_pid" || true
	hold_pid=
	counted=$(sed -n 's/^requests counted: //p' "$tmp/hold.log")
}

# fio ENGINE DEPTH -> "iops clat_p50_us sys_cpu% total_ios"
run_fio() {
	fio --name=latd-bpf-cost --filename="$TARGET" --readonly \
		--direct=1 --invalidate=0 --rw=randread --bs=4k \
		--ioengine="$1" --iodepth="$2" --runtime="$SECS" \
		--time_based --output-format=json >"$tmp/fio.json"
	jq -r '.jobs[0] | "\(.read.iops) \(.read.clat_ns.percentile["50.000000"] / 1000) \(.sys_cpu) \(.read.total_ios)"' \
		"$tmp/fio.json"
}

# round N MODE: one fio run of $eng/$qd, the program attached if MODE is on
round() {
	n=-
	if [ "$2" = on ]; then
		hold_start
		res=$(run_fio "$eng" "$qd")
		hold_stop
		n=$counted
	else
		res=$(run_fio "$eng" "$qd")
	fi
	set -- "$1" "$2" $res
	echo "$3" >>"$tmp/$2"
	printf '%-6s %-4s %10.0f %9.1f %6.1f %10s\n' "$1" "$2" "$3" "$4" \
		"$5" "$n"
	# the program saw this round's I/O (fio's plus whatever else)
	if [ "$2" = on ] && [ "${n:-0}" -lt "$6" ]; then
		echo "latd-bpf-cost.sh: the program counted $n requests," \
			"fio issued $6" >&2
		exit 1
	fi
}

median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

if bpftool -j prog show name latd_rq_issue 2>/dev/null | grep -q '"id"'; then
	echo "note: another latd_rq_issue program is loaded (nvq-latd" \
		"running?); its cost is in both modes"
fi

echo "== nvq-latd BPF activity source cost, $(date -u '+%Y-%m-%d %H:%M UTC')," \
	"$(nproc) CPUs, $(uname -r)"
echo "fio: $TARGET, O_DIRECT 4 KiB randread, --readonly, $SECS s a round," \
	"$ROUNDS rounds a mode, off/on alternating"
echo "load average before: $(load)"

for e in $ENGINES; do
	eng=${e%%:*}
	qd=${e#*:}
	echo
	echo "-- $eng QD$qd"
	printf '%-6s %-4s %10s %9s %6s %10s\n' round mode IOPS p50_us sys% \
		counted
	: >"$tmp/off"
	: >"$tmp/on"
	run_fio "$eng" "$qd" >/dev/null # warm-up, not counted
	r=1
	while [ $r -le "$ROUNDS" ]; do
		# off on, on off, ...: a drift of the machine between the two
		# runs of a round does not favour one mode
		if [ $((r % 2)) = 1 ]; then
			round $r off
			round $r on
		else
			round $r on
			round $r off
		fi
		r=$((r + 1))
	done
	moff=$(median <"$tmp/off")
	mon=$(median <"$tmp/on")
	echo "median IOPS: off $moff, on $mon, on/off" \
		"$(echo "$mon $moff" | awk '{ printf "%.4f", $1 / $2 }')"
done

echo
echo "-- the program's own time (kernel.bpf_stats_enabled=1, one round" \
	"$(echo "$ENGINES" | cut -d' ' -f1))"
e=$(echo "$ENGINES" | cut -d' ' -f1)
prog_ids() {
	bpftool -j prog show name latd_rq_issue 2>/dev/null |
		jq -s -r '[.[] | if type == "array" then .[] else . end] |
			.[].id' | sort
}
prog_ids >"$tmp/ids0"
echo 1 >$STATS
hold_start
prog_ids >"$tmp/ids1"
# ours: the one the holder loaded (others may run, nvq-latd's own)
id=$(comm -13 "$tmp/ids0" "$tmp/ids1" | head -n 1)
[ -n "$id" ] || {
	echo "latd-bpf-cost.sh: cannot find the holder's program" >&2
	exit 1
}
run_fio "${e%%:*}" "${e#*:}" >/dev/null
bpftool -j prog show id "$id" | jq -r '
	"run_cnt \(.run_cnt) run_time_ns \(.run_time_ns): " +
	"\(.run_time_ns / .run_cnt | . * 10 | round / 10) ns per invocation"'
hold_stop
echo "$old_stats" >$STATS
echo
echo "load average after: $(load)"
