"""Two clients of one `toolbelt mcp --http`, with the official Python SDK: the first drives a
Python REPL in a terminal session for several turns (what it sees in the text and in
`structuredContent`, and the progress it is sent while a call waits); the second, in another
MCP session, cannot type into the first one's session.

Usage: session_client.py TOOLBELT ROOT
Prints one JSON object with what it saw.
"""

import json
import socket
import subprocess
import sys
import time

import anyio
from mcp import Client


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def main(target, root):
    port = free_port()
    server = subprocess.Popen(
        [target, "--allow", "Bash", "mcp", "--http", f"127.0.0.1:{port}"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        progress = []

        async def on_progress(value, total, message):
            progress.append(message)

        async with Client(url, mode=MODE) as first, Client(url, mode=MODE) as second:
            started = await first.call_tool(
                "Bash", {"command": "python3", "tty": True, "yield_time_ms": 1500}, progress_callback=on_progress
            )
            sid = started.structured_content["session_id"]
            seen["started"] = {"text": text(started), "stdout": started.structured_content["stdout"]}
            for chars in ["x = 41\n", "x + 1\n"]:
                r = await first.call_tool("WriteStdin", {"session_id": sid, "chars": chars, "yield_time_ms": 1000})
                seen["turns"].append({"text": text(r), "output": r.structured_content["output"]})
            r = await second.call_tool("WriteStdin", {"session_id": sid, "chars": "x\n"})
            seen["other"] = {"is_error": r.is_error, "text": text(r)}
            r = await first.call_tool("TaskStop", {"task_id": sid})
            seen["stopped"] = text(r)
        seen["progress"] = progress
    finally:
        server.kill()
        server.wait()


MODE = sys.argv[3] if len(sys.argv) > 3 else "auto"
seen = {"turns": []}
anyio.run(main, sys.argv[1], sys.argv[2])
print(json.dumps(seen))
