//! `SendMessage`: continues an agent of this session with its history — one still running
//! reads the message at its next turn.

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{
    Access, Annotations, Category, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolSpec,
};

use crate::agents::support::{AgentResult, service};

/// Input of `SendMessage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendMessageInput {
    /// The agent's id (`agent_1`) or the name it was started with.
    pub to: String,
    /// The message: more instructions, an answer to its question, a correction.
    pub message: String,
}

/// The `SendMessage` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SendMessage;

const DESCRIPTION: &str = "Sends a message to an agent started with Agent in this session, by id or name. An \
agent that is still running reads it at its next turn (the result says it was delivered). An agent that has \
stopped continues with its whole history and the message: in the foreground when it was started there (the \
result is its new answer), else in the background (read it with TaskOutput).";

impl Tool for SendMessage {
    type Input = SendMessageInput;
    type Output = AgentResult;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("SendMessage", DESCRIPTION)
            .title("Message an agent")
            .aliases(["send_message", "send_input"])
            .param_alias("target", "to")
            .category(Category::Agent)
            .tags(["agent", "subagent", "message", "resume"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: true })
            .search_hint("message continue resume sub-agent")
            .time_limit_setting("`agent.time_budget`")
    }

    /// An agent started in the foreground continues in the foreground: the agents' time
    /// budget with a margin to report in.
    fn timeout(&self, _input: &SendMessageInput, cx: &ToolContext) -> Option<toolbelt_core::TimeLimit> {
        let budget = cx.agents()?.time_budget()?;
        Some(toolbelt_core::TimeLimit::Set(budget + toolbelt_core::OWN_LIMIT_MARGIN))
    }

    fn access(&self, input: &SendMessageInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().changes_state(format!("agent {}", input.to)))
    }

    async fn call(&self, input: SendMessageInput, cx: ToolContext) -> Result<AgentResult, ToolError> {
        let agents = service(&cx)?;
        Ok(AgentResult { report: agents.send(&cx, &input.to, &input.message).await? })
    }
}
