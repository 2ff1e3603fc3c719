//! The gateway against real upstream servers: a toolbelt MCP server over HTTP on loopback, in
//! this process, and small stdio servers written in Python.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::{EventSink, ToolEvent};
use toolbelt_mcp::approve::SessionApprovers;
use toolbelt_mcp::client::{Gateway, UpstreamConfig, UpstreamState};
use toolbelt_mcp::{McpServer, ServerOptions, http};
use toolbelt_runtime::{Runtime, Session, ToolCall};

/// A toolbelt server (every built-in tool, no policy) on loopback; its URL.
async fn upstream(root: &Path, shutdown: CancellationToken) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let registry = toolbelt_core::Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    let mut services = toolbelt_core::Extensions::default();
    services.insert(toolbelt_tools::shell::SandboxConfig {
        mode: toolbelt_tools::shell::SandboxMode::DangerFullAccess,
        ..Default::default()
    });
    let approvers = Arc::new(SessionApprovers::default());
    let runtime = Arc::new(
        Runtime::builder(Arc::new(registry))
            .authorizer(Arc::new(toolbelt_policy::AllowAll))
            .services(services)
            .approver(approvers.clone())
            .build(),
    );
    let options = Arc::new(ServerOptions {
        cwd: root.to_path_buf(),
        roots: vec![root.to_path_buf()],
        sessions_dir: root.join(".sessions"),
        approvers,
        askers: Default::default(),
        instructions: None,
        notices: Vec::new(),
        inline: Default::default(),
        drain: None,
        team: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(http::serve_on(
        listener,
        move || McpServer::new(runtime.clone(), options.clone()),
        Default::default(),
        shutdown,
    ));
    url
}

struct Side {
    _dir: tempfile::TempDir,
    root: PathBuf,
    runtime: Runtime,
    session: Session,
    gateway: Gateway,
    _stop: CancellationToken,
}

fn http_server(url: &str) -> UpstreamConfig {
    serde_json::from_value(json!({"url": url})).unwrap()
}

async fn gateway_to(
    servers: Vec<(&str, UpstreamConfig)>,
    root: PathBuf,
    dir: tempfile::TempDir,
    stop: CancellationToken,
) -> Side {
    let registry = Arc::new(toolbelt_core::Registry::new());
    let servers = servers.into_iter().map(|(n, c)| (n.to_string(), c)).collect();
    let gateway = Gateway::start(servers, registry.clone()).await;
    let runtime = Runtime::builder(registry).authorizer(Arc::new(toolbelt_policy::AllowAll)).build();
    let session = Session::new("gw", root.clone(), vec![root.clone()], root.join(".gw"));
    Side { _dir: dir, root, runtime, session, gateway, _stop: stop }
}

async fn side() -> Side {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let stop = CancellationToken::new();
    let url = upstream(&root, stop.clone()).await;
    let mut config = http_server(&url);
    config.disabled_tools = vec!["Write".into(), "write".into()];
    gateway_to(vec![("up", config)], root, dir, stop).await
}

/// [`side`] with the gateway's runtime holding results to `budget` characters (the upstream
/// keeps the default).
async fn side_with_budget(budget: usize) -> Side {
    let mut s = side().await;
    let config = toolbelt_runtime::RuntimeConfig { output_budget: budget, ..Default::default() };
    s.runtime = Runtime::builder(s.runtime.registry().clone())
        .authorizer(Arc::new(toolbelt_policy::AllowAll))
        .config(config)
        .build();
    s
}

impl Side {
    async fn call(&self, name: &str, input: Value) -> toolbelt_runtime::ToolResult {
        self.runtime
            .call(&self.session, ToolCall::new("c1", name, input), &EventSink::none(), &CancellationToken::new())
            .await
    }
}

/// How many built-in tools a toolbelt server lists up front (its deferred ones wait for
/// ToolSearch).
fn listed_builtins() -> usize {
    toolbelt_tools::builtin().iter().filter(|t| t.spec().defer != toolbelt_core::Defer::Deferred).count()
}

#[tokio::test]
async fn upstream_tools_join_the_registry_and_answer() {
    let s = side().await;
    // Every built-in tool the upstream lists (not the deferred ones) but the disabled Write.
    let listed = listed_builtins() - 1;
    assert_eq!(s.gateway.statuses()[0].state, UpstreamState::Connected { tools: listed });
    let names: Vec<String> = s.runtime.registry().specs().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"mcp__up__Read".to_string()) && names.contains(&"ListMcpResources".to_string()));
    assert!(!names.contains(&"mcp__up__Write".to_string()), "disabled_tools leaves Write out");
    // A call of it says which setting leaves it out; a name the server does not list is told.
    let r = s.call("mcp__up__Write", json!({"file_path": "x", "content": ""})).await;
    assert_eq!(r.outcome, toolbelt_runtime::Outcome::Disabled);
    assert!(r.text().starts_with("tool `mcp__up__Write` is disabled: `disabled_tools` of MCP server `up` lists it"));
    let unknown = s.gateway.unknown_tool_names();
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!((unknown[0].name.as_str(), unknown[0].closest.as_deref()), ("write", Some("Write")));
    let spec = s.runtime.registry().lookup("mcp__up__Bash").unwrap().spec().clone();
    assert_eq!(spec.title.as_deref(), Some("Run a shell command"));
    assert!(spec.output_schema.is_some());
    // The gateway's own tools declare their schemas like every built-in tool, and their
    // structured results match them.
    for name in ["ListMcpResources", "ReadMcpResource"] {
        let spec = s.runtime.registry().lookup(name).unwrap().spec().clone();
        insta::assert_json_snapshot!(format!("{name}_input"), spec.input_schema);
        insta::assert_json_snapshot!(format!("{name}_output"), spec.output_schema.clone().unwrap());
    }
    let listed = s.call("ListMcpResources", json!({})).await;
    assert!(!listed.is_error, "{}", listed.text());
    let schema = s.runtime.registry().lookup("ListMcpResources").unwrap().spec().output_schema.clone().unwrap();
    let structured = listed.structured.clone().unwrap();
    assert!(jsonschema::draft202012::new(&schema).unwrap().is_valid(&structured), "{structured} against {schema}");
    // The upstream (toolbelt's own server) declares no resources: named, not asked.
    assert_eq!(structured, json!({"resources": [], "without": [{"server": "up", "reason": "offers no resources"}]}));

    std::fs::write(s.root.join("a.txt"), "from upstream\n").unwrap();
    let r = s.call("mcp__up__Read", json!({"file_path": "a.txt"})).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "     1\tfrom upstream");
    let r = s.call("mcp__up__Bash", json!({"command": "echo typed"})).await;
    assert_eq!(r.structured.unwrap()["stdout"], "typed\n");
    // The upstream's own schema validates the input here, before anything is sent.
    let r = s.call("mcp__up__Read", json!({"file_path": 7})).await;
    assert_eq!(r.outcome, "invalid_input");
    assert!(r.text().contains("/file_path: expected string"), "{}", r.text());
    // A failure upstream is this call's error.
    let r = s.call("mcp__up__Read", json!({"file_path": "nope.txt"})).await;
    assert!(r.is_error && r.text().contains("nope.txt"));
}

