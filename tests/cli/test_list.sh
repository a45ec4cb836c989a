#!/bin/bash
# nvq list: every namespace in nvme list's columns - the emulated
# controller's, those of PCI functions bound to vfio-pci (one that cannot
# be opened says why in its row), the kernel's block devices (plain and
# native multipath naming) - then the PCI NVMe controllers with driver
# and URI. From a fake sysfs tree (NVQ_SYSFS_PCI, NVQ_SYSFS_NVME_SUBSYS,
# NVQ_PCI_IDS: test aids), since the machine running the tests may have
# no NVMe device.
. "$(dirname "$0")/lib.sh"
need_python

pycheck() {
	python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$2" "$1" || fail "JSON check failed: $2"
}

# A fake /sys/bus/pci/devices: an NVMe controller on nvme, one on
# vfio-pci, one without a driver, and a network card.
SYS="$TMP/sys"
mkdev() { # BDF CLASS VENDOR DEVICE DRIVER
	mkdir -p "$SYS/$1"
	echo "$2" >"$SYS/$1/class"
	echo "$3" >"$SYS/$1/vendor"
	echo "$4" >"$SYS/$1/device"
	[ -n "$5" ] && ln -s "../../../bus/pci/drivers/$5" "$SYS/$1/driver"
	return 0
}
mkdev 0000:03:00.0 0x010802 0x1b36 0x0010 ""
mkdev 0000:01:00.0 0x010802 0x144d 0xa808 nvme
C="$SYS/0000:01:00.0/nvme/nvme0"
mkdir -p "$C"
echo "Samsung SSD 970 EVO Plus 1TB            " >"$C/model"
echo "S4EWNX0N123456      " >"$C/serial"
echo "2B2QEXM7" >"$C/firmware_rev"
mkns() { # DIR NSID SECTORS LBA_SIZE [METADATA_BYTES]
	mkdir -p "$1/queue"
	echo "$2" >"$1/nsid"
	echo "$3" >"$1/size"
	echo "$4" >"$1/queue/logical_block_size"
	[ -n "${5:-}" ] && echo "$5" >"$1/metadata_bytes"
	return 0
}
mkns "$C/nvme0n1" 1 2048 512 0      # 1 MiB of 512-byte blocks
mkns "$C/nvme0n2" 2 16384 4096 8    # 8 MiB of 4 KiB + 8
# native multipath: controller nvme2 of subsystem 1, path nvme1c2n1, whose
# block device nvme1n1 lives in the subsystem
mkdev 0000:05:00.0 0x010802 0x8086 0x0a54 nvme
C="$SYS/0000:05:00.0/nvme/nvme2"
mkdir -p "$C/nvme1c2n1"
echo "INTEL SSDPE2KX010T8" >"$C/model"
echo "PHLJ0001" >"$C/serial"
echo "VDV10131" >"$C/firmware_rev"
SUB="$TMP/subsys"
mkns "$SUB/nvme-subsys1/nvme1n1" 3 8192 4096
mkdev 0000:02:00.0 0x010802 0x1b36 0x0010 vfio-pci
mkdev 0000:04:00.0 0x020000 0x8086 0x100e e1000
printf '144d  Samsung Electronics Co Ltd\n\ta808  NVMe SSD SM981\n' \
	>"$TMP/pci.ids"
export NVQ_SYSFS_PCI="$SYS" NVQ_SYSFS_NVME_SUBSYS="$SUB"
export NVQ_PCI_IDS="$TMP/pci.ids"

