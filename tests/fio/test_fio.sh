#!/bin/sh
# fio ioengine tests: Debian's fio binary loads the engine and runs jobs on
# the emulated controller. One behaviour group per case; usage:
#   test_fio.sh CASE
# Environment (set by meson): FIO, NVQ_FIO_ENGINE (empty when the engine
# was not built), NVQ_FIO_SKIP (why not), NVQ_FIO_PRELOAD (the sanitizer
# runtime, which must come first in an uninstrumented fio).
# Exit 0 pass, 1 fail, 77 skip (only when fio or its source is missing).
# Word splitting of $ENGINE, $VERIFY and $(queue_counts) is intended.
# shellcheck disable=SC2086,SC2046
set -u

case_name=${1:?usage: test_fio.sh CASE}

fail() {
	echo "FAIL [$case_name]: $*" >&2
	if [ -f "$tmp/out" ]; then
		echo "--- fio stdout (tail)" >&2
		tail -n 40 "$tmp/out" >&2
	fi
	if [ -f "$tmp/err" ]; then
		echo "--- fio stderr (tail)" >&2
		tail -n 40 "$tmp/err" >&2
	fi
	exit 1
}

if [ -z "${FIO:-}" ] || [ ! -x "$FIO" ]; then
	echo "SKIP: fio is not installed (apt-get install fio)"
	exit 77
fi
if [ -z "${NVQ_FIO_ENGINE:-}" ]; then
	echo "SKIP: the nvq fio engine was not built: ${NVQ_FIO_SKIP:-no fio source tree}"
	exit 77
fi
[ -f "$NVQ_FIO_ENGINE" ] || fail "engine $NVQ_FIO_ENGINE does not exist"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1

# fio's own leaks and races are not ours. The leak suppression matches the
# allocating frame only (malloc_context_size=2), so a leak that the engine
# allocates is still reported; the race suppressions name fio functions
# that race with fio's own threads (no engine code on those stacks).
printf 'leak:/usr/bin/fio\n' >"$tmp/lsan.supp"
printf 'race:options_free\nrace:fio_sem_remove\n' >"$tmp/tsan.supp"

# fio_exec ARGS...: become fio ARGS (in a subshell). $PRELOAD (if set) is
# preloaded after the sanitizer runtime.
fio_exec() {
	preload=${NVQ_FIO_PRELOAD:-}
	if [ -n "${PRELOAD:-}" ]; then
		preload="${preload:+$preload }$PRELOAD"
	fi
	if [ -n "$preload" ]; then
		LD_PRELOAD=$preload
		export LD_PRELOAD
	fi
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2"
	LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$tmp/lsan.supp"
	TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$tmp/tsan.supp"
	export ASAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS
	exec "$FIO" "$@"
}

