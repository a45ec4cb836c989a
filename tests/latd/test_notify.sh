#!/bin/bash
# SPDX-License-Identifier: MIT
# nvq-latd speaks sd_notify by hand for Type=notify: READY=1 once it
# watches its disks, STATUS= lines, STOPPING=1 at SIGTERM, all as
# datagrams to $NOTIFY_SOCKET (here a socket this test listens on).
. "$(dirname "$0")/daemon_lib.sh"

need_python
build_tree
NS=$TMP/notify.sock
python3 - "$NS" "$TMP/notes" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
with open(sys.argv[2], "w") as out:
    try:
        while True:
            m = s.recv(4096).decode()
            out.write(m.replace("\n", "|") + "\n")
            out.flush()
            if "STOPPING=1" in m:
                break
    except socket.timeout:
        pass
PY
LISTENER=$!
pids="$pids $LISTENER"
for i in $(seq 1 100); do
	[ -S "$NS" ] && break
	sleep 0.1
done

NOTIFY_SOCKET=$NS start --activity poll nvme0n1
noted() {
	grep -q "$1" "$TMP/notes" 2>/dev/null
}
wait_for "READY=1" noted "^READY=1"
wait_for "a STATUS line" noted "^STATUS=watching 1 disks (0 bpf, 1 poll)"
stop
[ "$RC" = 0 ] || fail "exit status $RC after SIGTERM"
wait_for "STOPPING=1" noted "^STOPPING=1"
wait "$LISTENER"
# READY comes before STOPPING
[ "$(grep -n '^READY=1' "$TMP/notes" | cut -d: -f1)" -lt \
	"$(grep -n '^STOPPING=1' "$TMP/notes" | cut -d: -f1)" ] ||
	fail "READY=1 after STOPPING=1: $(cat "$TMP/notes")"
finish
