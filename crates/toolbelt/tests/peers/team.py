"""A team's deployment on loopback: several `toolbelt mcp --http` replicas (each a machine of
its own: its own home and state, one project path) sharing a PostgreSQL database (task lists
and the audit chain),
behind HAProxy with session affinity on `Mcp-Session-Id` and health from `/readyz`.

Used by team_client.py (the replica test) and bench/team.py (the load test).
"""

import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse

PASSWORD_VAR = "TEAM_DB_PASSWORD"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=30):
    deadline = time.time() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


HAPROXY_CFG = """
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 300s
    timeout server 300s
    timeout http-request 30s
    option http-buffer-request
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    # A dead replica's sessions are sent to a live one, which says they are gone.
    option redispatch
    option httpchk GET /readyz
    default-server inter 300ms fall 2 rise 2
{affinity}{servers}
"""

AFFINITY = """    # An MCP session stays on the replica that opened it: the id it answered `initialize`
    # with is learnt from the response and matched on every request after.
    stick-table type string len 128 size 100k expire 30m
    stick on req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
"""


class Team:
    """Replicas, the proxy in front of them, and where each keeps its files."""

    def __init__(self, toolbelt, postgres_url, replicas=3, mcp_args=(), workdir=None, affinity=True,
                 allow=("Bash",)):
        self.toolbelt = toolbelt
        self.dir = workdir or tempfile.mkdtemp(prefix="toolbelt-team-")
        self.project = os.path.join(self.dir, "app")
        os.makedirs(os.path.join(self.project, ".git"), exist_ok=True)
        with open(os.path.join(self.project, "hello.txt"), "w") as f:
            f.write("hello from the workspace\n" * 20)
        url = urllib.parse.urlsplit(postgres_url)
        netloc = url.hostname + (f":{url.port}" if url.port else "")
        if url.username:
            netloc = f"{url.username}@{netloc}"
        self.storage_url = urllib.parse.urlunsplit((url.scheme, netloc, url.path, url.query, ""))
        self.password = url.password or ""
        self.replicas = []
        for i in range(replicas):
            home = os.path.join(self.dir, f"replica-{i}")
            os.makedirs(home, exist_ok=True)
            port = free_port()
            env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLBELT_")}
            env.update({
                "HOME": home,
                "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                "XDG_STATE_HOME": os.path.join(home, ".local/state"),
                "XDG_DATA_HOME": os.path.join(home, ".local/share"),
                "XDG_CACHE_HOME": os.path.join(home, ".cache"),
                "CI": "true",
                "TOOLBELT_STORAGE__URL": self.storage_url,
                "TOOLBELT_STORAGE__PASSWORD_ENV": PASSWORD_VAR,
                PASSWORD_VAR: self.password,
                "REPLICA_NAME": f"replica-{i}",
                "TOOLBELT_REPLICA": f"replica-{i}",
                # All on this machine: loopback is where the others reach it.
                "TOOLBELT_MCP__ADVERTISE_URL": f"http://127.0.0.1:{port}",
                "TOOLBELT_AUDIT__ENABLED": "true",
            })
            log = open(os.path.join(home, "server.log"), "w")  # noqa: SIM115 - closed in stop()
            process = subprocess.Popen(
                [toolbelt, *(f"--allow={tool}" for tool in allow), "mcp", "--http", f"127.0.0.1:{port}",
                 *mcp_args],
                cwd=self.project, env=env, stdout=subprocess.DEVNULL, stderr=log,
            )
            self.replicas.append({"name": f"replica-{i}", "port": port, "process": process,
                                  "home": home, "log": log, "env": env})
        for r in self.replicas:
            wait_port(r["port"])
        self.port = free_port()
        servers = "\n".join(f"    server {r['name']} 127.0.0.1:{r['port']} check" for r in self.replicas)
        cfg = os.path.join(self.dir, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write(HAPROXY_CFG.format(port=self.port, servers=servers, affinity=AFFINITY if affinity else ""))
        self.haproxy_log = open(os.path.join(self.dir, "haproxy.log"), "w")  # noqa: SIM115 - closed in stop()
        self.haproxy = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=self.haproxy_log,
                                        stderr=subprocess.STDOUT)
        wait_port(self.port)
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def replica(self, name):
        return next(r for r in self.replicas if r["name"] == name)

    def kill(self, name):
        """SIGKILL, as a machine that dies."""
        self.replica(name)["process"].send_signal(signal.SIGKILL)
        self.replica(name)["process"].wait()

    def verify(self):
        """`toolbelt audit verify --json` of the one chain every replica appends to."""
        r = self.replicas[0]
        out = subprocess.run([self.toolbelt, "audit", "verify", "--json"], check=False,
                             capture_output=True, text=True, env=r["env"], cwd=self.project)
        return out.stdout.strip()

    def rss_kib(self):
        """Each replica's resident memory (VmRSS, KiB), if it runs."""
        out = {}
        for r in self.replicas:
            try:
                with open(f"/proc/{r['process'].pid}/status") as f:
                    line = next(ln for ln in f if ln.startswith("VmRSS:"))
                out[r["name"]] = int(line.split()[1])
            except (OSError, StopIteration):
                out[r["name"]] = None
        return out

    def stop(self):
        self.haproxy.kill()
        self.haproxy.wait()
        self.haproxy_log.close()
        for r in self.replicas:
            if r["process"].poll() is None:
                r["process"].send_signal(signal.SIGTERM)
        for r in self.replicas:
            try:
                r["process"].wait(timeout=30)
            except subprocess.TimeoutExpired:
                r["process"].kill()
                r["process"].wait()
            r["log"].close()