# run_fio ARGS...: run fio; sets $rc, output in $tmp/out and $tmp/err.
run_fio() {
	(fio_exec "$@") >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# start_fio ARGS...: fio in the background, its pid in $fio_pid.
start_fio() {
	(fio_exec "$@") >"$tmp/out" 2>"$tmp/err" &
	fio_pid=$!
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# wait_fio SECONDS: wait for $fio_pid, killing it after SECONDS (a hang);
# sets $rc (999 when the watchdog had to kill it).
wait_fio() {
	i=0
	while kill -0 "$fio_pid" 2>/dev/null && [ $i -lt $(($1 * 20)) ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if kill -0 "$fio_pid" 2>/dev/null; then
		kill -KILL "$fio_pid"
		wait "$fio_pid"
		rc=999
		return
	fi
	wait "$fio_pid"
	rc=$?
}

# fake_sysfs: a pm_qos_resume_latency_us per CPU, all "0", under
# NVQ_SYSFS_ROOT; sysfs_values prints their distinct contents on a line.
fake_sysfs() {
	root=$tmp/sysfs
	ncpu=$(getconf _NPROCESSORS_CONF)
	cpu=0
	while [ "$cpu" -lt "$ncpu" ]; do
		mkdir -p "$root/devices/system/cpu/cpu$cpu/power"
		echo 0 >"$root/devices/system/cpu/cpu$cpu/power/pm_qos_resume_latency_us"
		cpu=$((cpu + 1))
	done
	NVQ_SYSFS_ROOT=$root
	export NVQ_SYSFS_ROOT
	unset NVQ_CPU_DMA_LATENCY
}
sysfs_values() {
	awk 1 "$tmp"/sysfs/devices/system/cpu/cpu*/power/pm_qos_resume_latency_us |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}

ENGINE="--ioengine=external:$NVQ_FIO_ENGINE"

# TSan cannot follow fio's job processes (fork of a threaded, uninstrumented
# program); process-mode cases run in the other builds.
case ${NVQ_FIO_PRELOAD:-} in
*tsan*) tsan=1 ;;
*) tsan=0 ;;
esac

# jcheck EXPR WHAT: evaluate a Python expression over fio's JSON output
# (j: the document, jobs: j["jobs"]); fail with WHAT when it is false.
jcheck() {
	python3 - "$tmp/out" "$1" <<'EOF' || fail "$2"
import json, sys
text = open(sys.argv[1]).read()
# Engine notes (log_info) may precede the JSON document.
start = text.find("\n{")
start = 0 if text.startswith("{") else start + 1
if start < 0 or not text[start:].lstrip().startswith("{"):
    print("no JSON in fio's output", file=sys.stderr)
    sys.exit(1)
j = json.JSONDecoder().raw_decode(text[start:])[0]
jobs = j["jobs"]
ok = eval("(" + sys.argv[2] + ")")
if not ok:
    for x in jobs:
        print("job %s: error=%s read=%s write=%s trim=%s sync=%s" % (
            x["jobname"], x["error"], x["read"]["io_bytes"],
            x["write"]["io_bytes"], x["trim"]["io_bytes"],
            x.get("sync", {}).get("total_ios")), file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# A verify run: exit 0, every job without error, something written, and
# everything written read back and checked (fio fails a job on any
# verification error, so error == 0 means zero verify errors).
VERIFY="--rw=randwrite --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=json"
verify_ok() {
	verify_ok_named $ENGINE "$@"
}
verify_ok_named() {
	run_fio --name=v --thread=1 $VERIFY "$@"
	[ "$rc" = 0 ] || fail "fio exit status $rc (args: $*)"
	! grep -q "verify:" "$tmp/err" || fail "verify errors reported (args: $*)"
	jcheck "len(jobs) >= 1 and all(x['error'] == 0 and
		x['write']['io_bytes'] > 0 and
		x['read']['io_bytes'] == x['write']['io_bytes'] for x in jobs)" \
		"a job failed or did not read back all it wrote (args: $*)"
}

# expect_error TEXT ARGS...: fio must fail and say TEXT.
expect_error() {
	want=$1
	shift
	run_fio --name=e --thread=1 $ENGINE --rw=randwrite --size=1M "$@"
	[ "$rc" != 0 ] || fail "fio succeeded, expected an error (args: $*)"
	grep -qF -- "$want" "$tmp/err" "$tmp/out" ||
		fail "fio's output lacks '$want' (args: $*)"
}

# The queue_stats line of job $1: "commands doorbells completions".
queue_counts() {
	n='\([0-9]*\)'
	sed -n "s/^nvq: $1: .* commands=$n doorbells=$n completions=$n.*/\1 \2 \3/p" \
		"$tmp/out" "$tmp/err" | head -n 1
}

case $case_name in
verify-4k-qd1)
	verify_ok --filename=emu.size=64M --bs=4k --iodepth=1 --size=4M
	;;
verify-4k-qd32)
	verify_ok --filename=emu.size=64M --bs=4k --iodepth=32 --size=32M
	# Batched submission and completion.
	verify_ok --filename=emu.size=64M --bs=4k --iodepth=32 --size=16M \
		--iodepth_batch_submit=8 --iodepth_batch_complete_min=4
	;;
verify-512)
	verify_ok --filename=emu.size=32M,lbads=9 --bs=512 --iodepth=1 \
		--size=1M
	verify_ok --filename=emu.size=32M,lbads=9 --bs=512 --iodepth=32 \
		--size=4M
	# Mixed sizes, all multiples of the 512-byte LBA.
	verify_ok --filename=emu.size=32M,lbads=9 --bsrange=512-64k \
		--iodepth=16 --size=8M
	;;
