//! Agents on the MCP host's model: the official Python SDK client connects to a toolbelt MCP
//! server (in this process, over real stdio pipes or loopback Streamable HTTP), declares
//! sampling, and answers each `sampling/createMessage` from a script
//! (`tests/peers/sampling_client.py`); the agent tools are listed only where agents can run.
//!
//! The client is installed by `.ci/run` into `.ci/peers/venv`. Without it these tests say so
//! and pass — except under CI, where a missing peer is a failure.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolbelt_agent::definitions::AgentDefinition;
use toolbelt_agent::{AgentHost, AgentLimits};
use toolbelt_mcp::approve::SessionApprovers;
use toolbelt_mcp::{McpServer, ServerOptions, http, serve_lines};
use toolbelt_runtime::Runtime;
use toolbelt_tools::agents::AgentType;

/// The Python of the peers' venv, or `None` (the test is skipped) when it is not installed.
fn python() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/peers/venv/bin/python");
    if venv.exists() {
        return Some(venv);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    assert!(!ci, "the MCP test peers are not installed in .ci/peers; .ci/run installs them");
    eprintln!("skipped: the MCP test peers are not installed (run .ci/run, or see it for the commands)");
    None
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/sampling_client.py")
}

/// The one agent definition the host runs, built here alone (its type is growing).
fn general_purpose() -> AgentDefinition {
    AgentDefinition {
        name: "general-purpose".into(),
        description: "A general agent for multi-step tasks.".into(),
        tools: None,
        disallowed_tools: Vec::new(),
        model: None,
        permission_mode: None,
        max_turns: None,
        system_prompt: "You are an agent working in the user's project. Answer briefly.".into(),
        source: toolbelt_agent::definitions::DefinitionSource::BuiltIn,
        lines: Default::default(),
    }
}

/// A runtime with the built-in tools, the agent tools and an agent host that has no provider
/// of its own: agents run only on a client's sampling.
struct Setup {
    _dir: tempfile::TempDir,
    notes: PathBuf,
    runtime: Arc<Runtime>,
    options: Arc<ServerOptions>,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("work");
        std::fs::create_dir_all(&root).unwrap();
        let notes = root.join("notes.txt");
        std::fs::write(&notes, "the launch moved to Thursday\n").unwrap();
        let registry = toolbelt_core::Registry::new();
        let definition = general_purpose();
        let types = [AgentType { name: definition.name.clone(), description: definition.description.clone() }];
        for tool in toolbelt_tools::builtin().into_iter().chain(toolbelt_tools::agents::tools(&types)) {
            registry.register(tool).unwrap();
        }
        let mut catalog = toolbelt_agent::Catalog::default();
        catalog.add(definition);
        let host = AgentHost::new(vec![], catalog, AgentLimits::DEFAULT);
        let mut services = toolbelt_core::Extensions::default();
        services.insert(host.handle());
        let approvers = Arc::new(SessionApprovers::default());
        let runtime = Arc::new(
            Runtime::builder(Arc::new(registry))
                .authorizer(Arc::new(toolbelt_policy::AllowAll))
                .approver(approvers.clone())
                .services(services)
                .build(),
        );
        host.attach(&runtime);
        let options = Arc::new(ServerOptions {
            cwd: root.clone(),
            roots: vec![root.clone()],
            sessions_dir: dir.path().join("sessions"),
            approvers,
            askers: Default::default(),
            instructions: None,
            notices: Vec::new(),
            inline: Default::default(),
            drain: None,
            team: None,
        });
        Setup { _dir: dir, notes, runtime, options }
    }

    fn server(&self) -> McpServer {
        McpServer::new(self.runtime.clone(), self.options.clone())
    }

    /// Runs the client over its own stdin and stdout, served by this process; what it saw.
    async fn over_stdio(&self, python: &Path, scenario: &str) -> Value {
        let out = self._dir.path().join(format!("seen-stdio-{scenario}.json"));
        let mut child = tokio::process::Command::new(python)
            .arg(script())
            .args(["stdio", scenario])
            .arg(&self.notes)
            .arg(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let serving = tokio::spawn(serve_lines(self.server(), stdout, stdin));
        let done = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output()).await;
        let output = done.expect("the Python client did not finish within 120 s").unwrap();
        let _ = tokio::time::timeout(Duration::from_secs(10), serving).await;
        seen(&out, &output)
    }

    /// Runs the client against a Streamable HTTP endpoint on loopback; what it saw.
    async fn over_http(&self, python: &Path, scenario: &str) -> Value {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let out = self._dir.path().join(format!("seen-http-{scenario}.json"));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let shutdown = CancellationToken::new();
        let (runtime, options) = (self.runtime.clone(), self.options.clone());
        let new_server = move || McpServer::new(runtime.clone(), options.clone());
        tokio::spawn(http::serve_on(listener, new_server, http::HttpOptions::default(), shutdown.clone()));
        let child = tokio::process::Command::new(python)
            .arg(script())
            .args(["http", &url, scenario])
            .arg(&self.notes)
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let done = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output()).await;
        shutdown.cancel();
        let output = done.expect("the Python client did not finish within 120 s").unwrap();
        seen(&out, &output)
    }
}

/// The client's report, which must exist and hold no failure.
fn seen(out: &Path, output: &std::process::Output) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let text = std::fs::read_to_string(out)
        .unwrap_or_else(|e| panic!("the Python client wrote no report ({e}; {}):\n{stderr}", output.status));
    let seen: Value = serde_json::from_str(&text).unwrap();
    assert!(seen.get("failure").is_none(), "the Python client failed:\n{}\n{stderr}", seen["failure"]);
    seen
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array().unwrap().iter().filter_map(Value::as_str).collect()
}

