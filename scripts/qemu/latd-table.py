#!/usr/bin/env python3
"""The tables of nvq-latd's measurements (scripts/latd-host.sh,
scripts/qemu/latd-guest.sh) from the lines scripts/qemu/latd-lib.sh
printed.

usage: latd-table.py LOG [TIMEOUT_MS] [LOAD_BEFORE] [LOAD_AFTER]

Prints the platform, a table of fio's clat per mode (medians over the
rounds), one line per round with the daemon (the CPUs the limit went on,
seen in sysfs, against the ones expected and the ones the daemon
reported; the delays; the daemon's CPU time), the idle residency where
the platform has idle states, and the verdict. Exit 0 when every daemon
round put the limit on exactly the expected CPUs, within the detection
delay, and took it off within timeout + one period; 1 otherwise.
"""
import json
import re
import shlex
import statistics
import sys


def kv(line):
    out = {}
    for tok in shlex.split(line):
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
    return out


def parse(text):
    plat, expect, rounds, jsons, watches = {}, {}, [], {}, {}
    for m in re.finditer(r"NVQ-JSON (\S+)\n(.*?)NVQ-JSON-END", text, re.S):
        body = m.group(2)
        body = body[body.find("{"):body.rfind("}") + 1]
        try:
            jsons[m.group(1)] = json.loads(body)
        except ValueError:
            jsons[m.group(1)] = None
    cur_watch = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("LATD-PLATFORM "):
            plat = kv(line[14:])
        elif line.startswith("LATD-EXPECT "):
            expect = kv(line[12:])
        elif line.startswith("watch "):
            cur_watch = kv(line[6:])
            cur_watch["per_cpu"] = []
        elif line.startswith("watch-cpu ") and cur_watch is not None:
            cur_watch["per_cpu"].append(line[10:])
        elif line.startswith("LATD-ROUND "):
            r = kv(line[11:])
            r["watch"] = cur_watch or {}
            cur_watch = None
            rounds.append(r)
    return plat, expect, rounds, jsons


def fio_stats(j):
    if not j or not j.get("jobs"):
        return None
    rd = j["jobs"][0]["read"]
    clat = rd["clat_ns"]
    pct = clat.get("percentile", {})
    return {
        "iops": rd["iops"],
        "p50": pct.get("50.000000", 0) / 1e3,
        "p99": pct.get("99.000000", 0) / 1e3,
        "max": clat.get("max", 0) / 1e3,
        "runtime_s": rd["runtime"] / 1e3,
    }


def cpus_canon(s):
    """ "0-2,5" -> "0,1,2,5", as latd-lib.sh writes them."""
    out = set()
    for part in str(s).replace(" ", "").split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return ",".join(str(x) for x in sorted(out)) or "-"


def find_disk(j, disk):
    """The status JSON's entry for @disk (tools/latd/status.c)."""
    if not isinstance(j, dict):
        return None
    for d in j.get("disks", []):
        if d.get("name") == disk:
            return d
    return None


def status_mid(j, disk):
    """What the daemon said half-way through the I/O: its activity
    source, the CPUs its limit was on and the value."""
    d = find_disk(j, disk)
    if d is None:
        return None, "no status"
    applied = d.get("applied") or {}
    words = [f"{d.get('activity', '?')}"]
    if j.get("bpf") is False and j.get("bpf_why"):
        words.append(f"(bpf: {j['bpf_why']})")
    cpus = applied.get("cpus")
    words.append(f"on {cpus if cpus else 'no CPUs'}")
    if applied:
        words.append(f"{applied.get('value_us')} us")
    return cpus, " ".join(words)


def status_end(j, disk):
    """After the run: the CPUs of the daemon's queues that applied a
    limit at least once (its own account of where the limit went), and
    its counters."""
    d = find_disk(j, disk)
    if d is None:
        return None, ""
    cpus = set()
    for q in d.get("queues", []):
        if q.get("applies"):
            c = cpus_canon(q.get("cpus", ""))
            if c != "-":
                cpus.update(int(x) for x in c.split(","))
    cl = ",".join(str(x) for x in sorted(cpus)) or "-"
    return cl, (f"queues applied on {cl}: applies {d.get('applies')}, "
                f"releases {d.get('releases')}, "
                f"held {d.get('held_ns', 0) / 1e6:.0f} ms")


def idle_delta(i0, i1):
    a = dict(x.split("=", 1) for x in i0.split() if "=" in x)
    b = dict(x.split("=", 1) for x in i1.split() if "=" in x)
    out = {}
    for k in b:
        if k in a:
            out[k] = int(b[k]) - int(a[k])
    return out


