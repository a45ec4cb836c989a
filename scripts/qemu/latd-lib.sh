# shellcheck shell=sh
# nvq-latd's measurement rounds, shared by scripts/latd-host.sh (sourced)
# and scripts/qemu/latd-guest.sh (pasted into the guest's script, so:
# POSIX sh that busybox runs, no bash).
#
# The caller sets:
#   DISK      the disk the daemon watches (vda, nvme0n1)
#   TARGET    what fio reads (/dev/DISK, or a file on it)
#   FIO_CPU   the CPU fio runs on (the submitting CPU)
#   LIMIT     --cpu-lat-limit-us, TMO --cpu-lat-timeout-ms, ACT --activity
#   SECS      fio's runtime per round
#   LATD      the nvq-latd binary ("" when it did not build)
#   WATCH     latd-watch, WAKE latd-wake (scripts/latd-*.c)
#   WORK      a scratch directory
# and calls latd_platform once, then latd_round R MODE per round (MODE:
# off, latd, latd-nohyst - the daemon with --hysteresis off - or spin). Everything is printed as lines for
# scripts/qemu/latd-table.py:
#   LATD-PLATFORM key=value ...
#   LATD-EXPECT mode=bpf|poll cpus=LIST why=...
#   LATD-ROUND r=R mode=MODE key=value ...
#   NVQ-JSON NAME / ... / NVQ-JSON-END  (fio's and the daemon's JSON)
# Never writes to a disk; PM QoS values the daemon left behind are put
# back (and reported) after each round.

LATD_CPU=/sys/devices/system/cpu

# latd_cpus LIST: "0, 1, 2" or "0-3,8" -> "0,1,2,3,8" (sorted, unique)
latd_cpus() {
	echo "$1" | tr ',' '\n' | while read -r x; do
		x=$(echo "$x" | tr -d ' ')
		case $x in
		'') ;;
		*-*)
			i=${x%-*}
			while [ "$i" -le "${x#*-}" ]; do
				echo "$i"
				i=$((i + 1))
			done
			;;
		*) echo "$x" ;;
		esac
	done | sort -n | uniq | tr '\n' ',' | sed 's/,$//'
}

# latd_union LIST LIST...: the union of canonical lists
latd_union() {
	latd_cpus "$(echo "$*" | tr ' ' ',')"
}

# latd_has LIST CPU: whether CPU is in LIST
latd_has() {
	case ",$1," in *",$2,"*) return 0 ;; esac
	return 1
}

# latd_mqdisk DISK: the disk whose mq/ holds DISK's queues (a native
# multipath head has none: its first path disk)
latd_mqdisk() {
	if [ -d "/sys/block/$1/mq" ]; then
		echo "$1"
	elif [ -d "/sys/block/$1/multipath" ]; then
		ls "/sys/block/$1/multipath" | head -n 1
	else
		echo "$1"
	fi
}

# latd_irq_name DISK HWQ: the /proc/interrupts name of a queue's vector
latd_irq_name() {
	dev=$(basename "$(readlink -f "/sys/block/$1/device")")
	case $dev in
	nvme*) echo "${dev}q$(($2 + 1))" ;; # nvmeXq0 is the admin queue
	virtio*) echo "$dev-req.$2" ;;
	*) echo "" ;;
	esac
}

# latd_irq_cpus NAME: the effective affinity of the vector named NAME
# ("" when it has none: a polled queue, or a name not found)
latd_irq_cpus() {
	[ -n "$1" ] || return 0
	irq=$(grep -E "[ ,]$1(,|\$)" /proc/interrupts | head -n 1 |
		sed 's/^ *\([0-9]*\):.*/\1/')
	[ -n "$irq" ] || return 0
	f=/proc/irq/$irq/effective_affinity_list
	[ -r "$f" ] || f=/proc/irq/$irq/smp_affinity_list
	latd_cpus "$(cat "$f")"
}

