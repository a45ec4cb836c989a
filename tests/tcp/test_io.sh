#!/bin/bash
# tcp-io: nvq's tools over NVMe/TCP against Linux's nvmet in a QEMU guest
# (scripts/qemu/nvmet-target.sh), checked against the guest's own view:
#   - the discovery log (nvq discover) against nvme-cli's, field by field
#   - id-ctrl and id-ns of each subsystem against nvme-cli's through the
#     kernel's nvme-tcp host in the guest; LBA sizes 512 (file), 4096
#   - nvq write / nvq read round trips at several offsets and sizes,
#     the data also read in the guest from the namespace's backing store
#   - nvq-perf --verify random writes: poll, wait and thread modes, 4 KiB
#     (in-capsule data) and 128 KiB (above it: R2T and H2CData), then
#     with header and data digests
#   - fio's verify through the nvq engine, two jobs
#   - a subsystem NQN the target does not have: a clean refusal
#   - the library's own test (test_tcp_lib.c) on :nvme and :file
# usage: test_io.sh SRC_ROOT BUILD_ROOT (meson passes them); FIO,
# NVQ_FIO_ENGINE and NVQ_FIO_PRELOAD in the environment for the fio step.
. "$(dirname "$0")/lib.sh"
COMPARE=$SRC/tests/tcp/compare.py

# ---- the kernel host's view, once: nvme-cli in the guest ----------------
# Connects to each subsystem over 127.0.0.1 in the guest and prints
# id-ctrl and id-ns as JSON between markers; discovery through the
# guest's address, which is also what nvmet puts in the log's traddr for
# connections that come through QEMU's forwarded port.
kernel_view() {
	ctl sh '
nvme discover -t tcp -a 10.0.2.15 -s 4420 -o json >/tmp/disc.json || exit 1
echo NVQ-JSON-BEGIN disc; cat /tmp/disc.json; echo NVQ-JSON-END
for s in file nvme both; do
	nvme connect -t tcp -a 127.0.0.1 -s 4420 -n '"$NQN"':$s >/dev/null ||
		exit 1
done
i=0
while [ $(ls -d /sys/class/nvme/nvme*/nvme*c*n* 2>/dev/null | wc -l) -lt 4 ] &&
	[ $i -lt 50 ]; do
	sleep 0.2
	i=$((i + 1))
done
for c in /sys/class/nvme/nvme*; do
	[ "$(cat $c/transport)" = tcp ] || continue
	n=$(basename $c)
	s=$(cat $c/subsysnqn)
	echo "NVQ-JSON-BEGIN id-ctrl $s"
	nvme id-ctrl /dev/$n -o json
	echo NVQ-JSON-END
	for ns in 1 2; do
		nvme id-ns /dev/$n -n $ns -o json >/tmp/ns.json 2>/dev/null ||
			continue
		echo "NVQ-JSON-BEGIN id-ns-$ns $s"
		cat /tmp/ns.json
		echo NVQ-JSON-END
	done
done
nvme disconnect-all >/dev/null' >"$TMP/kernel.txt"
}
# kjson NAME SUBNQN: one of kernel_view's documents, to stdout.
kjson() {
	awk -v h="NVQ-JSON-BEGIN $1${2:+ $2}" '
		$0 == h { on = 1; next } /^NVQ-JSON-END/ { on = 0 } on' \
		"$TMP/kernel.txt"
}

kernel_view || echo "# the kernel host's view failed:" \
	"$(tail -n 5 "$TMP/kernel.txt" 2>/dev/null)"

# ---- discovery ------------------------------------------------------------
discovery() {
	"$NVQ" discover "$NVQ_TCP_DISC" -o json >"$TMP/disc-nvq.json" ||
		die "nvq discover $NVQ_TCP_DISC failed"
	kjson disc >"$TMP/disc-nvme.json"
	[ -s "$TMP/disc-nvme.json" ] || die "no nvme discover output"
	python3 "$COMPARE" disc "$TMP/disc-nvq.json" "$TMP/disc-nvme.json" \
		"$NQN:file" "$NQN:nvme" "$NQN:both"
}
step "nvq discover: 3 subsystems and the discovery entry, as nvme-cli" \
	discovery

