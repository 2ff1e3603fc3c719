"""Three replicas behind HAProxy *without* affinity, one PostgreSQL database, and the official
Python SDK speaking MCP 2026-07-28: no protocol session, so the proxy spreads a client's
requests over every replica, and each must find what earlier ones left (through the shared
database):

* the session of modern_client.py, whole: a Read on one replica and the Edit on the next;
  approvals and questions asked by one replica and answered in a retry another one redeems,
  once (a replayed or altered state is refused wherever it lands);
* the working directory: a `cd` on one replica holds on the others;
* a grant for the session given on one replica holds on the others;
* files read at once on three replicas all count as read: each is then edited on every
  replica in turn;
* a background command stays on the replica that started it: its output is read through the
  proxy, whichever replica the request reaches (the others pass it on).

Usage: team_modern_client.py TOOLBELT POSTGRES_URL WORKDIR
Prints one JSON object with what it saw.
"""

import json
import os
import sys

import anyio
import mcp_types as types
from mcp import Client

sys.path.insert(0, os.path.dirname(__file__))
import modern_client
from team import Team
from team_client import text

asked = []


async def elicit(context, params):
    asked.append(params.message)
    decision = "allow_session" if "touch granted.txt" in params.message else "allow_once"
    return types.ElicitResult(action="accept", content={"decision": decision})


async def main(toolbelt, postgres_url, workdir):
    team = Team(toolbelt, postgres_url, replicas=3, workdir=workdir, affinity=False, allow=())
    seen = modern_client.seen
    try:
        with open(os.path.join(team.project, "hello.txt"), "w") as f:
            f.write("hello from the workspace\n")
        await modern_client.drive(team.url)

        async with Client(team.url, elicitation_callback=elicit) as client:
            r = await client.call_tool("Bash", {"command": "mkdir -p sub && cd sub"})
            seen["cd"] = [r.is_error, text(r)]
            answers = []
            for _ in range(3):
                r = await client.call_tool("Bash", {"command": "pwd; echo $REPLICA_NAME"})
                answers.append([r.is_error, text(r).split()])
            seen["pwd"] = answers
            r = await client.call_tool("Bash", {"command": "touch granted.txt"})
            seen["granted"] = [r.is_error, text(r)]
            before = len(asked)
            again = []
            for _ in range(3):
                r = await client.call_tool("Bash", {"command": "touch granted.txt; echo $REPLICA_NAME"})
                again.append([r.is_error, text(r).strip()])
            seen["after_grant"] = {"asked": asked[before:], "answers": again}

            started = await client.call_tool(
                "Bash", {"command": "echo started-on-$REPLICA_NAME; sleep 1; echo bg-done", "run_in_background": True}
            )
            task = next((w.strip("`.,:()") for w in text(started).split() if w.strip("`.,:()").startswith("bash_")), "")
            outputs = []
            for _ in range(3):
                out = await client.call_tool("TaskOutput", {"task_id": task, "block": True, "timeout": 5000})
                outputs.append([out.is_error, text(out)])
            seen["background"] = {"id": task, "outputs": outputs}

            # Three Reads at once, through the proxy (so on three replicas), each replica
            # writing the files read it saw.
            names = ["a.txt", "b.txt", "c.txt"]
            for name in names:
                with open(os.path.join(team.project, "sub", name), "w") as f:
                    f.write(f"v0 {name}\n")
            reads = {}

            async def read(name):
                r = await client.call_tool("Read", {"file_path": name})
                reads[name] = r.is_error

            async with anyio.create_task_group() as tg:
                for name in names:
                    tg.start_soon(read, name)

        # Then each file edited on every replica in turn, asked of each directly: every replica
        # must know of every read (and of the edits before it on the others).
        edits = []
        for name in names:
            for i, replica in enumerate(team.replicas):
                url = f"http://127.0.0.1:{replica['port']}/mcp"
                async with Client(url, elicitation_callback=elicit) as direct:
                    edit = {"file_path": name, "old_string": f"v{i} ", "new_string": f"v{i + 1} "}
                    r = await direct.call_tool("Edit", edit)
                    edits.append([replica["name"], name, r.is_error, text(r)])
        seen["parallel"] = {"reads": reads, "edits": edits}
    finally:
        team.stop()


anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
print(json.dumps(modern_client.seen))
