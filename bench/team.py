#!/usr/bin/env python3
"""A team's load, on loopback: SESSIONS MCP sessions calling Read, Grep and Bash in turn for
SECONDS (crates/toolbelt-mcp/benches/team_load.rs), first against one `toolbelt mcp --http`
(the single-process figures), then against three replicas behind HAProxy with affinity on
`Mcp-Session-Id`, sharing a PostgreSQL database (the deployment of `tests/team_cli.rs`).
Prints calls/s, errors, p50/p90/p99/max latency, and each replica's memory (VmRSS at start,
at its peak, at the end).

    bench/team.py                        # 200 sessions, 60 s each run
    SESSIONS=50 SECONDS=10 bench/team.py # quick
    TOOLBELT=path/to/toolbelt            # default: target/release/toolbelt (build it first)

PostgreSQL: TOOLBELT_TEST_POSTGRES_URL, else a throwaway server started with .ci/postgres.sh.
Needs haproxy (Debian's package).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "crates/toolbelt/tests/peers"))
from team import Team, free_port  # the harness lives beside the tests

SESSIONS = int(os.environ.get("SESSIONS", "200"))
SECONDS = int(os.environ.get("SECONDS", "60"))
TOOLBELT = os.environ.get("TOOLBELT", os.path.join(ROOT, "target/release/toolbelt"))


def postgres():
    """A database URL, and what stops the server this started (or None)."""
    url = os.environ.get("TOOLBELT_TEST_POSTGRES_URL")
    if url:
        return url, None
    pg_dir = tempfile.mkdtemp(prefix="toolbelt-bench-pg-")
    url = subprocess.run([os.path.join(ROOT, ".ci/postgres.sh"), pg_dir, str(free_port())], check=True,
                         capture_output=True, text=True).stdout.strip()

    def stop():
        version = max((d for d in os.listdir("/usr/lib/postgresql") if d.isdigit()), key=int)
        cmd = [f"/usr/lib/postgresql/{version}/bin/pg_ctl", "-D", f"{pg_dir}/data", "-m", "fast", "stop"]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=False, capture_output=True)
        shutil.rmtree(pg_dir, ignore_errors=True)
    return url, stop


def run_load(url):
    """The load benchmark against `url`: its JSON summary."""
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", "toolbelt-mcp", "--bench", "team_load", "--", url, str(SESSIONS), str(SECONDS)],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    print("   ", out.strip().splitlines()[0])
    return json.loads(out.strip().splitlines()[-1])


def measured(team, url):
    """Runs the load against `url` while sampling every replica's memory."""
    start = team.rss_kib()
    peak = dict(start)
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for name, kib in team.rss_kib().items():
                if kib is not None:
                    peak[name] = max(peak.get(name) or 0, kib)
            time.sleep(0.25)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        summary = run_load(url)
    finally:
        stop.set()
        sampler.join()
    end = team.rss_kib()
    summary["rss_mib"] = {name: {"start": round(start[name] / 1024, 1), "peak": round(peak[name] / 1024, 1),
                                 "end": round(end[name] / 1024, 1)} for name in start if start[name]}
    return summary


def main():
    if not os.path.exists(TOOLBELT):
        sys.exit(f"{TOOLBELT} is missing: cargo build --release -p toolbelt first (or set TOOLBELT)")
    subprocess.run(["cargo", "bench", "-q", "-p", "toolbelt-mcp", "--bench", "team_load", "--no-run"], cwd=ROOT,
                   check=True)
    url, stop_pg = postgres()
    limits = ["--max-sessions", str(SESSIONS * 2)]
    results = {}
    try:
        print(f"{SESSIONS} sessions, {SECONDS} s, Read/Grep/Bash in turn")
        print("one process (no proxy):")
        single = Team(TOOLBELT, url, replicas=1, mcp_args=limits)
        try:
            results["single"] = measured(single, f"http://127.0.0.1:{single.replicas[0]['port']}/mcp")
        finally:
            single.stop()
        print("three replicas behind HAProxy, PostgreSQL shared:")
        team = Team(TOOLBELT, url, replicas=3, mcp_args=limits)
        try:
            results["team"] = measured(team, team.url)
        finally:
            team.stop()
    finally:
        if stop_pg:
            stop_pg()
    print()
    print("| | calls/s | errors | p50 | p90 | p99 | max | memory per replica (start → peak → end) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, label in (("single", "one process"), ("team", "3 replicas + HAProxy")):
        r = results[name]
        memory = "; ".join(f"{m['start']} → {m['peak']} → {m['end']} MiB" for m in r["rss_mib"].values())
        print(f"| {label} | {r['calls_per_s']:.0f} | {r['errors']} | {r['p50_ms']:.1f} ms | {r['p90_ms']:.1f} ms | "
              f"{r['p99_ms']:.1f} ms | {r['max_ms']:.1f} ms | {memory} |")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
