//! OpenTelemetry export through the real binary, to a loopback OTLP/HTTP receiver that decodes
//! what it gets with the official protobuf classes (`tests/peers/otlp_receiver.py`): a span per
//! call with the tool, outcome, decision and who decided, session and client, and the call
//! metrics, from `toolbelt call`, `toolbelt mcp` and `toolbelt agent`; nothing without the
//! `OTEL_*` variables, nor with `OTEL_SDK_DISABLED=true`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/peers.rs"]
mod peers;
#[path = "common/stdio_mcp.rs"]
mod stdio_mcp;

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use toolbelt_agent::testing::{ScriptedServer, Turn};

/// The receiver, killed on drop, and the file it writes.
struct Receiver {
    child: Child,
    out: PathBuf,
    endpoint: String,
}

impl Receiver {
    fn start(peers: &peers::Peers, dir: &Path) -> Receiver {
        let out = dir.join("otlp.jsonl");
        let mut child = Command::new(peers.python())
            .arg(peers::script("otlp_receiver.py"))
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut port = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut port).unwrap();
        Receiver { child, out, endpoint: format!("http://127.0.0.1:{}", port.trim()) }
    }

    /// Every export request received so far: (signal, body).
    fn received(&self) -> Vec<(String, Value)> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (v["signal"].as_str().unwrap().to_string(), v["body"].clone())
            })
            .collect()
    }

    /// The spans received, each as (name, attributes, status, resource attributes).
    fn spans(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        for (signal, body) in self.received() {
            if signal != "traces" {
                continue;
            }
            for rs in body["resourceSpans"].as_array().unwrap() {
                let resource = attributes(&rs["resource"]["attributes"]);
                for ss in rs["scopeSpans"].as_array().unwrap() {
                    for span in ss["spans"].as_array().unwrap() {
                        spans.push(Span {
                            name: span["name"].as_str().unwrap().to_string(),
                            attributes: attributes(&span["attributes"]),
                            status: span["status"]["code"].as_str().unwrap_or("STATUS_CODE_UNSET").to_string(),
                            resource: resource.clone(),
                        });
                    }
                }
            }
        }
        spans
    }

    /// The sum of the data points of metric `name` whose attributes include `labels`.
    fn metric(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let mut total = 0.0;
        for (signal, body) in self.received() {
            if signal != "metrics" {
                continue;
            }
            for rm in body["resourceMetrics"].as_array().unwrap() {
                for sm in rm["scopeMetrics"].as_array().unwrap() {
                    for metric in sm["metrics"].as_array().unwrap().iter().filter(|m| m["name"] == name) {
                        let points =
                            metric["sum"]["dataPoints"].as_array().or(metric["histogram"]["dataPoints"].as_array());
                        for point in points.into_iter().flatten() {
                            let attrs = attributes(&point["attributes"]);
                            if labels.iter().all(|(k, v)| attrs[*k] == *v) {
                                let value =
                                    point.get("asInt").or(point.get("count")).and_then(|v| v.as_str()).unwrap_or("0");
                                total += value.parse::<f64>().unwrap();
                            }
                        }
                    }
                }
            }
        }
        total
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Span {
    name: String,
    attributes: Value,
    status: String,
    resource: Value,
}

/// OTLP's `[{"key", "value": {"stringValue"|…}}]` as one JSON object of plain values.
fn attributes(list: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for kv in list.as_array().into_iter().flatten() {
        let value = &kv["value"];
        let plain = value
            .get("stringValue")
            .cloned()
            .or_else(|| value.get("boolValue").cloned())
            .or_else(|| value.get("intValue").cloned())
            .or_else(|| value.get("doubleValue").cloned())
            .unwrap_or(Value::Null);
        out.insert(kv["key"].as_str().unwrap().to_string(), plain);
    }
    Value::Object(out)
}

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("notes.md"), "status: draft\n").unwrap();
    (dir, root)
}

fn exporting(cmd: &mut Command, receiver: &Receiver) {
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint).env("OTEL_SERVICE_NAME", "toolbelt-test");
}

