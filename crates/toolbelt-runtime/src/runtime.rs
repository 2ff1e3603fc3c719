//! The runtime: a registry plus the policy, hooks and services every call goes through.

use std::sync::Arc;

use serde_json::Value;
use toolbelt_core::Access;
use toolbelt_core::{CancellationToken, EventSink, Extensions, Registry, ToolError, ToolSpec};
use toolbelt_policy::rules::RuleEnv;
use toolbelt_policy::{
    Approver, Authorizer, CallInfo, HookRun, Hooks, NoApprover, NoHooks, PermissionEngine, PermissionRules,
    SessionInfo, SubagentInfo, Verdict,
};

use crate::audit::AuditLog;
use crate::call::{ToolCall, ToolResult};
use crate::config::RuntimeConfig;
use crate::pipeline::Pipeline;
use crate::session::{EndReason, Session, StartSource};
use crate::stages::{Plan, Scope};
use crate::{batch, stages};

/// Runs tool calls through the pipeline. Cheap to share behind an `Arc`; one runtime
/// serves any number of sessions.
pub struct Runtime {
    pipeline: Pipeline,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("registry", &self.pipeline.registry)
            .field("config", &self.pipeline.config)
            .finish()
    }
}

/// Builds a [`Runtime`]; everything but the registry has a default.
pub struct RuntimeBuilder {
    runtime: Runtime,
}

impl RuntimeBuilder {
    /// Sets the permission engine (default: the `default` permission mode with no rules).
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.runtime.pipeline.authorizer = authorizer;
        self
    }

    /// Sets who answers `Ask` verdicts (default: nobody, so they are denied).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.runtime.pipeline.approver = approver;
        self
    }

    /// Sets the hooks (default: none).
    pub fn hooks(mut self, hooks: Arc<dyn Hooks>) -> Self {
        self.runtime.pipeline.hooks = hooks;
        self
    }

    /// Sets the shared services tools can ask for.
    pub fn services(mut self, services: Extensions) -> Self {
        self.runtime.pipeline.services = services;
        self
    }

    /// Records every call in this audit log (default: none).
    pub fn audit(mut self, log: AuditLog) -> Self {
        self.runtime.pipeline.audit = Some(Arc::new(log));
        self
    }

    /// Tells `observer` of every finished call (telemetry).
    pub fn observer(mut self, observer: Arc<dyn crate::observe::CallObserver>) -> Self {
        self.runtime.pipeline.observer = Some(observer);
        self
    }

    /// Sets the configuration.
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.runtime.pipeline.config = config;
        self
    }

    /// Finishes the runtime.
    pub fn build(mut self) -> Runtime {
        let pipeline = &mut self.runtime.pipeline;
        pipeline.hidden = pipeline.authorizer.hidden_paths();
        if pipeline.services.get::<toolbelt_core::Modes>().is_none() {
            let modes = crate::modes::PolicyModes(Arc::clone(&pipeline.authorizer));
            pipeline.services.insert(toolbelt_core::Modes(Arc::new(modes)));
        }
        if pipeline.services.get::<toolbelt_core::ToolCatalog>().is_none() {
            pipeline.services.insert(toolbelt_core::ToolCatalog(Arc::clone(&pipeline.registry)));
        }
        self.runtime
    }
}

impl Runtime {
    /// Starts building a runtime over `registry`.
    pub fn builder(registry: Arc<Registry>) -> RuntimeBuilder {
        RuntimeBuilder {
            runtime: Runtime {
                pipeline: Pipeline {
                    registry,
                    authorizer: default_authorizer(),
                    approver: Arc::new(NoApprover),
                    hooks: Arc::new(NoHooks),
                    services: Extensions::default(),
                    config: RuntimeConfig::default(),
                    audit: None,
                    hidden: None,
                    metrics: Arc::default(),
                    observer: None,
                },
            },
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.pipeline.registry
    }

    /// The audit log calls are recorded in, if any.
    pub fn audit_log(&self) -> Option<&Arc<AuditLog>> {
        self.pipeline.audit.as_ref()
    }

    /// The tools `session`'s model is shown, in name order: every enabled tool that is not
    /// deferred and the deferred ones the session loaded ([`toolbelt_core::LoadedTools`]),
    /// each with the description it gives this session ([`toolbelt_core::Tool::describe`]).
    pub fn tools_for(&self, session: &toolbelt_core::SessionState) -> Vec<ToolSpec> {
        let loaded = session.with_slot::<toolbelt_core::LoadedTools, _>(|l| l.names.clone());
        let (shown, _) = self.pipeline.registry.listed(&loaded);
        let cx = toolbelt_core::DescribeContext::new(session, &self.pipeline.services);
        shown
            .into_iter()
            .map(|entry| {
                let mut spec = entry.spec().clone();
                if let Some(description) = entry.tool().describe(&cx) {
                    spec.description = description;
                }
                spec
            })
            .collect()
    }

    /// What its calls did, counted (for `/metrics`).
    pub fn metrics(&self) -> &Arc<crate::CallMetrics> {
        &self.pipeline.metrics
    }

    /// The configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.pipeline.config
    }

