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
identity commands the values must be equal too. NAMEs get-log-LID are
get-log's hex dumps (nvme-cli prints no JSON for them): the same layout,
header and offsets. Then nvq's logs must be sane on their own (sanity()):
the SMART counters show the guest's 8 blocks of I/O, get-log's raw pages
equal what smart-log and error-log decoded, fw-log names id-ctrl's
firmware revision, error-log has ELPE + 1 entries. Exit 0 when all
agree, 1 with one line per difference.
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


HEXROW = re.compile(r"^([0-9a-f]{4,}): ((?:[0-9a-f]{2} ){1,16})")
HEXHEAD = re.compile(r"^Device:\S+ log-id:(\d+) namespace-id:0x[0-9a-f]+$")


def hexdump(text):
    """get-log's dump: (header log-id, [row offsets], bytes) or None."""
    lines = [x for x in text if x.strip()]
    if not lines:
        return None
    m = HEXHEAD.match(lines[0].strip())
    if not m:
        return None
    offs, data = [], bytearray()
    for line in lines[1:]:
        r = HEXROW.match(line)
        if r:
            offs.append(r.group(1))
            data += bytes.fromhex(r.group(2).replace(" ", ""))
    return int(m.group(1)), offs, bytes(data)


def compare_hexdump(n, ref, got, errs):
    r, g = hexdump(ref["text"]), hexdump(got["text"])
    if not r or not g:
        errs.append(f"{n}: not get-log's dump: nvme-cli "
                    f"{ref['text'][:1]}, nvq {got['text'][:1]}")
        return
    if r[0] != g[0] or r[1] != g[1] or len(r[2]) != len(g[2]):
        errs.append(f"{n}: layout differs: nvme-cli log-id {r[0]}, "
                    f"{len(r[1])} rows, {len(r[2])} bytes; nvq log-id "
                    f"{g[0]}, {len(g[1])} rows, {len(g[2])} bytes")
        return
    print(f"json-parity: {n}: get-log's dump in nvme-cli's layout "
          f"({len(g[2])} bytes)")


def le(b, off, size):
    return int.from_bytes(b[off:off + size], "little")


def sanity(b, errs):
    """nvq's logs on their own, and against each other."""
    def js(name):
        blk = b.get(("nvq", name))
        if not blk or blk["rc"] != 0:
            errs.append(f"sanity: nvq {name} missing or failed")
            return None
        try:
            return json.loads("\n".join(blk["text"]))
        except ValueError as e:
            errs.append(f"sanity: nvq {name}: not JSON: {e}")
            return None

    def raw(name, size):
        blk = b.get(("nvq", name))
        d = hexdump(blk["text"]) if blk and blk["rc"] == 0 else None
        if not d or len(d[2]) != size:
            errs.append(f"sanity: nvq {name}: no {size}-byte dump")
            return None
        return d[2]

    before = len(errs)
    idc, sm, fw, el = (js("id-ctrl"), js("smart-log"), js("fw-log"),
                       js("error-log"))
    page2, page1 = raw("get-log-2", 512), raw("get-log-1", 256)
    if sm is not None:
        def cnt(k):
            v = sm.get(k)
            if not isinstance(v, str) or not v.isdigit():
                errs.append(f"sanity: smart-log {k}: {v!r} is not a "
                            "decimal string")
                return -1
            return int(v)
        if sm.get("critical_warning") != 0:
            errs.append(f"sanity: smart-log critical_warning "
                        f"{sm.get('critical_warning')}")
        if not 273 <= sm.get("temperature", 0) <= 373:
            errs.append(f"sanity: smart-log temperature "
                        f"{sm.get('temperature')} K")
        for k, hi in (("avail_spare", 100), ("spare_thresh", 100),
                      ("percent_used", 255)):
            if not 0 <= sm.get(k, -1) <= hi:
                errs.append(f"sanity: smart-log {k} {sm.get(k)}")
        # the guest wrote and read 8 blocks of 512 bytes: one data unit
        # (1000 x 512 bytes, rounded up) and one command each way at least
        for k in ("data_units_read", "data_units_written",
                  "host_read_commands", "host_write_commands"):
            if cnt(k) < 1:
                errs.append(f"sanity: smart-log {k} {sm.get(k)!r} after "
                            "8 blocks of I/O")
        # the same page, raw: the counters did not move in between
        if page2 is not None:
            for k, off, size in (
                    ("critical_warning", 0, 1), ("temperature", 1, 2),
                    ("avail_spare", 3, 1), ("spare_thresh", 4, 1),
                    ("percent_used", 5, 1), ("data_units_read", 32, 16),
                    ("data_units_written", 48, 16),
                    ("host_read_commands", 64, 16),
                    ("host_write_commands", 80, 16),
                    ("media_errors", 160, 16),
                    ("num_err_log_entries", 176, 16)):
                v = sm.get(k)
                v = int(v) if isinstance(v, str) and v.isdigit() else v
                if le(page2, off, size) != v:
                    errs.append(f"sanity: smart-log {k} {v!r}, get-log "
                                f"02h bytes {off}..{off + size - 1}: "
                                f"{le(page2, off, size)}")
    if fw is not None and idc is not None:
        # The active slot's revision, as nvme-cli writes it: the 8 bytes
        # as a number, then as text. (Not id-ctrl's FR: QEMU reports
        # "1.0" in FRS1 and its own version in FR.)
        slots = next(iter(fw.values())) if len(fw) == 1 else {}
        act = slots.get("Active Firmware Slot (afi)", 0) & 7
        rev = str(slots.get(f"Firmware Rev Slot {act}", ""))
        m = re.match(r"^(\d+) \((.*)\)$", rev)
        text = (int(m.group(1)).to_bytes(8, "little").decode(
            "ascii", "replace").rstrip(" \0") if m else "")
        if not 1 <= act <= 7 or not text or not m.group(2).startswith(text):
            errs.append(f"sanity: fw-log: active slot {act}, revision "
                        f"{rev!r}")
    if el is not None and idc is not None:
        ents = el.get("errors", [])
        want = min(idc.get("elpe", 0) + 1, 256)
        counts = [e.get("error_count") for e in ents]
        if len(ents) != want:
            errs.append(f"sanity: error-log: {len(ents)} entries, "
                        f"id-ctrl elpe + 1 = {want}")
        elif page1 is not None:
            k = min(len(ents), len(page1) // 64)
            if counts[:k] != [le(page1, 64 * i, 8) for i in range(k)]:
                errs.append(f"sanity: error-log error_count {counts[:k]}"
                            ", get-log 01h another")
        nz = [c for c in counts if c]
        if nz != sorted(nz, reverse=True):
            errs.append(f"sanity: error-log not newest first: {counts}")
        if sm is not None and nz and max(nz) > int(
                sm.get("num_err_log_entries", "0")):
            errs.append(f"sanity: error-log error_count {max(nz)} above "
                        "smart-log num_err_log_entries "
                        f"{sm.get('num_err_log_entries')}")
    if len(errs) == before:
        print("json-parity: nvq's logs sane: SMART counters after the "
              "I/O, get-log's raw pages equal the decoded ones, fw-log "
              "and error-log agree with id-ctrl")


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
        if n.startswith("get-log-"):
            compare_hexdump(n, ref, got, errs)
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
    sanity(b, errs)
    for e in errs:
        print("json-parity: FAIL: " + e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
