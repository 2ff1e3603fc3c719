#!/usr/bin/env python3
"""Generates a deterministic source-like tree for the search benchmark.

    bench/gen-tree.py DIR [FILES]     # default 20000 files

Same arguments, same tree, byte for byte (fixed seed, fixed mtimes): nested directories,
several languages, a .gitignore'd build directory, hidden files and a few binaries. The
tree is rebuilt only when DIR/.complete is missing or records other arguments.
"""

import os
import random
import shutil
import sys

WORDS = (
    "fn let mut impl struct enum match return self Some None Ok Err async await pub use mod "
    "def class import from yield lambda with assert const function var export default "
    "string number value error result config handler request response buffer cache index "
    "TODO FIXME parse render update create delete search walk matcher searcher sink"
).split()
EXTS = ["rs", "py", "js", "ts", "go", "md", "txt", "json", "toml", "c", "h"]


def line(rng):
    indent = "    " * rng.randrange(0, 4)
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 12)))
    tail = rng.choice(["", ";", " {", " }", "(x)", ": int", " // note", ","])
    return f"{indent}{words}{tail}\n"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    stamp = f"files={files} v1\n"
    done = os.path.join(root, ".complete")
    if os.path.exists(done) and open(done).read() == stamp:
        return
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(42)
    dirs = [""]
    for i in range(max(files // 25, 1)):
        parent = rng.choice(dirs)
        dirs.append(os.path.join(parent, f"d{i}") if parent.count("/") < 6 else f"d{i}")
    dirs += ["build/out", "build/gen", ".cache/x"]
    for i in range(files):
        d = dirs[i % len(dirs)] if i % 50 else rng.choice(["build/out", "build/gen", ".cache/x"])
        path = os.path.join(root, d, f"f{i}.{rng.choice(EXTS)}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if i % 997 == 0:
            body = bytes(rng.randrange(256) for _ in range(4096)) + b"\0 matcher"
            open(path, "wb").write(body)
        else:
            open(path, "w").write("".join(line(rng) for _ in range(rng.randrange(5, 150))))
        t = 1_700_000_000 + i * 7
        os.utime(path, (t, t))
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("build/\n*.log\n")
    with open(done, "w") as f:
        f.write(stamp)


if __name__ == "__main__":
    main()
