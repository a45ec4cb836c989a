#!/bin/bash
# nvq list: the emulated controller with its namespaces, and the PCI NVMe
# controllers with driver and URI (from a fake sysfs tree given in
# NVQ_SYSFS_PCI, since the machine running the tests may have none).
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
mkdir -p "$SYS/0000:01:00.0/nvme/nvme0"
echo "Samsung SSD 970 EVO Plus 1TB            " \
	>"$SYS/0000:01:00.0/nvme/nvme0/model"
echo "S4EWNX0N123456      " >"$SYS/0000:01:00.0/nvme/nvme0/serial"
echo "2B2QEXM7" >"$SYS/0000:01:00.0/nvme/nvme0/firmware_rev"
mkdev 0000:02:00.0 0x010802 0x1b36 0x0010 vfio-pci
mkdev 0000:04:00.0 0x020000 0x8086 0x100e e1000
export NVQ_SYSFS_PCI="$SYS"

if ok list; then
	grep -Eq '^emu: +1 +.*nvq emulated controller' "$TMP/out" ||
		fail "list: no row for emu: namespace 1"
	grep -Eq '^0000:02:00.0 +1b36:0010 +vfio-pci +vfio:0000:02:00.0' \
		"$TMP/out" || fail "list: vfio-pci controller without its URI"
	row='^0000:01:00.0 +144d:a808 +nvme +- \(bind to vfio-pci\) +'
	grep -Eq "${row}Samsung SSD 970 EVO Plus 1TB$" "$TMP/out" ||
		fail "list: nvme-bound controller row"
	grep -Eq '^0000:03:00.0 .* none ' "$TMP/out" ||
		fail "list: driverless controller row"
	grep -q 0000:04:00.0 "$TMP/out" && fail "list: shows a network card"
fi

if ok list -o json; then
	python3 -m json.tool "$TMP/out" >/dev/null ||
		fail "list -o json does not parse"
	pycheck "$TMP/out" "
dev = d['Devices']
assert len(dev) == 1, dev
e = dev[0]
assert e['URI'] == 'emu:' and e['Transport'] == 'emu', e
assert e['NameSpace'] == 1 and e['SectorSize'] == 4096, e
assert e['PhysicalSize'] == 1 << 30 and e['MaximumLBA'] == 1 << 18, e
assert e['ModelNumber'] == 'nvq emulated controller', e
p = d['PCIControllers']
assert [c['Address'] for c in p] == ['0000:01:00.0', '0000:02:00.0',
                                     '0000:03:00.0'], p
assert [c['Driver'] for c in p] == ['nvme', 'vfio-pci', 'none'], p
assert [c['URI'] for c in p] == [None, 'vfio:0000:02:00.0', None], p
assert p[0]['VendorId'] == 0x144d and p[0]['DeviceId'] == 0xa808, p[0]
assert p[0]['ModelNumber'] == 'Samsung SSD 970 EVO Plus 1TB', p[0]
assert p[0]['SerialNumber'] == 'S4EWNX0N123456', p[0]
"
fi

# controllers named on the command line, one with two namespaces
if ok list -o json "emu:size=2M,lbads=9,ns=2" "emu:size=1M"; then
	pycheck "$TMP/out" "
dev = d['Devices']
assert [(e['URI'], e['NameSpace'], e['SectorSize'], e['MaximumLBA'])
        for e in dev] == [('emu:size=2M,lbads=9,ns=2', 1, 512, 4096),
                          ('emu:size=2M,lbads=9,ns=2', 2, 512, 4096),
                          ('emu:size=1M', 1, 4096, 256)], dev
"
fi

# a controller that cannot be opened: exit 1, the rest is still listed
if expect 1 "^nvq: cannot open 'emu:size=banana'" \
	list -o json emu:size=banana emu:; then
	pycheck "$TMP/out" "
assert [e['URI'] for e in d['Devices']] == ['emu:'], d
assert len(d['PCIControllers']) == 3, d
"
fi

# no PCI devices at all (or no sysfs)
NVQ_SYSFS_PCI="$TMP/nonexistent" ok list &&
	{ grep -q "No PCI NVMe controllers found" "$TMP/out" ||
		fail "list without PCI NVMe controllers"; }
NVQ_SYSFS_PCI="$TMP/nonexistent" ok list -o json &&
	pycheck "$TMP/out" "assert d['PCIControllers'] == [], d"

finish
