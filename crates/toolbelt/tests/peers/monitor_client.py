"""Drives `toolbelt mcp` with the official Python SDK client watching a command with Monitor:
its lines and its end arrive as log notifications (in a 2025-11-25 session, `legacy`), and
TaskOutput reads the lines as they come (in either mode).

Usage: monitor_client.py MODE TOOLBELT ROOT   (MODE: legacy or auto)
Prints one JSON object with what it saw.
"""

import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def log(params):
    seen["logs"].append({"logger": params.logger, "level": str(params.level), "data": params.data})


def ended():
    return any(isinstance(l["data"], dict) and l["data"].get("kind") == "ended" for l in seen["logs"])


async def main():
    mode, target = sys.argv[1], sys.argv[2]
    server = StdioServerParameters(command=target, args=["--allow", "Monitor", "mcp"])
    async with Client(server, mode=mode, logging_callback=log, log_level="info") as client:
        seen["era"] = "modern" if client.session.discover_result is not None else "legacy"
        r = await client.call_tool(
            "Monitor", {"command": "for i in 1 2 3; do echo line$i; sleep 0.3; done; exit 4", "description": "count"}
        )
        seen["started"] = [r.is_error, r.structured_content]
        for _ in range(10):
            r = await client.call_tool("TaskOutput", {"task_id": "monitor_1", "timeout": 5000})
            seen["outputs"].append(r.structured_content)
            if r.structured_content["status"] != "running":
                break
        for _ in range(50):
            if mode != "legacy" or ended():
                break
            await anyio.sleep(0.1)


seen = {"logs": [], "outputs": []}
root = sys.argv[3]
anyio.run(main)
print(json.dumps(seen))
