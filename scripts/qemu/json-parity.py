#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nvme-cli JSON parity for the vfio-nvmecli entry (vfio-test.sh).

usage: json-parity.py CONSOLE.LOG

The guest prints each command's JSON between
    NVQ-JSON-BEGIN TOOL NAME rc=N
    NVQ-JSON-END TOOL NAME
for TOOL nvq (through vfio) and nvme (nvme-cli 2.3 on the kernel driver,
same controller). For every NAME both ran, every key nvme-cli writes must
be in nvq's output with the same JSON type (string, number, bool, array,
object, null), recursively (arrays: the first element), and for the
identity commands the values must be equal too. Exit 0 when they agree,
1 with one line per difference.
"""
import json
import re
import sys

# Commands whose values are the controller's identity: all must agree.
# The others (logs) change as the controller runs: keys and types only.
VALUES_ALL = ("id-ctrl", "id-ns-1", "id-ns-2", "fw-log")
# nvme list: the identity fields of each namespace.
VALUES_LIST = {"NameSpace", "Firmware", "ModelNumber", "SerialNumber",
               "MaximumLBA", "PhysicalSize", "SectorSize", "UsedBytes"}

# Expected differences: (command, path) -> why. A path names object keys
# with '.', array elements with '[]'.
ALLOW = {
    # nvme-cli names the kernel's block device; nvq has no device node,
    # its "URI" (vfio:BDF) is what opens the namespace.
    ("list", "Devices[].DevicePath"):
        "a block device path; nvq lists the URI instead",
}

# nvme fw-log: the one top-level key is the device name ("nvme0"), and
# nvq's is its URI: the objects under them are compared.
DEVICE_KEYED = ("fw-log",)
# nvme list: the devices in the order sysfs gives them; each is compared
# with nvq's namespace of the same NSID.
MATCH_BY = {("list", "Devices"): "NameSpace"}

BEGIN = re.compile(r"NVQ-JSON-BEGIN (\S+) (\S+) rc=(\d+)")
END = re.compile(r"NVQ-JSON-END (\S+) (\S+)")


def jtype(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def blocks(path):
    out = {}
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            m = BEGIN.search(line)
            if m:
                cur = (m.group(1), m.group(2))
                out[cur] = {"rc": int(m.group(3)), "text": []}
                continue
            m = END.search(line)
            if m and cur == (m.group(1), m.group(2)):
                cur = None
                continue
            if cur:
                out[cur]["text"].append(line)
    return out


def compare(cmd, ref, got, path, values, errs):
    key = (cmd, path)
    if key in ALLOW:
        return
    if jtype(ref) != jtype(got):
        errs.append(f"{cmd}: {path or '/'}: nvme-cli has {jtype(ref)} "
                    f"{json.dumps(ref)[:60]}, nvq {jtype(got)} "
                    f"{json.dumps(got)[:60]}")
        return
    if isinstance(ref, dict):
        for k, v in ref.items():
            sub = f"{path}.{k}" if path else k
            if (cmd, sub) in ALLOW:
                continue
            if k not in got:
                errs.append(f"{cmd}: {sub}: missing in nvq's output "
                            f"(nvme-cli: {json.dumps(v)[:60]})")
                continue
            compare(cmd, v, got[k], sub, values, errs)
        return
    if isinstance(ref, list) and key in MATCH_BY:
        k = MATCH_BY[key]
        for r in ref:
            g = [x for x in got if isinstance(x, dict) and
                 isinstance(r, dict) and x.get(k) == r.get(k)]
            if not g:
                want = r.get(k) if isinstance(r, dict) else r
                errs.append(f"{cmd}: {path}: nvq has no element with "
                            f"{k} {json.dumps(want)}")
            else:
                compare(cmd, r, g[0], path + "[]", values, errs)
        return
    if isinstance(ref, list):
        if ref and not got:
            errs.append(f"{cmd}: {path}: nvq's array is empty")
        elif ref:
            compare(cmd, ref[0], got[0], path + "[]", values, errs)
        return
    leaf = path.rsplit(".", 1)[-1].replace("[]", "")
    if (values == "all" or leaf in values) and ref != got:
        errs.append(f"{cmd}: {path}: nvme-cli {json.dumps(ref)}, "
                    f"nvq {json.dumps(got)}")


def main():
    b = blocks(sys.argv[1])
    names = sorted({n for (t, n) in b if t == "nvme"} &
                   {n for (t, n) in b if t == "nvq"})
    if not names:
        print("json-parity: no JSON from the guest")
        return 1
    errs = []
    for n in names:
        ref, got = b[("nvme", n)], b[("nvq", n)]
        if ref["rc"] != 0:
            # nvme-cli failed (the controller lacks the page): so must nvq.
            if got["rc"] == 0:
                errs.append(f"{n}: nvme-cli failed (exit {ref['rc']}), "
                            "nvq did not")
            else:
                print(f"json-parity: {n}: both refused (nvme-cli exit "
                      f"{ref['rc']}, nvq {got['rc']})")
            continue
        if got["rc"] != 0:
            errs.append(f"{n}: nvq failed (exit {got['rc']})")
            continue
        try:
            rj = json.loads("\n".join(ref["text"]))
            gj = json.loads("\n".join(got["text"]))
        except ValueError as e:
            errs.append(f"{n}: not JSON: {e}")
            continue
        values = "all" if n in VALUES_ALL else (
            VALUES_LIST if n == "list" else ())
        before = len(errs)
        if n in DEVICE_KEYED:
            if len(rj) != 1 or len(gj) != 1:
                errs.append(f"{n}: not one device object each: "
                            f"{list(rj)} / {list(gj)}")
                continue
            rj = next(iter(rj.values()))
            gj = next(iter(gj.values()))
        compare(n, rj, gj, "", values, errs)
        if len(errs) == before:
            print(f"json-parity: {n}: every nvme-cli key in nvq's output"
                  + (", same values" if values else ", same types"))
    for e in errs:
        print("json-parity: FAIL: " + e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
