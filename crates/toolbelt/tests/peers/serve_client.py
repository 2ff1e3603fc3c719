"""`toolbelt mcp --http` as an operator runs it, with the official Python SDK as its clients:
the probes, `/metrics` read with the official Prometheus parser, and a drain on SIGTERM
while two calls run (one finishes within the grace period, one is cut) and a background
command runs.

With `twice`, the server has a long grace period and a second SIGTERM cuts the running call
at once.

Usage: serve_client.py TOOLBELT ROOT [twice]
Prints one JSON object with what it saw.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import anyio
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, os.path.dirname(__file__))
from team import free_port, wait_port


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def get(base, path):
    try:
        with urllib.request.urlopen(base + path, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def initialize(base):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    request = urllib.request.Request(base + "/mcp", data=body.encode(), method="POST", headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def samples(base):
    """Every sample of /metrics as {"name{label=value,...}": value}, parsed by prometheus_client."""
    status, body = get(base, "/metrics")
    assert status == 200, (status, body)
    out = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            out[f"{s.name}{{{labels}}}"] = s.value
    return out


def read(path):
    with open(path) as f:
        return f.read()


def alive(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")[0].endswith(b"sleep")
    except OSError:
        return False


async def swallow(*_exc):
    return True


def start(target, root, grace):
    port = free_port()
    audit = os.path.join(root, "audit.jsonl")
    log = open(os.path.join(root, "server.log"), "w")  # noqa: SIM115 - the server's stderr, closed in finish()
    server = subprocess.Popen(
        [target, "--allow", "Bash", "--deny", "Bash(rm:*)", "--audit", audit,
         "mcp", "--http", f"127.0.0.1:{port}", "--drain-timeout", grace],
        cwd=root, stdout=subprocess.DEVNULL, stderr=log,
    )
    wait_port(port)
    return server, f"http://127.0.0.1:{port}", audit, log


def finish(target, root, server, audit, log):
    if server.poll() is None:
        server.kill()
    server.wait()
    log.close()
    seen["server_log"] = read(os.path.join(root, "server.log"))
    verify = subprocess.run([target, "audit", "verify", "--json", audit], check=False, capture_output=True, text=True)
    seen["verify"] = json.loads(verify.stdout)
    seen["audit"] = [json.loads(line) for line in read(audit).splitlines()]


async def twice(target, root):
    server, base, audit, log = start(target, root, "60")
    try:
        async with contextlib.AsyncExitStack() as stack:
            a = await stack.enter_async_context(Client(base + "/mcp", mode="legacy"))
            outcome = {}

            async def call():
                r = await a.call_tool("Bash", {"command": "sleep 60; echo never"})
                outcome.update(is_error=r.is_error, text=text(r))

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                while samples(base).get("toolbelt_calls_running{}") != 1:
                    await anyio.sleep(0.05)
                server.send_signal(signal.SIGTERM)
                await anyio.sleep(0.5)
                seen["still_running"] = server.poll() is None
                server.send_signal(signal.SIGTERM)
                term = time.time()
            seen["call"] = outcome
            seen["exit"] = server.wait(timeout=20)
            seen["exit_after_second"] = time.time() - term
            stack.push_async_exit(swallow)
    finally:
        finish(target, root, server, audit, log)


async def main(target, root):
    server, base, audit, log = start(target, root, "2")
    try:
        seen["healthz"] = get(base, "/healthz")
        seen["readyz"] = get(base, "/readyz")
        url = base + "/mcp"
        async with contextlib.AsyncExitStack() as stack:
            a = await stack.enter_async_context(Client(url, mode="legacy"))
            b = await stack.enter_async_context(Client(url, mode="legacy"))
            await a.call_tool("Read", {"file_path": "hello.txt"})
            denied = await a.call_tool("Bash", {"command": "rm -f hello.txt"})
            seen["denied"] = denied.is_error
            with contextlib.suppress(Exception):
                await a.call_tool("NoSuchTool_x1", {})
            background = await a.call_tool(
                "Bash", {"command": "echo $BASHPID > bg.pid; exec sleep 600", "run_in_background": True})
            seen["background"] = text(background)
            for _ in range(100):
                if os.path.exists(os.path.join(root, "bg.pid")):
                    break
                await anyio.sleep(0.05)
            bg_pid = int(read(os.path.join(root, "bg.pid")))
            seen["before"] = samples(base)
            results = {}

            async def call(name, client, command):
                began = time.time()
                try:
                    r = await client.call_tool("Bash", {"command": command})
                    results[name] = {"is_error": r.is_error, "text": text(r), "at": time.time()}
                except Exception as e:  # noqa: BLE001 - what the client saw is the result
                    results[name] = {"exception": repr(e), "at": time.time()}
                results[name]["took"] = time.time() - began

            async with anyio.create_task_group() as group:
                group.start_soon(call, "short", a, "sleep 1.2; echo finished")
                group.start_soon(call, "long", b, "sleep 60; echo never")
                for _ in range(200):
                    during = samples(base)
                    if during.get("toolbelt_calls_running{}") == 2:
                        break
                    await anyio.sleep(0.05)
                seen["during"] = during
                server.send_signal(signal.SIGTERM)
                term = time.time()
                await anyio.sleep(0.3)
                seen["readyz_draining"] = get(base, "/readyz")
                seen["healthz_draining"] = get(base, "/healthz")
                seen["metrics_draining"] = samples(base).get("toolbelt_mcp_draining{}")
                seen["new_session"] = initialize(base)
                try:
                    r = await a.call_tool("Read", {"file_path": "hello.txt"})
                    seen["refused"] = {"is_error": r.is_error, "text": text(r)}
                except Exception as e:  # noqa: BLE001
                    seen["refused"] = {"exception": str(e)}
            for result in results.values():
                result["after_term"] = result.pop("at") - term
            seen["calls"] = results
            try:
                seen["exit"] = server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                seen["exit"] = "still running"
            seen["exit_after_term"] = time.time() - term
            seen["background_alive"] = alive(bg_pid)
            # The clients' closing requests meet a stopped server.
            stack.push_async_exit(swallow)
    finally:
        finish(target, root, server, audit, log)


seen = {}
anyio.run(twice if sys.argv[3:] == ["twice"] else main, sys.argv[1], sys.argv[2])
print(json.dumps(seen))
