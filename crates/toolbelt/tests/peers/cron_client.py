"""Drives `toolbelt mcp` with the official Python SDK client: schedules a session job with
`cron` (every second, one tool call), waits for the log notification that its first run
ended, reads the run with TaskOutput, lists the jobs and removes it.

Usage: cron_client.py TOOLBELT ROOT
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
    return [l for l in seen["logs"] if isinstance(l["data"], dict) and l["data"].get("kind") == "ended"]


async def main():
    target = sys.argv[1]
    server = StdioServerParameters(command=target, args=["mcp"])
    async with Client(server, mode="legacy", logging_callback=log, log_level="info") as client:
        r = await client.call_tool(
            "cron",
            {"action": "add", "name": "scan", "every_seconds": 1, "tool": "Glob", "input": {"pattern": "*.md"}, "durable": False},
        )
        seen["added"] = r.structured_content
        for _ in range(100):
            if ended():
                break
            await anyio.sleep(0.1)
        run_id = ended()[0]["data"]["task_id"] if ended() else ""
        r = await client.call_tool("TaskOutput", {"task_id": run_id})
        seen["read"] = r.structured_content
        r = await client.call_tool("CronList", {})
        seen["listed"] = r.structured_content
        r = await client.call_tool("CronDelete", {"id": seen["added"]["job"]["id"]})
        seen["removed"] = r.structured_content


seen = {"logs": []}
root = sys.argv[2]
anyio.run(main)
print(json.dumps(seen))