#[test]
fn calls_from_the_cli_the_mcp_server_and_an_agent_are_exported() {
    let Some(peers) = peers::Peers::find() else { return };
    let (dir, root) = workspace();
    let receiver = Receiver::start(&peers, dir.path());

    // The CLI: an allowed call and a denied one.
    let mut read = hermetic::toolbelt(&root);
    exporting(&mut read, &receiver);
    let out = read.args(["call", "Read", r#"{"file_path": "notes.md"}"#]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut denied = hermetic::toolbelt(&root);
    exporting(&mut denied, &receiver);
    let out = denied.args(["call", "Bash", r#"{"command": "rm -rf build"}"#]).output().unwrap();
    assert!(!out.status.success());

    // The MCP server over stdio.
    let mut server = hermetic::toolbelt(&root);
    exporting(&mut server, &receiver);
    server.arg("mcp");
    let mut mcp = stdio_mcp::StdioMcp::start(server);
    let answer = mcp.call("Grep", json!({"pattern": "status"}));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(mcp.finish(), "the server exits 0 when its client leaves");

    // An agent on a loopback model.
    let model = ScriptedServer::openai([
        Turn::tool_call("r1", "Read", json!({"file_path": "notes.md"})),
        Turn::text("It is a draft."),
    ])
    .unwrap();
    let mut agent = hermetic::toolbelt(&root);
    exporting(&mut agent, &receiver);
    let out = agent.envs(model.env()).args(["agent", "What is the status?"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let spans = receiver.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 4, "{spans:#?}");
    for name in ["execute_tool Read", "execute_tool Bash", "execute_tool Grep"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let by_front_end =
        |front: &str| spans.iter().filter(|s| s.resource["toolbelt.front_end"] == front).collect::<Vec<_>>();
    let cli = by_front_end("cli");
    assert_eq!(cli.len(), 2, "{spans:#?}");
    let read = cli.iter().find(|s| s.name == "execute_tool Read").unwrap();
    let a = &read.attributes;
    assert_eq!(
        (a["gen_ai.operation.name"].as_str(), a["gen_ai.tool.name"].as_str()),
        (Some("execute_tool"), Some("Read"))
    );
    assert_eq!((a["toolbelt.outcome"].as_str(), a["toolbelt.decision"].as_str()), (Some("ok"), Some("allow")), "{a}");
    assert_eq!(a["toolbelt.client.kind"], "cli");
    assert!(a["session.id"].as_str().is_some_and(|s| !s.is_empty()) && a["gen_ai.tool.call.id"].is_string(), "{a}");
    assert!(!a.to_string().contains("notes.md"), "no input in a span: {a}");
    assert_eq!(read.status, "STATUS_CODE_OK");
    assert_eq!(read.resource["service.name"], "toolbelt-test");
    let bash = cli.iter().find(|s| s.name == "execute_tool Bash").unwrap();
    let b = &bash.attributes;
    assert_eq!((b["toolbelt.outcome"].as_str(), b["toolbelt.decision"].as_str()), (Some("denied"), Some("ask")), "{b}");
    assert_eq!(b["toolbelt.decision.source"], "mode", "who decided: {b}");
    assert_eq!(bash.status, "STATUS_CODE_ERROR");
    let mcp = by_front_end("mcp");
    assert_eq!(mcp.len(), 1, "{spans:#?}");
    assert_eq!(
        (mcp[0].attributes["toolbelt.client.kind"].as_str(), mcp[0].attributes["toolbelt.client.name"].as_str()),
        (Some("mcp"), Some("t"))
    );
    let agent = by_front_end("agent");
    assert_eq!(agent.len(), 1, "{spans:#?}");
    assert_eq!(agent[0].name, "execute_tool Read");

    // The metrics, counted as /metrics counts them.
    assert_eq!(receiver.metric("toolbelt.calls", &[("tool", "Read"), ("outcome", "ok")]), 2.0);
    assert_eq!(receiver.metric("toolbelt.calls", &[("tool", "Bash"), ("outcome", "denied")]), 1.0);
    assert_eq!(receiver.metric("toolbelt.call.duration", &[("tool", "Grep")]), 1.0);
    assert_eq!(receiver.metric("toolbelt.decisions", &[("decision", "ask"), ("source", "mode")]), 1.0);
}

#[test]
fn nothing_is_exported_unless_asked() {
    let Some(peers) = peers::Peers::find() else { return };
    let (dir, root) = workspace();
    let receiver = Receiver::start(&peers, dir.path());
    let out = hermetic::toolbelt(&root).args(["call", "Read", r#"{"file_path": "notes.md"}"#]).output().unwrap();
    assert!(out.status.success());
    let mut disabled = hermetic::toolbelt(&root);
    exporting(&mut disabled, &receiver);
    let out = disabled
        .env("OTEL_SDK_DISABLED", "true")
        .args(["call", "Read", r#"{"file_path": "notes.md"}"#])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut none = hermetic::toolbelt(&root);
    exporting(&mut none, &receiver);
    let out = none
        .env("OTEL_TRACES_EXPORTER", "none")
        .env("OTEL_METRICS_EXPORTER", "none")
        .args(["call", "Read", r#"{"file_path": "notes.md"}"#])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(receiver.received().is_empty(), "{:?}", receiver.received());
}

#[test]
fn a_server_exports_what_it_holds_as_gauges() {
    let Some(peers) = peers::Peers::find() else { return };
    let (dir, root) = workspace();
    let receiver = Receiver::start(&peers, dir.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = hermetic::toolbelt(&root);
    exporting(&mut server, &receiver);
    let mut child = server
        .env("OTEL_METRIC_EXPORT_INTERVAL", "200")
        .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()), nix::sys::signal::SIGTERM)
        .unwrap();
    assert!(child.wait().unwrap().success());
    for gauge in [
        "toolbelt.calls.running",
        "toolbelt.processes.running",
        "toolbelt.storage.errors",
        "toolbelt.mcp.sessions.open",
    ] {
        assert_eq!(receiver.metric(gauge, &[]), 0.0, "{gauge}");
        let named =
            receiver.received().iter().any(|(_, body)| body.to_string().contains(&format!("\"name\":\"{gauge}\"")));
        assert!(named, "{gauge} exported");
    }
}

#[test]
fn the_collector_key_never_reaches_a_command() {
    let (_dir, root) = workspace();
    let input =
        json!({"command": "echo ${OTEL_EXPORTER_OTLP_HEADERS:-unset} ${OTEL_EXPORTER_OTLP_TRACES_HEADERS:-unset}"});
    let out = hermetic::toolbelt(&root)
        .env("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20collector-key-1")
        .env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-team-key=collector-key-2")
        .env("OTEL_TRACES_EXPORTER", "none")
        .env("OTEL_METRICS_EXPORTER", "none")
        .args(["--allow", "Bash", "call", "Bash", &input.to_string()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.trim(), "unset unset", "{said}{}", String::from_utf8_lossy(&out.stderr));
}
