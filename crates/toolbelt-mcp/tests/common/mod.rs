//! A real rmcp client talking to a real toolbelt MCP server, in one process over a duplex pipe.
#![allow(dead_code, deprecated, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ElicitRequestParams, ElicitResult, ListRootsResult,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use toolbelt_mcp::approve::SessionApprovers;
use toolbelt_mcp::{McpServer, ServerOptions};
use toolbelt_policy::rules::{Rule, RuleEnv, RuleOrigin};
use toolbelt_policy::{PermissionEngine, PermissionMode, PermissionRules};
use toolbelt_runtime::Runtime;

/// What the test client answers and what it saw.
#[derive(Clone, Default)]
pub struct Client {
    /// Roots it offers (`None`: it does not offer roots).
    pub roots: Option<Arc<Mutex<Vec<PathBuf>>>>,
    /// How it answers elicitations (`None`: it cannot elicit).
    pub answer: Option<Arc<Mutex<Value>>>,
    /// Every elicitation message it was shown.
    pub asked: Arc<Mutex<Vec<String>>>,
    /// Every elicitation request it got, whole (message and schema).
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// Every progress message it got.
    pub progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = json!({});
        if self.roots.is_some() {
            capabilities["roots"] = json!({"listChanged": true});
        }
        if self.answer.is_some() {
            capabilities["elicitation"] = json!({"form": {}});
        }
        serde_json::from_value(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "test-client", "version": "1.0"},
        }))
        .unwrap()
    }

    #[allow(deprecated)]
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, McpError> {
        let roots = self.roots.as_ref().map(|r| r.lock().unwrap().clone()).unwrap_or_default();
        let roots: Vec<Value> =
            roots.iter().map(|p| json!({"uri": url::Url::from_file_path(p).unwrap().to_string()})).collect();
        Ok(serde_json::from_value(json!({ "roots": roots })).unwrap())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let request = serde_json::to_value(&request).unwrap();
        self.asked.lock().unwrap().push(request["message"].as_str().unwrap_or_default().to_string());
        self.requests.lock().unwrap().push(request.clone());
        let answer = self.answer.as_ref().unwrap().lock().unwrap().clone();
        Ok(serde_json::from_value(answer).unwrap())
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params.message.unwrap_or_default());
    }
}

pub struct Harness {
    pub dir: tempfile::TempDir,
    /// The workspace root the server starts with.
    pub root: PathBuf,
    pub client: RunningService<RoleClient, Client>,
    pub seen: Client,
    pub server: McpServer,
}

/// A server over the built-in tools with the permission engine in `mode` and `allow` rules,
/// and a client connected to it over a duplex pipe.
pub async fn connect(mode: PermissionMode, allow: &[&str], client: Client) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("work");
    std::fs::create_dir_all(&root).unwrap();
    let env = RuleEnv { home: root.clone(), cwd: root.clone() };
    let origin = Arc::new(RuleOrigin::new("test", root.clone()));
    let allow = allow.iter().map(|r| Rule::parse(r, origin.clone(), &env).unwrap()).collect();
    let engine = PermissionEngine::new(PermissionRules { mode, allow, ..Default::default() }, env);
    let registry = toolbelt_core::Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    let approvers = Arc::new(SessionApprovers::default());
    let askers = Arc::new(toolbelt_mcp::ask::SessionAskers::default());
    let mut services = toolbelt_core::Extensions::default();
    services.insert(toolbelt_core::People(askers.clone()));
    // The sandbox is not what these tests are about; it may be unavailable where they run.
    services.insert(toolbelt_tools::shell::SandboxConfig {
        mode: toolbelt_tools::shell::SandboxMode::DangerFullAccess,
        ..Default::default()
    });
    let runtime = Arc::new(
        Runtime::builder(Arc::new(registry))
            .authorizer(Arc::new(engine))
            .approver(approvers.clone())
            .services(services)
            .build(),
    );
    let options = Arc::new(ServerOptions {
        cwd: root.clone(),
        roots: vec![root.clone()],
        sessions_dir: dir.path().join("sessions"),
        approvers,
        askers,
        instructions: None,
        notices: Vec::new(),
        inline: Default::default(),
        drain: None,
        team: None,
    });
    let server = McpServer::new(runtime, options);
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let serving = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = serving.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let running = client.clone().serve(client_io).await.unwrap();
    Harness { dir, root, client: running, seen: client, server }
}

impl Harness {
    /// Calls a tool; protocol errors come back as `Err(message)`.
    pub async fn call(&self, name: &str, args: Value) -> Result<CallToolResult, String> {
        let params: CallToolRequestParams = serde_json::from_value(json!({"name": name, "arguments": args})).unwrap();
        self.client.peer().call_tool(params).await.map_err(|e| e.to_string())
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The text of a result's content, joined.
pub fn text(result: &CallToolResult) -> String {
    let v = serde_json::to_value(result).unwrap();
    v["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
}

pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// Polls until `done` holds (at most 10 s); returns whether it did.
pub async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if done() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    done()
}

/// Whether a process is alive (a zombie is not).
pub fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}
