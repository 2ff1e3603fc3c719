//! The runtime: a registry plus the policy, hooks and services every call goes through.

use std::sync::Arc;

use toolbelt_core::{CancellationToken, EventSink, Extensions, Registry};
use toolbelt_policy::{AllowAll, Approver, Authorizer, Hooks, NoApprover, NoHooks};

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

    /// Sets the configuration.
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.runtime.config = config;
        self
    }

    /// Finishes the runtime.
    pub fn build(self) -> Runtime {
        self.runtime
    }
}

impl Runtime {
    /// Starts building a runtime over `registry`.
    pub fn builder(registry: Arc<Registry>) -> RuntimeBuilder {
        RuntimeBuilder {
            runtime: Runtime {
                registry,
                authorizer: Arc::new(AllowAll),
                approver: Arc::new(NoApprover),
                hooks: Arc::new(NoHooks),
                services: Extensions::default(),
                config: RuntimeConfig::default(),
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
            Err(result) => stages::finish_early(result, events),
        }
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