def main():
    log = sys.argv[1]
    tmo = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    load0 = sys.argv[3] if len(sys.argv) > 3 else "?"
    load1 = sys.argv[4] if len(sys.argv) > 4 else "?"
    text = open(log, errors="replace").read()
    plat, expect, rounds, jsons = parse(text)
    disk = expect.get("disk", "?")
    has_idle = plat.get("states", "none") != "none"
    print(f"Platform: kernel {plat.get('kernel', '?')}, CPUs "
          f"{plat.get('cpus', '?')}, cpuidle driver "
          f"{plat.get('cpuidle_driver', '?')}, governor "
          f"{plat.get('governor', '?')}, idle states "
          f"{plat.get('states', 'none')}.")
    if not has_idle:
        print("No idle states here: a CPU latency limit cannot change "
              "wake-up latency on this platform; what the daemon does is "
              "shown below, the latency columns show that it costs "
              "nothing.")
    print(f"Host load average before {load0}, after {load1}; "
          f"{plat.get('load', '?')} where the rounds ran.")
    print(f"Disk {disk}, fio on CPU {expect.get('fio_cpu', '?')}; "
          f"expected limit CPUs ({expect.get('mode', '?')} activity): "
          f"{expect.get('cpus', '?')} [{expect.get('why', '').strip()}]")
    print()

    modes = []
    per_mode = {}
    for r in rounds:
        m = r.get("mode")
        if m not in modes:
            modes.append(m)
        st = fio_stats(jsons.get(f"fio-{r.get('r')}-{m}"))
        r["fio"] = st
        if st:
            per_mode.setdefault(m, []).append(st)
    print("| mode | rounds | IOPS | clat p50 (us) | clat p99 (us) "
          "| clat max (us) |")
    print("|---|---|---|---|---|---|")
    for m in modes:
        v = per_mode.get(m, [])
        if not v:
            print(f"| {m} | 0 | - | - | - | - |")
            continue

        def med(k):
            return statistics.median(x[k] for x in v)

        print(f"| {m} | {len(v)} | {med('iops'):.0f} | {med('p50'):.1f} "
              f"| {med('p99'):.1f} | {med('max'):.1f} |")
    print()

    ok = True
    print("| round | mode | limited CPUs (sysfs) | expected | detect (ms) "
          "| release after disk idle (ms) | after fio (ms) "
          "| longest hold, disk idle (ms) | bound (ms) "
          "| daemon CPU ms (per s of fio, per s idle) | daemon said "
          "| verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rounds:
        w = r.get("watch", {})
        m = r.get("mode")
        seen = w.get("cpus", "?")
        changed = w.get("changed", "?")
        gap = float(w.get("max_gap_ms", "0") or 0)
        det = w.get("detect_ms", "none")
        rel = w.get("release_ms", "none")
        relc = w.get("release_cmd_ms", "none")
        hold = w.get("hold_idle_ms", "0")
        # Detection: BPF wakes the daemon on the first issue, polling
        # looks a fraction of the timeout later: within one timeout.
        # Release: the timer looks every timeout, so at most two
        # timeouts after the disk's last I/O. Both plus the sampler's
        # own longest gap.
        dbound = tmo + gap
        rbound = 2 * tmo + gap
        if m == "latd":
            # Hysteresis on (docs/nvq-latd.md): a queue that bounced
            # waits up to NVQ_QOS_LINGER_MAX (4) more quiet periods.
            rbound = (2 + 4) * tmo + gap
        verdict = []
        if "error" in r:
            verdict.append(r["error"])
        elif m in ("latd", "latd-nohyst"):
            if seen != r.get("expect"):
                verdict.append(f"CPUs {seen} != {r.get('expect')}")
            if changed != seen:
                verdict.append(f"changed {changed}")
            if det == "none" or float(det) > dbound:
                verdict.append(f"detect {det} > {dbound:.1f}")
            # The disk's own I/O (anyone's) may keep a limit on: what
            # must hold is that no limit outlives the disk's last I/O
            # by more than the bound - at the end and in between.
            if float(hold) > rbound:
                verdict.append(f"held {hold} ms with the disk idle "
                               f"> {rbound:.1f}")
            if r.get("restored_by_script"):
                verdict.append("not restored: "
                               f"{r['restored_by_script']}")
            if r.get("daemon_rc") not in ("0", None):
                verdict.append(f"exit {r.get('daemon_rc')}")
        elif changed not in ("-", "?"):
            verdict.append(f"limit without the daemon on {changed}")
        if verdict:
            ok = False
        cpu = "-"
        st = r.get("fio")
        if r.get("daemon_ticks", "-") not in ("-", ""):
            ms = int(r["daemon_ticks"]) * 1000.0 / int(r.get("clk_tck",
                                                             100))
            cpu = f"{ms:.0f}"
            if st and st["runtime_s"]:
                cpu += f" ({ms / st['runtime_s']:.1f}/s)"
            if r.get("daemon_idle_ticks", "-") not in ("-", ""):
                idle = int(r["daemon_idle_ticks"]) * 1000.0 / int(
                    r.get("clk_tck", 100))
                cpu += f", idle {idle:.0f}/s"
        said_s = "-"
        if m in ("latd", "latd-nohyst"):
            # (named per round and mode; logs before latd-nohyst: per
            # round)
            mid = jsons.get(f"status-mid-{r.get('r')}-{m}",
                            jsons.get(f"status-mid-{r.get('r')}"))
            _, said_s = status_mid(mid, disk)
            said_s = "mid-run: " + said_s
            cpus, end = status_end(
                jsons.get(f"status-end-{r.get('r')}-{m}",
                          jsons.get(f"status-end-{r.get('r')}")), disk)
            if end:
                said_s += "; end: " + end
            if cpus is not None and cpus != r.get("expect"):
                verdict.append(f"status says {cpus}")
                ok = False
        print(f"| {r.get('r')} | {m} | {seen} | {r.get('expect')} | {det} "
              f"| {rel} | {relc} | {hold} | {dbound:.1f} / {rbound:.1f} "
              f"| {cpu} "
              f"| {said_s} | {'; '.join(verdict) or 'ok'} |")
    print()
    if has_idle:
        print("Idle residency during fio (us, per CPU and state):")
        for r in rounds:
            d = idle_delta(r.get("idle0", ""), r.get("idle1", ""))
            s = " ".join(f"{k}={v}" for k, v in sorted(d.items()))
            print(f"  round {r.get('r')} {r.get('mode')}: {s}")
    else:
        print("Idle residency: none to show (no cpuidle states).")
    print()
    print("verdict:", "PASS" if ok and rounds else "FAIL")
    return 0 if ok and rounds else 1


if __name__ == "__main__":
    sys.exit(main())
