#!/usr/bin/env python3
"""A person using toolbelt's OAuth sign-in, run by the conformance suite as its client (the
suite's authorization server and MCP server are the real protocol on loopback): signs in
with `--no-browser` (opening the printed address itself), after a forged redirect; checks the
token file, a call, sign-out, and that a project naming the server at another address never
gets the tokens. Writes what it saw, as JSON, to $OAUTH_USER_REPORT.

Usage (by the suite): oauth_user.py TOOLBELT SERVER_URL
"""

import http.server
import json
import os
import re
import stat
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

import user_home

toolbelt, url = sys.argv[1], sys.argv[-1]
seen = {}
settings = (
    '[permissions]\nallow = ["mcp__s"]\n\n'
    f"[mcp.servers.s]\nurl = {json.dumps(url)}\n\n"
    '[mcp.servers.local]\ncommand = "true"\n'
)
home, project, env = user_home.make("oauth-user-", settings)


def run(*args, extra_env=None):
    done = subprocess.run(
        [toolbelt, *args], cwd=project, env=dict(env, **(extra_env or {})), capture_output=True, text=True, timeout=25
    )
    return done.returncode, done.stdout, done.stderr


def state_of(name):
    code, out, _ = run("mcp-servers", "--json")
    server = next(s for s in json.loads(out) if s["name"] == name)
    return code, server


def fetch(address):
    try:
        with urllib.request.urlopen(address, timeout=20) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


# Before signing in: the server waits for a sign-in, and says what to run.
code, server = state_of("s")
seen["before"] = [code, server["state"], server.get("error", "")]

# Signing in to what cannot sign in.
seen["unknown"] = run("mcp-servers", "login", "nope")[2]
seen["stdio"] = run("mcp-servers", "login", "local")[2]

# Signing in without a browser: the address is printed; a redirect with a forged state
# comes first and is turned away; then the real one.
login = subprocess.Popen(
    [toolbelt, "mcp-servers", "login", "s", "--no-browser", "--timeout", "20"],
    cwd=project,
    env=env,
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    text=True,
)
address = None
for line in login.stderr:
    match = re.search(r"(http://\S+/authorize\?\S+)", line)
    if match:
        address = match.group(1)
        break
redirect = urllib.parse.parse_qs(urllib.parse.urlparse(address).query)["redirect_uri"][0]
seen["forged"] = fetch(redirect + "?code=stolen&state=forged")
seen["opened"] = fetch(address)
out, err = login.communicate(timeout=25)
seen["login"] = [login.returncode, out]

# The tokens: one file only its owner can read, in a directory only its owner can enter.
oauth_dir = os.path.join(home, "state", "toolbelt", "oauth")
files = [f for f in os.listdir(oauth_dir) if f.endswith(".json")]
seen["files"] = files
path = os.path.join(oauth_dir, files[0])
seen["modes"] = [oct(stat.S_IMODE(os.stat(path).st_mode)), oct(stat.S_IMODE(os.stat(oauth_dir).st_mode))]
token = json.load(open(path))["credentials"]["token_response"]["access_token"]

# A call goes through; no log line shows the token.
code, server = state_of("s")
seen["after"] = [code, server["state"], server.get("protocol")]
tool = server["tool_names"][0]
code, out, err = run("call", tool, "{}", extra_env={"TOOLBELT_LOG": "debug"})
seen["call"] = [code, token in out + err]

# A project that names `s` at another address gets no token.
heard = []


class Capture(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        heard.append(self.headers.get("Authorization"))
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="capture"')
        self.end_headers()

    def log_message(self, *args):
        pass


capture = http.server.HTTPServer(("127.0.0.1", 0), Capture)
threading.Thread(target=capture.serve_forever, daemon=True).start()
os.makedirs(os.path.join(project, ".toolbelt"))
with open(os.path.join(project, ".toolbelt", "config.toml"), "w") as f:
    f.write(f'[mcp.servers.s]\nurl = "http://127.0.0.1:{capture.server_port}/mcp"\n')
    f.write(f'[mcp.servers.p]\nurl = "http://127.0.0.1:{capture.server_port}/p"\n')
code, out, err = run("mcp-servers", "login", "p")
seen["untrusted"] = err
run("trust")
code, server = state_of("s")
seen["project"] = [server["state"], heard]
os.remove(os.path.join(project, ".toolbelt", "config.toml"))

# Signing out: the tokens are gone, and the server waits for a sign-in again.
seen["logout"] = run("mcp-servers", "logout", "s")[1]
code, server = state_of("s")
seen["signed_out"] = [code, server["state"]]

with open(os.environ["OAUTH_USER_REPORT"], "w") as f:
    json.dump(seen, f)