aliasing)
	# Files of one job on one namespace (uri= with nrfiles=2, or one
	# controller named twice in filename=) each get their own half of it:
	# both are written in full and verify, none overwrites the other.
	for files in "--uri=emu:size=16M --nrfiles=2" \
		"--filename=emu.size=16M:emu.size=16M"; do
		verify_ok $files --bs=4k --iodepth=8
		jcheck "jobs[0]['write']['io_bytes'] == 16 << 20" \
			"two files did not write the whole 16 MiB ($files)"
		grep -q "2 files share namespace 1 of emu:size=16M: .* is LBAs 2048..4095 (part 2 of 2)" \
			"$tmp/out" "$tmp/err" || fail "no region line ($files)"
	done
	# A file may not grow past its half.
	expect_error "exceed the 8388608 bytes of namespace 1" \
		--uri=emu:size=16M --nrfiles=2 --filesize=12M --size=24M
	;;
uri-nsid)
	# A /NSID suffix names the namespace (the grammar of nvq-perf -d):
	# two files on namespaces 1 and 2 of one controller are 16 MiB each,
	# not halves of one namespace.
	verify_ok --uri=emu:size=16M,ns=2/2 --bs=4k
	jcheck "jobs[0]['write']['io_bytes'] == 16 << 20" "uri= with /2"
	verify_ok "--filename=emu.size=16M,ns=2/1:emu.size=16M,ns=2/2" --bs=4k
	jcheck "jobs[0]['write']['io_bytes'] == 32 << 20" \
		"/1 and /2 did not write 16 MiB each"
	! grep -q "share namespace" "$tmp/out" "$tmp/err" ||
		fail "/1 and /2 were taken as one namespace"
	expect_error "nsid=1, but the file names namespace 2" \
		--uri=emu:size=16M,ns=2/2 --nsid=1
	expect_error "namespace 3 is not active" --filename=emu.size=16M,ns=2/3
	expect_error "bad namespace id '0'" --uri=emu:size=16M/0
	# malformed suffixes, in the library's words (nvq_uri_split_nsid)
	# (every form: tests/unit/test_uri.c, tests/cli/test_uri.sh)
	expect_error "bad namespace id 'x'" --uri=emu:/x
	# filename= too (the first ':' written '.')
	expect_error "bad namespace id '1/2'" --filename=emu./1/2
	;;
verify-split)
	# mdts=5: at most 128 KiB per command; 256 KiB requests take two.
	verify_ok --filename=emu.size=64M,mdts=5 --bs=256k --iodepth=32 \
		--size=32M --queue_stats=1
	set -- $(queue_counts v)
	[ $# = 3 ] || fail "no queue_stats line"
	# 128 writes and 128 verify reads, two commands each
	[ "$1" = 512 ] || fail "256k requests over a 128k MDTS: expected 512 commands, got $1"
	verify_ok --filename=emu.size=64M,mdts=5 --bs=1m --iodepth=1 --size=16M
	;;
verify-wait)
	verify_ok --filename=emu.size=64M --mode=wait --bs=4k --iodepth=32 \
		--size=16M
	verify_ok --filename=emu.size=64M --mode=wait --bs=4k --iodepth=1 \
		--size=2M
	;;
verify-fork)
	if [ "$tsan" = 1 ]; then
		echo "SKIP: process mode under ThreadSanitizer"
		exit 77
	fi
	# Process mode: each job process opens the controller itself.
	run_fio --name=f --thread=0 $ENGINE $VERIFY --filename=emu.size=64M \
		--bs=4k --iodepth=32 --size=16M
	[ "$rc" = 0 ] || fail "fio exit status $rc in process mode"
	jcheck "jobs[0]['error'] == 0 and
		jobs[0]['read']['io_bytes'] == jobs[0]['write']['io_bytes'] > 0" \
		"process-mode verify run failed"
	;;
