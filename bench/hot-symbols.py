#!/usr/bin/env python3
"""Writes crates/toolbelt/hot-symbols.txt: the functions the common paths run, for the linker.

The executable's start and its most common calls (a one-shot `call`, an MCP session reading
files) run about 2 MB of its 27 MB of code, spread everywhere; the kernel maps 64 KB around
each page of code a process touches, so an idle MCP server held 18 MB of code and a one-shot
call took a page fault for each place it ran. Listed in this file, the linker puts those
functions side by side (lld's `--symbol-ordering-file`, passed by crates/toolbelt/build.rs when
the linker takes it). See docs/build.md, "Hot code together".

Each scenario runs the release binary under callgrind (symbols as the linker names them) in a
temporary project; every function of the executable that ran is listed once, sorted. Symbol
names carry hashes of the compiler, the crate and its dependencies, so the list fits the
toolchain and Cargo.lock it was made with: regenerate it after either changes (a stale name
is skipped by the linker, never an error), and before measuring a release: the names ThinLTO
gives functions it shares between a crate's codegen units (`<name>.llvm.<hash>`, about one in
seven here) change with the code of those units.

    bench/hot-symbols.py                          # builds target/release/toolbelt first
    TOOLBELT=/path/to/toolbelt bench/hot-symbols.py
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def callgrind(binary, args, cwd, env, stdin=None, out=None):
    """Runs binary with args under callgrind; returns the profile's path."""
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", binary, *args],
        cwd=cwd, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
    )
    return out


def callgrind_idle(binary, cwd, env, out, seconds=3.0):
    """`toolbelt mcp` under callgrind, initialized, then left idle for `seconds` before its
    stdin closes: what a server waiting for its client runs (the runtime parked on its
    input, the settings watcher's looks), which a session piped in whole never waits for."""
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", binary, "mcp"],
        cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    lines = mcp_session(full=False).decode().splitlines(keepends=True)
    process.stdin.write(lines[0].encode())
    process.stdin.flush()
    process.stdout.readline()
    process.stdin.write("".join(lines[1:]).encode())
    process.stdin.flush()
    time.sleep(seconds)
    process.stdin.close()
    process.stdout.read()
    process.wait()
    return out


def mcp_session(full):
    """An MCP session over stdio: initialize and reads; `full`, tools/list, a search and a
    listing too."""
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hot", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    calls = [("Read", {"file_path": "one.txt"})] * 20
    if full:
        lines.append({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        calls += [("Grep", {"pattern": "needle", "output_mode": "content"}), ("Glob", {"pattern": "**/*.txt"})]
    for i, (name, arguments) in enumerate(calls, start=2):
        lines.append({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def executed(profile):
    """The symbols of every function a callgrind profile saw run."""
    names, ran = {}, set()
    for line in open(profile, encoding="utf-8", errors="replace"):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "fn" and m.group(2) in names:
            ran.add(names[m.group(2)])
    return ran


def text_symbols(binary):
    """The executable's own function symbols."""
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    return {p[2] for p in (line.split() for line in out.splitlines()) if len(p) == 3 and p[1] in "tT"}


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = os.environ.get("TOOLBELT")
    if not binary:
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "toolbelt"], cwd=root, check=True)
        binary = os.path.join(root, "target", "release", "toolbelt")
    if not shutil.which("valgrind"):
        sys.exit("valgrind is required (Debian: apt-get install -y valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        project, home = os.path.join(tmp, "project"), os.path.join(tmp, "home")
        os.makedirs(os.path.join(project, ".git"))
        os.makedirs(home)
        with open(os.path.join(project, "one.txt"), "w") as f:
            f.write("hello world needle\n")
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   XDG_STATE_HOME=os.path.join(home, ".state"), XDG_DATA_HOME=os.path.join(home, ".data"))
        runs = [
            (["--version"], None),
            (["mcp"], mcp_session(full=False)),
            (["mcp"], mcp_session(full=True)),
            (["call", "Grep", json.dumps({"pattern": "needle", "path": "one.txt", "output_mode": "content"})], None),
            (["call", "Read", json.dumps({"file_path": "one.txt"})], None),
            (["call", "Glob", json.dumps({"pattern": "*.txt"})], None),
            (["tools"], None),
        ]
        ran = []
        for i, (args, stdin) in enumerate(runs):
            profile = callgrind(binary, args, project, env, stdin, os.path.join(tmp, f"profile.{i}"))
            ran.append(executed(profile))
            if i == 0:
                # Right after what every process runs: what an idle server runs.
                ran.append(executed(callgrind_idle(binary, project, env, os.path.join(tmp, "profile.idle"))))
    # Laid out by scenario, in the order of `runs`, each after those before it: what `--version`
    # runs first, then what a one-shot call adds, and so on; a long-running MCP server touches
    # the front of the list, not the whole of it.
    own = text_symbols(binary)
    hot, seen = [], set()
    for functions in ran:
        new = sorted((functions & own) - seen)
        hot.extend(new)
        seen.update(new)
    target = os.path.join(root, "crates", "toolbelt", "hot-symbols.txt")
    with open(target, "w") as f:
        f.write("".join(name + "\n" for name in hot))
    print(f"{len(hot)} functions written to {os.path.relpath(target, root)}")


if __name__ == "__main__":
    main()
