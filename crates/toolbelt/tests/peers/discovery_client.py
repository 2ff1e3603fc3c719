"""Drives `toolbelt mcp` (with server-everything behind it, its tools deferred) with the
official Python SDK client: the deferred tools are not listed, ToolSearch loads one and the
client, listening for changes (subscriptions/listen, 2026-07-28), is told the list changed, the loaded tool is listed and called; the project's skills are
listed as prompts and one is fetched with an argument.

Usage: discovery_client.py TOOLBELT ROOT
Prints one JSON object with what it saw.
"""

import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def elicit(context, params):
    seen["asked"].append(params.message)
    props = (params.requested_schema or {}).get("properties", {})
    if "decision" in props:
        # A permission prompt: this person says no.
        return types.ElicitResult(action="decline")
    if "asks that these be allowed" in params.message:
        return types.ElicitResult(action="accept", content={"q1": "Allow"})
    return types.ElicitResult(action="cancel")


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri=f"file://{root}")])


async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["mcp"])
    async with Client(
        server, list_roots_callback=roots, elicitation_callback=elicit
    ) as client:
        # 2026-07-28: changes come to those who listen (subscriptions/listen).
        async with client.listen(tools_list_changed=True) as subscription, anyio.create_task_group() as tasks:

            async def count():
                async for _ in subscription:
                    seen["list_changed"] += 1

            tasks.start_soon(count)
            await session(client)
            tasks.cancel_scope.cancel()


async def session(client):
    tools = await client.list_tools()
    seen["before"] = sorted(t.name for t in tools.tools)
    search = next(t for t in tools.tools if t.name == "ToolSearch")
    seen["search_description"] = search.description
    # Called before it was loaded: it works anyway.
    r = await client.call_tool("mcp__everything__get-sum", {"a": 1, "b": 2})
    seen["early"] = [r.is_error, r.content[0].text]
    r = await client.call_tool("ToolSearch", {"query": "select:mcp__everything__echo"})
    seen["search"] = [r.is_error, r.content[0].text]
    r = await client.call_tool("ToolSearch", {"query": "add two numbers sum"})
    seen["keyword"] = [r.is_error, [t["name"] for t in r.structured_content["tools"]]]
    await anyio.sleep(0.2)
    tools = await client.list_tools()
    seen["after"] = sorted(t.name for t in tools.tools)
    r = await client.call_tool("mcp__everything__echo", {"message": "loaded"})
    seen["echo"] = [r.is_error, r.content[0].text]
    prompts = await client.list_prompts()
    seen["prompts"] = [[p.name, p.description, [a.name for a in (p.arguments or [])]] for p in prompts.prompts]
    got = await client.get_prompt("review", {"args": "src/main.rs"})
    seen["prompt"] = [m.content.text for m in got.messages]
    # A project's skill asks the person before its allowed-tools are granted.
    r = await client.call_tool("Skill", {"skill": "setup"})
    seen["skill"] = [r.is_error, r.structured_content["granted"] if r.structured_content else None]
    r = await client.call_tool("Bash", {"command": "touch granted.txt"})
    seen["granted_bash"] = [r.is_error, r.content[0].text]
    r = await client.call_tool("Bash", {"command": "touch other.txt"})
    seen["other_bash"] = [r.is_error, r.content[0].text]


seen = {"list_changed": 0, "asked": []}
root = sys.argv[2]
anyio.run(main)
print(json.dumps(seen))
