# Shared by the nvq-latd daemon tests: sourced with nvq-latd's path as $1.
# Builds a fixture tree (sysfs, procfs, dev) under $TMP/root, starts the
# daemon on it with the poll activity source, and checks the fake PM QoS
# files. Nothing here touches the real /sys, /proc or /run.
set -u

LATD=${1:-}
if [ -z "$LATD" ] || [ ! -x "$LATD" ]; then
	echo "usage: $0 path/to/nvq-latd" >&2
	exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nvq-latd.XXXXXX") || exit 1
R=$TMP/root
S=$R/sys
P=$R/proc
D=$R/dev
SOCK=$TMP/latd.sock
export NVQ_LATD_SOCKET=$SOCK
unset NVQ_SYSFS_ROOT NOTIFY_SOCKET
fails=0
pids=""

cleanup() {
	local p
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

finish() {
	if [ "$fails" -ne 0 ]; then
		echo "$fails check(s) failed" >&2
		exit 1
	fi
	exit 0
}

put() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
}

qos_file() {
	echo "$S/devices/system/cpu/cpu$1/power/pm_qos_resume_latency_us"
}

# The machine: 4 CPUs, no cpuidle states (as the VMs here), every PM QoS
# file at "0" (no constraint).
build_cpus() {
	local c
	put "$S/devices/system/cpu/online" "0-3"
	put "$S/devices/system/cpu/possible" "0-3"
	put "$S/devices/system/cpu/cpuidle/current_driver" "none"
	for c in 0 1 2 3; do
		put "$(qos_file $c)" 0
	done
}

# nvme_disk FN CTRL DISK DEVNO IRQ0 AFF0 AFF1: an nvme-pci disk with two
# hardware queues (CPUs "0, 1" and "2, 3"), interrupts IRQ0 and IRQ0+1 on
# CPUs AFF0 and AFF1.
nvme_disk() {
	local fn=$S/devices/pci0000:00/$1 ctrl=$2 disk=$3 devno=$4
	local irq0=$5 dir
	mkdir -p "$S/bus/pci/drivers/nvme"
	mkdir -p "$fn"
	ln -sfn ../../../bus/pci/drivers/nvme "$fn/driver"
	put "$fn/nvme/nvme$ctrl/transport" pcie
	ln -sfn "../../../$1" "$fn/nvme/nvme$ctrl/device"
	dir=$fn/nvme/nvme$ctrl/$disk
	put "$dir/dev" "$devno"
	ln -sfn "../../nvme$ctrl" "$dir/device"
	put "$dir/mq/0/cpu_list" "0, 1"
	put "$dir/mq/1/cpu_list" "2, 3"
	put "$dir/stat" "       0        0        0        0        0        0        0        0        0        0        0        0        0        0        0        0        0"
	mkdir -p "$S/block" "$S/class/block"
	ln -sfn "../devices/pci0000:00/$1/nvme/nvme$ctrl/$disk" "$S/block/$disk"
	ln -sfn "../../devices/pci0000:00/$1/nvme/nvme$ctrl/$disk" \
		"$S/class/block/$disk"
	put "$P/irq/$irq0/effective_affinity_list" "$6"
	put "$P/irq/$((irq0 + 1))/effective_affinity_list" "$7"
	printf '%4d:          0          0          0          0  IR-PCI-MSIX-%s  1-edge      nvme%dq1\n' \
		"$irq0" "$1" "$ctrl" >>"$P/interrupts"
	printf '%4d:          0          0          0          0  IR-PCI-MSIX-%s  2-edge      nvme%dq2\n' \
		"$((irq0 + 1))" "$1" "$ctrl" >>"$P/interrupts"
	mkdir -p "$D/disk/by-id"
	: >"$D/$disk"
}

build_tree() {
	rm -rf "$R"
	mkdir -p "$S" "$P" "$D"
	printf '           CPU0       CPU1       CPU2       CPU3\n' >"$P/interrupts"
	build_cpus
	nvme_disk 0000:00:04.0 0 nvme0n1 259:0 40 1 3
	nvme_disk 0000:00:05.0 1 nvme1n1 259:1 50 0 2
	ln -sfn ../../nvme0n1 "$D/disk/by-id/nvme-FAKE_SERIAL0"
}

