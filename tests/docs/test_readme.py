#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run every command and code block of README.md as written.

usage: test_readme.py SRCDIR CC

Shell blocks run with `bash -e -o pipefail` in a scratch directory whose
`build` is the source tree's release tree (what `make` builds), so the
files the commands create (data.bin, disk.img, cdf.svg) stay out of the
source tree; `make` runs in the source tree. C blocks are compiled and run
inside a main() whose prelude declares the names a fragment uses but does
not define. A block is skipped only for a reason printed here:
  - `make test` would run this test again: it is checked with `make -n`;
  - blocks naming a real PCI address (vfio) need hardware and root; the
    vfio suite runs the same commands against QEMU's NVMe device.
Exit status: 0 when every block that ran passed, 1 otherwise.
"""
import os
import re
import subprocess
import sys
import tempfile

PRELUDE = r'''
#include <nvq/nvq.h>
#include <stdio.h>
#include <stdlib.h>
static int done;
static void callback(void *arg, const struct nvq_cpl *cpl)
{
	(void)arg;
	if (cpl->err)
		exit(1);
	done = 1;
}
int main(void)
{
	uint32_t nsid = 1, nlb = 8;
	uint64_t slba = 0;
	void *arg = NULL;
'''
EPILOGUE = r'''
	return done ? 0 : 1;
}
'''


def blocks(text):
    out = []
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        m = re.match(r'^```(\w*)\s*$', lines[i])
        if m and m.group(1):
            lang, start, body = m.group(1), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith('```'):
                body.append(lines[i])
                i += 1
            out.append((lang, start, '\n'.join(body) + '\n'))
        i += 1
    return out


def run_sh(src, line, body, scratch):
    if re.search(r'vfio:\d{4}:|nvq (setup|release|reset) \d{4}:', body):
        print(f'README.md:{line}: skipped: needs a real PCIe NVMe '
              'controller and root (the vfio suite runs these commands '
              'in a QEMU guest)')
        return None
    if re.search(r'^\s*make test\b', body, re.M):
        body = re.sub(r'^\s*make test\b.*$', 'make -n test >/dev/null',
                      body, flags=re.M)
        print(f'README.md:{line}: `make test` checked with make -n (it '
              'would run this test again)')
    script = ('set -e -o pipefail\n'
              f'make() {{ command make -C "{src}" "$@"; }}\n' + body)
    print(f'README.md:{line}: running shell block', flush=True)
    r = subprocess.run(['bash', '-c', script], cwd=scratch,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    tail = '\n'.join(r.stdout.splitlines()[-15:])
    if r.returncode:
        print(f'README.md:{line}: FAILED (exit {r.returncode}):\n{tail}')
        return False
    return True


def run_c(src, line, body, cc, scratch):
    csrc = os.path.join(scratch, f'block{line}.c')
    exe = os.path.join(scratch, f'block{line}')
    with open(csrc, 'w') as f:
        f.write(PRELUDE + body + EPILOGUE)
    build = os.path.join(src, 'build')
    cmd = cc.split() + ['-std=gnu11', '-Wall', '-Werror',
                        '-Wno-unused-variable', '-I', f'{src}/include',
                        '-I', f'{build}/include', csrc, '-o', exe,
                        f'-L{build}/lib', '-lnvq', '-lpthread',
                        f'-Wl,-rpath,{build}/lib']
    print(f'README.md:{line}: compiling and running C block', flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        print(f'README.md:{line}: does not compile:\n{r.stdout}')
        return False
    r = subprocess.run([exe], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        print(f'README.md:{line}: exits {r.returncode}:\n{r.stdout}')
        return False
    return True


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, cc = os.path.abspath(sys.argv[1]), sys.argv[2]
    with open(os.path.join(src, 'README.md')) as f:
        found = blocks(f.read())
    ok = True
    ran = skipped = 0
    with tempfile.TemporaryDirectory() as scratch:
        os.symlink(os.path.join(src, 'build'), os.path.join(scratch, 'build'))
        os.symlink(os.path.join(src, 'scripts'),
                   os.path.join(scratch, 'scripts'))
        # The release tree first: every later block uses it.
        subprocess.run(['make', '-C', src, 'build'], check=True,
                       stdout=subprocess.DEVNULL)
        for lang, line, body in found:
            if lang == 'sh':
                res = run_sh(src, line, body, scratch)
            elif lang == 'c':
                res = run_c(src, line, body, cc, scratch)
            else:
                print(f'README.md:{line}: skipped: a {lang} block is not '
                      'a command')
                res = None
            if res is None:
                skipped += 1
                continue
            ran += 1
            ok = res and ok
    print(f'{ran} README blocks run, {skipped} skipped: '
          f'{"all passed" if ok else "FAILED"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