jobs2)
	# Two threads share one controller, one I/O queue each.
	verify_ok --uri=emu:size=64M --numjobs=2 --bs=4k --iodepth=32 \
		--size=32M --offset_increment=32M --queue_stats=1
	jcheck "len(jobs) == 2" "expected two jobs"
	grep -q "queue 1: commands" "$tmp/out" "$tmp/err" ||
		fail "no job on queue 1"
	grep -q "queue 2: commands" "$tmp/out" "$tmp/err" ||
		fail "no job on queue 2"
	! grep -q "(shared)" "$tmp/out" "$tmp/err" ||
		fail "a queue was shared although the controller had enough"
	;;
shared-queue)
	# Three jobs, two queues: two jobs submit and reap on one queue.
	for mode in poll wait; do
		verify_ok --uri=emu:size=64M --numjobs=3 --queues=2 \
			--mode=$mode --bs=4k --iodepth=16 --size=16M \
			--offset_increment=16M --queue_stats=1
		jcheck "len(jobs) == 3" "expected three jobs"
		grep -q "(shared)" "$tmp/out" "$tmp/err" ||
			fail "mode=$mode: no queue was shared with queues=2"
	done
	;;
persist)
	# In thread mode the controller outlives the job that opened it: a
	# later job reads back what an earlier one wrote...
	cat >"$tmp/persist.fio" <<EOF
[global]
thread=1
bs=4k
size=8M
iodepth=16
verify=crc32c

[write]
filename=emu.size=64M
rw=randwrite
do_verify=0

[check]
stonewall
filename=emu.size=64M
rw=randwrite
verify_only=1
EOF
	run_fio $ENGINE --output-format=json "$tmp/persist.fio"
	[ "$rc" = 0 ] || fail "verifying an earlier job's writes failed"
	jcheck "len(jobs) == 2 and jobs[1]['read']['io_bytes'] == 8 << 20" \
		"the check job did not read the data back"
	# ... and verification does look at the device's data: another device
	# (fresh, zeroed) fails it.
	sed 's/^filename=emu.size=64M$/filename=emu.size=64M,vwc=1/' \
		"$tmp/persist.fio" | awk '/^\[check\]/ { c = 1 }
		!c && /^filename/ { print "filename=emu.size=64M"; next }
		{ print }' >"$tmp/other.fio"
	run_fio $ENGINE "$tmp/other.fio"
	[ "$rc" != 0 ] || fail "verify passed on a device that was never written"
	grep -q "verify: bad magic header" "$tmp/err" "$tmp/out" ||
		fail "no verify error on a device that was never written"
	[ "$tsan" = 1 ] && exit 0
	# A file-backed device keeps its data across job processes too.
	sed -e "s|^filename=.*|filename=emu.file=$tmp/disk.img,size=16M|" \
		-e 's/^thread=1/thread=0/' "$tmp/persist.fio" >"$tmp/file.fio"
	run_fio $ENGINE --output-format=json "$tmp/file.fio"
	[ "$rc" = 0 ] || fail "file-backed device: verify across processes failed"
	jcheck "len(jobs) == 2 and jobs[1]['read']['io_bytes'] == 8 << 20" \
		"file-backed device: the check job did not read the data back"
	;;