# ---- identify -------------------------------------------------------------
# ident NAME NSIDS LBA_SIZES: id-ctrl (subnqn, nn and the rest as the
# kernel host sees them) and id-ns of each namespace (the LBA size in
# use, and the rest as nvme-cli shows it).
ident() {
	local name=$1 uri nsids lbas i ns want
	uri=tcp:$NVQ_TCP_HOST:$NVQ_TCP_PORT,nqn=$NQN:$name
	read -r -a nsids <<<"$2"
	read -r -a lbas <<<"$3"
	"$NVQ" id-ctrl "$uri" -o json >"$TMP/ic-nvq.json" ||
		die "nvq id-ctrl $uri failed"
	python3 - "$TMP/ic-nvq.json" "$NQN:$name" <<'EOF' || return 1
import json, sys
j = json.load(open(sys.argv[1]))
if j.get("subnqn", "").strip() != sys.argv[2]:
    sys.exit(f"id-ctrl subnqn {j.get('subnqn')!r}, expected {sys.argv[2]!r}")
if not isinstance(j.get("nn"), int) or j["nn"] < 1:
    sys.exit(f"id-ctrl nn {j.get('nn')!r}")
print(f"info: id-ctrl: subnqn {sys.argv[2]}, nn {j['nn']}")
EOF
	kjson id-ctrl "$NQN:$name" >"$TMP/ic-nvme.json"
	python3 "$COMPARE" ident "$TMP/ic-nvq.json" "$TMP/ic-nvme.json" \
		cntlid || return 1
	for i in "${!nsids[@]}"; do
		ns=${nsids[$i]}
		want=${lbas[$i]}
		"$NVQ" id-ns "$uri/$ns" -o json >"$TMP/in-nvq.json" ||
			die "nvq id-ns $uri/$ns failed"
		python3 - "$TMP/in-nvq.json" "$want" <<'EOF' || return 1
import json, sys
j = json.load(open(sys.argv[1]))
f = j["flbas"] & 0xf
ds = j["lbafs"][f]["ds"]
if 1 << ds != int(sys.argv[2]):
    sys.exit(f"id-ns: LBA format {f} in use has {1 << ds}-byte blocks, "
             f"expected {sys.argv[2]}")
print(f"info: id-ns: {j['nsze']} blocks of {1 << ds} bytes")
EOF
		kjson "id-ns-$ns" "$NQN:$name" >"$TMP/in-nvme.json"
		python3 "$COMPARE" ident "$TMP/in-nvq.json" \
			"$TMP/in-nvme.json" || return 1
	done
}
step "id-ctrl, id-ns of :file (512-byte LBAs), as nvme-cli" ident file 1 512
step "id-ctrl, id-ns of :nvme (4096-byte LBAs), as nvme-cli" ident nvme 1 4096
step "id-ctrl, id-ns of :both (512 and 4096), as nvme-cli" \
	ident both "1 2" "512 4096"

# ---- the library's test (tests/tcp/test_tcp_lib.c) ----------------------
# ctrl_loss_tmo 30: a target that dies fails the test in seconds, not
# after nvme-cli's default 600.
libtest() {
	timeout -k 10 300 "$BUILD/tests/tcp/test-tcp-lib" \
		"$1,reconnect_delay=2,ctrl_loss_tmo=30" >"$TMP/lib.out" 2>&1
	rc=$?
	sed 's/^ok - /info: /' "$TMP/lib.out"
	return $rc
}
step "test-tcp-lib on :nvme (4096-byte LBAs)" libtest "$NVQ_TCP_URI_NVME"
step "test-tcp-lib on :file (512-byte LBAs)" libtest "$NVQ_TCP_URI_FILE"