# latd_expect: LATD_EXPECT, the CPUs the limit must go on, for $ACT
# (and SPIN_CPU, the completion CPU):
# bpf - the submitting CPU and its hardware queue's interrupt CPUs (the
# daemon counts I/O per disk and issuing CPU); poll - every queue's
# interrupt CPUs and submitting CPUs (one counter per disk, so the
# submitter is unknown), online ones only.
latd_expect() {
	mq=$(latd_mqdisk "$DISK")
	online=$(latd_cpus "$(cat $LATD_CPU/online)")
	all=
	mine=$FIO_CPU
	LATD_IRQ_CPUS=
	why=
	for q in /sys/block/"$mq"/mq/*; do
		[ -d "$q" ] || continue
		n=$(basename "$q")
		qc=$(latd_cpus "$(cat "$q/cpu_list")")
		name=$(latd_irq_name "$mq" "$n")
		ic=$(latd_irq_cpus "$name")
		why="$why q$n:cpus=$qc:irq=${name:-?}@${ic:--}"
		all=$(latd_union "$all" "$qc" "$ic")
		if latd_has "$qc" "$FIO_CPU"; then
			mine=$(latd_union "$mine" "$ic")
			LATD_IRQ_CPUS=$(latd_union "$LATD_IRQ_CPUS" "$ic")
		fi
	done
	# The completion CPU, for the spinner: the first of the submitting
	# CPU's queue's interrupt CPUs (the submitting CPU where none).
	SPIN_CPU=${LATD_IRQ_CPUS%%,*}
	SPIN_CPU=${SPIN_CPU:-$FIO_CPU}
	if [ "$ACT" = poll ]; then
		LATD_EXPECT=$all
	else
		LATD_EXPECT=$mine
	fi
	# online only
	e=
	for c in $(echo "$LATD_EXPECT" | tr ',' ' '); do
		latd_has "$online" "$c" && e="$e $c"
	done
	LATD_EXPECT=$(latd_union "$e")
	echo "LATD-EXPECT mode=$ACT cpus=$LATD_EXPECT fio_cpu=$FIO_CPU" \
		"spin_cpu=$SPIN_CPU disk=$DISK mq=$mq why=\"$why\""
}

# latd_platform: the machine, cpuidle and what the limit can do here
latd_platform() {
	drv=$(cat $LATD_CPU/cpuidle/current_driver 2>/dev/null || echo none)
	gov=$(cat $LATD_CPU/cpuidle/current_governor 2>/dev/null ||
		cat $LATD_CPU/cpuidle/current_governor_ro 2>/dev/null ||
		echo none)
	states=$(ls -d $LATD_CPU/cpu0/cpuidle/state* 2>/dev/null |
		while read -r s; do
			printf '%s(%sus),' "$(cat "$s/name")" "$(cat "$s/latency")"
		done | sed 's/,$//')
	echo "LATD-PLATFORM kernel=$(uname -r) cpus=$(latd_cpus \
"$(cat $LATD_CPU/online)") cpuidle_driver=$drv governor=$gov" \
		"states=${states:-none} load=\"$(cut -d' ' -f1-3 /proc/loadavg)\""
	latd_expect
}

# latd_qos: every CPU's pm_qos_resume_latency_us, "N=V N=V ..."
latd_qos() {
	for f in $LATD_CPU/cpu[0-9]*/power/pm_qos_resume_latency_us; do
		c=${f#"$LATD_CPU"/cpu}
		printf '%s=%s ' "${c%%/*}" "$(cat "$f")"
	done
}

# latd_qos_restore SNAPSHOT: put back every value that differs from it;
# prints the CPUs it had to fix ("" when the daemon restored them all)
latd_qos_restore() {
	for kv in $1; do
		c=${kv%%=*}
		f=$LATD_CPU/cpu$c/power/pm_qos_resume_latency_us
		v=$(cat "$f")
		if [ "$v" != "${kv#*=}" ]; then
			echo "${kv#*=}" >"$f" 2>/dev/null
			printf '%s(%s) ' "$c" "$v"
		fi
	done
}

# latd_idle: idle residency, "cpuN:NAME=TIME_US ..." (empty: no states)
latd_idle() {
	for s in $LATD_CPU/cpu[0-9]*/cpuidle/state*; do
		[ -r "$s/time" ] || continue
		c=${s#"$LATD_CPU"/}
		printf '%s:%s=%s ' "${c%%/*}" "$(cat "$s/name")" "$(cat "$s/time")"
	done
}

# latd_ticks PID: the process's utime + stime in clock ticks
latd_ticks() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}

# latd_fio NAME WATCH_OUT BASELINE: one fio run under latd-watch (which samples
# the PM QoS files and fio's I/O, and lingers to see the release), fio's
# JSON between markers
latd_fio() {
	size=
	[ -b "$TARGET" ] || size="--size=$(($(wc -c <"$TARGET") / 4096 * 4096))"
	# Released within timeout + one period: linger well past that.
	linger=$((TMO * 4 + 500))
	echo "NVQ-JSON $1"
	# shellcheck disable=SC2086
	"$WATCH" -v -T -a "$linger" -b "$3" -o "$2" "$DISK" -- \
		fio --name=latd --filename="$TARGET" --readonly --rw=randread \
		--bs=4k --direct=1 --ioengine=psync --iodepth=1 $size --thread \
		--time_based --runtime="$SECS" --cpus_allowed="$FIO_CPU" \
		--output-format=json 2>&1 || echo "fio failed: $?"
	echo "NVQ-JSON-END"
}

# latd_ready PID: wait (10 s at most) for the daemon to answer status
latd_ready() {
	i=0
	while [ $i -lt 100 ]; do
		kill -0 "$1" 2>/dev/null || return 1
		"$LATD" status --json >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# latd_round R MODE
latd_round() {
	r=$1
	mode=$2
	tag="r=$r mode=$mode"
	q0=$(latd_qos)
	dpid=
	spid=
	drc=
	hyst=on
	[ "$mode" != latd-nohyst ] || hyst=off
	if [ "$mode" = latd ] || [ "$mode" = latd-nohyst ]; then
		if [ -z "$LATD" ]; then
			echo "LATD-ROUND $tag error=no-daemon"
			return 1
		fi
		"$LATD" --cpu-lat-limit-us "$LIMIT" --cpu-lat-timeout-ms "$TMO" \
			--activity "$ACT" --hysteresis $hyst "$DISK" \
			>"$WORK/latd-$r-$mode.log" 2>&1 &
		dpid=$!
		if ! latd_ready "$dpid"; then
			echo "LATD-ROUND $tag error=daemon-not-ready"
			sed 's/^/  latd: /' "$WORK/latd-$r-$mode.log"
			kill "$dpid" 2>/dev/null || true
			wait "$dpid" 2>/dev/null || true
			return 1
		fi
	fi
	if [ "$mode" = spin ]; then
		"$WAKE" --spin "$SPIN_CPU" &
		spid=$!
	fi
	sleep 0.3
	t0=
	idle_ticks=
	if [ -n "$dpid" ]; then
		# The daemon's own cost with nothing to do: one second
		# before fio (the disk may have other I/O on a host).
		t0=$(latd_ticks "$dpid")
		sleep 1
		t1=$(latd_ticks "$dpid")
		idle_ticks=$((t1 - t0))
		t0=$t1
	fi
	i0=$(latd_idle)
	if [ -n "$dpid" ]; then
		# The daemon's view half-way through fio's I/O (fio takes
		# seconds to start under TCG: wait for the disk to move).
		(
			st=/sys/block/$DISK/stat
			s0=$(cat "$st")
			i=0
			while [ "$(cat "$st")" = "$s0" ] && [ $i -lt 300 ]; do
				sleep 0.1
				i=$((i + 1))
			done
			sleep $((SECS / 2))
			echo "NVQ-JSON status-mid-$r-$mode"
			"$LATD" status --json 2>&1
			echo "NVQ-JSON-END"
		) >"$WORK/status-mid-$r-$mode.txt" &
		mpid=$!
	fi
	latd_fio "fio-$r-$mode" "$WORK/watch-$r-$mode.txt" "$q0"
	i1=$(latd_idle)
	cat "$WORK/watch-$r-$mode.txt"
	ticks=
	if [ -n "$dpid" ]; then
		wait "$mpid" || true # the mid-run status
		cat "$WORK/status-mid-$r-$mode.txt"
		echo "NVQ-JSON status-end-$r-$mode"
		"$LATD" status --json 2>&1
		echo "NVQ-JSON-END"
		t1=$(latd_ticks "$dpid")
		ticks=$((t1 - t0))
		kill -TERM "$dpid"
		drc=0
		wait "$dpid" || drc=$?
		# What the daemon said: the mode it ran, what it found, exit.
		sed 's/^/  latd: /' "$WORK/latd-$r-$mode.log"
	fi
	if [ -n "$spid" ]; then
		kill "$spid"
		wait "$spid" 2>/dev/null || true
	fi
	fixed=$(latd_qos_restore "$q0")
	echo "LATD-ROUND $tag daemon_ticks=${ticks:--}" \
		"daemon_idle_ticks=${idle_ticks:--}" \
		"clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)" \
		"daemon_rc=${drc:--} restored_by_script=\"${fixed:-}\"" \
		"expect=$LATD_EXPECT spin_cpu=${SPIN_CPU:--}" \
		"idle0=\"$i0\" idle1=\"$i1\""
	return 0
}
