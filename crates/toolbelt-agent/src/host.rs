//! [`AgentHost`]: runs sub-agents for the agent tools ([`AgentService`]).
//!
//! Each sub-agent gets its own runtime session (cwd, read ledger, background tasks) under the
//! parent's data directory, the tools of its definition, the parent's policy and hooks with
//! a permission mode at least as strict as the parent's, and the limits of
//! [`AgentLimits`]. A session's agents live in its state ([`roster`]): when the session ends,
//! every agent it started is stopped.

mod identity;
mod launch;
mod report;
pub(crate) mod roster;
mod teams;

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolbelt_core::{
    AgentReport, AgentRequest, AgentService, Agents, BoxFuture, SessionSlot, SessionState, TeamReport, ToolContext,
    ToolError,
};
use toolbelt_runtime::Runtime;

use crate::config::AgentLimits;
use crate::definitions::{AgentDefinition, Catalog};
use crate::provider::Provider;
use roster::RosterSlot;

pub use identity::SubAgent;

/// The provider a session's agents use instead of the host's, when it has one: an MCP host
/// offering sampling puts its own here. Saves as nothing.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SessionProvider {
    /// The provider.
    #[serde(skip)]
    pub provider: Option<Arc<dyn Provider>>,
}

impl SessionSlot for SessionProvider {
    const KEY: &'static str = "agent_provider";
}

/// Runs the sub-agents of every session of one runtime.
#[derive(Debug)]
pub struct AgentHost {
    runtime: OnceLock<Weak<Runtime>>,
    providers: Vec<Arc<dyn Provider>>,
    /// Why each configured provider that could not be set up could not.
    unusable: Vec<String>,
    definitions: Catalog,
    limits: AgentLimits,
}

impl AgentHost {
    /// A host over `providers` (the first is the default; none when only an MCP host's
    /// sampling will be used), with these definitions and limits.
    pub fn new(providers: Vec<Arc<dyn Provider>>, definitions: Catalog, limits: AgentLimits) -> Arc<Self> {
        Self::configured(providers, Vec::new(), definitions, limits)
    }

    /// [`AgentHost::new`] knowing why the configured providers that are not among
    /// `providers` could not be set up (`unusable`, one message each), which is what a start
    /// without a model says.
    pub fn configured(
        providers: Vec<Arc<dyn Provider>>,
        unusable: Vec<String>,
        definitions: Catalog,
        limits: AgentLimits,
    ) -> Arc<Self> {
        Arc::new(Self { runtime: OnceLock::new(), providers, unusable, definitions, limits })
    }

    /// The handle to put among the runtime's services, so the agent tools find this host.
    pub fn handle(self: &Arc<Self>) -> Agents {
        Agents(Arc::clone(self) as Arc<dyn AgentService>)
    }

    /// Connects the host to the runtime its agents' calls run in (which holds the host among
    /// its services, so the host keeps only a weak reference).
    pub fn attach(&self, runtime: &Arc<Runtime>) {
        let _ = self.runtime.set(Arc::downgrade(runtime));
    }

    /// The limits.
    pub fn limits(&self) -> AgentLimits {
        self.limits
    }

    /// The definitions.
    pub fn definitions(&self) -> &Catalog {
        &self.definitions
    }

    /// The provider agents of `session` use: the session's own (an MCP host's sampling), else
    /// the default.
    pub fn provider_for(&self, session: &SessionState) -> Option<Arc<dyn Provider>> {
        session.with_slot::<SessionProvider, _>(|p| p.provider.clone()).or_else(|| self.providers.first().cloned())
    }

    /// Whether agents can run in `session`: it has a provider of its own, or the host has one.
    pub fn available_for(&self, session: &SessionState) -> bool {
        self.provider_for(session).is_some()
    }

    /// The configured provider named `name`.
    pub fn provider_named(&self, name: &str) -> Option<Arc<dyn Provider>> {
        self.providers.iter().find(|p| p.name() == name).cloned()
    }

    fn runtime(&self) -> Result<Arc<Runtime>, ToolError> {
        self.runtime
            .get()
            .and_then(Weak::upgrade)
            .ok_or_else(|| ToolError::internal("the agent host is not attached to a runtime"))
    }