#[tokio::test]
async fn an_upstream_structured_result_over_the_budget_is_cut_and_still_matches_its_schema() {
    let s = side_with_budget(1_000).await;
    let lines: String = (1..=400).map(|n| format!("upstream line {n}\n")).collect();
    std::fs::write(s.root.join("long.txt"), lines).unwrap();
    let r = s.call("mcp__up__Read", json!({"file_path": "long.txt"})).await;
    assert!(!r.is_error, "{}", r.text());
    // The upstream sent all 400 lines (within its own budget); the gateway cut both forms.
    let text = r.text();
    let spill = text.split("The full output was saved to ").nth(1).unwrap().split("; read it").next().unwrap();
    assert!(std::fs::read_to_string(spill).unwrap().contains("   400\tupstream line 400"));
    let structured = r.structured.clone().unwrap();
    let content = structured["content"].as_str().unwrap();
    assert!(content.starts_with("     1\tupstream line 1\n") && content.contains("   400\tupstream line 400"));
    assert!(content.chars().count() < 1_100, "{content}");
    assert_eq!(structured["truncation"]["full_output"], spill);
    // The schema the gateway lists for the upstream tool declares what it added.
    let schema = s.runtime.registry().lookup("mcp__up__Read").unwrap().spec().output_schema.clone().unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&structured).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{structured:#}: {errors:?}");
}

