"""Calls the tools of `modern_upstream.py` through `toolbelt mcp` (the project's upstreams
`modern`, spoken to in 2026-07-28, and `legacy`, in 2025-11-25) with the official Python SDK
client answering their questions and lending a scripted model, and prints what it saw.

Usage: modern_upstream_client.py MODE TOOLBELT ROOT
MODE: legacy (a session opened with initialize) or auto (the SDK's default: 2026-07-28).
"""

import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def elicit(context, params):
    seen["asked"].append(params.message)
    return types.ElicitResult(action="accept", content={"proceed": True})


async def sample(context, params):
    seen["sampled"].append(params.messages[0].content.text)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="short"),
        model="scripted-model",
        stop_reason="endTurn",
    )


async def main():
    mode, target = sys.argv[1], sys.argv[2]
    options = {"mode": mode, "elicitation_callback": elicit, "sampling_callback": sample}
    async with Client(StdioServerParameters(command=target, args=["mcp"]), **options) as client:
        seen["era"] = "modern" if client.session.discover_result is not None else "legacy"
        for server in ("modern", "legacy"):
            for tool, args in (("roots", {}), ("confirm", {"question": "Go ahead?"}), ("summarize", {"text": "a b c"})):
                r = await client.call_tool(f"mcp__{server}__{tool}", args)
                seen[f"{server}.{tool}"] = [r.is_error, "\n".join(getattr(c, "text", "") for c in r.content)]
        # `grow` adds a tool upstream; toolbelt hears of it and lists the server's tools again.
        await client.call_tool("mcp__modern__grow", {})
        for _ in range(100):
            names = [t.name for t in (await client.list_tools()).tools]
            if "mcp__modern__fresh" in names:
                r = await client.call_tool("mcp__modern__fresh", {})
                seen["fresh"] = [r.is_error, r.content[0].text]
                break
            await anyio.sleep(0.1)


seen = {"asked": [], "sampled": []}
anyio.run(main)
print(json.dumps(seen))