# row PATTERN WHAT: a line of the output matches PATTERN (grep -E)
row() {
	grep -Eq -- "$1" "$TMP/out" || { fail "list: $2" && show_output; }
}
if ok list; then
	row '^Node +Generic +SN +Model +Namespace +Usage +Format +FW Rev$' \
		"nvme list's header"
	row '^emu:/1 +- +[^ ]+ +nvq emulated controller +1 +1\.07 +GB / +1\.07 +GB +4 KiB \+ +0 B +1\.0$' \
		"no row for emu: namespace 1"
	row '^/dev/nvme0n1 +/dev/ng0n1 +S4EWNX0N123456 +Samsung SSD 970 EVO Plus 1TB +1 +- / +1\.05 +MB +512 +B \+ +0 B +2B2QEXM7$' \
		"kernel namespace nvme0n1"
	row '^/dev/nvme0n2 +/dev/ng0n2 .* +2 +- / +8\.39 +MB +4 KiB \+ +8 B +2B2QEXM7$' \
		"kernel namespace nvme0n2"
	# multipath: the head's block device, the path's generic device, and
	# no metadata size where sysfs has none
	row '^/dev/nvme1n1 +/dev/ng2n1 +PHLJ0001 +INTEL SSDPE2KX010T8 +3 +- / +4\.19 +MB +4 KiB +VDV10131$' \
		"multipath namespace nvme1n1"
	# not openable here (no such device behind the fake sysfs): its row
	# says why, and the list goes on
	row '^vfio:0000:02:00.0 +- .*\(cannot open: vfio: no PCI device 0000:02:00.0' \
		"vfio-pci function that cannot be opened"
	row '^0000:02:00.0 +1b36:0010 +vfio-pci +vfio:0000:02:00.0' \
		"vfio-pci controller without its URI"
	row '^0000:01:00.0 +144d:a808 +nvme +- \(/dev/nvme0\) +Samsung SSD 970 EVO Plus 1TB$' \
		"nvme-bound controller row"
	row '^0000:05:00.0 +8086:0a54 +nvme +- \(/dev/nvme2\) +INTEL' \
		"multipath controller row"
	grep -Eq '^0000:03:00.0 .* none ' "$TMP/out" ||
		fail "list: driverless controller row"
	grep -q 0000:04:00.0 "$TMP/out" && fail "list: shows a network card"
fi

if ok list -o json; then
	python3 -m json.tool "$TMP/out" >/dev/null ||
		fail "list -o json does not parse"
	pycheck "$TMP/out" "
dev = d['Devices']
assert len(dev) == 4, dev
# nvme-cli 2.3's keys, and nvq's own
keys = {'NameSpace', 'DevicePath', 'Firmware', 'Index', 'ModelNumber',
        'ProductName', 'SerialNumber', 'UsedBytes', 'MaximumLBA',
        'PhysicalSize', 'SectorSize', 'URI', 'Transport'}
for e in dev:
    assert keys <= set(e), (keys - set(e), e)
e = dev[0]
assert e['URI'] == 'emu:' and e['Transport'] == 'emu', e
assert e['DevicePath'] == 'emu:/1' and e['Index'] == -1, e
assert e['NameSpace'] == 1 and e['SectorSize'] == 4096, e
assert e['PhysicalSize'] == 1 << 30 and e['MaximumLBA'] == 1 << 18, e
assert e['ModelNumber'] == 'nvq emulated controller', e
k = dev[1]
assert k['URI'] is None and k['Transport'] == 'pcie', k
assert k['DevicePath'] == '/dev/nvme0n1' and k['Index'] == 0, k
assert k['GenericPath'] == '/dev/ng0n1' and k['Address'] == '0000:01:00.0'
assert k['NameSpace'] == 1 and k['SectorSize'] == 512, k
assert k['MaximumLBA'] == 2048 and k['PhysicalSize'] == 1 << 20, k
assert k['UsedBytes'] is None, k   # NUSE needs a command nvq does not send
assert k['SerialNumber'] == 'S4EWNX0N123456', k
assert k['Firmware'] == '2B2QEXM7', k
assert k['ProductName'] == ('Non-Volatile memory controller: '
                            'Samsung Electronics Co Ltd NVMe SSD SM981'), k
k = dev[2]
assert (k['DevicePath'], k['NameSpace'], k['SectorSize'],
        k['MaximumLBA']) == ('/dev/nvme0n2', 2, 4096, 2048), k
m = dev[3]
assert (m['DevicePath'], m['GenericPath'], m['Index'], m['NameSpace'],
        m['MaximumLBA']) == ('/dev/nvme1n1', '/dev/ng2n1', 2, 3, 1024), m
assert m['ProductName'] == ('Non-Volatile memory controller: '
                            'Vendor 8086 Device 0a54'), m
p = d['PCIControllers']
assert [c['Address'] for c in p] == ['0000:01:00.0', '0000:02:00.0',
                                     '0000:03:00.0', '0000:05:00.0'], p
