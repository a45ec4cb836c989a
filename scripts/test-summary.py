#!/usr/bin/env python3
"""Count meson test results of one or more build directories and print the
project's closing line: 'N passed, N failed' (', N skipped' when any).
Exit status 1 when anything failed or no test ran at all."""
import json
import os
import sys

passed = failed = skipped = 0
for build in sys.argv[1:]:
    log = os.path.join(build, "meson-logs", "testlog.json")
    if not os.path.exists(log):
        print(f"{build}: no test log (did the build fail?)")
        failed += 1
        continue
    with open(log) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            res = r.get("result")
            if res in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif res == "SKIP":
                skipped += 1
            else:
                failed += 1
                print(f"FAILED: {build}: {r.get('name')} ({res})")

line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or passed == 0 else 0)
