"""The container image and the Kubernetes manifests, used as far as this machine can without a
container engine or a cluster:

* every manifest validates against the Kubernetes schemas (kubernetes-validate --strict), and
  a broken one does not; the Dockerfile passes hadolint;
* the pieces fit: the Service, PodDisruptionBudget and Ingress select the Deployment's pods and
  name its port; the Secret holds the keys the Deployment reads; the grace period outlasts
  the drain; the Deployment runs what the image's CMD runs;
* the managed settings of the ConfigMap pass `toolbelt config check`;
* the Deployment's container, run as the pod runs it (its args, its environment from the
  Secret and the downward API, the ConfigMap's settings, the test database for the cluster's)
  answers its probes, serves the official Python SDK under the Ingress's host name, names its
  session ids after the pod, refuses a Host it was not given, and drains on SIGTERM.

Usage: deploy_client.py TOOLBELT REPO POSTGRES_URL WORKDIR
Prints one JSON object with what it saw.
"""

import copy
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request

import anyio
import httpx2
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, os.path.dirname(__file__))
from team import free_port, wait_port

POD = "toolbelt-7d9f8c6b5-x2k4q"


def venv_tool(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def load(repo):
    docs = {}
    for path in sorted(glob.glob(os.path.join(repo, "deploy/kubernetes/*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                docs[doc["kind"]] = doc
    return docs


def validate(paths):
    out = subprocess.run([venv_tool("kubernetes-validate"), "--strict", *paths], capture_output=True, text=True,
                         check=False)
    return {"ok": out.returncode == 0, "said": (out.stdout + out.stderr)[-2000:]}


def get(url, host=None):
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def initialize(url, token, host):
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}", "Host": host})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.headers.get("mcp-session-id")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


async def main(toolbelt, repo, postgres_url, workdir):
    docs = load(repo)
    manifests = sorted(glob.glob(os.path.join(repo, "deploy/kubernetes/*.yaml")))
    seen["kinds"] = sorted(docs)
    seen["validate"] = validate(manifests)
    # A broken manifest is caught: a port that is not a number.
    broken = copy.deepcopy(docs["Deployment"])
    broken["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "eighty"
    broken_path = os.path.join(workdir, "broken.yaml")
    with open(broken_path, "w") as f:
        yaml.safe_dump(broken, f)
    seen["validate_broken"] = validate([broken_path])
    hadolint = subprocess.run([venv_tool("hadolint"), os.path.join(repo, "Dockerfile")], capture_output=True,
                              text=True, check=False)
    seen["hadolint"] = {"ok": hadolint.returncode == 0, "said": hadolint.stdout + hadolint.stderr}

    # The pieces fit together.
    deployment, pod = docs["Deployment"], docs["Deployment"]["spec"]["template"]
    container = pod["spec"]["containers"][0]
    labels = pod["metadata"]["labels"]
    port_names = {p["name"]: p["containerPort"] for p in container["ports"]}
    ingress_backend = docs["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    seen["fit"] = {
        "deployment_selects_pods": deployment["spec"]["selector"]["matchLabels"].items() <= labels.items(),
        "service_selects_pods": docs["Service"]["spec"]["selector"].items() <= labels.items(),
        "pdb_selects_pods": docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items(),
        "service_port_named": docs["Service"]["spec"]["ports"][0]["targetPort"] in port_names,
        "ingress_names_service": ingress_backend["name"] == docs["Service"]["metadata"]["name"]
        and ingress_backend["port"]["name"] in {p["name"] for p in docs["Service"]["spec"]["ports"]},
        "probes_on_port": all(container[p]["httpGet"]["port"] in port_names for p in ("readinessProbe", "livenessProbe")),
        "secret_keys": sorted(e["valueFrom"]["secretKeyRef"]["key"] for e in container["env"]
                              if "secretKeyRef" in e.get("valueFrom", {})),
        "secret_has": sorted(docs["Secret"]["stringData"]),
        "configmap_mounted_at": next(m["mountPath"] for m in container["volumeMounts"]
                                     if m["name"] == "managed-settings"),
    }
    settings = tomllib.loads(docs["ConfigMap"]["data"]["managed.toml"])
    seen["fit"]["grace_s"] = pod["spec"]["terminationGracePeriodSeconds"]
    seen["fit"]["drain_s"] = settings["mcp"]["drain_timeout"]
    with open(os.path.join(repo, "Dockerfile")) as f:
        lines = f.read().splitlines()
    cmd = json.loads(next(ln for ln in reversed(lines) if ln.startswith("CMD ")).removeprefix("CMD "))
    seen["fit"]["args_are_cmd"] = container["args"] == cmd

    # The container, as the pod runs it.
    home = os.path.join(workdir, "home")
    project = os.path.join(workdir, "workspace")
    os.makedirs(os.path.join(home, ".config/toolbelt"), exist_ok=True)
    os.makedirs(os.path.join(project, ".git"), exist_ok=True)
    with open(os.path.join(project, "README"), "w") as f:
        f.write("deployed\n")
    # The ConfigMap's managed settings, where this machine's user keeps settings (the managed
    # file is a system path tests do not write).
    with open(os.path.join(home, ".config/toolbelt/config.toml"), "w") as f:
        f.write(docs["ConfigMap"]["data"]["managed.toml"])
    db = urllib.parse.urlsplit(postgres_url)
    netloc = f"{db.username}@{db.hostname}:{db.port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLBELT_")}
    env.update({"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                "XDG_STATE_HOME": os.path.join(home, ".local/state"),
                "XDG_DATA_HOME": os.path.join(home, ".local/share"), "XDG_CACHE_HOME": os.path.join(home, ".cache")})
    check = subprocess.run([toolbelt, "config", "check"], cwd=project, env=env, capture_output=True, text=True,
                           check=False)
    seen["config_check"] = {"code": check.returncode, "said": check.stdout + check.stderr}
    secret = docs["Secret"]["stringData"]
    port = free_port()
    fields = {"metadata.name": POD, "status.podIP": "127.0.0.1"}
    for e in container["env"]:
        source = e.get("valueFrom", {})
        if "fieldRef" in source:
            env[e["name"]] = fields[source["fieldRef"]["fieldPath"]]
        elif "secretKeyRef" in source:
            env[e["name"]] = secret[source["secretKeyRef"]["key"]]
        else:
            # $(VAR) of an earlier variable, as the kubelet expands it; this pod's port is not 8080.
            value = e["value"]
            for name, known in env.items():
                value = value.replace(f"$({name})", known)
            env[e["name"]] = value.replace(":8080", f":{port}")
    seen["advertised"] = env.get("TOOLBELT_MCP__ADVERTISE_URL")
    # This machine's database stands in for the cluster's.
    env["TOOLBELT_STORAGE__URL"] = urllib.parse.urlunsplit((db.scheme, netloc, db.path, db.query, ""))
    env[settings["storage"]["password_env"]] = db.password or ""
    args = [a.replace("0.0.0.0:8080", f"127.0.0.1:{port}") for a in container["args"]]
    log = open(os.path.join(workdir, "server.log"), "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen([toolbelt, *args], cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_port(port)
        base = f"http://127.0.0.1:{port}"
        seen["probes"] = {p: get(base + container[p]["httpGet"]["path"]) for p in ("readinessProbe", "livenessProbe")}
        token = env["TOOLBELT_TOKEN"]
        host = docs["Ingress"]["spec"]["rules"][0]["host"]
        seen["session"] = initialize(f"{base}/mcp", token, host)
        seen["other_host"] = initialize(f"{base}/mcp", token, "evil.example")
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", "Host": host}, timeout=30)
        async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client:
            r = await client.call_tool("Read", {"file_path": "README"})
            seen["read"] = {"is_error": r.is_error, "text": "".join(getattr(c, "text", "") for c in r.content)}
        server.send_signal(signal.SIGTERM)
        began = time.time()
        seen["exit"] = server.wait(timeout=seen["fit"]["grace_s"])
        seen["stopped_in_s"] = time.time() - began
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        log.close()
        with open(os.path.join(workdir, "server.log")) as f:
            seen["server_log"] = f.read()[-3000:]
    shutil.rmtree(home, ignore_errors=True)


seen = {}
anyio.run(main, *sys.argv[1:5])
print(json.dumps(seen))
