#!/bin/sh
# nvq against libvfn, side by side: nvq-perf --mode poll and libvfn's
# examples/perf in one QEMU guest boot, on one emulated NVMe controller
# (QEMU's, through vfio-pci, as compare-kernel.sh): 4 KiB random reads,
# polled, at QD1 and QD32, runs alternating A B A B (A nvq-perf, B
# libvfn perf) for ROUNDS rounds. Prints the medians (IOPS of each, the
# ratio nvq/libvfn, mean latency), the host's load average before and
# after, the guest's clocksource and every single run. The guest runs
# under TCG, so the absolute numbers mean little; the ratio is the
# result. Exits non-zero only when something failed to build or run
# (a tool, the guest), never because of the ratio.
#
# usage: bench-libvfn.sh [-h|--help] [BUILD_ROOT] [ROUNDS] [SECONDS]
#   BUILD_ROOT  a build directory (default: build); nvq's guest programs
#               are built without sanitizers in BUILD_ROOT/vfio-guest,
#               libvfn in BUILD_ROOT/libvfn-peer (never in the source tree)
#   ROUNDS      alternating rounds (default 3)
#   SECONDS     measured time per run, whole seconds (default 5)
# environment:
#   LIBVFN_SRC     libvfn's source: a tarball or an unpacked tree (default
#                  ../shared/peers/libvfn-c2acee3.tar.gz next to the repo)
#   RAMP           warm-up per run, whole seconds, not counted (default 1)
#   NVQ_PERF_ARGS  extra nvq-perf options for A (e.g. --exclusive)
#   NVQ_REV        build nvq from this commit (git archive into
#                  BUILD_ROOT/nvq-SHA) instead of the working tree, so that
#                  others' uncommitted changes stay out (e.g. NVQ_REV=HEAD)
# Exits 77 (skip) when QEMU, a static busybox or a kernel image with the
# vfio modules is missing.
#
# The same work on both sides, read from both sources:
#   - one I/O queue pair (libvfn: nvme_create_ioqpair(qid 1); nvq-perf:
#     --threads 1) with 256 entries (libvfn -n 256; nvq's default
#     depth), one thread submitting and reaping, no interrupts (libvfn
#     creates the CQ with vector -1; nvq in poll mode without IEN), shadow
#     doorbells with EventIdx on both (QEMU offers Doorbell Buffer Config;
#     both use it when OACS says so), one doorbell write per batch of
#     resubmissions, after each reap;
#   - reads of one logical block: libvfn's perf always sends NLB 0 (one
#     block) into one 4 KiB page per slot (PRP1 only), so the namespace
#     is formatted with 4096-byte blocks and nvq-perf reads --bs 4k (one
#     block, PRP1 only, from its own page-aligned DMA buffers);
#   - uniformly random LBAs over the whole namespace (libvfn: rand() %
#     nsze; nvq-perf: splitmix64 per slot over all 4 KiB blocks, no
#     --size), namespace 1, QD N kept in flight;
#   - a warm-up of RAMP s not counted, then SECONDS s measured; before
#     the first round one discarded 2 s run of each at QD32.
# What differs and cannot be matched without changing either tool:
#   - the harness's per-I/O bookkeeping: libvfn reads the TSC twice per
#     I/O and keeps min/max/sum; nvq-perf takes three clock_gettime()
#     stamps (vDSO, TSC clocksource) and fills log-linear histograms and
#     100 ms bandwidth samples. Both are part of each tool's benchmark;
#   - nvq-perf's queue is shared by default (split sq/cq locks, taken
#     uncontended); libvfn takes no locks. NVQ_PERF_ARGS=--exclusive
#     gives nvq the lockless model;
#   - libvfn's IOPS is completions / the nominal runtime, timed in TSC
#     ticks at the frequency it reads from /proc/cpuinfo ("cpu MHz",
#     rounded to 10 MHz; cpuid 0x15 is empty under TCG); nvq-perf
#     divides by the measured window on CLOCK_MONOTONIC. The script
#     compares libvfn's tick rate with the guest kernel's TSC rate and
#     corrects libvfn's IOPS by that factor (printed; 1.000 = no change);
#   - libvfn issues from rand() (glibc, a lock per call), nvq from a
#     generator per slot; nvq-perf runs a second, mostly sleeping thread
#     (the monitor that samples bandwidth and ends the run).
set -eu