assert [c['Driver'] for c in p] == ['nvme', 'vfio-pci', 'none', 'nvme'], p
assert [c['URI'] for c in p] == [None, 'vfio:0000:02:00.0', None, None], p
assert p[0]['VendorId'] == 0x144d and p[0]['DeviceId'] == 0xa808, p[0]
assert p[0]['ModelNumber'] == 'Samsung SSD 970 EVO Plus 1TB', p[0]
assert p[0]['SerialNumber'] == 'S4EWNX0N123456', p[0]
assert p[0]['Controllers'] == ['/dev/nvme0'], p[0]
assert p[3]['Controllers'] == ['/dev/nvme2'], p[3]
assert 'no PCI device 0000:02:00.0' in p[1]['Error'], p[1]
assert 'Error' not in p[0], p[0]
"
fi

# controllers named on the command line, one with two namespaces
if ok list -o json "emu:size=2M,lbads=9,ns=2" "emu:size=1M"; then
	pycheck "$TMP/out" "
dev = [e for e in d['Devices'] if e['Transport'] == 'emu']
assert [(e['URI'], e['NameSpace'], e['SectorSize'], e['MaximumLBA'])
        for e in dev] == [('emu:size=2M,lbads=9,ns=2', 1, 512, 4096),
                          ('emu:size=2M,lbads=9,ns=2', 2, 512, 4096),
                          ('emu:size=1M', 1, 4096, 256)], dev
"
fi

# a URI with /NSID lists that namespace alone; Node/DevicePath is the
# URI that opens each namespace
if ok list "emu:size=2M,ns=2/2" "emu:size=1M,ns=2"; then
	row '^emu:size=2M,ns=2/2 +- ' "the namespace a /NSID names"
	grep -q '^emu:size=2M,ns=2/1 ' "$TMP/out" &&
		fail "list: a /NSID URI lists other namespaces"
	row '^emu:size=1M,ns=2/1 ' "URI/1 for namespace 1"
	row '^emu:size=1M,ns=2/2 ' "URI/2 for namespace 2"
fi
if ok list -o json "emu:size=2M,ns=2/2"; then
	pycheck "$TMP/out" "
e = [e for e in d['Devices'] if e['Transport'] == 'emu']
assert [(x['URI'], x['DevicePath'], x['NameSpace']) for x in e] == \
    [('emu:size=2M,ns=2/2', 'emu:size=2M,ns=2/2', 2)], e
"
fi

# Active namespaces nvq refused (64-bit guard PI here): a row each with
# the library's reason, not "(no active namespaces)"; by NSID among those
# it drives; JSON's Devices stay the namespaces that can be opened.
PIF2=emu:ms=16,pi=2,elbaf=0x100
why='not driven by nvq: its protection information has a 64-bit guard'
if ok list "$PIF2,ns=2" "$PIF2,ns=2/2"; then
	row "^$PIF2,ns=2/1 +- +[^ ]+ +nvq emulated controller +1 \\($why .*\\) 1\\.0\$" \
		"refused namespace 1 with its reason"
	row "^$PIF2,ns=2/2 +- +[^ ]+ +nvq emulated controller +2 \\($why" \
		"refused namespace 2 with its reason"
	[ "$(grep -c "^$PIF2,ns=2/2 " "$TMP/out")" = 2 ] ||
		{ fail "list: a /NSID URI of a refused namespace" && show_output; }
	grep -q "no active namespaces" "$TMP/out" &&
		{ fail "list: refused namespaces called inactive" && show_output; }
fi
if ok list -o json "$PIF2"; then
	pycheck "$TMP/out" "
assert [e for e in d['Devices'] if e['Transport'] == 'emu'] == [], d
"
fi

# a controller that cannot be opened: exit 1, the rest is still listed
if expect 1 "^nvq: cannot open 'emu:size=banana'" \
	list -o json emu:size=banana emu:; then
	pycheck "$TMP/out" "
assert [e['URI'] for e in d['Devices']] == ['emu:', None, None, None], d
assert len(d['PCIControllers']) == 4, d
"
fi

# no PCI devices at all (or no sysfs)
NVQ_SYSFS_PCI="$TMP/nonexistent" ok list &&
	{ grep -q "No PCI NVMe controllers found" "$TMP/out" ||
		fail "list without PCI NVMe controllers"; }
NVQ_SYSFS_PCI="$TMP/nonexistent" ok list -o json &&
	pycheck "$TMP/out" "assert d['PCIControllers'] == [], d"

finish
