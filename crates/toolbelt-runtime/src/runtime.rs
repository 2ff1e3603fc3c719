//! The runtime: a registry plus the policy, hooks and services every call goes through.

use std::sync::Arc;

use serde_json::Value;
use toolbelt_core::Access;
use toolbelt_core::{CancellationToken, EventSink, Extensions, Registry};
use toolbelt_policy::rules::RuleEnv;
use toolbelt_policy::{
    Approver, Authorizer, CallInfo, HookRun, Hooks, NoApprover, NoHooks, PermissionEngine, PermissionRules,
    SessionInfo, Verdict,
};

use crate::audit::AuditLog;
use crate::call::{ToolCall, ToolResult};
use crate::config::RuntimeConfig;
use crate::session::Session;
use crate::{batch, stages};

/// Runs tool calls through the pipeline. Cheap to share behind an `Arc`; one runtime
/// serves any number of sessions.
pub struct Runtime {
    pub(crate) registry: Arc<Registry>,
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) hooks: Arc<dyn Hooks>,
    pub(crate) services: Extensions,
    pub(crate) config: RuntimeConfig,
    pub(crate) audit: Option<Arc<AuditLog>>,
    /// What the authorizer hides from tools that walk many files.
    pub(crate) hidden: Option<Arc<dyn toolbelt_core::HiddenPaths>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("registry", &self.registry).field("config", &self.config).finish()
    }
}

/// Builds a [`Runtime`]; everything but the registry has a default.
pub struct RuntimeBuilder {
    runtime: Runtime,
}

impl RuntimeBuilder {
    /// Sets the permission engine (default: allow everything).
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.runtime.authorizer = authorizer;
        self
    }

    /// Sets who answers `Ask` verdicts (default: nobody, so they are denied).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.runtime.approver = approver;
        self
    }

    /// Sets the hooks (default: none).
    pub fn hooks(mut self, hooks: Arc<dyn Hooks>) -> Self {
        self.runtime.hooks = hooks;
        self
    }

    /// Sets the shared services tools can ask for.
    pub fn services(mut self, services: Extensions) -> Self {
        self.runtime.services = services;
        self
    }

    /// Records every call in this audit log (default: none).
    pub fn audit(mut self, log: AuditLog) -> Self {
        self.runtime.audit = Some(Arc::new(log));
        self
    }

    /// Sets the configuration.
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.runtime.config = config;
        self
    }

    /// Finishes the runtime.
    pub fn build(mut self) -> Runtime {
        self.runtime.hidden = self.runtime.authorizer.hidden_paths();
        self.runtime
    }
}

impl Runtime {
    /// Starts building a runtime over `registry`.
    pub fn builder(registry: Arc<Registry>) -> RuntimeBuilder {
        RuntimeBuilder {
            runtime: Runtime {
                registry,
                authorizer: default_authorizer(),
                approver: Arc::new(NoApprover),
                hooks: Arc::new(NoHooks),
                services: Extensions::default(),
                config: RuntimeConfig::default(),
                audit: None,
                hidden: None,
            },
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Runs one call through every stage. Never fails: every problem is an `is_error` result.
    pub async fn call(
        &self,
        session: &Session,
        call: ToolCall,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ToolResult {
        match stages::plan(self, session, call) {
            Ok(planned) => stages::run(self, session, planned, events, cancel).await,
            Err(result) => stages::finish_early(self, session, result, events),
        }
    }

    /// What the permission engine would decide for `call` and why, without running hooks,
    /// asking anybody or running the tool (`toolbelt permissions explain`). A call that does
    /// not resolve or validate comes back as its error result; one to a tool the policy hides
    /// is explained as the denial it is (declaring no access: it never gets that far).
    pub fn explain(&self, session: &Session, call: ToolCall) -> Result<Explanation, Box<ToolResult>> {
        let raw = call.input.clone();
        let planned = match stages::plan(self, session, call) {
            Ok(planned) => planned,
            Err(early) => {
                let (tool, verdict) = early.into_policy_refusal()?;
                return Ok(Explanation { tool, input: raw, access: Access::exclusive(), verdict });
            }
        };
        let (entry, input, access) = planned.parts();
        let cwd = session.state().cwd();
        let info = CallInfo {
            session: session.state(),
            call_id: "explain",
            cwd: &cwd,
            tool: entry.spec(),
            input: input.json(),
            access: &access,
        };
        let verdict = self.authorizer.authorize(&info);
        Ok(Explanation { tool: entry.spec().name.clone(), input: input.json().clone(), access, verdict })
    }

    /// Runs the SessionStart hooks for a session that starts (`source`: `startup`,
    /// `resume`…); returns the context they added.
    pub async fn start_session(&self, session: &Session, source: &str) -> Vec<String> {
        if self.hooks.is_empty() {
            return Vec::new();
        }
        let cwd = session.state().cwd();
        let info = SessionInfo { session_id: session.id(), cwd: &cwd, reason: source };
        let (context, runs) = self.hooks.session_start(&info).await;
        log_runs(&runs);
        context
    }

    /// Runs the SessionEnd hooks for a session that ends (`reason`: `exit`, `other`…).
    pub async fn end_session(&self, session: &Session, reason: &str) {
        if self.hooks.is_empty() {
            return;
        }
        let cwd = session.state().cwd();
        let info = SessionInfo { session_id: session.id(), cwd: &cwd, reason };
        log_runs(&self.hooks.session_end(&info).await);
    }

    /// Runs calls as a batch: consecutive shared calls together (at most
    /// [`RuntimeConfig::concurrency`] at once), exclusive calls alone. Results are in call
    /// order, and no call's failure affects another.
    pub async fn batch(
        &self,
        session: &Session,
        calls: Vec<ToolCall>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Vec<ToolResult> {
        let mut results = Vec::with_capacity(calls.len());
        batch::run(self, session, calls, events, cancel, |r| results.push(r)).await;
        results
    }

    /// Like [`Runtime::batch`], handing each result to `on_result` as soon as it and every
    /// result before it are done (so results stream out in call order).
    pub async fn batch_streaming(
        &self,
        session: &Session,
        calls: Vec<ToolCall>,
        events: &EventSink,
        cancel: &CancellationToken,
        on_result: impl FnMut(ToolResult),
    ) {
        batch::run(self, session, calls, events, cancel, on_result).await;
    }
}

/// What the permission engine decides for a call, and what the call touches.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Explanation {
    /// The tool's canonical name.
    pub tool: String,
    /// The validated, normalized input.
    pub input: Value,
    /// What the call declared it touches.
    pub access: Access,
    /// The decision and what made it.
    pub verdict: Verdict,
}

fn log_runs(runs: &[HookRun]) {
    for run in runs {
        if run.failed() {
            tracing::warn!(event = run.event.as_str(), handler = %run.handler, "hook failed: {}", run.outcome);
        } else {
            tracing::info!(event = run.event.as_str(), handler = %run.handler, "hook: {}", run.outcome);
        }
    }
}

/// What a runtime decides with until an authorizer is configured: the `default` permission
/// mode with no rules — reads inside the session's roots and read-only commands run, anything
/// else asks — and, with nobody to approve by default ([`NoApprover`]), what asks is refused
/// with the rule that would allow it. Allowing everything is a choice
/// (`.authorizer(Arc::new(AllowAll))`), never what a library user gets by omission.
fn default_authorizer() -> Arc<dyn Authorizer> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from).unwrap_or_else(|| "/".into());
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    Arc::new(PermissionEngine::new(PermissionRules::default(), RuleEnv { home, cwd }))
}
