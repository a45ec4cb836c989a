#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the kernel-doc comments of the public headers.

usage: scripts/check-kernel-doc.py [HEADER...]
       (default: include/nvq/nvq.h include/nvq/qos.h)

Every function a header declares (prototypes and static inline
definitions) must be preceded by its own kernel-doc block:

    /**
     * nvq_read() - Submit a read.
     * @q: ...
     *
     * Return: ...
     */

The block must name the function, describe each parameter with @name and
nothing else, and have a "Return:" section unless the function returns
void. Structures, enums and typedefs that have a kernel-doc block must
name themselves correctly in it. This checks the form that Linux's
scripts/kernel-doc reads; it does not replace it. Exit status 0 when all
is well, 1 with one line per problem otherwise.
"""
import os
import re
import sys

DEFAULT = ['include/nvq/nvq.h', 'include/nvq/qos.h']

BLOCK = re.compile(r'/\*\*(.*?)\*/', re.S)
COMMENT = re.compile(r'/\*.*?\*/', re.S)
FUNC_HEAD = re.compile(r'^\s*(\w+)\(\)\s+-\s+\S')
TYPE_HEAD = re.compile(r'^\s*(struct|union|enum|typedef)\s+(\w+)\s+-\s+\S')
PARAM = re.compile(r'^\s*@(\w+)\s*:')


def block_lines(body):
    """The text lines of a /** ... */ body without the leading ' * '."""
    out = []
    for line in body.split('\n'):
        line = line.strip()
        if line.startswith('*'):
            line = line[1:]
            if line.startswith(' ') or line.startswith('\t'):
                line = line[1:]
        out.append(line)
    while out and not out[0].strip():
        out.pop(0)
    return out


def next_decl(text, pos):
    """The declaration after @pos, comments removed, up to ';' or '{'."""
    rest = text[pos:]
    m = re.search(r'[;{]', COMMENT.sub(' ', rest))
    stripped = COMMENT.sub(' ', rest)
    if not m:
        return ''
    return ' '.join(stripped[:m.start() + 1].split())


def split_params(plist):
    """Parameter names of a prototype's parameter list."""
    plist = plist.strip()
    if plist in ('', 'void'):
        return []
    names = []
    depth = 0
    cur = ''
    for ch in plist + ',':
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == ',' and depth == 0:
            p = cur.strip()
            cur = ''
            if p == '...':
                names.append('...')
                continue
            # A function pointer parameter: (*name)(...)
            fp = re.search(r'\(\s*\*\s*(\w+)\s*\)', p)
            if fp:
                names.append(fp.group(1))
                continue
            m = re.search(r'(\w+)\s*(\[[^\]]*\])?$', p)
            if m:
                names.append(m.group(1))
            continue
        cur += ch
    return names


def parse_func(decl):
    """(name, params, returns_void) of a function declaration, or None."""
    if decl.startswith('typedef') or decl.startswith('#'):
        return None
    m = re.match(r'(.*?)\b(\w+)\s*\((.*)\)\s*(__attribute__\s*\(\(.*\)\))?'
                 r'\s*[;{]$', decl)
    if not m:
        return None
    ret, name, plist = m.group(1), m.group(2), m.group(3)
    if '(' in ret or '=' in ret:
        return None
    words = ret.replace('*', ' * ').split()
    returns_void = 'void' in words and '*' not in words
    return name, split_params(plist), returns_void


def declared_functions(text):
    """Names of the functions declared at file scope (nvq_ prefix)."""
    code = COMMENT.sub(' ', text)
    # The extern "C" { ... } of C++ callers is file scope all the same.
    code = re.sub(r'^\s*#\s*ifdef\s+__cplusplus\b.*?^\s*#\s*endif.*?$',
                  ' ', code, flags=re.M | re.S)
    code = re.sub(r'^\s*#.*$', ' ', code, flags=re.M)
    names = []
    depth = 0
    stmt = ''
    for ch in code:
        if ch == '{':
            if depth == 0:
                f = parse_func(' '.join((stmt + '{').split()))
                if f:
                    names.append(f[0])
                stmt = ''
            depth += 1
            continue
        if ch == '}':
            depth -= 1
            continue
        if depth:
            continue
        if ch == ';':
            f = parse_func(' '.join((stmt + ';').split()))
            if f:
                names.append(f[0])
            stmt = ''
            continue
        stmt += ch
    return [n for n in names if n.startswith('nvq_')]


def check(path):
    text = open(path).read()
    problems = []
    documented = {}
    for m in BLOCK.finditer(text):
        lines = block_lines(m.group(1))
        line_no = text.count('\n', 0, m.start()) + 1
        where = f'{path}:{line_no}'
        head = lines[0] if lines else ''
        decl = next_decl(text, m.end())
        fh = FUNC_HEAD.match(head)
        th = TYPE_HEAD.match(head)
        if fh:
            f = parse_func(decl)
            if not f:
                problems.append(f'{where}: block for {fh.group(1)}() is '
                                f'not followed by a function declaration')
                continue
            name, params, returns_void = f
            if name != fh.group(1):
                problems.append(f'{where}: block names {fh.group(1)}() but '
                                f'precedes {name}()')
                continue
            documented[name] = where
            described = [p.group(1) for p in map(PARAM.match, lines) if p]
            for p in params:
                if p != '...' and p not in described:
                    problems.append(f'{where}: {name}(): parameter @{p} is '
                                    f'not described')
            for p in described:
                if p not in params:
                    problems.append(f'{where}: {name}(): @{p} is not a '
                                    f'parameter')
            has_return = any(l.startswith('Return:') for l in lines)
            if not returns_void and not has_return:
                problems.append(f'{where}: {name}(): no "Return:" section')
        elif th:
            kind, name = th.group(1), th.group(2)
            if kind == 'typedef':
                ok = re.search(r'\b' + name + r'\b', decl) is not None
            else:
                ok = decl.startswith(f'{kind} {name} ') or \
                    decl.startswith(f'typedef {kind} {name} ')
            if not ok:
                problems.append(f'{where}: block for {kind} {name} precedes '
                                f'"{decl[:40]}"')
        else:
            problems.append(f'{where}: kernel-doc block starts neither with '
                            f'"name() - ..." nor "struct name - ...": '
                            f'"{head[:40]}"')
    for name in declared_functions(text):
        if name not in documented:
            problems.append(f'{path}: {name}() has no kernel-doc block')
    return problems, len(documented)


def main():
    paths = sys.argv[1:]
    if not paths:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        paths = [os.path.join(root, p) for p in DEFAULT]
    problems = []
    total = 0
    for p in paths:
        probs, n = check(p)
        problems += probs
        total += n
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f'kernel-doc: {total} functions documented in {len(paths)} '
          f'header(s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
