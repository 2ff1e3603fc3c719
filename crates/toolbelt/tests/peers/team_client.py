"""Three replicas behind HAProxy (affinity on `Mcp-Session-Id`), one PostgreSQL database, and
the official Python SDK as the agents' clients:

* sessions opened through the proxy are spread over the replicas and stay where they opened;
* two agents on different replicas share one task list, and of their claims of one task
  exactly one wins;
* a replica killed with SIGKILL in the middle of a call loses only its own calls: its client
  gets an error, an agent on another replica goes on, a new session continues on a live
  replica and finds the shared list;
* ids name their replica: a background task's asked for on another replica is said to run
  there, and a session of the killed replica's is said to be gone with it;
* the one audit chain the replicas share verifies afterwards, with records of each (the
  killed one's up to where it died).

Usage: team_client.py TOOLBELT POSTGRES_URL WORKDIR
Prints one JSON object with what it saw.
"""

import json
import os
import sys
import time

import urllib.error
import urllib.request

import anyio
from mcp import Client

sys.path.insert(0, os.path.dirname(__file__))
from team import Team


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def where(client):
    """The replica a session lives on, as its shell says."""
    r = await client.call_tool("Bash", {"command": "echo $REPLICA_NAME"})
    return text(r).strip()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def post(url, body, headers):
    """A bare POST: the status, the headers and the body (an error's too)."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **ACCEPT, **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


async def open_raw(url):
    """Opens a session with a bare initialize; its id, as the server gave it."""
    _, headers, _ = await anyio.to_thread.run_sync(post, url, INITIALIZE, {})
    return {k.lower(): v for k, v in headers.items()}.get("mcp-session-id")


async def send_raw(url, session, headers=None):
    """A ping in `session`: the status and the JSON-RPC error's message, if any."""
    status, _, body = await anyio.to_thread.run_sync(
        post, url, {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18", **(headers or {})})
    try:
        return status, json.loads(body).get("error", {}).get("message", "")
    except ValueError:
        return status, body


async def main(toolbelt, postgres_url, workdir):
    team = Team(toolbelt, postgres_url, replicas=3, workdir=workdir)
    seen["replicas"] = [r["name"] for r in team.replicas]
    try:
        async with Client(team.url, mode="legacy") as a, Client(team.url, mode="legacy") as b, \
                Client(team.url, mode="legacy") as c:
            placed = {"a": await where(a), "b": await where(b), "c": await where(c)}
            # Affinity: each session stays where it opened.
            placed_again = {"a": await where(a), "b": await where(b), "c": await where(c)}
            seen["placed"], seen["placed_again"] = placed, placed_again

            # One list across replicas.
            made = await a.call_tool("TaskCreate", {"subject": "Ship the release", "description": "tag and push"})
            seen["made"] = text(made)
            listed = await b.call_tool("TaskList", {})
            seen["listed_on_b"] = listed.structured_content
            claims = {}

            async def claim(name, client):
                r = await client.call_tool("TaskUpdate", {"taskId": "1", "owner": name, "status": "in_progress"})
                claims[name] = {"is_error": r.is_error, "text": text(r)}

            async with anyio.create_task_group() as group:
                group.start_soon(claim, "agent-a", a)
                group.start_soon(claim, "agent-b", b)
            seen["claims"] = claims
            got = await c.call_tool("TaskGet", {"taskId": "1"})
            seen["owner_seen_by_c"] = got.structured_content["task"].get("owner")

            # Ids name their replica: a background task's, and a session's.
            started = await a.call_tool("Bash", {"command": "sleep 30", "run_in_background": True})
            seen["background"] = text(started)
            task_id = next((w.strip("`.,:()") for w in text(started).split() if w.strip("`.,:()").startswith("bash_")), "")
            seen["background_id"] = task_id
            elsewhere = await b.call_tool("TaskOutput", {"task_id": task_id, "block": False})
            seen["background_elsewhere"] = {"is_error": elsewhere.is_error, "text": text(elsewhere),
                                            "asked_on": placed["b"]}

            # c's replica dies in the middle of c's call.
            victim = placed["c"]
            victim_url = f"http://127.0.0.1:{team.replica(victim)['port']}/mcp"
            seen["victim_session"] = await open_raw(victim_url)
            outcome = {}

            async def long_call():
                began = time.time()
                try:
                    with anyio.fail_after(30):
                        r = await c.call_tool("Bash", {"command": "sleep 20; echo survived"})
                    outcome.update(is_error=r.is_error, text=text(r))
                except Exception as e:  # noqa: BLE001 - what the client saw is the result
                    outcome.update(exception=f"{type(e).__name__}: {e}")
                outcome["took"] = time.time() - began

            async with anyio.create_task_group() as group:
                group.start_soon(long_call)
                await anyio.sleep(1.0)
                team.kill(victim)
                killed_at = time.time()
                # The others go on meanwhile.
                survivors = {}
                for name, client in (("a", a), ("b", b)):
                    if placed[name] != victim:
                        r = await client.call_tool("Read", {"file_path": "hello.txt", "limit": 1})
                        survivors[name] = {"is_error": r.is_error, "text": text(r)}
                seen["survivors"] = survivors
            outcome["after_kill"] = time.time() - killed_at
            seen["killed"] = {"replica": victim, "call": outcome}
            # The proxy notices (health checks every 300 ms, 2 failures) and a new session
            # opens on a live replica, finding the shared list.
            await anyio.sleep(1.5)
            # A request for a session the dead replica held, sent where the proxy chooses.
            seen["victim_session_after"] = await send_raw(team.url, seen["victim_session"] or "")
            async with Client(team.url, mode="legacy") as d:
                seen["new_session_on"] = await where(d)
                listed = await d.call_tool("TaskList", {})
                seen["listed_on_new"] = listed.structured_content
    finally:
        team.stop()
    seen["verify"] = json.loads(team.verify() or "null")


seen = {}
if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
    print(json.dumps(seen))