usage() {
	sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
-*) echo "bench-libvfn: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
[ $# -le 3 ] || { echo "bench-libvfn: too many arguments (see --help)" >&2; exit 2; }

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${2:-3}
secs=${3:-5}
ramp=${RAMP:-1}
for v in "ROUNDS=$rounds" "SECONDS=$secs" "RAMP=$ramp"; do
	case ${v#*=} in '' | *[!0-9]*)
		echo "bench-libvfn: ${v%%=*} must be a whole number (see --help)" >&2
		exit 2 ;;
	esac
done
[ "$rounds" -gt 0 ] && [ "$secs" -gt 0 ] ||
	{ echo "bench-libvfn: ROUNDS and SECONDS must be positive" >&2; exit 2; }
lvsrc=${LIBVFN_SRC:-$src/../shared/peers/libvfn-c2acee3.tar.gz}
. "$src/scripts/qemu/common.sh"

rc=0
nvq_qemu_deps >&2 || rc=$?
if [ $rc != 0 ]; then
	echo "bench-libvfn: cannot boot the guest (QEMU or kernel image missing)" >&2
	exit 77
fi
for p in python3 meson ninja; do
	command -v $p >/dev/null 2>&1 ||
		{ echo "bench-libvfn: $p is needed" >&2; exit 1; }
done
[ -e "$lvsrc" ] || { echo "bench-libvfn: no libvfn source at $lvsrc (set LIBVFN_SRC)" >&2; exit 1; }
mkdir -p "$build"
build=$(cd "$build" && pwd)
case $build/ in "$src"/*/)
	# A build root inside the repo is fine only where git ignores it.
	if ! git -C "$src" check-ignore -q "$build" 2>/dev/null; then
		echo "bench-libvfn: $build is not ignored by git; libvfn is built there" >&2
		exit 2
	fi ;;
esac

nvqsrc=$src
gbuild=$build
rev=${NVQ_REV:-}
if [ -n "$rev" ]; then
	sha=$(git -C "$src" rev-parse --verify -q "$rev^{commit}") ||
		{ echo "bench-libvfn: NVQ_REV=$rev is no commit" >&2; exit 2; }
	gbuild=$build/nvq-$(echo "$sha" | cut -c1-12)
	nvqsrc=$gbuild/src
	if [ ! -f "$gbuild/.exported" ]; then
		rm -rf "$nvqsrc"
		mkdir -p "$nvqsrc"
		git -C "$src" archive "$sha" | tar -x -C "$nvqsrc" ||
			{ echo "bench-libvfn: cannot export $rev" >&2; exit 1; }
		touch "$gbuild/.exported"
	fi
fi
# nvq_guest_build sets src and build (its arguments) for good: keep ours.
mysrc=$src
mybuild=$build
nvq_guest_build "$nvqsrc" "$gbuild" >&2 ||
	{ echo "bench-libvfn: building the guest failed" >&2; exit 1; }
src=$mysrc
build=$mybuild
perf=$GUEST_BIN/tools/perf/nvq-perf
if [ ! -x "$perf" ]; then
	echo "bench-libvfn: nvq-perf did not build (see $gbuild/vfio-guest-build.log)" >&2
	exit 1
fi

# libvfn's examples/perf, in BUILD_ROOT/libvfn-peer: only that target
# (no docs, no tests), the vfio type1 backend (the guest's 6.1 kernel has
# no iommufd for vfio), libvfn linked statically into the example.
peer=$build/libvfn-peer
(
	flock 9
	if [ -d "$lvsrc" ]; then
		lvtree=$(cd "$lvsrc" && pwd)
	else
		lvtree=$peer/src/libvfn
		if [ ! -f "$peer/src/.unpacked" ] ||
			[ -n "$(find "$lvsrc" -newer "$peer/src/.unpacked")" ]; then
			rm -rf "$peer/src" "$peer/build"
			mkdir -p "$peer/src"
			tar -xzf "$lvsrc" -C "$peer/src" ||
				{ echo "bench-libvfn: cannot unpack $lvsrc" >&2; exit 1; }
			top=$(ls -1 "$peer/src")
			[ "$top" = libvfn ] || mv "$peer/src/$top" "$lvtree"
			touch "$peer/src/.unpacked"
		fi
	fi
	# perf.c includes libnvme's <nvme/types.h> (types only) and meson
	# asks pkg-config for libnvme. Debian's libnvme.pc needs json-c's
	# and openssl's .pc files too; without them, a .pc of the headers
	# alone, which is all perf uses.
	pcpath=${PKG_CONFIG_PATH:-}
	if ! pkg-config --cflags libnvme >/dev/null 2>&1; then
		inc=$(pkg-config --variable=includedir libnvme 2>/dev/null || true)
		[ -n "$inc" ] || inc=/usr/include
		[ -f "$inc/nvme/types.h" ] || {
			echo "bench-libvfn: libvfn's perf needs libnvme's headers (apt-get install libnvme-dev)" >&2
			exit 1; }
		mkdir -p "$peer/pkgconfig"
		printf '%s\n' "Name: libnvme" \
			"Description: libnvme's headers only, for libvfn's examples/perf" \
			"Version: $(pkg-config --modversion libnvme 2>/dev/null || echo 1.0)" \
			"Cflags: -I$inc" "Libs:" >"$peer/pkgconfig/libnvme.pc"
		pcpath=$peer/pkgconfig${pcpath:+:$pcpath}
		echo "bench-libvfn: libnvme.pc is not usable (json-c/openssl .pc missing); using its headers alone" >&2
	fi
	if [ ! -f "$peer/build/build.ninja" ]; then
		PKG_CONFIG_PATH=$pcpath meson setup "$peer/build" "$lvtree" \
			--buildtype=release -Dwerror=false -Ddocs=disabled \
			-Diommufd=disabled -Dlibnvme=enabled \
			-Ddefault_library=static >"$peer/setup.log" 2>&1 ||
			{ tail -n 30 "$peer/setup.log" >&2; exit 1; }
	fi
	ninja -j2 -C "$peer/build" examples/perf >"$peer/build.log" 2>&1 ||
		{ tail -n 30 "$peer/build.log" >&2; exit 1; }
) 9>"$build/libvfn-peer.lock" ||
	{ echo "bench-libvfn: building libvfn's examples/perf failed (see $peer/*.log)" >&2; exit 1; }
lvperf=$peer/build/examples/perf

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvq-libvfn.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$build/bench-libvfn.log

# libvfn's perf (and any shared library it needs) in a second archive
# appended to the guest's initramfs (the kernel unpacks concatenated
# archives in turn); the guest's LD_LIBRARY_PATH is /nvq/lib.
mkdir -p "$tmp/extra/nvq/bin" "$tmp/extra/nvq/lib"
cp "$lvperf" "$tmp/extra/nvq/bin/libvfn-perf"
ldd "$lvperf" 2>/dev/null | awk '/=> \// { print $3 }' | while read -r lib; do
	cp -L "$lib" "$tmp/extra/nvq/lib/"
done
cpio=cpio
command -v cpio >/dev/null 2>&1 || cpio="busybox cpio"
# shellcheck disable=SC2086
(cd "$tmp/extra" && find . | $cpio -o -H newc 2>/dev/null) | gzip -1 >"$tmp/extra.cpio.gz"
cat "$INITRD" "$tmp/extra.cpio.gz" >"$tmp/initrd.cpio.gz"

truncate -s 1G "$tmp/d0.img"

cat >"$tmp/script.sh" <<EOF
ROUNDS=$rounds
SECS=$secs
RAMP=$ramp
NVQ_PERF_ARGS="$(echo "${NVQ_PERF_ARGS:-}" | tr -d '"$`\\')"
EOF
cat >>"$tmp/script.sh" <<'EOF'
BDF=0000:00:04.0
nvq_load vfio-pci vfio_iommu_type1 || return 1
nvq setup $BDF >/dev/null || { echo "guest: nvq setup $BDF failed"; return 1; }
guest_info() {
	echo "NVQ-OUT info"
	echo "kernel $(uname -r), $(nproc) CPUs, loadavg $(cat /proc/loadavg)"
	echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	grep -m 1 '^cpu MHz' /proc/cpuinfo
	dmesg | grep -i 'tsc:' | sed 's/^\[[ 0-9.]*\] //'
	nvq id-ns vfio:$BDF -n 1 | grep -E '^nsze|in use'
	echo "NVQ-OUT-END"
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
run_nvq() { # QD ROUND
	echo "NVQ-OUT nvq-qd$1-r$2"
	t0=$(uptime_s)
	# shellcheck disable=SC2086
	nvq-perf -d vfio:$BDF --rw randread --bs 4k --qd $1 --mode poll \
		--time ${SECS}s --ramp ${RAMP}s --json $NVQ_PERF_ARGS \
		>/tmp/run.out 2>/tmp/run.err
	rc=$?
	echo "elapsed $t0 $(uptime_s) rc=$rc"
	echo "NVQ-JSON"
	cat /tmp/run.out
	echo "NVQ-JSON-END"
	sed 's/^/stderr: /' /tmp/run.err
	echo "NVQ-OUT-END"
	return $rc
}
run_libvfn() { # QD ROUND
	echo "NVQ-OUT libvfn-qd$1-r$2"
	t0=$(uptime_s)
	libvfn-perf -d $BDF -N 1 -p randread -q $1 -n 256 -t $SECS -w $RAMP \
		>/tmp/run.out 2>/tmp/run.err
	rc=$?
	echo "elapsed $t0 $(uptime_s) rc=$rc"
	cat /tmp/run.out
	sed 's/^/stderr: /' /tmp/run.err
	echo "NVQ-OUT-END"
	return $rc
}
# One discarded run of each first: the first run after boot was the
# slowest of its kind every time (TCG translating fresh code, QEMU
# touching guest memory and the image for the first time), and it was
# always nvq's.
warm_up() {
	# shellcheck disable=SC2086
	nvq-perf -d vfio:$BDF --rw randread --bs 4k --qd 32 --mode poll \
		--time 2s --json $NVQ_PERF_ARGS >/dev/null 2>/tmp/run.err ||
		{ cat /tmp/run.err; return 1; }
	libvfn-perf -d $BDF -N 1 -p randread -q 32 -n 256 -t 2 \
		>/dev/null 2>/tmp/run.err || { cat /tmp/run.err; return 1; }
}
nvq_run info guest_info
nvq_run warm-up warm_up
r=1
while [ $r -le $ROUNDS ]; do
	for qd in 1 32; do
		nvq_run nvq-qd$qd-r$r run_nvq $qd $r
		nvq_run libvfn-qd$qd-r$r run_libvfn $qd $r
	done
	r=$((r + 1))
done
echo "NVQ-OUT info-end"
echo "loadavg $(cat /proc/loadavg)"
echo "NVQ-OUT-END"
EOF

head=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=
if [ -n "$rev" ]; then
	head="$(echo "$sha" | cut -c1-7) (NVQ_REV=$rev, exported: no uncommitted changes)"
elif ! git -C "$src" diff --quiet HEAD -- lib include tools emu 2>/dev/null; then
	dirty=" + uncommitted changes in lib include tools emu (diff sha1 $(git -C "$src" diff HEAD -- lib include tools emu | sha1sum | cut -c1-12))"
fi
echo "== nvq-perf --mode poll vs libvfn examples/perf on QEMU's NVMe device over vfio-pci, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "\$ ${NVQ_REV:+NVQ_REV=$NVQ_REV }${NVQ_PERF_ARGS:+NVQ_PERF_ARGS='$NVQ_PERF_ARGS' }${RAMP:+RAMP=$RAMP }scripts/qemu/bench-libvfn.sh $(basename "$build") $rounds $secs"
echo "host: $(nproc) CPUs, $(uname -r), $(qemu-system-x86_64 --version | head -n 1)"
echo "guest: TCG, q35 + intel-iommu, -smp 2, kernel $KVER; one nvme controller, namespace 1 of 1 GiB with 4096-byte blocks"
echo "nvq: $head$dirty"
echo "libvfn: $(basename "$lvsrc") (examples/perf, meson release, libvfn static)"
echo "A: nvq-perf -d vfio:0000:00:04.0 --rw randread --bs 4k --qd N --mode poll --time ${secs}s --ramp ${ramp}s --json${NVQ_PERF_ARGS:+ $NVQ_PERF_ARGS}"
echo "B: perf -d 0000:00:04.0 -N 1 -p randread -q N -n 256 -t $secs -w $ramp"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "host load average before: $load0"
start=$(date +%s)
grc=0
sh "$src/scripts/qemu/run-guest.sh" -k "$KERNEL" -i "$tmp/initrd.cpio.gz" \
	-s "$tmp/script.sh" -t $(((rounds * 4 + 2) * (secs + ramp + 25) + 240)) -l "$log" \
	-- -drive "file=$tmp/d0.img,if=none,id=d0,format=raw,cache=unsafe" \
	-device nvme,serial=nvq-libvfn,id=n0,addr=04.0 \
	-device nvme-ns,drive=d0,bus=n0,nsid=1,logical_block_size=4096,physical_block_size=4096 \
	>"$tmp/run.out" 2>&1 || grc=$?
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo "host load average after: $load1 ($(($(date +%s) - start)) s for the boot)"
echo "guest console: $log"
echo

prc=0
python3 - "$log" "$tmp/run.out" "$rounds" "$secs" "$ramp" "$load0" "$load1" <<'PY' || prc=$?
import json, re, statistics, sys

log, runout, rounds, secs, ramp, load0, load1 = sys.argv[1:8]
rounds, secs, ramp = int(rounds), int(secs), int(ramp)
text = open(log, errors="replace").read().replace("\r", "")
sec = {m.group(1): m.group(2) for m in re.finditer(
    r"^NVQ-OUT (\S+)\n(.*?)^NVQ-OUT-END$", text, re.S | re.M)}

info = sec.get("info", "")
print("---- guest")
print(info.rstrip())
print(sec.get("info-end", "").rstrip())
print()

# libvfn times its run in TSC ticks at "cpu MHz" rounded to 10 MHz; the
# guest's clock (and nvq-perf) runs at the kernel's TSC rate.
m = re.search(r"^cpu MHz\s*:\s*([\d.]+)", info, re.M)
lv_hz = round(float(m.group(1)) * 1e6 / 1e7) * 1e7 if m else None
k_mhz = None
for pat in (r"Refined TSC clocksource calibration: ([\d.]+) MHz",
            r"Detected ([\d.]+) MHz TSC", r"Detected ([\d.]+) MHz processor"):
    m = re.search(pat, info)
    if m:
        k_mhz = float(m.group(1))
        break
factor = lv_hz / (k_mhz * 1e6) if lv_hz and k_mhz else 1.0
m = re.search(r"lbads:(\d+)", info)
lbads = int(m.group(1)) if m else None

fail = []
runs = {}
print("---- runs (elapsed: guest uptime around the whole command, start-up included)")
for r in range(1, rounds + 1):
    for qd in (1, 32):
        for tool in ("nvq", "libvfn"):
            name = f"{tool}-qd{qd}-r{r}"
            body = sec.get(name)
            if body is None:
                fail.append(f"{name}: no output")
                continue
            e = re.search(r"^elapsed ([\d.]+) ([\d.]+) rc=(\d+)", body, re.M)
            el = float(e.group(2)) - float(e.group(1)) if e else float("nan")
            rc = int(e.group(3)) if e else -1
            iops = lat = None
            if tool == "nvq":
                j = re.search(r"^NVQ-JSON\n(.*?)^NVQ-JSON-END$", body, re.S | re.M)
                try:
                    rd = json.loads(j.group(1))["jobs"][0]["read"]
                    iops = float(rd["iops"])
                    lat = rd["lat_ns"]["mean"] / 1000.0
                except (AttributeError, ValueError, KeyError, IndexError):
                    pass
            else:
                v = re.search(r"^\s*iops\s+mbps\s+lavg\s+lmin\s+lmax\s*\n\s*(\S+)\s+\S+\s+(\S+)",
                              body, re.M)
                if v:
                    iops = float(v.group(1)) / factor
                    lat = float(v.group(2)) / factor
            ok = rc == 0 and iops is not None and iops > 0
            if not ok:
                err = [l for l in body.splitlines() if l.startswith("stderr:")]
                fail.append(f"{name}: rc={rc}" + (f" ({err[-1][8:]})" if err else ""))
            else:
                runs.setdefault((tool, qd), []).append((r, iops, lat))
            print(f"{name:16s} IOPS {iops if iops else 0:9.0f}  lat mean "
                  f"{lat if lat else 0:8.1f} us  elapsed {el:5.1f} s  rc={rc}")
print()
if lbads != 12:
    fail.append(f"namespace 1 has lbads {lbads}, not 12 (4096 bytes): libvfn would read less than 4 KiB")

gl = re.findall(r"loadavg (\S+ \S+ \S+)", info + sec.get("info-end", ""))
print(f"---- medians: 4 KiB random reads, polled, one queue, one thread, "
      f"{rounds} alternating rounds of {secs} s (+{ramp} s warm-up)")
print(f"host load average before {load0}, after {load1}; guest "
      f"{' -> '.join(gl) if gl else '?'}; guest clocksource "
      f"{(re.search(r'^clocksource: (.*)$', info, re.M) or [None, '?'])[1]}")
print(f"libvfn tick rate {lv_hz / 1e6 if lv_hz else float('nan'):.0f} MHz, guest "
      f"TSC {k_mhz if k_mhz else float('nan'):.3f} MHz: libvfn's IOPS and "
      f"latency divided by {factor:.4f}")
print()
print("| QD | runs | nvq-perf IOPS | libvfn perf IOPS | nvq/libvfn "
      "| median of round ratios | per-round ratios | nvq lat mean (us) "
      "| libvfn lat mean (us) |")
print("|---|---|---|---|---|---|---|---|---|")
for qd in (1, 32):
    a = runs.get(("nvq", qd), [])
    b = runs.get(("libvfn", qd), [])
    if not a or not b:
        print(f"| {qd} | {len(a)}/{len(b)} | - | - | - | - | - | - | - |")
        continue
    ma = statistics.median(x[1] for x in a)
    mb = statistics.median(x[1] for x in b)
    bi = {x[0]: x[1] for x in b}
    rr = [x[1] / bi[x[0]] for x in a if x[0] in bi]
    pr = [f"{x:.2f}" for x in rr]
    la = statistics.median(x[2] for x in a)
    lb = statistics.median(x[2] for x in b)
    print(f"| {qd} | {len(a)}/{len(b)} | {ma:.0f} | {mb:.0f} | "
          f"{ma / mb:.3f} | {statistics.median(rr):.3f} | {' '.join(pr)} | "
          f"{la:.1f} | {lb:.1f} |")
print()
print("nvq/libvfn: the ratio of the medians; round ratios: nvq's run "
      "over the libvfn run right after it. lat mean: submission to "
      "completion seen (nvq-perf lat_ns.mean; libvfn lavg).")
if fail:
    print()
    for f in fail:
        print("FAILED: " + f)
    sys.exit(1)
PY
if [ $grc != 0 ]; then
	echo "bench-libvfn: the guest run failed (see $log):"
	sed 's/^/  /' "$tmp/run.out" | tail -n 40
	exit 1
fi
exit $prc
