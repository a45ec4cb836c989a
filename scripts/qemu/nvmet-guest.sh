# shellcheck shell=sh
# The guest side of nvmet-target.sh: sourced by the guest's /init
# (guest-init.sh) from fw_cfg, after the host prepended its settings.
# Brings the network up, loads nvmet and nvmet-tcp, configures the
# target through configfs, starts the control server, prints
#   NVQ-TARGET-READY
# and serves until the host asks it to stop (/tmp/nvq-stop).
#
# Subsystems (allow_any_host), all on port 1 (tcp, 0.0.0.0:4420, which
# the host reaches) and on port 2 (tcp, 0.0.0.0:8009, discovery's
# default port, for hosts in the guest; port-down leaves it alone):
#   nqn.2026-12.io.nvq:file  ns 1: a 64 MiB file, buffered I/O, 512-byte
#                            blocks (see below)
#   nqn.2026-12.io.nvq:nvme  ns 1: /dev/nvme0n1, QEMU's NVMe namespace 1
#                            (4 KiB LBA format) through the nvme driver
#   nqn.2026-12.io.nvq:both  ns 1: a second 64 MiB file; ns 2:
#                            /dev/nvme0n2, QEMU's namespace 2 (4 KiB)
#
# nvmet's file backend exports the file system's block size (capped at
# 4 KiB): a file on tmpfs would have 4 KiB blocks. The files live on a
# FAT file system (512-byte blocks) on a loop device whose image is in
# tmpfs, which gives 512-byte LBAs through the file backend.
#
# Control (port 5555, busybox 'nc -ll -e'): a connection gets a line
# NVQ-CTL-HELLO, sends a script ended by a line NVQ-CTL-EOF, and gets the
# script's output (stdout and stderr) followed by "\nNVQ-CTL-RC=N\n".
# The script runs with the helpers of /tmp/nvq-ctl-lib.sh defined.

: "${NVQ_TGT_FILE_MB:=64}"
: "${NVQ_TGT_PORT:=4420}"
: "${NVQ_TGT_CTL_PORT:=5555}"
: "${NVQ_TGT_HOSTNQN:=nqn.2014-08.org.nvmexpress:uuid:5e1d0c2a-6f7b-4c1e-9a3d-2b8f0e4c7a10}"
: "${NVQ_TGT_HOSTID:=5e1d0c2a-6f7b-4c1e-9a3d-2b8f0e4c7a10}"
NVQ_NQN_PREFIX=nqn.2026-12.io.nvq
NVMET=/sys/kernel/config/nvmet

tgt_net() {
	nvq_load virtio_pci virtio_net || return 1
	ip link set lo up || return 1
	i=0
	while ! ip link show eth0 >/dev/null 2>&1 && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	# QEMU's user network: the guest is 10.0.2.15, the host 10.0.2.2.
	ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 &&
		ip route add default via 10.0.2.2 ||
		{ echo "guest: no eth0"; return 1; }
	echo "guest: eth0 10.0.2.15/24 up"
}

# The PCIe NVMe controller's block device for namespace NSID.
tgt_pcie_ns() {
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = pcie ] || continue
		for n in "$c"/nvme*n*; do
			[ -r "$n/nsid" ] || continue
			[ "$(cat "$n/nsid")" = "$1" ] &&
				{ echo "/dev/$(basename "$n")"; return 0; }
		done
	done
	return 1
}

# tgt_subsys NAME: an allow_any_host subsystem NQN_PREFIX:NAME.
tgt_subsys() {
	d=$NVMET/subsystems/$NVQ_NQN_PREFIX:$1
	mkdir "$d" && echo 1 >"$d/attr_allow_any_host" &&
		echo "nvq-$1" >"$d/attr_serial" 2>/dev/null
	# attr_model exists from 5.x on; not fatal where it does not.
	echo "nvq-target-$1" >"$d/attr_model" 2>/dev/null
	[ -d "$d" ]
}

