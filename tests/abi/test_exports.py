#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""libnvq.so exports exactly the functions the public headers declare.

usage: test_exports.py CC LIBNVQ_SO SRC_INCLUDE BUILD_INCLUDE

The headers are preprocessed the way an application sees them; every
function declared (not defined inline) with an nvq_ name must be exported
with a symbol version, and nothing else may be.
"""
import re
import subprocess
import sys


def declared(cc, src_inc, build_inc):
    text = subprocess.run(
        cc.split() + ['-E', '-P', '-I', build_inc, '-I', src_inc,
                      '-x', 'c', '-'],
        input='#include <nvq/nvq.h>\n#include <nvq/qos.h>\n',
        capture_output=True, text=True, check=True).stdout
    names = set()
    depth = 0
    stmt = ''
    for ch in text:
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0 and stmt.rstrip().endswith(')'):
                stmt = ''  # an inline function's body: not exported
            continue
        if depth:
            continue
        if ch == ';':
            s = ' '.join(stmt.split())
            stmt = ''
            if s.startswith('typedef') or 'static' in s.split():
                continue
            m = re.search(r'\b(nvq_\w+)\s*\(', s)
            if m:
                names.add(m.group(1))
            continue
        stmt += ch
    return names


def exported(lib):
    out = subprocess.run(['nm', '-D', '--defined-only', lib],
                         capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        if parts[1] == 'A':  # a version node (NVQ_0.2), not a function
            syms[parts[2]] = parts[2]
            continue
        name, _, ver = parts[2].partition('@')
        syms[name] = ver.lstrip('@')
    return syms


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    cc, lib, src_inc, build_inc = sys.argv[1:]
    want = declared(cc, src_inc, build_inc)
    have = exported(lib)
    # The version node names themselves are absolute symbols.
    nodes = {n for n, v in have.items() if v == n}
    funcs = {n: v for n, v in have.items() if n not in nodes}
    bad = 0
    if len(want) < 40:
        print(f'only {len(want)} declarations found: parser broken?')
        bad = 1
    for n in sorted(want - set(funcs)):
        print(f'declared in include/nvq/ but not exported: {n}')
        bad = 1
    for n in sorted(set(funcs) - want):
        print(f'exported but not in include/nvq/: {n}')
        bad = 1
    for n, v in sorted(funcs.items()):
        if not v:
            print(f'exported without a symbol version: {n}')
            bad = 1
    if not bad:
        print(f'{len(want)} public functions, all exported under '
              f'{", ".join(sorted(nodes))}, nothing else')
    return bad


if __name__ == '__main__':
    sys.exit(main())
