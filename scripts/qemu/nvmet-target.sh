#!/bin/sh
# A Linux NVMe/TCP target (nvmet, nvmet-tcp) in a QEMU guest, reachable
# from the host through QEMU's user network. For the tcp test suite
# (tests/tcp/) and for debugging the transport by hand.
#
# usage: nvmet-target.sh start DIR   boot the guest in the background
#                                    (state, logs and pid in DIR), wait
#                                    until nvmet answers an ICReq through
#                                    the forwarded port, print the shell
#                                    assignments below (also in DIR/env)
#        nvmet-target.sh stop DIR    power the guest off (kill QEMU if it
#                                    does not stop), clean up
#        nvmet-target.sh ctl DIR CMD run CMD in the guest; its output and
#                                    exit status are ctl's
#        nvmet-target.sh status DIR  exit 0 while the guest runs
# ctl's commands:
#   port-down   unlink the subsystems from the port: nvmet drops the
#               port's controllers and stops listening (connections
#               break, new ones are refused)
#   port-up     link them again
#   kill-conns  abort the established connections with 'ss -K' in the
#               guest (its kernel has CONFIG_INET_DIAG_DESTROY); the port
#               keeps listening
#   sh 'CMD'    anything (busybox sh; nvme-cli and fio are in the guest)
#
# Printed by start (eval it):
#   NVQ_TCP_HOST=127.0.0.1 NVQ_TCP_PORT=<host port forwarded to 4420>
#   NVQ_TCP_URI_FILE=tcp:127.0.0.1:<port>,nqn=nqn.2026-12.io.nvq:file
#   NVQ_TCP_URI_NVME=... NVQ_TCP_URI_BOTH=... NVQ_TCP_DISC=tcp:127.0.0.1:<port>
#   NVQ_TCP_CTL_PORT=<host port of the control server>
# The subsystems are described in nvmet-guest.sh (the guest side).
#
# Environment:
#   NVQ_TARGET_OWNER=PID      stop the guest when process PID ends (the
#                             tests pass their own pid: a killed test run
#                             leaves no QEMU behind)
#   NVQ_TARGET_LIFETIME=S     QEMU is killed after S seconds (7200)
#   NVQ_TARGET_BOOT_TIMEOUT=S how long start waits for the target (300)
#   NVQ_TARGET_PROGRAMS='P..' more programs for the guest's /nvq/bin
#   NVQ_TARGET_DISK_MB=N      size of each QEMU NVMe namespace (256)
#   NVQ_TARGET_MEM, NVQ_TARGET_CPUS  guest memory (2G) and vCPUs (2)
# start exits 77 with a reason when QEMU, busybox or a kernel with
# nvmet-tcp is missing; 1 when the guest does not come up.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
NQN=nqn.2026-12.io.nvq

