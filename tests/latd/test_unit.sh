#!/bin/bash
# SPDX-License-Identifier: MIT
# The systemd unit passes `systemd-analyze verify` (which also checks that
# ExecStart= names an executable: this copy names the build tree's), with
# nothing said about it: an unknown or misspelt key is only a warning.
set -u
UNIT=${1:-}
if [ -z "$UNIT" ] || [ ! -f "$UNIT" ]; then
	echo "usage: $0 path/to/nvq-latd-test.service" >&2
	exit 1
fi
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze not found" >&2
	exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nvq-latd-unit.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
# verify wants the unit's own name
cp "$UNIT" "$TMP/nvq-latd.service"
fails=0
systemd-analyze verify "$TMP/nvq-latd.service" >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "FAIL: systemd-analyze verify: exit status $rc" >&2
	fails=1
fi
if grep "nvq-latd" "$TMP/out" >&2; then
	echo "FAIL: systemd-analyze verify has something to say about the unit" >&2
	fails=1
fi
for key in "Type=notify" "ExecReload=/bin/kill -HUP \$MAINPID" \
	"ProtectSystem=strict" "ReadWritePaths=/sys/devices/system/cpu /run" \
	"NoNewPrivileges=yes" "ProtectHome=yes"; do
	grep -qxF "$key" "$UNIT" || {
		echo "FAIL: the unit lacks $key" >&2
		fails=1
	}
done
grep -q "^ExecStart=/.*/nvq-latd --config " "$UNIT" || {
	echo "FAIL: ExecStart: $(grep ExecStart "$UNIT")" >&2
	fails=1
}
exit $fails
