//! What the in-process agent tests share: a workspace, a runtime over the built-in and agent
//! tools judged by the permission engine, agents on a scripted provider.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use toolbelt_agent::{AgentHost, AgentLimits, Catalog, Part, Provider, Role};
use toolbelt_core::{CancellationToken, EventSink, Registry};
use toolbelt_policy::rules::{Rule, RuleEnv, RuleOrigin};
use toolbelt_policy::{PermissionEngine, PermissionMode, PermissionRules};
use toolbelt_runtime::{Runtime, Session, ToolCall, ToolResult};
use toolbelt_tools::agents::AgentType;

pub struct World {
    pub _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub runtime: Arc<Runtime>,
    pub session: Session,
}

/// A workspace with `src/lib.rs`, a runtime over the built-in and agent tools judged by the
/// permission engine in `mode` with `allow` rules, agents on `provider` within `limits`.
pub fn world_with(provider: Arc<dyn Provider>, mode: PermissionMode, allow: &[&str], limits: AgentLimits) -> World {
    world_full(provider, mode, allow, limits, Catalog::builtin(), None)
}

pub fn world_full(
    provider: Arc<dyn Provider>,
    mode: PermissionMode,
    allow: &[&str],
    limits: AgentLimits,
    catalog: Catalog,
    hooks: Option<Arc<dyn toolbelt_policy::Hooks>>,
) -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn answer() -> u32 {\n    41\n}\n").unwrap();
    let types: Vec<AgentType> = catalog
        .definitions
        .iter()
        .map(|d| AgentType { name: d.name.clone(), description: d.description.clone() })
        .collect();
    let registry = Registry::new();
    for tool in toolbelt_tools::builtin().into_iter().chain(toolbelt_tools::agents::tools(&types)) {
        registry.register(tool).unwrap();
    }
    let env = RuleEnv { home: dir.path().join("home"), cwd: root.clone() };
    let origin = Arc::new(RuleOrigin::new("test", root.clone()));
    let allow = allow.iter().map(|r| Rule::parse(r, Arc::clone(&origin), &env).unwrap()).collect();
    let engine = PermissionEngine::new(PermissionRules { mode, allow, ask: Vec::new(), deny: Vec::new() }, env);
    let host = AgentHost::new(vec![provider], catalog, limits);
    let mut services = toolbelt_core::Extensions::default();
    services.insert(host.handle());
    // Every call is audited, a sub-agent's refused ones included (`audit_log` reads it).
    let audit = toolbelt_runtime::AuditLog::new(toolbelt_runtime::AuditConfig::at(dir.path().join("audit.jsonl")));
    let mut builder = Runtime::builder(Arc::new(registry)).authorizer(Arc::new(engine)).services(services).audit(audit);
    if let Some(hooks) = hooks {
        builder = builder.hooks(hooks);
    }
    let runtime = Arc::new(builder.build());
    host.attach(&runtime);
    let session = Session::new("parent", root.clone(), vec![root.clone()], dir.path().join("sessions/parent"));
    World { _dir: dir, root, runtime, session }
}

impl World {
    /// The audit log's records, in order.
    pub fn audit_log(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self._dir.path().join("audit.jsonl")).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

pub fn world(provider: Arc<dyn Provider>) -> World {
    world_with(provider, PermissionMode::AcceptEdits, &["Bash(echo *)"], AgentLimits::DEFAULT)
}

impl World {
    pub async fn call(&self, name: &str, input: Value) -> ToolResult {
        self.call_cancelling(name, input, &CancellationToken::new()).await
    }

    pub async fn call_cancelling(&self, name: &str, input: Value, cancel: &CancellationToken) -> ToolResult {
        self.runtime.call(&self.session, ToolCall::new("c1", name, input), &EventSink::none(), cancel).await
    }
}

pub fn structured(result: &ToolResult) -> &Value {
    result.structured.as_ref().unwrap_or_else(|| panic!("no structured result: {}", result.text()))
}

/// The tool results of the last request's last message, by call id.
pub fn results_of(request: &toolbelt_agent::Request) -> Vec<(String, String, bool)> {
    let last = request.messages.last().unwrap();
    assert_eq!(last.role, Role::User);
    last.parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolResult { id, content, is_error } => {
                Some((id.clone(), Part::result_text(content, false), *is_error))
            }
            _ => None,
        })
        .collect()
}
