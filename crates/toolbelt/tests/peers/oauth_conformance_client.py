#!/usr/bin/env python3
"""The conformance suite's client for its `auth/*` scenarios: toolbelt's gateway signing in.

The suite runs `<this> <toolbelt> <server url>`, with MCP_CONFORMANCE_SCENARIO and, for a
pre-registered client, MCP_CONFORMANCE_CONTEXT set. This does what a user does, through the
real binary, in a home of its own:

1. writes the server into the user's settings (`[mcp.servers.s]`, its `oauth` table);
2. runs `toolbelt mcp-servers login s` with a browser that follows the authorization
   server's redirect back to toolbelt's loopback listener (`--browse`, below);
3. calls the server's first tool through `toolbelt call`; when the call says to sign in
   again (more scope), signs in again, at most twice.

The exit status is toolbelt's: 0 once a call went through.
"""

import json
import os
import subprocess
import sys
import urllib.request

import user_home

CIMD = "https://conformance-test.local/client-metadata.json"


def browse(url):
    """The browser: follows the redirects, ending at toolbelt's listener."""
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            response.read()
    except Exception as error:  # the listener's 400 for a refused sign-in, and the like
        print(f"browser: {error}", file=sys.stderr)


def main():
    if sys.argv[1] == "--browse":
        return browse(sys.argv[2])
    toolbelt, url = sys.argv[1], sys.argv[-1]
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth, secret = [f"client_metadata_url = {json.dumps(CIMD)}"], None
    if context.get("client_id"):
        oauth.append(f"client_id = {json.dumps(context['client_id'])}")
        if context.get("client_secret"):
            secret = context["client_secret"]
            oauth.append('client_secret_env = "CONFORMANCE_CLIENT_SECRET"')
        if context.get("issuer"):
            oauth.append(f"issuer = {json.dumps(context['issuer'])}")
    settings = (
        '[permissions]\nallow = ["mcp__s"]\n\n'
        f"[mcp.servers.s]\nurl = {json.dumps(url)}\n\n"
        "[mcp.servers.s.oauth]\n" + "\n".join(oauth) + "\n"
    )
    _, project, env = user_home.make("oauth-conformance-", settings)
    env["BROWSER"] = f"{sys.executable} {os.path.abspath(__file__)} --browse"
    if secret is not None:
        env["CONFORMANCE_CLIENT_SECRET"] = secret

    def run(*args):
        done = subprocess.run([toolbelt, *args], cwd=project, env=env, capture_output=True, text=True, timeout=25)
        sys.stderr.write(f"$ toolbelt {' '.join(args)} -> {done.returncode}\n{done.stdout}{done.stderr}\n")
        return done

    login = run("mcp-servers", "login", "s", "--json", "--timeout", "20")
    if login.returncode != 0:
        return login.returncode or 1
    tools = json.loads(login.stdout).get("tools") or []
    if not tools:
        return 1
    for _ in range(3):
        call = run("call", tools[0], "{}")
        if call.returncode == 0:
            return 0
        if "mcp-servers login" not in call.stdout + call.stderr:
            return call.returncode
        again = run("mcp-servers", "login", "s", "--json", "--timeout", "20")
        if again.returncode != 0:
            return again.returncode or 1
    return 1


if __name__ == "__main__":
    sys.exit(main())
