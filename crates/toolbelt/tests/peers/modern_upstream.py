"""An MCP server of the Python SDK (2.x) whose tools ask their client for input: `roots`
(the client's roots), `confirm` (a form for the person), `summarize` (the client's model);
and `grow`, which adds the tool `fresh` and says its tools changed.

Spoken to in 2026-07-28, it asks with `input_required` results and reads the answers from
the retried call; in 2025-11-25, with requests sent mid-call. Run over stdio.
"""

from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("modern-upstream")


class Choice(BaseModel):
    proceed: bool


def ask_roots() -> ListRoots:
    return ListRoots()


def ask_person(question: str) -> Elicit[Choice]:
    return Elicit(question, Choice)


def ask_model(text: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))
    return Sample([message], max_tokens=50)


@server.tool()
def roots(listed: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """The client's roots, one URI a line."""
    return "\n".join(str(root.uri) for root in listed.roots)


@server.tool()
def confirm(question: str, answer: Annotated[ElicitationResult[Choice], Resolve(ask_person)]) -> str:
    """Asks the person a yes/no question."""
    if isinstance(answer, AcceptedElicitation):
        return f"accepted: proceed={answer.data.proceed}"
    return f"not accepted: {answer.action}"


@server.tool()
def summarize(text: str, sampled: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Summarizes the text with the client's model."""
    return f"model said: {sampled.content.text}"


def fresh() -> str:
    """A tool added by `grow`."""
    return "fresh here"


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `fresh`, and tells the subscribers."""
    server.add_tool(fresh)
    await ctx.notify_tools_changed()
    return "grown"


if __name__ == "__main__":
    server.run()