# ---- CLI round trips --------------------------------------------------------
# roundtrip URI LBS SLBA BYTES BACKING: nvq write random data at SLBA,
# nvq read it back in another process, compare; then the guest reads
# BACKING (the namespace's file or block device) at SLBA * LBS: the same
# bytes reached the medium.
roundtrip() {
	local uri=$1 lbs=$2 slba=$3 bytes=$4 backing=$5 blocks sum gsum
	blocks=$((bytes / lbs))
	head -c "$bytes" /dev/urandom >"$TMP/data"
	"$NVQ" write "$uri" -n 1 -s "$slba" -d "$TMP/data" ||
		die "nvq write $uri -s $slba ($bytes bytes) failed"
	rm -f "$TMP/back"
	"$NVQ" read "$uri" -n 1 -s "$slba" -c "$blocks" -d "$TMP/back" ||
		die "nvq read $uri -s $slba -c $blocks failed"
	cmp "$TMP/data" "$TMP/back" ||
		die "$uri: $blocks blocks at $slba read back differently"
	sum=$(md5sum <"$TMP/data" | cut -d' ' -f1)
	gsum=$(ctl sh "echo 3 >/proc/sys/vm/drop_caches
		dd if=$backing bs=$lbs skip=$slba count=$blocks 2>/dev/null |
		md5sum") || die "reading $backing in the guest failed"
	[ "${gsum%% *}" = "$sum" ] ||
		die "$backing in the guest does not hold the data at LBA $slba"
	echo "info: $blocks blocks at LBA $slba: read back, and in $backing"
}
# nsuri URI NSID: the URI naming namespace NSID.
rt_file() {
	local u=$NVQ_TCP_URI_FILE f=/tgt/fat/file.img
	roundtrip "$u" 512 0 512 $f &&
		roundtrip "$u" 512 7 $((2 * 1048576 + 3 * 512)) $f &&
		roundtrip "$u" 512 4096 65536 $f &&
		roundtrip "$u" 512 131071 512 $f
}
rt_nvme() {
	local u=$NVQ_TCP_URI_NVME d
	d=$(ctl sh 'for n in /sys/class/nvme/nvme*/nvme*n1; do
		[ "$(cat ${n%/*}/transport)" = pcie ] && echo /dev/${n##*/}; done')
	[ -n "$d" ] || die "no PCIe namespace 1 in the guest"
	roundtrip "$u" 4096 10 $((3 * 1048576 + 5 * 4096)) "$d" &&
		roundtrip "$u" 4096 0 4096 "$d" &&
		roundtrip "$u" 4096 65535 4096 "$d"
}
rt_both() {
	local u=$NVQ_TCP_URI_BOTH d
	roundtrip "$u" 512 100 $((1048576 + 512)) /tgt/fat/both.img || return 1
	d=$(ctl sh 'for n in /sys/class/nvme/nvme*/nvme*n2; do
		[ "$(cat ${n%/*}/transport)" = pcie ] && echo /dev/${n##*/}; done')
	[ -n "$d" ] || die "no PCIe namespace 2 in the guest"
	head -c $((64 * 1024)) /dev/urandom >"$TMP/data2"
	"$NVQ" write "$u" -n 2 -s 100 -d "$TMP/data2" &&
		"$NVQ" read "$u" -n 2 -s 100 -c 16 -d "$TMP/back2" &&
		cmp "$TMP/data2" "$TMP/back2" ||
		die "namespace 2 of :both: round trip failed"
	gsum=$(ctl sh "echo 3 >/proc/sys/vm/drop_caches
		dd if=$d bs=4096 skip=100 count=16 2>/dev/null | md5sum")
	[ "${gsum%% *}" = "$(md5sum <"$TMP/data2" | cut -d' ' -f1)" ] ||
		die "$d does not hold namespace 2's data"
	# Namespace 1 kept its own data at LBA 100 (512-byte blocks).
	"$NVQ" read "$u" -n 1 -s 100 -c 2049 -d "$TMP/back" &&
		cmp "$TMP/data" "$TMP/back" ||
		die "namespace 1 of :both changed after a write to namespace 2"
	echo "info: namespace 2: 16 blocks at LBA 100, in $d; namespace 1 untouched"
}
step "nvq write/read round trips on :file (512)" rt_file
step "nvq write/read round trips on :nvme (4096)" rt_nvme
step "nvq write/read round trips on both namespaces of :both" rt_both

# ---- nvq-perf verified random writes -------------------------------------
# perf URI ARGS...: nvq-perf --verify randwrite for 3 s on 16 MiB, read
# back and checked: exit 0, blocks checked, none bad.
perf() {
	local uri=$1 rc n
	shift
	timeout -k 10 300 "$PERF" -d "$uri" --rw randwrite --verify \
		--time 3s --size 16M "$@" >"$TMP/perf.out" 2>&1
	rc=$?
	grep -E "iops|verify|recovery|error|nvq-perf:" "$TMP/perf.out"
	[ $rc = 0 ] || die "nvq-perf $* exit status $rc"
	n=$(sed -n 's/.*verify *: \([0-9]*\) blocks checked, 0 bad.*/\1/p' \
		"$TMP/perf.out")
	[ -n "$n" ] && [ "$n" -gt 0 ] ||
		die "nvq-perf $*: no 'N blocks checked, 0 bad' line"
	echo "info: $n blocks written and verified"
}
step "nvq-perf --verify 4k qd8 poll on :nvme" \
	perf "$NVQ_TCP_URI_NVME" --bs 4k --qd 8 --mode poll
step "nvq-perf --verify 4k qd8 wait on :nvme" \
	perf "$NVQ_TCP_URI_NVME" --bs 4k --qd 8 --mode wait
step "nvq-perf --verify 4k qd8 thread on :nvme" \
	perf "$NVQ_TCP_URI_NVME" --bs 4k --qd 8 --mode thread
step "nvq-perf --verify 4k qd8 poll on :file (512-byte LBAs), 2 threads" \
	perf "$NVQ_TCP_URI_FILE" --bs 4k --qd 8 --mode poll --threads 2
step "nvq-perf --verify 128k qd4 (R2T) wait on :nvme" \
	perf "$NVQ_TCP_URI_NVME" --bs 128k --qd 4 --mode wait
step "nvq-perf --verify 128k qd4 (R2T) poll on :file" \
	perf "$NVQ_TCP_URI_FILE" --bs 128k --qd 4 --mode poll
D=",hdgst=1,ddgst=1"
step "digests: nvq-perf --verify 4k qd8 poll on :nvme" \
	perf "$NVQ_TCP_URI_NVME$D" --bs 4k --qd 8 --mode poll
step "digests: nvq-perf --verify 128k qd4 (R2T) wait on :file" \
	perf "$NVQ_TCP_URI_FILE$D" --bs 128k --qd 4 --mode wait
step "digests: nvq write/read round trip on :both" \
	roundtrip "$NVQ_TCP_URI_BOTH$D" 512 9000 $((512 * 1024 + 512)) \
	/tgt/fat/both.img

# ---- fio through the engine ------------------------------------------------
fio_verify() {
	local rc n
	if [ -z "${FIO:-}" ] || [ ! -x "${FIO:-}" ] ||
		[ -z "${NVQ_FIO_ENGINE:-}" ]; then
		echo "info: SKIP: no fio or no fio engine in this build"
		return 0
	fi
	# fio's own leaks and races are not ours (as in tests/fio/).
	printf 'leak:/usr/bin/fio\n' >"$TMP/lsan.supp"
	printf 'race:options_free\nrace:fio_sem_remove\n' >"$TMP/tsan.supp"
	(
		[ -n "${NVQ_FIO_PRELOAD:-}" ] && export LD_PRELOAD=$NVQ_FIO_PRELOAD
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2"
		export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TMP/lsan.supp"
		export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$TMP/tsan.supp"
		exec timeout -k 10 300 "$FIO" --name=v \
			--ioengine="external:$NVQ_FIO_ENGINE" \
			--uri="$NVQ_TCP_URI_NVME" --thread=1 --numjobs=2 \
			--rw=randwrite --verify=crc32c --do_verify=1 \
			--verify_fatal=1 --bs=4k --iodepth=16 --size=8M \
			--offset_increment=16M --output-format=terse \
			--terse-version=3
	) >"$TMP/fio.out" 2>&1
	rc=$?
	grep -v '^3;' "$TMP/fio.out"
	[ $rc = 0 ] || die "fio exit status $rc"
	! grep -q 'verify:' "$TMP/fio.out" || die "fio reported verify errors"
	# terse v3: field 5 error, 6 read KiB, 47 write KiB
	n=$(awk -F';' '/^3;/ && $5 == 0 && $6 == 8192 && $47 == 8192' \
		"$TMP/fio.out" | wc -l)
	[ "$n" = 2 ] || die "$n of 2 fio jobs wrote and read back 8 MiB"
	echo "info: 2 jobs, 8 MiB each written and verified (crc32c)"
}
step "fio verify=crc32c through the nvq engine, 2 jobs, on :nvme" fio_verify

# ---- refusals ---------------------------------------------------------------
bad_nqn() {
	local uri=tcp:$NVQ_TCP_HOST:$NVQ_TCP_PORT,nqn=$NQN:nope rc
	timeout -k 10 120 "$NVQ" id-ctrl "$uri" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cat "$TMP/err"
	[ $rc != 0 ] && [ $rc != 124 ] || die "nvq id-ctrl $uri: exit status $rc"
	# The target's answer to Connect (Connect Invalid Parameters, the
	# subnqn field), not a parse error of the URI.
	! grep -qi "unknown device URI" "$TMP/err" &&
		grep -qi "connect" "$TMP/err" &&
		grep -Eqi "invalid|refus|reject" "$TMP/err" ||
		die "the message does not say that the target refused the Connect"
	echo "info: $(head -n 1 "$TMP/err")"
}
step "a subsystem NQN the target lacks: a clean refusal" bad_nqn

finish