    /// The permission mode in force for `session`, when the policy has modes.
    pub fn permission_mode(&self, session: &toolbelt_core::SessionState) -> Option<toolbelt_policy::PermissionMode> {
        self.pipeline.authorizer.mode(session)
    }

    /// The shared services tools can ask for.
    pub fn services(&self) -> &Extensions {
        &self.pipeline.services
    }

    /// Runs one call through every stage. Never fails: every problem is an `is_error` result.
    pub async fn call(
        &self,
        session: &Session,
        call: ToolCall,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ToolResult {
        self.run(session, self.plan(session, call), events, cancel).await
    }

    /// The first stages of a call, which need no I/O: the name resolved, the input
    /// validated, what the call touches described. A front end that wants to know the tool
    /// before the call runs (its spec: [`Plan::spec`]) plans, looks, then [`Runtime::run`]s
    /// the plan; [`Runtime::call`] is both at once.
    pub fn plan(&self, session: &Session, call: ToolCall) -> Plan {
        stages::plan(&self.pipeline, session, call)
    }

    /// A call the caller refuses before planning it, for `error`'s reason (a sub-agent
    /// calling a tool it was not given): [`Runtime::run`] then emits its finished event and
    /// records it in the audit log like any refused call.
    pub fn refuse(&self, call: ToolCall, error: ToolError) -> Plan {
        stages::refuse(&self.pipeline, call, error)
    }

    /// Runs the rest of a planned call (hooks, authorization, the tool, rendering, the audit
    /// record) in `session`, where it was planned. Never fails: every problem is an
    /// `is_error` result, a call refused while planned included.
    pub async fn run(
        &self,
        session: &Session,
        plan: Plan,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ToolResult {
        stages::run(self.scope(session, events, cancel), plan).await
    }

    fn scope<'a>(&'a self, session: &'a Session, events: &'a EventSink, cancel: &'a CancellationToken) -> Scope<'a> {
        Scope { pipeline: &self.pipeline, session, events, cancel }
    }

    /// What the permission engine would decide for `call` and why, without running hooks,
    /// asking anybody or running the tool (`toolbelt permissions explain`). A call that does
    /// not resolve or validate comes back as its error result; one to a tool the policy hides
    /// is explained as the denial it is (declaring no access: it never gets that far).
    pub fn explain(&self, session: &Session, call: ToolCall) -> Result<Explanation, Box<ToolResult>> {
        let raw = call.input.clone();
        let (entry, input, access) = match self.plan(session, call).into_parts() {
            Ok(parts) => parts,
            Err(early) => {
                let (tool, verdict) = early.into_policy_refusal()?;
                return Ok(Explanation { tool, input: raw, access: Access::exclusive(), verdict });
            }
        };
        let cwd = session.state().cwd();
        let info = CallInfo {
            session: session.state(),
            call_id: "explain",
            cwd: &cwd,
            tool: entry.spec(),
            input: input.json(),
            access: &access,
        };
        let verdict = self.pipeline.authorizer.authorize(&info);
        Ok(Explanation { tool: entry.spec().name.clone(), input: input.json().clone(), access, verdict })
    }

    /// Runs the SessionStart hooks for a session that starts; returns the context they added.
    pub async fn start_session(&self, session: &Session, source: StartSource) -> Vec<String> {
        let hooks = &self.pipeline.hooks;
        if hooks.is_empty() {
            return Vec::new();
        }
        let cwd = session.state().cwd();
        let info = SessionInfo { session_id: session.id(), cwd: &cwd, reason: source.as_str() };
        let (context, runs) = hooks.session_start(&info).await;
        log_runs(&runs);
        context
    }

    /// Runs the SessionEnd hooks for a session that ends, and forgets its scheduled jobs.
    pub async fn end_session(&self, session: &Session, reason: EndReason) {
        // Its session jobs end with it.
        if let Some(jobs) = self.pipeline.services.get::<toolbelt_core::Jobs>() {
            jobs.0.end_session(session.id());
        }
        let hooks = &self.pipeline.hooks;
        if hooks.is_empty() {
            return;
        }
        let cwd = session.state().cwd();
        let info = SessionInfo { session_id: session.id(), cwd: &cwd, reason: reason.as_str() };
        log_runs(&hooks.session_end(&info).await);
    }

    /// Runs the SubagentStart hooks for a sub-agent that starts; returns the context they
    /// added for it.
    pub async fn subagent_start(&self, agent: &SubagentInfo<'_>) -> Vec<String> {
        let hooks = &self.pipeline.hooks;
        if hooks.is_empty() {
            return Vec::new();
        }
        let (context, runs) = hooks.subagent_start(agent).await;
        log_runs(&runs);
        context
    }

    /// Runs the SubagentStop hooks for a sub-agent that stopped.
    pub async fn subagent_stop(&self, agent: &SubagentInfo<'_>) {
        let hooks = &self.pipeline.hooks;
        if hooks.is_empty() {
            return;
        }
        log_runs(&hooks.subagent_stop(agent).await);
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
        batch::run(self.scope(session, events, cancel), calls, |r| results.push(r)).await;
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
        batch::run(self.scope(session, events, cancel), calls, on_result).await;
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
