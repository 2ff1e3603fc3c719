"""Three replicas behind HAProxy *without* session affinity (as a Kubernetes Service spreads
requests), one PostgreSQL database, and the official Python SDK as the client:

* a session's requests, wherever the proxy sends them, reach the replica that opened it (the
  others pass them on): its shell answers from one replica, a background task it started is
  read back;
* a request passed on once is not passed on again;
* a request of a killed replica's session is told the session is gone with it;
* a replica that stops says so: the others no longer pass it requests.

Usage: team_forward_client.py TOOLBELT POSTGRES_URL WORKDIR
Prints one JSON object with what it saw.
"""

import json
import os
import signal
import sys
import time

import anyio
from mcp import Client

sys.path.insert(0, os.path.dirname(__file__))
from team import Team
from team_client import open_raw, send_raw, text


async def main(toolbelt, postgres_url, workdir):
    team = Team(toolbelt, postgres_url, replicas=3, workdir=workdir, affinity=False)
    try:
        # Replicas announce themselves at start; wait for the first heartbeats.
        await anyio.sleep(0.5)
        async with Client(team.url, mode="legacy") as client:
            answers = []
            for _ in range(9):
                r = await client.call_tool("Bash", {"command": "echo $REPLICA_NAME"})
                answers.append({"is_error": r.is_error, "text": text(r).strip()})
            seen["shell_answers"] = answers
            started = await client.call_tool("Bash", {"command": "echo done-in-background", "run_in_background": True})
            task_id = next((w.strip("`.,:()") for w in text(started).split() if w.strip("`.,:()").startswith("bash_")), "")
            await anyio.sleep(0.5)
            outputs = []
            for _ in range(3):
                out = await client.call_tool("TaskOutput", {"task_id": task_id, "block": True, "timeout": 5000})
                outputs.append({"is_error": out.is_error, "text": text(out)})
            seen["background"] = {"id": task_id, "outputs": outputs}

        # A session opened on one replica, asked for on another, directly.
        a, b, c = team.replicas
        url = lambda r: f"http://127.0.0.1:{r['port']}/mcp"  # noqa: E731
        session = await open_raw(url(a))
        seen["session"] = session
        seen["passed_on"] = await send_raw(url(b), session)
        seen["passed_on_twice"] = await send_raw(url(b), session, {"toolbelt-forwarded-by": "replica-2"})

        # The owner dies: the session is gone with it.
        team.kill(a["name"])
        seen["after_kill"] = await send_raw(url(b), session)

        # A replica that stops leaves the table: its sessions are not passed to it any more.
        session_c = await open_raw(url(c))
        c["process"].send_signal(signal.SIGTERM)
        c["process"].wait(timeout=30)
        seen["after_stop"] = await send_raw(url(b), session_c)
    finally:
        team.stop()


seen = {}
anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
print(json.dumps(seen))