trim-flush)
	run_fio --name=t --thread=1 $ENGINE --filename=emu.size=64M \
		--rw=randtrim --bs=64k --size=16M --iodepth=8 \
		--output-format=json
	[ "$rc" = 0 ] || fail "randtrim: fio exit status $rc"
	jcheck "jobs[0]['error'] == 0 and jobs[0]['trim']['total_ios'] == 256" \
		"randtrim did not trim 256 blocks of 64k"
	# fsync=N and fdatasync=N become NVMe Flush commands.
	run_fio --name=s --thread=1 $ENGINE --filename=emu.size=64M \
		--rw=randwrite --bs=4k --size=4M --iodepth=8 --fsync=8 \
		--end_fsync=1 --output-format=json --queue_stats=1
	[ "$rc" = 0 ] || fail "fsync: fio exit status $rc"
	jcheck "jobs[0]['error'] == 0 and jobs[0]['sync']['total_ios'] >= 128" \
		"fsync=8 over 1024 writes did not issue 128 syncs"
	set -- $(queue_counts s)
	[ $# = 3 ] || fail "no queue_stats line"
	[ "$1" -ge $((1024 + 128)) ] ||
		fail "expected at least 1152 commands (writes + flushes), got $1"
	run_fio --name=d --thread=1 $ENGINE --filename=emu.size=64M \
		--rw=randrw --bs=4k --size=4M --iodepth=8 --fdatasync=4 \
		--output-format=json
	[ "$rc" = 0 ] || fail "fdatasync: fio exit status $rc"
	# fio counts fdatasyncs in the sync latency, not in total_ios.
	jcheck "jobs[0]['error'] == 0 and jobs[0]['sync']['lat_ns']['N'] > 0" \
		"fdatasync issued no syncs"
	;;
batching)
	# Without shadow doorbells every doorbell is an MMIO write: one per
	# commit, and fio commits every iodepth_batch_submit requests.
	run_fio --name=b --thread=1 $ENGINE --filename=emu.size=64M,dbbuf=0 \
		--rw=randread --bs=4k --size=16M --iodepth=32 \
		--iodepth_batch_submit=1 --queue_stats=1
	[ "$rc" = 0 ] || fail "fio exit status $rc"
	set -- $(queue_counts b)
	[ $# = 3 ] || fail "no queue_stats line"
	if [ "$1" != 4096 ] || [ "$2" != 4096 ]; then
		fail "batch 1: expected 4096 commands and doorbells, got $1 and $2"
	fi
	run_fio --name=b --thread=1 $ENGINE --filename=emu.size=64M,dbbuf=0 \
		--rw=randread --bs=4k --size=16M --iodepth=32 \
		--iodepth_batch_submit=16 --iodepth_batch_complete_min=16 \
		--queue_stats=1
	[ "$rc" = 0 ] || fail "fio exit status $rc"
	set -- $(queue_counts b)
	[ $# = 3 ] || fail "no queue_stats line"
	[ "$1" = 4096 ] || fail "batch 16: expected 4096 commands, got $1"
	[ "$2" -le 512 ] ||
		fail "batch 16: $2 doorbells for 4096 commands (want <= 512)"
	;;
errors)
	expect_error "filename 'bogus' names no usable nvq device" \
		--filename=bogus
	expect_error "unknown key" --filename=emu.bogus=1
	expect_error "cannot open controller 'vfio:0000:01:00.0'" \
		--filename=vfio.0000.01.00.0
	expect_error "cannot open controller 'vfio:0000:01:00.0'" \
		--filename=vfio.0000.01.00.0/2
	expect_error "cannot open controller 'nosuch:x'" --uri=nosuch:x
	expect_error "not multiples of the 4096-byte LBA" \
		--filename=emu.size=64M --bs=512
	expect_error "bytes of namespace 1 of emu:size=16M this file has" --filename=emu.size=16M --size=32M
	expect_error "namespace 7 is not active" --filename=emu.size=16M \
		--nsid=7
	expect_error "4-byte aligned" --filename=emu.size=16M,lbads=9 \
		--bs=512 --iomem_align=2
	expect_error "failed parsing mode=" --filename=emu.size=16M \
		--mode=sometimes
	;;
qos)
	# CPU latency QoS against a fake sysfs tree: one
	# pm_qos_resume_latency_us per CPU, all "0" (no constraint). The tree
	# has no cpuidle states, where auto would choose a waiter method: the
	# files are what this case checks.
	export NVQ_QOS_METHOD=cpuidle
	expect_error "bad CPU latency method" --filename=emu.size=16M \
		--cpu_lat_method=sometimes
	root=$tmp/sysfs
	ncpu=$(getconf _NPROCESSORS_CONF)
	cpu=0
	while [ "$cpu" -lt "$ncpu" ]; do
		mkdir -p "$root/devices/system/cpu/cpu$cpu/power"
		echo 0 >"$root/devices/system/cpu/cpu$cpu/power/pm_qos_resume_latency_us"
		cpu=$((cpu + 1))
	done
	NVQ_SYSFS_ROOT=$root
	export NVQ_SYSFS_ROOT
	unset NVQ_CPU_DMA_LATENCY
	# The distinct values of the CPUs' files, on one line (nvq writes
	# them without a newline, as sysfs takes them).
	cat >"$tmp/values.sh" <<EOF
