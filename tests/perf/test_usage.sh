#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf usage errors: each bad option or value exits 2 with a message
# naming the option; --help exits 0. The device-dependent checks (LBA
# size, namespace, region, queues) run against the emulated controller.
PERF=${1:?usage: test_usage.sh PATH/TO/nvq-perf}
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect_usage NEEDLE ARGS...: exit status 2 and NEEDLE on stderr
expect_usage() {
	needle=$1
	shift
	"$PERF" "$@" >/dev/null 2>"$out"
	rc=$?
	if [ $rc -ne 2 ]; then
		echo "FAIL: nvq-perf $* exited $rc, expected 2" >&2
		cat "$out" >&2
		fail=1
	elif ! grep -q -e "$needle" "$out"; then
		echo "FAIL: nvq-perf $*: message lacks '$needle':" >&2
		cat "$out" >&2
		fail=1
	fi
}

expect_usage --bs --bs abc
expect_usage --bs --bs 0
expect_usage --bs --bs -4k
expect_usage --bs --bs
expect_usage --qd --qd 0
expect_usage --qd --qd x
expect_usage --threads --threads 0
expect_usage --time --time 10x
expect_usage --time --time 0
expect_usage --ios --ios 0
expect_usage --ramp --ramp soon
expect_usage --offset --offset 1q
expect_usage --size --size 0
expect_usage --seed --seed -1
expect_usage --nsid --nsid 0
expect_usage --mode --mode spin
expect_usage --rw --rw sideways
expect_usage --rwmix --rwmix 101
expect_usage --rwmix --rw read --rwmix 20
expect_usage --verify --rw randrw --verify
expect_usage --rounds --rounds 0
expect_usage --plot --plot ''
expect_usage --device -d ''
expect_usage --compare --compare ''
expect_usage --json --compare '--qd 1;--json'
expect_usage "configuration 2" --compare '--qd 1;--qd many'
expect_usage --frobnicate --frobnicate
expect_usage --lock --lock double
expect_usage --lock --exclusive --lock single
expect_usage --shared-queue --exclusive --threads 2 --shared-queue
expect_usage "'lat'" -d 'emu:lat=lognormal:80us-40us'
expect_usage "'lat'" -d 'emu:lat=warp'
expect_usage "'stray'" stray
expect_usage --cpu-lat-method --cpu-lat-method spin
expect_usage --cpu-lat-method --cpu-lat-method none
expect_usage --cpu-lat-method --cpu-lat-method
expect_usage "configuration 2" \
	--compare '--cpu-lat-method poll;--cpu-lat-method x'
expect_usage --think-time --think-time -2ms
expect_usage --think-time --think-time 2x
expect_usage --think-time --think-time
expect_usage --rate-iops --rate-iops 1k
expect_usage --rate-iops --rate-iops -1
expect_usage --rate-iops --rate-iops 1000000001
expect_usage "configuration 1" --compare '--rate-iops x;--qd 2'
for opt in --io-timeout-ms --admin-timeout-ms; do
	expect_usage "$opt" $opt abc
	expect_usage "$opt" $opt 0
	expect_usage "$opt" $opt -5
	expect_usage "$opt" $opt 3600001
	expect_usage "$opt" $opt 10ms
	expect_usage "$opt" $opt
done
# Checks that need the device (no I/O happens).
expect_usage --bs -d emu:size=1M --bs 1000
expect_usage --bs -d emu:size=1M,lbads=9 --bs 768
expect_usage --nsid -d emu:size=1M --nsid 7
expect_usage --offset -d emu:size=1M --offset 2M
expect_usage --offset -d emu:size=1M --offset 1000
expect_usage --size -d emu:size=1M --size 2M
expect_usage --size -d emu:size=1M --size 4k --bs 8k
expect_usage --threads -d emu:size=1M,qpairs=2 --threads 3
expect_usage -d -d 'nonsense:xyz'

"$PERF" --help >"$out" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q -e "--compare" "$out"; then
	echo "FAIL: --help exited $rc or lacks the option list" >&2
	fail=1
fi
exit $fail
