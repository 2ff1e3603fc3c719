"""Drives `toolbelt mcp` with the official Python SDK client, in its default (auto) mode.

Usage: python_client.py stdio TOOLBELT ROOT [ARGS...] | python_client.py http URL ROOT
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
    if "touch nope" in params.message:
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content={"decision": "allow_once"})


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri=f"file://{root}")])


async def main():
    kind, target = sys.argv[1], sys.argv[2]
    server = StdioServerParameters(command=target, args=["mcp", *sys.argv[4:]]) if kind == "stdio" else target
    async with Client(server, elicitation_callback=elicit, list_roots_callback=roots) as client:
        session = client.session
        seen["era"] = "modern" if session.discover_result is not None else "legacy"
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools.tools)
        bash = next(t for t in tools.tools if t.name == "Bash")
        seen["bash_output_schema"] = bash.output_schema is not None
        r = await client.call_tool("Read", {"file_path": "hello.txt"})
        seen["read"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("Write", {"file_path": "written.txt", "content": "by python\n"})
        seen["write"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("Bash", {"command": "touch nope"})
        seen["declined"] = [r.is_error, r.content[0].text]
        progress = []

        async def on_progress(value, total, message):
            progress.append(message or "")

        r = await client.call_tool(
            "Bash", {"command": "for i in 1 2 3; do echo step$i; sleep 0.2; done"}, progress_callback=on_progress
        )
        seen["bash"] = [r.is_error, r.structured_content["exit_code"] if r.structured_content else None]
        seen["progress"] = "".join(progress)
        try:
            await client.call_tool("NoSuchTool", {})
            seen["unknown"] = "no error"
        except Exception as e:  # noqa: BLE001 - the SDK raises its MCPError
            seen["unknown"] = str(e)
        for name, args in json.loads(sys.stdin.read() or "[]"):
            r = await client.call_tool(name, args)
            seen.setdefault("extra", []).append([name, r.is_error, "\n".join(getattr(c, "text", "[" + c.type + "]") for c in r.content)])


seen = {"asked": []}
root = sys.argv[3]
anyio.run(main)
print(json.dumps(seen))