awk 1 "$root"/devices/system/cpu/cpu*/power/pm_qos_resume_latency_us |
	sort -u | tr '\n' ' ' | sed 's/ \$//'
EOF
	values() {
		sh "$tmp/values.sh"
	}
	# fio sends exec_postrun's output to a file of its own: write ours.
	echo "sh '$tmp/values.sh' >'$tmp/during'" >"$tmp/snap.sh"
	# qos_run WANT ARGS...: a mode=wait verify run; exec_postrun takes a
	# snapshot once the job's I/O is done, while its queue still counts
	# as busy (cpu_lat_timeout_ms=60000: not released before fio exits),
	# outside the sanitizer runtime (the shell is not fio). Some CPU's
	# file must read WANT then, and every file "0" after fio exits.
	# Under TSan fio cannot start a shell (dash crashes with the TSan
	# runtime preloaded), so there only the "after" half is checked.
	qos_run() {
		want=$1
		shift
		rm -f "$tmp/during"
		if [ "$tsan" = 1 ]; then
			verify_ok --filename=emu.size=64M --mode=wait --bs=4k \
				--iodepth=1 --size=4M "$@"
			[ "$(values)" = 0 ] || fail "after the run ($*):" \
				"the files hold '$(values)', not '0'"
			echo "$want" >"$tmp/during"
			return
		fi
		verify_ok --filename=emu.size=64M --mode=wait --bs=4k \
			--iodepth=1 --size=4M --cpu_lat_timeout_ms=60000 \
			--exec_postrun="env -u LD_PRELOAD sh $tmp/snap.sh" "$@"
		[ -s "$tmp/during" ] || fail "exec_postrun took no snapshot ($*)"
		got=$(cat "$tmp/during")
		case " $got " in
		*" $want "*) ;;
		*) fail "during the run ($*): the files hold '$got', none '$want'" ;;
		esac
		[ "$(values)" = 0 ] ||
			fail "after the run ($*): the files hold '$(values)', not '0'"
	}
	# 0 = no idle state at all, which the file spells "n/a".
	qos_run n/a --cpu_lat_limit_us=0
	qos_run 25 --cpu_lat_limit_us=25
	# Off (the default) leaves the files alone...
	qos_run 0
	[ "$(cat "$tmp/during")" = 0 ] || fail "no limit set, yet a file changed"
	# ... and so does mode=poll, which says why.
	run_fio --name=p --thread=1 $ENGINE --filename=emu.size=64M \
		--rw=randread --bs=4k --size=4M --mode=poll --cpu_lat_limit_us=0
	[ "$rc" = 0 ] || fail "mode=poll with a limit: fio exit status $rc"
	grep -q "cpu_lat_limit_us does nothing in mode=poll" "$tmp/out" \
		"$tmp/err" || fail "mode=poll with a limit: no note"
	[ "$(values)" = 0 ] || fail "mode=poll changed the files"
	# A CPU without the file (and no /dev/cpu_dma_latency under a fake
	# tree): the job runs all the same, and the engine says why.
	# The job thread runs on the first CPU this test may use.
	c=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' \
		/proc/self/status)
	f=$root/devices/system/cpu/cpu$c/power/pm_qos_resume_latency_us
	mv "$f" "$tmp/saved"
	run_fio --name=n --thread=1 $ENGINE --filename=emu.size=64M \
		--rw=randread --bs=4k --size=4M --mode=wait --cpus_allowed="$c" \
		--cpu_lat_limit_us=0
	[ "$rc" = 0 ] || fail "limit not applicable: fio exit status $rc"
	grep -q "^nvq: emu:size=64M: CPU latency limit not applied: .*cpu$c/" \
		"$tmp/out" "$tmp/err" || fail "limit not applicable: no note"
	mv "$tmp/saved" "$f"
	# Bad values.
	expect_error 'bad CPU latency limit "bogus"' --filename=emu.size=16M \
		--cpu_lat_limit_us=bogus
	expect_error "failed parsing cpu_lat_limit_us=1000001" \
		--filename=emu.size=16M --cpu_lat_limit_us=1000001
	expect_error "failed parsing cpu_lat_limit_us=-5" \
		--filename=emu.size=16M --cpu_lat_limit_us=-5
	expect_error "failed parsing cpu_lat_timeout_ms=0" \
		--filename=emu.size=16M --cpu_lat_timeout_ms=0
	expect_error "failed parsing cpu_lat_timeout_ms=60001" \
		--filename=emu.size=16M --cpu_lat_timeout_ms=60001
	# Jobs running at the same time on one controller must agree...
	cat >"$tmp/qos.fio" <<EOF