/// A client with `sampling.tools`: its model reads a file through the agent's Read, sees the
/// file's content in the tool result, and answers; the answer is the Agent call's result.
fn check_agent_with_tools(seen: &Value, notes: &Path) {
    assert!(names(&seen["tools"]).contains(&"Agent"), "{seen}");
    let agent = &seen["agent"];
    assert_eq!(agent["is_error"], false, "{seen}");
    let text = agent["text"].as_str().unwrap();
    assert!(text.starts_with("The notes say: the launch moved to Thursday\n"), "{text}");
    assert_eq!(agent["structured"]["status"], "completed", "{seen}");
    assert_eq!(agent["structured"]["tool_calls"], 1, "{seen}");
    assert_eq!(agent["structured"]["turns"], 2, "{seen}");
    assert!(seen["tool_result"].as_str().unwrap().contains("the launch moved to Thursday"), "{seen}");
    let sampling = seen["sampling"].as_array().unwrap();
    assert_eq!(sampling.len(), 2, "{seen}");
    // The agent's tools went with each request; a sub-agent gets no agent tools.
    let tools = names(&sampling[0]["tools"]);
    assert!(tools.contains(&"Read") && tools.contains(&"Grep") && !tools.contains(&"Agent"), "{tools:?}");
    assert_eq!(sampling[0]["tool_choice"], "auto");
    assert!(sampling[0]["system"].as_str().unwrap().starts_with("You are an agent"), "{seen}");
    // No model was chosen: the client picks, unhinted.
    assert_eq!(sampling[0]["hints"], serde_json::json!([]));
    assert_eq!(sampling[0]["messages"], serde_json::json!([{"role": "user", "types": ["text"]}]));
    assert_eq!(
        sampling[1]["messages"],
        serde_json::json!([
            {"role": "user", "types": ["text"]},
            {"role": "assistant", "types": ["text", "tool_use"]},
            {"role": "user", "types": ["tool_result"]},
        ])
    );
    assert!(notes.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_uses_the_clients_model_and_tools_over_stdio() {
    let Some(python) = python() else { return };
    let setup = Setup::new();
    let seen = setup.over_stdio(&python, "tools").await;
    check_agent_with_tools(&seen, &setup.notes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_uses_the_clients_model_and_tools_over_http() {
    let Some(python) = python() else { return };
    let setup = Setup::new();
    let seen = setup.over_http(&python, "tools").await;
    check_agent_with_tools(&seen, &setup.notes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_sampling_or_a_provider_the_agent_tools_are_not_offered() {
    let Some(python) = python() else { return };
    let setup = Setup::new();
    for seen in [setup.over_stdio(&python, "none").await, setup.over_http(&python, "none").await] {
        let tools = names(&seen["tools"]);
        assert!(tools.contains(&"Read") && tools.contains(&"TaskOutput"), "{tools:?}");
        for agent_tool in toolbelt_core::AGENT_TOOLS {
            assert!(!tools.contains(&agent_tool), "{agent_tool} is listed: {tools:?}");
        }
        // Called anyway, it is refused, saying why and what to configure.
        let error = seen["agent_error"].as_str().unwrap();
        assert!(error.contains("`Agent` is not available in this session"), "{error}");
        assert!(error.contains("`sampling` capability") && error.contains("OPENAI_API_KEY"), "{error}");
        assert!(seen["sampling"].as_array().unwrap().is_empty());
    }
}

/// At 2026-07-28 a server cannot send the client requests in the middle of a call, so a
/// client's sampling cannot drive an agent: the agent tools are refused, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_client_s_sampling_does_not_run_agents() {
    let Some(python) = python() else { return };
    let setup = Setup::new();
    let seen = setup.over_stdio(&python, "modern").await;
    assert!(!names(&seen["tools"]).contains(&"Agent"), "{seen}");
    let error = seen["agent_error"].as_str().unwrap();
    assert!(error.contains("speaks MCP 2026-07-28") && error.contains("initialize"), "{error}");
    assert!(seen["sampling"].as_array().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_without_tools_answers_in_text_alone() {
    let Some(python) = python() else { return };
    let setup = Setup::new();
    let seen = setup.over_stdio(&python, "text").await;
    assert!(names(&seen["tools"]).contains(&"Agent"), "{seen}");
    let agent = &seen["agent"];
    assert_eq!(agent["is_error"], false, "{seen}");
    assert!(agent["text"].as_str().unwrap().starts_with("Answered in text alone.\n"), "{seen}");
    assert_eq!(agent["structured"]["status"], "completed", "{seen}");
    assert_eq!(agent["structured"]["tool_calls"], 0, "{seen}");
    let sampling = seen["sampling"].as_array().unwrap();
    assert_eq!(sampling.len(), 1, "{seen}");
    // No tools offered, and the system prompt's first line says there are none.
    assert_eq!(sampling[0]["tools"], Value::Null, "{seen}");
    assert_eq!(sampling[0]["tool_choice"], Value::Null, "{seen}");
    let system = sampling[0]["system"].as_str().unwrap();
    let first = system.lines().next().unwrap();
    assert!(first.contains("takes no tools") && first.contains("answer in text"), "{system}");
    assert!(system.contains("You are an agent working in the user's project."), "{system}");
}
