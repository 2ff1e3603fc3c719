"""Calls server-everything's sampling tool through `toolbelt mcp` (the project's upstream) with
the official Python SDK client lending a scripted model, and prints what it saw.

Usage: upstream_sampling_client.py MODE TOOLBELT ROOT
MODE: legacy (a session opened with initialize), auto (the SDK's default: 2026-07-28), or
none (initialize, and no model lent).
"""

import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def sample(context, params):
    seen["sampled"].append(params.messages[0].content.text)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="four, from the client's model"),
        model="scripted-model",
        stop_reason="endTurn",
    )


async def main():
    mode, target = sys.argv[1], sys.argv[2]
    options = {"mode": "legacy" if mode in ("legacy", "none") else "auto"}
    if mode != "none":
        options["sampling_callback"] = sample
    async with Client(StdioServerParameters(command=target, args=["mcp"]), **options) as client:
        seen["era"] = "modern" if client.session.discover_result is not None else "legacy"
        r = await client.call_tool("mcp__everything__trigger-sampling-request", {"prompt": "what is 2+2", "maxTokens": 10})
        seen["result"] = [r.is_error, "\n".join(getattr(c, "text", "") for c in r.content)]


seen = {"sampled": []}
anyio.run(main)
print(json.dumps(seen))