# tgt_ns NAME NSID PATH BUFFERED
tgt_ns() {
	d=$NVMET/subsystems/$NVQ_NQN_PREFIX:$1/namespaces/$2
	mkdir "$d" && printf '%s' "$3" >"$d/device_path" &&
		echo "$4" >"$d/buffered_io" && echo 1 >"$d/enable" ||
		{ echo "guest: namespace $2 of $1 on $3 failed"; return 1; }
}

tgt_setup() {
	nvq_load nvme nvmet nvmet-tcp nvme-tcp loop vfat nls_cp437 \
		nls_iso8859-1 nls_utf8 nls_ascii || return 1
	modprobe tcp_diag 2>/dev/null # for 'ss -K' (kill-conns)
	# Header and data digests need a crc32c transform loaded first.
	modprobe crc32c-intel 2>/dev/null || modprobe crc32c_generic ||
		echo "guest: no crc32c module: digests will fail"
	mount -t configfs configfs /sys/kernel/config 2>/dev/null
	[ -d $NVMET ] || { echo "guest: no $NVMET"; return 1; }

	# The FAT file system for the file namespaces (two files, each
	# NVQ_TGT_FILE_MB, plus room for the FAT).
	mkdir -p /tgt/img /tgt/fat
	img=/tgt/img/fat.img
	truncate -s $((NVQ_TGT_FILE_MB * 2 + 16))M $img
	loopdev=$(losetup -f) && losetup "$loopdev" $img &&
		mkdosfs -F 32 "$loopdev" >/dev/null &&
		mount -t vfat "$loopdev" /tgt/fat ||
		{ echo "guest: no FAT file system on a loop device"; return 1; }
	for f in file both; do
		dd if=/dev/zero of=/tgt/fat/$f.img bs=1M \
			count="$NVQ_TGT_FILE_MB" 2>/dev/null ||
			{ echo "guest: cannot create /tgt/fat/$f.img"; return 1; }
	done

	i=0
	while ! tgt_pcie_ns 2 >/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	n1=$(tgt_pcie_ns 1) && n2=$(tgt_pcie_ns 2) ||
		{ echo "guest: QEMU's NVMe namespaces did not appear"; return 1; }

	tgt_subsys file && tgt_ns file 1 /tgt/fat/file.img 1 &&
		tgt_subsys nvme && tgt_ns nvme 1 "$n1" 0 &&
		tgt_subsys both && tgt_ns both 1 /tgt/fat/both.img 1 &&
		tgt_ns both 2 "$n2" 0 || return 1

	p=$NVMET/ports/1
	mkdir $p && echo tcp >$p/addr_trtype && echo ipv4 >$p/addr_adrfam &&
		echo 0.0.0.0 >$p/addr_traddr &&
		echo "$NVQ_TGT_PORT" >$p/addr_trsvcid || return 1
	for s in file nvme both; do
		ln -s $NVMET/subsystems/$NVQ_NQN_PREFIX:$s \
			$p/subsystems/$NVQ_NQN_PREFIX:$s || return 1
	done
	# Port 2: discovery's default port (8009) too, for hosts in the
	# guest that leave the port out (nvme discover, nvq discover).
	p=$NVMET/ports/2
	mkdir $p && echo tcp >$p/addr_trtype && echo ipv4 >$p/addr_adrfam &&
		echo 0.0.0.0 >$p/addr_traddr && echo 8009 >$p/addr_trsvcid ||
		return 1
	for s in file nvme both; do
		ln -s $NVMET/subsystems/$NVQ_NQN_PREFIX:$s \
			$p/subsystems/$NVQ_NQN_PREFIX:$s || return 1
	done
	echo "guest: nvmet: file on /tgt/fat/file.img, nvme on $n1," \
		"both on /tgt/fat/both.img + $n2; tcp 0.0.0.0:$NVQ_TGT_PORT" \
		"(port 1) and 0.0.0.0:8009 (port 2, in the guest only)"

	# For nvme-cli (the kernel host) in the guest.
	mkdir -p /etc/nvme
	echo "$NVQ_TGT_HOSTNQN" >/etc/nvme/hostnqn
	echo "$NVQ_TGT_HOSTID" >/etc/nvme/hostid
}

