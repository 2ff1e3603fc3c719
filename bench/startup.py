#!/usr/bin/env python3
"""Start-up of the `toolbelt` executable beside ripgrep's, as whole processes.

Two cases, each run as alternating pairs (A B A B ...) so a drift of the machine's speed
falls on both sides: `toolbelt --version` against `rg --version`, and a one-line file
searched with `toolbelt call Grep` (content mode) against `rg -n`. Prints each side's
median and best wall time and the median of the per-pair ratios. With BEFORE=<binary>, the
same toolbelt cases also run with that build, for a before/after figure in one run.

    bench/startup.py                      # target/release/toolbelt, 60 pairs
    RUNS=30 BEFORE=/path/to/old/toolbelt bench/startup.py
    TOOLBELT=/path/to/toolbelt bench/startup.py
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, cwd, env):
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def pairs(a, b, runs, cwd, env):
    """Alternates a and b `runs` times after a warm-up; returns both lists of times."""
    timed(a, cwd, env)
    timed(b, cwd, env)
    ta, tb = [], []
    for i in range(runs):
        first, second = (a, b) if i % 2 == 0 else (b, a)
        t1, t2 = timed(first, cwd, env), timed(second, cwd, env)
        if i % 2 == 0:
            ta.append(t1)
            tb.append(t2)
        else:
            ta.append(t2)
            tb.append(t1)
    return ta, tb


def row(name, ta, tb, against):
    ratios = [x / y for x, y in zip(ta, tb)]
    ms = lambda t: f"{t * 1000:6.2f} ms"
    print(f"{name:34s} median {ms(statistics.median(ta))}  best {ms(min(ta))}   "
          f"{against}: median {ms(statistics.median(tb))}  best {ms(min(tb))}   "
          f"ratio {statistics.median(ratios):.2f}x")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    toolbelt = os.environ.get("TOOLBELT", os.path.join(root, "target", "release", "toolbelt"))
    if "TOOLBELT" not in os.environ:
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "toolbelt"], cwd=root, check=True)
    rg = shutil.which("rg")
    if rg is None:
        sys.exit("ripgrep (rg) is needed: it is what start-up is compared against")
    runs = int(os.environ.get("RUNS", "60"))
    builds = [("toolbelt", toolbelt)]
    if os.environ.get("BEFORE"):
        builds.insert(0, ("before", os.environ["BEFORE"]))
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        work = os.path.join(tmp, "work")
        os.makedirs(home)
        os.makedirs(work)
        with open(os.path.join(work, "one.txt"), "w") as f:
            f.write("hello world\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLBELT")}
        env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   XDG_STATE_HOME=os.path.join(home, ".state"), XDG_DATA_HOME=os.path.join(home, ".data"))
        grep = '{"pattern":"hello","path":"one.txt","output_mode":"content"}'
        print(f"{runs} alternating pairs each; wall time of the whole process")
        for label, binary in builds:
            ta, tb = pairs([binary, "--version"], [rg, "--version"], runs, work, env)
            row(f"{label} --version", ta, tb, "rg --version")
            ta, tb = pairs([binary, "call", "Grep", grep], [rg, "-n", "hello", "one.txt"], runs, work, env)
            row(f"{label} call Grep (one-line file)", ta, tb, "rg -n")
        print("goals: --version within 1 ms of rg's; a one-file `call Grep` at most 1.3x `rg -n`")


if __name__ == "__main__":
    main()
