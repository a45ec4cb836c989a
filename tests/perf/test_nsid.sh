#!/bin/sh
# SPDX-License-Identifier: MIT
# A /NSID suffix on the device URI picks the namespace (docs/vfio.md's
# URI form; the library's grammar, lib/pcie/transport.h): on an emulated
# controller with two namespaces, -d emu:...,ns=2/2 runs on namespace 2
# (text and JSON say so). A suffix that names no namespace, or disagrees
# with --nsid, is a usage error (exit 2).
PERF=${1:?usage: test_nsid.sh PATH/TO/nvq-perf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

# nsid_of ARGS...: the namespace the JSON report names
nsid_of() {
	"$PERF" --ios 20 --qd 2 --json "$@" 2>"$dir/err" |
		python3 -c 'import json,sys
print(json.load(sys.stdin)["jobs"][0]["nvq"]["nsid"])'
}

check_nsid() {
	want=$1
	shift
	got=$(nsid_of "$@")
	if [ "$got" != "$want" ]; then
		echo "FAIL: nvq-perf $*: nsid '$got', expected $want" >&2
		cat "$dir/err" >&2
		fail=1
	fi
}

check_nsid 2 -d emu:size=8M,ns=2/2
check_nsid 1 -d emu:size=8M,ns=2/1
check_nsid 1 -d emu:size=8M,ns=2
check_nsid 2 -d emu:size=8M,ns=2 --nsid 2
check_nsid 2 -d emu:size=8M,ns=2/2 --nsid 2
# the suffix after a media model whose value has a '/' of its own
check_nsid 2 -d emu:size=8M,ns=2,lat=1us/2us/2
check_nsid 2 -d emu:ns=2,size=8M,lat=nand/2 --time 100ms

# The text header names it too.
if ! "$PERF" -d emu:size=8M,ns=2/2 --ios 20 --qd 2 >"$dir/out" 2>&1 ||
	! grep -q "nsid 2: 8MiB" "$dir/out"; then
	echo "FAIL: the text report does not name namespace 2:" >&2
	cat "$dir/out" >&2
	fail=1
fi

# expect_usage NEEDLE ARGS...: exit status 2 and NEEDLE on stderr
expect_usage() {
	needle=$1
	shift
	"$PERF" --ios 10 "$@" >/dev/null 2>"$dir/err"
	rc=$?
	if [ $rc -ne 2 ]; then
		echo "FAIL: nvq-perf $* exited $rc, expected 2" >&2
		cat "$dir/err" >&2
		fail=1
	elif ! grep -q -e "$needle" "$dir/err"; then
		echo "FAIL: nvq-perf $*: message lacks '$needle':" >&2
		cat "$dir/err" >&2
		fail=1
	fi
}
expect_usage "namespace 3 is not active" -d emu:size=8M,ns=2/3
expect_usage "bad namespace id '0'" -d emu:size=8M/0
expect_usage "bad namespace id '99999999999'" -d emu:size=8M/99999999999
expect_usage "no namespace id after" -d emu:size=8M/
expect_usage "names namespace 2" -d emu:size=8M,ns=2/2 --nsid 1
expect_usage "bad namespace id" -d vfio:0000:01:00.0/0
# not a number: the emulator's parser names the parameter
expect_usage "'size'" -d emu:size=8M/x

exit $fail
