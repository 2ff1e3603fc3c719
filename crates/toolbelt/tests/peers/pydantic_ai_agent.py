"""An agent built on pydantic-ai working through `toolbelt mcp`.

pydantic-ai's MCPToolset hands the model a tool's `structuredContent` (when the tool declares an
`outputSchema` and the result is all text) instead of its text content. The model here is
pydantic-ai's own FunctionModel, scripted like an agent that knows nothing of the file in
advance: it reads `greeting.py`, takes the line to change from what the Read result showed it,
edits that line, and runs `cat` through Bash to see the edit. No network is used.

Usage: pydantic_ai_agent.py TOOLBELT ROOT [ARGS...]   (ARGS go before `mcp`)
Prints one JSON object with what the model was shown at each step.
"""

import asyncio
import json
import os
import re
import sys

from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

seen: dict = {"steps": []}


def last_return(messages: list[ModelMessage]) -> ToolReturnPart | None:
    """The newest tool result in the conversation: what the model reads next."""
    for message in reversed(messages):
        for part in getattr(message, "parts", []):
            if isinstance(part, ToolReturnPart):
                return part
    return None


def shown(part: ToolReturnPart) -> dict:
    """What pydantic-ai sends the model for a tool result, and whether it came as structured data."""
    return {
        "tool": part.tool_name,
        "structured": isinstance(part.content, dict),
        "keys": sorted(part.content) if isinstance(part.content, dict) else None,
        "text": part.model_response_str(),
    }


def agent_turn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One turn of the scripted agent: each step acts only on what the previous result showed."""
    step = len(seen["steps"])
    result = last_return(messages)
    if result is not None:
        seen["steps"].append(shown(result))
    else:
        seen["steps"].append({"tool": None})
        seen["tools"] = sorted(t.name for t in info.function_tools)
        return ModelResponse(parts=[ToolCallPart("Read", {"file_path": "greeting.py"})])
    if step == 1:
        # The line to change, as the Read result showed it (numbered or not).
        found = re.search(r'GREETING = \\?"[^"\\]*\\?"', seen["steps"][-1]["text"])
        if found is None:
            return ModelResponse(parts=[TextPart("The Read result did not show me the file; I cannot edit it.")])
        old = found.group(0).replace('\\"', '"')
        seen["old_string"] = old
        new = 'GREETING = "hello from the agent"'
        return ModelResponse(
            parts=[ToolCallPart("Edit", {"file_path": "greeting.py", "old_string": old, "new_string": new})]
        )
    if step == 2:
        return ModelResponse(parts=[ToolCallPart("Bash", {"command": "cat greeting.py"})])
    return ModelResponse(parts=[TextPart("Done.")])


async def main() -> None:
    toolbelt, root = sys.argv[1], sys.argv[2]
    # The server gets this process's environment (its home and state directories), not the SDK's
    # default subset.
    transport = StdioTransport(
        command=toolbelt, args=[*sys.argv[3:], "mcp"], env=dict(os.environ), cwd=root, keep_alive=False
    )
    toolset = MCPToolset(transport, tool_error_behavior="failed")
    agent = Agent(FunctionModel(agent_turn), toolsets=[toolset])
    async with agent:
        run = await agent.run("Change the greeting in greeting.py to 'hello from the agent', then show the file.")
    seen["final"] = run.output


try:
    asyncio.run(main())
except Exception as e:  # noqa: BLE001 - report whatever failed, with what was seen until then
    seen["failure"] = f"{type(e).__name__}: {e}"
print(json.dumps(seen))
