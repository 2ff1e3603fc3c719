"""Drives `toolbelt mcp` with the official Python SDK client, its roots another project than
the directory the server starts in. The roots answer comes late on purpose: the server must
wait for it before the first call.

Usage: roots_client.py TOOLBELT ROOT
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
    return types.ElicitResult(action="accept", content={"decision": "allow_always"})


async def roots(context):
    await anyio.sleep(0.5)
    return types.ListRootsResult(roots=[types.Root(uri=f"file://{root}")])


async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["mcp"])
    async with Client(server, elicitation_callback=elicit, list_roots_callback=roots) as client:
        r = await client.call_tool("Read", {"file_path": "hello.txt"})
        seen["read"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("Write", {"file_path": "new.txt", "content": "always\n"})
        seen["write"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("Write", {"file_path": "new.txt", "content": "again\n"})
        seen["again"] = [r.is_error, r.content[0].text]


seen = {"asked": []}
root = sys.argv[2]
anyio.run(main)
print(json.dumps(seen))