    /// The definition named `name` (case-insensitive), or an error listing the ones there are.
    pub fn definition(&self, name: &str) -> Result<&AgentDefinition, ToolError> {
        self.definitions.get(name).ok_or_else(|| {
            ToolError::failed(format!(
                "there is no agent type `{name}`; use one of: {} (`toolbelt agents` lists them with where each comes from)",
                self.definitions.names().join(", ")
            ))
        })
    }
}

fn roster(cx: &ToolContext) -> Arc<roster::Roster> {
    cx.with_slot::<RosterSlot, _>(|slot| Arc::clone(&slot.roster))
}

impl AgentService for AgentHost {
    fn start(&self, cx: &ToolContext, request: AgentRequest) -> BoxFuture<'static, Result<AgentReport, ToolError>> {
        let prepared =
            self.runtime().and_then(|runtime| launch::prepare(self, &runtime, cx, request).map(|p| (runtime, p)));
        let cap = self.limits.result_cap;
        let cx = cx.clone();
        Box::pin(async move {
            let (runtime, agent) = prepared?;
            Ok(launch::go(runtime, agent, None, &cx, cap).await)
        })
    }

    fn time_budget(&self) -> Option<Duration> {
        Some(self.limits.time_budget)
    }

    fn send(&self, cx: &ToolContext, to: &str, message: &str) -> BoxFuture<'static, Result<AgentReport, ToolError>> {
        let found = roster(cx).find(to).ok_or_else(|| no_agent(cx, to));
        let runtime = self.runtime();
        let cap = self.limits.result_cap;
        let cx = cx.clone();
        let message = message.to_string();
        Box::pin(async move {
            // A running agent reads the message at its next turn; an idle one continues.
            Ok(launch::go(runtime?, found?, Some(message), &cx, cap).await)
        })
    }

    fn team_create(&self, cx: &ToolContext, team: &str, description: &str) -> Result<TeamReport, ToolError> {
        teams::create(&roster(cx), team, description)
    }

    fn team_delete(&self, cx: &ToolContext, team: &str) -> Result<TeamReport, ToolError> {
        teams::delete(&roster(cx), team)
    }

    fn broadcast(&self, cx: &ToolContext, team: &str, message: &str) -> Result<TeamReport, ToolError> {
        let runtime = self.runtime()?;
        teams::broadcast(&roster(cx), team, message, |agent, message| {
            launch::resume_in_background(Arc::clone(&runtime), agent, message)
        })
    }

    fn wait(&self, cx: &ToolContext, id: &str, wait: Duration) -> BoxFuture<'static, Option<AgentReport>> {
        let found = roster(cx).find(id).filter(|a| a.id == id);
        let cap = self.limits.result_cap;
        Box::pin(async move {
            let agent = found?;
            agent.settle(wait).await;
            Some(report::report(&agent, cap))
        })
    }

    fn stop(&self, cx: &ToolContext, id: &str) -> BoxFuture<'static, Option<AgentReport>> {
        let found = roster(cx).find(id).filter(|a| a.id == id);
        let cap = self.limits.result_cap;
        Box::pin(async move {
            let agent = found?;
            agent.stop();
            agent.settle(Duration::from_secs(10)).await;
            Some(report::report(&agent, cap))
        })
    }

    fn list(&self, cx: &ToolContext) -> Vec<AgentReport> {
        roster(cx).all().iter().map(|a| report::report(a, self.limits.result_cap)).collect()
    }

    fn available(&self, session: &SessionState) -> bool {
        self.available_for(session)
    }

    fn unusable(&self) -> Option<String> {
        (self.providers.is_empty() && !self.unusable.is_empty()).then(|| self.unusable.join("; "))
    }
}

/// The error for a message to an agent this session does not have.
fn no_agent(cx: &ToolContext, to: &str) -> ToolError {
    let agents = roster(cx).all();
    if agents.is_empty() {
        return ToolError::failed(format!(
            "there is no agent `{to}` in this session (none has been started); start one with Agent"
        ));
    }
    let known: Vec<String> = agents
        .iter()
        .map(|a| match &a.name {
            Some(name) => format!("{} ({name})", a.id),
            None => a.id.clone(),
        })
        .collect();
    ToolError::failed(format!("there is no agent `{to}` in this session; its agents are: {}", known.join(", ")))
}