tgt_ctl_server() {
	cat >/tmp/nvq-ctl-lib.sh <<EOF
NVMET=$NVMET
NVQ_NQN_PREFIX=$NVQ_NQN_PREFIX
NVQ_TGT_PORT=$NVQ_TGT_PORT
EOF
	cat >>/tmp/nvq-ctl-lib.sh <<'EOF'
# port_down: unlink every subsystem from port 1. nvmet then closes the
# listening socket and tears down the controllers of the port: the
# hosts' connections break and new ones are refused.
port_down() {
	: >/tmp/nvq-port-links
	for l in $NVMET/ports/1/subsystems/*; do
		[ -L "$l" ] || continue
		basename "$l" >>/tmp/nvq-port-links
		rm "$l" || return 1
	done
	echo "port 1 down: $(wc -l </tmp/nvq-port-links) subsystems unlinked"
}
# port_up: link them again (all three when port_down did not run).
port_up() {
	[ -s /tmp/nvq-port-links ] ||
		printf '%s\n' $NVQ_NQN_PREFIX:file $NVQ_NQN_PREFIX:nvme \
			$NVQ_NQN_PREFIX:both >/tmp/nvq-port-links
	while read -r s; do
		[ -L "$NVMET/ports/1/subsystems/$s" ] && continue
		ln -s "$NVMET/subsystems/$s" "$NVMET/ports/1/subsystems/$s" ||
			return 1
	done </tmp/nvq-port-links
	rm -f /tmp/nvq-port-links
	echo "port 1 up: $(ls $NVMET/ports/1/subsystems | wc -l) subsystems linked"
}
# kill_conns: abort the target's established connections of the port
# (ss -K: SOCK_DESTROY, the kernel has CONFIG_INET_DIAG_DESTROY) and
# leave the port listening. The target sends RSTs; nvmet sees its
# sockets closed and frees the queues.
kill_conns() {
	command -v ss >/dev/null ||
		{ echo "kill-conns: no ss in the guest"; return 1; }
	f="( sport = :$NVQ_TGT_PORT )"
	ss -Htn state established "$f" | awk '{ print $3, $4 }' >/tmp/nvq-kc
	ss -K -tn state established "$f" >/dev/null || return 1
	# The host may have reconnected already: none of the old ones may
	# be left.
	left=$(ss -Htn state established "$f" | awk '{ print $3, $4 }' |
		grep -cxF -f /tmp/nvq-kc)
	echo "kill-conns: $(wc -l </tmp/nvq-kc) established connections" \
		"aborted, $left of them left"
	[ "$left" = 0 ]
}
EOF
	cat >/tmp/nvq-ctl.sh <<'EOF'
#!/bin/sh
echo NVQ-CTL-HELLO
f=/tmp/nvq-ctl.$$
: >$f
while IFS= read -r line; do
	[ "$line" = NVQ-CTL-EOF ] && break
	printf '%s\n' "$line" >>$f
done
(. /tmp/nvq-ctl-lib.sh; . $f) </dev/null 2>&1
rc=$?
printf '\nNVQ-CTL-RC=%d\n' $rc
rm -f $f
EOF
	chmod 755 /tmp/nvq-ctl.sh
	nc -ll -p "$NVQ_TGT_CTL_PORT" -e /tmp/nvq-ctl.sh &
	echo "guest: control server on port $NVQ_TGT_CTL_PORT"
}

tgt_net || return 1
tgt_setup || return 1
tgt_ctl_server
echo "NVQ-TARGET-READY"
# Serve until the host writes /tmp/nvq-stop; guest-init then powers off.
while [ ! -e /tmp/nvq-stop ]; do
	sleep 0.5
done
echo "guest: stopping"
return 0