[global]
thread=1
bs=4k
size=4M
filename=emu.size=64M
rw=randwrite
verify=crc32c
mode=wait

[a]
cpu_lat_limit_us=0

[b]
offset=8M
cpu_lat_limit_us=50
EOF
	run_fio $ENGINE "$tmp/qos.fio"
	[ "$rc" != 0 ] || fail "two jobs, one controller, two limits: fio succeeded"
	grep -qF "different settings (cpu_lat_limit_us=0 against 50)" \
		"$tmp/err" "$tmp/out" || fail "no error naming the two limits"
	sed 's/^cpu_lat_limit_us=50$/cpu_lat_timeout_ms=9/' "$tmp/qos.fio" |
		sed 's/^cpu_lat_limit_us=0$//' >"$tmp/qos2.fio"
	run_fio $ENGINE "$tmp/qos2.fio"
	[ "$rc" != 0 ] || fail "two jobs, one controller, two timeouts: fio succeeded"
	grep -qF "different settings (cpu_lat_timeout_ms=3 against 9)" \
		"$tmp/err" "$tmp/out" || fail "no error naming the two timeouts"
	# ... one after the other they may differ: the knobs change in place,
	# and the second job reads back what the first wrote.
	sed 's/^offset=8M$/stonewall\nverify_only=1/' "$tmp/qos.fio" \
		>"$tmp/qos3.fio"
	run_fio $ENGINE --output-format=json "$tmp/qos3.fio"
	[ "$rc" = 0 ] || fail "two limits one after the other: fio exit status $rc"
	jcheck "len(jobs) == 2 and jobs[1]['error'] == 0 and
		jobs[1]['read']['io_bytes'] == 4 << 20" \
		"the second job did not read back the first one's data"
	[ "$(values)" = 0 ] || fail "after two jobs: the files hold '$(values)'"
	;;
preload)
	# SPDK style: preload the engine and name it.
	PRELOAD=$NVQ_FIO_ENGINE verify_ok_named --ioengine=nvq \
		--filename=emu.size=64M --bs=4k --iodepth=16 --size=8M
	;;
signals)
	# SIGINT / SIGTERM while every command sits in a device that takes
	# ten minutes per command: fio stops within the watchdog (a hang hits
	# it; the time is printed, not asserted), the engine gives the stuck
	# commands up, and the CPU latency limit it applied is gone again.
	fake_sysfs
	modes="--thread=1 --thread=0"
	[ "$tsan" = 1 ] && modes="--thread=1"
	for how in $modes; do
		for sig in INT TERM; do
			start_fio --name=s $ENGINE $how --mode=wait \
				--cpu_lat_limit_us=25 --cpu_lat_timeout_ms=60000 \
				--filename=emu.lat=600s,size=16M --rw=randread \
				--bs=4k --iodepth=4 --time_based --runtime=1h
			sleep 2
			t0=$(now_ms)
			kill -$sig "$fio_pid"
			wait_fio 20
			t1=$(now_ms)
			echo "fio $how SIG$sig: exit $rc after $((t1 - t0)) ms"
			[ "$rc" != 999 ] ||
				fail "fio $how still running 20 s after SIG$sig"
			grep -q "terminating on signal" "$tmp/out" "$tmp/err" ||
				fail "fio $how SIG$sig: fio did not see the signal"
			grep -q "commands still in the device when the job stopped" \
				"$tmp/out" "$tmp/err" ||
				fail "fio $how SIG$sig: no note of the stuck commands"
			[ "$(sysfs_values)" = 0 ] || fail "fio $how SIG$sig:" \
				"the CPU files hold '$(sysfs_values)', not '0'"
		done
	done
	;;
