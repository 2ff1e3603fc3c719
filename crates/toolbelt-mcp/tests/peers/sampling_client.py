"""The official Python SDK client as an MCP host that lends its model through sampling.

Usage: sampling_client.py stdio SCENARIO NOTES OUT
       sampling_client.py http URL SCENARIO NOTES OUT

In `stdio` mode the server is the process that started this one: the protocol runs over this
process's own stdin and stdout. SCENARIO is what the client declares and how its "model"
answers:
  tools  sampling with `sampling.tools`: first a tool_use of Read on NOTES, then, once the
         request carries the tool_result with the file's content, a final text
  text   sampling without tools: a text answer
  none   no sampling at all
  modern sampling with `sampling.tools` declared, at MCP 2026-07-28 (where a server cannot
         send the client requests mid-call)
The other scenarios open their session with initialize (the SDK's legacy mode): sampling
reaches the client's model only in such a session.
It lists the tools, calls Agent, and writes one JSON object with what it saw to OUT.
"""

import json
import os
import sys
import traceback

import anyio
import mcp_types as types
from mcp import Client

FINAL = "The notes say: "


def summary(params):
    """What a sampling request carried, for the test to check."""
    messages = []
    for m in params.messages:
        blocks = m.content if isinstance(m.content, list) else [m.content]
        messages.append({"role": m.role, "types": [b.type for b in blocks]})
    hints = [h.name for h in params.model_preferences.hints or []] if params.model_preferences else []
    return {
        "tools": [t.name for t in params.tools] if params.tools is not None else None,
        "tool_choice": params.tool_choice.mode if params.tool_choice else None,
        "system": params.system_prompt,
        "messages": messages,
        "hints": hints,
        "max_tokens": params.max_tokens,
    }


def tool_result_text(params, call_id):
    """The text of the tool_result answering `call_id` in the last user message, if any."""
    last = params.messages[-1]
    blocks = last.content if isinstance(last.content, list) else [last.content]
    for block in blocks:
        if block.type == "tool_result" and block.tool_use_id == call_id:
            return "".join(getattr(c, "text", "") for c in block.content)
    return None


async def sampling(context, params):
    seen["sampling"].append(summary(params))
    if scenario == "text":
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Answered in text alone."),
            model="scripted-text-model",
            stop_reason="endTurn",
        )
    if len(seen["sampling"]) == 1:
        return types.CreateMessageResultWithTools(
            role="assistant",
            content=[
                types.TextContent(type="text", text="Let me read the notes."),
                types.ToolUseContent(type="tool_use", id="call-1", name="Read", input={"file_path": notes}),
            ],
            model="scripted-model",
            stop_reason="toolUse",
        )
    result = tool_result_text(params, "call-1")
    seen["tool_result"] = result
    if result is None:
        text = "No tool result came back."
    else:
        # Read numbers its lines: "     1\tthe line".
        text = FINAL + result.split("\t", 1)[-1].strip()
    return types.CreateMessageResultWithTools(
        role="assistant",
        content=[types.TextContent(type="text", text=text)],
        model="scripted-model",
        stop_reason="endTurn",
    )


async def session(server):
    options = {}
    if scenario in ("tools", "text", "modern"):
        options["sampling_callback"] = sampling
    if scenario in ("tools", "modern"):
        options["sampling_capabilities"] = types.SamplingCapability(tools=types.SamplingToolsCapability())
    if scenario != "modern":
        options["mode"] = "legacy"
    async with Client(server, **options) as client:
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools.tools)
        try:
            r = await client.call_tool("Agent", {"description": "read the notes", "prompt": "What do the notes say?"})
            seen["agent"] = {
                "is_error": r.is_error,
                "text": "\n".join(getattr(c, "text", "") for c in r.content),
                "structured": r.structured_content,
            }
        except Exception as e:  # noqa: BLE001 - the SDK raises its MCPError for a JSON-RPC error
            seen["agent_error"] = str(e)
        if mode == "stdio":
            # Leaving the session would wait for EOF on stdin, which the server sends only once
            # this process has gone: report and go.
            report()
            os._exit(0)


async def main():
    if mode == "stdio":
        from mcp.server.stdio import stdio_server

        await session(stdio_server())
    else:
        await session(url)


mode = sys.argv[1]
if mode == "stdio":
    url = None
    scenario, notes, out = sys.argv[2:5]
else:
    url, scenario, notes, out = sys.argv[2:6]
seen = {"sampling": []}


def report():
    with open(out, "w") as f:
        json.dump(seen, f)


try:
    anyio.run(main)
except BaseException:  # noqa: BLE001 - whatever failed goes to the test
    seen["failure"] = traceback.format_exc()
report()
