#!/usr/bin/env python3
"""What a team's shared session state costs an MCP 2026-07-28 client (no protocol session):
the official Python SDK calls Read CALLS times, one after the other, against one
`toolbelt mcp --http` on loopback, first alone (the session's state in memory), then with
`storage.url` (before each call the replica takes what other replicas changed, after it writes
what the call changed: the files read). Prints p50/p90/p99 per call side by side.

    bench/sessionless.py                  # 300 calls each
    CALLS=100 bench/sessionless.py
    TOOLBELT=path/to/toolbelt             # default: target/release/toolbelt (build it first)

PostgreSQL: TOOLBELT_TEST_POSTGRES_URL (required).
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "crates/toolbelt/tests/peers"))
from team import free_port, wait_port  # the harness lives beside the tests

CALLS = int(os.environ.get("CALLS", "300"))
TOOLBELT = os.environ.get("TOOLBELT", os.path.join(ROOT, "target/release/toolbelt"))


def serve(workdir, storage):
    """One server in `workdir`, its state (and, with `storage`, the team's) kept apart."""
    home = os.path.join(workdir, "home")
    project = os.path.join(workdir, "app")
    os.makedirs(os.path.join(project, ".git"), exist_ok=True)
    for i in range(20):
        with open(os.path.join(project, f"f{i}.txt"), "w") as f:
            f.write(f"line {i}\n" * 50)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLBELT_", "OTEL_"))}
    env.update({"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                "XDG_STATE_HOME": os.path.join(home, ".local/state"), "CI": "true"})
    if storage:
        env["TOOLBELT_STORAGE__URL"] = storage
    port = free_port()
    server = subprocess.Popen([TOOLBELT, "mcp", "--http", f"127.0.0.1:{port}"], cwd=project, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return server, f"http://127.0.0.1:{port}/mcp"


def drive(url):
    """The SDK's Read calls against `url`; each call's time, in ms."""
    script = f"""
import anyio, json, sys, time
from mcp import Client
async def main():
    out = []
    async with Client({url!r}) as client:
        for i in range({CALLS}):
            started = time.perf_counter()
            r = await client.call_tool("Read", {{"file_path": f"f{{i % 20}}.txt"}})
            out.append((time.perf_counter() - started) * 1000)
            assert not r.is_error, r
    print(json.dumps(out))
anyio.run(main)
"""
    python = os.path.join(ROOT, ".ci/peers/venv/bin/python")
    done = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True)
    import json
    return json.loads(done.stdout)


def figures(times):
    times = sorted(times)
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    return statistics.median(times), pick(0.9), pick(0.99)


def main():
    url = os.environ.get("TOOLBELT_TEST_POSTGRES_URL")
    if not url:
        sys.exit("set TOOLBELT_TEST_POSTGRES_URL (.ci/postgres.sh DIR PORT starts one)")
    schema = f"bench_sessionless_{os.getpid()}"
    subprocess.run(["psql", url, "-qc", f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"],
                   check=True, capture_output=True)
    storage = f"{url}?options=-csearch_path%3D{schema}"
    rows = []
    for label, shared in (("alone (state in memory)", None), ("with storage.url (state shared)", storage)):
        with tempfile.TemporaryDirectory() as workdir:
            server, endpoint = serve(workdir, shared)
            try:
                drive(endpoint)  # warm: the session starts, the tables are made
                rows.append((label, figures(drive(endpoint))))
            finally:
                server.terminate()
                server.wait()
    print(f"{CALLS} Read calls, one after the other, MCP 2026-07-28 (no protocol session), the Python SDK")
    print(f"{'':34} {'p50':>9} {'p90':>9} {'p99':>9}")
    for label, (p50, p90, p99) in rows:
        print(f"{label:34} {p50:7.2f}ms {p90:7.2f}ms {p99:7.2f}ms")
    print(f"shared / alone, p50: {rows[1][1][0] / rows[0][1][0]:.2f}x")


if __name__ == "__main__":
    time.sleep(0)
    main()