stuck-runtime)
	# runtime= is honoured with a device that never answers (a wait for
	# it would take the 30 s I/O timeout at least; the watchdog is 20 s).
	start_fio --name=r --thread=1 $ENGINE --filename=emu.lat=600s,size=16M \
		--rw=randread --bs=4k --iodepth=4 --time_based --runtime=2
	t0=$(now_ms)
	wait_fio 20
	t1=$(now_ms)
	echo "fio runtime=2 on lat=600s: exit $rc after $((t1 - t0)) ms"
	[ "$rc" != 999 ] ||
		fail "runtime=2 on a stuck device: still running after 20 s"
	grep -q "4 commands still in the device when the job stopped" \
		"$tmp/out" "$tmp/err" ||
		fail "runtime=2: no note of the stuck commands"
	;;
timeouts)
	verify_ok --filename=emu.size=64M --bs=4k --iodepth=8 --size=4M \
		--io_timeout_ms=5000 --admin_timeout_ms=10000
	# queue_stats=1 shows the failure path's counters too.
	run_fio --name=q --thread=1 $ENGINE --filename=emu.size=16M \
		--rw=randread --bs=4k --size=1M --queue_stats=1 \
		--io_timeout_ms=1000
	[ "$rc" = 0 ] || fail "queue_stats=1 io_timeout_ms=1000: exit status $rc"
	grep -Eq "^nvq: q: emu:size=16M recovery: timeouts=0 lost_interrupts=0 aborts=0 resets=0 retries=0 failed=0 bad_cqes=0$" \
		"$tmp/out" "$tmp/err" || fail "queue_stats=1: no recovery line"
	expect_error "failed parsing io_timeout_ms=3600001" \
		--filename=emu.size=16M --io_timeout_ms=3600001
	expect_error "failed parsing io_timeout_ms=-1" \
		--filename=emu.size=16M --io_timeout_ms=-1
	expect_error "failed parsing io_timeout_ms=5s" \
		--filename=emu.size=16M --io_timeout_ms=5s
	expect_error "failed parsing admin_timeout_ms=0x" \
		--filename=emu.size=16M --admin_timeout_ms=0x
	expect_error "failed parsing admin_timeout_ms=3600001" \
		--filename=emu.size=16M --admin_timeout_ms=3600001
	# Controller settings: jobs at the same time on one must agree...
	printf '%s\n' '[global]' thread=1 bs=4k size=4M \
		filename=emu.size=64M rw=randread '[a]' io_timeout_ms=1000 \
		'[b]' offset=8M io_timeout_ms=2000 >"$tmp/tmo.fio"
	run_fio $ENGINE "$tmp/tmo.fio"
	[ "$rc" != 0 ] ||
		fail "two jobs, one controller, two timeouts: fio succeeded"
	grep -qF "different settings (io_timeout_ms=2000 against 1000)" \
		"$tmp/err" "$tmp/out" ||
		grep -qF "different settings (io_timeout_ms=1000 against 2000)" \
			"$tmp/err" "$tmp/out" ||
		fail "no error naming the two I/O timeouts"
	# ... one after the other they may differ: set in place.
	sed 's/^offset=8M$/stonewall/' "$tmp/tmo.fio" >"$tmp/tmo2.fio"
	run_fio $ENGINE "$tmp/tmo2.fio"
	[ "$rc" = 0 ] ||
		fail "two timeouts one after the other: fio exit status $rc"
	;;
enghelp)
	run_fio --enghelp="$NVQ_FIO_ENGINE"
	[ "$rc" = 0 ] || fail "fio --enghelp exit status $rc"
	for opt in uri mode nsid queues qdepth queue_stats cpu_lat_limit_us \
		cpu_lat_timeout_ms io_timeout_ms admin_timeout_ms; do
		grep -q "^$opt " "$tmp/out" || fail "--enghelp lacks option $opt"
	done
	;;
*)
	echo "unknown case '$case_name'" >&2
	exit 2
	;;
esac
exit 0
