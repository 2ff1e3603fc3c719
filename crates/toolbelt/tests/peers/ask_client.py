"""Drives `toolbelt mcp` with the official Python SDK client answering the server's questions
(AskUserQuestion, a plan to approve) through elicitation, and declining one; Brief's message
arrives as a log notification.

Usage: ask_client.py stdio TOOLBELT ROOT | ask_client.py http URL ROOT
Prints one JSON object with what it saw.
"""

import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from questions import QUESTION


async def elicit(context, params):
    schema = params.requested_schema or {}
    props = schema.get("properties", {})
    seen["forms"].append({"message": params.message, "fields": sorted(props)})
    if "decision" in props:
        # A permission prompt (the plan's approved edits need none).
        return types.ElicitResult(action="accept", content={"decision": "allow_once"})
    if "Which database" in params.message:
        if seen["declines"] == 0:
            seen["declines"] += 1
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"q1": "SQLite", "q1_other": "version 3.45"})
    if "Approve this plan?" in params.message:
        return types.ElicitResult(action="accept", content={"q1": "Approve, allow all edits"})
    return types.ElicitResult(action="cancel")


async def log(params):
    seen["logs"].append(params.data)


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri=f"file://{root}")])


async def main():
    kind, target = sys.argv[1], sys.argv[2]
    server = StdioServerParameters(command=target, args=["mcp"]) if kind == "stdio" else target
    async with Client(
        server, elicitation_callback=elicit, logging_callback=log, log_level="info", list_roots_callback=roots
    ) as client:
        r = await client.call_tool("AskUserQuestion", QUESTION)
        seen["declined"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("AskUserQuestion", QUESTION)
        seen["answered"] = [r.is_error, r.content[0].text, r.structured_content]
        r = await client.call_tool("Brief", {"message": "Halfway there.", "status": "proactive"})
        seen["brief"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("EnterPlanMode", {})
        seen["enter"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("Write", {"file_path": "plan.txt", "content": "x\n"})
        seen["write_in_plan"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("ExitPlanMode", {"plan": "1. Write plan.txt."})
        seen["exit"] = [r.is_error, r.content[0].text]
        r = await client.call_tool("Write", {"file_path": "plan.txt", "content": "x\n"})
        seen["write_after"] = [r.is_error, r.content[0].text]


seen = {"forms": [], "logs": [], "declines": 0}
root = sys.argv[3]
anyio.run(main)
print(json.dumps(seen))
