"""A small stdio MCP server for the gateway tests, set up by one JSON argument:

    {"name": "fs",
     "tools": [{"name": "get-env", "annotations": {"readOnlyHint": true}}],
     "resources": [{"uri": "mini://a", "name": "a"}],
     "started": "/tmp/x/started.log"}

It answers `initialize`, `tools/list`, `tools/call` (the tool's name and arguments back, as
JSON text), `ping`, and `resources/list` only when "resources" is given (only then does it
declare the resources capability); any other request gets -32601, as a server without that
method answers (with "ignores_unknown", no answer at all, as some hand-written servers do).
With "started", it appends its name and pid to that file when it starts, so
a test can count which servers were started. A tool with "sleep" (seconds) takes that long
to answer. A tool with "adds" (a tool) adds that tool when called, and says so with
`notifications/tools/list_changed` before it answers (the server then declares
`tools.listChanged`). A tool with "asks_roots" asks the client for its roots (`roots/list`)
and answers with them, and with the capabilities the client declared. With "asks_at_start"
(a path), it puts a question to the client (`elicitation/create`) once initialized, and writes
the answer to that file.
"""

import json
import os
import sys
import time

config = json.loads(sys.argv[1])
name = config.get("name", "mini")
tools = [dict({"inputSchema": {"type": "object"}}, **tool) for tool in config.get("tools", [])]
resources = config.get("resources")

if config.get("started"):
    with open(config["started"], "a") as log:
        log.write(f"{name} {os.getpid()}\n")


def answer(msg, result=None, error=None):
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    if error is not None:
        reply["error"] = error
    else:
        reply["result"] = result
    print(json.dumps(reply), flush=True)


# Lines read while waiting for an answer of the client's, handled after it.
pending = []


def next_lines():
    while True:
        if pending:
            yield pending.pop(0)
            continue
        line = sys.stdin.readline()
        if not line:
            return
        yield line


def wait_answer(request_id):
    """Reads until the client's answer to `request_id`; other lines are kept for later."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return {}
        msg = json.loads(line)
        if msg.get("id") == request_id and "method" not in msg:
            return msg
        pending.append(line)


for line in next_lines():
    msg = json.loads(line)
    method = msg.get("method")
    if method == "notifications/initialized" and config.get("asks_at_start"):
        question = {"message": "Your password?", "requestedSchema": {"type": "object",
                    "properties": {"password": {"type": "string"}}}}
        print(json.dumps({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create", "params": question}),
              flush=True)
        asked = wait_answer("ask-1")
        with open(config["asks_at_start"], "w") as out:
            out.write(json.dumps(asked))
        continue
    if "id" not in msg or method is None:
        continue
    if method == "initialize":
        client_capabilities = msg["params"].get("capabilities", {})
        capabilities = {"tools": {"listChanged": True} if any("adds" in t for t in tools) else {}}
        if resources is not None:
            capabilities["resources"] = {}
        answer(msg, {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": capabilities,
                     "serverInfo": {"name": name, "version": "1"}})
    elif method == "tools/list":
        answer(msg, {"tools": tools})
    elif method == "tools/call":
        params = msg.get("params", {})
        called = next((t for t in tools if t["name"] == params.get("name")), {})
        time.sleep(called.get("sleep", 0))
        added = called.pop("adds", None)
        if added is not None:
            tools.append(dict({"inputSchema": {"type": "object"}}, **added))
            print(json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}), flush=True)
        reply = {"server": name, "tool": params.get("name"), "arguments": params.get("arguments", {})}
        if called.get("asks_roots"):
            print(json.dumps({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"}), flush=True)
            roots_answer = wait_answer("roots-1")
            reply["roots"] = roots_answer.get("result", roots_answer.get("error"))
            reply["client_capabilities"] = client_capabilities
        text = json.dumps(reply)
        answer(msg, {"content": [{"type": "text", "text": text}]})
    elif method == "resources/list" and resources is not None:
        answer(msg, {"resources": resources})
    elif method == "ping":
        answer(msg, {})
    elif config.get("ignores_unknown"):
        continue
    else:
        answer(msg, error={"code": -32601, "message": f"Method not found: {method}"})
