"""Drives `toolbelt mcp` with the official Python SDK client in its default mode, which speaks
MCP 2026-07-28 to a server that offers it: no initialize, approvals and questions through
`input_required` results, and a few retries a client should never get away with.

Usage: modern_client.py stdio TOOLBELT ROOT | modern_client.py http URL ROOT
Prints one JSON object with what it saw. `drive` is also used by team_modern_client.py.
"""

import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from questions import QUESTION


async def elicit(context, params):
    seen["asked"].append(params.message)
    props = (params.requested_schema or {}).get("properties", {})
    if "decision" in props:
        if "touch nope" in params.message:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"decision": "allow_once"})
    if "Which database" in params.message:
        return types.ElicitResult(action="accept", content={"q1": "SQLite"})
    return types.ElicitResult(action="cancel")


async def log(params):
    seen["logs"].append(params.data)


def text(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def refused(call):
    try:
        await call
        return "accepted"
    except Exception as e:  # noqa: BLE001 - the SDK raises its MCPError
        return str(e)


async def main():
    kind, target = sys.argv[1], sys.argv[2]
    server = StdioServerParameters(command=target, args=["mcp"]) if kind == "stdio" else target
    await drive(server)


async def drive(server):
    """The session's requests, against `server` (a URL, or how to start one over stdio)."""
    async with Client(server, elicitation_callback=elicit, logging_callback=log, log_level="info") as client:
        session = client.session
        seen["version"] = client.protocol_version
        seen["era"] = "modern" if session.discover_result is not None else "legacy"
        tools = await client.list_tools()
        seen["tools"] = len(tools.tools)
        # Read, then Edit in a later request: the session remembers the read.
        r = await client.call_tool("Read", {"file_path": "hello.txt"})
        seen["read"] = [r.is_error, text(r)]
        edit = {"file_path": "hello.txt", "old_string": "hello", "new_string": "goodbye"}
        r = await client.call_tool("Edit", edit)
        seen["edit"] = [r.is_error, text(r)]
        r = await client.call_tool("Bash", {"command": "touch nope"})
        seen["declined"] = [r.is_error, text(r)]
        r = await client.call_tool("AskUserQuestion", QUESTION)
        seen["answered"] = [r.is_error, text(r)]
        r = await client.call_tool("Brief", {"message": "Halfway there.", "status": "proactive"})
        seen["brief"] = [r.is_error, text(r)]

        # Driving the rounds by hand: the first attempt asks, and says what it asks in a sealed state.
        write = {"file_path": "w.txt", "content": "sealed\n"}
        first = await session.call_tool("Write", write, allow_input_required=True)
        seen["first"] = type(first).__name__
        (key,) = first.input_requests.keys()
        seen["key"] = key
        yes = {key: {"action": "accept", "content": {"decision": "allow_once"}}}
        state = first.request_state
        tampered = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
        seen["tampered"] = await refused(
            session.call_tool("Write", write, input_responses=yes, request_state=tampered, allow_input_required=True)
        )
        other = {"file_path": "other.txt", "content": "not what was asked\n"}
        seen["other_call"] = await refused(
            session.call_tool("Write", other, input_responses=yes, request_state=state, allow_input_required=True)
        )
        # Without the answer: asked again, with a new state.
        again = await session.call_tool("Write", write, input_responses={}, request_state=state, allow_input_required=True)
        seen["unanswered"] = [type(again).__name__, sorted(again.input_requests or {})]
        seen["replayed_unanswered"] = await refused(
            session.call_tool("Write", write, input_responses=yes, request_state=state, allow_input_required=True)
        )
        state = again.request_state
        done = await session.call_tool("Write", write, input_responses=yes, request_state=state, allow_input_required=True)
        seen["redeemed"] = [type(done).__name__, done.is_error]
        seen["replayed"] = await refused(
            session.call_tool("Write", write, input_responses=yes, request_state=state, allow_input_required=True)
        )


seen = {"asked": [], "logs": []}
if __name__ == "__main__":
    anyio.run(main)
    print(json.dumps(seen))
