//! The service the agent tools reach: starting sub-agents, messaging them, teams.
//!
//! Tools never see the agent loop (it lives in a crate above the runtime). The crate that
//! runs agents implements [`AgentService`] and puts an [`Agents`] handle among the runtime's
//! services; the agent tools find it there, and `TaskOutput`/`TaskStop`/`BackgroundTasks` ask it
//! about ids that are not shell tasks, so background shells and background agents share one
//! set of task tools.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::session::SessionState;
use crate::tool::BoxFuture;

/// What the `Agent` tool asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentRequest {
    /// A short description of the task (3–5 words), shown in listings.
    pub description: String,
    /// The task, as the sub-agent's first message.
    pub prompt: String,
    /// Which agent definition to run (`general-purpose` when absent).
    pub agent_type: Option<String>,
    /// The model to use instead of the definition's or the provider's.
    pub model: Option<String>,
    /// Return at once with the agent's id; the result is read with `TaskOutput`.
    pub background: bool,
    /// The team the agent joins, if any.
    pub team: Option<String>,
    /// The agent's name, by which `SendMessage` reaches it.
    pub name: Option<String>,
}

/// Where an agent's run stands, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// Still working.
    Running,
    /// Finished with an answer.
    Completed,
    /// Stopped at its turn limit before answering.
    MaxTurns,
    /// Stopped at its time budget before answering.
    TimeBudget,
    /// The model's reply was cut at its token limit and the agent could not go on.
    MaxTokens,
    /// Stopped by an error (the provider's, most often).
    Failed,
    /// Stopped by `TaskStop`, a cancelled call or the end of the session.
    Stopped,
}

impl AgentStatus {
    /// The snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Running => "running",
            AgentStatus::Completed => "completed",
            AgentStatus::MaxTurns => "max_turns",
            AgentStatus::TimeBudget => "time_budget",
            AgentStatus::MaxTokens => "max_tokens",
            AgentStatus::Failed => "failed",
            AgentStatus::Stopped => "stopped",
        }
    }

    /// Whether the run is over but did not finish its answer.
    pub fn is_short(self) -> bool {
        !matches!(self, AgentStatus::Running | AgentStatus::Completed)
    }
}

/// What an agent has done: its final answer when it finished, else what it last said and
/// what it was doing when it stopped — never nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AgentReport {
    /// The agent's id (`agent_1`): `TaskOutput`, `TaskStop` and `SendMessage` take it.
    pub agent_id: String,
    /// Its name, when it was given one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The definition it runs.
    pub agent_type: String,
    /// What it was asked to do, in a few words.
    pub description: String,
    /// The team it belongs to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_name: Option<String>,
    /// Where it stands.
    pub status: AgentStatus,
    /// Its final answer, or the last text it wrote (cut to the result cap).
    pub text: String,
    /// The whole text, when it was longer than the cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_text_path: Option<PathBuf>,
    /// What it was doing when it stopped short (the tool calls it had asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doing: Option<String>,
    /// Why it stopped short, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Model turns taken.
    pub turns: u32,
    /// Tool calls made.
    pub tool_calls: u32,
    /// Wall time so far, in milliseconds.
    pub duration_ms: u64,
}

/// A team: named agents sharing a mailbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TeamReport {
    /// The team's name.
    pub team_name: String,
    /// What it is for.
    pub description: String,
    /// Its members' names, each with its status.
    pub members: Vec<TeamMember>,
}

/// One member of a team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TeamMember {
    /// The member's name.
    pub name: String,
    /// Its agent id.
    pub agent_id: String,
    /// Where it stands.
    pub status: AgentStatus,
}

/// Runs sub-agents for the agent tools. Implemented above the runtime; every method acts in
/// the calling session (`cx`), so one session never sees another's agents.
pub trait AgentService: Send + Sync + std::fmt::Debug {
    /// Starts an agent. In the foreground it resolves when the agent stops (its report says
    /// how); in the background it resolves at once with the `running` report.
    fn start(&self, cx: &ToolContext, request: AgentRequest) -> BoxFuture<'static, Result<AgentReport, ToolError>>;

    /// The longest an agent runs (`agent.time_budget`): a foreground agent's call is given it
    /// ([`crate::Tool::timeout`]), so the budget, not the runtime's cap on calls, ends it.
    /// `None` when the service sets no budget.
    fn time_budget(&self) -> Option<Duration> {
        None
    }

    /// Sends `message` to the agent with id or name `to`: a running agent reads it at its
    /// next turn; a stopped one continues with its history (in the foreground when it was
    /// started there, else in the background).
    fn send(&self, cx: &ToolContext, to: &str, message: &str) -> BoxFuture<'static, Result<AgentReport, ToolError>>;

    /// Creates a team.
    fn team_create(&self, cx: &ToolContext, team: &str, description: &str) -> Result<TeamReport, ToolError>;

    /// Deletes a team; refused while any member runs.
    fn team_delete(&self, cx: &ToolContext, team: &str) -> Result<TeamReport, ToolError>;

    /// Sends `message` to every member of `team`.
    fn broadcast(&self, cx: &ToolContext, team: &str, message: &str) -> Result<TeamReport, ToolError>;

    /// The agent with id `id` in this session, after waiting up to `wait` for it to stop;
    /// `None` when there is no such agent.
    fn wait(&self, cx: &ToolContext, id: &str, wait: Duration) -> BoxFuture<'static, Option<AgentReport>>;

    /// Stops the agent with id `id` and everything it started; `None` when there is none.
    fn stop(&self, cx: &ToolContext, id: &str) -> BoxFuture<'static, Option<AgentReport>>;

    /// Every agent of this session, oldest first.
    fn list(&self, cx: &ToolContext) -> Vec<AgentReport>;

    /// Whether agents can run in `session` (a model is there for them): a front end offers
    /// the agent tools only where they can.
    fn available(&self, session: &SessionState) -> bool {
        let _ = session;
        true
    }

    /// Why the runtime has no model of its own for agents when providers are configured but
    /// none of them could be set up: each one's problem and what to set (its key variable is
    /// not set…). `None` when one is usable, or when none is configured.
    fn unusable(&self) -> Option<String> {
        None
    }
}

/// The handle the runtime's services hold ([`crate::Extensions`] are keyed by type).
#[derive(Debug, Clone)]
pub struct Agents(pub Arc<dyn AgentService>);

/// The agent tools: a sub-agent gets none of them unless it may start agents itself.
pub const AGENT_TOOLS: [&str; 5] = ["Agent", "SendMessage", "TeamCreate", "TeamDelete", "TaskBroadcast"];

/// Whether `id` names an agent rather than a shell task (agents' ids start with `agent_`).
pub fn is_agent_id(id: &str) -> bool {
    id.starts_with("agent_")
}

impl ToolContext {
    /// The agent service, when agents are available in this runtime.
    pub fn agents(&self) -> Option<Arc<dyn AgentService>> {
        self.service::<Agents>().map(|a| Arc::clone(&a.0))
    }
}
