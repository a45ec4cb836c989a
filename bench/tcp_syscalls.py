#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Syscalls and CPU time per I/O of nvq-perf on an NVMe/TCP target, two
builds side by side.

usage: bench/tcp_syscalls.py URI NVQ_PERF_A NVQ_PERF_B [ROUNDS] [-- ARGS]

Runs A B A B ... (ROUNDS of each, 3 by default) of
  nvq-perf -d URI --rw randread --bs 4k --qd 32 --time 5s --mode wait
(or ARGS after --) under `perf stat` counting syscall entries (all of
them, and the socket and wait calls one by one), and prints per run and
as medians: IOPS, syscalls per I/O, socket syscalls (send/recv) per
I/O, the process's CPU time per I/O (nvq-perf's getrusage figure) and
the load average when the run started. The counts include start-up
(connect, Identify), a few hundred calls: small against 5 s of I/O.

A target: sh scripts/qemu/nvmet-target.sh start DIR (prints the URIs).
Needs perf with the syscalls tracepoints (root, or perf_event_paranoid
low enough); exits 77 without them.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

EVENTS = ['recvfrom', 'recvmsg', 'sendmsg', 'sendto', 'epoll_wait',
          'futex', 'poll', 'sched_yield']
DEFAULT = ['--rw', 'randread', '--bs', '4k', '--qd', '32', '--time', '5s',
           '--mode', 'wait']


def run(perf_bin, uri, args, tmp):
    ev = ','.join(['raw_syscalls:sys_enter'] +
                  ['syscalls:sys_enter_' + e for e in EVENTS])
    out = os.path.join(tmp, 'perf.txt')
    load = os.getloadavg()
    p = subprocess.run(['perf', 'stat', '-x,', '-o', out, '-e', ev,
                        perf_bin, '-d', uri, '--json'] + args,
                       capture_output=True, text=True)
    if p.returncode:
        sys.exit('%s failed (%d): %s' % (perf_bin, p.returncode,
                                         p.stderr.strip()[-2000:]))
    job = json.loads(p.stdout)['jobs'][0]
    ios = sum(job[d]['total_ios'] for d in ('read', 'write'))
    counts = {}
    with open(out) as f:
        for line in f:
            parts = line.strip().split(',')
            if len(parts) > 3 and parts[0].isdigit():
                name = parts[2].split(':')[-1].replace('sys_enter_', '')
                counts[name] = int(parts[0])
    total = counts.pop('sys_enter')
    sock = sum(counts.get(k, 0)
               for k in ('recvfrom', 'recvmsg', 'sendmsg', 'sendto'))
    iops = sum(job[d]['iops'] for d in ('read', 'write'))
    return {'iops': iops, 'sys_io': total / ios, 'sock_io': sock / ios,
            'cpu_ns_io': job['cpu_per_io_ns']['process'],
            'detail': {k: v / ios for k, v in counts.items()},
            'load': load[0]}


def main():
    argv = sys.argv[1:]
    extra = DEFAULT
    if '--' in argv:
        i = argv.index('--')
        extra = argv[i + 1:]
        argv = argv[:i]
    if len(argv) < 3:
        sys.exit(__doc__)
    uri, bins = argv[0], {'A': argv[1], 'B': argv[2]}
    rounds = int(argv[3]) if len(argv) > 3 else 3
    probe = subprocess.run(['perf', 'stat', '-e', 'raw_syscalls:sys_enter',
                            'true'], capture_output=True)
    if probe.returncode:
        print('skip: perf cannot count syscalls here')
        sys.exit(77)
    res = {'A': [], 'B': []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for k in 'AB':
                x = run(bins[k], uri, extra, tmp)
                res[k].append(x)
                print('%s %d: %8.0f IOPS %6.2f syscalls/IO %6.2f socket/IO '
                      '%8.0f CPU ns/IO load %.2f  %s' %
                      (k, r + 1, x['iops'], x['sys_io'], x['sock_io'],
                       x['cpu_ns_io'], x['load'],
                       ' '.join('%s=%.2f' % kv
                                for kv in x['detail'].items() if kv[1])),
                      flush=True)
    for k in 'AB':
        m = {f: statistics.median(x[f] for x in res[k])
             for f in ('iops', 'sys_io', 'sock_io', 'cpu_ns_io', 'load')}
        print('%s median: %8.0f IOPS %6.2f syscalls/IO %6.2f socket/IO '
              '%8.0f CPU ns/IO load %.2f (%s)' %
              (k, m['iops'], m['sys_io'], m['sock_io'], m['cpu_ns_io'],
               m['load'], bins[k]))


if __name__ == '__main__':
    main()
