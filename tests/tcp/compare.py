#!/usr/bin/env python3
"""nvq's JSON against nvme-cli's (the kernel host in the target's guest),
field by field where both name a field.

usage: compare.py disc NVQ.json NVME.json SUBNQN...
         the discovery log: the records of the SUBNQNs and of the
         discovery subsystem, no others, equal in every common field
       compare.py ident NVQ.json NVME.json [IGNORED_KEY...]
         an identify structure (id-ctrl, id-ns): every key nvme-cli
         prints is in nvq's output with the same value, but the IGNORED
         ones (values that differ between two connections: cntlid)
Exit 0 when equal; 1 with the differences on stdout.
"""
import json
import sys

DISC_NQN = "nqn.2014-08.org.nvmexpress.discovery"


def load(path):
    text = open(path, errors="replace").read()
    start = text.find("{")
    if start < 0:
        raise SystemExit(f"{path}: no JSON object in:\n{text[:400]}")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def same(a, b):
    """Values equal, numbers and numeric strings alike (nvme-cli prints
    portid as a number, trsvcid as a string)."""
    if a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        return a.strip() == b.strip()
    try:
        return int(str(a), 0) == int(str(b), 0)
    except ValueError:
        return False


def disc(nvq_path, nvme_path, nqns):
    bad = []
    nvq, nvme = load(nvq_path), load(nvme_path)
    want = set(nqns) | {DISC_NQN}
    recs = {}
    for name, j in (("nvq", nvq), ("nvme-cli", nvme)):
        r = j.get("records")
        if not isinstance(r, list):
            bad.append(f"{name}: no 'records' list")
            continue
        got = [x.get("subnqn") for x in r]
        if sorted(got) != sorted(want):
            bad.append(f"{name}: records for {sorted(got)}, expected "
                       f"{sorted(want)}")
        recs[name] = {x.get("subnqn"): x for x in r}
    if "genctr" in nvq and "genctr" in nvme and \
            not same(nvq["genctr"], nvme["genctr"]):
        bad.append(f"genctr: nvq {nvq['genctr']}, nvme-cli {nvme['genctr']}")
    common = 0
    for nqn in sorted(want):
        a = recs.get("nvq", {}).get(nqn)
        b = recs.get("nvme-cli", {}).get(nqn)
        if a is None or b is None:
            continue
        keys = set(a) & set(b)
        common = max(common, len(keys))
        for k in sorted(keys):
            if not same(a[k], b[k]):
                bad.append(f"{nqn} {k}: nvq {a[k]!r}, nvme-cli {b[k]!r}")
        missing = sorted(set(b) - set(a))
        if missing:
            bad.append(f"{nqn}: nvq lacks {missing}")
    print(f"info: discovery log: {len(want)} records, {common} fields "
          "each compared with nvme-cli's")
    return bad


def ident(nvq_path, nvme_path, ignored):
    bad = []
    nvq, nvme = load(nvq_path), load(nvme_path)
    n = 0
    for k, v in nvme.items():
        if k in ignored:
            continue
        if k not in nvq:
            bad.append(f"{k}: missing in nvq's output (nvme-cli: {v!r})")
            continue
        n += 1
        if isinstance(v, list):
            if len(v) != len(nvq[k]) or any(
                    not same(x, y) for x, y in zip(v, nvq[k])):
                bad.append(f"{k}: nvq {nvq[k]!r}, nvme-cli {v!r}")
        elif not same(nvq[k], v):
            bad.append(f"{k}: nvq {nvq[k]!r}, nvme-cli {v!r}")
    print(f"info: {n} fields equal to nvme-cli's" if not bad else
          f"{n} fields compared")
    return bad


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    if sys.argv[1] == "disc":
        bad = disc(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "ident":
        bad = ident(sys.argv[2], sys.argv[3], set(sys.argv[4:]))
    else:
        raise SystemExit(__doc__)
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


main()
