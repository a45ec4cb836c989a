#!/bin/sh
# SPDX-License-Identifier: MIT
# nvq-perf --version prints the project version from meson.build, as
# `nvq --version` does, and --json names the same version in fio's
# "fio version" field.
PERF=${1:?usage: test_version.sh PATH/TO/nvq-perf VERSION}
VERSION=${2:?usage: test_version.sh PATH/TO/nvq-perf VERSION}
fail=0

out=$("$PERF" --version)
rc=$?
if [ $rc -ne 0 ] || [ "$out" != "nvq-perf $VERSION" ]; then
	echo "FAIL: --version: exit $rc, printed '$out'," \
		"expected 'nvq-perf $VERSION'" >&2
	fail=1
fi
# wins over the other options, as --help does, and runs nothing
out=$("$PERF" --qd 4 --version -d nonsense:)
if [ $? -ne 0 ] || [ "$out" != "nvq-perf $VERSION" ]; then
	echo "FAIL: --version with other options: '$out'" >&2
	fail=1
fi
"$PERF" --version=1 >/dev/null 2>&1
if [ $? -ne 2 ]; then
	echo "FAIL: --version=1 is not a usage error" >&2
	fail=1
fi
v=$("$PERF" -d emu:size=4M --ios 10 --qd 1 --json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["fio version"])')
if [ "$v" != "nvq-perf-$VERSION" ]; then
	echo "FAIL: JSON fio version '$v', expected 'nvq-perf-$VERSION'" >&2
	fail=1
fi
exit $fail