#[tokio::test]
async fn progress_comes_through_and_cancellation_goes_upstream() {
    let s = side().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        EventSink::new(move |e: &ToolEvent| {
            if let ToolEvent::Progress { message, .. } = e {
                seen.lock().unwrap().push(message.clone());
            }
        })
    };
    let input = json!({"command": "for i in 1 2 3; do echo tick$i; sleep 0.2; done"});
    let r =
        s.runtime.call(&s.session, ToolCall::new("p", "mcp__up__Bash", input), &sink, &CancellationToken::new()).await;
    assert!(!r.is_error, "{}", r.text());
    let progress = seen.lock().unwrap().join("");
    assert!(progress.contains("tick1") && progress.contains("tick3"), "{progress:?}");

    let pid_file = s.root.join("sleep.pid");
    let cancel = CancellationToken::new();
    let input = json!({"command": format!("sleep 60 & echo $! > {}; wait", pid_file.display())});
    let none = EventSink::none();
    let call = s.runtime.call(&s.session, ToolCall::new("x", "mcp__up__Bash", input), &none, &cancel);
    let canceller = async {
        for _ in 0..200 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cancel.cancel();
    };
    let (r, ()) = tokio::join!(call, canceller);
    assert_eq!(r.outcome, "cancelled");
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let mut gone = false;
    for _ in 0..200 {
        gone = !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
        if gone {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the upstream's process {pid} outlived the cancelled call");
}

#[tokio::test]
async fn a_failing_server_never_holds_the_others_up() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let stop = CancellationToken::new();
    let good = http_server(&upstream(&root, stop.clone()).await);
    // A port that accepts connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut mute: UpstreamConfig = http_server(&format!("http://{}/mcp", silent.local_addr().unwrap()));
    mute.startup_timeout = Duration::from_secs(1);
    let missing: UpstreamConfig = serde_json::from_value(json!({"command": "/no/such/server"})).unwrap();
    let s = gateway_to(vec![("good", good), ("mute", mute), ("missing", missing)], root, dir, stop).await;
    let states: Vec<(String, UpstreamState)> = s.gateway.statuses().into_iter().map(|st| (st.name, st.state)).collect();
    let listed = listed_builtins();
    assert_eq!(states[0], ("good".into(), UpstreamState::Connected { tools: listed }));
    assert!(
        matches!(&states[1].1, UpstreamState::Failed { error } if error.contains("no answer within 1 s")),
        "{states:?}"
    );
    assert!(matches!(&states[2].1, UpstreamState::Failed { error } if error.contains("/no/such/server")), "{states:?}");
    assert!(!s.call("mcp__good__Glob", json!({"pattern": "*"})).await.is_error);
    drop(silent);
}

/// A stdio MCP server in Python: counts its starts in `starts`, answers initialize and
/// tools/list (one tool, `crash`), and exits when `crash` is called.
fn crashing_server(dir: &Path) -> UpstreamConfig {
    let script = dir.join("crashy.py");
    std::fs::write(
        &script,
        r#"
import json, sys
open(sys.argv[1], "a").write("start\n")
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "crashy", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "crash", "description": "Exits.", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        sys.exit(3)
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)
"#,
    )
    .unwrap();
    let starts = dir.join("starts");
    serde_json::from_value(json!({"command": "python3", "args": [script, starts]})).unwrap()
}

#[tokio::test]
async fn a_crashed_server_is_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let config = crashing_server(&root);
    let s = gateway_to(vec![("crashy", config)], root.clone(), dir, CancellationToken::new()).await;
    assert_eq!(s.gateway.statuses()[0].state, UpstreamState::Connected { tools: 1 });
    let r = s.call("mcp__crashy__crash", json!({})).await;
    assert!(r.is_error, "{}", r.text());
    let starts = || std::fs::read_to_string(root.join("starts")).unwrap_or_default().lines().count();
    let mut restarted = false;
    for _ in 0..100 {
        if starts() >= 2 && s.gateway.statuses()[0].state == (UpstreamState::Connected { tools: 1 }) {
            restarted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(restarted, "not restarted: {:?}", s.gateway.statuses());
}
