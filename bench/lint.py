#!/usr/bin/env python3
"""Lint against the linter it runs, as whole processes.

    bench/lint.py DIR LINTER [RUNS]     # e.g. bench/lint.py ~/src/app ruff 20

Runs `target/release/toolbelt call --allow Lint Lint '{"linter": LINTER}'` in DIR once to
learn the command line it runs there (the report's `linters[0].command`), then times that
call and the bare command line (`bash -c LINE`, its output thrown away) in turn, RUNS times
each (default 15, after one warm-up of each), and prints the medians and the median of the
per-pair ratios. What the difference is: toolbelt's start-up, the walk that picks the
linters, the sandboxed spawn, reading the report and shaping the findings.
"""
import json
import os
import statistics
import subprocess
import sys
import time

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = os.path.join(repo, "target", "release", "toolbelt")
if len(sys.argv) < 3:
    sys.exit(__doc__)
tree, linter = os.path.abspath(sys.argv[1]), sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
if not os.access(binary, os.X_OK):
    subprocess.run(["cargo", "build", "--release", "-p", "toolbelt"], cwd=repo, check=True)

ours = [binary, "call", "--json", "--allow", "Lint", "Lint", json.dumps({"linter": linter})]
first = json.loads(subprocess.run(ours, cwd=tree, capture_output=True, text=True).stdout)
if first["is_error"]:
    sys.exit(first["content"][0]["text"])
report = first["structured"]
line = report["linters"][0]["command"]
bare = ["bash", "-c", line]


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


timed(ours)
timed(bare)
a, b = [], []
for _ in range(runs):
    a.append(timed(ours))
    b.append(timed(bare))
ratios = [x / y for x, y in zip(a, b)]
print(f"tree: {tree}; {report['total']} findings; the line: {line}")
print(f"toolbelt call Lint   median {statistics.median(a) * 1e3:8.1f} ms")
print(f"the line alone       median {statistics.median(b) * 1e3:8.1f} ms")
print(f"ratio (per pair)     median {statistics.median(ratios):8.2f}x  (min {min(ratios):.2f}, max {max(ratios):.2f})")