# bump DISK: one more read completed on DISK's fake stat file.
bump() {
	local f=$S/block/$1/stat v
	v=$(awk '{ print $1 + 1 }' "$f")
	printf '%8d        0        0        0        0        0        0        0        0        0        0        0        0        0        0        0        0\n' \
		"$v" >"$f.new"
	mv -f "$f.new" "$f"
}

# start ARGS...: nvq-latd on the tree in the background, stderr to
# $TMP/log; waits until it answers on its socket. Sets $LPID.
start() {
	"$LATD" --sysfs-root "$S" --procfs-root "$P" --dev-root "$D" \
		--socket "$SOCK" "$@" >"$TMP/out" 2>"$TMP/log" &
	LPID=$!
	pids="$pids $LPID"
	wait_for "the daemon's socket" answers
}

answers() {
	"$LATD" status --socket "$SOCK" >/dev/null 2>&1
}

# wait_for WHAT CMD...: poll CMD until it succeeds; a generous bound only
# guards against a hang (never a timing assertion).
wait_for() {
	local what=$1 i
	shift
	for i in $(seq 1 600); do
		"$@" && return 0
		if [ -n "${LPID:-}" ] && ! kill -0 "$LPID" 2>/dev/null; then
			fail "nvq-latd died while waiting for $what"
			sed 's/^/    log: /' "$TMP/log" >&2
			return 1
		fi
		sleep 0.1
	done
	fail "timed out waiting for $what"
	sed 's/^/    log: /' "$TMP/log" >&2
	return 1
}

# is CPU VALUE: the fake PM QoS file of CPU holds VALUE.
is() {
	[ "$(cat "$(qos_file "$1")")" = "$2" ]
}

# stop: SIGTERM, and wait for the exit status (in $RC).
stop() {
	kill -TERM "$LPID"
	wait "$LPID"
	RC=$?
}

# bpf_real_disk: for the BPF tests, a real disk whose requests the program
# will see: $disk (the root file system's, else the first one), $devno its
# "MAJ:MIN", and $rfile, what to read from it with O_DIRECT: a file on
# its file system (nvq-latd itself; /dev/DISK cannot be opened where a
# device cgroup says no), else /dev/DISK. Never writes. Skips (77) where
# there is none.
bpf_real_disk() {
	local d f dev p
	disk=$(lsblk -no PKNAME "$(findmnt -no SOURCE / 2>/dev/null)" 2>/dev/null | head -1)
	if [ -z "$disk" ]; then
		dev=$(findmnt -no SOURCE / 2>/dev/null)
		case $dev in /dev/*) [ -d "/sys/block/${dev#/dev/}" ] && disk=${dev#/dev/} ;; esac
	fi
	if [ -z "$disk" ]; then
		for d in /sys/block/*; do
			case ${d##*/} in loop* | ram* | zram* | dm-* | md* | sr*) continue ;; esac
			disk=${d##*/}
			break
		done
	fi
	if [ -z "$disk" ] || [ ! -r "/sys/block/$disk/dev" ]; then
		echo "SKIP: no disk found" >&2
		exit 77
	fi
	devno=$(cat "/sys/block/$disk/dev")
	rfile=
	for f in "$LATD" "$(command -v bash)"; do
		dev=$(stat -L -c '%Hd:%Ld' "$f" 2>/dev/null) || continue
		p=$(readlink -f "/sys/dev/block/$dev" 2>/dev/null) || continue
		[ -e "$p/partition" ] && p=$(dirname "$p")
		if [ "${p##*/}" = "$disk" ]; then
			rfile=$f
			break
		fi
	done
	[ -n "$rfile" ] || rfile=/dev/$disk
	if ! dd if="$rfile" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
		echo "SKIP: cannot read $rfile (on $disk) with O_DIRECT" >&2
		exit 77
	fi
}

need_python() {
	if ! command -v python3 >/dev/null 2>&1; then
		echo "SKIP: python3 not found" >&2
		exit 77
	fi
}
