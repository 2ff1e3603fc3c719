#!/usr/bin/env python3
"""Interactive sessions over MCP stdio: how fast typing into one comes back, and what eight
held at once cost.

1. Round trip: a `cat` session with a terminal; each sample types a line with WriteStdin
   (`yield_time_ms: 0`) and reads (empty `chars`, `yield_time_ms: 0`) until the echo is in a
   result — the time from sending the line to holding its echo, no yield in it. Beside it,
   the floor: the same round trip through a pseudo-terminal Python drives itself (no MCP, no
   toolbelt). Also a call with `yield_time_ms: 20`, minus those 20 ms.
2. Memory: the server's resident memory idle, with 8 sessions open, after each of them
   printed 8 MB (a terminal's worth of progress and lines), and after they are read.

    bench/sessions.py                                  # target/release/toolbelt
    RUNS=300 TOOLBELT=/path/to/toolbelt bench/sessions.py
"""

import json
import os
import pty
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("TOOLBELT", os.path.join(os.path.dirname(__file__), "..", "target", "release", "toolbelt"))
RUNS = int(os.environ.get("RUNS", "200"))


class Server:
    def __init__(self, cwd):
        env = dict(os.environ, HOME=cwd, XDG_STATE_HOME=os.path.join(cwd, "state"), CI="true")
        self.p = subprocess.Popen([BIN, "--allow", "Bash", "mcp"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

    def request(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n")
        while True:
            message = json.loads(self.p.stdout.readline())
            if message.get("id") == self.n:
                return message

    def call(self, name, arguments):
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        return result.get("structuredContent") or {}

    def rss_kib(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def round_trips(server, sid):
    trips = []
    for i in range(RUNS):
        word = f"ping{i}x"
        start = time.perf_counter()
        got = server.call("WriteStdin", {"session_id": sid, "chars": word + "\n", "yield_time_ms": 0})["output"]
        while got.count(word) < 2:  # the terminal's echo of the line, then cat's copy of it
            got += server.call("WriteStdin", {"session_id": sid, "yield_time_ms": 0})["output"]
        trips.append(time.perf_counter() - start)
    return trips


def yielded(server, sid, yield_ms):
    overheads = []
    for i in range(max(RUNS // 4, 20)):
        word = f"pong{i}x"
        start = time.perf_counter()
        got = server.call("WriteStdin", {"session_id": sid, "chars": word + "\n", "yield_time_ms": yield_ms})
        overheads.append(time.perf_counter() - start - yield_ms / 1000)
        assert word in got["output"], got
    return overheads


def floor():
    """The same round trip through a pseudo-terminal driven directly."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("cat", ["cat"])
    trips = []
    for i in range(RUNS):
        word = f"ping{i}x".encode()
        start = time.perf_counter()
        os.write(fd, word + b"\n")
        got = b""
        while got.count(word) < 2:
            got += os.read(fd, 4096)
        trips.append(time.perf_counter() - start)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return trips


def ms(xs):
    return f"median {statistics.median(xs) * 1000:7.3f} ms   p90 {sorted(xs)[int(len(xs) * 0.9)] * 1000:7.3f} ms"


def main():
    with tempfile.TemporaryDirectory() as cwd:
        cwd = os.path.realpath(cwd)
        server = Server(cwd)
        time.sleep(0.5)
        fresh = server.rss_kib()
        sid = server.call("Bash", {"command": "cat", "tty": True, "yield_time_ms": 100})["session_id"]
        round_trips(server, sid)  # warm-up
        trips = round_trips(server, sid)
        over = yielded(server, sid, 20)
        base = floor()
        print(f"WriteStdin round trip to `cat` in a terminal, over MCP stdio ({RUNS} lines):")
        print(f"  toolbelt (write, then read until the echo):  {ms(trips)}")
        print(f"  floor (the same pty round trip, no server):   {ms(base)}")
        print(f"  one call with yield_time_ms 20, minus 20 ms:  {ms(over)}")
        server.call("TaskStop", {"task_id": sid})

        idle = server.rss_kib()
        flood = "python3 -c \"import sys\nfor i in range(200000):\n sys.stdout.write('\\\\r[%6d] ' % i + 'x' * 30)\n" \
                " if i % 50 == 0: sys.stdout.write('\\\\n')\nsys.stdout.flush()\"; cat"
        ids = [server.call("Bash", {"command": "bash --norc", "tty": True, "yield_time_ms": 50})["session_id"]
               for _ in range(8)]
        opened = server.rss_kib()
        start = time.perf_counter()
        for s in ids:
            server.call("WriteStdin", {"session_id": s, "chars": flood + "\n", "yield_time_ms": 0})
        logs = []
        for s in ids:
            while True:
                got = server.call("WriteStdin", {"session_id": s, "yield_time_ms": 500})
                if os.path.getsize(got["log_file"]) > 8_000_000:
                    logs.append(os.path.getsize(got["log_file"]))
                    break
        flooded = server.rss_kib()
        for s in ids:
            server.call("WriteStdin", {"session_id": s, "yield_time_ms": 0})
        read = server.rss_kib()
        print(f"\nMemory of the server (RSS), 8 sessions each printing {statistics.mean(logs) / 1e6:.1f} MB "
              f"({time.perf_counter() - start:.1f} s):")
        print(f"  started: {fresh / 1024:.1f} MiB   after the round trips: {idle / 1024:.1f} MiB   8 open: {opened / 1024:.1f} MiB   after the output: "
              f"{flooded / 1024:.1f} MiB   after reading it: {read / 1024:.1f} MiB")
        for s in ids:
            server.call("TaskStop", {"task_id": s})
        server.close()


if __name__ == "__main__":
    sys.exit(main())