usage() {
	echo "usage: nvmet-target.sh start|stop|status DIR" >&2
	echo "       nvmet-target.sh ctl DIR port-down|port-up|kill-conns|sh 'CMD'" >&2
	exit 2
}
[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2

# free_ports N: N TCP ports free on 127.0.0.1 now.
free_ports() {
	python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# ctl_client PORT TIMEOUT_S SCRIPT: run SCRIPT through the control server;
# print its output, exit with its status (255: no answer).
ctl_client() {
	python3 - "$@" <<'PY'
import socket, sys, time

port, timeout, script = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
deadline = time.monotonic() + timeout


def left():
    return max(0.1, deadline - time.monotonic())


def attempt():
    """None when the server did not greet (nothing ran: safe to retry),
    else the bytes after the greeting, up to the end of the connection."""
    try:
        s = socket.create_connection(("127.0.0.1", port),
                                     timeout=min(10, left()))
        buf = b""
        while b"\n" not in buf:
            s.settimeout(min(10, left()))
            d = s.recv(4096)
            if not d:
                s.close()
                return None
            buf += d
    except OSError:
        return None
    line, out = buf.split(b"\n", 1)
    if line != b"NVQ-CTL-HELLO":
        s.close()
        return None
    try:
        s.sendall(script.encode() + b"\nNVQ-CTL-EOF\n")
        while True:
            if time.monotonic() >= deadline:
                raise TimeoutError("timed out")
            s.settimeout(left())
            d = s.recv(65536)
            if not d:
                return out
            out += d
    except OSError as e:
        sys.stdout.buffer.write(out)
        sys.stderr.write(f"nvmet-target: ctl: {e} (the command was sent)\n")
        sys.exit(255)
    finally:
        s.close()


out = attempt()
while out is None:
    if time.monotonic() >= deadline:
        sys.stderr.write("nvmet-target: ctl: the guest's control server "
                         "does not answer\n")
        sys.exit(255)
    time.sleep(0.5)
    out = attempt()

marker = out.rfind(b"\nNVQ-CTL-RC=")
if marker < 0:
    sys.stdout.buffer.write(out)
    sys.stderr.write("nvmet-target: ctl: the connection ended before the "
                     "command's exit status\n")
    sys.exit(255)
sys.stdout.buffer.write(out[:marker])
sys.stdout.flush()
sys.exit(int(out[marker + 12:].split(b"\n")[0]))
PY
}

# icreq_probe PORT: exit 0 when an NVMe/TCP target answers an ICReq on
# 127.0.0.1:PORT with an ICResp.
icreq_probe() {
	python3 - "$1" <<'PY'
import socket, struct, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    # ICReq: type 0, flags 0, hlen 128, pdo 0, plen 128; PFV 0, HPDA 0,
    # no digests, MAXR2T 0.
    s.sendall(struct.pack("<BBBBI", 0, 0, 128, 0, 128) + bytes(120))
    buf = b""
    while len(buf) < 128:
        d = s.recv(128 - len(buf))
        if not d:
            break
        buf += d
    s.close()
except OSError:
    sys.exit(1)
sys.exit(0 if len(buf) == 128 and buf[0] == 1 and buf[2] == 128 else 1)
PY
}

# kill_session SIGNAL SID: signal every process of session SID (the
# supervisor's: timeout(1) puts QEMU in a process group of its own, so
# a group signal would miss it).
kill_session() {
	for p in $(ps -eo pid=,sid= | awk -v s="$2" '$2 == s { print $1 }'); do
		kill "-$1" "$p" 2>/dev/null || true
	done
}

alive() {
	[ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null
}

# stop_guest: ask the guest to power off, then make sure QEMU is gone.
stop_guest() {
	[ -f "$dir/pid" ] || return 0
	pid=$(cat "$dir/pid")
	if alive; then
		if [ -f "$dir/ctl-port" ]; then
			ctl_client "$(cat "$dir/ctl-port")" 10 \
				'touch /tmp/nvq-stop' >/dev/null 2>&1 || true
		fi
		i=0
		while alive && [ $i -lt 60 ]; do
			sleep 0.5
			i=$((i + 1))
		done
		if alive; then
			echo "nvmet-target: the guest did not power off; killing QEMU" >&2
			kill_session TERM "$pid"
			sleep 2
		fi
	fi
	# The supervisor's session: QEMU, run-guest.sh, the watchdog.
	kill_session KILL "$pid"
	rm -f "$dir/pid" "$dir/env"
}

case $cmd in
start)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if alive; then
		echo "nvmet-target: a guest already runs for $dir (stop it first)" >&2
		exit 1
	fi
	. "$here/common.sh"
	nvq_qemu_deps || exit 77
	if ! modprobe -S "$KVER" --show-depends nvmet-tcp >/dev/null 2>&1; then
		echo "SKIP: kernel $KVER has no nvmet-tcp module"
		exit 77
	fi
	if ! command -v python3 >/dev/null 2>&1; then
		echo "SKIP: python3 is needed (the control client)"
		exit 77
	fi
	# The guest's programs: the kernel host's tools and whatever the
	# caller adds.
	progs=
	for p in nvme fio ss; do
		f=$(command -v $p || true)
		if [ -n "$f" ]; then
			progs="$progs $f"
		else
			echo "nvmet-target: no $p on this machine; the guest goes without" >&2
		fi
	done
	progs="$progs ${NVQ_TARGET_PROGRAMS:-}"
	# crc32c: nvmet-tcp's digests. Without it Debian's 6.1 nvmet-tcp
	# refuses a digest ICReq and then oopses freeing the queue.
	mods="nvmet nvmet-tcp nvme-tcp virtio_pci virtio_net loop vfat
		nls_cp437 nls_iso8859-1 nls_utf8 nls_ascii tcp_diag
		crc32c_generic crc32c-intel"
	initrd=$dir/initramfs.cpio.gz
	stale=
	[ -f "$initrd" ] || stale=1
	[ "$(cat "$dir/initramfs.list" 2>/dev/null)" = "$KVER $mods $progs" ] ||
		stale=1
	for f in $progs "$here/guest-init.sh" "$here/build-initramfs.sh"; do
		[ -n "$(find "$f" -newer "$initrd" 2>/dev/null)" ] && stale=1
	done
	if [ -n "$stale" ]; then
		# shellcheck disable=SC2086
		sh "$here/build-initramfs.sh" -m "$mods" "$initrd" "$KVER" \
			$progs >"$dir/initramfs.log" 2>&1 ||
			{ cat "$dir/initramfs.log" >&2; exit 1; }
		echo "$KVER $mods $progs" >"$dir/initramfs.list"
	fi

	mb=${NVQ_TARGET_DISK_MB:-256}
	for d in nvme1 nvme2; do
		rm -f "$dir/$d.img"
		truncate -s "${mb}M" "$dir/$d.img"
	done
	# shellcheck disable=SC2046
	set -- $(free_ports 2)
	port=$1
	cport=$2
	echo "$cport" >"$dir/ctl-port"
	{
		echo "NVQ_TGT_PORT=4420"
		echo "NVQ_TGT_CTL_PORT=5555"
		cat "$here/nvmet-guest.sh"
	} >"$dir/guest.sh"
	rm -f "$dir/console.log" "$dir/run.log"

	lifetime=${NVQ_TARGET_LIFETIME:-7200}
	owner=${NVQ_TARGET_OWNER:-}
	# The supervisor, in a session of its own, its output in DIR only
	# (a test's pipes must not stay open): run-guest.sh in the
	# background (its pid's group is the session) and, with an owner,
	# a watchdog that ends the session when the owner is gone.
	setsid sh -c '
		sh "$0" -k "$1" -i "$2" -s "$3" -t "$4" -l "$5" \
			-m "$6" -c "$7" -- \
			-drive "file=$8/nvme1.img,if=none,id=d1,format=raw,cache=unsafe" \
			-drive "file=$8/nvme2.img,if=none,id=d2,format=raw,cache=unsafe" \
			-device nvme,serial=nvq-target,id=nv0,addr=04.0 \
			-device nvme-ns,drive=d1,bus=nv0,nsid=1,logical_block_size=4096,physical_block_size=4096 \
			-device nvme-ns,drive=d2,bus=nv0,nsid=2,logical_block_size=4096,physical_block_size=4096 \
			-netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$9-:4420,hostfwd=tcp:127.0.0.1:${10}-:5555" \
			-device virtio-net-pci,netdev=net0,addr=03.0 &
		guest=$!
		echo $$ >"$8/pid"
		if [ -n "${11}" ]; then
			while kill -0 "${11}" 2>/dev/null &&
				kill -0 $guest 2>/dev/null; do
				sleep 2
			done
			if kill -0 $guest 2>/dev/null; then
				echo "nvmet-target: owner ${11} is gone; killing the guest"
				for p in $(ps -eo pid=,sid= |
					awk -v s=$$ "\$2 == s { print \$1 }"); do
					[ "$p" = $$ ] || kill -TERM "$p" 2>/dev/null
				done
			fi
		fi
		wait $guest
		echo "nvmet-target: run-guest.sh exited $?"
	' "$here/run-guest.sh" "$KERNEL" "$initrd" "$dir/guest.sh" \
		"$lifetime" "$dir/console.log" "${NVQ_TARGET_MEM:-2G}" \
		"${NVQ_TARGET_CPUS:-2}" "$dir" "$port" "$cport" "$owner" \
		</dev/null >"$dir/run.log" 2>&1 &
	echo $! >"$dir/pid"

	# Up when the guest said so and nvmet answers through the port.
	boot_to=${NVQ_TARGET_BOOT_TIMEOUT:-300}
	t0=$(date +%s)
	ready=
	while [ $(($(date +%s) - t0)) -lt "$boot_to" ]; do
		if ! alive; then
			break
		fi
		if grep -q '^NVQ-TARGET-READY' "$dir/console.log" 2>/dev/null &&
			icreq_probe "$port"; then
			ready=1
			break
		fi
		sleep 1
	done
	if [ -z "$ready" ]; then
		echo "nvmet-target: the target did not come up in" \
			"$(($(date +%s) - t0)) s (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
		tail -n 30 "$dir/console.log" 2>/dev/null | sed 's/^/  | /' >&2
		sed 's/^/  run: /' "$dir/run.log" >&2 || true
		stop_guest
		exit 1
	fi
	h=127.0.0.1
	cat >"$dir/env" <<EOF
NVQ_TCP_HOST=$h NVQ_TCP_PORT=$port
NVQ_TCP_URI_FILE=tcp:$h:$port,nqn=$NQN:file
NVQ_TCP_URI_NVME=tcp:$h:$port,nqn=$NQN:nvme
NVQ_TCP_URI_BOTH=tcp:$h:$port,nqn=$NQN:both
NVQ_TCP_DISC=tcp:$h:$port
NVQ_TCP_CTL_PORT=$cport
EOF
	echo "nvmet-target: up in $(($(date +%s) - t0)) s, kernel $KVER," \
		"console in $dir/console.log" >&2
	cat "$dir/env"
	;;
stop)
	[ -d "$dir" ] || exit 0
	dir=$(cd "$dir" && pwd)
	stop_guest
	rm -f "$dir/nvme1.img" "$dir/nvme2.img"
	;;
status)
	alive
	;;
ctl)
	[ $# -ge 1 ] || usage
	alive || { echo "nvmet-target: no guest runs for $dir" >&2; exit 255; }
	case $1 in
	port-down) script=port_down ;;
	port-up) script=port_up ;;
	kill-conns) script=kill_conns ;;
	sh)
		[ $# -ge 2 ] || usage
		script=$2
		;;
	*) usage ;;
	esac
	ctl_client "$(cat "$dir/ctl-port")" "${NVQ_TARGET_CTL_TIMEOUT:-300}" \
		"$script"
	;;
*)
	usage
	;;
esac
